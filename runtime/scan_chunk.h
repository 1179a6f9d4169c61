/* scan_chunk.h: the arithmetic of the GPU scan's chunks (issue 24,
 * docs/scan.md) for host and device alike: a column of the boundary states
 * through a stretch of positions, a small matrix a symbol, in float or
 * double. runtime/gpu/scan_kernel.cu is a loop around it; scan_matrices.c
 * runs it on the CPU for the tests (hmmrt_scan_emulate). */
#ifndef HMMRT_SCAN_CHUNK_H
#define HMMRT_SCAN_CHUNK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define HMMRT_SCAN_HD __host__ __device__ __forceinline__
#define HMMRT_SCAN_UNROLL _Pragma("unroll")
#else
#define HMMRT_SCAN_HD static inline
#define HMMRT_SCAN_UNROLL
#endif

/* The most boundary states a call may have for the GPU scan: a thread keeps
 * its column (nb values) and the next one in registers. */
#define HMMRT_SCAN_NB_MAX 32

/* What a run of a chunk ends with (hmmrt_scan_run_sum_*). */
enum {
    HMMRT_SCAN_LIVE = 0,  /* the column holds paths */
    HMMRT_SCAN_DEAD = 1,  /* no path goes through: the column is 0 */
    HMMRT_SCAN_RISKY = 2  /* a value fell so far below the column's sum that the type may have
                             lost it: score in a wider type */
};

/* A chunk's positions as a stretch of codes: x[0 .. len), in order, or from
 * x[len - 1] down to x[0] (backward). The matrices: per symbol c, nb x nb
 * values m[(c * nb + s) * nb + j] (from boundary state j to s), times
 * 2^me[c] for sums, plus mo[c] for max-plus (ln values). */

/* A launch's results for n_chunks chunks of nb (padded) boundary states, in
 * one buffer: n_chunks x nb columns of nb values (float or double; column j
 * of chunk k at (k * nb + j) * nb), then a scale per column (int64_t
 * exponents for sums, double offsets for max-plus), then an int status per
 * column (HMMRT_SCAN_LIVE, DEAD or RISKY). Returns the buffer's bytes. */
HMMRT_SCAN_HD size_t hmmrt_scan_results(int nb, int64_t n_chunks, int use_double,
                                        size_t *scales_at, size_t *status_at)
{
    size_t columns = (size_t)n_chunks * (size_t)nb;
    *scales_at = (columns * (size_t)nb * (use_double ? 8 : 4) + 7) / 8 * 8;
    *status_at = *scales_at + columns * 8;
    return *status_at + columns * sizeof(int);
}

/* One instantiation per type: the body is written once (scan_chunk_body.h). */
#define HMMRT_SCAN_REAL float
#define HMMRT_SCAN_NAME(name) name##_f
#define HMMRT_SCAN_FLOOR 0x1p-60f   /* a value this far below its column's sum: RISKY */
#define HMMRT_SCAN_BAND 0x1p16f     /* a column's sum is kept within 2^-16 .. 2^16 */
#include "scan_chunk_body.h"
#undef HMMRT_SCAN_REAL
#undef HMMRT_SCAN_NAME
#undef HMMRT_SCAN_FLOOR
#undef HMMRT_SCAN_BAND

#define HMMRT_SCAN_REAL double
#define HMMRT_SCAN_NAME(name) name##_d
#define HMMRT_SCAN_FLOOR 0x1p-600
#define HMMRT_SCAN_BAND 0x1p40
#include "scan_chunk_body.h"
#undef HMMRT_SCAN_REAL
#undef HMMRT_SCAN_NAME
#undef HMMRT_SCAN_FLOOR
#undef HMMRT_SCAN_BAND

#endif
