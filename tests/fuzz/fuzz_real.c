/* fuzz_real.c: libFuzzer harness of the input of real observations: the
 * text form (runtime/real_read.c) and NumPy .npy/.npz (runtime/real_npy.c),
 * which hmmrt_real_read tells apart by their first bytes. The first byte of
 * an input gives D (1 to 4), the rest is the file, a memfd read through
 * /proc/self/fd as the reader reads any path. Checks what the reader
 * promises: whole sequences with names and finite values, and on an error
 * a message that names the file. Built and run by `make fuzz`. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "real_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int D = 1 + data[0] % 4;
    int fd = memfd_create("fuzz.real", 0);
    if (fd < 0)
        return 0;
    size_t done = 0;
    while (done < size - 1) {
        ssize_t w = write(fd, data + 1 + done, size - 1 - done);
        if (w <= 0) {
            close(fd);
            return 0;
        }
        done += (size_t)w;
    }
    char path[64], err[1024];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    hmmrt_real_file f;
    int status = hmmrt_real_read(path, D, &f, err, sizeof err);
    if (status != 0 && strncmp(err, path, strlen(path)) != 0 && !strstr(err, path))
        abort(); /* every message names the file */
    for (int64_t i = 0; i < f.n; i++) {
        const hmmrt_real_seq *s = &f.seqs[i];
        if (!s->name || !s->name[0] || s->length < 0 || (s->length > 0 && !s->obs))
            abort();
        for (int64_t k = 0; k < s->length * D; k++)
            if (!isfinite(s->obs[k]))
                abort(); /* only finite numbers are read */
    }
    hmmrt_real_free(&f);
    close(fd);
    return 0;
}
