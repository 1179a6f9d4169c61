/* c_plan.c: the C backend's plan of every call: straight-line code up to
 * C_TABLE_MIN_MOVES moves, tables walked by loops above (--c-shape forces
 * one), and the columns in local arrays up to LOCAL_ARRAY_MAX_STATES states. */
#include "codegen/c/c_plan.h"

/* From this many moves on, the C code keeps the moves in tables: gcc -O2
 * takes about a second per 1,000 moves of straight-line code and grows
 * faster than linearly (a profile of 2,000 nodes, 18,000 moves, took more
 * than 9 minutes), while the tables build in seconds at any size and run
 * within a small factor of straight-line code (figures: benchmarks/README.md). */
enum { C_TABLE_MIN_MOVES = 2000 };
/* Up to this many states the two columns are local arrays of the function. */
enum { LOCAL_ARRAY_MAX_STATES = 64 };

/* The C shape of a call, and why (for -v). */
static CShape choose_shape(const Program *p, const IrModel *m, CShape forced, const char **why)
{
    if (forced != C_SHAPE_AUTO) {
        *why = "as --c-shape says";
        return forced;
    }
    if (m->n_moves >= C_TABLE_MIN_MOVES) {
        *why = arena_printf(p->arena, "%d moves >= %d", m->n_moves, C_TABLE_MIN_MOVES);
        return C_SHAPE_TABLE;
    }
    *why = arena_printf(p->arena, "%d moves < %d", m->n_moves, C_TABLE_MIN_MOVES);
    return C_SHAPE_STRAIGHT;
}

CPlan *c_plan(const Program *p, CShape forced, FILE *verbose)
{
    CPlan *plans = ARENA_ARRAY(p->arena, CPlan, p->n_calls ? p->n_calls : 1);
    for (int c = 0; c < p->n_calls; c++) {
        const IrCall *call = &p->calls[c];
        const IrModel *m = call->model;
        CPlan *plan = &plans[c];
        if (call->alg == ALG_POSTERIOR) { /* libhmmrt's engine (pass_plan says so) */
            plan->engine = 1;
            continue;
        }
        const char *why;
        plan->shape = choose_shape(p, m, forced, &why);
        plan->local_arrays = m->n_states <= LOCAL_ARRAY_MAX_STATES;
        if (verbose && !call->plan.dense) /* a dense call's plan is said by pass_plan */
            fprintf(verbose, "hmmc: plan %s: %d live states, %d moves, C: %s (%s), "
                    "back pointers %d byte%s\n", call->label, call->plan.n_live, m->n_moves,
                    plan->shape == C_SHAPE_TABLE ? "move tables" : "straight-line code", why,
                    call->plan.bp_bytes, call->plan.bp_bytes == 1 ? "" : "s");
    }
    return plans;
}

void c_plan_dump(const CPlan *plan, FILE *out)
{
    if (plan->engine) {
        fprintf(out, "  c-plan engine (libhmmrt's posterior engine)\n");
        return;
    }
    if (plan->profile_data) {
        fprintf(out, "  c-plan profile-data (libhmmrt's generic profile scorer)\n");
        return;
    }
    fprintf(out, "  c-plan shape %s local-arrays %d\n",
            plan->shape == C_SHAPE_TABLE ? "table" : "straight", plan->local_arrays);
}
