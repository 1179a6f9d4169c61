/* real_train_kernel.cu: --train's statistics over real observations on the
 * GPU, in double, as runtime/train_real.c's add_to_gaussian and
 * add_to_mixture sum them: each frame's uses of each density split over its
 * parts by responsibility (real_math.cuh's log-densities), then per gaussian
 * and tile of frames a block summing W, z and z z^T (z = x - mean) over the
 * tile, added to the totals once a block; and each part's count likewise. */
#include "gpu/real_math.cuh" /* runtime/ */
#include "hmmrt_gpu.h"
#include "hmmrt_kernel.cuh"
#include "real_train_gpu.h"

#ifndef HMMC_HOST_EMULATION
#include <cuda_runtime.h>
#endif

enum { RT_BLOCK = 128, RT_TILE = 2048, RT_MAX_PARTS = 64 };

__device__ __forceinline__ void rt_add(double *at, double v)
{
#ifdef HMMC_HOST_EMULATION
    *at += v;
#else
    atomicAdd(at, v);
#endif
}

/* A thread a (frame, density): its uses split over its parts. */
__global__ void rt_weights(const hmmrt_rt_job job)
{
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= job.n_frames * job.n_dens)
        return;
    const int64_t f = idx / job.n_dens;
    const int t = (int)(idx % job.n_dens), first = job.part_start[t], last = job.part_start[t + 1];
    const double u = job.uses[idx];
    double *pw = job.pw + f * job.n_parts;
    if (!(u > 0) || last - first == 1) {
        for (int p = first; p < last; p++)
            pw[p] = u > 0 ? u : 0;
        return;
    }
    const double *x = job.frames + f * job.D;
    double term[RT_MAX_PARTS], top = -INFINITY, sum = 0;
    for (int p = first; p < last && p - first < RT_MAX_PARTS; p++) {
        const int j = job.part_gauss[p];
        term[p - first] = job.part_logw[p] + hmmrt_rg_gaussian_logd(job.par + job.par_at[j],
                                                                   job.diagonal[j],
                                                                   job.log_norm[j], job.D, x);
        top = term[p - first] > top ? term[p - first] : top;
    }
    if (top == -INFINITY) {
        for (int p = first; p < last; p++)
            pw[p] = 0;
        return;
    }
    for (int p = first; p < last; p++)
        sum += term[p - first] = exp(term[p - first] - top);
    for (int p = first; p < last; p++)
        pw[p] = u * term[p - first] / sum;
}

/* A block a (gaussian, tile of frames), its threads over the entries. */
__global__ void rt_stats(const hmmrt_rt_job job)
{
    const int64_t tiles = (job.n_frames + RT_TILE - 1) / RT_TILE;
    const int j = (int)(blockIdx.x / tiles);
    const int64_t f0 = (int64_t)(blockIdx.x % tiles) * RT_TILE;
    const int64_t f1 = f0 + RT_TILE < job.n_frames ? f0 + RT_TILE : job.n_frames;
    const int D = job.D, diag = job.diagonal[j];
    const int entries = 1 + D + (diag ? D : D * (D + 1) / 2);
    const double *mean = job.par + job.par_at[j];
    for (int e = threadIdx.x; e < entries; e += blockDim.x) {
        const int i = e == 0 ? -1 : e <= D ? e - 1 : diag ? e - 1 - D : job.tri_i[e - 1 - D];
        const int k = e <= D ? -1 : diag ? i : job.tri_k[e - 1 - D];
        double s = 0;
        for (int64_t f = f0; f < f1; f++) {
            double w = 0;
            for (int q = job.gauss_part_start[j]; q < job.gauss_part_start[j + 1]; q++)
                w += job.pw[f * job.n_parts + job.gauss_part[q]];
            if (w == 0)
                continue;
            const double *x = job.frames + f * D;
            const double zi = i < 0 ? 1 : x[i] - mean[i], zk = k < 0 ? 1 : x[k] - mean[k];
            s += w * zi * zk;
        }
        if (s != 0)
            rt_add(&job.stats[job.stat_at[j] + e], s);
    }
}

/* A block a (tile of frames), its threads over the parts: their counts. */
__global__ void rt_counts(const hmmrt_rt_job job)
{
    const int64_t f0 = (int64_t)blockIdx.x * RT_TILE;
    const int64_t f1 = f0 + RT_TILE < job.n_frames ? f0 + RT_TILE : job.n_frames;
    for (int p = threadIdx.x; p < job.n_parts; p += blockDim.x) {
        double s = 0;
        for (int64_t f = f0; f < f1; f++)
            s += job.pw[f * job.n_parts + p];
        if (s != 0)
            rt_add(&job.counts[p], s);
    }
}

#ifdef HMMC_HOST_EMULATION
static const hmmrt_rt_job *emulated_rt;
static void weights_on_cpu(const hmmrt_gpu_batch) { rt_weights(*emulated_rt); }
static void stats_on_cpu(const hmmrt_gpu_batch) { rt_stats(*emulated_rt); }
static void counts_on_cpu(const hmmrt_gpu_batch) { rt_counts(*emulated_rt); }
#endif

extern "C" int hmmrt_rt_launch(const hmmrt_rt_job *job)
{
    if (job->n_frames == 0 || job->n_dens == 0)
        return 0;
    const int64_t tiles = (job->n_frames + RT_TILE - 1) / RT_TILE;
    const unsigned wblocks = (unsigned)((job->n_frames * job->n_dens + RT_BLOCK - 1) / RT_BLOCK);
    const unsigned sblocks = (unsigned)(tiles * job->n_gauss), cblocks = (unsigned)tiles;
#ifdef HMMC_HOST_EMULATION
    emulated_rt = job;
    hmmc_emulate(weights_on_cpu, hmmrt_gpu_batch(), wblocks, RT_BLOCK);
    hmmc_emulate(stats_on_cpu, hmmrt_gpu_batch(), sblocks, RT_BLOCK);
    hmmc_emulate(counts_on_cpu, hmmrt_gpu_batch(), cblocks, RT_BLOCK);
    return 0;
#else
    cudaStream_t s = (cudaStream_t)job->stream;
    rt_weights<<<wblocks, RT_BLOCK, 0, s>>>(*job);
    rt_stats<<<sblocks, RT_BLOCK, 0, s>>>(*job);
    rt_counts<<<cblocks, RT_BLOCK, 0, s>>>(*job);
    return (int)cudaGetLastError();
#endif
}
