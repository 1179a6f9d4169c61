/* fb_wide.cu: the wide HMM form of the forward-backward kernel (fb_kernel.cu
 * launches it): models whose only silent states are the start and the end,
 * with up to 64 emitting states (padded to 32 or 64). A block of N threads a
 * sequence, a thread a state holding its column (forward) or row (backward)
 * of the matrix in registers; counts gathered in float a stretch at a time,
 * then in double in shared memory. Compiled once into libhmmrt_gpu.a. */
#include <cuda_runtime.h>
#include <stdint.h>
#include "hmmrt_fb_gpu.h"
#include "fb_kernel.cuh"

/* Positions a thread's float sums of the moves' uses cover before they are
 * added to the double totals (float keeps 64 terms to about 4e-6 at worst). */
#define HMMRT_FB_WIDE_FLUSH 64

/* Shared memory: the counts (training only) as doubles, then the emission
 * values and the exchange columns as floats; the block's move counts are in
 * device memory (wide.block_counts: shared memory for them would keep fewer
 * blocks resident). */
struct hmmrt_fb_wide_shared {
    double *moves;    /* N x N, the block's own in device memory: moves[q * N + p],
                         the uses of p -> q */
    double *emitted;  /* N x (K + 1): emitted[p * (K + 1) + k] */
    double *edges;    /* first[N], last[N], then the empty sequence's */
    float *et;        /* K x N: et[k * N + q], state q's value of symbol k */
    float *col;       /* two columns of N: forward's values, backward's carries */
    float *red;       /* 2 x 2 warp sums, 2 end sums, 2 x 2 argmax values and states,
                         2 x 2 posterior sums */
};

/* The doubles of the counts, even so that the floats after them start at a
 * multiple of 16 bytes (the columns are read as float4s). */
template <int N> __host__ __device__ static int hmmrt_fb_wide_doubles(int K, bool counting)
{
    return counting ? (N * (K + 1) + 2 * N + 1 + 1) / 2 * 2 : 0;
}

template <int N> __host__ __device__ static size_t hmmrt_fb_wide_bytes(int K, bool counting)
{
    return (size_t)hmmrt_fb_wide_doubles<N>(K, counting) * 8 + ((size_t)K * N + 2 * N + 20) * 4;
}

template <int N>
__device__ static hmmrt_fb_wide_shared hmmrt_fb_wide_carve(void *base, int K, bool counting,
                                                           double *block_counts)
{
    hmmrt_fb_wide_shared s;
    double *d = (double *)base;
    s.moves = counting ? block_counts + (size_t)blockIdx.x * N * N : NULL;
    s.emitted = d;
    s.edges = s.emitted + (counting ? N * (K + 1) : 0);
    s.et = (float *)(d + hmmrt_fb_wide_doubles<N>(K, counting));
    s.col = s.et + K * N;
    s.red = s.col + 2 * N;
    return s;
}

