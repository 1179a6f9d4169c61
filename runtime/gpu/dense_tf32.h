/* dense_tf32.h: TF32 rounding and the split of a float into two TF32 parts
 * (hi + lo), shared by the GPU's conversion of a dense model's matrix
 * (hmmrt_dense.cuh) and the CPU emulation in tests/unit/test_dense_tf32.c,
 * and the bound that picks a dense product's mode (cublas_dl.c). The
 * analysis is in docs/program.md, "Dense products and the float contract". */
#ifndef HMMRT_DENSE_TF32_H
#define HMMRT_DENSE_TF32_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define HMMRT_TF32_HD __host__ __device__
#else
#define HMMRT_TF32_HD
#endif

/* x rounded to TF32 (10 stored mantissa bits), to nearest with ties away
 * from zero, as PTX's cvt.rna.tf32.f32: the result's low 13 bits are zero, so
 * a tensor core takes it exactly whatever its own conversion does. Inf and
 * NaN are left alone. */
static inline HMMRT_TF32_HD float hmmrt_tf32_round(float x)
{
#ifdef __CUDA_ARCH__
    uint32_t u = __float_as_uint(x);
#else
    uint32_t u;
    memcpy(&u, &x, sizeof u);
#endif
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u += 0x1000u; /* half of the lowest kept bit: a carry may raise the exponent */
        u &= 0xffffe000u;
    }
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
#endif
}

/* x = hi + lo + r: hi = TF32(x), lo = TF32(x - hi) (x - hi is exact in float),
 * |r| <= 2^-11 |x - hi| <= 2^-22 |x|: both parts go into a tensor core
 * exactly. */
static inline HMMRT_TF32_HD void hmmrt_tf32_split(float x, float *hi, float *lo)
{
    *hi = hmmrt_tf32_round(x);
    *lo = hmmrt_tf32_round(x - *hi);
}

/* The K chunk of a TF32 product: the tensor cores' FP32 accumulation loses
 * about the same fraction every position as a sum grows (they align the
 * addends to the largest and drop, not round, the bits below: Fasi, Higham,
 * Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor cores", 2021),
 * so a product over n states sums chunks of at most this many states, each
 * from zero, added by cuBLAS's epilogue (beta = 1), which rounds to nearest. */
enum { HMMRT_DENSE_TF32_CHUNK = 1024 };

/* The chunks of a product over n states: as even as they come, none over
 * HMMRT_DENSE_TF32_CHUNK. */
static inline HMMRT_TF32_HD int hmmrt_dense_chunks(int n)
{
    return n <= HMMRT_DENSE_TF32_CHUNK ? 1 : (n + HMMRT_DENSE_TF32_CHUNK - 1) / HMMRT_DENSE_TF32_CHUNK;
}

/* Chunk c's first state, of `chunks` over n (the last takes the rest). */
static inline HMMRT_TF32_HD int hmmrt_dense_chunk_first(int n, int chunks, int c)
{
    return (int)(((int64_t)n * c) / chunks);
}

#endif
