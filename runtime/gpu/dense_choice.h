/* dense_choice.h: which product a dense model's forward and backward take in
 * float (dense_choice.c): TF32 in chunks of states, or the matrix split in
 * two TF32 parts where its rounding to TF32 would bias every position the
 * same way; HMMRT_DENSE_PRODUCT forces one. */
#ifndef HMMRT_DENSE_CHOICE_H
#define HMMRT_DENSE_CHOICE_H

#include <stddef.h>

#include "hmmrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The mean, over up to HMMRT_DENSE_SAMPLE_ROWS rows of the matrix (evenly
 * spaced), of each row's relative change of its sum when its weights (in
 * float) are rounded to TF32: about the relative change of a forward
 * column's mass at each position, the same every position. */
enum { HMMRT_DENSE_SAMPLE_ROWS = 256 };
double hmmrt_dense_tf32_bias(const hmmrt_dense *d);

/* Above this (per position; the 1,000 x 1,000 DNA benchmark's contract
 * allows 1.4e-5 per position), TF32X2 rather than TF32: a dense random
 * model's is about 1e-6 or less, a matrix of repeated values' up to 4.9e-4. */
#define HMMRT_DENSE_TF32_BIAS_MOST 3e-6

/* The chunks of states a TF32 product of n states sums (dense_tf32.h's
 * hmmrt_dense_chunks), unless HMMRT_DENSE_CHUNK=S (states a chunk; 0: one
 * product) asks otherwise, for measuring (benchmarks/dense-blas/sizes). */
int hmmrt_dense_product_chunks(int n);

/* The mode for the model's float sums (HMMRT_DENSE_TF32, _TF32X2, _FP32 or
 * _TILES) and, in why, why (always written). */
int hmmrt_dense_choose(const hmmrt_dense *d, char *why, size_t len);

#ifdef __cplusplus
}
#endif

#endif
