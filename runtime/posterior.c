/* posterior.c: a posterior call of main (hmmrt_posterior): forward-backward
 * over the model as written (fb.c), then its score, decode, segments and
 * table of posteriors as the contract writes them. */
#include "fb.h"
#include "internal.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Each model is prepared once, by the first thread that needs it; a program
 * has a handful of posterior calls at most. */
enum { CACHED_MODELS = 64 };
static struct {
    const hmmrt_model *model;
    _Atomic(hmmrt_fb *) fb;
} cache[CACHED_MODELS];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int cache_used;

hmmrt_fb *hmmrt_posterior_fb(const hmmrt_posterior_call *call)
{
    int used = atomic_load(&cache_used);
    for (int i = 0; i < used; i++)
        if (cache[i].model == call->model)
            return atomic_load(&cache[i].fb);
    pthread_mutex_lock(&cache_lock);
    hmmrt_fb *fb = NULL;
    used = atomic_load(&cache_used);
    for (int i = 0; i < used && !fb; i++)
        if (cache[i].model == call->model)
            fb = atomic_load(&cache[i].fb);
    if (!fb && used < CACHED_MODELS) {
        char err[256];
        fb = hmmrt_fb_new(call->model, call->n_symbols, err, sizeof err);
        if (!fb)
            hmmrt_error("posterior(%s): %s", call->model->name, err);
        else {
            cache[used].model = call->model;
            atomic_store(&cache[used].fb, fb);
            atomic_store(&cache_used, used + 1);
        }
    }
    pthread_mutex_unlock(&cache_lock);
    return fb;
}

/* The state of highest posterior at each position (the first declared on a
 * tie), into best[0 .. L-1]; position i's posteriors at post[i * stride]. */
static void decode(const double *post, size_t stride, int64_t L, int n, int *best)
{
    for (int64_t i = 0; i < L; i++) {
        const double *row = post + (size_t)i * stride;
        int arg = 0;
        for (int q = 1; q < n; q++)
            if (row[q] > row[arg])
                arg = q;
        best[i] = arg;
    }
}

static void write_decode(hmmrt_buf *out, const hmmrt_model *m, const int *best, int64_t L)
{
    for (int64_t i = 0; i < L; i++) {
        if (i)
            hmmrt_buf_putc(out, ' ');
        hmmrt_buf_puts(out, m->state_names[best[i]]);
    }
}

/* Writes v >= 0 in decimal, NUL-terminated, to end in the buffer before end
 * (21 bytes are enough); returns where its digits start. */
static char *decimal_digits(char *end, int64_t v)
{
    char *p = end;
    *--p = '\0';
    do
        *--p = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    return p;
}

void hmmrt_buf_segment(hmmrt_buf *out, const char *name, int64_t first, int64_t last)
{
    char digits[24];
    hmmrt_buf_puts(out, name);
    hmmrt_buf_putc(out, ':');
    hmmrt_buf_puts(out, decimal_digits(digits + sizeof digits, first));
    if (last > first) {
        hmmrt_buf_putc(out, '-');
        hmmrt_buf_puts(out, decimal_digits(digits + sizeof digits, last));
    }
}

int hmmrt_state_at(const void *state, int state_bytes, int64_t i)
{
    return state_bytes == 1   ? ((const uint8_t *)state)[i]
           : state_bytes == 2 ? ((const uint16_t *)state)[i]
                              : ((const int *)state)[i];
}

/* The end of the run of equal states that starts at first (< L): the first
 * position after it. One-byte states are compared eight at a time. */
static int64_t run_end(const void *state, int state_bytes, int64_t first, int64_t L)
{
    int64_t i = first + 1;
    if (state_bytes == 1) {
        const uint8_t *s = state;
        const uint64_t all = 0x0101010101010101ull * s[first];
        for (; i + 8 <= L; i += 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w != all)
                break;
        }
        while (i < L && s[i] == s[first])
            i++;
        return i;
    }
    const int here = hmmrt_state_at(state, state_bytes, first);
    while (i < L && hmmrt_state_at(state, state_bytes, i) == here)
        i++;
    return i;
}

void hmmrt_write_segments(hmmrt_buf *out, const char *const *names, const void *state,
                          int state_bytes, int64_t L)
{
    for (int64_t first = 0; first < L;) {
        const int here = hmmrt_state_at(state, state_bytes, first);
        const int64_t last = run_end(state, state_bytes, first, L) - 1;
        if (first)
            hmmrt_buf_putc(out, ' ');
        hmmrt_buf_segment(out, names[here], first + 1, last + 1);
        first = last + 1;
    }
}

int hmmrt_posterior_wants_best(const hmmrt_posterior_call *call)
{
    return call->decode_column >= 0 || call->segments_column >= 0;
}

void hmmrt_posterior_write(const hmmrt_posterior_call *call, int n, int64_t L, double score,
                           const double *post, size_t stride, int *best, hmmrt_value *values)
{
    if (call->score_column >= 0)
        values[call->score_column].score = score;
    const int wants_post = hmmrt_posterior_wants_best(call) || call->table_column >= 0;
    if (!wants_post)
        return;
    const int none = score == -INFINITY || L == 0 || !post;
    if (!none && best)
        decode(post, stride, L, n, best);
    if (call->decode_column >= 0) {
        hmmrt_buf *out = &values[call->decode_column].text;
        if (none)
            hmmrt_buf_puts(out, "-");
        else
            write_decode(out, call->model, best, L);
    }
    if (call->segments_column >= 0) {
        hmmrt_buf *out = &values[call->segments_column].text;
        if (none)
            hmmrt_buf_puts(out, "-");
        else
            hmmrt_write_segments(out, call->model->state_names, best, (int)sizeof *best, L);
    }
    if (call->table_column >= 0) {
        hmmrt_buf *out = &values[call->table_column].text;
        if (none)
            hmmrt_buf_puts(out, "-");
        else
            for (int64_t i = 0; i < L; i++) {
                if (i)
                    hmmrt_buf_putc(out, ';');
                for (int q = 0; q < n; q++) {
                    if (q)
                        hmmrt_buf_putc(out, ',');
                    hmmrt_buf_score(out, post[(size_t)i * stride + (size_t)q]);
                }
            }
    }
}

int hmmrt_posterior(const hmmrt_posterior_call *call, const uint8_t *x, int64_t L,
                    hmmrt_value *values, hmmrt_scratch *scratch)
{
    hmmrt_fb *fb = hmmrt_posterior_fb(call);
    if (!fb)
        return 1;
    const int n = fb->n;
    const int wants_post = hmmrt_posterior_wants_best(call) || call->table_column >= 0;
    size_t doubles = hmmrt_fb_scratch(fb, L);
    size_t ints = hmmrt_posterior_wants_best(call) ? (size_t)L + 1 : 0;
    char *mem = hmmrt_scratch_get(scratch, doubles * sizeof(double) + ints * sizeof(int) + 64);
    if (!mem)
        return 1;
    double *post = NULL;
    double score = hmmrt_fb_run(fb, x, L, (double *)mem, NULL, NULL, wants_post ? &post : NULL);
    int *best = ints ? (int *)(mem + doubles * sizeof(double)) : NULL;
    hmmrt_posterior_write(call, n, L, score, post, (size_t)n, best, values);
    return 0;
}
