/* profile_data_lanes.h: the generic profile scorer's row recursion cut into
 * the pieces one lane of a group does (a node's match and insert cells, its
 * map of the delete chain, its end terms, the special states, the rescaling),
 * as static functions that compile as C and as CUDA (__host__ __device__):
 * runtime/gpu/profile_data_kernel.cu's kernel and profile_data_lanes.c's emulation
 * of a group on the CPU (the unit tests' reference) both call them. */
#ifndef HMMRT_PROFILE_DATA_LANES_H
#define HMMRT_PROFILE_DATA_LANES_H

#include <math.h>
#include <stdint.h>

#include "hmmrt_profile.h"

#ifdef __CUDACC__
#define PD_HD static __host__ __device__ __forceinline__
#else
#define PD_HD static inline
#endif

/* The lanes of a group, one group a sequence; node k belongs to lane
 * (k - 1) % PD_LANES, in tiles of PD_LANES nodes. */
enum { PD_LANES = 32 };

/* A profile's tables as the lanes read them (hmmrt_profile.data's layout:
 * runtime/hmmrt_profile.h), from wherever they lie (host or device). */
typedef struct pd_view {
    int M, stride, n_cols, viterbi;
    const double *t;        /* the node tables, then the emissions */
    const unsigned char *col; /* symbol code -> column */
    double w[HMMRT_PX_N];   /* the special moves' weights at this sequence's length */
} pd_view;

PD_HD double pd_combine(int viterbi, double a, double b)
{
    return viterbi ? (a > b ? a : b) : a + b;
}

PD_HD const double *pd_table(const pd_view *v, int which)
{
    return v->t + (size_t)which * v->stride;
}

/* The special weights for a length: the constant factors, times lw[i]. */
PD_HD void pd_specials(pd_view *v, const double *special, const int *special_lw, const double *lw)
{
    for (int s = 0; s < HMMRT_PX_N; s++)
        v->w[s] = special[s] * (special_lw[s] >= 0 ? lw[special_lw[s]] : 1.0);
}

/* N, B, J, C before the first residue (values times 2^-scale, scale -960). */
PD_HD void pd_start(const pd_view *v, double sp[4])
{
    sp[0] = 0x1p960 * v->w[HMMRT_PX_SN];
    sp[1] = sp[0] * v->w[HMMRT_PX_NB];
    sp[2] = sp[3] = 0.0;
}

/* Node k's match and insert cells of the row of column c, from the previous
 * row (mp, ip, dp) and B's value b: the generic scorer's expressions. */
PD_HD void pd_match_insert(const pd_view *v, int k, int c, double b, const double *mp,
                           const double *ip, const double *dp, double *mk, double *ik)
{
    const int S = v->stride, V = v->viterbi;
    const double *t = v->t;
    const double *em = t + (size_t)HMMRT_PT_N * S + (size_t)c * S;
    const double *ei = em + (size_t)v->n_cols * S;
    double m = pd_combine(V, pd_combine(V, b * t[HMMRT_PT_ENTRY * S + k],
                                        mp[k - 1] * t[HMMRT_PT_MM * S + k]),
                          pd_combine(V, ip[k - 1] * t[HMMRT_PT_IM * S + k],
                                     dp[k - 1] * t[HMMRT_PT_DM * S + k]));
    *mk = em[k] * m;
    *ik = ei[k] * pd_combine(V, mp[k] * t[HMMRT_PT_MI * S + k], ip[k] * t[HMMRT_PT_II * S + k]);
}

/* The delete chain is D_k = a_k (+) f_k D_(k-1), a_k = M_(k-1) MD_k,
 * f_k = DD_k ((+): sum, or max for viterbi): a map per node. A node beyond M
 * takes the identity (a 0, f 1). */
PD_HD void pd_delete_map(const pd_view *v, int k, const double *mc, double *a, double *f)
{
    if (k > v->M) {
        *a = 0.0;
        *f = 1.0;
        return;
    }
    *a = mc[k - 1] * v->t[(size_t)HMMRT_PT_MD * v->stride + k];
    *f = v->t[(size_t)HMMRT_PT_DD * v->stride + k];
}

/* (a, f) after (a0, f0): the map of the two nodes' chain, in place. */
PD_HD void pd_compose(int viterbi, double a0, double f0, double *a, double *f)
{
    *a = pd_combine(viterbi, *a, *f * a0);
    *f = *f * f0;
}

/* Node k's part of E: M_k ME_k (+) D_k DE_k. */
PD_HD double pd_end_term(const pd_view *v, int k, const double *mc, const double *dc)
{
    const int S = v->stride;
    return pd_combine(v->viterbi, mc[k] * v->t[HMMRT_PT_ME * S + k],
                      dc[k] * v->t[HMMRT_PT_DE * S + k]);
}

/* N, J, C and B after the row of column c, whose E is e. */
PD_HD void pd_special_row(const pd_view *v, int c, double e, double sp[4])
{
    const int V = v->viterbi, S = v->stride, C = v->n_cols;
    const double *loop_n = v->t + (size_t)HMMRT_PT_N * S + 2 * (size_t)C * S;
    const double *loop_j = loop_n + C, *loop_c = loop_j + C;
    const double *w = v->w;
    sp[0] = sp[0] * w[HMMRT_PX_NN] * loop_n[c];
    sp[2] = pd_combine(V, sp[2] * w[HMMRT_PX_JJ] * loop_j[c], e * w[HMMRT_PX_EJ]);
    sp[3] = pd_combine(V, sp[3] * w[HMMRT_PX_CC] * loop_c[c], e * w[HMMRT_PX_EC]);
    sp[1] = pd_combine(V, sp[0] * w[HMMRT_PX_NB], sp[2] * w[HMMRT_PX_JB]);
}

/* The power of two that brings the row's largest value near 2^960 (1: none
 * needed), and the scale it adds. The generic scorer's rule. */
PD_HD double pd_rescale_factor(double top, int64_t *scale)
{
    if (!(top > 0.0) || (top >= 0x1p928 && top <= 0x1p992))
        return 1.0;
    int exponent;
    frexp(top, &exponent);
    *scale += exponent - 960;
    return ldexp(1.0, 960 - exponent);
}

/* ln of the score from C's value at the end and the scale. */
PD_HD double pd_final(const pd_view *v, const double sp[4], int64_t scale)
{
    return log(sp[3] * v->w[HMMRT_PX_CT]) + (double)scale * 0.693147180559945309417232121458176568;
}

/* Scores the CPU emulation of a group of PD_LANES lanes gives, each lane's
 * work in the order the kernel does it (profile_data_lanes.c); rows: 6 *
 * p->stride doubles. For tests of the kernel's arithmetic against
 * hmmrt_profile_forward and hmmrt_profile_viterbi. */
#ifdef __cplusplus
extern "C" {
#endif
double hmmrt_profile_lanes_score(const hmmrt_profile *p, int viterbi, const double *lw,
                                 const uint8_t *x, int64_t L, double *rows);
#ifdef __cplusplus
}
#endif

#endif
