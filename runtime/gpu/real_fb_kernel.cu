/* real_fb_kernel.cu: backward, posteriors and viterbi's paths over real
 * observations on the GPU, thin loops over real_math.cuh's and
 * real_fb_math.cuh's helpers (runtime/real_fb_steps.c runs the same steps on
 * the CPU): a block per whole sequence, its threads over the states, reading
 * the emission pass's table; every column less its largest value (added to
 * a double), as real_kernel.cu's recursion. tests/emulate/real-driver runs
 * them on the CPU (HMMC_HOST_EMULATION). */
#include "gpu/real_fb_math.cuh" /* runtime/ */
#include "hmmrt_gpu.h"
#include "hmmrt_kernel.cuh"
#include "real_fb_gpu.h"
#include "real_gpu.h"

#ifndef HMMC_HOST_EMULATION
#include <cuda_runtime.h>
#endif

__device__ __forceinline__ float rfb_state(int a, int b, const int *from, const float *w, const int *em, const float *prev, const float *erow)
{
    return hmmrt_rg_statef(0, a, b, from, w, em, prev, erow);
}
__device__ __forceinline__ double rfb_state(int a, int b, const int *from, const double *w, const int *em, const double *prev, const double *erow)
{
    return hmmrt_rg_stated(0, a, b, from, w, em, prev, erow);
}
__device__ __forceinline__ float rfb_best(int a, int b, const int *from, const float *w, const int *em, const float *prev, const float *erow, int *arg)
{
    return hmmrt_rfb_bestf(a, b, from, w, em, prev, erow, arg);
}
__device__ __forceinline__ double rfb_best(int a, int b, const int *from, const double *w, const int *em, const double *prev, const double *erow, int *arg)
{
    return hmmrt_rfb_bestd(a, b, from, w, em, prev, erow, arg);
}
__device__ __forceinline__ float rfb_logadd(float a, float b) { return hmmrt_rfb_logaddf(a, b); }
__device__ __forceinline__ double rfb_logadd(double a, double b) { return hmmrt_rfb_logaddd(a, b); }
__device__ __forceinline__ float rfb_post(float a, float b, float c) { return hmmrt_rfb_postf(a, b, c); }
__device__ __forceinline__ void rfb_lse_add(float *top, float *sum, float t) { hmmrt_rg_lse_addf(top, sum, t); }
__device__ __forceinline__ void rfb_lse_add(double *top, double *sum, double t) { hmmrt_rg_lse_addd(top, sum, t); }
__device__ __forceinline__ float rfb_log(float v) { return logf(v); }
__device__ __forceinline__ double rfb_log(double v) { return log(v); }
__device__ __forceinline__ double rfb_post(double a, double b, double c) { return hmmrt_rfb_postd(a, b, c); }

/* An add to a count that other threads and blocks add to. */
__device__ __forceinline__ void rfb_count(double *at, double v)
{
#ifdef HMMC_HOST_EMULATION /* one CPU thread runs every thread in turn */
    *at += v;
#else
    atomicAdd(at, v);
#endif
}

/* The largest of every thread's (v, q), the smallest q on a tie, to each
 * thread (rv: 33 reals, rq: 33 ints of shared memory). */
template <typename real>
__device__ real rfb_argmax(real v, int *q, real *rv, int *rq)
{
    int at = *q;
    for (int o = 16; o > 0; o >>= 1) {
        real u = __shfl_xor_sync(0xffffffffu, v, o);
        int k = __shfl_xor_sync(0xffffffffu, at, o);
        if (u > v || (u == v && k < at)) {
            v = u;
            at = k;
        }
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) {
        rv[warp] = v;
        rq[warp] = at;
    }
    __syncthreads();
    if (warp == 0) {
        const bool has = lane < (int)(blockDim.x >> 5);
        v = has ? rv[lane] : (real)-INFINITY;
        at = has ? rq[lane] : 0x7fffffff;
        for (int o = 16; o > 0; o >>= 1) {
            real u = __shfl_xor_sync(0xffffffffu, v, o);
            int k = __shfl_xor_sync(0xffffffffu, at, o);
            if (u > v || (u == v && k < at)) {
                v = u;
                at = k;
            }
        }
        if (lane == 0) {
            rv[32] = v;
            rq[32] = at;
        }
    }
    __syncthreads();
    *q = rq[32];
    const real r = rv[32];
    __syncthreads(); /* every thread has read before the next call writes */
    return r;
}

template <typename real>
__device__ real rfb_max(real v, real *rv, int *rq)
{
    int q = 0;
    return rfb_argmax(v, &q, rv, rq);
}

