/* profile_data_gpu.h: profiles as data on the GPU (docs/hmmer.md, "Profiles
 * as data"): one kernel in libhmmrt_gpu (runtime/gpu/profile_data_kernel.cu), a
 * group of 32 lanes a sequence in double, reads any profile's tables from
 * device memory (hmmrt_profile.data's layout, uploaded once a device); a
 * generated call's launcher names its model and this launcher. */
#ifndef HMMRT_PROFILE_DATA_GPU_H
#define HMMRT_PROFILE_DATA_GPU_H

#include "hmmrt_gpu.h"
#include "hmmrt_profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One call that the generic kernel runs. */
typedef struct hmmrt_gpu_profile_call {
    const hmmrt_profile *profile; /* the C path's tables (host) */
    int viterbi;                  /* 0: forward */
    int K;                        /* symbols of the call's alphabet (profile->col's size) */
    int n_lw;                     /* the model's length-dependent weights */
    /* With n_lw: writes each sequence's weights (n_lw doubles from out +
     * j * n_lw, for lengths[j]; device memory) on the stream; a launcher of
     * a kernel the generated .cu writes. Returns a cudaError_t. */
    int (*length_weights)(const int64_t *lengths, int64_t n, double *out, void *stream);
} hmmrt_gpu_profile_call;

/* Scores the batch under the call's profile, on the batch's stream, into
 * b->scores (float or double as b->use_double says; the kernel sums in
 * double). The profile's tables go to the current device the first time.
 * Returns a cudaError_t (0: success). */
int hmmrt_gpu_profile_launch(const hmmrt_gpu_profile_call *call, const hmmrt_gpu_batch *b);

/* The plan in words for --timing and hmmc -v's runtime side. */
void hmmrt_gpu_profile_describe(const hmmrt_gpu_profile_call *call, int device, int use_double,
                                char *buf, size_t len);

/* The kernel's launch (profile_data_kernel.cu), for profile_data.c. */
typedef struct hmmrt_profile_kernel_args {
    const double *tables;      /* device */
    const unsigned char *col;  /* device */
    double special[HMMRT_PX_N];
    int special_lw[HMMRT_PX_N];
    int M, stride, n_cols, viterbi, n_lw, use_double;
    const double *lw;          /* device: n_lw a sequence, or NULL */
    const uint8_t *codes;
    const int64_t *offsets, *lengths;
    int64_t n;
    void *scores;
    double *rows;              /* device: 6 * stride doubles a group */
    /* device, or NULL: score only sequences pick[0 .. *picked - 1] (those the
     * float kernel marked), writing float scores */
    const int64_t *pick;
    const int *picked;
} hmmrt_profile_kernel_args;
int hmmrt_profile_kernel_launch(const hmmrt_profile_kernel_args *a, int blocks, int threads,
                                void *stream);
const void *hmmrt_profile_kernel_address(void);

/* Gathers into pick (and *picked, which must be 0 before) the sequences whose
 * float score is NaN or -inf (marked by the float kernel), on the stream. */
int hmmrt_profile_pick_launch(const float *scores, int64_t n, int64_t *pick, int *picked,
                              void *stream);

#ifdef __cplusplus
}
#endif
#endif
