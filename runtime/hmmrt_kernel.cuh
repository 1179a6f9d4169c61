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

/* p, hidden from the optimiser: loads through it are not hoisted out of a
 * loop (so that tables are read where used, not held in registers). */
template <typename T>
__device__ __forceinline__ const T *hmmc_opaque(const T *p)
{
#ifdef HMMC_HOST_EMULATION
    asm volatile("" : "+r"(p));
#else
    asm volatile("" : "+l"(p));
#endif
    return p;
}

template <typename real>
__device__ __forceinline__ real hmmc_vmax(real a, real b) { return a > b ? a : b; }

/* 1 when v (>= 0) lies below its type's normal range but is not 0: it has
 * lost digits, and the paths through it may be lost next. Measured on an
 * H100 (M = 800 forward in double, --timing's G cells/s): 305 without the
 * test, 264 with these comparisons, 259 with the test on the bits (the
 * integer units), which is therefore not used. */
__device__ __forceinline__ bool hmmc_below_normal(float v) { return v > 0.0f && v < 0x1p-126f; }
__device__ __forceinline__ bool hmmc_below_normal(double v) { return v > 0.0 && v < 0x1p-1022; }

/* The marking rule of the kernels with one scale a position (the state
 * shapes): in float a state more than 2^90 below its position's sum is close
 * to losing its paths (float holds values down to 2^-149 of the largest) and
 * marks the sequence for double; in double a state below the normal range
 * marks it for the CPU (long double). `floor` is hmmc_losing_floor(sum). */
template <typename real>
__device__ __forceinline__ real hmmc_losing_floor(real sum) { return sum * (real)0x1p-90; }
__device__ __forceinline__ bool hmmc_losing_paths(float v, float floor) { return v > 0.0f && v < floor; }
__device__ __forceinline__ bool hmmc_losing_paths(double v, double floor)
{
    (void)floor;
    return hmmc_below_normal(v);
}

/* 1 when v (>= 0) times a power of two gave `moved` and lost digits on the
 * way: below the normal range, or 0 where v was not. Forward with lane
 * scales marks such a value, as it marks hmmc_below_normal ones. Without
 * && or ||, which nvcc made into a branch at each of a lane's values. */
template <typename real>
__device__ __forceinline__ bool hmmc_moved_below_normal(real v, real moved)
{
    return hmmc_below_normal(moved) | ((moved == (real)0) & (v > (real)0));
}

/* The factor of a lane's move by 2^-shift (forward with lane scales): the
 * power of two itself where the type holds it, or 0 where it does not (a
 * move beyond the type's exponents; an empty lane moves by up to 2^29).
 * Each value is multiplied by it, and one that loses digits on the way,
 * all of them where it is 0, marks the sequence for the next precision.
 * Measured on an H100 (2026-11-24, 20,000 random proteins, forward in
 * float, G cells/s of the kernels): ldexp at each value (4 multiplications
 * of it) with a branch at each value's test made the M = 1600 kernel
 * 18,700 instructions (300 KB), stalled on instruction fetch half its time:
 * 111; one multiplication a value and no branches: 193 (M = 800: 167 ->
 * 185; M = 2000: 134 -> 169), every score the same, none marked. */
template <typename real>
__device__ __forceinline__ real hmmc_lane_factor(int shift)
{
    const int least = sizeof(real) == sizeof(float) ? -127 : -1023; /* 2^127, 2^1023: the largest */
    const int most = sizeof(real) == sizeof(float) ? 149 : 1074;    /* 2^-149, 2^-1074: the smallest */
    return shift >= least && shift <= most ? ldexp((real)1, -shift) : (real)0;
}

/* `mine` combined by op over a group of `width` lanes (a power of two up to
 * 32; mask: the group's lanes), the same bits in every lane of it (each
 * butterfly step adds the same two numbers on both sides). */
template <typename real, typename Op>
__device__ __forceinline__ real hmmc_group_all(real mine, Op op, unsigned mask, int width)
{
    for (int offset = width / 2; offset > 0; offset /= 2)
        mine = op(mine, __shfl_xor_sync(mask, mine, offset, width));
    return mine;
}

/* The group's largest value and its index (on a tie, the smaller valid
 * index: the earlier move, as the CPU path chooses; -1 is no index), in
 * every lane of the group. */
template <typename real>
__device__ __forceinline__ void hmmc_group_argmax(real &value, int &bp, unsigned mask, int width)
{
    for (int offset = width / 2; offset > 0; offset /= 2) {
        const real v = __shfl_xor_sync(mask, value, offset, width);
        const int b = __shfl_xor_sync(mask, bp, offset, width);
        if (v > value || (v == value && b >= 0 && (bp < 0 || b < bp))) {
            value = v;
            bp = b;
        }
    }
}