/* Forward storing every column, then backward with the posteriors. */
template <typename real>
__global__ void rfb_fb(const hmmrt_rfb_job job)
{
    __shared__ real rv[33];
    __shared__ int rq[33];
    __shared__ double shared_score;
    const int n = job.n_states, p = blockIdx.x;
    if (job.flags[p] != (RG_FIRST | RG_LAST))
        return; /* whole sequences only (real_fb_gpu.c packs them so) */
    real *col = job.cols ? (real *)job.cols + (size_t)p * 2 * n : (real *)hmmc_dynamic_shared();
    real *nxt = col + n;
    const int64_t L = job.len[p], base = job.row[p];
    const real *table = (const real *)job.table + base * job.n_dens;
    real *alpha = (real *)job.alpha + base * n;
    double *a_off = job.a_off + base;
    const real *in_logw = (const real *)job.in_logw, *out_logw = (const real *)job.out_logw;
    const real *end_logw = (const real *)job.end_logw;
    /* forward: column i at alpha + i n, after observation i + 1 */
    for (int q = threadIdx.x; q < n; q += blockDim.x)
        col[q] = q == job.start ? (real)0 : (real)-INFINITY;
    __syncthreads();
    double offset = 0;
    bool dead = L == 0;
    for (int64_t i = 0; i < L && !dead; i++) {
        const real *prev = i == 0 ? col : alpha + (i - 1) * n;
        real *cur = alpha + i * n;
        real top = (real)-INFINITY;
        for (int q = threadIdx.x; q < n; q += blockDim.x) {
            const real v = rfb_state(job.in_start[q], job.in_start[q + 1], job.in_from, in_logw,
                                     job.in_em, prev, table + i * job.n_dens);
            cur[q] = v;
            top = v > top ? v : top;
        }
        top = rfb_max(top, rv, rq); /* its syncs end the writes of cur */
        if (top == (real)-INFINITY) {
            dead = true;
            break;
        }
        for (int q = threadIdx.x; q < n; q += blockDim.x)
            cur[q] -= top;
        offset += (double)top;
        if (threadIdx.x == 0)
            a_off[i] = offset;
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        real top = (real)-INFINITY, sum = 0;
        for (int k = 0; k < job.n_end && !dead; k++)
            rfb_lse_add(&top, &sum, alpha[(L - 1) * n + job.end_from[k]] + end_logw[k]);
        shared_score = dead || top == (real)-INFINITY ? -INFINITY
                                                       : offset + (double)(top + rfb_log(sum));
        job.fscore[p] = shared_score;
    }
    __syncthreads();
    const double lnp = shared_score;
    if (lnp == -INFINITY) {
        if (threadIdx.x == 0)
            job.bscore[p] = -INFINITY;
        return;
    }
    /* backward: nxt holds the column of position i + 1 less its largest
     * value, b_off their offsets; the end's moves first */
    for (int q = threadIdx.x; q < n; q += blockDim.x)
        nxt[q] = (real)-INFINITY;
    __syncthreads();
    if (threadIdx.x == 0)
        for (int k = 0; k < job.n_end; k++)
            nxt[job.end_from[k]] = rfb_logadd(nxt[job.end_from[k]], end_logw[k]);
    __syncthreads();
    double b_off = 0;
    if (job.move_counts && threadIdx.x == 0) /* the end's moves, after observation L */
        for (int k = 0; k < job.n_end; k++) {
            const real v = alpha[(L - 1) * n + job.end_from[k]] + end_logw[k];
            if (v != (real)-INFINITY)
                rfb_count(&job.move_counts[job.end_move[k]],
                          exp((double)v + a_off[L - 1] - lnp));
        }
    for (int64_t i = L; i >= 1; i--) {
        real top = (real)-INFINITY;
        if (i < L) { /* the column of position i from that of i + 1, over observation i + 1 */
            for (int q = threadIdx.x; q < n; q += blockDim.x) {
                const real v = rfb_state(job.out_start[q], job.out_start[q + 1], job.out_to,
                                         out_logw, job.out_em, nxt, table + i * job.n_dens);
                col[q] = v;
                top = v > top ? v : top;
            }
        } else {
            for (int q = threadIdx.x; q < n; q += blockDim.x) {
                col[q] = nxt[q];
                top = nxt[q] > top ? nxt[q] : top;
            }
        }
        top = rfb_max(top, rv, rq);
        if (top == (real)-INFINITY)
            break; /* cannot happen with a finite forward; leaves bscore -inf */
        for (int q = threadIdx.x; q < n; q += blockDim.x)
            col[q] -= top;
        b_off += (double)top;
        /* position i's posteriors */
        const real c = (real)(a_off[i - 1] + b_off - lnp);
        const real *a = alpha + (i - 1) * n;
        real best = (real)-INFINITY;
        int arg = 0x7fffffff;
        for (int q = threadIdx.x; q < n; q += blockDim.x) {
            const real v = rfb_post(a[q], col[q], c);
            if (job.post)
                ((real *)job.post)[(base + i - 1) * n + q] = v;
            if (v > best) {
                best = v;
                arg = q;
            }
        }
        if (job.move_counts) { /* the moves that emit observation i, into each state q */
            const real *ap = i >= 2 ? alpha + (i - 2) * n : NULL; /* NULL: the start's column */
            const real ca = (real)((i >= 2 ? a_off[i - 2] : 0.0) + b_off - lnp);
            const real *erow = table + (i - 1) * job.n_dens;
            double *urow = job.uses + (base + i - 1) * job.n_dens;
            for (int q = threadIdx.x; q < n; q += blockDim.x) {
                if (col[q] == (real)-INFINITY)
                    continue;
                for (int m = job.in_start[q]; m < job.in_start[q + 1]; m++) {
                    const int from = job.in_from[m];
                    const real a0 = ap ? ap[from] : from == job.start ? (real)0 : (real)-INFINITY;
                    const real v = a0 + in_logw[m] + erow[job.in_em[m]] + col[q];
                    if (v == (real)-INFINITY)
                        continue;
                    const double x = (double)rfb_post(v, (real)0, ca);
                    rfb_count(&job.move_counts[job.in_move[m]], x);
                    rfb_count(&urow[job.in_em[m]], x);
                }
            }
        }
        if (job.best) {
            rfb_argmax(best, &arg, rv, rq);
            if (threadIdx.x == 0)
                job.best[base + i - 1] = arg;
        }
        __syncthreads();
        real *swap = nxt; /* col becomes the column read next */
        nxt = col;
        col = swap;
        __syncthreads();
    }
    if (threadIdx.x == 0) { /* the start's value before observation 1 */
        const real v = rfb_state(job.out_start[job.start], job.out_start[job.start + 1], job.out_to,
                                 out_logw, job.out_em, nxt, table);
        job.bscore[p] = v == (real)-INFINITY ? -INFINITY : b_off + (double)v;
    }
}

