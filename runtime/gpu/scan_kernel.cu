/* scan_kernel.cu: the GPU scan's kernel (issue 24, docs/scan.md): one thread
 * per (chunk, boundary state) runs the chunk from that state alone through
 * the symbols' matrices (held in shared memory), the arithmetic of
 * scan_chunk.h, and writes the chunk's transfer column. A template per
 * boundary-state count, so that the columns stay in registers. */
#include "scan_chunk.h" /* runtime/ */
#include "scan_gpu.h"

#include <cuda_runtime.h>

/* scan_chunk.h's thread of each type under one name, for the template. */
__device__ __forceinline__ void scan_thread(int nb, const float *m, const int *me,
                                            const double *mo, const hmmrt_scan_gpu_job &job,
                                            int64_t t)
{
    hmmrt_scan_thread_f(nb, m, me, mo, job.max_plus, job.backward, job.codes, job.len, job.chunk,
                        t, (float *)job.out, job.out_scale, job.status);
}
__device__ __forceinline__ void scan_thread(int nb, const double *m, const int *me,
                                            const double *mo, const hmmrt_scan_gpu_job &job,
                                            int64_t t)
{
    hmmrt_scan_thread_d(nb, m, me, mo, job.max_plus, job.backward, job.codes, job.len, job.chunk,
                        t, (double *)job.out, job.out_scale, job.status);
}

template <int NB, typename real>
__global__ void scan_transfers(const hmmrt_scan_gpu_job job)
{
    extern __shared__ double shared_store[]; /* double: aligned for either type */
    real *m = (real *)shared_store;
    const int K = job.n_symbols, cells = K * NB * NB;
    int *me = (int *)((char *)shared_store + (cells * sizeof(real) + 7) / 8 * 8);
    double *mo = (double *)((char *)me + (K * sizeof(int) + 7) / 8 * 8);
    for (int k = threadIdx.x; k < cells; k += blockDim.x)
        m[k] = ((const real *)job.m)[k];
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        if (job.max_plus)
            mo[k] = job.mo[k];
        else
            me[k] = job.me[k];
    }
    __syncthreads();
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < job.n_chunks * NB)
        scan_thread(NB, m, me, mo, job, t);
}

template <int NB, typename real>
static cudaError_t launch_one(const hmmrt_scan_gpu_job *job)
{
    int64_t threads = job->n_chunks * NB;
    unsigned blocks = (unsigned)((threads + HMMRT_SCAN_GPU_BLOCK - 1) / HMMRT_SCAN_GPU_BLOCK);
    size_t shared = hmmrt_scan_gpu_shared(NB, job->n_symbols, job->use_double);
    scan_transfers<NB, real><<<blocks, HMMRT_SCAN_GPU_BLOCK, shared, (cudaStream_t)job->stream>>>(*job);
    return cudaGetLastError();
}

template <typename real>
static cudaError_t launch_typed(const hmmrt_scan_gpu_job *job)
{
    switch (job->nb) {
    case 1: return launch_one<1, real>(job);
    case 2: return launch_one<2, real>(job);
    case 3: return launch_one<3, real>(job);
    case 4: return launch_one<4, real>(job);
    default: break;
    }
    /* the host pads nb to 8, 16 or 32 (hmmrt_scan_gpu_pad) */
    if (job->nb <= 8)
        return launch_one<8, real>(job);
    if (job->nb <= 16)
        return launch_one<16, real>(job);
    return launch_one<32, real>(job);
}

extern "C" size_t hmmrt_scan_gpu_shared(int nb, int n_symbols, int use_double)
{
    size_t real_bytes = use_double ? 8 : 4, cells = (size_t)n_symbols * nb * nb;
    return (cells * real_bytes + 7) / 8 * 8 + ((size_t)n_symbols * sizeof(int) + 7) / 8 * 8 +
           (size_t)n_symbols * sizeof(double);
}

extern "C" int hmmrt_scan_gpu_launch(const hmmrt_scan_gpu_job *job)
{
    if (job->n_chunks <= 0)
        return cudaSuccess;
    return (int)(job->use_double ? launch_typed<double>(job) : launch_typed<float>(job));
}
