/* read_block.c: fills the FASTA reader's block from a file: a regular file
 * with one pread a range, the ranges shared out to a team of threads as each
 * takes the next (OpenMP), as copying from the page cache is a large part of
 * reading; anything else (standard input, pipes) with read() in turn. */
#include "internal.h"

#include <errno.h>
#include <unistd.h>

/* Reads n bytes into `into`, fewer only at the end of the file: with pread
 * at offset, or with read() where offset is -1. How many, or -1. */
static ssize_t read_fully(int fd, char *into, size_t n, off_t offset)
{
    size_t done = 0;
    while (done < n) {
        ssize_t got = offset < 0 ? read(fd, into + done, n - done)
                                 : pread(fd, into + done, n - done, offset + (off_t)done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return -1;
        if (got == 0)
            break;
        done += (size_t)got;
    }
    return (ssize_t)done;
}

long hmmrt_read_block(int fd, off_t *offset, char *block, int n_ranges, size_t range)
{
    return hmmrt_read_ranges(fd, offset, block, n_ranges, range, n_ranges, NULL);
}

long hmmrt_read_ranges(int fd, off_t *offset, char *block, int n_ranges, size_t range, int threads,
                       double *cpu_seconds)
{
    if (!offset)
        return (long)read_fully(fd, block, (size_t)n_ranges * range, -1);
    if (n_ranges > HMMRT_READ_MAX_RANGES)
        n_ranges = HMMRT_READ_MAX_RANGES;
    if (threads > n_ranges)
        threads = n_ranges;
    ssize_t got[HMMRT_READ_MAX_RANGES];
    int error[HMMRT_READ_MAX_RANGES];
    double busy = 0;
    /* more ranges than threads, each taken by the first thread free: a
     * thread the system puts aside (the other teams of a run share the
     * cores) holds up one small range, not a share of the block */
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1) \
    reduction(+ : busy)
    for (int k = 0; k < n_ranges; k++) {
        double started = cpu_seconds ? hmmrt_thread_seconds() : 0;
        got[k] = read_fully(fd, block + (size_t)k * range, range, *offset + (off_t)k * (off_t)range);
        error[k] = got[k] < 0 ? errno : 0;
        busy += cpu_seconds ? hmmrt_thread_seconds() - started : 0;
    }
    if (cpu_seconds)
        *cpu_seconds += busy;
    /* the block ends at the first short range: a file that grows meanwhile
     * is read on from there next time */
    long n = 0;
    for (int k = 0; k < n_ranges; k++) {
        if (got[k] < 0) {
            errno = error[k];
            return -1;
        }
        n += (long)got[k];
        if ((size_t)got[k] < range)
            break;
    }
    *offset += n;
    return n;
}