__device__ static inline float hmmrt_fb_wide_warp_sum(float v)
{
    for (int d = 16; d > 0; d >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}

/* The block's sum of v: each warp's sum to red[0..1], then after the barrier
 * their total in every thread. */
template <int N> __device__ static float hmmrt_fb_wide_sum(float v, float *red)
{
    v = hmmrt_fb_wide_warp_sum(v);
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = v;
    __syncthreads();
    return N == 64 ? red[0] + red[1] : red[0];
}

/* A thread's float sums of one stretch of a sequence, times each move's
 * weight, added to the block's double totals (each thread owns its row). */
template <int N>
__device__ static void hmmrt_fb_wide_flush(const hmmrt_fb_wide_shared &sh, float (&uses)[N],
                                           const float (&row)[N])
{
    const int p = threadIdx.x;
#pragma unroll
    for (int q = 0; q < N; q++) {
        sh.moves[q * N + p] += (double)(uses[q] * row[q]);
        uses[q] = 0;
    }
}

/* Forward then backward of sequence s by the whole block (thread p: state
 * slot p). Forward: column i's values divided by 2^scale[i] to f + (cols_at
 * + i) * N, 1 <= i <= L; backward: each position's posteriors (POSTERIOR) or
 * the expected counts. Returns ln P as hmmrt_fb_sequence does (the same for
 * every thread). */
template <int N, bool POSTERIOR>
__device__ static double hmmrt_fb_wide_sequence(const hmmrt_fb_gpu_job &job, int64_t s,
                                                const hmmrt_fb_wide_shared &sh)
{
    const hmmrt_fb_wide &w = job.t.wide;
    const int K = job.t.K;
    const int p = threadIdx.x, lane = p & 31, warp = p >> 5;
    const float *a = w.numbers, *initial = a + N * N, *final = initial + N;
    const uint8_t *x = job.codes + job.offsets[s];
    const int64_t L = job.lengths[s];
    if (job.longest && L > job.longest)
        return NAN;
    if (L == 0) {
        if (!(w.empty > 0))
            return -INFINITY;
        if (!POSTERIOR && p == 0)
            sh.edges[2 * N] += 1.0;
        return log((double)w.empty);
    }
    const int64_t col0 = job.cols_at[s];
    float *f = job.f + col0 * N;
    int *scale = job.scale + col0;

    /* forward: the previous column (unscaled) from shared memory, q's share
     * through this thread's column of the matrix. Every thread also sums
     * that column itself, in the same order (the same bits in each), for its
     * power of two: no reduction and one barrier a position. */
    float mine; /* f_i(p), scaled */
    int64_t exponents = 0;
    {
        float column[N];
#pragma unroll
        for (int q = 0; q < N; q++)
            column[q] = a[q * N + p];
        int buf = 0;
        int ahead = x[0]; /* the next position's symbol, loaded a position early */
        float u = 0;      /* this thread's value of the last column, unscaled */
        for (int64_t i = 1; i <= L + 1; i++) {
            /* column i - 1's total, scale and forward values; then column i */
            float s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0;
            if (i > 1) {
                const float4 *prev = (const float4 *)(sh.col + (buf ^ 1) * N);
#pragma unroll
                for (int v = 0; v < N / 4; v++) {
                    const float4 c = prev[v];
                    s0 += c.x * column[4 * v];
                    s1 += c.y * column[4 * v + 1];
                    s2 += c.z * column[4 * v + 2];
                    s3 += c.w * column[4 * v + 3];
                    t0 += c.x, t1 += c.y, t2 += c.z, t3 += c.w;
                }
                const float sum = (t0 + t1) + (t2 + t3);
                if (!(sum > 0) || !isfinite(sum))
                    return -INFINITY;
                int e;
                frexpf(sum, &e);
                const float factor = ldexpf(1.0f, -e); /* exact: a power of two */
                mine = u * factor;
                f[(i - 1) * N + p] = mine;
                if (p == 0)
                    scale[i - 1] = e;
                exponents += e;
                if (i > L)
                    break;
                u = ((s0 + s1) + (s2 + s3)) * factor;
            } else {
                u = initial[p];
            }
            const int sym = ahead;
            if (i < L)
                ahead = x[i];
            u *= sh.et[sym * N + p];
            sh.col[buf * N + p] = u;
            __syncthreads();
            buf ^= 1;
        }
    }
    const float p_end = hmmrt_fb_wide_sum<N>(mine * final[p], sh.red + 4);
    if (!(p_end > 0))
        return -INFINITY;
    const double lnp = log((double)p_end) + (double)exponents * 0.69314718055994530942;
    if (POSTERIOR && p_end < 0x1p-100f)
        return NAN;
    if (POSTERIOR && !job.best && !job.post)
        return lnp;

    /* backward: b is this thread's backward value at position i, in the
     * forward's scale; the carries of position i go through shared memory */
    const float inv_p = 1.0f / p_end;
    float row[N], uses[N];
#pragma unroll
    for (int q = 0; q < N; q++) {
        row[q] = a[p * N + q];
        uses[q] = 0;
    }
    const int table = POSTERIOR ? -1 : w.table_of[p];
    const int state = w.state_of[p];
    float b = final[p];
    int ex = scale[L];
    int buf = 0;
    /* the symbol, forward value and exponent the next position needs,
     * loaded a position early */
    int sym_ahead = x[L - 1];
    int stretch = HMMRT_FB_WIDE_FLUSH; /* positions before the next flush */
    float f_ahead = L > 1 ? f[(L - 1) * N + p] : 0.0f;
    int ex_ahead = L > 1 ? scale[L - 1] : 0;
    for (int64_t i = L; i >= 1; i--) {
        const int sym = sym_ahead;
        const float before = f_ahead;
        const int ex_before = ex_ahead;
        if (i > 1)
            sym_ahead = x[i - 2];
        if (i > 2) {
            f_ahead = f[(i - 2) * N + p];
            ex_ahead = scale[i - 2];
        }
        /* POSTERIOR: f b of each state, shared out by their sum at the
         * position (which is P but for float's drift along the sequence) */
        const float raw = mine * b;
        if (POSTERIOR) {
            const float part = hmmrt_fb_wide_warp_sum(raw);
            if (lane == 0)
                sh.red[14 + 2 * buf + warp] = part;
            if (job.best) { /* the first slot (the first state declared) wins a tie */
                float top = raw;
                int arg = p;
                for (int d = 16; d > 0; d >>= 1) {
                    const float ot = __shfl_xor_sync(0xffffffffu, top, d);
                    const int oa = __shfl_xor_sync(0xffffffffu, arg, d);
                    if (ot > top || (ot == top && oa < arg))
                        top = ot, arg = oa;
                }
                if (lane == 0) {
                    sh.red[6 + 2 * buf + warp] = top;
                    sh.red[10 + 2 * buf + warp] = __int_as_float(arg);
                }
            }
        } else if (table >= 0) {
            const float post = raw * inv_p;
            sh.emitted[p * (K + 1) + sym] += (double)post;
            if (i == L)
                sh.edges[N + p] += (double)post;
            if (i == 1)
                sh.edges[p] += (double)post;
        }
        /* what a move into p at position i carries on */
        if (i > 1)
            sh.col[buf * N + p] = sh.et[sym * N + p] * b * ldexpf(1.0f, -ex);
        __syncthreads();
        if (POSTERIOR) {
            const int64_t c = col0 + i;
            if (job.post) {
                const float total = sh.red[14 + 2 * buf] + (N == 64 ? sh.red[15 + 2 * buf] : 0.0f);
                float *out = job.post + c * job.t.n;
                if (state >= 0)
                    out[state] = total > 0 ? raw / total : raw * inv_p;
                for (int v = p; v < w.n_other; v += N)
                    out[w.other[v]] = 0.0f;
            }
            if (job.best && p == 0) {
                int arg = __float_as_int(sh.red[10 + 2 * buf]);
                if (N == 64 && sh.red[7 + 2 * buf] > sh.red[6 + 2 * buf])
                    arg = __float_as_int(sh.red[11 + 2 * buf]);
                hmmrt_fb_put_best(job, c, w.state_of[arg]);
            }
        }
        if (i == 1)
            break;
        ex = ex_before;
        const float from = before * inv_p;
        const float4 *carry = (const float4 *)(sh.col + buf * N);
        float h0 = 0, h1 = 0, h2 = 0, h3 = 0;
#pragma unroll
        for (int v = 0; v < N / 4; v++) {
            const float4 c = carry[v];
            h0 += row[4 * v] * c.x;
            h1 += row[4 * v + 1] * c.y;
            h2 += row[4 * v + 2] * c.z;
            h3 += row[4 * v + 3] * c.w;
            if (!POSTERIOR) {
                uses[4 * v] += from * c.x;
                uses[4 * v + 1] += from * c.y;
                uses[4 * v + 2] += from * c.z;
                uses[4 * v + 3] += from * c.w;
            }
        }
        b = (h0 + h1) + (h2 + h3);
        mine = before;
        if (!POSTERIOR && --stretch == 0) {
            hmmrt_fb_wide_flush<N>(sh, uses, row);
            stretch = HMMRT_FB_WIDE_FLUSH;
        }
        buf ^= 1;
    }
    if (!POSTERIOR)
        hmmrt_fb_wide_flush<N>(sh, uses, row);
    return lnp;
}

/* Threads a multiprocessor keeps resident: the registers a thread may take
 * (65,536 over this: 170 at 384). */
#ifndef HMMRT_FB_WIDE_RESIDENT
#define HMMRT_FB_WIDE_RESIDENT 384
#endif

template <int N, bool POSTERIOR>
__global__ void __launch_bounds__(N, HMMRT_FB_WIDE_RESIDENT / N) hmmrt_fb_wide_kernel(const hmmrt_fb_gpu_job job)
{
    const hmmrt_fb_wide &w = job.t.wide;
    const int K = job.t.K, p = threadIdx.x;
    extern __shared__ double hmmrt_fb_wide_mem[];
    const hmmrt_fb_wide_shared sh =
        hmmrt_fb_wide_carve<N>(hmmrt_fb_wide_mem, K, !POSTERIOR, w.block_counts);
    const float *et = w.numbers + N * N + 2 * N;
    for (int v = p; v < K * N; v += N)
        sh.et[v] = et[v];
    if (!POSTERIOR) {
        for (int v = p; v < N * N; v += N)
            sh.moves[v] = 0;
        for (int v = p; v < N * (K + 1); v += N)
            sh.emitted[v] = 0;
        for (int v = p; v < 2 * N + 1; v += N)
            sh.edges[v] = 0;
    }
    __syncthreads();
    for (int64_t s = blockIdx.x; s < job.n_seqs; s += gridDim.x) {
        const double lnp = hmmrt_fb_wide_sequence<N, POSTERIOR>(job, s, sh);
        if (p == 0)
            job.lnp[s] = lnp;
        __syncthreads(); /* the shared columns are free again */
    }
    if (POSTERIOR)
        return;
    /* the block's totals to the job's, by the moves and tables they count */
    const int *move_a = w.moves, *move_initial = move_a + N * N, *move_final = move_initial + N;
    for (int v = p; v < N * N; v += N) {
        const int q = v / N, from = v % N, m = move_a[from * N + q];
        if (m >= 0 && sh.moves[v] != 0)
            atomicAdd(&job.move_counts[m], sh.moves[v]);
    }
    const int table = w.table_of[p];
    for (int k = 0; table >= 0 && k < K; k++)
        if (sh.emitted[p * (K + 1) + k] != 0)
            atomicAdd(&job.emission_counts[table * K + k], sh.emitted[p * (K + 1) + k]);
    if (move_initial[p] >= 0 && sh.edges[p] != 0)
        atomicAdd(&job.move_counts[move_initial[p]], sh.edges[p]);
    if (move_final[p] >= 0 && sh.edges[N + p] != 0)
        atomicAdd(&job.move_counts[move_final[p]], sh.edges[N + p]);
    if (p == 0 && w.move_empty >= 0 && sh.edges[2 * N] != 0)
        atomicAdd(&job.move_counts[w.move_empty], sh.edges[2 * N]);
}

template <int N, bool POSTERIOR> static int hmmrt_fb_wide_go(const hmmrt_fb_gpu_job *job)
{
    const size_t bytes = hmmrt_fb_wide_bytes<N>(job->t.K, !POSTERIOR);
    if (bytes > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(hmmrt_fb_wide_kernel<N, POSTERIOR>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)bytes);
        if (e != cudaSuccess)
            return (int)e;
    }
    hmmrt_fb_wide_kernel<N, POSTERIOR><<<job->grid, N, bytes, (cudaStream_t)job->stream>>>(*job);
    return (int)cudaGetLastError();
}

