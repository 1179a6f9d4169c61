/* fb_kernel.cu: forward-backward over the model as written on the GPU
 * (runtime/fb.c's arithmetic, in float, each column scaled by a power of
 * two), a group of lanes a sequence: --train's E-step (counts gathered in
 * double) and posterior calls (each position's posteriors and the state of
 * highest posterior). The same for every model: compiled once by nvcc into
 * libhmmrt_gpu.a, and handed to the driver by generated programs. */
#include <cuda_runtime.h>
#include <stdint.h>
#include "hmmrt_fb_gpu.h"
#include "fb_kernel.cuh"

/* Synchronising and summing over a group of G lanes of one warp (G = 4 ..
 * 32), or with G = 0 over the whole block (red: 32 floats of shared). */
template <int G> struct hmmrt_fb_lanes {
    __device__ static void sync(unsigned mask) { __syncwarp(mask); }
    __device__ static float sum(float v, unsigned mask, float *red)
    {
        for (int d = G / 2; d > 0; d >>= 1)
            v += __shfl_xor_sync(mask, v, d, G);
        return v;
    }
    /* The largest v over the group and its q (the smaller q on a tie), in every lane. */
    __device__ static void argmax(float &v, int &q, unsigned mask, float *red)
    {
        for (int d = G / 2; d > 0; d >>= 1) {
            const float ov = __shfl_xor_sync(mask, v, d, G);
            const int oq = __shfl_xor_sync(mask, q, d, G);
            if (ov > v || (ov == v && oq < q))
                v = ov, q = oq;
        }
    }
};
template <> struct hmmrt_fb_lanes<0> {
    __device__ static void sync(unsigned mask) { __syncthreads(); }
    __device__ static float sum(float v, unsigned mask, float *red)
    {
        for (int d = 16; d > 0; d >>= 1)
            v += __shfl_xor_sync(0xffffffffu, v, d);
        __syncthreads(); /* red's previous values are read */
        if ((threadIdx.x & 31) == 0)
            red[threadIdx.x >> 5] = v;
        __syncthreads();
        float total = 0;
        for (int k = 0; k < (int)(blockDim.x >> 5); k++)
            total += red[k];
        return total;
    }
    /* red: 64 floats, a warp's best value then its q */
    __device__ static void argmax(float &v, int &q, unsigned mask, float *red)
    {
        hmmrt_fb_lanes<32>::argmax(v, q, 0xffffffffu, red);
        __syncthreads();
        if ((threadIdx.x & 31) == 0) {
            red[threadIdx.x >> 5] = v;
            red[32 + (threadIdx.x >> 5)] = __int_as_float(q);
        }
        __syncthreads();
        for (int k = 0; k < (int)(blockDim.x >> 5); k++) {
            const float ov = red[k];
            const int oq = __float_as_int(red[32 + k]);
            if (ov > v || (ov == v && oq < q))
                v = ov, q = oq;
        }
    }
};

/* A group: G lanes of one warp (G = 4 .. 32) working on one sequence, or
 * with G = 0 the whole block. */
template <int G> struct hmmrt_fb_group {
    unsigned mask;
    int lane, lanes;
    __device__ hmmrt_fb_group()
    {
        lanes = G ? G : (int)blockDim.x;
        lane = G ? (int)(threadIdx.x % G) : (int)threadIdx.x;
        const int base = G ? (int)(threadIdx.x & 31) / G * G : 0;
        mask = G == 32 || G == 0 ? 0xffffffffu : ((1u << (G ? G : 1)) - 1) << base;
    }
    __device__ void sync() const { hmmrt_fb_lanes<G>::sync(mask); }
    /* The sum of v over the group, in every lane. */
    __device__ float sum(float v, float *red) const { return hmmrt_fb_lanes<G>::sum(v, mask, red); }
    /* The largest v over the group and its q (the smaller q on a tie). */
    __device__ void argmax(float &v, int &q, float *red) const { hmmrt_fb_lanes<G>::argmax(v, q, mask, red); }
};

/* Silent moves within a column, level by level, a lane a component.
 * Forward, each component gathers what its silent moves bring in from
 * earlier levels and spreads it over its path sums (g C); BACKWARD, col
 * holds what each state gets from the next column, and each component
 * gathers what its moves lead to in later levels (C g). */
