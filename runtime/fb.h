/* fb.h: forward-backward over a model as written (hmmrt_model): every state,
 * silent states and silent cycles included, in double with a scale per
 * column. Posterior calls (posterior.c) and training (train.c) share it; the
 * compiled forward and backward kernels never use it. */
#ifndef HMMRT_FB_H
#define HMMRT_FB_H

#include "hmmrt.h"

/* A model ready for forward-backward: its moves indexed by state and its
 * silent moves ordered, each silent cycle (a strongly connected set of
 * states joined by silent moves) summed once as a matrix of path sums. */
typedef struct hmmrt_fb {
    int n, K, start, end;
    const char *const *names; /* the states' names */
    int n_moves, n_emissions;
    hmmrt_model_move *moves;  /* a copy: from, to, emission (weights are in w) */
    double *w;                /* n_moves: the weights (training changes them) */
    unsigned char *live;      /* n_moves: on a path from the start to the end (the
                                 others are left out of every sum; their counts stay 0) */
    double *e;                /* n_emissions x K: the emission values */
    int *emit_out_start, *emit_out; /* emitting moves out of each state */
    int *silent, n_silent;    /* every silent move */
    /* The states taking silent moves, as components in an order where every
     * silent move between two components goes from an earlier to a later one:
     * component c holds comp_state[comp_start[c] .. comp_start[c+1]-1]. */
    int n_comps;
    int *comp_start, *comp_state;
    int *comp_of;             /* each state's component, -1 when it takes no silent move */
    int *in_start, *in;       /* silent moves into each state from another component */
    int *out_start, *out;     /* silent moves out of each state into another component */
    size_t *closure_at;       /* component c: its m x m path sums at closure + closure_at[c];
                                 (size_t)-1 for one state without a silent move to itself */
    double *closure;
    int max_comp;             /* states of the largest component */
    int *inner_start, *inner; /* component c's silent moves within it (viterbi) */
    /* The dense form, for models of 16 to 2,048 states whose emitting moves
     * are many (a quarter of n x n or more) and into each state all of one table: the emitting
     * weights as a matrix (rows and columns vectorise), each state's table. */
    int dense;
    double *matrix;           /* n x n: matrix[k * n + q], 0 where no live emitting move */
    int *move_at;             /* n x n: the move k -> q, or -1 */
    int *state_table;         /* n: the table of the emitting moves into q, or -1 */
} hmmrt_fb;

/* Prepares m (its moves made from the dense matrix when it lists none).
 * Returns NULL after writing why into err: out of memory, or a silent cycle
 * whose path sums diverge. */
hmmrt_fb *hmmrt_fb_new(const hmmrt_model *m, int n_symbols, char *err, size_t errlen);
void hmmrt_fb_free(hmmrt_fb *fb);
/* Sums the silent cycles again after w changed: 0, or -1 after writing into
 * err which cycle now diverges. */
int hmmrt_fb_close_cycles(hmmrt_fb *fb, char *err, size_t errlen);

/* Doubles of scratch that hmmrt_fb_run needs for a sequence of L symbols. */
size_t hmmrt_fb_scratch(const hmmrt_fb *fb, int64_t L);

/* Forward and backward over x (L codes): returns ln P(x), -inf when no path
 * emits it (nothing else is then written). When move_counts / emission_counts
 * are not NULL, adds the expected number of uses of every move and of every
 * (emission table, symbol) pair. When posterior is not NULL it receives the
 * posterior of state q at position i (1-based) at posterior[(i-1) * n + q]
 * (it may be `scratch`: the posteriors are written over the forward table).
 * scratch holds hmmrt_fb_scratch doubles. */
double hmmrt_fb_run(const hmmrt_fb *fb, const uint8_t *x, int64_t L, double *scratch,
                    double *move_counts, double *emission_counts, double **posterior);

/* The same over a real alphabet: rows[i * n_emissions + em] is emission
 * em's value at position i (0-based), the densities of observation i+1
 * scaled by one factor per position, which the caller adds to the ln P
 * returned. use_rows (L x n_emissions, or NULL) receives, at the same
 * index, the expected number of uses of each emission at each position. */
double hmmrt_fb_run_rows(const hmmrt_fb *fb, const double *rows, int64_t L, double *scratch,
                         double *move_counts, double *use_rows, double **posterior);

