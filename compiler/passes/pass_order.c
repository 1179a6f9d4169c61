/* pass_order.c: the order in which silent moves are evaluated within a
 * position. After the cycles are closed the silent moves form no cycle; a
 * topological order of the states that receive silent moves lets every
 * backend add each silent move after its source's value is complete
 * (forward, viterbi) and, read backwards, before (backward). */
#include "passes/pass.h"

#include "ir/graph.h"

/* The order into a (the program's arena); the graph and the components are
 * scratch, in an arena of their own freed at the end (a file of thousands
 * of profiles would otherwise keep them for every call). */
static int order_model(Arena *keep, IrModel *m, Diag *d, const char *label)
{
    Arena scratch;
    arena_init(&scratch);
    int ok = 0;
    Arena *a = &scratch;
    Graph g = graph_of_moves(a, m, 1);
    int *comp = ARENA_ARRAY(a, int, m->n_states);
    int n_comp = graph_scc(a, &g, comp);
    if (n_comp != m->n_states) {
        Loc nowhere = {0, 0, 0, 0};
        diag_error(d, nowhere, "internal error: %s still has a silent cycle after closing cycles",
                   label);
        goto done;
    }
    int *has_silent_in = ARENA_ARRAY(a, int, m->n_states);
    for (int i = 0; i < m->n_moves; i++)
        if (m->moves[i].emission < 0)
            has_silent_in[m->moves[i].to] = 1;
    /* Tarjan numbers components in reverse topological order. */
    int *by_comp = ARENA_ARRAY(a, int, n_comp);
    for (int v = 0; v < m->n_states; v++)
        by_comp[comp[v]] = v;
    m->silent_order = ARENA_ARRAY(keep, int, m->n_states);
    m->n_silent_order = 0;
    for (int c = n_comp - 1; c >= 0; c--) {
        int v = by_comp[c];
        if (has_silent_in[v] && !m->states[v].folded)
            m->silent_order[m->n_silent_order++] = v;
    }
    ok = 1;
done:
    arena_free(&scratch);
    return ok;
}

int pass_order(Program *p, const PassOptions *o, Diag *d)
{
    int ok = 1;
    for (int c = 0; c < p->n_calls; c++)
        if (p->calls[c].alg != ALG_POSTERIOR) /* runs on the model as written */
            ok &= order_model(p->arena, p->calls[c].model, d, p->calls[c].label);
    return ok;
}