template <int G, bool BACKWARD>
__device__ static void hmmrt_fb_silent(const hmmrt_fb_gpu_tables &t, const hmmrt_fb_group<G> &grp,
                                       float *col)
{
    const int *list_start = BACKWARD ? t.out_start : t.in_start;
    const int *list = BACKWARD ? t.out : t.in;
    const int *other_end = BACKWARD ? t.move_to : t.move_from;
    for (int step = 0; step < t.n_levels; step++) {
        const int l = BACKWARD ? t.n_levels - 1 - step : step;
        for (int ci = t.level_start[l] + grp.lane; ci < t.level_start[l + 1]; ci += grp.lanes) {
            const int c = t.level_comp[ci];
            const int *st = t.comp_state + t.comp_start[c];
            const int m = t.comp_start[c + 1] - t.comp_start[c];
            float g[HMMRT_FB_GPU_MAX_CYCLE];
            for (int k = 0; k < m; k++) {
                const int v = st[k];
                float sum = col[v];
                for (int j = list_start[v]; j < list_start[v + 1]; j++)
                    sum += col[other_end[list[j]]] * t.w[list[j]];
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
                    sum += g[u] * t.closure[at + (BACKWARD ? (int64_t)k * m + u : (int64_t)u * m + k)];
                col[st[k]] = sum;
            }
        }
        grp.sync();
    }
}

/* Posterior calls: the posteriors of position i (1 <= i <= L), the
 * probability that the i-th emitting move ends in q: the forward mass its
 * emitting moves bring into q from column i - 1 (fp) times q's backward value
 * at i (next, which the column's scale still divides). Written to the
 * table's row i when it is printed, and the state of highest posterior (the
 * first declared on a tie) to best[i]. */
template <int G>
__device__ static void hmmrt_fb_posteriors(const hmmrt_fb_gpu_job &job, const hmmrt_fb_group<G> &grp,
                                           const float *fp, const float *next, int sym,
                                           float factor, const float *wm, float *red,
                                           int64_t col)
{
    const hmmrt_fb_gpu_tables &t = job.t;
    const int n = t.n;
    float top = -1.0f;
    int arg = n;
    for (int q = grp.lane; q < n; q += grp.lanes) {
        float into = 0;
        if (t.dense) {
            const int em = t.state_emission[q];
            if (em >= 0) {
                for (int k = 0; k < n; k++)
                    into += fp[k] * wm[k * n + q];
                into *= t.e[em * t.K + sym];
            }
        } else {
            for (int j = t.emit_in_start[q]; j < t.emit_in_start[q + 1]; j++) {
                const int m = t.emit_in[j];
                into += fp[t.move_from[m]] * t.w[m] * t.e[t.move_emission[m] * t.K + sym];
            }
        }
        const float post = into * next[q] * factor;
        if (job.post)
            job.post[col * n + q] = post;
        if (post > top) /* lanes take q in increasing order: the first wins a tie */
            top = post, arg = q;
    }
    if (!job.best)
        return;
    grp.argmax(top, arg, red);
    if (grp.lane == 0)
        hmmrt_fb_put_best(job, col, arg);
}

/* One sequence: forward into f (each column divided by 2^scale[i]), then
 * backward. Training adds the expected counts: a move used at position i
 * has probability f[i'][from] w e b[i][to] / P; a posterior call writes each
 * position's posteriors (hmmrt_fb_posteriors) instead, and nothing backward
 * when it prints only the score. Returns ln P (-inf: no path; NaN: the end's
 * share of the last column is below 2^-100, too near float's range for a
 * posterior call, which then leaves the sequence to the CPU). */
