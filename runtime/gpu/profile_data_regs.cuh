// profile_data_regs.cuh: the float kernel of profiles as data (profile_data_regs.h),
// a template over G (lanes a sequence), S (nodes a lane) and V (viterbi), written
// statement for statement as the specialised profile kernel that
// compiler/codegen/cuda/backend_cuda_profile.c writes for a HMMER import, with the
// model's weights read from tables given as arguments instead of compiled in.
// profile_data_regs.cu instantiates it; tests/emulate/profile_data_regs.cpp runs it on the CPU.
#ifndef HMMRT_PROFILE_DATA_REGS_CUH
#define HMMRT_PROFILE_DATA_REGS_CUH

#include "hmmrt_kernel.cuh" /* hmmc_group_all, hmmc_group_chain_scan, hmmc_rescaling ... */
#include "profile_data_regs.h"

#include <type_traits>

// The semiring of V: forward sums products of weights; viterbi takes the
// largest sum of logs.
template <bool V> struct pd_ring;
template <> struct pd_ring<false> {
    template <typename T> static __device__ __forceinline__ T plus(T a, T b) { return a + b; }
    template <typename T> static __device__ __forceinline__ T times(T a, T b) { return a * b; }
    static __device__ __forceinline__ float zero() { return 0.0f; }
};
template <> struct pd_ring<true> {
    template <typename T> static __device__ __forceinline__ T plus(T a, T b) { return a > b ? a : b; }
    template <typename T> static __device__ __forceinline__ T times(T a, T b) { return a + b; }
    static __device__ __forceinline__ float zero() { return -INFINITY; }
};

// The weight of special move s for sequence j: its constant factor times its
// length-dependent weight; for viterbi, its log.
template <bool V>
static __device__ __forceinline__ double pd_special(const hmmrt_pd_regs_args &a, int64_t j, int s)
{
    const double v = a.special[s] * (a.special_lw[s] >= 0 ? a.lw[j * a.n_lw + a.special_lw[s]] : 1.0);
    return V ? (v > 0.0 ? log(v) : -INFINITY) : v;
}

