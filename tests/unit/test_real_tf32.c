/* test_real_tf32.c: the emission product's modes on the tensor cores
 * (runtime/gpu/real_math.cuh, real_product.h) with TF32 emulated on the CPU
 * (features and weights rounded to 10 mantissa bits, the sections summed in
 * float), on benchmarks/gmm's kind of model (seeded random full covariances,
 * D = 36, mixtures of 16): each utterance's forward score against the same
 * recursion over double log-densities, as a fraction of the float
 * contract's tolerance; plain TF32 must break it, TF32 x 3 keep it with
 * margin, and the bound's verdicts agree with what the emulation shows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "hmmrt.h"
#include "real_gpu_model.h"
#include "gpu/real_product.h"

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

enum { S = 6, G = 16, D = 36, NG = S * G, UTT = 24 };

/* gmm-bench's model at a small size: S states of G full-covariance
 * gaussians, left to right, every state entered from the start. */
typedef struct {
    double mean[NG][D], factor[NG][D * D], logw[NG];
    hmmrt_gaussian gs[NG];
    const hmmrt_gaussian *parts[NG];
    hmmrt_density dens[S];
    hmmrt_densities ds;
    hmmrt_model_move moves[4 * S];
    double ones[S];
    const char *names[S + 2];
    hmmrt_model m;
} bench_model;

static void make_bench(bench_model *b)
{
    memset(b, 0, sizeof *b);
    for (int j = 0; j < NG; j++) {
        double lsum = 0;
        for (int i = 0; i < D; i++) {
            b->mean[j][i] = 4 * uniform() - 2;
            for (int k = 0; k < i; k++)
                b->factor[j][i * D + k] = 0.2 * uniform() - 0.1;
            b->factor[j][i * D + i] = 0.5 + uniform();
            lsum += log(b->factor[j][i * D + i]);
        }
        b->gs[j] = (hmmrt_gaussian){0, b->mean[j], b->factor[j], -0.5 * D * log(2 * M_PI) - lsum};
        b->parts[j] = &b->gs[j];
    }
    for (int s = 0; s < S; s++) {
        double total = 0;
        for (int k = 0; k < G; k++)
            total += (b->logw[s * G + k] = 0.5 + uniform());
        for (int k = 0; k < G; k++)
            b->logw[s * G + k] = log(b->logw[s * G + k] / total);
        b->dens[s] = (hmmrt_density){G, b->parts + s * G, b->logw + s * G};
        b->ones[s] = 1;
    }
    b->ds = (hmmrt_densities){D, S, b->dens};
    int nm = 0;
    for (int s = 0; s < S; s++)
        b->moves[nm++] = (hmmrt_model_move){0, s + 1, s, 1.0 / S};
    for (int s = 0; s < S; s++) {
        b->moves[nm++] = (hmmrt_model_move){s + 1, s + 1, s, s + 1 < S ? 0.6 : 0.99};
        if (s + 1 < S)
            b->moves[nm++] = (hmmrt_model_move){s + 1, s + 2, s + 1, 0.39};
        b->moves[nm++] = (hmmrt_model_move){s + 1, S + 1, -1, 0.01};
    }
    for (int q = 0; q < S + 2; q++)
        b->names[q] = "q";
    b->m = (hmmrt_model){.name = "gmm", .n_states = S + 2, .state_names = b->names, .start = 0,
                         .end = S + 1, .n_moves = nm, .moves = b->moves, .n_emissions = S,
                         .emissions = b->ones, .densities = &b->ds};
}

/* An utterance of L frames: a walk over the states, each frame near one of
 * its state's gaussians (gmm-bench's frames). */
static void make_frames(const bench_model *b, double *x, int L)
{
    int state = (int)(uniform() * S);
    for (int i = 0; i < L; i++) {
        if (uniform() < 0.3 && state + 1 < S)
            state++;
        const double *m = b->mean[state * G + (int)(uniform() * G)];
        for (int d = 0; d < D; d++)
            x[i * D + d] = m[d] + 1.2 * (uniform() - 0.5);
    }
}

