/* hmmrt_fb_gpu.h: forward-backward over a model as written on the GPU, the
 * E-step of --train (and its counts): the tables the kernel reads and one
 * launch's work, shared by the host driver (runtime/gpu/fb_gpu.c) and the
 * kernel (hmmrt_fb.cuh, compiled into each CUDA program). */
#ifndef HMMRT_FB_GPU_H
#define HMMRT_FB_GPU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel keeps a nontrivial silent cycle's gathered values in
 * registers: models with larger cycles train on the CPU. */
#define HMMRT_FB_GPU_MAX_CYCLE 16
/* Columns live in shared memory: two of n floats. */
#define HMMRT_FB_GPU_MAX_STATES 8192

/* Device pointers; the layout of runtime/fb.h's hmmrt_fb, with its
 * components grouped in levels (a level's components depend only on
 * earlier levels: one barrier each). */
typedef struct hmmrt_fb_gpu_tables {
    int n, K, start, end, n_moves, n_emissions, n_silent, n_levels;
    const int *move_from, *move_to, *move_emission;
    const float *w;            /* n_moves weights */
    const float *e;            /* n_emissions x K values */
    const int *emit_in_start, *emit_in;   /* emitting moves by destination */
    const int *emit_out_start, *emit_out; /* emitting moves by source */
    const int *silent;         /* every silent move */
    const int *level_start;    /* level l: components level_comp[level_start[l] .. level_start[l+1]-1] */
    const int *level_comp;
    const int *comp_start, *comp_state;
    const int64_t *closure_at; /* -1 for a lone state without a loop */
    const float *closure;
    const int *in_start, *in, *out_start, *out; /* silent moves between components */
} hmmrt_fb_gpu_tables;

/* One launch: a block per sequence. */
typedef struct hmmrt_fb_gpu_job {
    hmmrt_fb_gpu_tables t;
    int64_t n_seqs;
    const uint8_t *codes;      /* sequence s: codes[offsets[s] .. + lengths[s]] */
    const int64_t *offsets, *lengths;
    float *f;                  /* forward tables: sequence s's (L+1) x n at f + f_offsets[s] */
    const int64_t *f_offsets;
    double *ls;                /* ln of each column's scale: sequence s's at ls + ls_offsets[s] */
    const int64_t *ls_offsets;
    double *lnp;               /* ln P per sequence (-inf: no path; its counts are not added) */
    double *move_counts;       /* n_moves, added to */
    double *emission_counts;   /* n_emissions x K, added to */
    int block;                 /* threads a block */
    int counts_in_shared;      /* 1: the counts of a sequence gather in shared memory first */
    size_t shared_bytes;
    void *stream;
} hmmrt_fb_gpu_job;

/* Launches the kernel (hmmrt_fb.cuh); returns a cudaError_t (0: success). */
int hmmrt_fb_gpu_launch(const hmmrt_fb_gpu_job *job);

#ifdef __cplusplus
}
#endif
#endif