/* Viterbi with back pointers (the best move into each state), then the path
 * from the end back, by the block's first thread. */
template <typename real>
__global__ void rfb_viterbi(const hmmrt_rfb_job job)
{
    __shared__ real rv[33];
    __shared__ int rq[33];
    const int n = job.n_states, p = blockIdx.x;
    if (job.flags[p] != (RG_FIRST | RG_LAST))
        return;
    real *prev = job.cols ? (real *)job.cols + (size_t)p * 2 * n : (real *)hmmc_dynamic_shared();
    real *cur = prev + n;
    const int64_t L = job.len[p], base = job.row[p];
    const real *table = (const real *)job.table + base * job.n_dens;
    const real *in_logw = (const real *)job.in_logw, *end_logw = (const real *)job.end_logw;
    int *bp = job.bp + base * n;
    for (int q = threadIdx.x; q < n; q += blockDim.x)
        prev[q] = q == job.start ? (real)0 : (real)-INFINITY;
    __syncthreads();
    double offset = 0;
    bool dead = L == 0;
    for (int64_t i = 0; i < L && !dead; i++) {
        real top = (real)-INFINITY;
        for (int q = threadIdx.x; q < n; q += blockDim.x) {
            int arg;
            const real v = rfb_best(job.in_start[q], job.in_start[q + 1], job.in_from, in_logw,
                                    job.in_em, prev, table + i * job.n_dens, &arg);
            cur[q] = v;
            bp[i * n + q] = arg;
            top = v > top ? v : top;
        }
        top = rfb_max(top, rv, rq);
        if (top == (real)-INFINITY) {
            dead = true;
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
    if (threadIdx.x != 0)
        return;
    real top = (real)-INFINITY;
    int last = -1;
    for (int k = 0; k < job.n_end && !dead; k++) {
        const real v = prev[job.end_from[k]] + end_logw[k];
        if (v > top) {
            top = v;
            last = job.end_from[k];
        }
    }
    if (dead || last < 0) {
        job.fscore[p] = -INFINITY;
        return;
    }
    job.fscore[p] = offset + (double)top;
    for (int64_t i = L - 1; i >= 0; i--) {
        job.path[base + i] = last;
        last = job.in_from[bp[i * n + last]];
    }
}

#ifdef HMMC_HOST_EMULATION
static const hmmrt_rfb_job *emulated_rfb;
template <typename real> static void fb_on_cpu(const hmmrt_gpu_batch) { rfb_fb<real>(*emulated_rfb); }
template <typename real> static void viterbi_on_cpu(const hmmrt_gpu_batch) { rfb_viterbi<real>(*emulated_rfb); }
#endif

template <typename real>
static int rfb_typed(const hmmrt_rfb_job *job)
{
    if (job->n_pieces == 0)
        return 0;
#ifdef HMMC_HOST_EMULATION
    emulated_rfb = job;
    hmmc_emulate(job->viterbi ? viterbi_on_cpu<real> : fb_on_cpu<real>, hmmrt_gpu_batch(),
                 (unsigned)job->n_pieces, (unsigned)job->block);
    return 0;
#else
    const size_t shared = job->cols ? 0 : hmmrt_rfb_shared(job->n_states, job->use_double);
    if (job->viterbi)
        rfb_viterbi<real><<<job->n_pieces, job->block, shared, (cudaStream_t)job->stream>>>(*job);
    else
        rfb_fb<real><<<job->n_pieces, job->block, shared, (cudaStream_t)job->stream>>>(*job);
    return (int)cudaGetLastError();
#endif
}

extern "C" int hmmrt_rfb_launch(const hmmrt_rfb_job *job)
{
    return job->use_double ? rfb_typed<double>(job) : rfb_typed<float>(job);
}

extern "C" size_t hmmrt_rfb_shared(int n_states, int use_double)
{
    return (size_t)2 * n_states * (use_double ? sizeof(double) : sizeof(float));
}