/* Forward over rows of log-densities (L x n_dens), in double. */
static double forward(const hmmrt_rg_model *g, const double *rows, int L)
{
    double prev[S + 2], cur[S + 2], offset = 0;
    for (int q = 0; q < g->n_states; q++)
        prev[q] = q == g->start ? 0 : -INFINITY;
    for (int i = 0; i < L; i++) {
        double top = -INFINITY;
        for (int q = 0; q < g->n_states; q++) {
            cur[q] = hmmrt_rg_stated(0, g->in_start[q], g->in_start[q + 1], g->in_from, g->in_logw,
                                     g->in_em, prev, rows + (size_t)i * g->n_dens);
            top = cur[q] > top ? cur[q] : top;
        }
        for (int q = 0; q < g->n_states; q++)
            prev[q] = cur[q] - top;
        offset += top;
    }
    double top = -INFINITY, sum = 0;
    for (int k = 0; k < g->n_end; k++)
        hmmrt_rg_lse_addd(&top, &sum, prev[g->end_from[k]] + g->end_logw[k]);
    return offset + top + log(sum);
}

/* One frame's row as the GPU's product in `mode` makes it: features of the
 * float frame less the float centre (rg_features), split into the mode's
 * sections, times the split weights summed in float, then each density's
 * log-sum (in double: only the product's error is under test). */
static void row_mode(const hmmrt_rg_model *g, int mode, const float *wsplit, const double *center,
                     const int *fi, const int *fk, const double *x, double *row)
{
    const int F = hmmrt_rg_n_features(D), P = hmmrt_rg_padded(F), K = hmmrt_rg_sections(mode) * P;
    float xc[D], phi[3 * ((D * (D + 3) / 2 + 1 + 7) / 8 * 8)];
    double grow[NG];
    for (int d = 0; d < D; d++)
        xc[d] = (float)x[d] - (float)center[d];
    for (int s = 0; s < hmmrt_rg_sections(mode); s++)
        for (int j = 0; j < P; j++)
            phi[s * P + j] = hmmrt_rg_feature_part(
                mode, s, j < F ? hmmrt_rg_featuref(fi[j] < 0 ? -1 : 0, fk[j] < 0 ? -1 : 1,
                                                    (float[2]){fi[j] < 0 ? 0 : xc[fi[j]],
                                                               fk[j] < 0 ? 0 : xc[fk[j]]})
                               : 0.0f);
    for (int j = 0; j < g->n_gauss; j++) {
        float t = 0;
        for (int k = 0; k < K; k++)
            t += phi[k] * wsplit[(size_t)j * K + k];
        grow[j] = t;
    }
    for (int t = 0; t < g->n_dens; t++)
        row[t] = hmmrt_rg_mixd(g->part_start[t], g->part_start[t + 1], g->part_gauss, g->part_logw,
                               grow);
}

/* The worst utterance's error in `mode`, as a fraction of the float
 * contract's tolerance, over UTT utterances of each length in lengths. */
static double worst_error(const hmmrt_rg_model *g, int mode, const double *center,
                          const double *w, const double *frames, const int *lengths, int n_len)
{
    const int F = hmmrt_rg_n_features(D), K = hmmrt_rg_sections(mode) * hmmrt_rg_padded(F);
    float *wsplit = malloc((size_t)NG * K * sizeof *wsplit);
    int fi[D * (D + 3) / 2 + 1], fk[D * (D + 3) / 2 + 1];
    hmmrt_rg_feature_index(D, fi, fk);
    hmmrt_rg_weights_split(mode, g->n_gauss, F, w, wsplit);
    double worst = 0;
    const double *x = frames;
    for (int li = 0; li < n_len; li++)
        for (int u = 0; u < UTT; u++) {
            const int L = lengths[li];
            double *exact = malloc((size_t)L * S * sizeof *exact), *got = malloc((size_t)L * S * sizeof *got);
            for (int i = 0; i < L; i++) {
                hmmrt_rg_row_d(g, x + (size_t)i * D, exact + (size_t)i * S);
                row_mode(g, mode, wsplit, center, fi, fk, x + (size_t)i * D, got + (size_t)i * S);
            }
            const double want = forward(g, exact, L), have = forward(g, got, L);
            const double tol = 1e-5 * (fabs(want) > 1 ? fabs(want) : 1) + 1e-8 * L;
            worst = fabs(have - want) / tol > worst ? fabs(have - want) / tol : worst;
            x += (size_t)L * D;
            free(exact);
            free(got);
        }
    free(wsplit);
    return worst;
}

