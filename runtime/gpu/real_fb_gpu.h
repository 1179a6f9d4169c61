/* real_fb_gpu.h: backward, posteriors and viterbi's paths over real
 * observations on the GPU: the kernels' jobs (real_fb_kernel.cu) and the
 * host side's hooks that real_gpu.c calls (real_fb_gpu.c). The kernels read
 * the emission pass's table of log-densities (real_gpu.h) and take whole
 * sequences (a piece with RG_FIRST and RG_LAST). */
#ifndef HMMRT_REAL_FB_GPU_H
#define HMMRT_REAL_FB_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Forward, storing every column (alpha: the column after observation i of
 * piece p at alpha + (row[p] + i) n, less its largest value; their summed
 * offsets at a_off), then backward: fscore[p] and bscore[p] = ln P by each;
 * post (NULL: not wanted) the posteriors of position i at post + (row[p] +
 * i) n, best (NULL: not wanted) the state of highest posterior (the first
 * on a tie) at best[row[p] + i]. Viterbi (viterbi 1): bp (n a frame) the
 * best move into each state, then path[row[p] + i] the best path's state at
 * position i, fscore[p] its ln score. */
typedef struct hmmrt_rfb_job {
    int use_double, viterbi;
    int n_states, start, n_dens;
    int n_pieces;
    const int64_t *row, *len;
    const int *flags;                          /* RG_FIRST | RG_LAST: whole sequences only */
    const int *in_start, *in_from, *in_em;     /* emitting moves by destination */
    const void *in_logw;                       /* reals */
    const int *out_start, *out_to, *out_em;    /* the same by source */
    const void *out_logw;                      /* reals */
    int n_end;
    const int *end_from;
    const void *end_logw;                      /* reals */
    const void *table;                         /* the emission pass's: frames x n_dens reals */
    void *alpha;                               /* frames x n_states reals */
    double *a_off;                             /* frames */
    void *cols;                                /* NULL: two columns in shared memory; else
                                                  2 n_states reals a piece */
    void *post;                                /* frames x n_states reals, or NULL */
    int *best;                                 /* frames, or NULL */
    int *bp;                                   /* viterbi: frames x n_states */
    int *path;                                 /* viterbi: frames */
    double *fscore, *bscore;                   /* n_pieces */
    /* training (NULL: not counted): each emitting move's expected uses added
     * to move_counts[in_move[m]], each end move's to move_counts[end_move[k]]
     * (the model's move indexes), and at uses[f * n_dens + t] the expected
     * uses of density t at frame f of the chunk (doubles) */
    const int *in_move, *end_move;
    double *move_counts, *uses;
    int block;
    void *stream;
} hmmrt_rfb_job;

/* 0 or a cudaError_t's value. */
int hmmrt_rfb_launch(const hmmrt_rfb_job *job);
/* Bytes of shared memory the two columns take. */
size_t hmmrt_rfb_shared(int n_states, int use_double);

/* ---- the host side (real_fb_gpu.c), for real_gpu.c ---- */
struct hmmrt_program;
struct hmmrt_rg_model;
typedef struct hmmrt_rfb hmmrt_rfb;

/* Whether the program prints anything real_fb_gpu.c computes (then every
 * sequence goes to the device whole, in one chunk). */
int hmmrt_rfb_wanted(const struct hmmrt_program *prog);
/* The most frames a chunk may hold so that the stored columns of the
 * largest model (n_states) fit; at most frames. */
int64_t hmmrt_rfb_frames(int n_states, int use_double, int64_t frames);
/* Buffers for chunks of max_frames frames and max_pieces pieces: NULL with
 * why in err. */
hmmrt_rfb *hmmrt_rfb_open(const struct hmmrt_program *prog, int use_double, int64_t max_frames,
                          int max_pieces, char *err, size_t errlen);
void hmmrt_rfb_close(hmmrt_rfb *r);
/* A chunk's calls of model mi (m its packed form), after its emission pass
 * into table: runs the kernels over the n pieces (device row, len, flags;
 * the host's copies row_h, len_h and each piece's sequence seq_h) and writes the
 * columns into values (n_columns a sequence). 0, or -1 with why in err. */
int hmmrt_rfb_chunk(hmmrt_rfb *r, int mi, const struct hmmrt_rg_model *m, const void *table,
                    int n, const int64_t *row_d, const int64_t *len_d, const int *flags_d,
                    const int64_t *row_h, const int64_t *len_h, const int *seq_h, void *values,
                    void *stream, char *err, size_t errlen);
/* --timing's lines. */
void hmmrt_rfb_report(const hmmrt_rfb *r, void *out);

#ifdef __cplusplus
}
#endif

#endif
