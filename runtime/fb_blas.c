/* fb_blas.c: training's E-step and posterior calls over a tile of
 * sequences at once for the dense form of fb.c: hmmrt_fb_run's forward and
 * backward with each
 * position's vector-matrix products made matrix products over the tile's
 * rows (OpenBLAS dgemm, on the calling thread), the silent moves, the
 * scaling and the silent counts row by row as hmmrt_fb_run does them. The
 * rows are sorted longest first: forward runs from their starts, backward
 * from their ends, and the rows still running are always the first ones. */
#include "fb.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* OpenBLAS's dgemm (openblas_dl.c): 101 row-major, 111 no transpose, 112 transpose. */
enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };

void hmmrt_fb_blas_counts(const hmmrt_fb *fb, const double *uses, double *move_counts)
{
    const size_t n = (size_t)fb->n;
    for (size_t k = 0; k < n * n; k++)
        if (fb->move_at[k] >= 0)
            move_counts[fb->move_at[k]] += fb->matrix[k] * uses[k];
}

/* The emission value of the moves into each state for symbol sym (0: none). */
static double emission_into(const hmmrt_fb *fb, size_t q, int sym)
{
    const int t = fb->state_table[q];
    return t < 0 ? 0.0 : fb->e[(size_t)t * fb->K + sym];
}

/* Forward: f[i * rows * n + r * n + q], each row's column scaled to sum to
 * 1 (ls[r * (longest + 1) + i]: ln of its scale); returns ln P of each row,
 * -inf for a row without a path, whose columns are then set to 0. */
static void forward(const hmmrt_fb *fb, const uint8_t *const *x, const int64_t *L, int rows,
                    double *f, double *ls, double *g, double *lnp)
{
    const size_t n = (size_t)fb->n, block = (size_t)rows * n;
    const int64_t longest = L[0];
    for (int r = 0; r < rows; r++) {
        double *col = f + (size_t)r * n;
        memset(col, 0, n * sizeof *col);
        col[fb->start] = 1;
        hmmrt_fb_silent_forward(fb, col, g);
        ls[(size_t)r * (longest + 1)] = hmmrt_fb_scale_column(col, (int)n);
        lnp[r] = ls[(size_t)r * (longest + 1)] == -INFINITY ? -INFINITY : 0.0;
    }
    int running = rows;
    for (int64_t i = 1; i <= longest; i++) {
        while (running > 0 && L[running - 1] < i)
            running--;
        const double *prev = f + (size_t)(i - 1) * block;
        double *cur = f + (size_t)i * block;
        hmmrt_dgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, running, (int)n, (int)n, 1.0, prev, (int)n,
                    fb->matrix, (int)n, 0.0, cur, (int)n);
        for (int r = 0; r < running; r++) {
            double *row = cur + (size_t)r * n;
            const int sym = x[r][i - 1];
            for (size_t q = 0; q < n; q++)
                row[q] = fb->state_table[q] < 0 ? 0.0 : row[q] * emission_into(fb, q, sym);
            hmmrt_fb_silent_forward(fb, row, g);
            double *scale = &ls[(size_t)r * (longest + 1) + i];
            *scale = hmmrt_fb_scale_column(row, (int)n);
            if (*scale == -INFINITY)
                lnp[r] = -INFINITY;
        }
    }
    for (int r = 0; r < rows; r++) {
        const double p_end = f[(size_t)L[r] * block + (size_t)r * n + fb->end];
        if (lnp[r] == -INFINITY || !(p_end > 0)) {
            lnp[r] = -INFINITY;
            for (int64_t i = 0; i <= L[r]; i++) /* no uses: 0 times anything finite */
                memset(f + (size_t)i * block + (size_t)r * n, 0, n * sizeof *f);
            continue;
        }
        double sum = log(p_end);
        for (int64_t i = 0; i <= L[r]; i++)
            sum += ls[(size_t)r * (longest + 1) + i];
        lnp[r] = sum;
    }
}

