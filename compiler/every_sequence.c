/* every_sequence.c: from what length a model surely gives every sequence a
 * path. Forward and backward keep one scale per column, so a result that
 * falls more than double's range below its column's largest value reads 0
 * and the score -inf; when the model can emit every sequence of that length,
 * such a -inf is known to be that, not an impossible sequence, and the
 * program says so.
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
#include "ir.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#define MOST_MOVES 4000000 /* beyond this (dense models) the question is left open */

typedef struct Adjacency {
    int *start; /* moves out of (or, reversed, into) state v: move[start[v] .. start[v+1]-1] */
    int *move;
} Adjacency;

static int live(const IrModel *m, const IrMove *mv)
{
    return !m->states[mv->from].folded && !m->states[mv->to].folded && mv->lw_sum > -INFINITY;
}

/* The live moves that are silent or emit from a table of universal[e] set. */
static int usable(const IrModel *m, const IrMove *mv, const unsigned char *universal)
{
    return live(m, mv) && (mv->emission < 0 || universal[mv->emission]);
}

static Adjacency adjacency(Arena *a, const IrModel *m, const unsigned char *universal, int reversed)
{
    Adjacency g;
    g.start = ARENA_ARRAY(a, int, m->n_states + 1);
    memset(g.start, 0, sizeof *g.start * (size_t)(m->n_states + 1));
    int used = 0;
    for (int i = 0; i < m->n_moves; i++)
        if (usable(m, &m->moves[i], universal)) {
            g.start[(reversed ? m->moves[i].to : m->moves[i].from) + 1]++;
            used++;
        }
    for (int v = 0; v < m->n_states; v++)
        g.start[v + 1] += g.start[v];
    g.move = ARENA_ARRAY(a, int, used ? used : 1);
    int *fill = ARENA_ARRAY(a, int, m->n_states);
    memcpy(fill, g.start, sizeof *fill * (size_t)m->n_states);
    for (int i = 0; i < m->n_moves; i++)
        if (usable(m, &m->moves[i], universal))
            g.move[fill[reversed ? m->moves[i].to : m->moves[i].from]++] = i;
    return g;
}

/* emissions[v]: the fewest emitting moves on a path of usable moves from
 * root to v (reversed: from v to root), INT_MAX where there is none. A
 * breadth-first search by emissions, silent moves inside a level. */
static int *fewest_emissions(Arena *a, const IrModel *m, const Adjacency *g, int root, int reversed)
{
    int n = m->n_states;
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
            for (int e = g->start[v]; e < g->start[v + 1]; e++) {
                const IrMove *mv = &m->moves[g->move[e]];
                int w = reversed ? mv->from : mv->to;
                if (mv->emission < 0 && emissions[w] > d) {
                    emissions[w] = d;
                    level[n_level++] = w;
                } else if (mv->emission >= 0 && emissions[w] > d + 1) {
                    emissions[w] = d + 1;
                    next[n_next++] = w;
                }
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
    if (K <= 0 || m->n_states <= 0 || m->n_moves > MOST_MOVES)
        return -1;
    unsigned char *universal = ARENA_ARRAY(a, unsigned char, m->n_emissions ? m->n_emissions : 1);
    for (int e = 0; e < m->n_emissions; e++) {
        universal[e] = 1;
        for (int s = 0; s < K; s++)
            if (!(m->emissions[e].logp[s] > -INFINITY))
                universal[e] = 0;
    }
    Adjacency out = adjacency(a, m, universal, 0), in = adjacency(a, m, universal, 1);
    int *from_start = fewest_emissions(a, m, &out, m->start, 0);
    int *to_end = fewest_emissions(a, m, &in, m->end, 1);
    long best = -1;
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        int u = mv->from;
        if (mv->to != u || mv->emission < 0 || !usable(m, mv, universal) ||
            from_start[u] == INT_MAX || to_end[u] == INT_MAX)
            continue;
        long length = (long)from_start[u] + to_end[u];
        if (best < 0 || length < best)
            best = length;
    }
    return best < 0 || best > INT_MAX ? -1 : (int)best;
}
