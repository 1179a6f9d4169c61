/* scan_gpu.h: the GPU scan of one long sequence (issue 24, docs/scan.md),
 * private to runtime/gpu/: the job one kernel launch runs (scan_kernel.cu)
 * and what the driver calls (scan_gpu.c). */
#ifndef HMMRT_SCAN_GPU_H
#define HMMRT_SCAN_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One launch: every chunk's transfer, a thread per (chunk, boundary state). */
typedef struct hmmrt_scan_gpu_job {
    int nb;              /* boundary states, padded (hmmrt_scan_pad: 1 to 4, 8, 16, 32) */
    int n_symbols;       /* K: the matrices are K x nb x nb */
    int max_plus;        /* 1: viterbi (ln values), 0: forward or backward (sums) */
    int backward;        /* each chunk runs from its last position down to its first */
    int use_double;      /* the matrices and columns in double, else float */
    int64_t len;         /* positions: codes[0 .. len) */
    int64_t chunk;       /* chunk k: [k * chunk, min((k + 1) * chunk, len)) */
    int64_t n_chunks;
    const uint8_t *codes;   /* device */
    const void *m;          /* device: K x nb x nb floats or doubles */
    const int *me;          /* device: K exponents (sums) */
    const double *mo;       /* device: K offsets (max-plus) */
    void *out;              /* device: the results (hmmrt_scan_results, scan_chunk.h): the
                               values, */
    void *out_scale;        /* their scales, */
    int *status;            /* their statuses */
    void *stream;           /* cudaStream_t */
} hmmrt_scan_gpu_job;

/* Launches the job's kernel: a cudaError_t (0: launched). */
int hmmrt_scan_gpu_launch(const hmmrt_scan_gpu_job *job);
/* The shared memory a job's matrices take, bytes (the launch's limit: 48 KiB). */
size_t hmmrt_scan_gpu_shared(int nb, int n_symbols, int use_double);
/* Threads a block. */
enum { HMMRT_SCAN_GPU_BLOCK = 128 };

#ifdef __cplusplus
}
#endif
#endif
