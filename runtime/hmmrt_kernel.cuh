/* hmmrt_kernel.cuh: what every generated CUDA file uses and that is the
 * same for every model (included by the .cu files hmmc writes): device-side
 * helpers, the column rescaling, and the launcher that each call's
 * c<index>_launch hands its kernels to. */
#ifndef HMMRT_KERNEL_CUH
#define HMMRT_KERNEL_CUH

#ifndef HMMC_HOST_EMULATION /* tests/emulate: emulator.h stands in for CUDA's runtime */
#include <cuda_runtime.h>
#endif
#include <stdint.h>

#include "hmmrt_gpu.h"
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

/* The block's dynamic shared memory (the launch's `shared` bytes). */
__device__ __forceinline__ unsigned char *hmmc_dynamic_shared()
{
#ifdef HMMC_HOST_EMULATION /* a block's threads take turns on one CPU thread, blocks one after another */
    static unsigned char shared[HMMC_EMULATED_SHARED_BYTES] __attribute__((aligned(16)));
#else
    extern __shared__ __align__(16) unsigned char shared[];
#endif
    return shared;
}

template <typename real>
__device__ __forceinline__ real hmmc_vmax(real a, real b) { return a > b ? a : b; }

/* 1 when v (>= 0) lies below its type's normal range but is not 0: it has
 * lost digits, and the paths through it may be lost next. Comparisons, not
 * a test of the bits, which measured slower (benchmarks/history/). */
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

/* 1 when a length-dependent weight w, computed in double from the
 * sequence's length (the generated kernels' lenwK), is held by `real` with
 * every digit: 0, or a finite value in the type's normal range. A sum
 * kernel given one that is not marks the sequence (NaN): float is scored
 * again in double, double on the CPU path, as for any value that leaves the
 * range. */
