/* hmmrt_dense.cuh: the GPU side of dense models (hmmc's dense shape),
 * included by the .cu files hmmc writes. The code is the same for every
 * dense model: the generated launcher passes the model's matrix
 * (hmmrt_dense, in the .c file) and a call's algorithm.
 *
 * A batch of B sequences, sorted longest first, is scored position by
 * position; the sequences still running at a position are the first rows.
 * Each position is one matrix product over them:
 *     out[r][j] = SUM_k in[r][k] * T[k][j]    (forward: probabilities)
 *     out[r][j] = MAX_k in[r][k] + T[k][j]    (viterbi: logs)
 * tiled through shared memory (hmmc_dense_product), or for sums in float
 * through cuBLAS (TF32 on the tensor cores, or FP32: runtime/gpu/cublas_dl.c,
 * which loads it at run time; the emission then multiplies in the row
 * kernel), then one block per row
 * (hmmc_dense_rows) brings the row back to a best value of 1 (forward: by a
 * power of two, exact) or 0 (viterbi: the offset kept in double), and
 * finishes the sequences that end there. Backward is the same product with
 * the matrix transposed, run from each sequence's end. Viterbi keeps back
 * pointers of 16 (or 32) bits: the model state each best move came from. */
#ifndef HMMRT_DENSE_CUH
#define HMMRT_DENSE_CUH

#ifdef HMMC_HOST_EMULATION
/* tests/emulate runs the kernels hmmc writes, not these (the same for every
 * dense model): a dense call's launcher answers that it is not emulated. */
#include "hmmrt_gpu.h"
enum { HMMC_DENSE_FORWARD, HMMC_DENSE_BACKWARD, HMMC_DENSE_VITERBI };
struct hmmc_dense_device {};
enum { HMMC_DENSE_DEVICES = 64 };
template <typename real>
static int hmmc_dense_run(const hmmrt_dense *, int, hmmc_dense_device *, const hmmrt_gpu_batch *, int)
{
    return HMMC_NOT_EMULATED;
}
static void hmmc_dense_describe(const hmmrt_dense *, int, char *buf, size_t len)
{
    snprintf(buf, len, "dense, not emulated");
}
#else

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/dense_choice.h"
#include "gpu/dense_steps.h"
#include "gpu/dense_tf32.h"

enum { HMMC_DENSE_FORWARD, HMMC_DENSE_BACKWARD, HMMC_DENSE_VITERBI };

/* The semirings of the product. */
struct hmmc_sum_product {
    template <typename real> __device__ static real zero() { return (real)0; }
    template <typename real> __device__ static real times(real a, real b) { return a * b; }
};
struct hmmc_max_plus {
    template <typename real> __device__ static real zero() { return (real)-INFINITY; }
    template <typename real> __device__ static real times(real a, real b) { return a + b; }
};

/* Where a row's residues are, and its back pointers. */
struct hmmc_dense_rows_info {
    const uint8_t *codes;
    const int64_t *offsets, *lengths, *bp_offsets;
    void *bp;
    int bp_bytes;
    int n_states, start, end;
    const int *state_of; /* device */
};

__device__ __forceinline__ void hmmc_dense_set_bp(const hmmc_dense_rows_info &in, int row,
                                                  int64_t pos, int state, int from)
{
    size_t cell = (size_t)in.bp_offsets[row] + (size_t)pos * in.n_states + state;
    if (in.bp_bytes == 2)
        ((uint16_t *)in.bp)[cell] = (uint16_t)from;
    else
        ((uint32_t *)in.bp)[cell] = (uint32_t)from;
}

/* One position of `rows` sequences: out = in (x) matrix, each thread TM x TN
 * outputs of a BM x BN tile, BK sources at a time through shared memory.
 * With emission (forward, viterbi) the outputs are multiplied by the
 * emission of the row's residue at position t; with track (viterbi
 * tracebacks) back pointers of position t + 1 are stored. */
template <typename real, typename S, int BM, int BN, int BK, int TM, int TN, bool track>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
hmmc_dense_product(int rows, int n, const real *__restrict__ in, const real *__restrict__ matrix,
                   const real *__restrict__ emission, real *__restrict__ out, int64_t t,
                   hmmc_dense_rows_info info)
{
    constexpr int THREADS = (BM / TM) * (BN / TN);
    __shared__ real a_tile[BK][BM];
    __shared__ real b_tile[BK][BN];
    const int tx = threadIdx.x % (BN / TN), ty = threadIdx.x / (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    real acc[TM][TN];
    int from[track ? TM : 1][track ? TN : 1];
    for (int i = 0; i < TM; i++)
        for (int j = 0; j < TN; j++) {
            acc[i][j] = S::template zero<real>();
            if (track)
                from[track ? i : 0][track ? j : 0] = -1;
        }
    for (int k0 = 0; k0 < n; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += THREADS) {
            const int r = i / BK, k = i % BK;
            a_tile[k][r] = row0 + r < rows && k0 + k < n ? in[(size_t)(row0 + r) * n + k0 + k]
                                                         : S::template zero<real>();
        }
        for (int i = threadIdx.x; i < BN * BK; i += THREADS) {
            const int k = i / BN, c = i % BN;
            b_tile[k][c] = col0 + c < n && k0 + k < n ? matrix[(size_t)(k0 + k) * n + col0 + c]
                                                      : S::template zero<real>();
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            real a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++)
                a[i] = a_tile[k][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; j++)
                b[j] = b_tile[k][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) {
                    if (track) {
                        const real v = a[i] + b[j];
                        if (v > acc[i][j]) {
                            acc[i][j] = v;
                            from[track ? i : 0][track ? j : 0] = k0 + k;
                        }
                    } else if (S::template zero<real>() == (real)0) {
                        acc[i][j] = fma(a[i], b[j], acc[i][j]);
                    } else {
                        acc[i][j] = fmax(acc[i][j], a[i] + b[j]);
                    }
                }
        }
        __syncthreads();
    }
    for (int i = 0; i < TM; i++) {
        const int r = row0 + ty * TM + i;
        if (r >= rows)
            break;
        const int code = emission ? info.codes[info.offsets[r] + t] : 0;
        for (int j = 0; j < TN; j++) {
            const int c = col0 + tx * TN + j;
            if (c >= n)
                break;
            real v = acc[i][j];
            if (emission)
                v = S::times(v, emission[(size_t)code * n + c]);
            out[(size_t)r * n + c] = v;
            if (track && from[track ? i : 0][track ? j : 0] >= 0)
                hmmc_dense_set_bp(info, r, t + 1, info.state_of[c],
                                  info.state_of[from[track ? i : 0][track ? j : 0]]);
        }
    }
}

