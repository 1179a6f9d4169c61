/* dense_blas.c: forward and backward of a dense model over a tile of
 * sequences at once, one matrix product (OpenBLAS dgemm) per position: the
 * rows are the sequences, sorted longest first, so the rows still running at
 * a position are always the first ones. Each row keeps its own power-of-two
 * scale, exactly as runtime/dense.c does for one sequence. OpenBLAS is
 * loaded at run time (openblas_dl.c); dense_batch.c uses this file only
 * where it was found. */
#include "hmmrt.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* OpenBLAS's dgemm through openblas_dl.c (loaded at run time): the enums
 * are cblas.h's, 101 row-major, 111 no transpose, 112 transpose. */
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

static const double LN2 = 0.693147180559945309417232121458176568;

void hmmrt_dense_blas_single_threaded(void)
{
    hmmrt_openblas_single_threaded();
}

/* The score of a row: its last column against v (the end vector for
 * forward; start times the first emission for backward), summed in state
 * order as dense.c does. */
static double finish(const double *col, const double *v, const double *e, int n, int64_t scale)
{
    double sum = 0.0;
    if (e)
        for (int j = 0; j < n; j++)
            sum += v[j] * e[j] * col[j];
    else
        for (int k = 0; k < n; k++)
            sum += col[k] * v[k];
    return log(sum) + (double)scale * LN2;
}

/* Forward: row r's column at position t is (its column at t - 1) x P, times
 * the emissions of its symbol t, rescaled. */
static void forward(const hmmrt_dense *d, const uint8_t *const *x, const int64_t *L, int rows,
                    double *cur, double *next, int64_t *scale, unsigned char *alive,
                    double *score)
{
    const int n = d->n;
    for (int r = 0; r < rows; r++) {
        const double *e = d->p_emission + (size_t)x[r][0] * n;
        double *c = cur + (size_t)r * n;
        for (int j = 0; j < n; j++)
            c[j] = d->p_start[j] * e[j];
        scale[r] = 0;
        alive[r] = (unsigned char)hmmrt_dense_rescale(c, n, &scale[r]);
    }
    int running = rows; /* rows 0..running-1 have symbols left */
    for (int64_t t = 1;; t++) {
        while (running > 0 && L[running - 1] <= t) { /* row running-1 ended at t - 1 */
            running--;
            score[running] = alive[running]
                                 ? finish(cur + (size_t)running * n, d->p_end, NULL, n, scale[running])
                                 : -INFINITY;
        }
        if (running == 0)
            return;
        hmmrt_dgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, running, n, n, 1.0, cur, n, d->p_matrix, n,
                    0.0, next, n);
        for (int r = 0; r < running; r++) {
            if (!alive[r])
                continue;
            const double *e = d->p_emission + (size_t)x[r][t] * n;
            double *c = next + (size_t)r * n;
            for (int j = 0; j < n; j++)
                c[j] *= e[j];
            alive[r] = (unsigned char)hmmrt_dense_rescale(c, n, &scale[r]);
        }
        double *swap = cur;
        cur = next;
        next = swap;
    }
}

/* Backward, the rows aligned at their ends: at step s, row r is at
 * position L[r] - 1 - s, and its column becomes P x (column times the
 * emissions of that position's symbol), rescaled. */
static void backward(const hmmrt_dense *d, const uint8_t *const *x, const int64_t *L, int rows,
                     double *cur, double *next, double *in, int64_t *scale,
                     unsigned char *alive, double *score)
{
    const int n = d->n;
    for (int r = 0; r < rows; r++) {
        memcpy(cur + (size_t)r * n, d->p_end, sizeof(double) * (size_t)n);
        scale[r] = 0;
        alive[r] = (unsigned char)hmmrt_dense_rescale(cur + (size_t)r * n, n, &scale[r]);
    }
    int running = rows; /* rows 0..running-1 have positions >= 1 left */
    for (int64_t s = 0;; s++) {
        while (running > 0 && L[running - 1] - 1 - s < 1) { /* row running-1 reached position 0 */
            running--;
            score[running] =
                alive[running] ? finish(cur + (size_t)running * n, d->p_start,
                                        d->p_emission + (size_t)x[running][0] * n, n, scale[running])
                               : -INFINITY;
        }
        if (running == 0)
            return;
        for (int r = 0; r < running; r++) {
            const double *e = d->p_emission + (size_t)x[r][L[r] - 1 - s] * n;
            const double *c = cur + (size_t)r * n;
            double *v = in + (size_t)r * n;
            for (int j = 0; j < n; j++)
                v[j] = c[j] * e[j];
        }
        hmmrt_dgemm(ROW_MAJOR, NO_TRANS, TRANS, running, n, n, 1.0, in, n, d->p_matrix, n, 0.0,
                    next, n);
        for (int r = 0; r < running; r++)
            if (alive[r])
                alive[r] = (unsigned char)hmmrt_dense_rescale(next + (size_t)r * n, n, &scale[r]);
        double *swap = cur;
        cur = next;
        next = swap;
    }
}

int hmmrt_dense_blas_tile(const hmmrt_dense_sum *s, const uint8_t *const *x, const int64_t *L,
                          int rows, double *score)
{
    hmmrt_dense *d = s->d;
    if (rows <= 0)
        return 0;
    if (!hmmrt_dense_prepare(d))
        return -1;
    const size_t column = (size_t)rows * (size_t)d->n;
    double *mem = malloc(sizeof(double) * 3 * column + (sizeof(int64_t) + 1) * (size_t)rows);
    if (!mem)
        return -1;
    int64_t *scale = (int64_t *)(mem + 3 * column);
    unsigned char *alive = (unsigned char *)(scale + rows);
    if (s->backward)
        backward(d, x, L, rows, mem, mem + column, mem + 2 * column, scale, alive, score);
    else
        forward(d, x, L, rows, mem, mem + column, scale, alive, score);
    free(mem);
    return 0;
}
