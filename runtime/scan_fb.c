/* scan_fb.c: fb.c's forward-backward (posterior calls, training's E-step)
 * over one long sequence on every thread (issue 24, docs/scan.md
 * "Posteriors"): forward in chunks (transfers from each boundary state,
 * combined in order, each chunk run again from its exact entry row), then
 * backward likewise with the forward's scales, each chunk writing its
 * positions' posteriors and adding its counts. */
#include "fb.h"
#include "hmmrt_scan.h"
#include "internal.h"

#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The states a forward row reads of the row before it (sources of emitting
 * moves, less the start: nothing enters it after row 0) or a backward row
 * of the row after it (destinations, less the end: 0 before row L). */
static int boundary_states(const hmmrt_fb *fb, int backward, int *states)
{
    int n = 0;
    unsigned char *seen = calloc((size_t)fb->n, 1);
    if (!seen)
        return -1;
    for (int p = 0; p < fb->n; p++)
        for (int j = fb->emit_out_start[p]; j < fb->emit_out_start[p + 1]; j++) {
            int q = backward ? fb->moves[fb->emit_out[j]].to : p;
            if (q != (backward ? fb->end : fb->start) && !seen[q]) {
                seen[q] = 1;
                states[n++] = q;
            }
        }
    free(seen);
    return n;
}

/* Forward row i (1..L) from prev as fb.c's run computes it, normalised;
 * ln of its sum (-inf: no path). g: max_comp + 8 doubles. */
static double forward_row(const hmmrt_fb *fb, const uint8_t *x, int64_t i, const double *prev,
                          double *row, double *g)
{
    const size_t n = (size_t)fb->n, K = (size_t)fb->K;
    memset(row, 0, n * sizeof *row);
    for (size_t p = 0; p < n; p++) {
        if (prev[p] == 0)
            continue;
        for (int j = fb->emit_out_start[p]; j < fb->emit_out_start[p + 1]; j++) {
            const int mi = fb->emit_out[j];
            const hmmrt_model_move *mv = &fb->moves[mi];
            row[mv->to] += prev[p] * fb->w[mi] * fb->e[(size_t)mv->emission * K + x[i - 1]];
        }
    }
    hmmrt_fb_silent_forward(fb, row, g);
    return hmmrt_fb_scale_column(row, (int)n);
}

/* Backward row i (0..L-1) from b_next (row i + 1) as fb.c's run computes
 * it; with fi and post, adds each emitting move's use into post (row i +
 * 1's posteriors). */
static void backward_row(const hmmrt_fb *fb, const uint8_t *x, int64_t i, double inv_scale,
                         double inv_p, const double *fi, const double *b_next, double *b_cur,
                         double *post, double *counts, double *g)
{
    const size_t n = (size_t)fb->n, K = (size_t)fb->K;
    double *mc = counts, *ec = counts ? counts + fb->n_moves : NULL;
    for (size_t p = 0; p < n; p++) {
        double h = 0;
        for (int j = fb->emit_out_start[p]; j < fb->emit_out_start[p + 1]; j++) {
            const int mi = fb->emit_out[j];
            const hmmrt_model_move *mv = &fb->moves[mi];
            const size_t ev = (size_t)mv->emission * K + x[i];
            const double t = fb->w[mi] * fb->e[ev] * b_next[mv->to] * inv_scale;
            h += t;
            if (!fi || fi[p] == 0)
                continue;
            const double use = fi[p] * t * inv_p;
            if (mc) {
                mc[mi] += use;
                ec[ev] += use;
            }
            if (post)
                post[mv->to] += use;
        }
        b_cur[p] = h;
    }
    hmmrt_fb_silent_backward(fb, b_cur, g);
    if (mc)
        hmmrt_fb_count_silent(fb, fi, b_cur, inv_p, mc);
}

/* sum_j exp(lw[j] + ln v[states[j]] - top) col_j, into out; *top: the
 * largest exponent (-inf: no term). */
static void combine(int n, int nb, const int *states, const double *t, const double *lw,
                    const double *v, double *out, double *top)
{
    double most = -INFINITY;
    for (int j = 0; j < nb; j++)
        if (v[states[j]] > 0 && lw[j] > -INFINITY && lw[j] + log(v[states[j]]) > most)
            most = lw[j] + log(v[states[j]]);
    memset(out, 0, sizeof(double) * (size_t)n);
    *top = most;
    if (most == -INFINITY)
        return;
    for (int j = 0; j < nb; j++) {
        if (!(v[states[j]] > 0) || lw[j] == -INFINITY)
            continue;
        const double wj = exp(lw[j] + log(v[states[j]]) - most), *col = t + (size_t)j * n;
        for (int q = 0; q < n; q++)
            out[q] += wj * col[q];
    }
}