/* The best (value, index) of a block, lower index on a tie; every thread
 * gets it. partial: 64 values of shared memory in all. */
template <typename real>
__device__ void hmmc_block_argmax(real &value, int &index, real *partial_v, int *partial_i)
{
    hmmc_warp_argmax(value, index);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0) {
        partial_v[warp] = value;
        partial_i[warp] = index;
    }
    __syncthreads();
    if (warp == 0) {
        const int warps = (blockDim.x + 31) / 32;
        value = lane < warps ? partial_v[lane] : (real)-INFINITY;
        index = lane < warps ? partial_i[lane] : -1;
        hmmc_warp_argmax(value, index);
        if (lane == 0) {
            partial_v[0] = value;
            partial_i[0] = index;
        }
    }
    __syncthreads();
    value = partial_v[0];
    index = partial_i[0];
}

/* The first position of each running row: start (x) emission of its first
 * residue (forward, viterbi), or the end vector (backward). */
template <typename real>
__global__ void hmmc_dense_first(int rows, int n, int alg, const real *__restrict__ start,
                                 const real *__restrict__ end, const real *__restrict__ emission,
                                 real *__restrict__ out, hmmc_dense_rows_info info)
{
    const size_t cells = (size_t)rows * n;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < cells;
         i += (size_t)gridDim.x * blockDim.x) {
        const int r = (int)(i / n), j = (int)(i % n);
        if (alg == HMMC_DENSE_BACKWARD) {
            out[(size_t)r * n + j] = end[j];
            continue;
        }
        const real e = emission[(size_t)info.codes[info.offsets[r]] * n + j];
        out[(size_t)r * n + j] = alg == HMMC_DENSE_VITERBI ? start[j] + e : start[j] * e;
        if (info.bp && start[j] > (real)-INFINITY)
            hmmc_dense_set_bp(info, r, 1, info.state_of[j], info.start);
    }
}

/* After the product of step t (t = 0 for the first position): one block per
 * running row brings its best value back to 1 or 0, marks float rows whose
 * values spread beyond what float holds, and finishes the rows whose last
 * position this is. Backward also multiplies the row by the emission of the
 * residue before it, ready for the next step. */
template <typename real>
__global__ void hmmc_dense_rows(int n, int alg, int64_t t, const real *__restrict__ start,
                                const real *__restrict__ end, const real *__restrict__ emission,
                                real *__restrict__ rows_values, double *__restrict__ shift,
                                unsigned char *__restrict__ risky, void *scores, int use_double,
                                hmmc_dense_rows_info info, bool emit_first,
                                const int64_t *__restrict__ t_base)
{
    __shared__ real partial_v[32];
    __shared__ int partial_i[32];
    if (t_base) /* in a CUDA graph: t counts from the stretch's first position */
        t += *t_base;
    const int r = blockIdx.x;
    real *row = rows_values + (size_t)r * n;
    const int64_t L = info.lengths[r];
    if (emit_first) { /* forward after cuBLAS's product: the emission of residue t */
        const int code = info.codes[info.offsets[r] + t];
        for (int j = threadIdx.x; j < n; j += blockDim.x)
            row[j] *= emission[(size_t)code * n + j];
    }
    real best = (real)-INFINITY;
    for (int j = threadIdx.x; j < n; j += blockDim.x)
        best = row[j] > best ? row[j] : best;
    best = hmmc_block_max(best, partial_v);
    const bool viterbi = alg == HMMC_DENSE_VITERBI;
    /* forward and backward: scale by 2^-e so that the best value is in [0.5, 1) */
    int exponent = 0;
    if (!viterbi && best > (real)0)
        frexp(best, &exponent);
    const bool dead = viterbi ? !(best > (real)-INFINITY) : !(best > (real)0);
    bool risk = false;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        real v = row[j];
        if (dead)
            break;
        if (viterbi) {
            v -= best;
        } else {
            v = ldexp(v, -exponent);
            /* float keeps about 2^-126 below the best: a value this far down may
               be a path that double would keep and that later matters */
            if (sizeof(real) == sizeof(float) && v > (real)0 && v < (real)0x1p-100)
                risk = true;
        }
        row[j] = v;
    }
    risk = __syncthreads_or(risk);
    if (threadIdx.x == 0) {
        if (!dead)
            shift[r] += viterbi ? (double)best : (double)exponent;
        if (risk)
            risky[r] = 1;
    }
    const bool last = t == L - 1;
    if (alg == HMMC_DENSE_BACKWARD && !dead) {
        /* this column is position L - t (1-based); the move into it emitted
           x[L - t - 1] (0-based): at the last step the first residue, whose
           emission the start move takes */
        const int code = info.codes[info.offsets[r] + (L - t - 1)];
        for (int j = threadIdx.x; j < n; j += blockDim.x)
            row[j] *= emission[(size_t)code * n + j];
    }
    __syncthreads();
    if (!last)
        return;
    /* the end: a sum (forward, backward) or the best (viterbi) */
    const real *w = alg == HMMC_DENSE_BACKWARD ? start : end;
    real total = viterbi ? (real)-INFINITY : (real)0;
    int where = -1;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        if (viterbi) {
            const real v = row[j] + w[j];
            if (v > total) {
                total = v;
                where = j;
            }
        } else {
            total += row[j] * w[j];
        }
    }
    if (viterbi) {
        hmmc_block_argmax(total, where, partial_v, partial_i);
    } else {
        total = hmmc_block_sum(total, partial_v);
    }
    if (threadIdx.x == 0) {
        double score = dead ? -INFINITY
                       : viterbi ? (total > (real)-INFINITY ? (double)total + shift[r] : -INFINITY)
                       : (total > (real)0 ? log((double)total) + shift[r] * 0.69314718055994530942
                                          : -INFINITY);
        if (risky[r] && !use_double)
            score = NAN; /* the runtime scores it again in double */
        if (viterbi && info.bp && where >= 0 && !dead)
            hmmc_dense_set_bp(info, r, L, info.end, info.state_of[where]);
        if (use_double)
            ((double *)scores)[r] = score;
        else
            ((float *)scores)[r] = (float)score;
    }
}