/* The same over a whole warp. */
template <typename real>
__device__ __forceinline__ void hmmc_warp_argmax(real &value, int &bp)
{
    hmmc_group_argmax(value, bp, 0xffffffffu, 32);
}

/* Semirings of a linear recurrence x' = a + t x: (sum, product) for
 * forward, (max, plus) for viterbi. */
struct hmmc_sumproduct {
    template <typename real> __device__ real plus(real a, real b) const { return a + b; }
    template <typename real> __device__ real times(real a, real b) const { return a * b; }
    template <typename real> __device__ real zero() const { return (real)0; }
};
struct hmmc_maxplus {
    template <typename real> __device__ real plus(real a, real b) const { return a > b ? a : b; }
    template <typename real> __device__ real times(real a, real b) const { return a + b; }
    template <typename real> __device__ real zero() const { return (real)-INFINITY; }
};

/* A chain over a group's lanes: lane l maps the value entering its run to
 * the value leaving it by x -> A + T x. Returns the value entering this
 * lane's run when zero enters lane 0's (an exclusive scan of the steps). */
template <typename real, typename Ring>
__device__ __forceinline__ real hmmc_group_chain_scan(real A, real T, int lane, Ring ring, unsigned mask,
                                                      int width)
{
    for (int offset = 1; offset < width; offset *= 2) {
        const real left_A = __shfl_up_sync(mask, A, offset, width);
        const real left_T = __shfl_up_sync(mask, T, offset, width);
        if (lane >= offset) {
            A = ring.plus(A, ring.times(T, left_A));
            T = ring.times(T, left_T);
        }
    }
    const real entering = __shfl_up_sync(mask, A, 1, width);
    return lane >= 1 ? entering : ring.template zero<real>();
}

/* v * 2^e += x * 2^ex, for values held as a number and an exponent of their
 * own (forward with lane scales: the special states, each far from the
 * others at times); the sum takes the larger exponent. inf and NaN pass on. */
template <typename real>
__device__ __forceinline__ void hmmc_scaled_add(real &v, int &e, real x, int ex)
{
    if (x == (real)0)
        return;
    if (v == (real)0) {
        v = x;
        e = ex;
    } else if (ex > e) {
        v = ldexp(v, e - ex) + x;
        e = ex;
    } else {
        v += ldexp(x, ex - e);
    }
}

/* v * 2^e with v brought back near 2^target when it has left
 * [2^(target - 8), 2^(target + 8)] (0, inf and NaN stay as they are). */
template <typename real>
__device__ __forceinline__ void hmmc_renormalise(real &v, int &e, int target)
{
    if (v > (real)0 && v < (real)INFINITY) {
        const int k = ilogb(v) - target;
        if (k > 8 || k < -8) {
            v = ldexp(v, -k);
            e += k;
        }
    }
}

/* hmmc_group_chain_scan for forward with lane scales: lane l's step is
 * x -> A 2^ae + T 2^te x, x and the result in the group's scale (lanes'
 * exponents may lie hundreds apart, so no step is formed as one number).
 * Gives in (m, e) the value entering this lane's run (0 in lane 0). */
template <typename real>
__device__ __forceinline__ void hmmc_group_chain_scan_scaled(real A, int ae, real T, int te, int lane,
                                                             unsigned mask, int width, real &m, int &e)
{
    hmmc_renormalise(A, ae, 0);
    hmmc_renormalise(T, te, 0);
    for (int offset = 1; offset < width; offset *= 2) {
        const real left_A = __shfl_up_sync(mask, A, offset, width);
        const int left_ae = __shfl_up_sync(mask, ae, offset, width);
        const real left_T = __shfl_up_sync(mask, T, offset, width);
        const int left_te = __shfl_up_sync(mask, te, offset, width);
        if (lane >= offset) {
            hmmc_scaled_add(A, ae, T * left_A, te + left_ae);
            T *= left_T;
            te += left_te;
            hmmc_renormalise(A, ae, 0);
            hmmc_renormalise(T, te, 0);
        }
    }
    m = __shfl_up_sync(mask, A, 1, width);
    e = __shfl_up_sync(mask, ae, 1, width);
    if (lane < 1) {
        m = (real)0;
        e = 0;
    }
}

/* Threads of a block that shares `rows` states: the occupancy's choice, but
 * no more than the states rounded up to a warp (occupancy_rules.c). */
static inline int hmmc_block_threads(int suggested, int rows)
{
    return hmmrt_block_for_rows(suggested, rows, 32);
}

#endif
