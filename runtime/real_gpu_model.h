/* real_gpu_model.h: a model over real observations packed for the GPU path
 * (runtime/gpu/real_gpu.c): its distinct gaussians once each, its densities
 * as lists of (gaussian, ln weight), its emitting moves by destination; and
 * the CPU run of the kernels' own steps (runtime/gpu/real_math.cuh), in float
 * or double, with which the tests check that arithmetic without a GPU. */
#ifndef HMMRT_REAL_GPU_MODEL_H
#define HMMRT_REAL_GPU_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "hmmrt.h"

typedef struct hmmrt_rg_model {
    int D;
    /* distinct gaussians (a gaussian used by several emissions or mixtures
     * is one): parameters of gaussian g at par + par_at[g] (real_math.cuh's
     * layout), diagonal[g], log_norm[g] */
    int n_gauss;
    int64_t *par_at;
    int *diagonal;
    double *par, *log_norm;
    int64_t n_par;
    /* densities (the model's emissions): density t's parts are
     * part_gauss[part_start[t] .. part_start[t + 1] - 1] with ln weights
     * part_logw (0 for a lone gaussian; parts of weight 0 left out) */
    int n_dens, n_parts;
    int *part_start, *part_gauss;
    double *part_logw;
    int max_parts;
    /* states and the emitting moves into each: in_start[q] .. in_start[q + 1] - 1 */
    int n_states, start, end;
    int n_in;
    int *in_start, *in_from, *in_em;
    double *in_logw;
    /* the silent moves into end (the only silent moves the GPU path takes) */
    int n_end;
    int *end_from;
    double *end_logw;
    double flops_per_frame; /* seed paper 003's count for one frame's emissions */
} hmmrt_rg_model;

/* Packs model m (m->densities of D reals): 0, or -1 with why in err (the
 * model has moves the GPU path does not take, D too large, no memory); the
 * caller scores such a model on the CPU. */
int hmmrt_rg_model_make(const hmmrt_model *m, hmmrt_rg_model *out, char *err, size_t errlen);
void hmmrt_rg_model_free(hmmrt_rg_model *g);

/* The parameters as the kernels take them, in float (out: n_par floats). */
void hmmrt_rg_par_float(const hmmrt_rg_model *g, float *out);

/* The emission pass as a matrix product (large models, real_gpu.c): F =
 * hmmrt_rg_n_features(D) features of x less a centre (the mean of the
 * gaussians' means): x_i x_k for k <= i row by row, then x_i, then 1
 * (feat_i, feat_k: real_math.cuh's hmmrt_rg_feature arguments), and per
 * gaussian F weights (w: n_gauss x F, row-major) with ln N(x) = features .
 * weights: -P_ii / 2 and -P_ik from the precision P = L^-T L^-1, P mean,
 * and log_norm - mean' P mean' / 2 (mean' = mean less the centre). Returns
 * 0, or -1 when memory ran out. */
int hmmrt_rg_n_features(int D);
void hmmrt_rg_feature_index(int D, int *feat_i, int *feat_k);
int hmmrt_rg_gemm_weights(const hmmrt_rg_model *g, double *center, double *w);

/* The CPU run of the kernels' steps over one sequence (L observations of
 * D doubles, which the float run rounds to float as the GPU's input packing
 * does): ln P (forward) or the best path's ln score (viterbi), in float
 * (use_double 0) or double, normalised per position as on the GPU. Returns
 * NAN when memory ran out. */
double hmmrt_rg_score_cpu(const hmmrt_rg_model *g, int viterbi, int use_double,
                          const double *obs, int64_t L);
/* The same with the emission pass as the matrix product computes it
 * (features times weights, summed in the type's precision). */
double hmmrt_rg_score_cpu_gemm(const hmmrt_rg_model *g, int viterbi, int use_double,
                               const double *obs, int64_t L);

/* One position's emission row (n_dens log-densities) from the packed model,
 * in double: the emission pass's arithmetic. */
void hmmrt_rg_row_d(const hmmrt_rg_model *g, const double *x, double *row);

#endif
