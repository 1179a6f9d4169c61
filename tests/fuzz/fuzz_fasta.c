/* fuzz_fasta.c: libFuzzer harness of the runtime's input side: the FASTA
 * reader (runtime/fasta.c) over two files in turn, then every record mapped
 * to a few alphabets (runtime/alphabet.c). The first byte of an input says
 * where to split the rest into the two files, so that records, names and
 * line ends also meet the end of a file. The files are memfds, read through
 * /proc/self/fd as the reader reads any path. A second reader that cuts
 * the files into tiny pieces on several threads must read the same. Built
 * and run by `make fuzz` (tests/fuzz/run). */
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
    /* a second reader cuts the same files into pieces of 1 to 16 bytes on 1
     * to 4 threads: it must read exactly what the first reads */
    hmmrt_reader *r = hmmrt_reader_open(names, 2);
    hmmrt_reader *cut = hmmrt_reader_open(names, 2);
    if (!r || !cut)
        abort();
    hmmrt_reader_set_pieces(cut, 1 + data[size - 1] % 4, 1 + data[size / 2] % 16);
    hmmrt_record rec, other;
    char err[1024], other_err[1024];
    int status;
    while ((status = hmmrt_reader_next(r, &rec, err, sizeof err)) == 1) {
        map_record(&rec);
        if (hmmrt_reader_next(cut, &other, other_err, sizeof other_err) != 1 ||
            strcmp(rec.name, other.name) != 0 || rec.length != other.length ||
            memcmp(rec.residues, other.residues, (size_t)rec.length) != 0 ||
            rec.line != other.line || strcmp(rec.path, other.path) != 0)
            abort(); /* the cut reader read something else */
        hmmrt_record_release(&rec);
        hmmrt_record_release(&other);
    }
    if (status == -1 && err[0] == 0)
        abort(); /* an error must say what went wrong */
    if (hmmrt_reader_next(cut, &other, other_err, sizeof other_err) != status ||
        (status == -1 && strcmp(err, other_err) != 0))
        abort(); /* ... or ended otherwise */
    hmmrt_reader_close(r);
    hmmrt_reader_close(cut);
    close(fds[0]);
    close(fds[1]);
    return 0;
}
