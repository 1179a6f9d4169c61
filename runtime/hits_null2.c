/* hits_null2.c: HMMER3's null2, the correction of biased composition
 * (p7_Null2_ByExpectation, p7_domaindef, p7_pipeline): for an envelope, the
 * posterior-weighted mean of the emission odds of the states that emit its
 * residues, null2(x); a residue's correction ln null2(x_i); a domain's or
 * sequence's, ln(1 + omega exp(sum)), omega = 1/256; and nhmmer's for DNA
 * hits, the envelope scored against its own composition (docs/hmmer.md). */
#include "hits.h"

#include "fb.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- nhmmer's null2 (long targets): the envelope scored again against a
 * background mixed with its own composition ---------------------------------- */

/* The nucleotides (bits A 1, C 2, G 4, T 8) a code of a DNA import's
 * alphabet stands for, as Easel reads it (U is T, X is N, I is A); 0 for
 * '*' and anything else that is no residue. */
static unsigned nucleotides_of(char symbol)
{
    static const char codes[] = "ACGTURYMKSWHBVDNXI";
    static const unsigned sets[] = {1, 2, 4, 8, 8, 5, 10, 3, 12, 6, 9, 11, 14, 7, 13, 15, 15, 1};
    const char *at = symbol ? strchr(codes, toupper((unsigned char)symbol)) : NULL;
    return at ? sets[at - codes] : 0;
}

/* The background nhmmer scores an envelope against when null2 is on
 * (p7_domaindef.c's reparameterize_model): the residues of x[0 .. Ld-1]
 * counted (a degenerate code as an equal share of each of its nucleotides,
 * esl_sq_CountResidues), made frequencies, and mixed with the null model's
 * 1/4 each: f = s / 4 + (1 - s) counts, s = 25 / min(100, max(50, Lw)),
 * Lw the length of the window the envelope was found in. */
static void envelope_background(const uint8_t *x, int64_t Ld, const unsigned *sets, int64_t Lw,
                                double f[4])
{
    double count[4] = {0}, total = 0;
    for (int64_t i = 0; i < Ld; i++) {
        unsigned set = sets[x[i]];
        int n = __builtin_popcount(set);
        for (int y = 0; y < 4 && n; y++)
            if (set & (1u << y)) {
                count[y] += 1.0 / n;
                total += 1.0 / n;
            }
    }
    double s = 25.0 / (double)(Lw < 50 ? 50 : Lw > 100 ? 100 : Lw);
    for (int y = 0; y < 4; y++)
        f[y] = s * 0.25 + (1.0 - s) * (total > 0 ? count[y] / total : 0.25);
}

double hmmrt_nhmmer_null2(hmmrt_path_model *pm, const char *alphabet, const uint8_t *x,
                          int64_t from, int64_t to, int64_t ali_len, long W, int64_t Lw,
                          double bits)
{
    const hmmrt_fb *fb = hmmrt_path_fb(pm);
    int K = fb->K;
    unsigned sets[256] = {0};
    for (int c = 0; c < K && alphabet[c]; c++)
        sets[c] = nucleotides_of(alphabet[c]);
    double f[4];
    envelope_background(x + from - 1, to - from + 1, sets, Lw, f);
    /* the match states' tables (odds e / (1/4)) made e / f: canonical codes
     * times (1/4) / f, each degenerate code the f-weighted mean of its
     * nucleotides' log-odds (Easel's esl_abc_FExpectScVec) */
    double *saved = malloc((size_t)fb->n_emissions * (size_t)K * sizeof *saved);
    unsigned char *is_match = calloc((size_t)fb->n_emissions + 1, 1);
    if (!saved || !is_match) {
        free(saved);
        free(is_match);
        return NAN;
    }
    memcpy(saved, fb->e, (size_t)fb->n_emissions * (size_t)K * sizeof *saved);
    for (int k = 0; k < fb->n_moves; k++) {
        const char *to_name = fb->names[fb->moves[k].to];
        if (fb->moves[k].emission >= 0 && to_name[0] == 'M' && isdigit((unsigned char)to_name[1]))
            is_match[fb->moves[k].emission] = 1;
    }
    for (int t = 0; t < fb->n_emissions; t++) {
        if (!is_match[t])
            continue;
        double *row = fb->e + (size_t)t * K, sc[4] = {0};
        for (int c = 0; c < K; c++) /* each nucleotide's log-odds against f */
            for (int y = 0; y < 4; y++)
                if (sets[c] == (1u << y))
                    sc[y] = log(saved[(size_t)t * K + c] * 0.25 / f[y]);
        for (int c = 0; c < K; c++) {
            if (!sets[c])
                continue;
            double sum = 0, weight = 0;
            for (int y = 0; y < 4; y++)
                if (sets[c] & (1u << y)) {
                    sum += f[y] * sc[y];
                    weight += f[y];
                }
            row[c] = exp(sum / weight);
        }
    }
    double reparameterized = hmmrt_nhmmer_bits(pm, x, from, to, ali_len, W);
    memcpy(fb->e, saved, (size_t)fb->n_emissions * (size_t)K * sizeof *saved);
    free(saved);
    free(is_match);
    if (isnan(reparameterized))
        return NAN;
    /* nhmmer keeps the lower of the two scores; the correction is the
     * difference (never below 0) */
    return reparameterized < bits ? bits - reparameterized : 0.0;
}
