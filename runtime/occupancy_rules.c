/* occupancy_rules.c: resident blocks per SM and the launchers' block size,
 * from the limits of a device (see occupancy_rules.h). The rules follow the
 * CUDA occupancy calculator's: registers per warp rounded up to the
 * allocation unit and shared among the SM's sub-partitions, shared memory per
 * block (with the reserved part) rounded up to its unit, and the limits on
 * threads and blocks per SM. */
#include "occupancy_rules.h"

const hmmrt_sm_limits hmmrt_sm90_limits = {
    .warp_size = 32,
    .max_threads_per_block = 1024,
    .max_threads_per_sm = 2048,
    .max_blocks_per_sm = 32,
    .regs_per_sm = 65536,
    .regs_per_block = 65536,
    .reg_alloc_unit = 256,
    .sub_partitions = 4,
    .shared_per_sm = 228 * 1024,
    .shared_per_block = 227 * 1024,
    .shared_reserved = 1024,
    .shared_alloc_unit = 128,
};

static int round_up(int v, int unit) { return unit > 0 ? (v + unit - 1) / unit * unit : v; }
static int min_int(int a, int b) { return a < b ? a : b; }

int hmmrt_resident_blocks(const hmmrt_sm_limits *l, int block, int regs, size_t shared)
{
    if (block <= 0 || block > l->max_threads_per_block)
        return 0;
    int warps = (block + l->warp_size - 1) / l->warp_size;
    int blocks = min_int(l->max_blocks_per_sm, l->max_threads_per_sm / l->warp_size / warps);
    if (regs > 0) {
        int per_warp = round_up(regs * l->warp_size, l->reg_alloc_unit);
        int parts = l->sub_partitions > 0 ? l->sub_partitions : 1;
        if (per_warp * warps > l->regs_per_block ||
            per_warp * round_up(warps, parts) > l->regs_per_block)
            return 0;
        int warps_per_part = l->regs_per_sm / parts / per_warp;
        blocks = min_int(blocks, warps_per_part * parts / warps);
    }
    size_t unit = l->shared_alloc_unit ? l->shared_alloc_unit : 1;
    size_t per_block = (shared + l->shared_reserved + unit - 1) / unit * unit;
    if (per_block > l->shared_per_block + l->shared_reserved)
        return 0;
    if (per_block > 0 && (size_t)blocks > l->shared_per_sm / per_block)
        blocks = (int)(l->shared_per_sm / per_block);
    return blocks;
}

int hmmrt_best_block(const hmmrt_sm_limits *l, int most_threads, int regs, size_t shared,
                     int n_states, double *occupancy)
{
    int warp = l->warp_size > 0 ? l->warp_size : 32;
    int best = 0, best_threads = 0;
    for (int block = warp; block <= most_threads; block += warp) {
        int threads = hmmrt_resident_blocks(l, block, regs, shared) * block;
        if (threads > best_threads)
            best = block, best_threads = threads;
    }
    int states_rounded = round_up(n_states, warp);
    if (states_rounded <= most_threads) {
        int threads = hmmrt_resident_blocks(l, states_rounded, regs, shared) * states_rounded;
        if (threads > best_threads)
            best = states_rounded, best_threads = threads;
    }
    if (occupancy)
        *occupancy = l->max_threads_per_sm > 0 ? (double)best_threads / l->max_threads_per_sm : 0;
    return best;
}

int hmmrt_block_for_rows(int best, int rows, int warp_size)
{
    int most = round_up(rows, warp_size);
    int threads = best < most ? best : most;
    return threads < warp_size ? warp_size : threads;
}
