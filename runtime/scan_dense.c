/* scan_dense.c: the time-parallel scan of a dense call's forward or backward
 * score (issue 24, docs/scan.md "Dense models"): each chunk's transfer is the
 * product of its positions' matrices A diag(e_x), one n x n x n product a
 * position (OpenBLAS where it loads, else a blocked loop), each row with its
 * own power of two; the transfers are then applied to the vector in order. */
#include "hmmrt_scan.h"
#include "internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static const double LN2 = 0.693147180559945309417232121458176568;

/* What a transfer's position costs in positions of the one-thread function
 * (hmmrt_dense_forward's vector-matrix product of n^2): an n x n x n
 * product is n times the arithmetic, done at a better rate. Measured on the
 * 2-core machine (2026-11-26, docs/scan.md): at n = 256 a one-thread
 * position takes 23 us, the product 0.61 ms through OpenBLAS (r = 26) and
 * 3.2 ms through the blocked loop (r = 139); at n = 128, the whole scan's
 * CPU time against one thread's gives r = 15 (OpenBLAS). So r = n / 9 and
 * n / 1.8. */
static const double RATE_BLAS = 9.0, RATE_LOOP = 1.8;

/* 1 when the products go through OpenBLAS (loaded, and HMMRT_DENSE_BLAS is
 * not off: the tests force the blocked loop so). */
static int use_blas(void)
{
    const char *env = getenv("HMMRT_DENSE_BLAS");
    if (env && strcmp(env, "off") == 0)
        return 0;
    return hmmrt_openblas_loaded(NULL);
}

double hmmrt_scan_dense_cost(int n)
{
    double r = (double)n / (use_blas() ? RATE_BLAS : RATE_LOOP);
    return r > 1.0 ? r : 1.0;
}

/* u = t a (n x n, row-major), without BLAS: four rows of t at a time, so
 * that each row of a read serves four rows of u. */
static void product_loop(int n, const double *t, const double *a, double *u)
{
    memset(u, 0, sizeof(double) * (size_t)n * (size_t)n);
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        double *u0 = u + (size_t)i * n, *u1 = u0 + n, *u2 = u1 + n, *u3 = u2 + n;
        const double *t0 = t + (size_t)i * n, *t1 = t0 + n, *t2 = t1 + n, *t3 = t2 + n;
        for (int l = 0; l < n; l++) {
            const double *row = a + (size_t)l * n;
            const double w0 = t0[l], w1 = t1[l], w2 = t2[l], w3 = t3[l];
            for (int j = 0; j < n; j++) {
                u0[j] += w0 * row[j];
                u1[j] += w1 * row[j];
                u2[j] += w2 * row[j];
                u3[j] += w3 * row[j];
            }
        }
    }
    for (; i < n; i++)
        for (int l = 0; l < n; l++) {
            const double w = t[(size_t)i * n + l], *row = a + (size_t)l * n;
            for (int j = 0; j < n; j++)
                u[(size_t)i * n + j] += w * row[j];
        }
}

/* Scales column j of u by e[j] and brings each row back into [2^-256,
 * 2^256] by a power of two added to its exponent (a row of zeros: no path
 * from that state through the chunk so far, exponent 0). */
static void scale_rows(int n, double *u, const double *e, int64_t *exponent)
{
    for (int k = 0; k < n; k++) {
        double *row = u + (size_t)k * n;
        for (int j = 0; j < n; j++)
            row[j] *= e[j];
        if (!hmmrt_dense_rescale(row, n, &exponent[k]))
            exponent[k] = 0;
    }
}

/* Chunk [i0, i1)'s transfer into t (n x n: row k the vector after the chunk
 * from state k alone, times 2^e[k]); work: n x n doubles. */
static void transfer(const hmmrt_dense *d, const uint8_t *x, int64_t i0, int64_t i1, int blas,
                     double *t, int64_t *e, double *work)
{
    int n = d->n;
    size_t nn = (size_t)n * (size_t)n;
    memcpy(t, d->p_matrix, sizeof(double) * nn);
    memset(e, 0, sizeof(int64_t) * (size_t)n);
    scale_rows(n, t, d->p_emission + (size_t)x[i0] * n, e);
    double *cur = t, *next = work;
    for (int64_t i = i0 + 1; i < i1; i++) {
        if (blas)
            hmmrt_dgemm(101, 111, 111, n, n, n, 1.0, cur, n, d->p_matrix, n, 0.0, next, n);
        else
            product_loop(n, cur, d->p_matrix, next);
        scale_rows(n, next, d->p_emission + (size_t)x[i] * n, e);
        double *swap = cur;
        cur = next;
        next = swap;
    }
    if (cur != t)
        memcpy(t, cur, sizeof(double) * nn);
}

