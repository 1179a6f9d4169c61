/* context-time.cu: how long CUDA takes to make a context on each GPU, alone
 * and all at once (issue 31's opening, issue 28's several GPUs): the floor
 * under hmmc's "opening the GPU" in --timing. Prints seconds per step. */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *make_context(void *arg)
{
    int d = (int)(long)arg;
    double t0 = now();
    cudaSetDevice(d);
    cudaFree(0);
    double t1 = now();
    void *p = NULL;
    cudaMalloc(&p, (size_t)64 << 20);
    double t2 = now();
    void *h = NULL;
    cudaHostAlloc(&h, (size_t)256 << 20, cudaHostAllocDefault);
    double t3 = now();
    printf("  device %d: context %.3f s, cudaMalloc 64 MB %.3f s, cudaHostAlloc 256 MB %.3f s\n",
           d, t1 - t0, t2 - t1, t3 - t2);
    return NULL;
}

int main(int argc, char **argv)
{
    double t0 = now();
    int n = 0;
    cudaGetDeviceCount(&n);
    printf("cudaGetDeviceCount: %d devices, %.3f s (driver start)\n", n, now() - t0);
    int all = argc > 1;
    pthread_t threads[64];
    double t1 = now();
    for (int d = 0; d < (all ? n : 1) && d < 64; d++)
        pthread_create(&threads[d], NULL, make_context, (void *)(long)d);
    for (int d = 0; d < (all ? n : 1) && d < 64; d++)
        pthread_join(threads[d], NULL);
    printf("%s: %.3f s\n", all ? "every device at once" : "device 0 alone", now() - t1);
    return 0;
}
