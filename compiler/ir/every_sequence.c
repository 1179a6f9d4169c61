/* every_sequence.c: from what length a model surely gives every sequence a
 * path, so that a -inf score at that length is known to be an underflow, not
 * an impossible sequence, and the program says so. */

/* Forward and backward keep one scale per column, so a result that
 * falls more than long double's range (the C path's second try) below its
 * column's largest value reads 0 and the score -inf; when the model can emit
 * every sequence of that length, such a -inf is known to be that, not an
 * impossible sequence, and the program says so.
 *
 * A move is universal when it is silent, or emits from a table that gives
 * every symbol a positive probability. If a state u has a universal emitting
 * self-loop, the start reaches u through universal moves with j emissions
 * and u reaches the end through universal moves with k emissions, then every
 * sequence of at least j + k symbols has a path (u's loop emits the rest).
 * The least such j + k over every u is the answer: a sufficient test, not a
 * necessary one. A HMMER profile passes through its N state (S -> N silent;
 * N -> B -> Mk -> ... -> E -> C -> T), from the length of its shortest
 * alignment through the model. */
#include "ir/ir.h"

#include <limits.h>
#include <math.h>

#include "ir/graph.h"

#define MOST_MOVES 4000000 /* beyond this (dense models) the question is left open */

/* emissions[v]: the fewest emitting moves on a path from root to v, along
 * the silent moves of `silent` and the emitting ones of `emitting` (both
 * reversed to count from v to root); INT_MAX where there is none. A
 * breadth-first search by emissions, silent moves inside a level. */
static int *fewest_emissions(Arena *a, const Graph *silent, const Graph *emitting, int root)
{
    int n = silent->n;
    int *emissions = ARENA_ARRAY(a, int, n);
    int *level = ARENA_ARRAY(a, int, n), *next = ARENA_ARRAY(a, int, n);
    for (int v = 0; v < n; v++)
        emissions[v] = INT_MAX;
    emissions[root] = 0;
    level[0] = root;
    int n_level = 1;
    for (int d = 0; n_level > 0; d++) {
        int n_next = 0;
        for (int k = 0; k < n_level; k++) { /* the level grows as silent moves reach further */
            int v = level[k];
            for (int e = silent->start[v]; e < silent->start[v + 1]; e++)
                if (emissions[silent->adj[e]] > d) {
                    emissions[silent->adj[e]] = d;
                    level[n_level++] = silent->adj[e];
                }
            for (int e = emitting->start[v]; e < emitting->start[v + 1]; e++)
                if (emissions[emitting->adj[e]] > d + 1) {
                    emissions[emitting->adj[e]] = d + 1;
                    next[n_next++] = emitting->adj[e];
                }
        }
        /* next holds each state once (its count was lowered to d + 1 on the
         * first visit); drop those a silent move of this level reached after */
        n_level = 0;
        for (int k = 0; k < n_next; k++)
            if (emissions[next[k]] == d + 1)
                level[n_level++] = next[k];
    }
    return emissions;
}

int ir_every_sequence_from(Arena *a, const IrModel *m)
{
    int K = m->K;
    if ((K <= 0 && !m->real_dim) || m->n_states <= 0 || m->n_moves > MOST_MOVES)
        return -1;
    unsigned char *universal = ARENA_ARRAY(a, unsigned char, m->n_emissions ? m->n_emissions : 1);
    for (int e = 0; e < m->n_emissions; e++) {
        const IrEmission *em = &m->emissions[e];
        universal[e] = 1;
        for (int s = 0; s < K; s++)
            if (!(em->logp[s] > -INFINITY))
                universal[e] = 0;
        /* a density is above 0 everywhere; a mixture if a weight is above 0 */
        if (em->kind == EMISSION_MIXTURE) {
            universal[e] = 0;
            for (int k = 0; k < em->n_parts; k++)
                universal[e] |= em->log_weights[k] > -INFINITY;
        }
    }
    /* the moves a path may take: silent, or emitting from a universal table */
    char *silent = ARENA_ARRAY(a, char, m->n_moves ? m->n_moves : 1);
    char *emitting = ARENA_ARRAY(a, char, m->n_moves ? m->n_moves : 1);
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        int possible = mv->lw_sum > -INFINITY;
        silent[i] = possible && mv->emission < 0;
        emitting[i] = possible && mv->emission >= 0 && universal[mv->emission];
    }
    Graph s_out = graph_of_kept_moves(a, m, silent), e_out = graph_of_kept_moves(a, m, emitting);
    Graph s_in = graph_reversed(a, &s_out), e_in = graph_reversed(a, &e_out);
    int *from_start = fewest_emissions(a, &s_out, &e_out, m->start);
    int *to_end = fewest_emissions(a, &s_in, &e_in, m->end);
    long best = -1;
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        int u = mv->from;
        if (mv->to != u || !emitting[i] || m->states[u].folded || from_start[u] == INT_MAX ||
            to_end[u] == INT_MAX)
            continue;
        long length = (long)from_start[u] + to_end[u];
        if (best < 0 || length < best)
            best = length;
    }
    return best < 0 || best > INT_MAX ? -1 : (int)best;
}