template <int N, bool POSTERIOR> static int hmmrt_fb_wide_occupancy(int K)
{
    const size_t bytes = hmmrt_fb_wide_bytes<N>(K, !POSTERIOR);
    if (bytes > 48 * 1024 &&
        cudaFuncSetAttribute(hmmrt_fb_wide_kernel<N, POSTERIOR>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) != cudaSuccess)
        return 1;
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, hmmrt_fb_wide_kernel<N, POSTERIOR>, N,
                                                      bytes) != cudaSuccess || blocks < 1)
        return 1;
    return blocks;
}

int hmmrt_fb_wide_launch(const hmmrt_fb_gpu_job *job)
{
    if (job->t.wide.N == 32)
        return job->posterior ? hmmrt_fb_wide_go<32, true>(job) : hmmrt_fb_wide_go<32, false>(job);
    return job->posterior ? hmmrt_fb_wide_go<64, true>(job) : hmmrt_fb_wide_go<64, false>(job);
}

extern "C" int hmmrt_fb_wide_blocks_per_sm(int N, int K, int posterior)
{
    if (N == 32)
        return posterior ? hmmrt_fb_wide_occupancy<32, true>(K) : hmmrt_fb_wide_occupancy<32, false>(K);
    return posterior ? hmmrt_fb_wide_occupancy<64, true>(K) : hmmrt_fb_wide_occupancy<64, false>(K);
}

extern "C" size_t hmmrt_fb_wide_shared_bytes(int N, int K, int posterior)
{
    return N == 32 ? hmmrt_fb_wide_bytes<32>(K, !posterior) : hmmrt_fb_wide_bytes<64>(K, !posterior);
}
