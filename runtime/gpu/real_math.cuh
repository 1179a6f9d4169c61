/* real_math.cuh: the arithmetic of the GPU path over real observations, as
 * __host__ __device__ helpers that the kernels (real_kernel.cu) loop over and
 * that C includes too (runtime/real_gpu_model.c's CPU run of the same steps,
 * tests/unit/test_real_gpu.c): a gaussian's log-density through its packed
 * Cholesky factor, a mixture's log-sum, and one state's step of the recursion. */
#ifndef HMMRT_REAL_MATH_CUH
#define HMMRT_REAL_MATH_CUH

#include <math.h>

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
