/* real_cuda_stubs.c: the CUDA runtime calls of runtime/gpu/real_gpu.c,
 * stood in for on the CPU (device memory is host memory, filled with NaN
 * bytes so that what a kernel reads unwritten shows), for
 * tests/emulate/real_driver.c and benchmarks/gmm/gmm-bench.c's emulated
 * build (tests/emulate/real-driver). */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return cudaSuccess; }
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    memset(p, 0, sizeof *p);
    strcpy(p->name, "the emulator");
    return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    *s = NULL;
    return cudaSuccess;
}
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int priority)
{
    *s = NULL;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    *least = *greatest = 0;
    return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { return cudaSuccess; }
cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = malloc(bytes);
    if (*p) /* what a kernel reads before it writes shows up as NaN */
        memset(*p, 0xff, bytes);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaMallocHost(void **p, size_t bytes) { return cudaMalloc(p, bytes); }
cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
cudaError_t cudaFreeHost(void *p) { return cudaFree(p); }
cudaError_t cudaMemcpy(void *to, const void *from, size_t bytes, enum cudaMemcpyKind kind)
{
    memcpy(to, from, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *to, const void *from, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    memcpy(to, from, bytes);
    return cudaSuccess;
}
const char *cudaGetErrorString(cudaError_t e) { return "an emulated error"; }

/* Events and the streams' waits on them: every call is done when it
 * returns here, so there is nothing to wait for and no time between. */
static char an_event;
cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = (cudaEvent_t)&an_event;
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) { return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    *ms = 0;
    return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    return cudaSuccess;
}
cudaError_t cudaGetLastError(void) { return cudaSuccess; }

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    *free_bytes = *total = (size_t)1 << 32;
    return cudaSuccess;
}

/* cuBLAS (runtime/gpu/cublas_dl.c), stood in for: a handle, and the
 * product c = a' x b in column-major terms as a plain loop in float. */
void *hmmrt_cublas_handle(void)
{
    static int handle;
    return &handle;
}
int hmmrt_cublas_sgemm_tn(void *handle, void *stream, int m, int n, int k, const float *a,
                          const float *b, float *c)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float t = 0;
            for (int l = 0; l < k; l++)
                t += a[(size_t)i * k + l] * b[(size_t)j * k + l];
            c[(size_t)j * m + i] = t;
        }
    return 0;
}
/* The tensor cores' product: its operands come rounded to TF32 already
 * (runtime/gpu/real_product.h), so the plain loop in float stands in. */
int hmmrt_cublas_tf32_tn(void *handle, void *stream, int m, int n, int k, const float *a,
                         const float *b, float *c)
{
    return hmmrt_cublas_sgemm_tn(handle, stream, m, n, k, a, b, c);
}

/* runtime/gpu/real_train_gpu.c's zeroing of the sums */
cudaError_t cudaMemset(void *p, int value, size_t bytes)
{
    memset(p, value, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t stream)
{
    memset(p, value, bytes);
    return cudaSuccess;
}