/* hmmc_dense_rows for forward and backward where a row fits in registers
 * (n <= PER x blockDim.x): the same products in the same order, the row read
 * and written once (the loops above read it up to five times). */
template <typename real, int PER>
__global__ void hmmc_dense_rows_sums(int n, int alg, int64_t t, const real *__restrict__ start,
                                     const real *__restrict__ end,
                                     const real *__restrict__ emission,
                                     real *__restrict__ rows_values, double *__restrict__ shift,
                                     unsigned char *__restrict__ risky, void *scores,
                                     int use_double, hmmc_dense_rows_info info, bool emit_first,
                                     const int64_t *__restrict__ t_base)
{
    __shared__ real partial_v[32];
    if (t_base) /* in a CUDA graph: t counts from the stretch's first position */
        t += *t_base;
    const int r = blockIdx.x;
    real *row = rows_values + (size_t)r * n;
    const int64_t L = info.lengths[r];
    const int code = emit_first ? info.codes[info.offsets[r] + t] : 0;
    real v[PER];
    real best = (real)-INFINITY;
#pragma unroll
    for (int k = 0; k < PER; k++) {
        const int j = threadIdx.x + k * blockDim.x;
        v[k] = (real)0;
        if (j < n) {
            v[k] = emit_first ? row[j] * emission[(size_t)code * n + j] : row[j];
            best = v[k] > best ? v[k] : best;
        }
    }
    best = hmmc_block_max(best, partial_v);
    int exponent = 0; /* scale by 2^-e so that the best value is in [0.5, 1) */
    if (best > (real)0)
        frexp(best, &exponent);
    const bool dead = !(best > (real)0);
    bool risk = false;
    if (!dead) {
        const int before = alg == HMMC_DENSE_BACKWARD
                               ? info.codes[info.offsets[r] + (L - t - 1)] : 0;
#pragma unroll
        for (int k = 0; k < PER; k++) {
            const int j = threadIdx.x + k * blockDim.x;
            if (j >= n)
                break;
            v[k] = ldexp(v[k], -exponent);
            if (sizeof(real) == sizeof(float) && v[k] > (real)0 && v[k] < (real)0x1p-100)
                risk = true;
            if (alg == HMMC_DENSE_BACKWARD)
                v[k] *= emission[(size_t)before * n + j]; /* ready for the next step */
            row[j] = v[k];
        }
    }
    risk = __syncthreads_or(risk);
    if (threadIdx.x == 0) {
        if (!dead)
            shift[r] += (double)exponent;
        if (risk)
            risky[r] = 1;
    }
    if (t != L - 1)
        return;
    /* the end: the row as written against the end (or, backward, start) weights;
       a dead row's total is not used */
    const real *w = alg == HMMC_DENSE_BACKWARD ? start : end;
    real total = (real)0;
#pragma unroll
    for (int k = 0; k < PER; k++) {
        const int j = threadIdx.x + k * blockDim.x;
        if (j < n)
            total += v[k] * w[j];
    }
    total = hmmc_block_sum(total, partial_v);
    if (threadIdx.x == 0) {
        double score = dead ? -INFINITY
                       : (total > (real)0 ? log((double)total) + shift[r] * 0.69314718055994530942
                                          : -INFINITY);
        if (risky[r] && !use_double)
            score = NAN; /* the runtime scores it again in double */
        if (use_double)
            ((double *)scores)[r] = score;
        else
            ((float *)scores)[r] = (float)score;
    }
}

/* Rows of the empty sequences: the start -> end weight. */
__global__ void hmmc_dense_empty(int first, int rows, double start_end, void *scores,
                                 int use_double, hmmc_dense_rows_info info)
{
    const int r = first + blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    if (use_double)
        ((double *)scores)[r] = start_end;
    else
        ((float *)scores)[r] = (float)start_end;
    if (info.bp && start_end > -INFINITY)
        hmmc_dense_set_bp(info, r, 0, info.end, info.start);
}