/* The steps of hmmrt_fb_run that fb_blas.c shares. Silent moves within a
 * column, forward (col: what the emitting moves brought; g: max_comp + 8
 * doubles of scratch) and backward (col: what each state gets from the next
 * column); dividing a column by its sum (ln of the sum, -inf when it is 0 or
 * not finite); the expected uses of the silent moves within a column. */
void hmmrt_fb_silent_forward(const hmmrt_fb *fb, double *col, double *g);
void hmmrt_fb_silent_backward(const hmmrt_fb *fb, double *col, double *g);
double hmmrt_fb_scale_column(double *col, int n);
void hmmrt_fb_count_silent(const hmmrt_fb *fb, const double *f, const double *b, double inv_p,
                           double *move_counts);

/* Training's E-step and posteriors of the dense form over `rows` sequences
 * at once: hmmrt_fb_blas_tile (declared in hmmrt.h, for the generated
 * program's table; fb_blas.c, OpenBLAS on the calling thread), x[r] of L[r]
 * >= 1 symbols sorted longest first, writes lnp[r] as hmmrt_fb_run returns
 * it (up to the order of the sums) and, for the sequences with a path,
 * unless move_counts is NULL, adds their expected uses to move_counts
 * (silent moves), emission_counts and, as sums of f[k] * carry[q] over
 * positions, to uses[k * n + q] (n x n), which hmmrt_fb_blas_counts turns
 * into the dense moves' counts (weight times uses); with done, hands it
 * each row's posteriors at the end. Returns 0, or -1 when memory ran out. */

/* posterior.c's pieces, for the batched posterior calls (dense_batch.c):
 * the call's model prepared once (NULL after a message); whether it prints
 * decode or segments (then write needs L ints of scratch in best); its
 * columns from ln P (score) and the posteriors, position i (1-based) at
 * post[(i - 1) * stride]. */
hmmrt_fb *hmmrt_posterior_fb(const hmmrt_posterior_call *call);
int hmmrt_posterior_wants_best(const hmmrt_posterior_call *call);
void hmmrt_posterior_write(const hmmrt_posterior_call *call, int n, int64_t L, double score,
                           const double *post, size_t stride, int *best, hmmrt_value *values);

/* Viterbi training's E-step (fb_viterbi.c): the best path through x, whose
 * moves and (emission table, symbol) pairs are each counted once a use.
 * Returns its ln score, -inf when no path emits x (nothing counted).
 * scratch holds hmmrt_fb_viterbi_scratch bytes. */
size_t hmmrt_fb_viterbi_scratch(const hmmrt_fb *fb, int64_t L);
double hmmrt_fb_viterbi_counts(const hmmrt_fb *fb, const uint8_t *x, int64_t L, void *scratch,
                               double *move_counts, double *emission_counts);
/* The same best path's moves instead of counts, last first: path holds
 * (L + 1) n + 1 ints, *n_path gets their number (the hits mode's domains of
 * a program of many models, whose main prints no traceback). */
double hmmrt_fb_viterbi_path(const hmmrt_fb *fb, const uint8_t *x, int64_t L, void *scratch,
                             int *path, int64_t *n_path);

/* real_fb.c: the rows of hmmrt_fb_run_rows for L observations obs (D
 * reals each), rows[i * s->n + em]; returns ln of the factor they were
 * scaled by (to add to ln P). The same rows as logs, unscaled (viterbi). */
long double hmmrt_real_rows(const hmmrt_densities *s, const double *obs, int64_t L, double *rows);
void hmmrt_real_log_rows(const hmmrt_densities *s, const double *obs, int64_t L, double *rows);

/* The same over a real alphabet: logs[i * n_emissions + em] is ln of
 * emission em's density at observation i+1; use_rows as hmmrt_fb_run_rows'. */
double hmmrt_fb_viterbi_counts_rows(const hmmrt_fb *fb, const double *logs, int64_t L,
                                    void *scratch, double *move_counts, double *use_rows);

/* The moves of a dense model (hmmrt_model.dense) in the order the compiler
 * lists them from its source; NULL when memory runs out. */
hmmrt_model_move *hmmrt_dense_moves(const hmmrt_model *m, int *n_moves);

#endif
