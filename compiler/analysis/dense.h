/* dense.h: recognising dense models (most pairs of emitting states joined
 * by a move) and their matrix view, which the dense shapes of both backends
 * read instead of the move list: a model of N emitting states is a start
 * vector, an N x N matrix and an end vector. */
#ifndef HMMC_DENSE_H
#define HMMC_DENSE_H

#include "ir/ir.h"

/* A model in matrix form. Indexes 0..n-1 are the emitting states, in state
 * order; weights are natural logs, -inf where there is no move. */
typedef struct DenseView {
    int n;            /* emitting states */
    int K;            /* alphabet size */
    int *state_of;    /* n: the model's state index of dense index j */
    double *start;    /* n: start -> j */
    double *end;      /* n: j -> end */
    double start_end; /* start -> end (the empty sequence) */
    double *matrix;   /* n * n: matrix[k * n + j] is k -> j (NULL in a header) */
    double *emission; /* K * n: emission[c * n + j], symbol c from state j (NULL in a header) */
    long n_moves;     /* moves between emitting states */
} DenseView;

/* Fewest emitting states for the dense shape: below, the other shapes
 * (straight-line code, a thread or a block per sequence) serve better. */
enum { DENSE_MIN_STATES = 128 };

/* Whether a call's model has the dense form: every live state but the start
 * and the end emits, every move enters an emitting state from the start or
 * another emitting state (emitting from the destination's own table, no
 * folded states inside), or leaves one for the end, and at least half of the
 * n * n pairs are joined. why (may be NULL) receives the reason it is not. */
int dense_fits(Arena *a, const IrModel *m, const char **why);

/* The matrix view of a model that dense_fits accepts; viterbi: best weights
 * (lw_max), else sums (lw_sum). The tables (matrix, emission, start, end:
 * 288 MB for 6,000 states) are malloc'd: dense_view_free gives them back. */
DenseView *dense_view(Arena *a, const IrModel *m, int viterbi);
void dense_view_free(DenseView *d);
/* The view without the matrix and the emissions (n, K, state_of, start_end). */
DenseView *dense_view_header(Arena *a, const IrModel *m, int viterbi);

/* Whether the dense views of two calls' models hold the same numbers, known
 * without building them: the same model with the same moves (shared: no
 * pass changed them) and states, and either the same weights (both
 * viterbi, or neither) or moves whose best and summed weights agree (no
 * parallel paths were merged). Their calls then read one data file. */
int dense_same_view(const IrModel *a, int a_viterbi, const IrModel *b, int b_viterbi);

#endif
