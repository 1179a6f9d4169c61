/* real_train_gpu.h: --train's E-step over real observations on the GPU: the
 * jobs of the statistics kernels (real_train_kernel.cu) that turn each
 * frame's expected uses of each density (real_fb_kernel.cu's, in double)
 * into every gaussian's weighted sums and every mixture part's count, and
 * the host side's entry points (real_train_gpu.c) that train.c reaches
 * through hmmrt_gpu_program. */
#ifndef HMMRT_REAL_TRAIN_GPU_H
#define HMMRT_REAL_TRAIN_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Doubles throughout. pw[f * n_parts + p]: uses[f * n_dens + t] times part
 * p's responsibility at frame f (p a part of density t); stats of gaussian
 * j at stats + stat_at[j]: W, the D sums of z = x - mean, then z_i z_k over
 * entry e's (tri_i[e], tri_k[e]) (a diagonal gaussian: z_i^2, e < D); the
 * parts' counts at counts[p]. */
typedef struct hmmrt_rt_job {
    int D, n_dens, n_parts, n_gauss;
    int64_t n_frames;
    const double *frames, *uses;
    const double *par, *log_norm, *part_logw;  /* real_gpu_model.h's layout, in double */
    const int64_t *par_at;
    const int *diagonal, *part_start, *part_gauss;
    const int *gauss_part_start, *gauss_part; /* gaussian j's parts */
    const int *tri_i, *tri_k;
    const int64_t *stat_at;
    double *pw, *stats, *counts;
    void *stream;
} hmmrt_rt_job;

/* The three kernels in order on job's stream: 0 or a cudaError_t's value. */
int hmmrt_rt_launch(const hmmrt_rt_job *job);

/* ---- the host side, for train.c (through hmmrt_gpu_program) ---- */
struct hmmrt_model;
/* Uploads nothing yet: plans chunks of whole sequences (obs[i], length[i]
 * observations of D reals) for model m's size; NULL with why in err (no
 * GPU, a sequence longer than a chunk holds, no memory). */
void *hmmrt_real_train_open(const struct hmmrt_model *m, int64_t n_seqs,
                            const double *const *obs, const int64_t *length, int device,
                            char *err, size_t errlen);
/* One E-step with model m's current numbers (its densities and moves):
 * lnp[i] per sequence (-inf: no path, nothing added), the moves' expected
 * uses into move_counts (m->n_moves, added to), and per gaussian of m (in
 * real_gpu_model.h's order) its sums into gauss (at gauss_at[j], which it
 * sets: n_gauss + 1 offsets), per part the counts into parts; *n_gauss and
 * part_start (n_dens + 1) describe them. 0, or -1 with why in err. */
int hmmrt_real_train_expect(void *g, const struct hmmrt_model *m, double *lnp,
                            double *move_counts, double **gauss, int64_t **gauss_at,
                            double **parts, int **part_start, char *err, size_t errlen);
void hmmrt_real_train_describe(void *g, char *buf, size_t len);
void hmmrt_real_train_close(void *g);

#ifdef __cplusplus
}
#endif

#endif
