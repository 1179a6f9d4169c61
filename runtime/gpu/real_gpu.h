/* real_gpu.h: the jobs of the GPU path over real observations, shared by its
 * host side (real_gpu.c) and its kernels (real_kernel.cu): the emission pass
 * (every frame's log-density under every density of a model, into a table)
 * and the recursion (forward or viterbi over pieces of sequences, reading
 * that table). Device pointers throughout; `real` float or double by
 * use_double. */
#ifndef HMMRT_REAL_GPU_H
#define HMMRT_REAL_GPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* table[f * n_dens + t] = ln of density t at frame f (frames[f * D ..]). */
typedef struct hmmrt_rg_emit_job {
    int use_double;
    int D, n_dens;
    int64_t n_frames;
    const void *frames;                        /* n_frames x D reals */
    const void *par;                           /* real_gpu_model.h's parameters, as reals */
    const int64_t *par_at;
    const int *diagonal;
    const void *log_norm;                      /* reals, one a gaussian */
    const int *part_start, *part_gauss;
    const void *part_logw;                     /* reals */
    void *table;                               /* n_frames x n_dens reals */
    void *stream;                              /* cudaStream_t */
} hmmrt_rg_emit_job;

/* The emission pass as a matrix product (float): features of each frame
 * (real_math.cuh's hmmrt_rg_feature of feat_i[j], feat_k[j] over the frame
 * less center, j < n_feat, zero to n_pad) in the mode's sections
 * (phi[f * n_k + s * n_pad + j]: hmmrt_rg_feature_part), the product
 * (cuBLAS: gauss[f * n_gauss + g]), then each density's log-sum into
 * table. */
typedef struct hmmrt_rg_gemm_job {
    int D, n_feat, n_pad, n_k, mode, n_gauss, n_dens;
    int64_t n_frames;
    const float *frames, *center;
    const int *feat_i, *feat_k;
    float *phi;
    const float *gauss;
    const int *part_start, *part_gauss;
    const float *part_logw;
    float *table;
    void *stream;
} hmmrt_rg_gemm_job;

/* Piece p: frames [row[p], row[p] + len[p]) of the table, one stretch of a
 * sequence. flags: RG_FIRST (the sequence starts here: the start state's
 * column), else the column and offset left in carry by the piece before;
 * RG_LAST (it ends here: score[p] = the end's value), else the column goes
 * to carry_out. Only a chunk's first piece may lack RG_FIRST, its last
 * RG_LAST; the host swaps carry and carry_out between chunks (two buffers:
 * the blocks of one chunk run in any order). */
enum { RG_FIRST = 1, RG_LAST = 2 };
typedef struct hmmrt_rg_step_job {
    int use_double, viterbi;
    int n_states, start, n_dens;
    int n_pieces;
    const int64_t *row, *len;
    const int *flags;
    const int *in_start, *in_from, *in_em;
    const void *in_logw;                       /* reals */
    int n_end;
    const int *end_from;
    const void *end_logw;                      /* reals */
    const void *table;
    const void *carry;                         /* n_states reals: a column between chunks */
    const double *carry_offset;
    void *carry_out;
    double *carry_offset_out;
    double *score;                             /* n_pieces */
    void *work;                                /* NULL: the columns in shared memory; else
                                                  2 n_states reals a piece */
    int block;                                 /* threads a block */
    void *stream;
} hmmrt_rg_step_job;

/* 0, or a cudaError_t's value. */
int hmmrt_rg_emit_launch(const hmmrt_rg_emit_job *job);
int hmmrt_rg_step_launch(const hmmrt_rg_step_job *job);
int hmmrt_rg_features_launch(const hmmrt_rg_gemm_job *job);
int hmmrt_rg_mix_launch(const hmmrt_rg_gemm_job *job);
/* Bytes of shared memory the recursion's columns take (both), for the choice
 * between shared memory and work. */
size_t hmmrt_rg_step_shared(int n_states, int use_double);

/* The model's tables to the device (real_gpu.c; real_fb_gpu.c's too): n
 * doubles of v as floats or doubles, or bytes as they are. 0, or -1 with
 * err written. */
int hmmrt_rg_upload_reals(void **to, const double *v, int64_t n, int use_double, char *err,
                          size_t errlen);
int hmmrt_rg_upload(void **to, const void *v, size_t bytes, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
