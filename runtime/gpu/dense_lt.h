/* dense_lt.h: dense models' products through cublasLt with an algorithm chosen
 * by timing (dense_lt.c), for cublas_dl.c, which falls back to cublasGemmEx
 * wherever these answer -1. */
#ifndef HMMRT_DENSE_LT_H
#define HMMRT_DENSE_LT_H

#include <stddef.h>

/* out = in x matrix, rows x n by n x n, row-major floats on the device, as
 * cublasGemmEx computes it (cublas_dl.c); 0 or cuBLAS's status. */
typedef int (*hmmrt_dense_gemm_fn)(void *stream, int rows, int n, const float *in,
                                   const float *matrix, float *out);

/* While the GPU opens (the current device): times cublasGemmEx's product of
 * 1,024 rows by n x n (mode: HMMRT_DENSE_TF32 or _FP32) and cublasLt's
 * candidates for it, checks each candidate's numbers against GemmEx's, and
 * keeps the fastest where it beats GemmEx. Only with HMMRT_DENSE_LT=on. */
void hmmrt_dense_lt_tune(int n, int mode, hmmrt_dense_gemm_fn gemm);

/* The product through the tuned algorithm, if this device has one for n and
 * mode that takes `rows` and needs at most workspace_bytes: 0 or cuBLAS's
 * status; -1 where GemmEx runs it instead. */
int hmmrt_dense_lt_product(int mode, void *stream, int rows, int n, const float *in,
                           const float *matrix, float *out, void *workspace,
                           size_t workspace_bytes);

/* The workspace the tuned algorithm of this device needs (0: none). */
size_t hmmrt_dense_lt_workspace(int n);

/* What the tuning found on this device, for --timing's plan line. */
void hmmrt_dense_lt_describe(char *buf, size_t len);

#endif
