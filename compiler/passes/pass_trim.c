/* pass_trim.c: removes the states no complete path can visit: those the start
 * state cannot reach and those that cannot reach the end state. */

/* They change
 * no score, traceback or table entry of a complete path, but they can
 * dominate a column: forward and backward rescale each column by its sum, so
 * a well-fitting state that no path from the start reaches (backward) or that
 * never reaches the end (forward) would push the values that matter below the
 * smallest number a double (or a float on the GPU) holds. A call that prints
 * a whole table keeps every state: each is a row of its output. */
#include "passes/pass.h"

#include <string.h>

#include "ir/graph.h"

/* Marks useless states folded and drops their moves (a copy of them in a,
 * the program's arena); returns how many. The reach graphs are scratch, in
 * an arena of their own freed at the end. */
static int trim_model(Arena *a, IrModel *m)
{
    int *from_start, *to_end;
    Arena scratch;
    arena_init(&scratch);
    graph_reach_start_and_end(&scratch, m, &from_start, &to_end);
    int trimmed = 0;
    for (int s = 0; s < m->n_states; s++) {
        if (s == m->start || s == m->end || m->states[s].folded)
            continue;
        if (!from_start[s] || !to_end[s]) {
            m->states[s].folded = 1;
            m->states[s].trimmed = 1;
            trimmed++;
        }
    }
    arena_free(&scratch);
    if (!trimmed)
        return 0; /* no move touches a removed state: the moves stay as they are (shared) */
    ir_model_own_moves(a, m);
    int kept = 0;
    for (int i = 0; i < m->n_moves; i++)
        if (!m->states[m->moves[i].from].folded && !m->states[m->moves[i].to].folded)
            m->moves[kept++] = m->moves[i];
    m->n_moves = kept;
    return trimmed;
}

/* Whether an earlier call's model had the same moves (shared, not yet
 * changed) and states and lost nothing to trimming: then neither does this
 * one, and the graphs of 36 million moves are not built again. */
static int known_untrimmed(const Program *p, int c, const char *untrimmed)
{
    const IrModel *m = p->calls[c].model;
    for (int k = 0; k < c; k++) {
        const IrModel *o = p->calls[k].model;
        if (untrimmed[k] && o->moves == m->moves && o->n_moves == m->n_moves &&
            o->n_states == m->n_states &&
            memcmp(o->states, m->states, sizeof(IrState) * (size_t)m->n_states) == 0)
            return 1;
    }
    return 0;
}

int pass_trim(Program *p, const PassOptions *o, Diag *d)
{
    char *untrimmed = ARENA_ARRAY(p->arena, char, p->n_calls ? p->n_calls : 1);
    for (int c = 0; c < p->n_calls; c++) {
        IrCall *call = &p->calls[c];
        if (call->storage == STORE_WHOLE_TABLE || call->alg == ALG_POSTERIOR)
            continue;
        if (known_untrimmed(p, c, untrimmed)) {
            untrimmed[c] = 1;
            continue;
        }
        int n = trim_model(p->arena, call->model);
        untrimmed[c] = n == 0;
        if (o->verbose && n)
            fprintf(o->verbose, "hmmc: %s: removed %d state%s no complete path visits\n",
                    call->label, n, n == 1 ? "" : "s");
    }
    return 1;
}
