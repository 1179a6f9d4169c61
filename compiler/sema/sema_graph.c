/* sema_graph.c: checks that need the whole model: silent cycles whose sum
 * over paths diverges (an error) and states that are unreachable from the
 * start or cannot reach the end (warnings). */
#include "sema/sema.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir/graph.h"
#include "analysis/silent_scc.h"

/* The sum over all paths inside a strongly connected set of silent states is
 * finite exactly when the spectral radius of its weight matrix S is below 1,
 * that is when I - S is a non-singular M-matrix; silent_scc.c tests that on
 * the set reduced to the states that cut its cycles (one for a single
 * cycle, whose weight product must be below 1: the sum of its weights' logs
 * below 0, summed with compensation, so that a product of 1 - 1e-13 passes
 * and one of exactly 1 does not), in time near-linear in its moves. */
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
    SilentSccs sets;
    silent_sccs_of(a, m, &sets);
    for (int i = 0; i < sets.count; i++) {
        const int *members = sets.members + sets.member_start[i];
        int n = sets.member_start[i + 1] - sets.member_start[i];
        SilentScc c;
        silent_scc_reduce(a, m, members, n, sets.local, sets.moves + sets.move_start[i],
                          sets.move_start[i + 1] - sets.move_start[i], &c);
        if (!silent_scc_converges(a, &c))
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
