/* hmmrt_fb_gpu.h: forward-backward over a model as written on the GPU, for
 * the E-step of --train (its counts) and for posterior calls: the tables the
 * kernel reads and one launch's work, shared by the host side
 * (runtime/gpu/fb_device.c, fb_gpu.c, chunks.c) and the kernel
 * (runtime/gpu/fb_kernel.cu, compiled once into libhmmrt_gpu.a). */
#ifndef HMMRT_FB_GPU_H
#define HMMRT_FB_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernel keeps a nontrivial silent cycle's gathered values in
 * registers: models with larger cycles train on the CPU. */
#define HMMRT_FB_GPU_MAX_CYCLE 16
/* Columns live in shared memory: two of n floats. */
#define HMMRT_FB_GPU_MAX_STATES 8192
/* A posterior call leaves sequences longer than this to the CPU engine: the
 * kernel gives a sequence one thread (or a few lanes), and a lone long
 * sequence runs several times faster on one core (issue 24's scan will
 * spread it over the GPU). */
#define HMMRT_FB_GPU_LONGEST 65536

/* The dense form up to this many states (two n x n float matrices a block and
 * an n x n double matrix of counts a group, in shared memory). */
#define HMMRT_FB_GPU_DENSE_MAX 128

/* The HMM form: a thread a sequence, the columns in registers, for models
 * whose only silent states are the start and the end and whose emitting
 * moves into each state share its table (an HMM with initial and final
 * weights), of at most HMMRT_FB_HMM_MAX_STATES emitting states and a small
 * alphabet. The numbers travel with every launch (they change with every
 * iteration of training); states are padded with zeros to N. */
#define HMMRT_FB_HMM_MAX_STATES 8
typedef struct hmmrt_fb_hmm {
    int N;                     /* 0: the model is not in the form; else 2, 4 or 8 */
    int KB;                    /* the alphabet rounded up: 4, 8, 16 or 32 (N x KB <= 64) */
    int state_of[HMMRT_FB_HMM_MAX_STATES];    /* emitting state q's index in the model, -1: padding */
    int table_of[HMMRT_FB_HMM_MAX_STATES];    /* its emission table (-1: padding) */
    float a[HMMRT_FB_HMM_MAX_STATES * HMMRT_FB_HMM_MAX_STATES]; /* a[p * N + q]: p -> q */
    float initial[HMMRT_FB_HMM_MAX_STATES];   /* start -> q */
    float final[HMMRT_FB_HMM_MAX_STATES];     /* q -> end */
    float empty;                              /* start -> end: the empty sequence's probability */
    int move_a[HMMRT_FB_HMM_MAX_STATES * HMMRT_FB_HMM_MAX_STATES]; /* their moves, -1: none */
    int move_initial[HMMRT_FB_HMM_MAX_STATES], move_final[HMMRT_FB_HMM_MAX_STATES];
    int move_empty;
} hmmrt_fb_hmm;

/* The wide HMM form: models of the HMM form's shape (only the start and the
 * end silent, the emitting moves into each state of its table) with up to
 * HMMRT_FB_WIDE_MAX_STATES emitting states, padded to N = 32 or 64: a block
 * of N threads a sequence, a thread a state (fb_wide.cu). The arrays are on
 * the device; the numbers change with every iteration of training. */
#define HMMRT_FB_WIDE_MAX_STATES 64
typedef struct hmmrt_fb_wide {
    int N;                     /* 0: the model is not in the form; else 32 or 64 */
    int n_other;               /* states that are no slot (the start, the end) */
    float empty;               /* start -> end */
    int move_empty;            /* its move, -1: none */
    const float *numbers;      /* a (N x N, a[p * N + q]: p -> q), initial (N), final (N),
                                  then the emission values, K x N (et[k * N + q]) */
    const int *moves;          /* their moves: a's (N x N), initial's, final's; -1: none */
    const int *state_of;       /* slot q's state, -1: padding */
    const int *table_of;       /* slot q's emission table, -1: padding */
    const int *other;          /* the n_other states */
    double *block_counts;      /* training: N x N move counts for each resident block */
} hmmrt_fb_wide;

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
    /* The dense form, for models whose emitting moves into each state share
     * one emission table (dense = 1): the emitting weights as an n x n
     * matrix w_matrix[k * n + j] (0: no move k -> j) and its transpose, and
     * each state's table (-1: no emitting move ends there). The kernel keeps
     * both matrices in shared memory and walks no move lists. */
    int dense;
    const float *w_matrix, *w_transposed;
    const int *state_emission;
    hmmrt_fb_hmm hmm;          /* the HMM form, when hmm.N > 0: its own kernel */
    hmmrt_fb_wide wide;        /* the wide HMM form, when wide.N > 0 (and hmm.N is 0) */
} hmmrt_fb_gpu_tables;

/* One launch. Sequences go to groups of `group` lanes (4, 8, 16 or 32,
 * several a block, synchronised as a warp's lanes), or with group 0 to whole
 * blocks; each group keeps going through sequences (s, s + all groups, ...)
 * and adds its counts to the totals once, at the end. */
typedef struct hmmrt_fb_gpu_job {
    hmmrt_fb_gpu_tables t;
    int64_t n_seqs;
    const uint8_t *codes;      /* sequence s: codes[offsets[s] .. + lengths[s]], each starting
                                  at a multiple of 16 bytes and zero-padded to one */
    const int64_t *offsets, *lengths;
    const int64_t *cols_at;    /* sequence s's L + 1 columns: cols_at[s] + i * col_stride,
                                  0 <= i <= L */
    int col_stride;            /* 1; the HMM form: 32, the columns of a warp's 32
                                  sequences side by side (16-byte records, coalesced) */
    const int64_t *rec_at;     /* NULL, or the HMM form's records at rec_at[s] + i *
                                  col_stride while decode and probability& keep cols_at
                                  (a posterior call's) */
    float *f;                  /* forward tables: column c's n values at f + c * n (the HMM
                                  form: a record of hmm.N values and the exponent, rounded
                                  up to whole float4s, at f + c * that) */
    int *scale;                /* column c was divided by 2^scale[c] */
    double *lnp;               /* ln P per sequence (-inf: no path; its counts are not added;
                                  NaN: a posterior call leaves the sequence to the CPU) */
    int posterior;             /* 0: --train's E-step, adding counts; 1: a posterior call */
    int64_t longest;           /* 0, or a sequence longer than this is not scored: ln P NaN */
    double *move_counts;       /* E-step: n_moves, added to */
    double *emission_counts;   /* E-step: n_emissions x K, added to */
    void *best;                /* posterior, or NULL: position i's state of highest
                                  posterior at best[cols_at[s] + i], 1 <= i <= L, in
                                  best_bytes (1, 2 or 4: the least that holds n states) */
    int best_bytes;
    float *post;               /* posterior, or NULL: position i's posteriors at
                                  post + (cols_at[s] + i) * n */
    int group;                 /* lanes a sequence (4, 8, 16, 32), or 0: a block */
    int block, grid;           /* threads a block; blocks */
    int counts_in_shared;      /* 1: each group gathers its counts in shared memory (always
                                  with dense: the move counts as an n x n matrix, transposed) */
    size_t block_bytes;        /* shared memory of the whole block (dense: the two matrices) */
    size_t group_bytes;        /* shared memory a group */
    void *stream;
} hmmrt_fb_gpu_job;

/* Launches the kernel (fb_kernel.cu); returns a cudaError_t (0: success). */
int hmmrt_fb_gpu_launch(const hmmrt_fb_gpu_job *job);

#ifdef __cplusplus
}
#endif
#endif
