/* fb_hmm.cu: the HMM form of the forward-backward kernel (fb_kernel.cu
 * launches it): for models whose only silent states are the start and the
 * end, a thread a sequence, its columns, counts and emission counts in
 * registers, its forward records (values and exponent, 16 bytes at a time)
 * of a warp's sequences side by side. Compiled once into libhmmrt_gpu.a. */
#include <cuda_runtime.h>
#include <stdint.h>
#include "hmmrt_fb_gpu.h"
#include "fb_kernel.cuh"

/* Adds a thread's float sums of one stretch (at most HMMRT_FB_HMM_FLUSH
 * positions, so that float keeps them to about 1e-7) to the double totals. */
#define HMMRT_FB_HMM_FLUSH 1024
template <int N, int KB>
__device__ static void hmmrt_fb_hmm_flush(const hmmrt_fb_gpu_job &job, float (&xi)[N][N],
                                          float (&first)[N], float (&last)[N], float (&emit)[N][KB])
{
    const hmmrt_fb_hmm &h = job.t.hmm;
#pragma unroll
    for (int p = 0; p < N; p++) {
#pragma unroll
        for (int q = 0; q < N; q++) {
            if (xi[p][q] != 0)
                atomicAdd(&job.move_counts[h.move_a[p * N + q]], (double)xi[p][q]);
            xi[p][q] = 0;
        }
        if (first[p] != 0)
            atomicAdd(&job.move_counts[h.move_initial[p]], (double)first[p]);
        if (last[p] != 0)
            atomicAdd(&job.move_counts[h.move_final[p]], (double)last[p]);
        first[p] = last[p] = 0;
#pragma unroll
        for (int k = 0; k < KB; k++) {
            if (emit[p][k] != 0)
                atomicAdd(&job.emission_counts[h.table_of[p] * job.t.K + k], (double)emit[p][k]);
            emit[p][k] = 0;
        }
    }
}

/* A sequence's symbols sixteen at a time: its codes start at a multiple of
 * 16 bytes (the driver pads them so, and so does fb_gpu.c), and one 16-byte
 * load serves sixteen positions, forward and backward. */
struct hmmrt_fb_symbols {
    const uint4 *words;
    int64_t held; /* the word in w, -1: none */
    uint4 w;
    __device__ explicit hmmrt_fb_symbols(const uint8_t *x) : words((const uint4 *)x), held(-1) {}
    __device__ int at(int64_t i) /* x[i] */
    {
        if (i >> 4 != held) {
            held = i >> 4;
            w = words[held];
        }
        const int k = (int)(i & 15);
        const unsigned word = k < 4 ? w.x : k < 8 ? w.y : k < 12 ? w.z : w.w;
        return (int)((word >> (8 * (k & 3))) & 0xff);
    }
};

/* A record's R floats from its R / 4 float4s. */
template <int R>
__device__ static void hmmrt_fb_unpack(const float4 (&in)[R / 4], float (&out)[R])
{
#pragma unroll
    for (int v = 0; v < R / 4; v++) {
        out[4 * v] = in[v].x, out[4 * v + 1] = in[v].y;
        out[4 * v + 2] = in[v].z, out[4 * v + 3] = in[v].w;
    }
}

/* Forward then backward of one sequence in registers, in the HMM form: the
 * forward column of position i goes to the record at f + (cols_at + i) * R:
 * its N values (divided by 2^exponent) then the exponent, R = N + 1 rounded
 * up to 4 floats (16-byte stores and loads); backward gives each position's
 * posteriors (POSTERIOR) or adds the expected counts. Returns ln P as
 * hmmrt_fb_sequence does. et: the emission values, et[k * N + q]. */
