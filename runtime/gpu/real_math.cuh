/* real_math.cuh: the arithmetic of the GPU path over real observations, as
 * __host__ __device__ helpers that the kernels (real_kernel.cu) loop over and
 * that C includes too (runtime/real_gpu_model.c's CPU run of the same steps,
 * tests/unit/test_real_gpu.c): a gaussian's log-density through its packed
 * Cholesky factor, a mixture's log-sum, and one state's step of the recursion. */
#ifndef HMMRT_REAL_MATH_CUH
#define HMMRT_REAL_MATH_CUH

#include <math.h>
#include <string.h>

#ifdef __CUDACC__
#define HMMRT_RG_HD __host__ __device__ static inline
#else
#define HMMRT_RG_HD static inline
#endif

/* The most reals an observation may hold on the GPU path (a thread keeps
 * L^-1 (x - mean) in a local array); more: the CPU path. */
#define HMMRT_RG_MAX_D 64

/* Offset of row i of a packed lower triangle (row i holds i + 1 values). */
HMMRT_RG_HD int hmmrt_rg_row(int i) { return i * (i + 1) / 2; }

/* ln N(x; mean, L L^T) = log_norm - |z|^2 / 2 with L z = x - mean, for one
 * precision (RT: float or double; SFX the name's suffix). A gaussian's
 * parameters: mean (D) then, diagonal, D reciprocal standard deviations, or
 * the lower triangle of L row by row with each diagonal entry replaced by
 * its reciprocal (D (D + 1) / 2). Forward substitution as runtime/gaussian.c,
 * multiplying by the reciprocal where it divides. A NaN (inf - inf, an
 * observation near the type's limits) is density 0, as there. */
#define HMMRT_RG_GAUSSIAN(RT, SFX)                                                            \
    HMMRT_RG_HD RT hmmrt_rg_gaussian_log##SFX(const RT *par, int diagonal, RT log_norm, int D, \
                                              const RT *x)                                     \
    {                                                                                          \
        const RT *mean = par, *f = par + D;                                                    \
        RT q = 0;                                                                              \
        if (diagonal) {                                                                        \
            for (int i = 0; i < D; i++) {                                                      \
                const RT z = (x[i] - mean[i]) * f[i];                                          \
                q += z * z;                                                                    \
            }                                                                                  \
        } else {                                                                               \
            RT z[HMMRT_RG_MAX_D];                                                              \
            for (int i = 0; i < D; i++) {                                                      \
                const RT *row = f + hmmrt_rg_row(i);                                           \
                RT t = x[i] - mean[i];                                                         \
                for (int k = 0; k < i; k++)                                                    \
                    t -= row[k] * z[k];                                                        \
                z[i] = t * row[i];                                                             \
                q += z[i] * z[i];                                                              \
            }                                                                                  \
        }                                                                                      \
        return q == q ? log_norm - (RT)0.5 * q : (RT)-INFINITY;                                \
    }

/* A running log-sum: *top the largest term so far, *sum the sum of
 * e^(term - top); the total is top + ln sum (-inf while every term is). */
#define HMMRT_RG_LSE(RT, SFX, EXP)                                                             \
    HMMRT_RG_HD void hmmrt_rg_lse_add##SFX(RT *top, RT *sum, RT term)                          \
    {                                                                                          \
        if (term == (RT)-INFINITY)                                                             \
            return;                                                                            \
        if (term > *top) {                                                                     \
            *sum = (*top == (RT)-INFINITY ? (RT)0 : *sum * EXP(*top - term)) + (RT)1;          \
            *top = term;                                                                       \
        } else {                                                                               \
            *sum += EXP(term - *top);                                                          \
        }                                                                                      \
    }

/* One state's value at a position: over the emitting moves into it
 * (in_from, in_logw, in_em from first to last), prev[from] + ln w + the
 * emission's log-density in erow; summed in logs (forward) or their
 * largest (viterbi). -inf: no path. */
#define HMMRT_RG_STEP(RT, SFX, LOG)                                                            \
    HMMRT_RG_HD RT hmmrt_rg_state##SFX(int viterbi, int first, int last, const int *in_from,  \
                                       const RT *in_logw, const int *in_em, const RT *prev,    \
                                       const RT *erow)                                         \
    {                                                                                          \
        RT top = (RT)-INFINITY, sum = 0;                                                       \
        for (int m = first; m < last; m++) {                                                   \
            const RT v = prev[in_from[m]] + in_logw[m] + erow[in_em[m]];                       \
            if (viterbi)                                                                       \
                top = v > top ? v : top;                                                       \
            else                                                                               \
                hmmrt_rg_lse_add##SFX(&top, &sum, v);                                          \
        }                                                                                      \
        return viterbi || top == (RT)-INFINITY ? top : top + LOG(sum);                         \
    }

