/* hits_null2.c: HMMER3's null2, the correction of biased composition
 * (p7_Null2_ByExpectation, p7_domaindef, p7_pipeline): for an envelope, the
 * posterior-weighted mean of the emission odds of the states that emit its
 * residues, null2(x); a residue's correction ln null2(x_i); a domain's or
 * sequence's, ln(1 + omega exp(sum)), omega = 1/256 (docs/hmmer.md, "null2"). */
#include "hits.h"

#include "fb.h"

#include <math.h>
#include <stdlib.h>

#define OMEGA (1.0 / 256.0) /* p7_bg's prior of the null2 model */

static double bias_of(double sum) { return log1p(OMEGA * exp(sum)); }

double hmmrt_null2(hmmrt_path_model *pm, const uint8_t *x, int64_t L, int64_t from, int64_t to,
                   double *sum)
{
    if (sum)
        *sum = 0;
    size_t ns = 0;
    const double *post = hmmrt_unihit_posterior(pm, x, L, from, to, &ns);
    if (!post)
        return 0; /* no path (or no memory: the envelope is scored with none) */
    const hmmrt_fb *fb = hmmrt_path_fb(pm);
    int64_t Ld = to - from + 1;
    int K = fb->K;
    /* each state's expected share of the envelope's residues */
    double *w = calloc(ns + (size_t)K, sizeof *w);
    if (!w)
        return NAN;
    double *null2 = w + ns;
    for (int64_t i = 0; i < Ld; i++)
        for (size_t q = 0; q < ns; q++)
            w[q] += post[(size_t)i * ns + q];
    /* null2(x) = sum over states of share x emission odds; each state
     * counted once, through the first emitting move into it */
    unsigned char *seen = calloc(ns, 1);
    if (!seen) {
        free(w);
        return NAN;
    }
    for (int k = 0; k < fb->n_moves; k++) {
        const hmmrt_model_move *mv = &fb->moves[k];
        if (mv->emission < 0 || seen[mv->to] || w[mv->to] == 0)
            continue;
        seen[mv->to] = 1;
        double share = w[mv->to] / (double)Ld;
        for (int c = 0; c < K; c++)
            null2[c] += share * fb->e[(size_t)mv->emission * K + c];
    }
    free(seen);
    double total = 0;
    for (int64_t i = from; i <= to; i++)
        total += null2[x[i - 1]] > 0 ? log(null2[x[i - 1]]) : 0.0;
    free(w);
    if (sum)
        *sum = total;
    return bias_of(total);
}

double hmmrt_null2_sequence(hmmrt_path_model *pm, const uint8_t *x, int64_t L)
{
    hmmrt_envelope *envs = NULL;
    int n = 0;
    if (hmmrt_find_envelopes(pm, x, L, &envs, &n) != 0)
        return NAN;
    double total = 0;
    for (int e = 0; e < n; e++) {
        double sum;
        if (isnan(hmmrt_null2(pm, x, L, envs[e].from, envs[e].to, &sum))) {
            free(envs);
            return NAN;
        }
        total += sum;
    }
    free(envs);
    return bias_of(total);
}