template <int G>
__device__ static double hmmrt_fb_sequence(const hmmrt_fb_gpu_job &job, const hmmrt_fb_group<G> &grp,
                                           int64_t s, float *col_a, float *col_b, float *red,
                                           double *mc, double *ec, bool atomic_moves,
                                           const float *wm, const float *wt, double *mct)
{
    const hmmrt_fb_gpu_tables &t = job.t;
    const int n = t.n;
    const bool counting = !job.posterior;
    const uint8_t *x = job.codes + job.offsets[s];
    const int64_t L = job.lengths[s];
    if (job.longest && L > job.longest)
        return NAN;
    const int64_t col0 = job.cols_at[s]; /* the sequence's first column */
    float *f = job.f + col0 * n;
    int *scale = job.scale + col0;
    float *prev = col_a, *cur = col_b;
    for (int q = grp.lane; q < n; q += grp.lanes)
        cur[q] = q == t.start ? 1.0f : 0.0f;
    grp.sync();
    hmmrt_fb_silent<G, false>(t, grp, cur);
    int64_t exponents = 0;
    for (int64_t i = 0;; i++) {
        float part = 0;
        for (int q = grp.lane; q < n; q += grp.lanes)
            part += cur[q];
        const float sum = grp.sum(part, red);
        if (!(sum > 0) || !isfinite(sum))
            return -INFINITY;
        int e;
        frexpf(sum, &e);
        const float factor = ldexpf(1.0f, -e); /* exact: a power of two */
        for (int q = grp.lane; q < n; q += grp.lanes) {
            cur[q] *= factor;
            f[i * n + q] = cur[q];
        }
        if (grp.lane == 0)
            scale[i] = e;
        exponents += e;
        grp.sync();
        if (i == L)
            break;
        float *swap = prev;
        prev = cur;
        cur = swap;
        const int sym = x[i];
        if (t.dense) { /* the matrix's column q, then q's table */
            for (int q = grp.lane; q < n; q += grp.lanes) {
                float acc = 0;
                for (int k = 0; k < n; k++)
                    acc += prev[k] * wm[k * n + q];
                const int em = t.state_emission[q];
                cur[q] = em < 0 ? 0.0f : acc * t.e[em * t.K + sym];
            }
        } else {
            for (int q = grp.lane; q < n; q += grp.lanes) {
                float acc = 0;
                for (int j = t.emit_in_start[q]; j < t.emit_in_start[q + 1]; j++) {
                    const int m = t.emit_in[j];
                    acc += prev[t.move_from[m]] * t.w[m] * t.e[t.move_emission[m] * t.K + sym];
                }
                cur[q] = acc;
            }
        }
        grp.sync();
        hmmrt_fb_silent<G, false>(t, grp, cur);
    }
    const float p_end = cur[t.end];
    if (!(p_end > 0))
        return -INFINITY;
    const double lnp = log((double)p_end) + (double)exponents * 0.69314718055994530942;
    if (!counting && p_end < 0x1p-100f)
        return NAN;
    if (!counting && !job.best && !job.post)
        return lnp;

    const float inv_p = 1.0f / p_end;
    float *next = prev;
    grp.sync();
    for (int q = grp.lane; q < n; q += grp.lanes)
        cur[q] = q == t.end ? 1.0f : 0.0f;
    grp.sync();
    hmmrt_fb_silent<G, true>(t, grp, cur);
    for (int64_t i = L;; i--) {
        const float *fi = f + i * n;
        for (int j = grp.lane; counting && j < t.n_silent; j += grp.lanes) {
            const int m = t.silent[j];
            const float use = fi[t.move_from[m]] * t.w[m] * cur[t.move_to[m]] * inv_p;
            if (use != 0) {
                if (atomic_moves)
                    atomicAdd(&mc[m], (double)use);
                else
                    mc[m] += use;
            }
        }
        if (i == 0)
            break;
        grp.sync();
        float *swap = next;
        next = cur;
        cur = swap;
        const float *fp = f + (i - 1) * n;
        const int sym = x[i - 1];
        const float inv_scale = ldexpf(1.0f, -scale[i]);
        if (!counting) {
            hmmrt_fb_posteriors(job, grp, fp, next, sym, inv_scale * inv_p, wm, red, col0 + i);
            grp.sync();
        }
        if (t.dense) {
            /* cur holds, for the moment, what a move into q carries on: its
             * table's value, q's backward value and the column's scale */
            for (int q = grp.lane; q < n; q += grp.lanes) {
                const int em = t.state_emission[q];
                cur[q] = em < 0 ? 0.0f : t.e[em * t.K + sym] * next[q] * inv_scale;
            }
            grp.sync();
            /* the symbol's uses: each q's share of the forward column times what it carries */
            for (int q = grp.lane; counting && q < n; q += grp.lanes) {
                const int em = t.state_emission[q];
                if (em < 0 || cur[q] == 0)
                    continue;
                float into = 0;
                for (int k = 0; k < n; k++)
                    into += fp[k] * wm[k * n + q];
                const float use = into * cur[q] * inv_p;
                if (use != 0)
                    atomicAdd(&ec[em * t.K + sym], (double)use);
            }
            /* a lane a state (the dense form has lanes >= n): p's backward
             * value and the counts of its moves, owned by this lane */
            const int p = grp.lane;
            float h = 0;
            if (p < n) {
                const float from = fp[p] * inv_p;
                for (int q = 0; q < n; q++) {
                    const float step = wt[q * n + p] * cur[q];
                    h += step;
                    if (counting && from != 0 && step != 0)
                        mct[q * n + p] += from * step;
                }
            }
            grp.sync(); /* every lane has read cur */
            if (p < n)
                cur[p] = h;
            grp.sync();
            hmmrt_fb_silent<G, true>(t, grp, cur);
            continue;
        }
        for (int p = grp.lane; p < n; p += grp.lanes) {
            float h = 0;
            const float from = fp[p];
            for (int j = t.emit_out_start[p]; j < t.emit_out_start[p + 1]; j++) {
                const int m = t.emit_out[j];
                const int v = t.move_emission[m] * t.K + sym;
                const float step = t.w[m] * t.e[v] * next[t.move_to[m]] * inv_scale;
                h += step;
                const float use = from * step * inv_p;
                if (counting && use != 0) {
                    if (atomic_moves)
                        atomicAdd(&mc[m], (double)use);
                    else
                        mc[m] += use;
                    atomicAdd(&ec[v], (double)use);
                }
            }
            cur[p] = h;
        }
        grp.sync();
        hmmrt_fb_silent<G, true>(t, grp, cur);
    }
    grp.sync();
    return lnp;
}

