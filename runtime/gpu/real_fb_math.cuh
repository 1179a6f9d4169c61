/* real_fb_math.cuh: the arithmetic of backward, posteriors and viterbi's
 * back pointers over real observations on the GPU, as __host__ __device__
 * helpers that real_fb_kernel.cu loops over and runtime/real_fb_steps.c runs
 * on the CPU (tests/unit/test_real_fb_gpu.c); forward's step and the log-sum
 * are real_math.cuh's. */
#ifndef HMMRT_REAL_FB_MATH_CUH
#define HMMRT_REAL_FB_MATH_CUH

#include "real_math.cuh"

/* ln(e^a + e^b), -inf when both are. */
#define HMMRT_RFB_LOGADD(RT, SFX, EXP, LOG1P)                                                  \
    HMMRT_RG_HD RT hmmrt_rfb_logadd##SFX(RT a, RT b)                                           \
    {                                                                                          \
        if (a == (RT)-INFINITY)                                                                \
            return b;                                                                          \
        if (b == (RT)-INFINITY)                                                                \
            return a;                                                                          \
        return a > b ? a + LOG1P(EXP(b - a)) : b + LOG1P(EXP(a - b));                          \
    }

/* Viterbi's value of one state with its back pointer: the largest of
 * prev[in_from[m]] + in_logw[m] + erow[in_em[m]] over m in [first, last),
 * the first such m on a tie (as the C path's `v > best`) into *arg, -1 when
 * every term is -inf. */
#define HMMRT_RFB_BEST(RT, SFX)                                                                \
    HMMRT_RG_HD RT hmmrt_rfb_best##SFX(int first, int last, const int *in_from,                \
                                       const RT *in_logw, const int *in_em, const RT *prev,    \
                                       const RT *erow, int *arg)                               \
    {                                                                                          \
        RT top = (RT)-INFINITY;                                                                \
        int at = -1;                                                                           \
        for (int m = first; m < last; m++) {                                                   \
            const RT v = prev[in_from[m]] + in_logw[m] + erow[in_em[m]];                       \
            if (v > top) {                                                                     \
                top = v;                                                                       \
                at = m;                                                                        \
            }                                                                                  \
        }                                                                                      \
        *arg = at;                                                                             \
        return top;                                                                            \
    }

/* A posterior from the stored forward value a (its column less its largest
 * value), the backward value b (likewise) and c = the two columns' offsets
 * less ln P (in double, rounded once): e^(a + b + c). */
#define HMMRT_RFB_POST(RT, SFX, EXP)                                                           \
    HMMRT_RG_HD RT hmmrt_rfb_post##SFX(RT a, RT b, RT c)                                       \
    {                                                                                          \
        const RT s = a + b;                                                                    \
        return s == (RT)-INFINITY ? (RT)0 : EXP(s + c);                                        \
    }

HMMRT_RFB_LOGADD(float, f, expf, log1pf)
HMMRT_RFB_LOGADD(double, d, exp, log1p)
HMMRT_RFB_BEST(float, f)
HMMRT_RFB_BEST(double, d)
HMMRT_RFB_POST(float, f, expf)
HMMRT_RFB_POST(double, d, exp)

#endif
