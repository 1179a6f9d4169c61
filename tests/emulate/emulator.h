// emulator.h: stand-ins for the CUDA features that hmmc's generated kernels
// use, so that tests/emulate can compile a program's .cu for the CPU and run
// its kernels there (CI has nvcc but no GPU). Each thread of a block is a
// coroutine (ucontext) on one CPU thread; the coroutines take turns, and a
// warp shuffle, vote or __syncthreads is a barrier at which each waits until
// every thread it names has arrived. A barrier that can never complete (a
// thread named in a mask has exited, or threads wait at different kinds of
// barrier) stops the run with a message: the emulator checks the kernels'
// synchronisation as well as their arithmetic. Blocks run one after another.
#ifndef HMMC_EMULATOR_H
#define HMMC_EMULATOR_H

#define HMMC_HOST_EMULATION 1

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <ucontext.h>

using std::frexp;
using std::ilogb;
using std::ldexp;
using std::log;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __constant__
#define __align__(n) __attribute__((aligned(n)))

enum { HMMC_EMULATED_SHARED_BYTES = 228 * 1024 };

struct hmmc_dim { unsigned x, y, z; };
struct uint4 { unsigned x, y, z, w; };

extern hmmc_dim threadIdx, blockIdx, blockDim, gridDim;

template <typename T> inline T __ldg(const T *p) { return *p; }

struct hmmrt_gpu_batch;
typedef void (*hmmc_emulated_kernel)(const hmmrt_gpu_batch);

// Runs kernel over grid blocks of `block` threads each (emulator.cpp). A
// call's launcher (hmmc_launch, hmmrt_kernel.cuh) comes here through
// hmmc_emulate_launch, which picks the grid and block.
void hmmc_emulate(hmmc_emulated_kernel kernel, const hmmrt_gpu_batch &b, unsigned grid, unsigned block);

// What a call's launcher returns when its kernels are not emulated: the
// dense shape's, libhmmrt's own (hmmrt_dense.cuh).
enum { HMMC_NOT_EMULATED = -1 };

// The barrier behind every warp and block operation: the calling thread
// offers 8 bytes (`mine`), waits until the threads of `mask` in its warp
// (block: every live thread of the block) have arrived at a barrier of the
// same kind, then reads the offers of all of them into `all` (32 slots,
// indexed by lane; the block's: by thread). Returns the number that took
// part.
enum hmmc_barrier_kind { HMMC_SHUFFLE, HMMC_VOTE, HMMC_SYNCTHREADS };
void hmmc_emulated_barrier(hmmc_barrier_kind kind, unsigned mask, uint64_t mine, uint64_t *all);

template <typename T> inline uint64_t hmmc_bits(T v)
{
    static_assert(sizeof(T) <= 8, "8 bytes at most");
    uint64_t u = 0;
    memcpy(&u, &v, sizeof v);
    return u;
}
template <typename T> inline T hmmc_from_bits(uint64_t u)
{
    T v;
    memcpy(&v, &u, sizeof v);
    return v;
}

unsigned hmmc_lane_id();
[[noreturn]] void hmmc_emulation_fails(const char *what);

// src: the lane whose value `lane` reads (its own when out of the segment).
template <typename T> inline T hmmc_shuffle(unsigned mask, T v, int src)
{
    uint64_t all[1024];
    hmmc_emulated_barrier(HMMC_SHUFFLE, mask, hmmc_bits(v), all);
    if (!(mask >> src & 1u))
        hmmc_emulation_fails("a shuffle reads a lane outside its mask");
    return hmmc_from_bits<T>(all[src]);
}

template <typename T> inline T __shfl_sync(unsigned mask, T v, int src, int width = 32)
{
    const int lane = (int)hmmc_lane_id();
    return hmmc_shuffle(mask, v, (lane / width) * width + ((src % width) + width) % width);
}
template <typename T> inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    const int lane = (int)hmmc_lane_id();
    return hmmc_shuffle(mask, v, lane % width >= (int)delta ? lane - (int)delta : lane);
}
template <typename T> inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    const int lane = (int)hmmc_lane_id();
    return hmmc_shuffle(mask, v, lane % width + (int)delta < width ? lane + (int)delta : lane);
}
template <typename T> inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32)
{
    const int lane = (int)hmmc_lane_id(), src = lane ^ lane_mask;
    return hmmc_shuffle(mask, v, src / width == lane / width ? src : lane);
}

inline int __any_sync(unsigned mask, int predicate)
{
    uint64_t all[1024];
    hmmc_emulated_barrier(HMMC_VOTE, mask, predicate != 0, all);
    for (int l = 0; l < 32; l++)
        if (mask >> l & 1u && all[l])
            return 1;
    return 0;
}

inline void __syncthreads()
{
    uint64_t all[1024];
    hmmc_emulated_barrier(HMMC_SYNCTHREADS, 0, 0, all);
}

inline int __syncthreads_or(int predicate)
{
    uint64_t all[1024];
    hmmc_emulated_barrier(HMMC_SYNCTHREADS, 0, predicate != 0, all);
    for (unsigned t = 0; t < blockDim.x; t++)
        if (all[t])
            return 1;
    return 0;
}

#endif
