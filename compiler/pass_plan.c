/* pass_plan.c: the plan of every call: how many states are live, the width
 * of a back pointer (an index into a state's incoming moves: one byte while
 * every state has fewer than 255 moves in), and the shape of the C code
 * (moves written out as straight-line code for models of moderate size,
 * tables the code indexes for larger ones). */
#include "pass.h"

/* Above this many moves the C backend indexes tables instead of unrolling:
 * straight-line code that large compiles slowly and overflows the i-cache. */
enum { UNROLL_MAX_MOVES = 4096 };
/* Above this many moves a CUDA kernel writes one position's body once instead
 * of sixteen times: the code would outgrow the instruction cache. */
enum { GPU_UNROLL_MAX_MOVES = 256 };

int pass_plan(Program *p, Diag *d)
{
    for (int c = 0; c < p->n_calls; c++) {
        IrCall *call = &p->calls[c];
        const IrModel *m = call->model;
        IrPlan *plan = &call->plan;
        int *in_degree = ARENA_ARRAY(p->arena, int, m->n_states);
        plan->n_live = 0;
        plan->max_in_degree = 0;
        for (int s = 0; s < m->n_states; s++)
            plan->n_live += !m->states[s].folded;
        for (int i = 0; i < m->n_moves; i++)
            if (++in_degree[m->moves[i].to] > plan->max_in_degree)
                plan->max_in_degree = in_degree[m->moves[i].to];
        int needs_bp = call->alg == ALG_VITERBI &&
                       (call->attrs & (ATTR_TRACEBACK | ATTR_TRACEBACK_TABLE));
        plan->bp_bytes = !needs_bp ? 0 : plan->max_in_degree < 255 ? 1
                       : plan->max_in_degree < 65535 ? 2 : 4;
        plan->unrolled = m->n_moves <= UNROLL_MAX_MOVES;
        plan->gpu_unroll = m->n_moves <= GPU_UNROLL_MAX_MOVES ? 16 : 1;
        if (p->verbose)
            fprintf(p->verbose, "hmmc: plan %s: %d live states, %d moves, %s C code, back "
                    "pointers %d byte%s; GPU: thread per sequence, %d position%s per body\n",
                    call->label, plan->n_live, m->n_moves,
                    plan->unrolled ? "straight-line" : "table-driven", plan->bp_bytes,
                    plan->bp_bytes == 1 ? "" : "s", plan->gpu_unroll,
                    plan->gpu_unroll == 1 ? "" : "s");
    }
    return 1;
}
