/* dense.h: recognising dense models (most pairs of emitting states joined
 * by a move) and their matrix view, which the dense shapes of both backends
 * read instead of the move list: a model of N emitting states is a start
 * vector, an N x N matrix and an end vector. */
#ifndef HMMC_DENSE_H
#define HMMC_DENSE_H

#include "ir.h"

/* A model in matrix form. Indexes 0..n-1 are the emitting states, in state
 * order; weights are natural logs, -inf where there is no move. */
typedef struct DenseView {
    int n;            /* emitting states */
    int K;            /* alphabet size */
    int *state_of;    /* n: the model's state index of dense index j */
    double *start;    /* n: start -> j */
    double *end;      /* n: j -> end */
    double start_end; /* start -> end (the empty sequence) */
    double *matrix;   /* n * n: matrix[k * n + j] is k -> j */
    double *emission; /* K * n: emission[c * n + j], symbol c from state j */
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
 * (lw_max), else sums (lw_sum). */
DenseView *dense_view(Arena *a, const IrModel *m, int viterbi);

#endif
