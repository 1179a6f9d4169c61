/* real_fb_steps.h: backward, posteriors and viterbi paths over real
 * observations as the GPU runs them (runtime/gpu/real_fb_kernel.cu): the
 * emitting moves by source, which the kernels' backward reads, and the CPU
 * run of the kernels' own steps (runtime/gpu/real_fb_math.cuh) in float or
 * double, with which tests/unit/test_real_fb_gpu.c checks them. */
#ifndef HMMRT_REAL_FB_STEPS_H
#define HMMRT_REAL_FB_STEPS_H

#include <stdint.h>

#include "real_gpu_model.h"

/* The emitting moves of g by source: out_start[q] .. out_start[q + 1] - 1,
 * in the order of g's moves by destination within each source. */
typedef struct hmmrt_rfb_moves {
    int *out_start, *out_to, *out_em;
    double *out_logw;
} hmmrt_rfb_moves;
int hmmrt_rfb_moves_make(const hmmrt_rg_model *g, hmmrt_rfb_moves *out); /* 0, -1: no memory */
void hmmrt_rfb_moves_free(hmmrt_rfb_moves *m);

/* What the kernels give for one sequence of L observations (obs, D doubles
 * each; the emission rows hmmrt_rg_row_d's, rounded to float for float). */
typedef struct hmmrt_rfb_result {
    double forward, backward; /* ln P by each */
    double *post;             /* L x n_states (caller's), or NULL */
    int *best;                /* L (caller's), or NULL */
    double viterbi;           /* the best path's ln score */
    int *path;                /* L (caller's), or NULL: viterbi not run */
} hmmrt_rfb_result;
/* 0, or -1 when memory ran out. */
int hmmrt_rfb_run_cpu(const hmmrt_rg_model *g, const hmmrt_rfb_moves *mv, int use_double,
                      const double *obs, int64_t L, hmmrt_rfb_result *r);

#endif
