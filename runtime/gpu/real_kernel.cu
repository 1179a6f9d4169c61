/* real_kernel.cu: the kernels of the GPU path over real observations, thin
 * loops over real_math.cuh's helpers (which tests/unit/test_real_gpu.c runs
 * on the CPU): the emission pass, a block per (128 frames, group of
 * densities), each gaussian staged in shared memory; and the recursion, a
 * block per piece of a sequence, its threads over the states, each column
 * less its largest value (added to a double) so that float keeps its digits.
 * tests/emulate/real-driver runs both on the CPU (HMMC_HOST_EMULATION). */
#include "gpu/real_math.cuh" /* runtime/ */
#include "hmmrt_gpu.h"
#include "hmmrt_kernel.cuh"
#include "real_gpu.h"

#ifndef HMMC_HOST_EMULATION
#include <cuda_runtime.h>
#endif

enum { EMIT_BLOCK = 128 };

template <typename real> __device__ __forceinline__ real gaussian_log(const real *par, int diag, real norm, int D, const real *x);
template <> __device__ __forceinline__ float gaussian_log(const float *par, int diag, float norm, int D, const float *x)
{
    return hmmrt_rg_gaussian_logf(par, diag, norm, D, x);
}
template <> __device__ __forceinline__ double gaussian_log(const double *par, int diag, double norm, int D, const double *x)
{
    return hmmrt_rg_gaussian_logd(par, diag, norm, D, x);
}
__device__ __forceinline__ void lse_add(float *top, float *sum, float t) { hmmrt_rg_lse_addf(top, sum, t); }
__device__ __forceinline__ void lse_add(double *top, double *sum, double t) { hmmrt_rg_lse_addd(top, sum, t); }
__device__ __forceinline__ float log_of(float v) { return logf(v); }
__device__ __forceinline__ double log_of(double v) { return log(v); }
__device__ __forceinline__ float state_value(int vit, int a, int b, const int *from, const float *w, const int *em, const float *prev, const float *erow)
{
    return hmmrt_rg_statef(vit, a, b, from, w, em, prev, erow);
}
__device__ __forceinline__ double state_value(int vit, int a, int b, const int *from, const double *w, const int *em, const double *prev, const double *erow)
{
    return hmmrt_rg_stated(vit, a, b, from, w, em, prev, erow);
}

/* Blocks of the emission pass: tiles of EMIT_BLOCK frames times groups of
 * densities (density t in group t mod groups). */
static int emit_groups(int64_t tiles, int n_dens)
{
    int64_t g = ((int64_t)1 << 22) / (tiles > 0 ? tiles : 1);
    g = g < n_dens ? g : n_dens;
    return (int)(g > 1 ? g : 1);
}

template <typename real>
__global__ void rg_emit(const hmmrt_rg_emit_job job)
{
    real *g = (real *)hmmc_dynamic_shared();
    const int D = job.D;
    const int64_t tiles = (job.n_frames + EMIT_BLOCK - 1) / EMIT_BLOCK;
    const int groups = (int)(gridDim.x / tiles), group = (int)(blockIdx.x / tiles);
    const int64_t f = (int64_t)(blockIdx.x % tiles) * EMIT_BLOCK + threadIdx.x;
    const bool mine = f < job.n_frames;
    real x[HMMRT_RG_MAX_D];
    for (int d = 0; d < D; d++)
        x[d] = mine ? ((const real *)job.frames)[f * D + d] : (real)0;
    const real *par = (const real *)job.par, *norm = (const real *)job.log_norm;
    const real *logw = (const real *)job.part_logw;
    for (int t = group; t < job.n_dens; t += groups) {
        real top = (real)-INFINITY, sum = 0;
        for (int p = job.part_start[t]; p < job.part_start[t + 1]; p++) {
            const int j = job.part_gauss[p], diag = job.diagonal[j];
            const int n = D + (diag ? D : D * (D + 1) / 2);
            __syncthreads(); /* the gaussian before is done with */
            for (int k = threadIdx.x; k < n; k += EMIT_BLOCK)
                g[k] = par[job.par_at[j] + k];
            __syncthreads();
            lse_add(&top, &sum, logw[p] + gaussian_log<real>(g, diag, norm[j], D, x));
        }
        if (mine)
            ((real *)job.table)[f * job.n_dens + t] = top == (real)-INFINITY ? top : top + log_of(sum);
    }
}

/* The expanded features of every frame: a thread a (frame, padded
 * feature), writing it into each of the mode's sections. */