/* The vector v (times 2^*ve) through positions [i0, i1) as the one-thread
 * function runs them; 0 when no path is left. */
static int run_vector(const hmmrt_dense *d, const uint8_t *x, int64_t i0, int64_t i1, double *v,
                      int64_t *ve, double *next)
{
    int n = d->n;
    for (int64_t i = i0; i < i1; i++) {
        memset(next, 0, sizeof(double) * (size_t)n);
        for (int k = 0; k < n; k++) {
            const double pk = v[k];
            if (pk == 0.0)
                continue;
            const double *row = d->p_matrix + (size_t)k * n;
            for (int j = 0; j < n; j++)
                next[j] += pk * row[j];
        }
        const double *e = d->p_emission + (size_t)x[i] * n;
        for (int j = 0; j < n; j++)
            v[j] = next[j] * e[j];
        if (!hmmrt_dense_rescale(v, n, ve))
            return 0;
    }
    return 1;
}

/* The score is start (x) e_x0, times every later position's A diag(e_x),
 * times end: forward and backward compute the same product (each in the
 * order its one-thread function does), so both are scanned as forward. */
double hmmrt_scan_dense_sum(const hmmrt_scan_call *c, const void *xs, int64_t L)
{
    hmmrt_dense *d = c->dense;
    const uint8_t *x = xs;
    if (L < 3 || !hmmrt_dense_prepare(d))
        return NAN;
    double started = omp_get_wtime();
    int threads = omp_in_parallel() ? 1 : omp_get_max_threads(), n = d->n, blas = use_blas();
    if (blas)
        hmmrt_openblas_single_threaded(); /* one product a thread */
    size_t nn = (size_t)n * (size_t)n;
    int64_t count, *begin = hmmrt_scan_chunks(L - 1, threads, hmmrt_scan_dense_cost(n),
                                              sizeof(double) * (nn + (size_t)n), &count);
    double *t = begin ? malloc(sizeof(double) * nn * (size_t)count) : NULL;
    size_t stride;
    double *work = t ? hmmrt_scan_thread_memory(nn, threads, &stride) : NULL;
    int64_t *e = work ? malloc(sizeof(int64_t) * (size_t)n * (size_t)count) : NULL;
    int *identity = e ? malloc(sizeof(int) * (size_t)n) : NULL;
    double *v = identity ? malloc(sizeof(double) * 2 * (size_t)n) : NULL;
    if (!v) {
        free(begin), free(t), free(work), free(e), free(identity);
        return NAN;
    }
    for (int k = 0; k < n; k++)
        identity[k] = k;
    /* chunk k covers positions [1 + begin[k], 1 + begin[k + 1]); chunk 0 runs
       the vector from position 0, the others their transfers */
    int64_t ve = 0;
    int alive = 1;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = 0; k < count; k++) {
        double *mine = work + stride * (size_t)omp_get_thread_num();
        if (k == 0) {
            const double *e0 = d->p_emission + (size_t)x[0] * n;
            for (int j = 0; j < n; j++)
                v[j] = d->p_start[j] * e0[j];
            alive = hmmrt_dense_rescale(v, n, &ve) &&
                    run_vector(d, x, 1, 1 + begin[1], v, &ve, mine);
        } else {
            transfer(d, x, 1 + begin[k], 1 + begin[k + 1], blas, t + nn * (size_t)k,
                     e + (size_t)n * (size_t)k, mine);
        }
    }
    double score = NAN;
    int got = alive ? 0 : -1;
    for (int64_t k = 1; k < count && got == 0; k++) {
        got = hmmrt_scan_apply_sum(n, n, identity, t + nn * (size_t)k, e + (size_t)n * (size_t)k,
                                   v, ve, v + n, &ve);
        memcpy(v, v + n, sizeof(double) * (size_t)n);
    }
    if (got == -1)
        score = -INFINITY;
    else if (got == 0) {
        double sum = 0.0;
        for (int k = 0; k < n; k++)
            sum += v[k] * d->p_end[k];
        score = sum > 0.0 ? log(sum) + (double)ve * LN2 : -INFINITY;
    }
    if (!isnan(score))
        hmmrt_scan_count(0, L, omp_get_wtime() - started, 0);
    free(begin), free(t), free(work), free(e), free(identity), free(v);
    return score;
}