int hmmrt_fb_blas_tile(const hmmrt_fb *fb, const uint8_t *const *x, const int64_t *L, int rows,
                       double *lnp, double *uses, double *move_counts, double *emission_counts,
                       hmmrt_fb_row_done *done, void *context)
{
    if (rows <= 0)
        return 0;
    const size_t n = (size_t)fb->n, block = (size_t)rows * n;
    const int64_t longest = L[0];
    const int K = fb->K;
    /* the forward table, the scales, then per row: two backward columns,
     * what a move into q carries, the sources' shares, what enters q, and
     * silent scratch */
    double *f = malloc(sizeof(double) * (((size_t)longest + 1) * block +
                                         (size_t)rows * ((size_t)longest + 1) + 5 * block +
                                         (size_t)fb->max_comp + 8 + (size_t)rows));
    if (!f)
        return -1;
    double *ls = f + ((size_t)longest + 1) * block;
    double *b_next = ls + (size_t)rows * ((size_t)longest + 1), *b_cur = b_next + block;
    double *carry = b_cur + block, *from = carry + block, *into = from + block;
    double *g = into + block, *inv_p = g + fb->max_comp + 8;
    forward(fb, x, L, rows, f, ls, g, lnp);
    for (int r = 0; r < rows; r++) {
        inv_p[r] = lnp[r] == -INFINITY ? 0.0 : 1.0 / f[(size_t)L[r] * block + (size_t)r * n + fb->end];
        double *b = b_cur + (size_t)r * n;
        memset(b, 0, n * sizeof *b);
        b[fb->end] = 1;
        hmmrt_fb_silent_backward(fb, b, g);
        if (inv_p[r] > 0 && move_counts)
            hmmrt_fb_count_silent(fb, f + (size_t)L[r] * block + (size_t)r * n, b, inv_p[r],
                                  move_counts);
    }
    int running = rows;
    for (int64_t s = 0; s < longest; s++) { /* row r at position L[r] - 1 - s */
        while (running > 0 && L[running - 1] <= s)
            running--;
        double *swap = b_next;
        b_next = b_cur;
        b_cur = swap;
        for (int r = 0; r < running; r++) {
            const int64_t i = L[r] - 1 - s;
            const int sym = x[r][i];
            const double *fi = f + (size_t)i * block + (size_t)r * n, *bn = b_next + (size_t)r * n;
            double *c = carry + (size_t)r * n, *fr = from + (size_t)r * n;
            if (!(inv_p[r] > 0)) { /* no path: its rows add 0 (and no inf or NaN) */
                memset(c, 0, n * sizeof *c);
                memset(fr, 0, n * sizeof *fr);
                continue;
            }
            const double scale_p = inv_p[r] * exp(-ls[(size_t)r * (longest + 1) + i + 1]);
            for (size_t q = 0; q < n; q++) {
                c[q] = emission_into(fb, q, sym) * bn[q];
                fr[q] = fi[q] * scale_p;
            }
        }
        const int m = running, nn = (int)n;
        /* b_cur = carry x W^T, what enters q = (from x W) . carry, uses += from^T x carry */
        hmmrt_dgemm(ROW_MAJOR, NO_TRANS, TRANS, m, nn, nn, 1.0, carry, nn, fb->matrix, nn, 0.0,
                    b_cur, nn);
        hmmrt_dgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, m, nn, nn, 1.0, from, nn, fb->matrix, nn, 0.0,
                    into, nn);
        if (uses)
            hmmrt_dgemm(ROW_MAJOR, TRANS, NO_TRANS, nn, nn, m, 1.0, from, nn, carry, nn, 1.0, uses,
                        nn);
        for (int r = 0; r < running; r++) {
            const int64_t i = L[r] - 1 - s;
            const int sym = x[r][i];
            if (!(inv_p[r] > 0))
                continue;
            const double inv_scale = exp(-ls[(size_t)r * (longest + 1) + i + 1]);
            double *b = b_cur + (size_t)r * n;
            const double *c = carry + (size_t)r * n, *e = into + (size_t)r * n;
            /* the posteriors of position i + 1 (1-based) over its forward row, done with */
            double *post = done ? f + (size_t)(i + 1) * block + (size_t)r * n : NULL;
            for (size_t q = 0; q < n; q++) {
                b[q] *= inv_scale;
                if (post)
                    post[q] = e[q] * c[q];
                if (emission_counts && fb->state_table[q] >= 0)
                    emission_counts[(size_t)fb->state_table[q] * K + sym] += e[q] * c[q];
            }
            hmmrt_fb_silent_backward(fb, b, g);
            if (move_counts)
                hmmrt_fb_count_silent(fb, f + (size_t)i * block + (size_t)r * n, b, inv_p[r],
                                      move_counts);
        }
    }
    for (int r = 0; done && r < rows; r++)
        done(context, r, lnp[r], f + block + (size_t)r * n, block);
    free(f);
    return 0;
}
