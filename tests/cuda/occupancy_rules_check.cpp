// occupancy_rules_check.cpp: holds runtime/occupancy_rules.c (which both the
// GPU runtime and hmmc -v use) against CUDA's own occupancy calculator, the
// host-only header cuda_occupancy.h of the toolkit, for an H100 (sm_90): for
// every block size, register count and shared memory size of a grid, both
// must give the same resident blocks per SM. Built and run by tests/cuda/run
// (no GPU needed). Prints "ok N cases" or the first differences; status 1 on one.
#include <cstdio>
#include <cuda_occupancy.h>

#include "occupancy_rules.h"

int main()
{
    const hmmrt_sm_limits *l = &hmmrt_sm90_limits;
    cudaOccDeviceProp prop;
    prop.computeMajor = 9;
    prop.computeMinor = 0;
    prop.maxThreadsPerBlock = l->max_threads_per_block;
    prop.maxThreadsPerMultiprocessor = l->max_threads_per_sm;
    prop.regsPerBlock = l->regs_per_block;
    prop.regsPerMultiprocessor = l->regs_per_sm;
    prop.warpSize = l->warp_size;
    prop.sharedMemPerBlock = 48 * 1024;
    prop.sharedMemPerMultiprocessor = l->shared_per_sm;
    prop.numSms = 132;
    prop.sharedMemPerBlockOptin = l->shared_per_block;
    prop.reservedSharedMemPerBlock = l->shared_reserved;
    cudaOccDeviceState state;
    long cases = 0, bad = 0;
    const size_t shared_sizes[] = {0, 100, 1024, 4000, 12345, 48 * 1024, 70000, 100000, 150000,
                                   227 * 1024, 228 * 1024};
    for (size_t s : shared_sizes)
        for (int regs = 0; regs <= 255; regs += (regs < 40 ? 1 : 7))
            for (int block = 32; block <= 1024; block += 32) {
                cudaOccFuncAttributes attr;
                attr.maxThreadsPerBlock = 1024;
                attr.numRegs = regs;
                attr.sharedSizeBytes = 0;
                attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN; // the launchers opt in above 48 KB
                attr.maxDynamicSharedSizeBytes = l->shared_per_block;
                cudaOccResult result;
                int cuda = 0;
                if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attr, &state, block, s) ==
                    CUDA_OCC_SUCCESS)
                    cuda = result.activeBlocksPerMultiprocessor;
                int ours = hmmrt_resident_blocks(l, block, regs, s);
                cases++;
                if (ours != cuda && ++bad <= 10)
                    std::printf("block %d, %d registers, %zu bytes shared: occupancy_rules.c %d "
                                "blocks, CUDA's calculator %d\n", block, regs, s, ours, cuda);
            }
    if (bad) {
        std::printf("occupancy rules: %ld of %ld cases differ from CUDA's calculator\n", bad, cases);
        return 1;
    }
    std::printf("occupancy rules: ok, %ld cases agree with CUDA's calculator (sm_90)\n", cases);
    return 0;
}