__global__ void rg_features(const hmmrt_rg_gemm_job job)
{
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= job.n_frames * job.n_pad)
        return;
    const int64_t f = idx / job.n_pad;
    const int j = (int)(idx % job.n_pad);
    float v = 0.0f;
    if (j < job.n_feat) {
        const int i = job.feat_i[j], k = job.feat_k[j];
        const float *x = job.frames + f * job.D;
        float xc[2];
        xc[0] = i < 0 ? 0.0f : x[i] - job.center[i];
        xc[1] = k < 0 ? 0.0f : x[k] - job.center[k];
        /* hmmrt_rg_feature over the two values it reads */
        v = hmmrt_rg_featuref(i < 0 ? -1 : 0, k < 0 ? -1 : 1, xc);
    }
    float *phi = job.phi + f * job.n_k + j;
    for (int s = 0, n = hmmrt_rg_sections(job.mode); s < n; s++)
        phi[(int64_t)s * job.n_pad] = hmmrt_rg_feature_part(job.mode, s, v);
}

/* Each density's log-sum over its gaussians' log-densities: a thread a
 * (frame, density). */
__global__ void rg_mix(const hmmrt_rg_gemm_job job)
{
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= job.n_frames * job.n_dens)
        return;
    const int64_t f = idx / job.n_dens;
    const int t = (int)(idx % job.n_dens);
    job.table[idx] = hmmrt_rg_mixf(job.part_start[t], job.part_start[t + 1], job.part_gauss,
                                   job.part_logw, job.gauss + f * job.n_gauss);
}

/* The largest of every thread's v, to each thread (red: 32 reals of shared). */
template <typename real>
__device__ real block_max(real v, real *red)
{
    for (int o = 16; o > 0; o >>= 1) {
        real u = __shfl_xor_sync(0xffffffffu, v, o);
        v = u > v ? u : v;
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? red[lane] : (real)-INFINITY;
        for (int o = 16; o > 0; o >>= 1) {
            real u = __shfl_xor_sync(0xffffffffu, v, o);
            v = u > v ? u : v;
        }
        if (lane == 0)
            red[32] = v;
    }
    __syncthreads();
    return red[32];
}

template <typename real>
__global__ void rg_step(const hmmrt_rg_step_job job)
{
    __shared__ real red[33];
    const int n = job.n_states, p = blockIdx.x;
    real *prev = job.work ? (real *)job.work + (size_t)p * 2 * n : (real *)hmmc_dynamic_shared();
    real *cur = prev + n;
    const int flags = job.flags[p];
    const real *in_logw = (const real *)job.in_logw;
    double offset;
    if (flags & RG_FIRST) {
        for (int q = threadIdx.x; q < n; q += blockDim.x)
            prev[q] = q == job.start ? (real)0 : (real)-INFINITY;
        offset = 0;
    } else {
        for (int q = threadIdx.x; q < n; q += blockDim.x)
            prev[q] = ((const real *)job.carry)[q];
        offset = *job.carry_offset;
    }
    __syncthreads();
    bool dead = offset == -INFINITY;
    const real *table = (const real *)job.table + job.row[p] * job.n_dens;
    for (int64_t i = 0; i < job.len[p] && !dead; i++) {
        const real *erow = table + i * job.n_dens;
        real top = (real)-INFINITY;
        for (int q = threadIdx.x; q < n; q += blockDim.x) {
            const real v = state_value(job.viterbi, job.in_start[q], job.in_start[q + 1], job.in_from,
                                       in_logw, job.in_em, prev, erow);
            cur[q] = v;
            top = v > top ? v : top;
        }
        top = block_max(top, red); /* its syncs also end the reads of prev */
        if (top == (real)-INFINITY) {
            dead = true; /* the same top in every thread: all leave */
            break;
        }
        for (int q = threadIdx.x; q < n; q += blockDim.x)
            cur[q] -= top;
        offset += (double)top;
        real *swap = prev;
        prev = cur;
        cur = swap;
        __syncthreads();
    }
    if (!(flags & RG_LAST)) {
        for (int q = threadIdx.x; q < n; q += blockDim.x)
            ((real *)job.carry_out)[q] = dead ? (real)-INFINITY : prev[q];
        if (threadIdx.x == 0)
            *job.carry_offset_out = dead ? -INFINITY : offset;
        return;
    }
    if (threadIdx.x == 0) {
        real top = (real)-INFINITY, sum = 0;
        const real *end_logw = (const real *)job.end_logw;
        for (int k = 0; k < job.n_end && !dead; k++) {
            const real v = prev[job.end_from[k]] + end_logw[k];
            if (job.viterbi)
                top = v > top ? v : top;
            else
                lse_add(&top, &sum, v);
        }
        job.score[p] = dead || top == (real)-INFINITY
                           ? -INFINITY
                           : offset + (double)(job.viterbi ? top : top + log_of(sum));
    }
}

