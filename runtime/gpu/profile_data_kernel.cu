// profile_data_kernel.cu: the GPU's generic profile scorer (profile_data_gpu.h): a
// group of 32 lanes (a warp) a sequence, lane l the nodes l + 1, l + 33, ...
// of each row, in double, over profile_data_lanes.h's arithmetic (the same
// functions the CPU emulation in profile_data_lanes.c calls, unit-tested
// against the CPU's generic scorer). The rows lie in global memory, a
// group's own; a warp runs sequence after sequence of the batch, or of the
// sequences the float kernel marked (hmmrt_profile_pick_kernel gathers them).
#include "profile_data_gpu.h"
#include "profile_data_lanes.h"

#ifndef HMMC_HOST_EMULATION /* tests/emulate/profile-data runs the kernel on the CPU */
#include <cuda_runtime.h>
#endif

#define PD_FULL 0xffffffffu

static __device__ double pd_butterfly(int viterbi, double x)
{
    for (int d = PD_LANES / 2; d >= 1; d /= 2)
        x = pd_combine(viterbi, x, __shfl_xor_sync(PD_FULL, x, d));
    return x;
}

static __device__ double pd_max(double a, double b)
{
    return a > b ? a : b;
}

__global__ void hmmrt_profile_kernel(const hmmrt_profile_kernel_args a)
{
    const int lane = threadIdx.x % PD_LANES;
    const int64_t group = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / PD_LANES;
    const int64_t groups = (int64_t)gridDim.x * blockDim.x / PD_LANES;
    const int S = a.stride, M = a.M, V = a.viterbi, tiles = (M + PD_LANES - 1) / PD_LANES;
    double *rows = a.rows + group * 6 * (int64_t)S;
    const int64_t n = a.pick ? (int64_t)*a.picked : a.n;
    for (int64_t i = group; i < n; i += groups) {
        const int64_t j = a.pick ? a.pick[i] : i;
        pd_view v = {M, S, a.n_cols, V, a.tables, a.col, {0}};
        pd_specials(&v, a.special, a.special_lw, a.lw ? a.lw + j * a.n_lw : a.lw);
        const uint8_t *x = a.codes + a.offsets[j];
        const int64_t L = a.lengths[j];
        double *mp = rows, *ip = rows + S, *dp = rows + 2 * S;
        double *mc = rows + 3 * S, *ic = rows + 4 * S, *dc = rows + 5 * S;
        for (int i = lane; i < 6 * S; i += PD_LANES)
            rows[i] = 0.0;
        __syncwarp();
        int64_t scale = -960;
        double sp[4];
        pd_start(&v, sp);
        for (int64_t i = 0; i < L; i++) {
            const int c = a.col[x[i]];
            double top = 0.0, e = 0.0;
            for (int k = lane + 1; k <= M; k += PD_LANES) {
                pd_match_insert(&v, k, c, sp[1], mp, ip, dp, &mc[k], &ic[k]);
                top = pd_max(top, pd_max(mc[k], ic[k]));
            }
            __syncwarp(); /* the delete chain reads M_(k-1), another lane's */
            double carry = 0.0;
            for (int t = 0; t < tiles; t++) {
                const int k = t * PD_LANES + lane + 1;
                double am, f;
                pd_delete_map(&v, k, mc, &am, &f);
                for (int d = 1; d < PD_LANES; d *= 2) {
                    double a0 = __shfl_up_sync(PD_FULL, am, d), f0 = __shfl_up_sync(PD_FULL, f, d);
                    if (lane >= d)
                        pd_compose(V, a0, f0, &am, &f);
                }
                const double dk = pd_combine(V, am, f * carry);
                if (k <= M) {
                    dc[k] = dk;
                    top = pd_max(top, dk);
                }
                carry = __shfl_sync(PD_FULL, dk, PD_LANES - 1);
            }
            for (int k = lane + 1; k <= M; k += PD_LANES)
                e = pd_combine(V, e, pd_end_term(&v, k, mc, dc));
            e = pd_butterfly(V, e);
            top = pd_butterfly(1, top);
            pd_special_row(&v, c, e, sp);
            for (int s = 0; s < 4; s++)
                top = pd_max(top, sp[s]);
            double *swap;
            swap = mp, mp = mc, mc = swap;
            swap = ip, ip = ic, ic = swap;
            swap = dp, dp = dc, dc = swap;
            const double factor = pd_rescale_factor(top, &scale);
            if (factor != 1.0) {
                for (int k = lane + 1; k <= M; k += PD_LANES) {
                    mp[k] *= factor;
                    ip[k] *= factor;
                    dp[k] *= factor;
                }
                for (int s = 0; s < 4; s++)
                    sp[s] *= factor;
            }
            __syncwarp(); /* the next row reads the nodes before each lane's */
        }
        if (lane == 0) {
            const double score = pd_final(&v, sp, scale);
            if (a.use_double)
                ((double *)a.scores)[j] = score;
            else
                ((float *)a.scores)[j] = (float)score;
        }
        __syncwarp();
    }
}

#ifndef HMMC_HOST_EMULATION
__global__ void hmmrt_profile_pick_kernel(const float *scores, int64_t n, int64_t *pick, int *picked)
{
    const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n && (isnan(scores[j]) || scores[j] == -INFINITY))
        pick[atomicAdd(picked, 1)] = j;
}

extern "C" int hmmrt_profile_pick_launch(const float *scores, int64_t n, int64_t *pick, int *picked,
                                         void *stream)
{
    hmmrt_profile_pick_kernel<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)stream>>>(
        scores, n, pick, picked);
    return (int)cudaGetLastError();
}

extern "C" int hmmrt_profile_kernel_launch(const hmmrt_profile_kernel_args *a, int blocks,
                                           int threads, void *stream)
{
    hmmrt_profile_kernel<<<blocks, threads, 0, (cudaStream_t)stream>>>(*a);
    return (int)cudaGetLastError();
}

extern "C" const void *hmmrt_profile_kernel_address(void)
{
    return (const void *)hmmrt_profile_kernel;
}
#endif