/* A call's model on the device, in each precision, uploaded on first use. */
enum { HMMC_DENSE_DEVICES = 64 }; /* GPUs one process may use (--devices) */
struct hmmc_dense_device {
    void *matrix[2], *start[2], *end[2], *emission[2];
    int *state_of;
    void *blas;     /* forward and backward in float: cuBLAS's handle, or NULL: the tiles */
    int blas_asked; /* ... once */
    int mode;       /* ... its product (hmmrt_dense_choose), chosen at the upload */
    float *hi, *lo; /* HMMRT_DENSE_TF32X2: the float matrix's TF32 parts */
};

/* The float matrix's TF32 parts (gpu/dense_tf32.h), for HMMRT_DENSE_TF32X2. */
__global__ void hmmc_dense_split_tf32(int64_t cells, const float *__restrict__ matrix,
                                      float *__restrict__ hi, float *__restrict__ lo)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < cells;
         i += (int64_t)gridDim.x * blockDim.x)
        hmmrt_tf32_split(matrix[i], &hi[i], &lo[i]);
}

/* Forward and backward in float: the product's mode for this model, and for
 * TF32X2 the matrix's parts beside it. cudaSuccess or an error. */
static cudaError_t hmmc_dense_choose_product(const hmmrt_dense *d, hmmc_dense_device *dev,
                                             const float *matrix)
{
    char why[256];
    dev->mode = hmmrt_dense_choose(d, why, sizeof why);
    if (dev->mode != HMMRT_DENSE_TF32X2 || dev->hi)
        return cudaSuccess;
    const size_t nn = (size_t)d->n * (size_t)d->n;
    float *parts = NULL;
    cudaError_t err = cudaMalloc((void **)&parts, 2 * nn * sizeof(float));
    if (err != cudaSuccess) { /* no room for the parts: FP32 keeps the contract without them */
        cudaGetLastError();
        dev->mode = HMMRT_DENSE_FP32;
        return cudaSuccess;
    }
    const size_t blocks = (nn + 255) / 256;
    hmmc_dense_split_tf32<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256>>>((int64_t)nn, matrix,
                                                                              parts, parts + nn);
    if ((err = cudaGetLastError()) == cudaSuccess)
        err = cudaStreamSynchronize(0); /* the legacy stream's: the calls' streams read them */
    if (err != cudaSuccess) {
        cudaFree(parts);
        return err;
    }
    dev->hi = parts;
    dev->lo = parts + nn;
    return cudaSuccess;
}

/* The float model from its natural logs, on the GPU: weights[] holds the
 * matrix (n x n), the emission (K x n), start and end (n each) as the
 * generated .c file has them; out the same, exponentiated in double and
 * rounded to float (logs: only rounded), the matrix transposed for backward.
 * The host's exp over a 1,024-state matrix took 5 to 16 ms of the first
 * call's time (the GPU idle meanwhile); this takes microseconds. */
__global__ void hmmc_dense_convert(int64_t n, int64_t cells, bool transpose, bool logs,
                                   const double *__restrict__ weights, float *__restrict__ out)
{
    const int64_t nn = n * n;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < cells;
         i += (int64_t)gridDim.x * blockDim.x) {
        /* out[k * n + j] is k -> j; backward reads j -> k there */
        const double w = transpose && i < nn ? weights[(i % n) * n + i / n] : weights[i];
        out[i] = (float)(logs ? w : exp(w));
    }
}

/* hmmc_dense_upload in float: the weights copied as they are (doubles) and
 * converted by hmmc_dense_convert. The conversion is the host's (float)exp(w)
 * but for CUDA's exp, within an ulp of double: in float the same values. */
