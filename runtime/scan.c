/* scan.c: the time-parallel scan of one long sequence (issue 24, docs/scan.md):
 * chunk 0 runs from the start on one thread while every other chunk's
 * transfer (one run from each boundary state) runs on the others; the
 * transfers are combined in order (scan_combine.c); viterbi's back pointers
 * come from each chunk run again from its exact entry column. */
#include "hmmrt_scan.h"
#include "scan_chunk.h"

#include <fenv.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const double LN2 = 0.693147180559945309417232121458176568;

/* The chunk run k-th: forward and viterbi from the start, backward from the end. */
static void chunk_range(const hmmrt_scan_call *c, const int64_t *begin, int64_t count, int64_t k,
                        int64_t L, int64_t *i0, int64_t *i1)
{
    if (!c->backward) {
        *i0 = begin[k];
        *i1 = begin[k + 1];
    } else { /* mirrored: the longest chunk at the end */
        *i0 = L - begin[k + 1];
        *i1 = L - begin[k];
    }
    (void)count;
}

/* The CPU time of the calling thread: a task's own work, which time spent
 * waiting for a core (other programs) does not count in. */
static double thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The memory of one scan: per chunk k >= 1 its transfer (nb columns of n,
 * with an exponent each for sums), and the column each chunk ends with. */
typedef struct scan_memory {
    int64_t *begin, count;
    double *transfers;  /* count x nb x n */
    int64_t *exponents; /* count x nb */
    double *work;       /* threads x 2n: each thread's two columns */
    size_t per_thread;  /* doubles of work a thread */
    double *busy;       /* threads: each thread's CPU time in the current phase */
    double critical;    /* the phases' busiest threads' CPU time, summed (--timing) */
    int threads;
    int failed;         /* a span left double's range: the one-thread path instead */
} scan_memory;

/* Adds the busiest thread of the phase just done to s->critical. */
static void end_phase(scan_memory *s)
{
    double most = 0;
    for (int t = 0; t < s->threads; t++) {
        most = s->busy[t] > most ? s->busy[t] : most;
        s->busy[t] = 0;
    }
    s->critical += most;
}

static void scan_free(scan_memory *s)
{
    free(s->begin);
    free(s->transfers);
    free(s->exponents);
    free(s->work);
    free(s->busy);
}

static int scan_alloc(scan_memory *s, const hmmrt_scan_call *c, int64_t L, int threads)
{
    memset(s, 0, sizeof *s);
    size_t n = (size_t)c->n_states, nb = (size_t)c->n_boundary;
    s->begin = hmmrt_scan_chunks(L, threads, hmmrt_scan_transfer_cost(c),
                                 sizeof(double) * nb * (n + 1), &s->count);
    size_t count = (size_t)s->count;
    if (s->begin) {
        s->transfers = malloc(sizeof(double) * count * nb * n);
        s->exponents = malloc(sizeof(int64_t) * count * nb);
        /* two columns a thread, or a whole transfer's (nb x 2n) where they
           run together; each thread's on lines of its own */
        size_t per_thread = 2 * n * (c->sum_spans || c->max_spans ? (nb ? nb : 1) : 1);
        s->work = hmmrt_scan_thread_memory(per_thread, threads, &s->per_thread);
        s->busy = calloc((size_t)threads, sizeof(double));
        s->threads = threads;
    }
    if (!s->begin || !s->transfers || !s->exponents || !s->work || !s->busy) {
        scan_free(s);
        return -1;
    }
    return 0;
}

/* The tasks of the first phase: task 0 is chunk 0 from the start (into
 * `first`), task 1 + (k - 1) * nb + j the run of chunk k from boundary
 * state j. Dynamic scheduling: chunk 0 is nb times longer than the others. */
static void sum_transfers(const hmmrt_scan_call *c, const void *x, int64_t L, scan_memory *s,
                          double *first, int64_t *first_scale, double *first_status)
{
    int n = c->n_states, nb = c->n_boundary;
    /* with sum_spans, task k >= 1 is chunk k's whole transfer */
    int64_t per_chunk = c->sum_spans ? 1 : nb, tasks = 1 + (s->count - 1) * per_chunk;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
    for (int64_t task = 0; task < tasks; task++) {
        double *columns = s->work + (size_t)omp_get_thread_num() * s->per_thread;
        int64_t k = task == 0 ? 0 : 1 + (task - 1) / per_chunk, i0, i1;
        int j = task == 0 ? 0 : (int)((task - 1) % per_chunk);
        chunk_range(c, s->begin, s->count, k, L, &i0, &i1);
        feclearexcept(FE_UNDERFLOW | FE_OVERFLOW);
        double started = thread_seconds();
        if (task > 0 && c->sum_spans) {
            /* the exponents in the thread's own memory while the chunk runs */
            int64_t scales[nb];
            for (int b = 0; b < nb; b++) {
                double *col = columns + (size_t)b * 2 * n;
                memset(col, 0, sizeof(double) * n);
                col[c->boundary[b]] = 0x1p960;
                scales[b] = -960;
            }
            double got = c->sum_spans(x, L, i0, i1, columns, scales, nb);
            memcpy(s->exponents + (size_t)k * nb, scales, sizeof scales);
            for (int b = 0; b < nb; b++)
                memcpy(s->transfers + ((size_t)k * nb + b) * n, columns + (size_t)b * 2 * n,
                       sizeof(double) * n);
            failed |= isnan(got);
            s->busy[omp_get_thread_num()] += thread_seconds() - started;
            continue;
        }
        if (task == 0) {
            *first_status = c->sum_span(x, L, i0, i1, columns, first_scale, 1);
            memcpy(first, columns, sizeof(double) * n);
            failed |= isnan(*first_status);
            s->busy[omp_get_thread_num()] += thread_seconds() - started;
            continue;
        }
        int64_t scale = -960;
        memset(columns, 0, sizeof(double) * n);
        columns[c->boundary[j]] = 0x1p960;
        double got = c->sum_span(x, L, i0, i1, columns, &scale, 0);
        size_t at = (size_t)k * nb + j;
        memcpy(s->transfers + at * n, columns, sizeof(double) * n);
        s->exponents[at] = got == -INFINITY ? 0 : scale;
        failed |= isnan(got);
        s->busy[omp_get_thread_num()] += thread_seconds() - started;
    }
    s->failed = failed;
    end_phase(s);
}

