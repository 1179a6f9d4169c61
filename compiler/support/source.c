/* source.c: loads the model file (source.h): mapped where it is a regular
 * file, so that a file of thousands of profiles (5 GB for Pfam's 20,000)
 * does not stay in memory as the front end lowers it a model at a time. */
#include "support/source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/arena.h"

/* Files from this size on are mapped (a file of some 16 profiles); smaller
 * ones are read, and a file changed while hmmc maps it cannot hurt them. */
enum { MAP_FROM_BYTES = 4 << 20 };

/* The one mapping made (hmmc compiles one file), or NULL. */
static char *mapped;
static size_t mapped_bytes; /* the area's */
static size_t mapped_file;  /* its first bytes, the file's whole pages: only these are given
                               back (the rest, copied, would come back as zeros) */

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* The file mapped into an anonymous area one byte longer, whose last page
 * (beyond the file's whole pages) is zeros: the NUL after the text. */
static char *map(int fd, size_t len)
{
    size_t page = page_size(), whole = len / page * page;
    size_t bytes = (len + 1 + page - 1) / page * page;
    char *area = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED)
        return NULL;
    if (whole && mmap(area, whole, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
        munmap(area, bytes);
        return NULL;
    }
    /* the part page after the whole ones: copied, then NUL */
    size_t done = 0;
    while (whole + done < len) {
        ssize_t n = pread(fd, area + whole + done, len - whole - done, (off_t)(whole + done));
        if (n <= 0) {
            munmap(area, bytes);
            return NULL;
        }
        done += (size_t)n;
    }
    area[len] = 0;
    mapped = area;
    mapped_bytes = bytes;
    mapped_file = whole;
    return area;
}

static char *read_all(FILE *f, const char *path, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = xmalloc(cap + 1);
    for (;;) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        buf = xrealloc(buf, cap + 1);
    }
    if (ferror(f)) {
        fprintf(stderr, "hmmc: error: cannot read %s: %s\n", path, strerror(errno));
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

char *source_load(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "hmmc: error: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    char *text = NULL;
    if (!mapped && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size >= MAP_FROM_BYTES &&
        (text = map(fileno(f), (size_t)st.st_size)))
        *len = (size_t)st.st_size;
    else
        text = read_all(f, path, len);
    fclose(f);
    return text;
}

void source_release(const char *src, size_t from, size_t to)
{
    if (!mapped || src != mapped || to <= from)
        return;
    size_t page = page_size();
    size_t first = (from + page - 1) / page * page, last = to / page * page;
    if (last > mapped_file)
        last = mapped_file;
    if (first < last)
        madvise(mapped + first, last - first, MADV_DONTNEED);
}

void source_free(char *src, size_t len)
{
    (void)len;
    if (src && src == mapped) {
        munmap(mapped, mapped_bytes);
        mapped = NULL;
        return;
    }
    free(src);
}
