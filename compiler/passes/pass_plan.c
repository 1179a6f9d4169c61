/* pass_plan.c: the plan of every call: how many states are live, the width
 * of a back pointer (one byte while every state has fewer than 255 moves in),
 * the shape of the CUDA kernel (thread, block or lanes of a warp per sequence,
 * or dense) and of the C code: straight-line up to C_TABLE_MIN_MOVES moves,
 * tables walked by loops above (--c-shape forces one). */
#include "passes/pass.h"

#include "analysis/dense.h"
#include "codegen/cuda/profile_tuning.h"
#include "ir/graph.h"

/* Above this many moves a CUDA kernel writes one position's body once instead
 * of sixteen times: the code would outgrow the instruction cache. */
enum { GPU_UNROLL_MAX_MOVES = 256 };
/* Up to this many live states a thread keeps a sequence's two columns in
 * registers (thread per sequence); above, registers would spill to local
 * memory, and a block shares the states of one sequence instead. */
enum { GPU_THREAD_MAX_STATES = 24 };
/* From this many moves on, the C code keeps the moves in tables: gcc -O2
 * takes about a second per 1,000 moves of straight-line code and grows
 * faster than linearly (a profile of 2,000 nodes, 18,000 moves, took more
 * than 9 minutes), while the tables build in seconds at any size and run
 * within a small factor of straight-line code (figures: benchmarks/README.md). */
enum { C_TABLE_MIN_MOVES = 2000 };

/* The C shape of a call, and why (for -v). */
static CShape choose_c_shape(const Program *p, const IrModel *m, const char **why)
{
    if (p->c_shape != C_SHAPE_AUTO) {
        *why = "as --c-shape says";
        return p->c_shape;
    }
    if (m->n_moves >= C_TABLE_MIN_MOVES) {
        *why = arena_printf(p->arena, "%d moves >= %d", m->n_moves, C_TABLE_MIN_MOVES);
        return C_SHAPE_TABLE;
    }
    *why = arena_printf(p->arena, "%d moves < %d", m->n_moves, C_TABLE_MIN_MOVES);
    return C_SHAPE_STRAIGHT;
}

