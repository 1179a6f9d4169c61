/* occupancy.c: block sizes from the occupancy rules (registers, shared
 * memory, threads per block, read off the device at run time) and the
 * one-line description of a kernel's plan that --timing prints. */
#include "hmmrt_gpu.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

/* Resident threads per multiprocessor with blocks of `block` threads, or 0. */
static int resident_threads(const void *kernel, int block, size_t shared)
{
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block, shared) !=
        cudaSuccess)
        return 0;
    return blocks * block;
}

int hmmrt_gpu_block_size(const void *kernel, int n_states, size_t shared_per_block,
                         double *occupancy)
{
    int device = 0;
    struct cudaDeviceProp prop;
    struct cudaFuncAttributes attr;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaGetDeviceProperties(&prop, device) != cudaSuccess ||
        cudaFuncGetAttributes(&attr, kernel) != cudaSuccess)
        return 128;
    int warp = prop.warpSize > 0 ? prop.warpSize : 32;
    int limit = attr.maxThreadsPerBlock < prop.maxThreadsPerBlock ? attr.maxThreadsPerBlock
                                                                  : prop.maxThreadsPerBlock;
    int best = 0, best_threads = -1;
    int states_rounded = (n_states + warp - 1) / warp * warp;
    for (int block = warp; block <= limit; block += warp) {
        int threads = resident_threads(kernel, block, shared_per_block);
        if (threads > best_threads) {
            best = block;
            best_threads = threads;
        }
    }
    if (states_rounded <= limit) {
        int threads = resident_threads(kernel, states_rounded, shared_per_block);
        if (threads > best_threads) {
            best = states_rounded;
            best_threads = threads;
        }
    }
    if (occupancy)
        *occupancy = prop.maxThreadsPerMultiProcessor > 0
                         ? (double)best_threads / prop.maxThreadsPerMultiProcessor
                         : 0;
    return best > 0 ? best : 128;
}

void hmmrt_gpu_describe_kernel(const void *kernel, const char *shape, int n_states,
                               size_t shared_per_block, char *buf, size_t len)
{
    struct cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, kernel) != cudaSuccess) {
        snprintf(buf, len, "%s (no attributes: %s)", shape, cudaGetErrorString(cudaGetLastError()));
        return;
    }
    double occupancy = 0;
    int block = hmmrt_gpu_block_size(kernel, n_states, shared_per_block, &occupancy);
    snprintf(buf, len,
             "%s, block %d, %d registers, %zu bytes shared, %zu bytes local (spilled), "
             "occupancy %.0f%%",
             shape, block, attr.numRegs, attr.sharedSizeBytes + shared_per_block,
             attr.localSizeBytes, 100 * occupancy);
}
