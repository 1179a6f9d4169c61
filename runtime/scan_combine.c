/* scan_combine.c: the algebra of the time-parallel scan (issue 24): a chunk's
 * transfer applied to a column, and two transfers composed into one, in
 * sum-product (probabilities with an exponent per transfer column, summed in
 * long double) and in max-plus (ln values). Plain arrays, no threads. */
#include "hmmrt_scan.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* A column's sum is brought back near 2^960, as the generated code keeps it. */
enum { SUM_EXP = 960 };

int hmmrt_scan_apply_sum(int n, int nb, const int *boundary, const double *t, const int64_t *e,
                         const double *v, int64_t ve, double *out, int64_t *oute)
{
    /* the largest term's exponent: every weight below is taken relative to
       it, so that long double's range (2^-16382) holds them all; a column
       of zeros (no path through the chunk from its state) has no exponent
       that means anything */
    int64_t ref = INT64_MIN;
    unsigned char live[nb > 0 ? nb : 1]; /* a term to add: v's value and a column not all 0 */
    for (int j = 0; j < nb; j++) {
        double vj = v[boundary[j]];
        const double *col = t + (size_t)j * n;
        live[j] = 0;
        for (int i = 0; i < n && vj > 0.0 && !live[j]; i++)
            live[j] = col[i] > 0.0;
        if (live[j] && e[j] + ilogb(vj) > ref)
            ref = e[j] + ilogb(vj);
    }
    memset(out, 0, sizeof(double) * (size_t)n);
    *oute = 0;
    if (ref == INT64_MIN)
        return -1;
    long double acc[n];
    for (int i = 0; i < n; i++)
        acc[i] = 0.0L;
    for (int j = 0; j < nb; j++) {
        double vj = v[boundary[j]];
        int64_t shift = e[j] - ref;
        if (!live[j] || shift < LDBL_MIN_EXP - 64)
            continue; /* below 2^-16400 of the largest term: nothing long double holds */
        long double wj = ldexpl((long double)vj, (int)shift);
        const double *col = t + (size_t)j * n;
        for (int i = 0; i < n; i++)
            acc[i] += wj * col[i];
    }
    long double sum = 0.0L;
    for (int i = 0; i < n; i++)
        sum += acc[i];
    if (!(sum > 0.0L))
        return -1;
    int ex;
    frexpl(sum, &ex);
    int lost = 0;
    for (int i = 0; i < n; i++) {
        long double scaled = ldexpl(acc[i], SUM_EXP - ex);
        out[i] = (double)scaled;
        lost |= scaled > 0.0L && scaled < DBL_MIN;
    }
    *oute = ve + ref + ex - SUM_EXP;
    return lost ? -2 : 0;
}

int hmmrt_scan_compose_sum(int n, int nb, const int *boundary, const double *a,
                           const int64_t *ae, const double *b, const int64_t *be, double *c,
                           int64_t *ce)
{
    int status = 0;
    for (int j = 0; j < nb; j++) {
        int got = hmmrt_scan_apply_sum(n, nb, boundary, a, ae, b + (size_t)j * n, be[j],
                                       c + (size_t)j * n, &ce[j]);
        if (got == -2)
            status = -2;
    }
    return status;
}

void hmmrt_scan_apply_max(int n, int nb, const int *boundary, const double *t, const double *v,
                          double *out)
{
    for (int i = 0; i < n; i++)
        out[i] = -INFINITY;
    for (int j = 0; j < nb; j++) {
        double vj = v[boundary[j]];
        if (vj == -INFINITY)
            continue;
        const double *col = t + (size_t)j * n;
        for (int i = 0; i < n; i++) {
            double x = vj + col[i];
            out[i] = x > out[i] ? x : out[i];
        }
    }
}

void hmmrt_scan_compose_max(int n, int nb, const int *boundary, const double *a, const double *b,
                            double *c)
{
    for (int j = 0; j < nb; j++)
        hmmrt_scan_apply_max(n, nb, boundary, a, b + (size_t)j * n, c + (size_t)j * n);
}