/* Feature (i, k) of the expanded form, over x less the centre (xc): x_i
 * x_k (k <= i), x_i (k < 0) or 1 (i < 0); the log-density of a gaussian
 * is then the sum of its weights times the features (real_gpu_model.c). */
#define HMMRT_RG_FEATURE(RT, SFX)                                                              \
    HMMRT_RG_HD RT hmmrt_rg_feature##SFX(int i, int k, const RT *xc)                           \
    {                                                                                          \
        return i < 0 ? (RT)1 : k < 0 ? xc[i] : xc[i] * xc[k];                                  \
    }

/* A density's log-value from its gaussians' (grow[gaussian]): the log-sum
 * of ln weight + ln N over parts first .. last - 1. */
#define HMMRT_RG_MIX(RT, SFX, LOG)                                                             \
    HMMRT_RG_HD RT hmmrt_rg_mix##SFX(int first, int last, const int *part_gauss,               \
                                     const RT *logw, const RT *grow)                           \
    {                                                                                          \
        RT top = (RT)-INFINITY, sum = 0;                                                       \
        for (int p = first; p < last; p++)                                                     \
            hmmrt_rg_lse_add##SFX(&top, &sum, logw[p] + grow[part_gauss[p]]);                  \
        return top == (RT)-INFINITY ? top : top + LOG(sum);                                    \
    }

/* v rounded to TF32 (10 mantissa bits, the tensor cores' input), to the
 * nearest, ties away from zero: the low 13 bits of the float zero, so that
 * the tensor cores take it as it is (they drop those bits, rounding toward
 * zero). Finite v only (a NaN or an infinity comes back as it is). */
HMMRT_RG_HD float hmmrt_rg_tf32(float v)
{
    unsigned int b;
#ifdef __CUDA_ARCH__
    b = __float_as_uint(v);
#else
    memcpy(&b, &v, sizeof b);
#endif
    if ((b & 0x7f800000u) == 0x7f800000u)
        return v;
    b = (b + 0x1000u) & 0xffffe000u;
#ifdef __CUDA_ARCH__
    return __uint_as_float(b);
#else
    memcpy(&v, &b, sizeof v);
    return v;
#endif
}

/* The emission product's modes (runtime/gpu/real_product.h says which a
 * model takes and why): FP32 on the CUDA cores; TF32 x 2, frames' features
 * rounded to TF32 times the weights split hi + lo (two products into one
 * accumulator); TF32 x 3, the features split too (x_hi w_hi + x_hi w_lo +
 * x_lo w_hi); plain TF32 (both sides rounded once: the tests' foil, which
 * breaks the float contract). The product runs over sections of padded
 * length, side by side in one product of sections x padded features. */
enum { HMMRT_RG_FP32, HMMRT_RG_TF32X2, HMMRT_RG_TF32X3, HMMRT_RG_TF32 };

HMMRT_RG_HD int hmmrt_rg_sections(int mode)
{
    return mode == HMMRT_RG_TF32X3 ? 3 : mode == HMMRT_RG_TF32X2 ? 2 : 1;
}

/* Section s of feature value v as the product takes it: x_hi in the
 * sections that meet w_hi and w_lo, x_lo in the one that meets w_hi. */
HMMRT_RG_HD float hmmrt_rg_feature_part(int mode, int s, float v)
{
    if (mode == HMMRT_RG_FP32)
        return v;
    const float hi = hmmrt_rg_tf32(v);
    return mode == HMMRT_RG_TF32X3 && s == 2 ? hmmrt_rg_tf32(v - hi) : hi;
}

/* Section s of weight w (double, as the model packs it): w_hi, then w_lo
 * (what w_hi leaves, itself rounded to TF32), then w_hi again (TF32 x 3). */
HMMRT_RG_HD float hmmrt_rg_weight_part(int mode, int s, double w)
{
    if (mode == HMMRT_RG_FP32)
        return (float)w;
    const float hi = hmmrt_rg_tf32((float)w);
    return s == 1 ? hmmrt_rg_tf32((float)(w - (double)hi)) : hi;
}

HMMRT_RG_GAUSSIAN(float, f)
HMMRT_RG_GAUSSIAN(double, d)
HMMRT_RG_LSE(float, f, expf)
HMMRT_RG_LSE(double, d, exp)
HMMRT_RG_STEP(float, f, logf)
HMMRT_RG_STEP(double, d, log)
HMMRT_RG_FEATURE(float, f)
HMMRT_RG_FEATURE(double, d)
HMMRT_RG_MIX(float, f, logf)
HMMRT_RG_MIX(double, d, log)

#endif
