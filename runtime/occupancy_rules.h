/* occupancy_rules.h: how many blocks of a kernel fit on one multiprocessor
 * (registers, shared memory, threads, blocks) and which block size the
 * launchers take, in plain C so that both sides use the one calculation:
 * libhmmrt_gpu (runtime/gpu/occupancy.c) with the limits it reads off the
 * device at run time, and hmmc -v (compiler/codegen/cuda/cuda_plan.c) with an H100's limits
 * and the register counts ptxas reports, to say beforehand what the runtime
 * will choose there. */
#ifndef HMMRT_OCCUPANCY_RULES_H
#define HMMRT_OCCUPANCY_RULES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hmmrt_sm_limits {
    int warp_size;
    int max_threads_per_block;
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int regs_per_sm;
    int regs_per_block;
    int reg_alloc_unit;        /* registers are given to a warp in units of this many */
    int sub_partitions;        /* an SM's register file is split in this many parts */
    size_t shared_per_sm;
    size_t shared_per_block;   /* the most a block may opt in to */
    size_t shared_reserved;    /* the system's own shared memory in every block */
    size_t shared_alloc_unit;  /* a block's shared memory is given in units of this many bytes */
} hmmrt_sm_limits;

/* sm_90 (H100): 65,536 registers per SM and per block in units of 256 per
 * warp over 4 sub-partitions, 228 KB shared memory per SM, 227 KB per block,
 * 1 KB reserved per block, in units of 128 bytes, 2,048 threads and 32
 * blocks per SM, 1,024 threads per block. */
extern const hmmrt_sm_limits hmmrt_sm90_limits;

/* Blocks of `block` threads resident on one SM, for a kernel using `regs`
 * registers per thread and `shared` bytes of shared memory per block (static
 * plus dynamic); 0 when such a block cannot run. */
int hmmrt_resident_blocks(const hmmrt_sm_limits *l, int block, int regs, size_t shared);

/* The block size the launchers use: among the multiples of the warp size up
 * to most_threads (the kernel's limit, or the device's), and the state count
 * rounded up to a warp, the one with the most resident threads (the smaller
 * on a tie); 0 when none fits. occupancy (may be NULL): resident threads over
 * the SM's maximum. */
int hmmrt_best_block(const hmmrt_sm_limits *l, int most_threads, int regs, size_t shared,
                     int n_states, double *occupancy);

/* Threads of a block-per-sequence kernel's block that shares `rows` states:
 * the best block, but no more than the states rounded up to a warp (the
 * other threads would idle), and at least a warp. */
int hmmrt_block_for_rows(int best, int rows, int warp_size);

#ifdef __cplusplus
}
#endif

#endif
