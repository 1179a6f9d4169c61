/* fb_kernel.cuh: what the forward-backward kernel's files share:
 * fb_kernel.cu (the model as written, groups of lanes or a block a sequence),
 * fb_hmm.cu (the HMM form, a thread a sequence) and fb_wide.cu (the wide
 * HMM form, a thread a state). Private to runtime/gpu/. */
#ifndef HMMRT_FB_KERNEL_CUH
#define HMMRT_FB_KERNEL_CUH

#include <stdint.h>
#include "hmmrt_fb_gpu.h"

/* A posterior call's state of highest posterior at column col. */
__device__ static inline void hmmrt_fb_put_best(const hmmrt_fb_gpu_job &job, int64_t col, int state)
{
    if (job.best_bytes == 1)
        ((uint8_t *)job.best)[col] = (uint8_t)state;
    else if (job.best_bytes == 2)
        ((uint16_t *)job.best)[col] = (uint16_t)state;
    else
        ((int *)job.best)[col] = state;
}

/* Launches the HMM form (fb_hmm.cu); a cudaError_t. */
int hmmrt_fb_hmm_launch(const hmmrt_fb_gpu_job *job);
/* Launches the wide HMM form (fb_wide.cu); a cudaError_t. */
int hmmrt_fb_wide_launch(const hmmrt_fb_gpu_job *job);

#endif