/* HMMRT_SCAN_GPU_EMULATE=float|double (tests): the GPU scan's arithmetic on
 * the CPU (scan_matrices.c) in place of this engine, for scores and viterbi's
 * back pointers (bp, or NULL): 1 with the
 * score in *score (NAN: score on one thread), 0 when not asked. As the GPU
 * does, float that left its range goes again in double; chunks of
 * HMMRT_SCAN_CHUNK positions, or as the GPU cuts them on an H100. */
static int gpu_emulated(const hmmrt_scan_call *c, const void *x, int64_t L, void *bp,
                        double *score)
{
    const char *type = getenv("HMMRT_SCAN_GPU_EMULATE");
    if (!type || !*type)
        return 0;
    double started = omp_get_wtime();
    const uint8_t *codes = x;
    int K = 1;
    for (int64_t i = 0; i < L; i++)
        K = codes[i] >= K ? codes[i] + 1 : K;
    const char *fixed = getenv("HMMRT_SCAN_CHUNK");
    int64_t chunk = fixed && atoll(fixed) > 0 ? atoll(fixed) : 0, n_chunks;
    if (!chunk) /* an H100: 132 multiprocessors of 2,048 threads, twice over */
        hmmrt_scan_cut(L, 2 * 132 * 2048 / hmmrt_scan_pad(c->n_boundary), &chunk, &n_chunks);
    int status, wide = strcmp(type, "double") == 0;
    *score = c->n_boundary > HMMRT_SCAN_NB_MAX || L < 3
                 ? NAN
                 : hmmrt_scan_emulate(c, codes, L, K, wide, chunk, bp, &status);
    if (isnan(*score) && !wide && c->n_boundary <= HMMRT_SCAN_NB_MAX && L >= 3)
        *score = hmmrt_scan_emulate(c, codes, L, K, 1, chunk, bp, &status);
    if (!isnan(*score)) {
        hmmrt_scan_count(c->max_span != NULL, L, omp_get_wtime() - started, 0);
        hmmrt_scan_count_emulated();
    }
    return 1;
}

double hmmrt_scan_sum(const hmmrt_scan_call *c, const void *x, int64_t L)
{
    if (c->dense)
        return hmmrt_scan_dense_sum(c, x, L);
    double emulated;
    if (gpu_emulated(c, x, L, NULL, &emulated))
        return emulated;
    double started = omp_get_wtime();
    int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    scan_memory s;
    if (scan_alloc(&s, c, L, threads) != 0)
        return NAN;
    int n = c->n_states, nb = c->n_boundary;
    double v[n], next[n], status;
    int64_t ve;
    sum_transfers(c, x, L, &s, v, &ve, &status);
    double score = NAN, combining = thread_seconds();
    if (!s.failed) {
        int got = status == -INFINITY ? -1 : 0;
        for (int64_t k = 1; k < s.count && got == 0; k++) {
            size_t at = (size_t)k * nb;
            got = hmmrt_scan_apply_sum(n, nb, c->boundary, s.transfers + at * n,
                                       s.exponents + at, v, ve, next, &ve);
            memcpy(v, next, sizeof v);
        }
        if (got == -1 || (got == 0 && !(v[c->last] > 0.0)))
            score = -INFINITY;
        else if (got == 0)
            score = log(v[c->last]) + (double)ve * LN2;
    }
    s.critical += thread_seconds() - combining;
    if (!isnan(score))
        hmmrt_scan_count(0, L, omp_get_wtime() - started, s.critical);
    scan_free(&s);
    return score;
}

/* Viterbi's first phase: chunk 0 from the start (its back pointers too),
 * every other chunk from each boundary state (ln values, -inf: no path):
 * with max_spans, task k >= 1 is chunk k's whole transfer, its columns
 * run together. */
