/* silent_scc.h: a strongly connected set C of silent states reduced to a few
 * "cut" states, for sema's convergence check (sema_graph.c) and for closing
 * the cycles (pass_close_cycles.c) in time and memory near-linear in C's
 * moves when few states cut every cycle (one for a single cycle). */

/* A depth-first search over C's moves marks every state that a move goes
 * back to (a state still on the search's stack) as a cut state: the moves
 * into the other states then form no cycle, and the search's reverse
 * postorder sorts those other states topologically. For cut states f and g,
 * T[f][g] is the sum of the weights of the paths f -> o1 -> ... -> g whose
 * inner states are all uncut (a direct move included). The sum over all of
 * C's paths converges exactly when I - T is a non-singular M-matrix (I - S
 * is one exactly when its Schur complement I - T is: the uncut part of S is
 * nilpotent), a k x k test instead of an n x n one; a single cycle has one
 * cut state and T its weight product. T is kept as natural logs, summed
 * with a compensation term, so that 1 - T is accurate when T is near 1 (a
 * cycle of product 1 - 1e-13 keeps its 13 digits), and so is its closure,
 * so that weights of 1e300 and 1e-300 never leave double's range. */
#ifndef HMMC_SILENT_SCC_H
#define HMMC_SILENT_SCC_H

#include "support/arena.h"
#include "ir/ir.h"

typedef struct SilentScc {
    int n;                 /* states of C */
    const int *members;    /* their state indexes (local index i: members[i]) */
    int n_edges;           /* the silent moves inside C, by local indexes */
    int *efrom, *eto;
    double *esum, *emax;   /* their lw_sum, lw_max */
    int *out_start, *out_edges; /* edges out of local i: out_edges[out_start[i] ..] */
    int k;                 /* cut states */
    int *cut_of;           /* local index -> its number among the cut states, or -1 */
    int *cuts;             /* the cut states' local indexes */
    int n_order;           /* n - k */
    int *order;            /* the uncut states, topologically sorted */
    double *t_hi, *t_lo;   /* k x k: ln T (hi + lo), -inf for no path */
} SilentScc;

/* The sets of m's live states joined by silent cycles (strongly connected
 * by silent moves, two states or more, or one with a silent self-loop): set
 * i has the states members[member_start[i] .. member_start[i+1]) and the
 * silent moves (indexes into m->moves) moves[move_start[i] ..
 * move_start[i+1]) inside it; local[s] is state s's index within its set,
 * -1 for states on no silent cycle. Linear time. */
typedef struct SilentSccs {
    int count;
    int *member_start, *members;
    int *move_start, *moves;
    int *local;
} SilentSccs;
void silent_sccs_of(Arena *a, const IrModel *m, SilentSccs *out);

/* Reduces C: members[0..n) are its states, local[s] the index of state s
 * among them (or -1 for states outside C), moves[0..n_moves) the indexes of
 * the silent moves of m inside C. Memory from the arena. */
void silent_scc_reduce(Arena *a, const IrModel *m, const int *members, int n, const int *local,
                       const int *moves, int n_moves, SilentScc *c);

/* W = (I - T)^-1, the sums over all paths between cut states (the empty
 * path included), as natural logs hi + lo in k x k row-major arrays: Kleene's
 * closure in logs, so that weights of 1e300 and 1e-300 keep their digits
 * (every step adds positive terms; 1 - T[p][p] comes from expm1, accurate
 * however near 1 the returns to p weigh). Returns 0 when the sum diverges
 * (at some step the returns to a cut state weigh 1 or more: I - T is not a
 * non-singular M-matrix). */
int silent_scc_closure(Arena *a, const SilentScc *c, double *w_hi, double *w_lo);

/* 1 when the sum over C's paths converges (silent_scc_closure succeeds;
 * one cut state: ln T < 0). */
int silent_scc_converges(Arena *a, const SilentScc *c);

/* Adds y (hi + lo) to x in logs: x = ln(e^x + e^y), with compensation. */
void log_dd_add(double *x_hi, double *x_lo, double y_hi, double y_lo);

#endif