static cudaError_t hmmc_dense_upload_float(const hmmrt_dense *d, bool transpose, bool logs,
                                           float *dv)
{
    const size_t n = (size_t)d->n, nn = n * n, nk = n * (size_t)d->K;
    const size_t cells = nn + nk + 2 * n;
    double *weights = NULL; /* stream-ordered: cudaFree would wait for the other calls' work */
    cudaError_t err = cudaMallocAsync((void **)&weights, sizeof(double) * cells, 0);
    if (err == cudaSuccess)
        err = cudaMemcpy(weights, d->matrix, sizeof(double) * nn, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(weights + nn, d->emission, sizeof(double) * nk, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(weights + nn + nk, d->start_w, sizeof(double) * n,
                         cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(weights + nn + nk + n, d->end_w, sizeof(double) * n,
                         cudaMemcpyHostToDevice);
    if (err == cudaSuccess) {
        const size_t blocks = (cells + 255) / 256;
        hmmc_dense_convert<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, 0>>>(
            (int64_t)n, (int64_t)cells, transpose, logs, weights, dv);
        err = cudaGetLastError();
    }
    if (weights)
        cudaFreeAsync(weights, 0);
    /* the legacy stream's work (the slots' streams do not wait for it) done
       before the call's stream reads dv */
    const cudaError_t synced = cudaStreamSynchronize(0);
    return err != cudaSuccess ? err : synced;
}

/* The device's pointers into dv (matrix, emission, start, end), and the
 * model's state numbers. */
template <typename real>
static cudaError_t hmmc_dense_uploaded(const hmmrt_dense *d, hmmc_dense_device *dev, int p,
                                       real *dv)
{
    const size_t n = (size_t)d->n, nn = n * n, nk = n * (size_t)d->K;
    cudaError_t err = cudaSuccess;
    dev->matrix[p] = dv;
    dev->emission[p] = dv + nn;
    dev->start[p] = dv + nn + nk;
    dev->end[p] = dv + nn + nk + n;
    if (!dev->state_of) {
        err = cudaMalloc((void **)&dev->state_of, sizeof(int) * n);
        if (err == cudaSuccess)
            err = cudaMemcpy(dev->state_of, d->state_of, sizeof(int) * n, cudaMemcpyHostToDevice);
    }
    return err;
}

template <typename real>
static cudaError_t hmmc_dense_upload(const hmmrt_dense *d, int alg, hmmc_dense_device *dev,
                                     int p)
{
    const size_t n = (size_t)d->n, nn = n * n, nk = n * (size_t)d->K;
    const bool logs = alg == HMMC_DENSE_VITERBI;
    real *dv = NULL;
    cudaError_t err = cudaSuccess;
    if (sizeof(real) == sizeof(float)) {
        /* float: converted on the GPU (double keeps the host's exp, bit for bit
           the CPU path's weights, which --double is held to); where that fails
           (no stream-ordered allocator, say), on the host as double does */
        if ((err = cudaMalloc((void **)&dv, sizeof(real) * (nn + nk + 2 * n))) != cudaSuccess)
            return err;
        if (hmmc_dense_upload_float(d, alg == HMMC_DENSE_BACKWARD, logs, (float *)dv) ==
            cudaSuccess) {
            err = hmmc_dense_uploaded<real>(d, dev, p, dv);
            if (err == cudaSuccess && !logs)
                err = hmmc_dense_choose_product(d, dev, (const float *)dv);
            return err;
        }
        cudaFree(dv);
        cudaGetLastError(); /* a sticky error fails the host's upload below too */
        dv = NULL;
    }
    real *host = (real *)malloc(sizeof(real) * (nn + nk + 2 * n));
    if (!host)
        return cudaErrorMemoryAllocation;
    /* backward reads the matrix transposed: out[r][k] = SUM_j in[r][j] T[k][j] */
    for (size_t k = 0; k < n; k++)
        for (size_t j = 0; j < n; j++) {
            const double w = alg == HMMC_DENSE_BACKWARD ? d->matrix[j * n + k] : d->matrix[k * n + j];
            host[k * n + j] = (real)(logs ? w : exp(w));
        }
    for (size_t i = 0; i < nk; i++)
        host[nn + i] = (real)(logs ? d->emission[i] : exp(d->emission[i]));
    for (size_t j = 0; j < n; j++) {
        host[nn + nk + j] = (real)(logs ? d->start_w[j] : exp(d->start_w[j]));
        host[nn + nk + n + j] = (real)(logs ? d->end_w[j] : exp(d->end_w[j]));
    }
    err = cudaMalloc((void **)&dv, sizeof(real) * (nn + nk + 2 * n));
    if (err == cudaSuccess)
        err = cudaMemcpy(dv, host, sizeof(real) * (nn + nk + 2 * n), cudaMemcpyHostToDevice);
    free(host);
    if (err != cudaSuccess)
        return err;
    err = hmmc_dense_uploaded<real>(d, dev, p, dv);
    if (err == cudaSuccess && !logs && sizeof(real) == sizeof(float))
        err = hmmc_dense_choose_product(d, dev, (const float *)dv);
    return err;
}

/* The product of one step, in the tile that keeps the GPU busy: 128 x 128
 * tiles (8 x 8 outputs a thread) when there are enough of them, else 64 x 64
 * (4 x 4 a thread); tracebacks always take the smaller tile, whose back
 * pointers fit in registers. */
template <typename real, typename S, bool track>
struct hmmc_dense_big_tile {
    /* false when 128 x 128 tiles would leave multiprocessors idle */
    static bool launch(int rows, int n, const real *in, const real *matrix, const real *emission,
                       real *out, int64_t t, const hmmc_dense_rows_info &info, int sms,
                       cudaStream_t stream)
    {
        const long tiles = (long)((n + 127) / 128) * ((rows + 127) / 128);
        if (tiles < 2L * sms)
            return false;
        dim3 grid((n + 127) / 128, (rows + 127) / 128);
        hmmc_dense_product<real, S, 128, 128, 8, 8, 8, false>
            <<<grid, 256, 0, stream>>>(rows, n, in, matrix, emission, out, t, info);
        return true;
    }
};
template <typename real, typename S>
struct hmmc_dense_big_tile<real, S, true> {
    static bool launch(int, int, const real *, const real *, const real *, real *, int64_t,
                       const hmmc_dense_rows_info &, int, cudaStream_t)
    {
        return false;
    }
};

template <typename real, typename S, bool track>
static void hmmc_dense_product_launch(int rows, int n, const real *in, const real *matrix,
                                      const real *emission, real *out, int64_t t,
                                      const hmmc_dense_rows_info &info, int sms,
                                      cudaStream_t stream)
{
    if (hmmc_dense_big_tile<real, S, track>::launch(rows, n, in, matrix, emission, out, t, info,
                                                    sms, stream))
        return;
    dim3 grid((n + 63) / 64, (rows + 63) / 64);
    hmmc_dense_product<real, S, 64, 64, 16, 4, 4, track>
        <<<grid, 256, 0, stream>>>(rows, n, in, matrix, emission, out, t, info);
}

/* The step after a position's product: hmmc_dense_rows (or, for sums where a
 * row fits in registers, hmmc_dense_rows_sums) over the `active` rows. t_base:
 * NULL, or (in a CUDA graph) the device's count that t is added to. */
template <typename real>
static void hmmc_dense_rows_launch(int64_t active, int64_t n, int alg, int64_t t,
                                   const int64_t *t_base, const real *start, const real *end,
                                   const real *emission, real *cur, double *shift,
                                   unsigned char *risky, void *scores, int use_double,
                                   const hmmc_dense_rows_info &info, bool emit_first,
                                   cudaStream_t stream)
{
    const int row_threads = n >= 256 ? 256 : 128;
    if (alg != HMMC_DENSE_VITERBI && n <= 8 * row_threads)
        hmmc_dense_rows_sums<real, 8><<<(unsigned)active, row_threads, 0, stream>>>(
            (int)n, alg, t, start, end, emission, cur, shift, risky, scores, use_double, info,
            emit_first, t_base);
    else
        hmmc_dense_rows<real><<<(unsigned)active, row_threads, 0, stream>>>(
            (int)n, alg, t, start, end, emission, cur, shift, risky, scores, use_double, info,
            emit_first, t_base);
}

/* The position count of a CUDA graph (hmmc_dense_graph_positions). */
__global__ void hmmc_dense_set_position(int64_t *at, int64_t value, int64_t add)
{
    *at = add ? *at + add : value;
}

/* Forward and backward through cuBLAS, positions [t, t + P x replays) of
 * `active` rows, none of which ends before the last of them, P being
 * HMMRT_DENSE_GRAPH_POSITIONS (gpu/dense_steps.h): the launches of P
 * positions (cuBLAS's product, then the row step) captured once into a CUDA
 * graph, which the stream replays, the position read from the device
 * (*t_base, which the graph's last node advances). P is even, so cur and
 * next are where they were after each replay. The host's work a position
 * (about 10 us: cuBLAS's call and two launches, against 20 to 35 us of
 * kernels at 1,024 states) is paid once. cudaSuccess, or an error: of the
 * capture or the first replay's launch (*captured false: nothing ran, the
 * caller goes on with plain launches), or of a later replay. */
template <typename real>
static cudaError_t hmmc_dense_graph_positions(int64_t active, int64_t n, int alg, int64_t t,
                                              int64_t replays, int64_t *t_base, void *blas,
                                              const hmmc_dense_device *dev,
                                              const real *matrix, const real *start,
                                              const real *end, const real *emission, real *cur,
                                              real *next, double *shift, unsigned char *risky,
                                              void *scores, int use_double,
                                              const hmmc_dense_rows_info &info,
                                              void *workspace, size_t workspace_bytes,
                                              cudaStream_t stream, bool *captured)
{
    *captured = false;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    if (err != cudaSuccess)
        return err;
    int blas_status = 0;
    for (int k = 0; k < HMMRT_DENSE_GRAPH_POSITIONS && blas_status == 0; k++) {
        blas_status = hmmrt_cublas_dense_product(blas, stream, dev->mode, (int)active, (int)n,
                                                 (const float *)cur, (const float *)matrix,
                                                 dev->hi, dev->lo, (float *)next, workspace,
                                                 workspace_bytes);
        real *swap = cur;
        cur = next;
        next = swap;
        hmmc_dense_rows_launch<real>(active, n, alg, k, t_base, start, end, emission, cur, shift,
                                     risky, scores, use_double, info,
                                     alg == HMMC_DENSE_FORWARD, stream);
    }
    hmmc_dense_set_position<<<1, 1, 0, stream>>>(t_base, 0, HMMRT_DENSE_GRAPH_POSITIONS);
    cudaError_t launched = cudaGetLastError();
    err = cudaStreamEndCapture(stream, &graph);
    if (err == cudaSuccess && (blas_status != 0 || launched != cudaSuccess))
        err = blas_status != 0 ? cudaErrorNotSupported : launched;
    /* cuBLAS may allocate its workspace inside the graph: freed before each replay */
    if (err == cudaSuccess)
        err = cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);
    if (graph)
        cudaGraphDestroy(graph);
    hmmc_dense_set_position<<<1, 1, 0, stream>>>(t_base, t, 0);
    if (err == cudaSuccess && (err = cudaGetLastError()) == cudaSuccess)
        err = cudaGraphLaunch(exec, stream);
    if (err != cudaSuccess) { /* nothing of the graph ran: the plain launches go on from t */
        if (exec)
            cudaGraphExecDestroy(exec);
        cudaGetLastError(); /* a failed capture or launch leaves no sticky error */
        return err;
    }
    *captured = true; /* from here, an error is the call's */
    for (int64_t k = 1; k < replays && err == cudaSuccess; k++)
        err = cudaGraphLaunch(exec, stream);
    cudaGraphExecDestroy(exec); /* freed when its launches are done */
    return err;
}

/* Rows [first, first + rows) of a batch; lengths: theirs, on the host. */
template <typename real>
static cudaError_t hmmc_dense_chunk(const hmmrt_dense *d, int alg, const hmmc_dense_device *dev,
                                    const hmmrt_gpu_batch *b, int bp_bytes, int64_t first,
                                    int64_t rows, const int64_t *lengths, int sms, void *blas,
                                    bool graphs)
{
    /* graphs: forward and backward through cuBLAS as CUDA graphs
       (hmmc_dense_graph_positions) where HMMRT_DENSE_GRAPH allows */
    const int p = sizeof(real) == sizeof(double);
    const int64_t n = d->n;
    cudaStream_t stream = (cudaStream_t)b->stream;
    cudaError_t err = cudaSuccess;
    void *scores = (char *)b->scores + first * (b->use_double ? sizeof(double) : sizeof(float));
    hmmc_dense_rows_info info = {b->codes, b->offsets + first, b->lengths + first,
                                 b->bp_offsets ? b->bp_offsets + first : NULL,
                                 alg == HMMC_DENSE_VITERBI ? b->bp : NULL, bp_bytes,
                                 d->n_states, d->start, d->end, dev->state_of};
    int64_t running = 0; /* rows with a residue */
    while (running < rows && lengths[running] > 0)
        running++;
    if (running < rows)
        hmmc_dense_empty<<<(unsigned)((rows - running + 127) / 128), 128, 0, stream>>>(
            (int)running, (int)rows, d->start_end, scores, b->use_double, info);
    if (running == 0)
        return cudaGetLastError();
    real *columns = NULL;
    double *shift = NULL;
    unsigned char *risky = NULL;
    int64_t *t_base = NULL; /* the CUDA graphs' position */
    void *workspace = NULL; /* cublasLt's, where its tuned algorithm needs one */
    const size_t workspace_bytes = blas ? hmmrt_cublas_workspace((int)n) : 0;
    const size_t column_bytes = sizeof(real) * (size_t)running * (size_t)n;
    if ((err = cudaMallocAsync((void **)&columns, 2 * column_bytes, stream)) != cudaSuccess ||
        (err = cudaMallocAsync((void **)&shift, sizeof(double) * running, stream)) != cudaSuccess ||
        (err = cudaMallocAsync((void **)&risky, (size_t)running, stream)) != cudaSuccess ||
        (err = cudaMallocAsync((void **)&t_base, sizeof(int64_t), stream)) != cudaSuccess ||
        (workspace_bytes &&
         (err = cudaMallocAsync(&workspace, workspace_bytes, stream)) != cudaSuccess) ||
        (err = cudaMemsetAsync(shift, 0, sizeof(double) * running, stream)) != cudaSuccess ||
        (err = cudaMemsetAsync(risky, 0, (size_t)running, stream)) != cudaSuccess)
        return err;
    const real *matrix = (const real *)dev->matrix[p], *start = (const real *)dev->start[p],
               *end = (const real *)dev->end[p], *emission = (const real *)dev->emission[p];
    real *cur = columns, *next = columns + (size_t)running * n;
    graphs = graphs && blas;
    for (int64_t t = 0; t < lengths[0];) {
        const int64_t active = hmmrt_dense_active(lengths, running, t);
        /* positions before the next row ends: whole graphs of them where there are
           several (the rest, and everything when a capture fails, as launches) */
        const int64_t replays = graphs ? hmmrt_dense_replays(lengths, active, t) : 0;
        if (replays > 0) {
            bool captured = false;
            err = hmmc_dense_graph_positions<real>(active, n, alg, t, replays, t_base, blas,
                                                   dev, matrix, start, end, emission, cur, next,
                                                   shift, risky, scores, b->use_double, info,
                                                   workspace, workspace_bytes, stream,
                                                   &captured);
            if (captured && err != cudaSuccess)
                break;
            if (captured) {
                t += replays * HMMRT_DENSE_GRAPH_POSITIONS;
                continue;
            }
            hmmrt_dense_graphs_failed(cudaGetErrorString(err)); /* launches from here on */
            graphs = false;
            err = cudaSuccess;
        }
        if (t == 0) {
            const int64_t blocks = (active * n + 255) / 256;
            hmmc_dense_first<real><<<(unsigned)(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(
                (int)active, (int)n, alg, start, end, emission, cur, info);
        } else if (blas) { /* forward and backward in float: the emission comes after */
            if (hmmrt_cublas_dense_product(blas, stream, dev->mode, (int)active, (int)n,
                                           (const float *)cur, (const float *)matrix, dev->hi,
                                           dev->lo, (float *)next, workspace,
                                           workspace_bytes) != 0) {
                err = cudaErrorLaunchFailure; /* cuBLAS refused a product it took before */
                break;
            }
            real *swap = cur;
            cur = next;
            next = swap;
        } else {
            const real *em = alg == HMMC_DENSE_BACKWARD ? NULL : emission;
            if (alg == HMMC_DENSE_VITERBI && info.bp)
                hmmc_dense_product_launch<real, hmmc_max_plus, true>(
                    (int)active, (int)n, cur, matrix, em, next, t, info, sms, stream);
            else if (alg == HMMC_DENSE_VITERBI)
                hmmc_dense_product_launch<real, hmmc_max_plus, false>(
                    (int)active, (int)n, cur, matrix, em, next, t, info, sms, stream);
            else
                hmmc_dense_product_launch<real, hmmc_sum_product, false>(
                    (int)active, (int)n, cur, matrix, em, next, t, info, sms, stream);
            real *swap = cur;
            cur = next;
            next = swap;
        }
        const bool emit_first = blas && t > 0 && alg == HMMC_DENSE_FORWARD;
        hmmc_dense_rows_launch<real>(active, n, alg, t, NULL, start, end, emission, cur, shift,
                                     risky, scores, b->use_double, info, emit_first, stream);
        if ((err = cudaGetLastError()) != cudaSuccess)
            break;
        t++;
    }
    cudaFreeAsync(columns, stream);
    cudaFreeAsync(shift, stream);
    cudaFreeAsync(risky, stream);
    cudaFreeAsync(t_base, stream);
    if (workspace)
        cudaFreeAsync(workspace, stream);
    return err != cudaSuccess ? err : cudaGetLastError();
}

/* Runs a dense call on a batch (sorted longest first), in chunks of rows
 * whose two columns take at most 2 GB. Returns a cudaError_t. */
template <typename real>
static int hmmc_dense_run(const hmmrt_dense *d, int alg, hmmc_dense_device *devices,
                          const hmmrt_gpu_batch *b, int bp_bytes)
{
    const int p = sizeof(real) == sizeof(double);
    int device = 0, sms = 1;
    cudaGetDevice(&device);
    if (device < 0 || device >= HMMC_DENSE_DEVICES)
        return (int)cudaErrorInvalidDevice;
    hmmc_dense_device *dev = &devices[device]; /* this GPU's copy of the model (--devices) */
    cudaStream_t stream = (cudaStream_t)b->stream;
    cudaError_t err = cudaSuccess;
    if (!dev->matrix[p] && (err = hmmc_dense_upload<real>(d, alg, dev, p)) != cudaSuccess)
        return (int)err;
    if (b->n == 0)
        return 0;
    int64_t *lengths = (int64_t *)malloc(sizeof(int64_t) * (size_t)b->n);
    if (!lengths)
        return (int)cudaErrorMemoryAllocation;
    if ((err = cudaMemcpyAsync(lengths, b->lengths, sizeof(int64_t) * b->n,
                               cudaMemcpyDeviceToHost, stream)) != cudaSuccess ||
        (err = cudaStreamSynchronize(stream)) != cudaSuccess) {
        free(lengths);
        return (int)err;
    }
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    /* forward and backward in float through cuBLAS where it is found */
    const bool sums = alg != HMMC_DENSE_VITERBI && sizeof(real) == sizeof(float);
    if (sums && !dev->blas_asked) {
        dev->blas_asked = 1;
        dev->blas = hmmrt_cublas_handle();
    }
    int64_t chunk = (int64_t)(((size_t)2 << 30) / (2 * sizeof(real) * (size_t)d->n));
    if (chunk < 1)
        chunk = 1;
    for (int64_t first = 0; first < b->n && err == cudaSuccess; first += chunk) {
        const int64_t rows = b->n - first < chunk ? b->n - first : chunk;
        err = hmmc_dense_chunk<real>(d, alg, dev, b, bp_bytes, first, rows, lengths + first, sms,
                                     sums ? dev->blas : NULL, hmmrt_dense_graphs(NULL) != 0);
    }
    free(lengths);
    return (int)err;
}

/* The plan line of --timing for a dense call: the large tile's kernel (the
 * one long runs use), its 256 threads, registers and occupancy. */
static void hmmc_dense_describe(const hmmrt_dense *d, int use_double, char *buf, size_t len)
{
    const void *kernel = use_double
        ? (const void *)hmmc_dense_product<double, hmmc_max_plus, 128, 128, 8, 8, 8, false>
        : (const void *)hmmc_dense_product<float, hmmc_max_plus, 128, 128, 8, 8, 8, false>;
    struct cudaFuncAttributes attr;
    int device = 0, blocks = 0, most = 1;
    if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, 256, 0) != cudaSuccess) {
        snprintf(buf, len, "dense (no attributes: %s)", cudaGetErrorString(cudaGetLastError()));
        return;
    }
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&most, cudaDevAttrMaxThreadsPerMultiProcessor, device);
    char why[256] = "";
    const int mode = use_double ? HMMRT_DENSE_TILES : hmmrt_dense_choose(d, why, sizeof why);
    char sums[768];
    const int chunks = hmmrt_dense_product_chunks(d->n);
    char parts[64] = "";
    if (chunks > 1)
        snprintf(parts, sizeof parts, " in %d chunks of states", chunks);
    snprintf(sums, sizeof sums, "%s%s%s%s%s",
             mode == HMMRT_DENSE_TF32     ? "forward and backward: cuBLAS, TF32 on the tensor cores"
             : mode == HMMRT_DENSE_TF32X2 ? "forward and backward: cuBLAS, TF32 x 2 (the matrix "
                                            "as hi + lo) on the tensor cores"
             : mode == HMMRT_DENSE_FP32   ? "forward and backward: cuBLAS, FP32"
                                          : "forward and backward: the tiles",
             mode == HMMRT_DENSE_TF32 || mode == HMMRT_DENSE_TF32X2 ? parts : "",
             why[0] ? " (" : "", why, why[0] ? ")" : "");
    if (mode != HMMRT_DENSE_TILES) {
        const char *no_graph = NULL;
        const int graphs = hmmrt_dense_graphs(&no_graph);
        size_t at = strlen(sums);
        if (graphs)
            snprintf(sums + at, sizeof sums - at, ", CUDA graphs of %d positions, ",
                     (int)HMMRT_DENSE_GRAPH_POSITIONS);
        else
            snprintf(sums + at, sizeof sums - at, ", no CUDA graphs (%s), ", no_graph);
        at = strlen(sums);
        hmmrt_cublas_describe(sums + at, sizeof sums - at);
    }
    snprintf(buf, len,
             "dense, %d x %d matrix, one product per position; viterbi: tiles of 128 x 128 "
             "(8 x 8 a thread; 64 x 64 for small batches and tracebacks), block 256, %d "
             "registers, %zu bytes shared, %zu local, occupancy %.0f%%; %s",
             d->n, d->n, attr.numRegs, attr.sharedSizeBytes, attr.localSizeBytes,
             100.0 * blocks * 256 / most, sums);
}

#endif /* HMMC_HOST_EMULATION */

#endif
