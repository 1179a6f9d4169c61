/* hmmrt_kernel.cuh: device-side helpers that every generated CUDA file
 * uses and that are the same for every model (included by the .cu files
 * hmmc writes). */
#ifndef HMMRT_KERNEL_CUH
#define HMMRT_KERNEL_CUH

#include "occupancy_rules.h"

struct hmmc_add {
    template <typename real> __device__ real operator()(real a, real b) const { return a + b; }
};
struct hmmc_max {
    template <typename real> __device__ real operator()(real a, real b) const { return a > b ? a : b; }
};

/* `mine` combined by op over the whole block (identity: the value threads
 * without one contribute), returned to every thread. partial: 32 values of
 * shared memory. Begins with a barrier, so that a previous call's readers
 * are done with partial. */
template <typename real, typename Op>
__device__ __forceinline__ real hmmc_block_reduce(real mine, real identity, real *partial, Op op)
{
    __syncthreads();
    for (int offset = 16; offset > 0; offset /= 2)
        mine = op(mine, __shfl_down_sync(0xffffffffu, mine, offset));
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0)
        partial[warp] = mine;
    __syncthreads();
    if (warp == 0) {
        const int warps = (blockDim.x + 31) / 32;
        real v = lane < warps ? partial[lane] : identity;
        for (int offset = 16; offset > 0; offset /= 2)
            v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
        if (lane == 0)
            partial[0] = v;
    }
    __syncthreads();
    return partial[0];
}

template <typename real>
__device__ __forceinline__ real hmmc_block_sum(real mine, real *partial)
{
    return hmmc_block_reduce(mine, (real)0, partial, hmmc_add());
}

template <typename real>
__device__ __forceinline__ real hmmc_block_max(real mine, real *partial)
{
    return hmmc_block_reduce(mine, (real)-INFINITY, partial, hmmc_max());
}

/* Threads of a block that shares `rows` states: the occupancy's choice, but
 * no more than the states rounded up to a warp (occupancy_rules.c). */
static inline int hmmc_block_threads(int suggested, int rows)
{
    return hmmrt_block_for_rows(suggested, rows, 32);
}

#endif
