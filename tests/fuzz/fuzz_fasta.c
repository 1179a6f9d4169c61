/* fuzz_fasta.c: libFuzzer harness of the runtime's input side: the FASTA
 * reader (runtime/fasta.c) over two files in turn, then every record mapped
 * to a few alphabets (runtime/alphabet.c). The first byte of an input says
 * where to split the rest into the two files, so that records, names and
 * line ends also meet the end of a file. The files are memfds, read through
 * /proc/self/fd as the reader reads any path. Built and run by `make fuzz`
 * (tests/fuzz/run). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hmmrt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const alphabets[] = {
    "ACGT", "123456", "ACDEFGHIKLMNPQRSTVWY", "*-.", "\x01\x7f\xff>",
};
enum { N_ALPHABETS = sizeof alphabets / sizeof alphabets[0] };

/* A memfd holding n bytes, and its path; -1 on failure. */
static int memory_file(const uint8_t *bytes, size_t n, char path[64])
{
    int fd = memfd_create("fuzz.fa", 0);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, bytes + done, n - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return fd;
}

static void map_record(const hmmrt_record *rec)
{
    if (!rec->name || rec->length < 0 || rec->residues[rec->length] != 0)
        abort(); /* the reader promises a NUL-terminated sequence */
    uint8_t *codes = malloc((size_t)rec->length + 1);
    if (!codes)
        abort();
    for (int a = 0; a < N_ALPHABETS; a++) {
        int64_t bad = hmmrt_map(alphabets[a], rec->residues, rec->length, codes);
        if (bad < -1 || bad >= rec->length)
            abort();
        if (bad >= 0 && strchr(alphabets[a], rec->residues[bad]) && rec->residues[bad] != 0)
            abort(); /* a symbol of the alphabet reported as outside it */
    }
    free(codes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t split = (size - 1) * data[0] / 255;
    char paths[2][64];
    int fds[2] = {memory_file(data + 1, split, paths[0]),
                  memory_file(data + 1 + split, size - 1 - split, paths[1])};
    if (fds[0] < 0 || fds[1] < 0)
        abort();
    const char *const names[2] = {paths[0], paths[1]};
    hmmrt_reader *r = hmmrt_reader_open(names, 2);
    if (!r)
        abort();
    hmmrt_record rec;
    char err[1024];
    int status;
    while ((status = hmmrt_reader_next(r, &rec, err, sizeof err)) == 1) {
        map_record(&rec);
        free(rec.name);
        free(rec.residues);
    }
    if (status == -1 && err[0] == 0)
        abort(); /* an error must say what went wrong */
    hmmrt_reader_close(r);
    close(fds[0]);
    close(fds[1]);
    return 0;
}