static void max_transfers(const hmmrt_scan_call *c, const void *x, int64_t L, scan_memory *s,
                          double *first, void *bp)
{
    int n = c->n_states, nb = c->n_boundary;
    int64_t per_chunk = c->max_spans ? 1 : nb, tasks = 1 + (s->count - 1) * per_chunk;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t task = 0; task < tasks; task++) {
        double *columns = s->work + (size_t)omp_get_thread_num() * s->per_thread;
        int64_t k = task == 0 ? 0 : 1 + (task - 1) / per_chunk, i0, i1;
        int j = task == 0 ? 0 : (int)((task - 1) % per_chunk);
        chunk_range(c, s->begin, s->count, k, L, &i0, &i1);
        double offset[2] = {0.0, 0.0}, started = thread_seconds();
        if (task > 0 && c->max_spans) {
            double offsets[2 * nb];
            for (int b = 0; b < nb; b++) {
                double *col = columns + (size_t)b * 2 * n;
                for (int s2 = 0; s2 < n; s2++)
                    col[s2] = -INFINITY;
                col[c->boundary[b]] = 0.0;
                offsets[2 * b] = offsets[2 * b + 1] = 0.0;
            }
            c->max_spans(x, L, i0, i1, columns, offsets, nb);
            for (int b = 0; b < nb; b++) {
                const double *col = columns + (size_t)b * 2 * n;
                double *t = s->transfers + ((size_t)k * nb + b) * n;
                for (int s2 = 0; s2 < n; s2++)
                    t[s2] = col[s2] + (offsets[2 * b] + offsets[2 * b + 1]);
            }
            s->busy[omp_get_thread_num()] += thread_seconds() - started;
            continue;
        }
        if (task == 0) {
            if (bp)
                c->max_span_bp(x, L, i0, i1, columns, offset, bp, 1);
            else
                c->max_span(x, L, i0, i1, columns, offset, 1);
            for (int s2 = 0; s2 < n; s2++)
                first[s2] = columns[s2] + (offset[0] + offset[1]);
            s->busy[omp_get_thread_num()] += thread_seconds() - started;
            continue;
        }
        for (int s2 = 0; s2 < n; s2++)
            columns[s2] = -INFINITY;
        columns[c->boundary[j]] = 0.0;
        c->max_span(x, L, i0, i1, columns, offset, 0);
        double *t = s->transfers + ((size_t)k * nb + j) * n;
        for (int s2 = 0; s2 < n; s2++)
            t[s2] = columns[s2] + (offset[0] + offset[1]);
        s->busy[omp_get_thread_num()] += thread_seconds() - started;
    }
    end_phase(s);
}

/* Viterbi's second phase: each chunk k >= 1 again from its exact entry
 * column entries[k], writing its rows of back pointers. */
static void max_rerun(const hmmrt_scan_call *c, const void *x, int64_t L, scan_memory *s,
                      const double *entries, void *bp)
{
    int n = c->n_states;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = 1; k < s->count; k++) {
        double *columns = s->work + (size_t)omp_get_thread_num() * s->per_thread;
        const double *entry = entries + (size_t)k * n;
        double top = -INFINITY;
        for (int s2 = 0; s2 < n; s2++)
            top = entry[s2] > top ? entry[s2] : top;
        top = top > -INFINITY ? top : 0.0;
        for (int s2 = 0; s2 < n; s2++)
            columns[s2] = entry[s2] - top;
        double offset[2] = {top, 0.0}, started = thread_seconds();
        int64_t i0, i1;
        chunk_range(c, s->begin, s->count, k, L, &i0, &i1);
        c->max_span_bp(x, L, i0, i1, columns, offset, bp, 0);
        s->busy[omp_get_thread_num()] += thread_seconds() - started;
    }
    end_phase(s);
}

double hmmrt_scan_max(const hmmrt_scan_call *c, const void *x, int64_t L, void *bp)
{
    double emulated;
    if (gpu_emulated(c, x, L, bp, &emulated))
        return emulated;
    double started = omp_get_wtime();
    int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    scan_memory s;
    if (scan_alloc(&s, c, L, threads) != 0)
        return NAN;
    int n = c->n_states, nb = c->n_boundary;
    /* the column each chunk starts from (entries[0] unused), then the last one's end */
    double *entries = malloc(sizeof(double) * (size_t)(s.count + 1) * n);
    if (!entries) {
        scan_free(&s);
        return NAN;
    }
    max_transfers(c, x, L, &s, entries + n, bp);
    double combining = thread_seconds();
    for (int64_t k = 1; k < s.count; k++)
        hmmrt_scan_apply_max(n, nb, c->boundary, s.transfers + (size_t)k * nb * n,
                             entries + (size_t)k * n, entries + (size_t)(k + 1) * n);
    double score = entries[(size_t)s.count * n + c->last];
    s.critical += thread_seconds() - combining;
    if (bp && score > -INFINITY)
        max_rerun(c, x, L, &s, entries, bp);
    free(entries);
    hmmrt_scan_count(1, L, omp_get_wtime() - started, s.critical);
    scan_free(&s);
    return score;
}