#ifdef HMMC_HOST_EMULATION
/* On the CPU (tests/emulate/emulator.h): the job through a global, since
 * the emulator launches kernels of a batch. */
static const hmmrt_rg_emit_job *emulated_emit;
static const hmmrt_rg_step_job *emulated_step;
static const hmmrt_rg_gemm_job *emulated_gemm;
static void features_on_cpu(const hmmrt_gpu_batch) { rg_features(*emulated_gemm); }
static void mix_on_cpu(const hmmrt_gpu_batch) { rg_mix(*emulated_gemm); }
template <typename real> static void emit_on_cpu(const hmmrt_gpu_batch) { rg_emit<real>(*emulated_emit); }
template <typename real> static void step_on_cpu(const hmmrt_gpu_batch) { rg_step<real>(*emulated_step); }
#endif

template <typename real>
static int emit_typed(const hmmrt_rg_emit_job *job)
{
    const int D = job->D;
    const size_t shared = (size_t)(D + D * (D + 1) / 2) * sizeof(real);
    const int64_t tiles = (job->n_frames + EMIT_BLOCK - 1) / EMIT_BLOCK;
    const unsigned blocks = (unsigned)(tiles * emit_groups(tiles, job->n_dens));
    if (tiles == 0 || job->n_dens == 0)
        return 0;
#ifdef HMMC_HOST_EMULATION
    (void)shared;
    emulated_emit = job;
    hmmc_emulate(emit_on_cpu<real>, hmmrt_gpu_batch(), blocks, EMIT_BLOCK);
    return 0;
#else
    rg_emit<real><<<blocks, EMIT_BLOCK, shared, (cudaStream_t)job->stream>>>(*job);
    return (int)cudaGetLastError();
#endif
}

template <typename real>
static int step_typed(const hmmrt_rg_step_job *job)
{
    if (job->n_pieces == 0)
        return 0;
#ifdef HMMC_HOST_EMULATION
    emulated_step = job;
    hmmc_emulate(step_on_cpu<real>, hmmrt_gpu_batch(), (unsigned)job->n_pieces, (unsigned)job->block);
    return 0;
#else
    const size_t shared = job->work ? 0 : hmmrt_rg_step_shared(job->n_states, job->use_double);
    rg_step<real><<<job->n_pieces, job->block, shared, (cudaStream_t)job->stream>>>(*job);
    return (int)cudaGetLastError();
#endif
}

enum { FLAT_BLOCK = 256 };

/* n threads of kernel over job, FLAT_BLOCK a block. */
static int launch_flat(void (*kernel)(const hmmrt_rg_gemm_job), const hmmrt_rg_gemm_job *job, int64_t n)
{
    if (n == 0)
        return 0;
    const unsigned blocks = (unsigned)((n + FLAT_BLOCK - 1) / FLAT_BLOCK);
#ifdef HMMC_HOST_EMULATION
    emulated_gemm = job;
    hmmc_emulate(kernel == rg_features ? features_on_cpu : mix_on_cpu, hmmrt_gpu_batch(), blocks,
                 FLAT_BLOCK);
    return 0;
#else
    kernel<<<blocks, FLAT_BLOCK, 0, (cudaStream_t)job->stream>>>(*job);
    return (int)cudaGetLastError();
#endif
}

extern "C" int hmmrt_rg_features_launch(const hmmrt_rg_gemm_job *job)
{
    return launch_flat(rg_features, job, job->n_frames * job->n_pad);
}

extern "C" int hmmrt_rg_mix_launch(const hmmrt_rg_gemm_job *job)
{
    return launch_flat(rg_mix, job, job->n_frames * job->n_dens);
}

extern "C" int hmmrt_rg_emit_launch(const hmmrt_rg_emit_job *job)
{
    return job->use_double ? emit_typed<double>(job) : emit_typed<float>(job);
}

extern "C" int hmmrt_rg_step_launch(const hmmrt_rg_step_job *job)
{
    return job->use_double ? step_typed<double>(job) : step_typed<float>(job);
}

extern "C" size_t hmmrt_rg_step_shared(int n_states, int use_double)
{
    return (size_t)2 * n_states * (use_double ? sizeof(double) : sizeof(float));
}