template <typename real>
__device__ __forceinline__ bool hmmc_length_weight_fits(double w)
{
    const double least = sizeof(real) == sizeof(float) ? 0x1p-126 : 0x1p-1022;
    const double most = sizeof(real) == sizeof(float) ? 0x1.fffffep127 : 0x1.fffffffffffffp1023;
    return w == 0.0 || (w >= least && w <= most);
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
 * Each value is multiplied by it (one multiplication, no branch: ldexp at
 * each value was slower, benchmarks/history/), and one that loses digits on
 * the way, all of them where it is 0, marks the sequence. */
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

/* 2^n, exact, at compile time (the bounds of hmmc_rescaling). */
__host__ __device__ constexpr double hmmc_pow2(int n)
{
    return n == 0 ? 1.0 : n > 0 ? 2.0 * hmmc_pow2(n - 1) : 0.5 * hmmc_pow2(n + 1);
}

/* The rescaling of forward and backward, in every kernel shape: when a
 * column's sum has left [2^(target - band), 2^(target + band)], the power
 * of two that brings it to [2^(target - 1), 2^target) (factor: exact, it
 * changes no digit) and what the column's scale gains by it (shift); false,
 * and nothing to do, when the sum is within (or is NaN). */
template <int target, int band, typename real>
__device__ __forceinline__ bool hmmc_rescaling(real sum, real &factor, int &shift)
{
    constexpr real least = (real)hmmc_pow2(target - band), most = (real)hmmc_pow2(target + band);
    if (!(sum < least || sum > most))
        return false;
    int exponent;
    frexp(sum, &exponent);
    factor = ldexp((real)1, target - exponent);
    shift = exponent - target;
    return true;
}

/* Threads of a block that shares `rows` states: the occupancy's choice, but
 * no more than the states rounded up to a warp (occupancy_rules.c). */
static inline int hmmc_block_threads(int suggested, int rows)
{
    return hmmrt_block_for_rows(suggested, rows, 32);
}

/* How a call's kernel is launched (each call's c<index>_shape; hmmc's
 * LaunchShape, cuda_plan.h): a thread, lanes of a warp, or a block a
 * sequence. */
enum hmmc_launch_kind { HMMC_LAUNCH_THREAD, HMMC_LAUNCH_LANES, HMMC_LAUNCH_BLOCK };
struct hmmc_launch_shape {
    const char *name;   /* for --timing's plan line */
    hmmc_launch_kind kind;
    int states;         /* the state count the occupancy rule is given (BLOCK: at most
                           that many threads, rounded up to a warp) */
    int lanes;          /* LANES: lanes a sequence (8, 16, 32) */
    int shared_values;  /* dynamic shared memory a block, in values of the precision */
};

/* A call's kernel in one precision. */
typedef void (*hmmc_kernel)(const hmmrt_gpu_batch);

#ifdef HMMC_HOST_EMULATION
/* tests/emulate runs the kernel on the CPU instead (emulator.cpp). */
int hmmc_emulate_launch(const hmmc_launch_shape &shape, hmmc_kernel kernel, const hmmrt_gpu_batch *b);
#endif

/* Runs a call's kernel on a batch in the batch's precision (k_float or
 * k_double), its block size from the occupancy rules, chosen once per
 * precision into block[2] (the call's own). Returns a cudaError_t. */
static inline int hmmc_launch(const hmmc_launch_shape &shape, hmmc_kernel k_float, hmmc_kernel k_double,
                              int block[2], const hmmrt_gpu_batch *b)
{
    const int d = b->use_double;
    const hmmc_kernel kernel = d ? k_double : k_float;
#ifdef HMMC_HOST_EMULATION
    (void)block;
    return b->n == 0 ? 0 : hmmc_emulate_launch(shape, kernel, b);
#else
    const size_t shared = (size_t)shape.shared_values * (d ? sizeof(double) : sizeof(float));
    /* the attribute is the current device's: set on every launch (--devices) */
    if (shared > 48 * 1024 &&
        cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)shared) != cudaSuccess)
        return (int)cudaGetLastError();
    int threads = __atomic_load_n(&block[d], __ATOMIC_RELAXED);
    if (!threads) { /* the same for every device of a kind; several may work it out at once */
        const int suggested = hmmrt_gpu_block_size((const void *)kernel, shape.states, shared, NULL);
        threads = shape.kind == HMMC_LAUNCH_BLOCK   ? hmmc_block_threads(suggested, shape.states)
                  : shape.kind == HMMC_LAUNCH_LANES ? suggested / 32 * 32
                                                    : suggested;
        __atomic_store_n(&block[d], threads, __ATOMIC_RELAXED);
    }
    if (b->n == 0)
        return 0;
    const unsigned grid = shape.kind == HMMC_LAUNCH_BLOCK   ? (unsigned)b->n /* a block a sequence */
                          : shape.kind == HMMC_LAUNCH_LANES ? (unsigned)((b->n + threads / shape.lanes - 1) /
                                                                         (threads / shape.lanes))
                                                            : (unsigned)((b->n + threads - 1) / threads);
    kernel<<<grid, threads, shared, (cudaStream_t)b->stream>>>(*b);
    return (int)cudaGetLastError();
#endif
}

/* A call's plan line for --timing (hmmrt_gpu_describe_kernel). */
static inline void hmmc_describe(const hmmc_launch_shape &shape, hmmc_kernel k_float, hmmc_kernel k_double,
                                 int use_double, char *buf, size_t len)
{
#ifdef HMMC_HOST_EMULATION
    (void)k_float, (void)k_double, (void)use_double;
    snprintf(buf, len, "%s, emulated", shape.name);
#else
    const size_t shared = (size_t)shape.shared_values * (use_double ? sizeof(double) : sizeof(float));
    hmmrt_gpu_describe_kernel((const void *)(use_double ? k_double : k_float), shape.name, shape.states,
                              shared, buf, len);
#endif
}

#endif
