/* gzip_input.c: gzip-compressed input for the FASTA reader (fasta.c), found
 * by its first two bytes (1f 8b), not by the file's name, and inflated with
 * zlib into the reader's block, so that the parse is the same as for plain
 * text. Concatenated members (cat a.gz b.gz, bgzip) read as one text. */
#include "input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

enum { INPUT_BYTES = 1 << 18 };

struct hmmrt_gunzip {
    z_stream z;
    int fd;
    int input_ended;  /* read() said end of file */
    int member_ended; /* inflate finished a member and nothing follows yet */
    char error[512];  /* a failure met after some bytes were handed out: the next call's */
    unsigned char in[INPUT_BYTES];
};

int hmmrt_is_gzip(const unsigned char *head, size_t n)
{
    return n >= 2 && head[0] == 0x1f && head[1] == 0x8b;
}

hmmrt_gunzip *hmmrt_gunzip_open(int fd, const unsigned char *prefix, size_t n_prefix)
{
    hmmrt_gunzip *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->fd = fd;
    if (n_prefix > sizeof g->in)
        n_prefix = sizeof g->in;
    memcpy(g->in, prefix, n_prefix);
    g->z.next_in = g->in;
    g->z.avail_in = (uInt)n_prefix;
    if (inflateInit2(&g->z, 15 + 16) != Z_OK) { /* 16: a gzip header and trailer */
        free(g);
        return NULL;
    }
    return g;
}

void hmmrt_gunzip_close(hmmrt_gunzip *g)
{
    if (!g)
        return;
    inflateEnd(&g->z);
    free(g);
}

/* More compressed bytes when none are left: 0, or -1 with g->error set. */
static int refill(hmmrt_gunzip *g)
{
    if (g->z.avail_in > 0 || g->input_ended)
        return 0;
    ssize_t got;
    do
        got = read(g->fd, g->in, sizeof g->in);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        snprintf(g->error, sizeof g->error, "cannot read: %s", strerror(errno));
        return -1;
    }
    g->input_ended = got == 0;
    g->z.next_in = g->in;
    g->z.avail_in = (uInt)got;
    return 0;
}

/* Inflates into [into, into + n) until it is full or the input ends:
 * how many bytes, or -1 with g->error set (nothing was inflated). Output
 * that zlib holds back is drained after the last input byte too. */
static long inflate_some(hmmrt_gunzip *g, char *into, size_t n)
{
    size_t done = 0;
    while (done < n) {
        if (refill(g) != 0)
            return done ? (long)done : -1;
        if (g->member_ended) {
            if (g->z.avail_in == 0)
                break; /* the end of the file, after a whole member */
            inflateReset(&g->z); /* another member follows */
            g->member_ended = 0;
        }
        size_t want = n - done > UINT32_MAX ? UINT32_MAX : n - done;
        g->z.next_out = (unsigned char *)into + done;
        g->z.avail_out = (uInt)want;
        int rc = inflate(&g->z, Z_NO_FLUSH);
        size_t made = want - g->z.avail_out;
        done += made;
        if (rc == Z_STREAM_END) {
            g->member_ended = 1;
        } else if (rc == Z_NEED_DICT || rc == Z_DATA_ERROR || rc == Z_STREAM_ERROR ||
                   rc == Z_MEM_ERROR) {
            snprintf(g->error, sizeof g->error,
                     "the compressed data is corrupt (zlib: %s); copy or download the file "
                     "again, or check it with gzip -t",
                     g->z.msg ? g->z.msg : rc == Z_MEM_ERROR ? "out of memory" : zError(rc));
            return done ? (long)done : -1;
        } else if (made == 0 && g->z.avail_in == 0 && g->input_ended) {
            snprintf(g->error, sizeof g->error,
                     "the compressed data ends too soon (zlib: unexpected end of file): the "
                     "file is truncated; copy or download it again");
            return done ? (long)done : -1;
        }
        /* else Z_OK, or Z_BUF_ERROR: more input is read above */
    }
    return (long)done;
}

long hmmrt_gunzip_read(hmmrt_gunzip *g, char *into, size_t n, char *why, size_t whylen)
{
    if (g->error[0]) {
        snprintf(why, whylen, "%s", g->error);
        return -1;
    }
    long got = inflate_some(g, into, n);
    if (got < 0)
        snprintf(why, whylen, "%s", g->error);
    return got;
}
