/* sema_graph.c: checks that need the whole model: silent cycles whose sum
 * over paths diverges (an error) and states that are unreachable from the
 * start or cannot reach the end (warnings). */
#include "sema.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph.h"

/* The sum over all paths inside a strongly connected set of silent states is
 * finite exactly when the spectral radius of its weight matrix S is below 1,
 * that is when I - S is a non-singular M-matrix; for an irreducible
 * non-negative S that holds exactly when Gaussian elimination of I - S
 * without pivoting meets only positive pivots. A single cycle converges
 * exactly when its weight product is below 1. */
static int component_converges(Arena *a, const IrModel *m, int n, const int *local)
{
    double *A = ARENA_ARRAY(a, double, (size_t)n * (size_t)n);
    for (int i = 0; i < n; i++)
        A[(size_t)i * n + i] = 1;
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        if (mv->emission >= 0 || local[mv->from] < 0 || local[mv->to] < 0)
            continue;
        A[(size_t)local[mv->from] * n + local[mv->to]] -= exp(mv->lw_sum);
    }
    for (int k = 0; k < n; k++) {
        double pivot = A[(size_t)k * n + k];
        if (!(pivot > 1e-12))
            return 0;
        for (int i = k + 1; i < n; i++) {
            double f = A[(size_t)i * n + k] / pivot;
            if (f == 0)
                continue;
            for (int j = k; j < n; j++)
                A[(size_t)i * n + j] -= f * A[(size_t)k * n + j];
        }
    }
    return 1;
}

static void report_divergent_cycle(Diag *d, const IrModel *m, const int *members, int n)
{
    char list[512] = "";
    size_t used = 0;
    for (int i = 0; i < n && used + 64 < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s'%s'", i ? ", " : "",
                                 m->states[members[i]].name);
    if (n > 0 && used + 64 >= sizeof list)
        snprintf(list + used, sizeof list - used, ", ...");
    diag_error(d, m->states[members[0]].loc,
               "the silent cycles through %s weigh too much: the sum over their paths diverges "
               "(a cycle's weight product is >= 1, or cycles through one state add up past "
               "1); lower their weights",
               list);
}

static void check_silent_cycles(Arena *a, Diag *d, const IrModel *m)
{
    Graph g = graph_of_moves(a, m, 1);
    int *comp = ARENA_ARRAY(a, int, m->n_states);
    int n_comp = graph_scc(a, &g, comp);
    int *size = ARENA_ARRAY(a, int, n_comp);
    for (int v = 0; v < m->n_states; v++)
        size[comp[v]]++;
    int *self_loop = ARENA_ARRAY(a, int, n_comp);
    for (int i = 0; i < m->n_moves; i++)
        if (m->moves[i].emission < 0 && m->moves[i].from == m->moves[i].to)
            self_loop[comp[m->moves[i].from]] = 1;
    int *local = ARENA_ARRAY(a, int, m->n_states);
    int *members = ARENA_ARRAY(a, int, m->n_states);
    for (int c = 0; c < n_comp; c++) {
        if (size[c] < 2 && !self_loop[c])
            continue;
        int n = 0;
        for (int v = 0; v < m->n_states; v++) {
            local[v] = -1;
            if (comp[v] == c) {
                local[v] = n;
                members[n++] = v;
            }
        }
        if (!component_converges(a, m, n, local))
            report_divergent_cycle(d, m, members, n);
    }
}

static void check_reachability(Arena *a, Diag *d, const IrModel *m)
{
    int *from_start, *to_end;
    graph_reach_start_and_end(a, m, &from_start, &to_end);
    if (!from_start[m->end]) {
        diag_warning(d, m->loc, "in model '%s' no path leads from '%s' to '%s': every score will "
                     "be -inf", m->name, m->states[m->start].name, m->states[m->end].name);
        return;
    }
    for (int s = 0; s < m->n_states; s++) {
        if (s == m->start || s == m->end)
            continue;
        if (!from_start[s])
            diag_warning(d, m->states[s].loc, "state '%s' cannot be reached from the start state",
                         m->states[s].name);
        else if (!to_end[s])
            diag_warning(d, m->states[s].loc, "state '%s' cannot reach the end state",
                         m->states[s].name);
    }
}

void sema_check_graph(Arena *a, Diag *d, const IrModel *m)
{
    check_silent_cycles(a, d, m);
    check_reachability(a, d, m);
}