/* -v: why a forward or backward call is scored in double on the GPU. */
static void say_precision(const Program *p, const IrCall *call)
{
    if (p->verbose && call->plan.float_underflow < 0)
        fprintf(p->verbose, "hmmc: plan %s: weights down to e^%.0f are below float's range "
                "(2^-126): on the GPU this call is scored in double\n", call->label,
                call->plan.float_underflow);
    if (p->verbose && call->plan.float_overflow > 0)
        fprintf(p->verbose, "hmmc: plan %s: weights up to e^%.0f are above float's range "
                "(2^128): on the GPU this call is scored in double\n", call->label,
                call->plan.float_overflow);
}

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
        plan->gpu_unroll = m->n_moves <= GPU_UNROLL_MAX_MOVES ? 16 : 1;
        plan->gpu_shape = plan->n_live <= GPU_THREAD_MAX_STATES ? GPU_THREAD_PER_SEQUENCE
                                                                : GPU_BLOCK_PER_SEQUENCE;
        plan->silent_levels = graph_silent_levels(p->arena, m, call->alg == ALG_BACKWARD,
                                                  ARENA_ARRAY(p->arena, int, m->n_states));
        const char *c_why;
        plan->c_shape = choose_c_shape(p, m, &c_why);
        const char *not_dense = NULL;
        if (call->storage == STORE_WHOLE_TABLE)
            not_dense = "whole tables are asked for";
        plan->float_underflow = call->alg != ALG_VITERBI ? ir_float_underflow(m) : 0;
        plan->float_overflow = call->alg != ALG_VITERBI ? ir_float_overflow(m) : 0;
        plan->long_double_only = call->alg != ALG_VITERBI && ir_outside_double(m);
        if (plan->long_double_only && !not_dense)
            not_dense = "weights or emission values lie outside double's range";
        if (p->verbose && plan->long_double_only)
            fprintf(p->verbose, "hmmc: plan %s: weights or emission values outside double's "
                    "normal range (2^-1022 to 2^1024): summed in long double only, on the CPU\n",
                    call->label);
        if (!not_dense && dense_fits(p->arena, m, &not_dense)) {
            plan->dense = 1;
            plan->gpu_shape = GPU_DENSE;
            plan->gpu_unroll = 1;
            /* back pointers hold the state the best move came from */
            if (needs_bp)
                plan->bp_bytes = m->n_states < 65535 ? 2 : 4;
            if (p->verbose)
                fprintf(p->verbose, "hmmc: plan %s: dense (%d live states, %d moves): the model "
                        "as a matrix, a vector-matrix product per position on the CPU and a "
                        "tiled matrix product per position over a batch on the GPU, back "
                        "pointers %d bytes\n", call->label, plan->n_live, m->n_moves,
                        plan->bp_bytes);
            say_precision(p, call);
            continue;
        }
        if (p->verbose && plan->n_live >= DENSE_MIN_STATES)
            fprintf(p->verbose, "hmmc: plan %s: not dense: %s\n", call->label, not_dense);
        if (plan->gpu_shape == GPU_BLOCK_PER_SEQUENCE && call->alg != ALG_BACKWARD &&
            call->storage != STORE_WHOLE_TABLE) {
            const char *not_profile;
            ProfileView *view = profile_view(p->arena, m, &not_profile);
            if (view) {
                plan->gpu_shape = GPU_PROFILE;
                plan->profile = view;
                plan->profile_lanes = profile_lanes(view->K, call->alg == ALG_VITERBI);
                int lanes = plan->profile_lanes, per_lane = profile_lane_nodes(view->K, lanes);
                if (call->alg == ALG_FORWARD) {
                    double whole = plan->float_underflow;
                    plan->profile_lane_scales = profile_lane_scales(m, view, lanes);
                    plan->float_underflow = profile_float_underflow(p->arena, m, view, lanes,
                                                                    plan->profile_lane_scales);
                    if (p->verbose && whole < 0 && plan->float_underflow == 0)
                        fprintf(p->verbose, "hmmc: plan %s: weights down to e^%.0f, below "
                                "float's range, enter or leave the nodes: the GPU holds them "
                                "per lane times a power of two, and scores in float%s\n",
                                call->label, whole, plan->profile_lane_scales
                                    ? " (entries below 2^-200: each lane and special state keeps "
                                      "an exponent of its own, profile.h)" : "");
                }
                if (p->verbose)
                    fprintf(p->verbose, "hmmc: plan %s: profile of %d nodes, %d special "
                            "states, %d kinds of moves into nodes, %d out of them: on the GPU %d "
                            "lanes a sequence, %d node%s a lane\n", call->label, view->K,
                            view->n_specials, view->n_entries, view->n_exits, lanes,
                            per_lane, per_lane == 1 ? "" : "s");
            } else if (p->verbose) {
                fprintf(p->verbose, "hmmc: plan %s: not a profile: %s\n", call->label, not_profile);
            }
        }
        say_precision(p, call);
        if (p->verbose)
            fprintf(p->verbose, "hmmc: plan %s: %d live states, %d moves, C: %s (%s), "
                    "back pointers %d byte%s; GPU: %s\n", call->label, plan->n_live, m->n_moves,
                    plan->c_shape == C_SHAPE_TABLE ? "move tables" : "straight-line code", c_why,
                    plan->bp_bytes,
                    plan->bp_bytes == 1 ? "" : "s",
                    plan->gpu_shape == GPU_THREAD_PER_SEQUENCE
                        ? arena_printf(p->arena, "thread per sequence (%d live states <= %d), "
                                       "%d position%s per body", plan->n_live,
                                       GPU_THREAD_MAX_STATES, plan->gpu_unroll,
                                       plan->gpu_unroll == 1 ? "" : "s")
                        : plan->gpu_shape == GPU_PROFILE ? "profile (above)"
                        : arena_printf(p->arena, "block per sequence (%d live states > %d), "
                                       "%d silent level%s", plan->n_live, GPU_THREAD_MAX_STATES,
                                       plan->silent_levels, plan->silent_levels == 1 ? "" : "s"));
    }
    return 1;
}
