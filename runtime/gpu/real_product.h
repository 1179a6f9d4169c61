/* real_product.h: which mode the emission pass's matrix product takes for a
 * model (FP32, TF32 x 2 or TF32 x 3: real_math.cuh), from a bound of each
 * mode's rounding error against the float contract; and the weights laid
 * out in the mode's sections. Host C, included by runtime/gpu/real_gpu.c and
 * tests/unit/test_real_tf32.c (which checks the bound's verdicts by TF32
 * emulated on the CPU). */
#ifndef HMMRT_REAL_PRODUCT_H
#define HMMRT_REAL_PRODUCT_H

#include "gpu/real_math.cuh"
#include "real_gpu_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Features padded to a multiple of 8 (the product's rows 32-byte aligned). */
static inline int hmmrt_rg_padded(int n_feat) { return (n_feat + 7) / 8 * 8; }

/* The weights in the mode's sections: out[g * K + s * padded + j] with K =
 * sections x padded (zero past n_feat); w: n_gauss x n_feat doubles
 * (hmmrt_rg_gemm_weights). */
static inline void hmmrt_rg_weights_split(int mode, int n_gauss, int n_feat, const double *w,
                                          float *out)
{
    const int P = hmmrt_rg_padded(n_feat), S = hmmrt_rg_sections(mode);
    const size_t K = (size_t)S * P;
    for (int g = 0; g < n_gauss; g++)
        for (int s = 0; s < S; s++)
            for (int j = 0; j < P; j++)
                out[g * K + (size_t)s * P + j] =
                    j < n_feat ? hmmrt_rg_weight_part(mode, s, w[(size_t)g * n_feat + j]) : 0.0f;
}

/* The bound. Gaussian g's log-density is t_1 + ... + t_F, t_j = w_j phi_j
 * (weights times features of x less the centre). A mode's roundings each
 * change every term by at most a fraction u_k of it (the feature's rounding
 * to the nearest: random from frame to frame; the weight's: systematic, the
 * same for every frame, but of independent sign from term to term), so the
 * sum's error has a standard deviation of at most sqrt(sum_k u_k^2 / 3)
 * |t|_2 (independent errors uniform in +-u_k |t_j|). The float contract
 * allows 1e-5 x max(1, |score|) + 1e-8 a frame whatever the sequence's
 * length: the worst case is a sequence of one frame, and a systematic error
 * adds up no faster than that tolerance does. So a mode keeps the contract
 * at frame x if five standard deviations (10^6 frames, 10^5 gaussians) are
 * at most half of 1e-5 x max(1, |ln N(x)|) (the other half for FP32's own
 * sums and the log-sums). The frames: for a sample of the model's gaussians
 * (at most 512, evenly spread), the mean moved one standard deviation
 * (1 / sqrt(P_ii)) along each dimension, alternately up and down: the
 * frames a gaussian's own data puts near it, where its density dominates
 * the mixture's; far frames' densities are too small to count in the
 * log-sums. Returns the largest ratio of five deviations to that half (<= 1:
 * the mode keeps the contract). tests/unit/test_real_tf32.c checks that it
 * is not optimistic against TF32 emulated on the CPU. */
static inline double hmmrt_rg_deviation(int mode) /* sqrt(sum_k u_k^2 / 3) */
{
    const double u24 = ldexp(1, -24), u11 = ldexp(1, -11), u22 = ldexp(1, -22);
    double u2 = 2 * u24 * u24; /* the feature's and the weight's rounding to float */
    switch (mode) {
    case HMMRT_RG_TF32X2: u2 += u11 * u11 + u22 * u22; break;     /* x to TF32, w_lo */
    case HMMRT_RG_TF32X3: u2 += 3 * u22 * u22; break;             /* x_lo, x_lo w_lo left out, w_lo */
    case HMMRT_RG_TF32: u2 += 2 * u11 * u11; break;               /* x and w to TF32 */
    default: break;
    }
    return sqrt(u2 / 3);
}

static inline double hmmrt_rg_product_bound(const hmmrt_rg_model *m, const double *center,
                                            const double *w, int mode)
{
    const int D = m->D, F = hmmrt_rg_n_features(D);
    int fi[HMMRT_RG_MAX_D * (HMMRT_RG_MAX_D + 3) / 2 + 1], fk[sizeof fi / sizeof fi[0]];
    hmmrt_rg_feature_index(D, fi, fk);
    const double dev = hmmrt_rg_deviation(mode);
    double worst = 0;
    const int step = m->n_gauss > 512 ? m->n_gauss / 512 : 1;
    for (int g = 0; g < m->n_gauss; g += step) {
        const double *wg = w + (size_t)g * F, *mean = m->par + m->par_at[g];
        double xc[HMMRT_RG_MAX_D];
        for (int i = 0; i < D; i++) {
            const double p = -2 * wg[i * (i + 1) / 2 + i]; /* P_ii */
            const double sd = p > 0 ? 1 / sqrt(p) : 0;
            xc[i] = mean[i] - center[i] + (i % 2 ? -sd : sd);
        }
        double l = 0, t2 = 0;
        for (int j = 0; j < F; j++) {
            const double t = wg[j] * hmmrt_rg_featured(fi[j], fk[j], xc);
            l += t;
            t2 += t * t;
        }
        const double err = 5 * dev * sqrt(t2);
        const double half = 0.5 * (1e-5 * (fabs(l) > 1 ? fabs(l) : 1) + 1e-8);
        worst = err / half > worst ? err / half : worst;
    }
    return worst;
}

/* The cheapest mode whose bound is at most 1 (TF32 x 2, then TF32 x 3,
 * else FP32), with why in words (why: 160 bytes). */
static inline int hmmrt_rg_product_choose(const hmmrt_rg_model *m, const double *center,
                                          const double *w, char *why, size_t len)
{
    const double b2 = hmmrt_rg_product_bound(m, center, w, HMMRT_RG_TF32X2);
    const double b3 = hmmrt_rg_product_bound(m, center, w, HMMRT_RG_TF32X3);
    const int mode = b2 <= 1 ? HMMRT_RG_TF32X2 : b3 <= 1 ? HMMRT_RG_TF32X3 : HMMRT_RG_FP32;
    snprintf(why, len, "the error bound, as a fraction of the float contract's half: "
                       "TF32 x 2 %.3g, TF32 x 3 %.3g", b2, b3);
    return mode;
}

static inline const char *hmmrt_rg_mode_name(int mode)
{
    return mode == HMMRT_RG_TF32X2 ? "tf32x2" : mode == HMMRT_RG_TF32X3 ? "tf32x3"
         : mode == HMMRT_RG_TF32 ? "tf32" : "fp32";
}

#endif