/* What one scan holds: chunks, transfers (nb columns of n and their ln
 * weights), the rows each chunk starts from, a thread's rows. */
typedef struct fb_scan {
    int64_t *begin, count;
    int nb_f, nb_b, *states_f, *states_b, nb;
    double *t, *lw;         /* count x nb x n, count x nb */
    double *entries;        /* count x n: forward rows a_k - 1; backward rows c1 */
    double *tops;           /* count x n: each backward chunk's posteriors of its top row */
    double *work;           /* threads x per_thread */
    size_t per_thread;
    double *counts;         /* count x (moves + emission values): each chunk's uses */
} fb_scan;

static void fb_scan_free(fb_scan *s)
{
    free(s->begin), free(s->states_f), free(s->states_b), free(s->t), free(s->lw);
    free(s->entries), free(s->tops), free(s->work), free(s->counts);
}

/* Forward chunk k: rows [1 + begin[k], 1 + begin[k + 1]); backward chunk k
 * (0: the last positions, whose row L is known): positions [L - begin[k +
 * 1], L - begin[k]). */
static int64_t row0(const fb_scan *s, int64_t k) { return 1 + s->begin[k]; }
static int64_t row1(const fb_scan *s, int64_t k) { return 1 + s->begin[k + 1]; }

/* Chunk k's forward transfer: from each boundary state alone, its rows
 * normalised, the ln of their sums added into lw. */
static void forward_transfer(const hmmrt_fb *fb, const uint8_t *x, const fb_scan *s, int64_t k,
                             double *mine)
{
    const int n = fb->n;
    double *a = mine, *b = a + n, *g = b + n;
    for (int j = 0; j < s->nb_f; j++) {
        double lw = 0;
        memset(a, 0, sizeof(double) * (size_t)n);
        a[s->states_f[j]] = 1;
        double *prev = a, *row = b;
        for (int64_t i = row0(s, k); i < row1(s, k) && lw > -INFINITY; i++) {
            lw += forward_row(fb, x, i, prev, row, g);
            double *swap = prev;
            prev = row;
            row = swap;
        }
        memcpy(s->t + ((size_t)k * s->nb + j) * n, prev, sizeof(double) * (size_t)n);
        s->lw[(size_t)k * s->nb + j] = lw;
    }
}

/* Backward chunk k's transfer over positions [i0, i1): from each boundary
 * state of row i1 alone, with the forward's scales, each row normalised. */
static void backward_transfer(const hmmrt_fb *fb, const uint8_t *x, const double *ls,
                              const fb_scan *s, int64_t i0, int64_t i1, int64_t k, double *mine)
{
    const int n = fb->n;
    double *a = mine, *b = a + n, *g = b + n;
    for (int j = 0; j < s->nb_b; j++) {
        double lw = 0;
        memset(a, 0, sizeof(double) * (size_t)n);
        a[s->states_b[j]] = 1;
        double *next = a, *cur = b;
        for (int64_t i = i1 - 1; i >= i0 && lw > -INFINITY; i--) {
            backward_row(fb, x, i, exp(-ls[i + 1]), 0, NULL, next, cur, NULL, NULL, g);
            lw += hmmrt_fb_scale_column(cur, n);
            double *swap = next;
            next = cur;
            cur = swap;
        }
        memcpy(s->t + ((size_t)k * s->nb + j) * n, next, sizeof(double) * (size_t)n);
        s->lw[(size_t)k * s->nb + j] = lw;
    }
}

/* Backward over positions [i0, i1) from row i1's values in b (n doubles),
 * writing the posteriors of rows i0 + 1 .. i1 over the forward table (with
 * posts) and adding the moves' and emissions' uses into counts (or NULL);
 * row i1's posteriors go to top instead when it is not NULL (a neighbour
 * still reads that row as a forward row). */
static void backward_run(const hmmrt_fb *fb, const uint8_t *x, double *f, const double *ls,
                         double inv_p, int64_t i0, int64_t i1, const double *b, int posts,
                         double *top, double *counts, double *row_i0, double *mine)
{
    const size_t n = (size_t)fb->n;
    double *next = mine, *cur = next + n, *g = cur + n;
    memcpy(next, b, sizeof(double) * n);
    for (int64_t i = i1 - 1; i >= i0; i--) {
        double *post = !posts ? NULL : i == i1 - 1 && top ? top : f + (size_t)(i + 1) * n;
        if (post)
            memset(post, 0, sizeof(double) * n);
        backward_row(fb, x, i, exp(-ls[i + 1]), inv_p, f + (size_t)i * n, next, cur, post,
                     counts, g);
        double *swap = next;
        next = cur;
        cur = swap;
    }
    if (row_i0)
        memcpy(row_i0, next, sizeof(double) * n);
}

/* One scan at a time: training's threads each score their sequences, and
 * a second long one goes on its thread alone rather than a second team. */
static atomic_int busy;

