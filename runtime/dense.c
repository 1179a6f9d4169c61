/* dense.c: forward, backward and viterbi for dense models on the CPU. A
 * dense model (hmmc's plan picks the shape: most pairs of its emitting states
 * are joined) is a start vector, an N x N matrix and an end vector; its code
 * is the same for every model, so it lives here, and the generated program
 * passes its matrix (hmmrt_dense). Each position is a vector-matrix product:
 * a row of the matrix is added into the next column (axpy), so the inner
 * loop runs over contiguous destinations and the compiler can vectorise it.
 * Forward and backward run on probabilities rescaled by powers of two
 * (exact), viterbi on logs, as the straight-line code does. */
#include "hmmrt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double LN2 = 0.693147180559945309417232121458176568;

/* Probabilities of the log tables, made once, on first use. */
int hmmrt_dense_prepare(hmmrt_dense *d)
{
    int ok = 1;
    if (__atomic_load_n(&d->ready, __ATOMIC_ACQUIRE))
        return 1;
#pragma omp critical(hmmrt_dense_prepare)
    if (!d->ready) {
        size_t nn = (size_t)d->n * (size_t)d->n, nk = (size_t)d->n * (size_t)d->K;
        double *p = malloc(sizeof(double) * (nn + nk + 2 * (size_t)d->n));
        if (!p) {
            ok = 0;
        } else {
            for (size_t i = 0; i < nn; i++)
                p[i] = exp(d->matrix[i]);
            for (size_t i = 0; i < nk; i++)
                p[nn + i] = exp(d->emission[i]);
            for (int j = 0; j < d->n; j++) {
                p[nn + nk + j] = exp(d->start_w[j]);
                p[nn + nk + d->n + j] = exp(d->end_w[j]);
            }
            d->p_matrix = p;
            d->p_emission = p + nn;
            d->p_start = p + nn + nk;
            d->p_end = p + nn + nk + d->n;
            __atomic_store_n(&d->ready, 1, __ATOMIC_RELEASE);
        }
    }
    return ok;
}

/* Rescales a column of probabilities by a power of two when its sum leaves
 * [2^-256, 2^256]; returns 0 when no path is left. */
int hmmrt_dense_rescale(double *col, int n, int64_t *scale)
{
    double sum = 0.0;
    for (int j = 0; j < n; j++)
        sum += col[j];
    if (!(sum > 0.0))
        return 0;
    if (sum < 0x1p-256 || sum > 0x1p256) {
        int exponent;
        frexp(sum, &exponent);
        const double factor = ldexp(1.0, -exponent);
        for (int j = 0; j < n; j++)
            col[j] *= factor;
        *scale += exponent;
    }
    return 1;
}

double hmmrt_dense_forward(hmmrt_dense *d, const uint8_t *x, int64_t L, double *columns)
{
    const int n = d->n;
    if (L == 0)
        return d->start_end;
    if (!hmmrt_dense_prepare(d))
        return NAN;
    double *cur = columns, *next = columns + n;
    int64_t scale = 0;
    const double *e = d->p_emission + (size_t)x[0] * n;
    for (int j = 0; j < n; j++)
        cur[j] = d->p_start[j] * e[j];
    if (!hmmrt_dense_rescale(cur, n, &scale))
        return -INFINITY;
    for (int64_t i = 1; i < L; i++) {
        memset(next, 0, sizeof(double) * (size_t)n);
        for (int k = 0; k < n; k++) {
            const double pk = cur[k];
            if (pk == 0.0)
                continue;
            const double *row = d->p_matrix + (size_t)k * n;
            for (int j = 0; j < n; j++)
                next[j] += pk * row[j];
        }
        e = d->p_emission + (size_t)x[i] * n;
        for (int j = 0; j < n; j++)
            next[j] *= e[j];
        if (!hmmrt_dense_rescale(next, n, &scale))
            return -INFINITY;
        double *swap = cur;
        cur = next;
        next = swap;
    }
    double sum = 0.0;
    for (int k = 0; k < n; k++)
        sum += cur[k] * d->p_end[k];
    return log(sum) + (double)scale * LN2;
}

