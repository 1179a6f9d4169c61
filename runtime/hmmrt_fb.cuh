/* hmmrt_fb.cuh: the GPU kernel of --train's E-step: forward-backward over
 * the model as written (runtime/fb.c's arithmetic, in float with a scale per
 * column), a block per sequence, counts gathered in double. Included once by
 * each generated CUDA program, which hands hmmrt_fb_gpu_launch to the driver. */
#ifndef HMMRT_FB_CUH
#define HMMRT_FB_CUH

#include <stdint.h>
#include "hmmrt_fb_gpu.h"

/* The sum of v over the block, in every thread (red: 32 floats of shared). */
__device__ static float hmmrt_fb_block_sum(float v, float *red)
{
    for (int d = 16; d > 0; d >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, d);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads(); /* red's previous values are read */
    if (lane == 0)
        red[warp] = v;
    __syncthreads();
    float sum = 0;
    for (int k = 0; k < (int)(blockDim.x >> 5); k++)
        sum += red[k];
    return sum;
}

/* Silent moves within a column, forward: level by level, a thread a
 * component, each gathering what enters its states, then spreading it over
 * the component's path sums. */
__device__ static void hmmrt_fb_silent_forward(const hmmrt_fb_gpu_tables &t, float *col)
{
    for (int l = 0; l < t.n_levels; l++) {
        for (int ci = t.level_start[l] + threadIdx.x; ci < t.level_start[l + 1]; ci += blockDim.x) {
            const int c = t.level_comp[ci];
            const int *st = t.comp_state + t.comp_start[c];
            const int m = t.comp_start[c + 1] - t.comp_start[c];
            float g[HMMRT_FB_GPU_MAX_CYCLE];
            for (int k = 0; k < m; k++) {
                const int v = st[k];
                float sum = col[v];
                for (int j = t.in_start[v]; j < t.in_start[v + 1]; j++)
                    sum += col[t.move_from[t.in[j]]] * t.w[t.in[j]];
                g[k] = sum;
            }
            const int64_t at = t.closure_at[c];
            if (at < 0) {
                col[st[0]] = g[0];
                continue;
            }
            for (int k = 0; k < m; k++) {
                float sum = 0;
                for (int u = 0; u < m; u++)
                    sum += g[u] * t.closure[at + (int64_t)u * m + k];
                col[st[k]] = sum;
            }
        }
        __syncthreads();
    }
}

/* The same backward: col holds what each state gets from the next column. */
__device__ static void hmmrt_fb_silent_backward(const hmmrt_fb_gpu_tables &t, float *col)
{
    for (int l = t.n_levels - 1; l >= 0; l--) {
        for (int ci = t.level_start[l] + threadIdx.x; ci < t.level_start[l + 1]; ci += blockDim.x) {
            const int c = t.level_comp[ci];
            const int *st = t.comp_state + t.comp_start[c];
            const int m = t.comp_start[c + 1] - t.comp_start[c];
            float g[HMMRT_FB_GPU_MAX_CYCLE];
            for (int k = 0; k < m; k++) {
                const int u = st[k];
                float sum = col[u];
                for (int j = t.out_start[u]; j < t.out_start[u + 1]; j++)
                    sum += t.w[t.out[j]] * col[t.move_to[t.out[j]]];
                g[k] = sum;
            }
            const int64_t at = t.closure_at[c];
            if (at < 0) {
                col[st[0]] = g[0];
                continue;
            }
            for (int r = 0; r < m; r++) {
                float sum = 0;
                for (int k = 0; k < m; k++)
                    sum += t.closure[at + (int64_t)r * m + k] * g[k];
                col[st[r]] = sum;
            }
        }
        __syncthreads();
    }
}

/* Adds v to a count: a plain add in this block's shared counts (each count
 * has one owner thread a phase), an atomic one in global memory. */
__device__ static inline void hmmrt_fb_count(double *c, double v, bool shared)
{
    if (shared)
        *c += v;
    else
        atomicAdd(c, v);
}