// Lane `lane` of a group of G scores sequence j: it keeps nodes lane S + 1 ..
// lane S + S of the match, insert and delete roles at [1 + jj], and in [0] the
// last node of the lane to its left. Per residue, as the specialised kernel:
// 1. match and insert from the previous row (last slot first, so that each
//    read sees the old value), then the N, J and C loops;
// 2. the delete chain D_k = M_(k-1) MD_k (+) DD_k D_(k-1): each lane folds its
//    run into one step (A, T), a scan of the steps across the group gives the
//    value entering each run, and the lane runs its nodes again from it; E
//    over the group; J, C and B after E;
// 3. forward: the exact rescaling of the column sum into [2^88, 2^104], a value
//    below float's normal range marking the sequence (NaN: scored again in
//    double); viterbi: the best value moved into a double offset.
// The weights of the special moves (with the sequence's length-dependent
// ones) are formed, and the specials' products taken, in double.
template <int G, int S, bool V>
__global__ void hmmrt_pd_regs_kernel(const hmmrt_pd_regs_args a)
{
    typedef pd_ring<V> R;
    const int lane = threadIdx.x % G;
    const int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / G;
    const unsigned mask = G == 32 ? 0xffffffffu : ((1u << (G % 32)) - 1) << (threadIdx.x % 32 / G * G);
    if (j >= a.n)
        return; /* the whole group */
    const uint8_t *x = a.codes + a.offsets[j];
    const int64_t L = a.lengths[j];
    /* the special moves' weights at this length (logs for viterbi): the loops in
     * double (a loop's weight rounded to float would err the same way at each
     * residue); in forward, the moves a path takes once in float, which must
     * then hold them (else the sequence is marked, as a specialised kernel marks it) */
    typedef typename std::conditional<V, double, float>::type once_t;
    const double w_nn = pd_special<V>(a, j, HMMRT_PX_NN), w_jj = pd_special<V>(a, j, HMMRT_PX_JJ),
                 w_cc = pd_special<V>(a, j, HMMRT_PX_CC);
    const once_t w_nb = (once_t)pd_special<V>(a, j, HMMRT_PX_NB),
                 w_jb = (once_t)pd_special<V>(a, j, HMMRT_PX_JB),
                 w_ej = (once_t)pd_special<V>(a, j, HMMRT_PX_EJ),
                 w_ec = (once_t)pd_special<V>(a, j, HMMRT_PX_EC);
    bool risky = false;
    if (!V)
        for (int s = 0; s < HMMRT_PX_N; s++)
            risky |= !hmmc_length_weight_fits<float>(pd_special<false>(a, j, s));
    const float *w = a.w + lane, *em = a.em + lane;
    float match[1 + S], insert[1 + S], del[1 + S];
#pragma unroll
    for (int jj = 0; jj < 1 + S; jj++)
        match[jj] = insert[jj] = del[jj] = R::zero();
    /* N, B, J, C; forward starts S at 2^96 (the scale below) */
    const double start = V ? 0.0 : 0x1p96;
    float N = (float)R::times(start, pd_special<V>(a, j, HMMRT_PX_SN));
    float B = (float)R::times((double)N, (double)w_nb);
    float J = R::zero(), C = R::zero();
    int scale = -96;      /* forward: values are held times 2^-scale */
    double offset = 0.0;  /* viterbi: values are held less offset */
    int64_t pos;
    for (pos = 1; pos <= L; pos++) {
        /* the weights are read at every position (from L1), not held in registers */
        w = hmmc_opaque(w);
        em = hmmc_opaque(em);
        const int c = a.col[x[pos - 1]];
        {
            const float m = __shfl_up_sync(mask, match[S], 1, G);
            const float i = __shfl_up_sync(mask, insert[S], 1, G);
            const float d = __shfl_up_sync(mask, del[S], 1, G);
            match[0] = lane >= 1 ? m : R::zero();
            insert[0] = lane >= 1 ? i : R::zero();
            del[0] = lane >= 1 ? d : R::zero();
        }
        const float *em_m = em + (size_t)c * 2 * S * G, *em_i = em_m + S * G;
#pragma unroll
        for (int jj = S - 1; jj >= 0; jj--) {
            const float *wt = w + jj * G;
            float m = R::times(wt[HMMRT_PT_ENTRY * S * G], B);
            m = R::plus(m, R::times(wt[HMMRT_PT_MM * S * G], match[jj]));
            m = R::plus(m, R::times(wt[HMMRT_PT_IM * S * G], insert[jj]));
            m = R::plus(m, R::times(wt[HMMRT_PT_DM * S * G], del[jj]));
            float i = R::plus(R::times(wt[HMMRT_PT_MI * S * G], match[jj + 1]),
                              R::times(wt[HMMRT_PT_II * S * G], insert[jj + 1]));
            match[jj + 1] = R::times(m, em_m[jj * G]);
            insert[jj + 1] = R::times(i, em_i[jj * G]);
        }
        const float *loops = a.loops;
        const int nc = a.n_cols;
        const double n_loop = R::times(R::times((double)N, w_nn), (double)loops[c]);
        const double j_loop = R::times(R::times((double)J, w_jj), (double)loops[nc + c]);
        const double c_loop = R::times(R::times((double)C, w_cc), (double)loops[2 * nc + c]);
        /* the delete chain: first what enters each node from its left match */
        {
            const float m = __shfl_up_sync(mask, match[S], 1, G);
            match[0] = lane >= 1 ? m : R::zero();
        }
#pragma unroll
        for (int jj = 0; jj < S; jj++)
            del[jj + 1] = R::times(w[(HMMRT_PT_MD * S + jj) * G], match[jj]);
        float A = R::zero(), T = V ? 0.0f : 1.0f;
#pragma unroll
        for (int jj = 0; jj < S; jj++) {
            const float t = w[(HMMRT_PT_DD * S + jj) * G];
            A = R::plus(del[jj + 1], R::times(t, A));
            T = R::times(T, t);
        }
        float entering = V ? hmmc_group_chain_scan(A, T, lane, hmmc_maxplus(), mask, G)
                           : hmmc_group_chain_scan(A, T, lane, hmmc_sumproduct(), mask, G);
#pragma unroll
        for (int jj = 0; jj < S; jj++) {
            del[jj + 1] = R::plus(del[jj + 1], R::times(w[(HMMRT_PT_DD * S + jj) * G], entering));
            entering = del[jj + 1];
        }
        /* E from every node's match and delete */
        float part = R::zero();
#pragma unroll
        for (int jj = 0; jj < S; jj++) {
            part = R::plus(part, R::times(w[(HMMRT_PT_ME * S + jj) * G], match[jj + 1]));
            part = R::plus(part, R::times(w[(HMMRT_PT_DE * S + jj) * G], del[jj + 1]));
        }
        const float E = V ? hmmc_group_all(part, hmmc_max(), mask, G) : hmmc_group_all(part, hmmc_add(), mask, G);
        N = (float)n_loop;
        J = (float)R::plus((once_t)j_loop, R::times((once_t)E, w_ej));
        C = (float)R::plus((once_t)c_loop, R::times((once_t)E, w_ec));
        B = (float)R::plus(R::times((once_t)N, w_nb), R::times((once_t)J, w_jb));
        if (V) {
            /* the best value moves into offset */
            float top = -INFINITY;
#pragma unroll
            for (int jj = 0; jj < S; jj++)
                top = hmmc_vmax(top, hmmc_vmax(match[jj + 1], hmmc_vmax(insert[jj + 1], del[jj + 1])));
            top = hmmc_group_all(top, hmmc_max(), mask, G);
            top = hmmc_vmax(top, hmmc_vmax(hmmc_vmax(N, B), hmmc_vmax(J, C)));
            if (top != -INFINITY) {
#pragma unroll
                for (int jj = 0; jj < S; jj++) {
                    match[jj + 1] -= top;
                    insert[jj + 1] -= top;
                    del[jj + 1] -= top;
                }
                N -= top, B -= top, J -= top, C -= top;
                offset += (double)top;
            }
        } else {
            float sum = 0.0f;
#pragma unroll
            for (int jj = 0; jj < S; jj++)
                sum += match[jj + 1] + insert[jj + 1] + del[jj + 1];
            sum = hmmc_group_all(sum, hmmc_add(), mask, G) + N + B + J + C + E;
            if (!(sum > 0.0f))
                break; /* no path emits this prefix; the sum is the same in every lane */
            /* a value below the normal range has lost digits: scored again in double */
            risky |= !(sum < 0x1p126f);
#pragma unroll
            for (int jj = 0; jj < S; jj++)
                risky |= hmmc_below_normal(match[jj + 1]) | hmmc_below_normal(insert[jj + 1]) |
                         hmmc_below_normal(del[jj + 1]);
            risky |= hmmc_below_normal(N) | hmmc_below_normal(B) | hmmc_below_normal(J) |
                     hmmc_below_normal(C);
            float factor;
            int shift;
            if (hmmc_rescaling<96, 8>(sum, factor, shift)) {
#pragma unroll
                for (int jj = 0; jj < S; jj++) {
                    match[jj + 1] *= factor;
                    insert[jj + 1] *= factor;
                    del[jj + 1] *= factor;
                }
                N *= factor, B *= factor, J *= factor, C *= factor;
                scale += shift;
            }
        }
    }
    if (!V)
        risky = __any_sync(mask, risky);
    if (lane == 0) {
        float score;
        if (V)
            score = (float)((double)C + pd_special<V>(a, j, HMMRT_PX_CT) + offset);
        else
            score = pos != L + 1 ? -INFINITY
                    : risky     ? NAN
                                : (float)(log((double)C * pd_special<V>(a, j, HMMRT_PX_CT)) +
                                          (double)scale * 0.693147180559945309417);
        a.scores[j] = score;
    }
}

/* One instance of the kernel, in the tables of profile_data_regs_*.cu (the
 * last entry's kernel is NULL). */
struct hmmrt_pd_regs_instance {
    int G, S, viterbi;
    const void *kernel;
};
#define HMMRT_PD_REGS(G, S, V) {G, S, V, (const void *)hmmrt_pd_regs_kernel<G, S, V>},

#endif
