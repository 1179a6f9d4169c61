/* buf.c: hmmrt_buf, the growable text buffer generated code writes text
 * fields into, and the formatting of scores (--decimals). */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int score_decimals = 6;
/* Set when a buffer of this thread could not grow; see hmmrt_buf_take_failure.
 * It is sticky: until it is taken (at the start of the next record), no
 * buffer of this thread tries to grow again, so that a whole table of
 * millions of fields fails once, not once a field (each a realloc of the
 * table's size that memory cannot give). */
static _Thread_local int buf_failed;

void hmmrt_set_decimals(int decimals)
{
    if (decimals < 0)
        decimals = 0;
    if (decimals > 17)
        decimals = 17;
    score_decimals = decimals;
}

int hmmrt_buf_failed(void)
{
    return buf_failed;
}

int hmmrt_buf_take_failure(void)
{
    int failed = buf_failed;
    buf_failed = 0;
    return failed;
}

void hmmrt_buf_reset(hmmrt_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void hmmrt_buf_free(hmmrt_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void *hmmrt_grow(void *data, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap && data)
        return data;
    if (need > SIZE_MAX / 2 / size)
        return NULL;
    size_t n = *cap ? *cap : first;
    while (n < need)
        n *= 2;
    void *bigger = realloc(data, n * size);
    if (bigger)
        *cap = n;
    return bigger;
}

/* Room for `more` bytes and the NUL; 0, or -1 (and the failure noted; after
 * a failure, -1 at once until it is taken). */
static int buf_reserve(hmmrt_buf *b, size_t more)
{
    if (buf_failed)
        return -1;
    char *data = more < SIZE_MAX / 2 - b->len
                     ? hmmrt_grow(b->data, &b->cap, b->len + more + 1, 1, 64)
                     : NULL;
    if (!data) {
        buf_failed = 1;
        return -1;
    }
    b->data = data;
    return 0;
}

void hmmrt_buf_append(hmmrt_buf *b, const char *s, size_t n)
{
    if (buf_reserve(b, n) != 0)
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void hmmrt_buf_putc(hmmrt_buf *b, char c)
{
    if (b->len + 2 > b->cap && buf_reserve(b, 1) != 0)
        return;
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

void hmmrt_buf_puts(hmmrt_buf *b, const char *s)
{
    hmmrt_buf_append(b, s, strlen(s));
}

/* True when text is a minus sign followed only by zeros and a point. */
static int is_negative_zero_text(const char *text)
{
    if (text[0] != '-')
        return 0;
    for (const char *p = text + 1; *p; p++)
        if (*p != '0' && *p != '.')
            return 0;
    return 1;
}

size_t hmmrt_format_score(char out[HMMRT_SCORE_MAX], double score)
{
    if (isnan(score))
        return (size_t)snprintf(out, HMMRT_SCORE_MAX, "nan");
    if (isinf(score))
        return (size_t)snprintf(out, HMMRT_SCORE_MAX, "%s", score < 0 ? "-inf" : "inf");
    int n = hmmrt_fixed_text(out, score, score_decimals);
    if (n >= 0)
        return (size_t)n;
    n = snprintf(out, HMMRT_SCORE_MAX, "%.*f", score_decimals, score);
    if (is_negative_zero_text(out)) {
        memmove(out, out + 1, (size_t)n);
        n--;
    }
    return (size_t)n;
}

void hmmrt_buf_score(hmmrt_buf *b, double score)
{
    char text[HMMRT_SCORE_MAX];
    size_t n = hmmrt_format_score(text, score);
    hmmrt_buf_append(b, text, n);
}