static double scan_run(const hmmrt_fb *fb, const uint8_t *x, int64_t L, double *scratch,
                       double *move_counts, double *emission_counts, double **posterior);

double hmmrt_scan_fb_run(const struct hmmrt_fb *fb, const uint8_t *x, int64_t L,
                         double *scratch, double *move_counts, double *emission_counts,
                         double **posterior)
{
    int idle = 0; /* the cheap tests first: every sequence of a batch comes here */
    if (fb->dense || L < 2 || hmmrt_scan_mode() == HMMRT_SCAN_OFF || !hmmrt_scan_long(L) ||
        !atomic_compare_exchange_strong(&busy, &idle, 1))
        return NAN;
    double got = scan_run(fb, x, L, scratch, move_counts, emission_counts, posterior);
    atomic_store(&busy, 0);
    return got;
}

static double scan_run(const hmmrt_fb *fb, const uint8_t *x, int64_t L, double *scratch,
                       double *move_counts, double *emission_counts, double **posterior)
{
    const size_t n = (size_t)fb->n;
    fb_scan s;
    memset(&s, 0, sizeof s);
    s.states_f = malloc(sizeof(int) * n);
    s.states_b = malloc(sizeof(int) * n);
    if (!s.states_f || !s.states_b) {
        fb_scan_free(&s);
        return NAN;
    }
    s.nb_f = boundary_states(fb, 0, s.states_f);
    s.nb_b = boundary_states(fb, 1, s.states_b);
    s.nb = s.nb_f > s.nb_b ? s.nb_f : s.nb_b;
    hmmrt_scan_call c = {.label = "posterior", .n_states = fb->n, .n_boundary = s.nb,
                         .posterior = 1};
    if (s.nb_f < 1 || s.nb_b < 1 || !hmmrt_scan_chosen(&c, L)) {
        fb_scan_free(&s);
        return NAN;
    }
    double started = omp_get_wtime();
    int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    const size_t per_counts = (size_t)fb->n_moves + (size_t)fb->n_emissions * (size_t)fb->K;
    s.begin = hmmrt_scan_chunks(L, threads, (double)s.nb,
                                sizeof(double) * ((size_t)s.nb * (n + 1) + 2 * n +
                                                  (move_counts ? per_counts : 0)),
                                &s.count);
    size_t count = s.begin ? (size_t)s.count : 0;
    s.t = malloc(sizeof(double) * count * (size_t)s.nb * n + 1);
    s.lw = malloc(sizeof(double) * count * (size_t)s.nb + 1);
    s.entries = malloc(sizeof(double) * count * n + 1);
    s.tops = malloc(sizeof(double) * count * n + 1);
    /* two rows and g a thread, on lines of its own (they are written at every position) */
    s.work = hmmrt_scan_thread_memory(2 * n + (size_t)fb->max_comp + 8, threads, &s.per_thread);
    /* each chunk's counts, summed in chunk order at the end */
    /* (each chunk's on lines of its own: they are added to at every position) */
    size_t counts_stride = 0;
    s.counts = move_counts ? hmmrt_scan_thread_memory(per_counts, (int)count, &counts_stride) : NULL;
    if (s.counts)
        memset(s.counts, 0, sizeof(double) * counts_stride * count);
    if (!s.begin || !s.t || !s.lw || !s.entries || !s.tops || !s.work ||
        (move_counts && !s.counts)) {
        fb_scan_free(&s);
        return NAN;
    }
    double *f = scratch, *ls = f + ((size_t)L + 1) * n;
    if (posterior)
        *posterior = NULL;

    /* forward: chunk 0 from row 0 into the table, the others' transfers */
    int dead = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : dead)
    for (int64_t k = 0; k < s.count; k++) {
        double *mine = s.work + s.per_thread * (size_t)omp_get_thread_num();
        if (k > 0) {
            forward_transfer(fb, x, &s, k, mine);
            continue;
        }
        memset(f, 0, n * sizeof *f);
        f[fb->start] = 1;
        hmmrt_fb_silent_forward(fb, f, mine);
        ls[0] = hmmrt_fb_scale_column(f, (int)n);
        dead |= ls[0] == -INFINITY;
        for (int64_t i = 1; i < row1(&s, 0) && !dead; i++) {
            ls[i] = forward_row(fb, x, i, f + (size_t)(i - 1) * n, f + (size_t)i * n, mine);
            dead |= ls[i] == -INFINITY;
        }
    }
    /* each chunk's entry row, in order, from the one before */
    for (int64_t k = 1; k < s.count && !dead; k++) {
        const double *v = k == 1 ? f + (size_t)(row0(&s, 1) - 1) * n : s.entries + (size_t)k * n;
        if (k == 1)
            memcpy(s.entries + n, v, n * sizeof *v);
        if (k + 1 < s.count) {
            double top, *out = s.entries + (size_t)(k + 1) * n;
            combine((int)n, s.nb_f, s.states_f, s.t + (size_t)k * s.nb * n,
                    s.lw + (size_t)k * s.nb, v, out, &top);
            dead |= top == -INFINITY || hmmrt_fb_scale_column(out, (int)n) == -INFINITY;
        }
    }
    /* every other chunk again from its entry, as the one-thread run */
    const int64_t reruns = dead ? 1 : s.count;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : dead)
    for (int64_t k = 1; k < reruns; k++) {
        double *mine = s.work + s.per_thread * (size_t)omp_get_thread_num();
        const double *prev = s.entries + (size_t)k * n;
        for (int64_t i = row0(&s, k); i < row1(&s, k) && !dead; i++) {
            ls[i] = forward_row(fb, x, i, prev, f + (size_t)i * n, mine);
            dead |= ls[i] == -INFINITY;
            prev = f + (size_t)i * n;
        }
    }
    const double p_end = dead ? 0 : f[(size_t)L * n + fb->end];
    if (!(p_end > 0)) {
        fb_scan_free(&s);
        hmmrt_scan_count(0, L, omp_get_wtime() - started, 0);
        return -INFINITY;
    }
    double lnp = log(p_end);
    for (int64_t i = 0; i <= L; i++)
        lnp += ls[i];
    if (!posterior && !move_counts) { /* the score alone */
        hmmrt_scan_count(0, L, omp_get_wtime() - started, 0);
        fb_scan_free(&s);
        return lnp;
    }

    /* backward: chunk 0 (the last positions) from row L, the others'
       transfers; chunk k covers positions [L - begin[k + 1], L - begin[k]) */
    const double inv_p = 1.0 / p_end;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = 0; k < s.count; k++) {
        double *mine = s.work + s.per_thread * (size_t)omp_get_thread_num();
        int64_t i0 = L - s.begin[k + 1], i1 = L - s.begin[k];
        if (k > 0) {
            backward_transfer(fb, x, ls, &s, i0, i1, k, mine);
            continue;
        }
        double *b = s.entries; /* row L: the end, then its silent moves */
        memset(b, 0, n * sizeof *b);
        b[fb->end] = 1;
        hmmrt_fb_silent_backward(fb, b, mine);
        if (s.counts)
            hmmrt_fb_count_silent(fb, f + (size_t)L * n, b, inv_p, s.counts);
        /* row i0 into entries[0]: chunk 1's row i1 (b is copied first) */
        backward_run(fb, x, f, ls, inv_p, i0, i1, b, posterior != NULL, NULL, s.counts,
                     s.entries, mine);
    }
    /* each chunk's row i1, from the chunk after it */
    for (int64_t k = 1; k + 1 < s.count; k++) {
        double top, *out = s.entries + (size_t)k * n;
        combine((int)n, s.nb_b, s.states_b, s.t + (size_t)k * s.nb * n, s.lw + (size_t)k * s.nb,
                s.entries + (size_t)(k - 1) * n, out, &top);
        if (top > 700 || (top < -700 && top > -INFINITY)) { /* past double: the one-thread
                                                               run never holds such rows */
            failed = 1;
            break;
        }
        double scale = top == -INFINITY ? 0 : exp(top);
        for (size_t q = 0; q < n; q++)
            out[q] *= scale;
    }
    if (failed) {
        fb_scan_free(&s);
        return NAN; /* fb.c's run then does it all again on one thread */
    }
    /* s.entries[k - 1] is chunk k's row i1 (chunk 0 wrote chunk 1's) */
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = 1; k < s.count; k++) {
        double *mine = s.work + s.per_thread * (size_t)omp_get_thread_num();
        backward_run(fb, x, f, ls, inv_p, L - s.begin[k + 1], L - s.begin[k],
                     s.entries + (size_t)(k - 1) * n, posterior != NULL, s.tops + (size_t)k * n,
                     s.counts ? s.counts + counts_stride * (size_t)k : NULL, NULL, mine);
    }
    if (posterior) {
        for (int64_t k = 1; k < s.count; k++) /* the rows a neighbour read as forward rows */
            memcpy(f + (size_t)(L - s.begin[k]) * n, s.tops + (size_t)k * n, n * sizeof *f);
        *posterior = f + n;
    }
    for (int64_t k = 0; s.counts && k < s.count; k++) {
        const double *c = s.counts + counts_stride * (size_t)k;
        for (int m = 0; m < fb->n_moves; m++)
            move_counts[m] += c[m];
        for (size_t v = 0; v < per_counts - (size_t)fb->n_moves; v++)
            emission_counts[v] += c[fb->n_moves + v];
    }
    hmmrt_scan_count(0, L, omp_get_wtime() - started, 0);
    fb_scan_free(&s);
    return lnp;
}