template <int N, int KB, bool POSTERIOR>
__device__ static double hmmrt_fb_hmm_sequence(const hmmrt_fb_gpu_job &job, int64_t s,
                                               const float *et)
{
    constexpr int R = (N + 1 + 3) / 4 * 4;
    const hmmrt_fb_hmm &h = job.t.hmm;
    hmmrt_fb_symbols x(job.codes + job.offsets[s]);
    const int64_t L = job.lengths[s];
    if (job.longest && L > job.longest)
        return NAN;
    const int64_t col0 = job.cols_at[s], stride = job.col_stride;
    const int64_t rec0 = job.rec_at ? job.rec_at[s] : col0;
    float4 *f = (float4 *)(job.f + rec0 * R); /* position i's record at f + i * stride * (R / 4) */
    if (L == 0) {
        if (!(h.empty > 0))
            return -INFINITY;
        if (!POSTERIOR)
            atomicAdd(&job.move_counts[h.move_empty], 1.0);
        return log((double)h.empty);
    }
    float a[N];
    int64_t exponents = 0;
    for (int64_t i = 1; i <= L; i++) {
        const float *e = et + x.at(i - 1) * N;
        float next[N], sum = 0;
#pragma unroll
        for (int q = 0; q < N; q++) {
            float acc = 0;
            if (i == 1)
                acc = h.initial[q];
            else
#pragma unroll
                for (int p = 0; p < N; p++)
                    acc += a[p] * h.a[p * N + q];
            next[q] = acc * e[q];
            sum += next[q];
        }
        if (!(sum > 0) || !isfinite(sum))
            return -INFINITY;
        int ex;
        frexpf(sum, &ex);
        const float factor = ldexpf(1.0f, -ex);
        float record[R];
#pragma unroll
        for (int q = 0; q < N; q++)
            record[q] = a[q] = next[q] * factor;
#pragma unroll
        for (int v = N; v < R; v++)
            record[v] = __int_as_float(ex);
#pragma unroll
        for (int v = 0; v < R; v += 4)
            f[i * stride * (R / 4) + v / 4] = make_float4(record[v], record[v + 1], record[v + 2], record[v + 3]);
        exponents += ex;
    }
    float p_end = 0;
#pragma unroll
    for (int q = 0; q < N; q++)
        p_end += a[q] * h.final[q];
    if (!(p_end > 0))
        return -INFINITY;
    const double lnp = log((double)p_end) + (double)exponents * 0.69314718055994530942;
    if (POSTERIOR && p_end < 0x1p-100f)
        return NAN;
    if (POSTERIOR && !job.best && !job.post)
        return lnp;

    const float inv_p = 1.0f / p_end;
    float b[N], xi[N][N], first[N], last[N], emit[N][KB];
    if (!POSTERIOR)
#pragma unroll
        for (int p = 0; p < N; p++) {
            first[p] = last[p] = 0;
#pragma unroll
            for (int q = 0; q < N; q++)
                xi[p][q] = 0;
#pragma unroll
            for (int k = 0; k < KB; k++)
                emit[p][k] = 0;
        }
#pragma unroll
    for (int q = 0; q < N; q++)
        b[q] = h.final[q];
    /* a holds the forward column of position i and ex its exponent; the
     * record of position i - 1 is loaded an iteration ahead */
    float4 before[R / 4];
    float record[R];
#pragma unroll
    for (int v = 0; v < R / 4; v++)
        before[v] = f[L * stride * (R / 4) + v];
    hmmrt_fb_unpack<R>(before, record);
    int ex = __float_as_int(record[N]);
#pragma unroll
    for (int v = 0; v < R / 4; v++)
        before[v] = f[(L - 1) * stride * (R / 4) + v];
    for (int64_t i = L; i >= 1; i--) {
        const int sym = x.at(i - 1);
        float post[N];
#pragma unroll
        for (int q = 0; q < N; q++)
            post[q] = a[q] * b[q] * inv_p;
        if (POSTERIOR) {
            int arg = 0;
#pragma unroll
            for (int q = 1; q < N; q++)
                if (post[q] > post[arg])
                    arg = q;
            if (job.best)
                hmmrt_fb_put_best(job, col0 + i, h.state_of[arg]);
            if (job.post) {
                float *row = job.post + (col0 + i) * job.t.n;
                for (int v = 0; v < job.t.n; v++)
                    row[v] = 0;
#pragma unroll
                for (int q = 0; q < N; q++)
                    if (h.state_of[q] >= 0)
                        row[h.state_of[q]] = post[q];
            }
        } else {
#pragma unroll
            for (int q = 0; q < N; q++) {
#pragma unroll
                for (int k = 0; k < KB; k++)
                    emit[q][k] += k == sym ? post[q] : 0.0f;
                if (i == L)
                    last[q] += post[q];
                if (i == 1)
                    first[q] += post[q];
            }
        }
        if (i == 1)
            break;
        /* what a move into q at position i carries on, then column i - 1 */
        const float *e = et + sym * N;
        const float inv_scale = ldexpf(1.0f, -ex);
        float carry[N];
#pragma unroll
        for (int q = 0; q < N; q++)
            carry[q] = e[q] * b[q] * inv_scale;
        hmmrt_fb_unpack<R>(before, record);
#pragma unroll
        for (int v = 0; v < R / 4; v++)
            if (i > 2)
                before[v] = f[(i - 2) * stride * (R / 4) + v];
#pragma unroll
        for (int p = 0; p < N; p++)
            a[p] = record[p];
        ex = __float_as_int(record[N]);
#pragma unroll
        for (int p = 0; p < N; p++) {
            float h_p = 0;
#pragma unroll
            for (int q = 0; q < N; q++) {
                const float step = h.a[p * N + q] * carry[q];
                h_p += step;
                if (!POSTERIOR)
                    xi[p][q] += a[p] * step * inv_p;
            }
            b[p] = h_p;
        }
        if (!POSTERIOR && (L - i + 1) % HMMRT_FB_HMM_FLUSH == 0)
            hmmrt_fb_hmm_flush<N, KB>(job, xi, first, last, emit);
    }
    if (!POSTERIOR)
        hmmrt_fb_hmm_flush<N, KB>(job, xi, first, last, emit);
    return lnp;
}

