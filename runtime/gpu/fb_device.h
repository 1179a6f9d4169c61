/* fb_device.h: a model as written (runtime/fb.h) on the device for the
 * forward-backward kernel (fb_kernel.cu), kept by --train's E-step
 * (fb_gpu.c) and by each posterior call of a program (chunks.c). Private to
 * runtime/gpu/. */
#ifndef HMMRT_FB_DEVICE_H
#define HMMRT_FB_DEVICE_H

#include "hmmrt_fb_gpu.h"
#include "fb.h"

#include <cuda_runtime_api.h>
#include <stddef.h>

typedef struct hmmrt_fb_device {
    /* the tables and the kernel's shape (group, block, shared memory); the
     * per-launch fields are the user's to set */
    hmmrt_fb_gpu_job job;
    int per_block;             /* sequences a block works on at once */
    int column;                /* floats a column of the forward tables (job.f) takes */
    int64_t resident_blocks;   /* blocks the device keeps resident */
    size_t values;             /* n_emissions x K */
    size_t closure_cells;
    float *w, *e, *closure;    /* the numbers, in one allocation */
    float *matrix;             /* dense form: w_matrix then w_transposed (n x n each), or NULL */
    float *host_params;        /* their staging on the host */
    float *wide_numbers;       /* the wide form's numbers (job.t.wide.numbers), or NULL */
    int *wide_moves;           /* the wide form's moves, then its slots' tables, on the
                                  host, or NULL */
    void **owned;              /* every cudaMalloc, freed by close */
    int n_owned, cap_owned;
} hmmrt_fb_device;

/* Why the kernel cannot take fb (too many states, a silent cycle larger
 * than HMMRT_FB_GPU_MAX_CYCLE), or NULL. */
const char *hmmrt_fb_device_unsuitable(const hmmrt_fb *fb);
/* Uploads fb's tables to the current device and picks the shape for
 * training (posterior 0) or for posterior calls (1); the numbers come with
 * set_numbers. 0, or -1 with a message in err (d is then closed). */
int hmmrt_fb_device_open(hmmrt_fb_device *d, const hmmrt_fb *fb, int posterior, int device,
                         char *err, size_t errlen);
/* Copies fb's weights, emission values and closures (as floats) to the device. */
int hmmrt_fb_device_set_numbers(hmmrt_fb_device *d, const hmmrt_fb *fb, char *err, size_t errlen);
/* The kernel's shape in words, for hmmc -v and --train's first line. */
void hmmrt_fb_device_shape(const hmmrt_fb_device *d, char *buf, size_t len);
/* Blocks for a launch over n_seqs sequences. */
int hmmrt_fb_device_grid(const hmmrt_fb_device *d, int64_t n_seqs);
void hmmrt_fb_device_close(hmmrt_fb_device *d);

/* The wide form's blocks a multiprocessor keeps resident, and the shared
 * memory of one (fb_wide.cu). */
int hmmrt_fb_wide_blocks_per_sm(int N, int K, int posterior);
size_t hmmrt_fb_wide_shared_bytes(int N, int K, int posterior);

/* cudaMalloc, freed by close; NULL after a message. */
void *hmmrt_fb_device_alloc(hmmrt_fb_device *d, size_t bytes, char *err, size_t errlen);
/* A copy of host memory on the device, freed by close; NULL after a message. */
void *hmmrt_fb_device_upload(hmmrt_fb_device *d, const void *host, size_t bytes, char *err,
                             size_t errlen);
/* "WHAT failed: CUDA's message" into err; returns -1. */
int hmmrt_fb_device_fail(char *err, size_t errlen, cudaError_t e, const char *what);

#endif