__global__ void hmmrt_fb_kernel(const hmmrt_fb_gpu_job job)
{
    const hmmrt_fb_gpu_tables &t = job.t;
    extern __shared__ double hmmrt_fb_shared[];
    const bool in_shared = job.counts_in_shared != 0;
    double *mc = in_shared ? hmmrt_fb_shared : job.move_counts;
    double *ec = in_shared ? hmmrt_fb_shared + t.n_moves : job.emission_counts;
    const int n_values = t.n_emissions * t.K;
    float *col_a = (float *)(hmmrt_fb_shared + (in_shared ? t.n_moves + n_values : 0));
    float *col_b = col_a + t.n, *red = col_b + t.n;
    const int64_t s = blockIdx.x;
    const uint8_t *x = job.codes + job.offsets[s];
    const int64_t L = job.lengths[s];
    float *f = job.f + job.f_offsets[s];
    double *ls = job.ls + job.ls_offsets[s];
    const int n = t.n;
    if (in_shared)
        for (int k = threadIdx.x; k < t.n_moves + n_values; k += blockDim.x)
            hmmrt_fb_shared[k] = 0;

    /* forward: each column scaled to sum to 1, kept in f */
    float *prev = col_a, *cur = col_b;
    for (int q = threadIdx.x; q < n; q += blockDim.x)
        cur[q] = q == t.start ? 1.0f : 0.0f;
    __syncthreads();
    hmmrt_fb_silent_forward(t, cur);
    double lnp = 0;
    bool dead = false;
    for (int64_t i = 0;; i++) {
        float part = 0;
        for (int q = threadIdx.x; q < n; q += blockDim.x)
            part += cur[q];
        const float sum = hmmrt_fb_block_sum(part, red);
        if (!(sum > 0) || !isfinite(sum)) {
            dead = true;
            break;
        }
        const float inv = 1.0f / sum;
        for (int q = threadIdx.x; q < n; q += blockDim.x) {
            cur[q] *= inv;
            f[i * n + q] = cur[q];
        }
        lnp += log((double)sum);
        if (threadIdx.x == 0)
            ls[i] = log((double)sum);
        if (i == L)
            break;
        __syncthreads();
        float *swap = prev;
        prev = cur;
        cur = swap;
        const int sym = x[i];
        for (int q = threadIdx.x; q < n; q += blockDim.x) {
            float acc = 0;
            for (int j = t.emit_in_start[q]; j < t.emit_in_start[q + 1]; j++) {
                const int m = t.emit_in[j];
                acc += prev[t.move_from[m]] * t.w[m] * t.e[t.move_emission[m] * t.K + sym];
            }
            cur[q] = acc;
        }
        __syncthreads();
        hmmrt_fb_silent_forward(t, cur);
    }
    __syncthreads();
    const float p_end = dead ? 0.0f : f[L * n + t.end];
    if (dead || !(p_end > 0)) {
        if (threadIdx.x == 0)
            job.lnp[s] = -INFINITY;
        return;
    }
    if (threadIdx.x == 0)
        job.lnp[s] = lnp + log((double)p_end);

    /* backward, gathering the counts: a move used at position i has
     * probability f[i'][from] w e b[i][to] / P */
    const float inv_p = 1.0f / p_end;
    float *next = col_a;
    cur = col_b;
    for (int q = threadIdx.x; q < n; q += blockDim.x)
        cur[q] = q == t.end ? 1.0f : 0.0f;
    __syncthreads();
    hmmrt_fb_silent_backward(t, cur);
    for (int64_t i = L;; i--) {
        const float *fi = f + i * n;
        for (int j = threadIdx.x; j < t.n_silent; j += blockDim.x) {
            const int m = t.silent[j];
            const float use = fi[t.move_from[m]] * t.w[m] * cur[t.move_to[m]] * inv_p;
            if (use != 0)
                hmmrt_fb_count(&mc[m], (double)use, in_shared);
        }
        if (i == 0)
            break;
        __syncthreads();
        float *swap = next;
        next = cur;
        cur = swap;
        const float *fp = f + (i - 1) * n;
        const int sym = x[i - 1];
        const float inv_scale = (float)exp(-ls[i]);
        for (int p = threadIdx.x; p < n; p += blockDim.x) {
            float h = 0;
            const float from = fp[p];
            for (int j = t.emit_out_start[p]; j < t.emit_out_start[p + 1]; j++) {
                const int m = t.emit_out[j];
                const int v = t.move_emission[m] * t.K + sym;
                const float step = t.w[m] * t.e[v] * next[t.move_to[m]] * inv_scale;
                h += step;
                const float use = from * step * inv_p;
                if (use != 0) {
                    hmmrt_fb_count(&mc[m], (double)use, in_shared);
                    atomicAdd(&ec[v], (double)use);
                }
            }
            cur[p] = h;
        }
        __syncthreads();
        hmmrt_fb_silent_backward(t, cur);
    }
    if (in_shared) {
        __syncthreads();
        for (int k = threadIdx.x; k < t.n_moves; k += blockDim.x)
            if (mc[k] != 0)
                atomicAdd(&job.move_counts[k], mc[k]);
        for (int k = threadIdx.x; k < n_values; k += blockDim.x)
            if (ec[k] != 0)
                atomicAdd(&job.emission_counts[k], ec[k]);
    }
}

extern "C" int hmmrt_fb_gpu_launch(const hmmrt_fb_gpu_job *job)
{
    if (job->n_seqs == 0)
        return 0;
    if (job->shared_bytes > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(hmmrt_fb_kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)job->shared_bytes);
        if (e != cudaSuccess)
            return (int)e;
    }
    hmmrt_fb_kernel<<<(unsigned)job->n_seqs, job->block, job->shared_bytes,
                      (cudaStream_t)job->stream>>>(*job);
    return (int)cudaGetLastError();
}

#endif
