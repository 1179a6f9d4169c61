/* real_fb.c: forward-backward over real observations: each position's
 * emission values from the model's densities (gaussian.c), scaled by a power
 * of two per position, and the posterior call of main over such a model
 * (the same columns as posterior.c writes for symbols). */
#include "fb.h"
#include "internal.h"

#include <math.h>

/* ln 2 in long double, so that a sum of exponents times ln 2 rounds once. */
static const long double LN2L = 0.693147180559945309417232121458176568L;

long double hmmrt_real_rows(const hmmrt_densities *s, const double *obs, int64_t L, double *rows)
{
    int64_t k = 0;
    for (int64_t i = 0; i < L; i++)
        k += hmmrt_density_probs(s, obs + (size_t)i * (size_t)s->D, rows + (size_t)i * (size_t)s->n);
    return k * LN2L;
}

void hmmrt_real_log_rows(const hmmrt_densities *s, const double *obs, int64_t L, double *rows)
{
    for (int64_t i = 0; i < L; i++)
        hmmrt_density_logs(s, obs + (size_t)i * (size_t)s->D, rows + (size_t)i * (size_t)s->n);
}

int hmmrt_posterior_real(const hmmrt_posterior_call *call, const double *obs, int64_t L,
                         hmmrt_value *values, hmmrt_scratch *scratch)
{
    hmmrt_fb *fb = hmmrt_posterior_fb(call);
    const hmmrt_densities *dens = call->model->densities;
    if (!fb || !dens)
        return 1;
    const int wants_post = hmmrt_posterior_wants_best(call) || call->table_column >= 0;
    const size_t doubles = hmmrt_fb_scratch(fb, L);
    const size_t row_doubles = (size_t)L * (size_t)dens->n + 1;
    const size_t ints = hmmrt_posterior_wants_best(call) ? (size_t)L + 1 : 0;
    char *mem = hmmrt_scratch_get(scratch, (doubles + row_doubles) * sizeof(double) +
                                               ints * sizeof(int) + 64);
    if (!mem)
        return 1;
    double *rows = (double *)mem + doubles;
    const long double shift = hmmrt_real_rows(dens, obs, L, rows);
    double *post = NULL;
    double score = hmmrt_fb_run_rows(fb, rows, L, (double *)mem, NULL, NULL,
                                     wants_post ? &post : NULL);
    if (score != -INFINITY)
        score = (double)(score + shift);
    int *best = ints ? (int *)(rows + row_doubles) : NULL;
    hmmrt_posterior_write(call, fb->n, L, score, post, (size_t)fb->n, best, values);
    return 0;
}