template <int G> __global__ void hmmrt_fb_kernel(const hmmrt_fb_gpu_job job)
{
    const hmmrt_fb_gpu_tables &t = job.t;
    extern __shared__ double hmmrt_fb_shared[];
    const hmmrt_fb_group<G> grp;
    const int per_block = G ? (int)blockDim.x / G : 1;
    const int group = G ? (int)threadIdx.x / G : 0;
    const int n_values = t.n_emissions * t.K;
    const int nn = t.dense ? t.n * t.n : 0;
    /* the block's shared memory: the dense matrices, then each group's own:
     * its counts (when they fit), two columns and red */
    float *wm = (float *)hmmrt_fb_shared, *wt = wm + nn;
    for (int k = threadIdx.x; k < nn; k += blockDim.x) {
        wm[k] = t.w_matrix[k];
        wt[k] = t.w_transposed[k];
    }
    __syncthreads();
    char *mine = (char *)hmmrt_fb_shared + job.block_bytes + (size_t)group * job.group_bytes;
    const bool in_shared = job.counts_in_shared != 0;
    const int counted = in_shared ? t.n_moves + n_values + nn : 0;
    double *mc = in_shared ? (double *)mine : job.move_counts;
    double *ec = in_shared ? mc + t.n_moves : job.emission_counts;
    double *mct = in_shared ? ec + n_values : NULL; /* dense: n x n, [to * n + from] */
    float *col_a = (float *)(mine + (size_t)counted * 8);
    float *col_b = col_a + grp.lanes * ((t.n + grp.lanes - 1) / grp.lanes);
    float *red = col_b + grp.lanes * ((t.n + grp.lanes - 1) / grp.lanes);
    for (int k = grp.lane; k < counted; k += grp.lanes)
        mc[k] = 0;
    grp.sync();
    const int64_t groups = (int64_t)gridDim.x * per_block;
    for (int64_t s = (int64_t)blockIdx.x * per_block + group; s < job.n_seqs; s += groups) {
        const double lnp = hmmrt_fb_sequence<G>(job, grp, s, col_a, col_b, red, mc, ec, !in_shared,
                                                wm, wt, mct);
        if (grp.lane == 0)
            job.lnp[s] = lnp;
        grp.sync();
    }
    if (in_shared) {
        for (int k = grp.lane; k < t.n_moves; k += grp.lanes) {
            double c = mc[k];
            if (t.dense && t.move_emission[k] >= 0) /* an emitting move: the matrix's count */
                c += mct[t.move_to[k] * t.n + t.move_from[k]];
            if (c != 0)
                atomicAdd(&job.move_counts[k], c);
        }
        for (int k = grp.lane; k < n_values; k += grp.lanes)
            if (ec[k] != 0)
                atomicAdd(&job.emission_counts[k], ec[k]);
    }
}

template <int G> static int hmmrt_fb_launch_group(const hmmrt_fb_gpu_job *job)
{
    const size_t shared = job->block_bytes + job->group_bytes * (size_t)(G ? job->block / G : 1);
    if (shared > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(hmmrt_fb_kernel<G>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)shared);
        if (e != cudaSuccess)
            return (int)e;
    }
    hmmrt_fb_kernel<G><<<job->grid, job->block, shared, (cudaStream_t)job->stream>>>(*job);
    return (int)cudaGetLastError();
}

extern "C" int hmmrt_fb_gpu_launch(const hmmrt_fb_gpu_job *job)
{
    if (job->n_seqs == 0)
        return 0;
    if (job->t.hmm.N)
        return hmmrt_fb_hmm_launch(job);
    if (job->t.wide.N)
        return hmmrt_fb_wide_launch(job);
    switch (job->group) {
    case 4: return hmmrt_fb_launch_group<4>(job);
    case 8: return hmmrt_fb_launch_group<8>(job);
    case 16: return hmmrt_fb_launch_group<16>(job);
    case 32: return hmmrt_fb_launch_group<32>(job);
    default: return hmmrt_fb_launch_group<0>(job);
    }
}