template <int N, int KB, bool POSTERIOR> __global__ void hmmrt_fb_hmm_kernel(const hmmrt_fb_gpu_job job)
{
    const hmmrt_fb_hmm &h = job.t.hmm;
    __shared__ float et[KB * N]; /* et[k * N + q]: state q's emission value of symbol k */
    for (int v = threadIdx.x; v < KB * N; v += blockDim.x) {
        const int k = v / N, q = v % N;
        et[v] = h.table_of[q] >= 0 && k < job.t.K ? job.t.e[h.table_of[q] * job.t.K + k] : 0.0f;
    }
    __syncthreads();
    const int64_t threads = (int64_t)gridDim.x * blockDim.x;
    for (int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; s < job.n_seqs; s += threads)
        job.lnp[s] = hmmrt_fb_hmm_sequence<N, KB, POSTERIOR>(job, s, et);
}

template <int N, int KB> static int hmmrt_fb_launch_hmm(const hmmrt_fb_gpu_job *job)
{
    if (job->posterior)
        hmmrt_fb_hmm_kernel<N, KB, true><<<job->grid, job->block, 0, (cudaStream_t)job->stream>>>(*job);
    else
        hmmrt_fb_hmm_kernel<N, KB, false><<<job->grid, job->block, 0, (cudaStream_t)job->stream>>>(*job);
    return (int)cudaGetLastError();
}

/* The instantiations: N x KB <= 64 (registers for the emission counts). */
int hmmrt_fb_hmm_launch(const hmmrt_fb_gpu_job *job)
{
    const int N = job->t.hmm.N, KB = job->t.hmm.KB;
    if (N == 2 && KB <= 8)
        return hmmrt_fb_launch_hmm<2, 8>(job);
    if (N == 2)
        return hmmrt_fb_launch_hmm<2, 32>(job);
    if (N == 4 && KB <= 4)
        return hmmrt_fb_launch_hmm<4, 4>(job);
    if (N == 4 && KB <= 8)
        return hmmrt_fb_launch_hmm<4, 8>(job);
    if (N == 4)
        return hmmrt_fb_launch_hmm<4, 16>(job);
    if (KB <= 4)
        return hmmrt_fb_launch_hmm<8, 4>(job);
    return hmmrt_fb_launch_hmm<8, 8>(job);
}