static void test_tf32_modes(void **state)
{
    (void)state;
    static bench_model b;
    make_bench(&b);
    hmmrt_rg_model g;
    char err[256];
    assert_int_equal(hmmrt_rg_model_make(&b.m, &g, err, sizeof err), 0);
    assert_int_equal(g.n_gauss, NG);
    const int F = hmmrt_rg_n_features(D);
    double center[D], *w = malloc((size_t)NG * F * sizeof *w);
    assert_int_equal(hmmrt_rg_gemm_weights(&g, center, w), 0);
    const int lengths[] = {1, 100};
    double *frames = malloc((size_t)UTT * (1 + 100) * D * sizeof *frames), *x = frames;
    for (int li = 0; li < 2; li++)
        for (int u = 0; u < UTT; u++, x += (size_t)lengths[li] * D)
            make_frames(&b, x, lengths[li]);
    const int modes[] = {HMMRT_RG_FP32, HMMRT_RG_TF32, HMMRT_RG_TF32X2, HMMRT_RG_TF32X3};
    double seen[4], bound[4];
    for (int k = 0; k < 4; k++) {
        seen[k] = worst_error(&g, modes[k], center, w, frames, lengths, 2);
        bound[k] = hmmrt_rg_product_bound(&g, center, w, modes[k]);
        printf("# %-6s worst utterance %.4g of the tolerance; bound %.4g\n",
               hmmrt_rg_mode_name(modes[k]), seen[k], bound[k]);
    }
    /* plain TF32 breaks the contract, and the bound says so */
    assert_true(seen[1] > 1);
    assert_true(bound[1] > 1);
    /* FP32 and TF32 x 3 keep it with margin; the bound lets TF32 x 3 through */
    assert_true(seen[0] < 0.25);
    assert_true(seen[3] < 0.25);
    assert_true(bound[3] <= 1);
    /* the bound is never optimistic: a mode it passes keeps the contract */
    for (int k = 0; k < 4; k++)
        if (bound[k] <= 1)
            assert_true(seen[k] <= 0.5);
    /* and the choice is the cheapest mode it passes */
    char why[160];
    const int chosen = hmmrt_rg_product_choose(&g, center, w, why, sizeof why);
    assert_int_equal(chosen, bound[2] <= 1 ? HMMRT_RG_TF32X2 : HMMRT_RG_TF32X3);
    assert_non_null(strstr(why, "TF32 x 3"));
    free(frames);
    free(w);
    hmmrt_rg_model_free(&g);
}

/* TF32 rounding: 10 mantissa bits, to the nearest, ties away from zero. */
static void test_tf32_round(void **state)
{
    (void)state;
    assert_true(hmmrt_rg_tf32(1.0f) == 1.0f);
    assert_true(hmmrt_rg_tf32(1.0f + ldexpf(1, -11)) == 1.0f + ldexpf(1, -10)); /* a tie: away */
    assert_true(hmmrt_rg_tf32(1.0f + ldexpf(1, -12)) == 1.0f);
    assert_true(hmmrt_rg_tf32(-1.0f - ldexpf(1, -11) - ldexpf(1, -20)) == -1.0f - ldexpf(1, -10));
    assert_true(hmmrt_rg_tf32(INFINITY) == INFINITY);
    for (int k = 0; k < 1000; k++) {
        const float v = (float)(ldexp(uniform() - 0.5, (int)(uniform() * 40) - 20));
        const float r = hmmrt_rg_tf32(v);
        unsigned int bits;
        memcpy(&bits, &r, sizeof bits);
        assert_int_equal(bits & 0x1fffu, 0);
        assert_true(fabsf(r - v) <= ldexpf(fabsf(v), -11));
        /* the split: hi + lo within 2^-22 of the value */
        const float lo = hmmrt_rg_feature_part(HMMRT_RG_TF32X3, 2, v);
        assert_true(fabs((double)r + lo - v) <= ldexp(fabs(v), -22));
        assert_true(hmmrt_rg_weight_part(HMMRT_RG_TF32X2, 0, v) == r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tf32_round),
        cmocka_unit_test(test_tf32_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
