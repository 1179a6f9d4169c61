/* occupancy.c: block sizes from the occupancy rules (occupancy_rules.c, the
 * calculation hmmc -v also uses) with the limits read off the device at run
 * time, and the one-line description of a kernel's plan that --timing prints,
 * which also gives CUDA's own calculator's occupancy when it differs. */
#include "hmmrt_gpu.h"
#include "occupancy_rules.h"

#include <cuda_runtime_api.h>
#include <stdio.h>

/* The limits of the current device, and the kernel's registers and static
 * shared memory; 0, or -1 when CUDA cannot say. */
static int device_limits(const void *kernel, hmmrt_sm_limits *l, struct cudaFuncAttributes *attr)
{
    int device = 0;
    struct cudaDeviceProp prop;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaGetDeviceProperties(&prop, device) != cudaSuccess ||
        cudaFuncGetAttributes(attr, kernel) != cudaSuccess)
        return -1;
    *l = hmmrt_sm90_limits; /* the allocation units and sub-partitions: CUDA does not report
                               them; they are the same from Volta to Hopper */
    l->warp_size = prop.warpSize > 0 ? prop.warpSize : 32;
    l->max_threads_per_block = attr->maxThreadsPerBlock < prop.maxThreadsPerBlock
                                   ? attr->maxThreadsPerBlock : prop.maxThreadsPerBlock;
    l->max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
    l->max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
    l->regs_per_sm = prop.regsPerMultiprocessor;
    l->regs_per_block = prop.regsPerBlock;
    l->shared_per_sm = prop.sharedMemPerMultiprocessor;
    l->shared_per_block = prop.sharedMemPerBlockOptin;
    l->shared_reserved = prop.reservedSharedMemPerBlock;
    return 0;
}

int hmmrt_gpu_block_size(const void *kernel, int n_states, size_t shared_per_block,
                         double *occupancy)
{
    hmmrt_sm_limits l;
    struct cudaFuncAttributes attr;
    if (occupancy)
        *occupancy = 0;
    if (device_limits(kernel, &l, &attr) != 0)
        return 128;
    int best = hmmrt_best_block(&l, l.max_threads_per_block, attr.numRegs,
                                attr.sharedSizeBytes + shared_per_block, n_states, occupancy);
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
    int device = 0, cuda_blocks = 0;
    struct cudaDeviceProp prop;
    char check[96] = "";
    if (cudaGetDevice(&device) == cudaSuccess &&
        cudaGetDeviceProperties(&prop, device) == cudaSuccess &&
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&cuda_blocks, kernel, block,
                                                      shared_per_block) == cudaSuccess &&
        prop.maxThreadsPerMultiProcessor > 0) {
        double cuda = (double)cuda_blocks * block / prop.maxThreadsPerMultiProcessor;
        if (cuda != occupancy)
            snprintf(check, sizeof check, " (CUDA's calculator says %.0f%%: a bug in "
                     "occupancy_rules.c)", 100 * cuda);
    }
    snprintf(buf, len,
             "%s, block %d, %d registers, %zu bytes shared, %zu bytes local (spilled), "
             "occupancy %.0f%%%s",
             shape, block, attr.numRegs, attr.sharedSizeBytes + shared_per_block,
             attr.localSizeBytes, 100 * occupancy, check);
}