double hmmrt_dense_backward(hmmrt_dense *d, const uint8_t *x, int64_t L, double *columns)
{
    const int n = d->n;
    if (L == 0)
        return d->start_end;
    if (!hmmrt_dense_prepare(d))
        return NAN;
    double *cur = columns, *next = columns + n, *in = columns + 2 * n;
    int64_t scale = 0;
    memcpy(cur, d->p_end, sizeof(double) * (size_t)n);
    if (!hmmrt_dense_rescale(cur, n, &scale))
        return -INFINITY;
    for (int64_t i = L - 1; i >= 1; i--) {
        const double *e = d->p_emission + (size_t)x[i] * n;
        for (int j = 0; j < n; j++)
            in[j] = cur[j] * e[j];
        for (int k = 0; k < n; k++) {
            const double *row = d->p_matrix + (size_t)k * n;
            double sum = 0.0;
            for (int j = 0; j < n; j++)
                sum += row[j] * in[j];
            next[k] = sum;
        }
        if (!hmmrt_dense_rescale(next, n, &scale))
            return -INFINITY;
        double *swap = cur;
        cur = next;
        next = swap;
    }
    const double *e = d->p_emission + (size_t)x[0] * n;
    double sum = 0.0;
    for (int j = 0; j < n; j++)
        sum += d->p_start[j] * e[j] * cur[j];
    return log(sum) + (double)scale * LN2;
}

/* Stores a back pointer: the model state the best path into (pos, state) came from. */
static void set_bp(void *bp, int bp_bytes, size_t cell, int from)
{
    if (bp_bytes == 2)
        ((uint16_t *)bp)[cell] = (uint16_t)from;
    else
        ((uint32_t *)bp)[cell] = (uint32_t)from;
}

double hmmrt_dense_viterbi(const hmmrt_dense *d, const uint8_t *x, int64_t L, double *columns,
                           int *best_from, void *bp, int bp_bytes)
{
    const int n = d->n;
    const size_t width = (size_t)d->n_states;
    if (L == 0) {
        if (bp && d->start_end > -INFINITY)
            set_bp(bp, bp_bytes, (size_t)d->end, d->start);
        return d->start_end;
    }
    double *cur = columns, *next = columns + n;
    const double *e = d->emission + (size_t)x[0] * n;
    for (int j = 0; j < n; j++) {
        cur[j] = d->start_w[j] + e[j];
        if (bp)
            set_bp(bp, bp_bytes, width + (size_t)d->state_of[j], d->start);
    }
    /* the column holds ln scores minus offset: each position subtracts the
     * best value of the one before (so that additions round by an ulp of a
     * small number), the offsets summed with their rounding errors kept */
    double offset = 0.0, offset_error = 0.0;
    for (int64_t i = 1; i < L; i++) {
        double top = -INFINITY;
        for (int j = 0; j < n; j++) {
            top = cur[j] > top ? cur[j] : top;
            next[j] = -INFINITY;
            best_from[j] = -1;
        }
        top = top > -INFINITY ? top : 0.0;
        const double sum = offset + top;
        offset_error += fabs(offset) >= fabs(top) ? (offset - sum) + top : (top - sum) + offset;
        offset = sum;
        for (int k = 0; k < n; k++) {
            const double pk = cur[k];
            if (pk == -INFINITY)
                continue;
            const double *row = d->matrix + (size_t)k * n;
            for (int j = 0; j < n; j++) {
                const double v = pk + row[j];
                if (v > next[j]) {
                    next[j] = v;
                    best_from[j] = k;
                }
            }
        }
        e = d->emission + (size_t)x[i] * n;
        for (int j = 0; j < n; j++) {
            next[j] += e[j] - top;
            if (bp && best_from[j] >= 0)
                set_bp(bp, bp_bytes, (size_t)(i + 1) * width + (size_t)d->state_of[j],
                       d->state_of[best_from[j]]);
        }
        double *swap = cur;
        cur = next;
        next = swap;
    }
    double best = -INFINITY;
    int from = -1;
    for (int k = 0; k < n; k++) {
        const double v = cur[k] + d->end_w[k];
        if (v > best) {
            best = v;
            from = k;
        }
    }
    if (bp && from >= 0)
        set_bp(bp, bp_bytes, (size_t)L * width + (size_t)d->end, d->state_of[from]);
    return best + (offset + offset_error);
}
