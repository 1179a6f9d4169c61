/* pass_plan.c: the target-independent plan of every call (IrPlan): how many
 * states are live, the width of a back pointer (one byte while every state
 * has fewer than 255 moves in), whether the model is dense, and which
 * weights lie outside float's or double's range. The shapes of the code are
 * each backend's own plan (codegen/c/c_plan.c, codegen/cuda/cuda_plan.c). */
#include "passes/pass.h"

#include "analysis/dense.h"
#include "gpu/dense_tf32.h"

/* How a dense call's float sums run on the GPU (runtime/gpu/cublas_dl.c,
 * dense_choice.c; docs/program.md): TF32 in chunks of at most
 * HMMRT_DENSE_TF32_CHUNK states, or TF32 x 2 where the matrix's rounding
 * to TF32 is systematic. */
static const char *dense_gpu_sums(Arena *a, int n)
{
    const int chunks = hmmrt_dense_chunks(n);
    return arena_printf(a, " (float forward and backward: cuBLAS, TF32 on the tensor cores%s, "
                           "or TF32 x 2 (the matrix as two TF32 parts) where its rounding to TF32 "
                           "is systematic, decided at run time; HMMRT_DENSE_PRODUCT="
                           "tf32|tf32x2|fp32|tiles forces one)",
                        chunks > 1 ? arena_printf(a, " in %d chunks of states (the tensor cores' "
                                                     "sums drop bits as they grow)", chunks)
                                   : "");
}

int pass_plan(Program *p, const PassOptions *o, Diag *d)
{
    for (int c = 0; c < p->n_calls; c++) {
        IrCall *call = &p->calls[c];
        const IrModel *m = call->model;
        IrPlan *plan = &call->plan;
        if (call->alg == ALG_POSTERIOR) { /* libhmmrt's engine; on the GPU, libhmmrt_gpu's */
            plan->n_live = m->n_states;
            if (ir_outside_double(m)) /* the engine reads the model as doubles */
                diag_error(d, call->loc, "%s works in double, and model '%s' has a weight or "
                           "emission value outside double's range (below about 1e-308 or above "
                           "1e308): scale the model's numbers, or print forward and backward "
                           "scores, which sum in long double", call->label, m->name);
            if (o->verbose)
                fprintf(o->verbose, "hmmc: plan %s: libhmmrt's posterior engine (runtime/"
                        "posterior.c) on the model as written, %d states, %d moves%s\n",
                        call->label, m->n_states, m->n_moves,
                        !m->real_dim && dense_fits(p->arena, m, NULL)
                            ? "; dense: on the CPU over each batch of 4 or more sequences a "
                              "thread as matrix products through OpenBLAS, up to 2,048 states "
                              "(runtime/fb_blas.c; "
                              "HMMRT_DENSE_BLAS=auto|on|off at run time)"
                            : "");
            continue;
        }
        int *in_degree = ARENA_ARRAY(p->arena, int, m->n_states);
        plan->n_live = 0;
        plan->max_in_degree = 0;
        for (int s = 0; s < m->n_states; s++)
            plan->n_live += !m->states[s].folded;
        for (int i = 0; i < m->n_moves; i++)
            if (++in_degree[m->moves[i].to] > plan->max_in_degree)
                plan->max_in_degree = in_degree[m->moves[i].to];
        int needs_bp = call->alg == ALG_VITERBI &&
                       (call->attrs & (ATTR_TRACEBACK | ATTR_TRACEBACK_TABLE | ATTR_SEGMENTS));
        plan->bp_bytes = !needs_bp ? 0 : plan->max_in_degree < 255 ? 1
                       : plan->max_in_degree < 65535 ? 2 : 4;
        const char *not_dense = NULL;
        if (call->storage == STORE_WHOLE_TABLE)
            not_dense = "whole tables are asked for";
        else if (m->real_dim)
            not_dense = "its observations are real vectors (not in the dense shape yet)";
        plan->float_underflow = call->alg != ALG_VITERBI ? ir_float_underflow(m) : 0;
        plan->float_overflow = call->alg != ALG_VITERBI ? ir_float_overflow(m) : 0;
        plan->long_double_only = call->alg != ALG_VITERBI && ir_outside_double(m);
        if (plan->long_double_only && !not_dense)
            not_dense = "weights or emission values lie outside double's range";
        if (m->n_length_weights && !not_dense) /* the matrix is a data file, fixed at build time */
            not_dense = "some weights depend on the sequence length";
        if (o->verbose && plan->long_double_only)
            fprintf(o->verbose, "hmmc: plan %s: weights or emission values outside double's "
                    "normal range (2^-1022 to 2^1024): summed in long double only, on the CPU\n",
                    call->label);
        if (!not_dense && dense_fits(p->arena, m, &not_dense)) {
            plan->dense = 1;
            /* back pointers hold the state the best move came from */
            if (needs_bp)
                plan->bp_bytes = m->n_states < 65535 ? 2 : 4;
            if (o->verbose)
                fprintf(o->verbose, "hmmc: plan %s: dense (%d live states, %d moves): the model "
                        "as a matrix; on the CPU %s; a tiled matrix product per position over "
                        "a batch on the GPU%s, back pointers %d bytes\n", call->label, plan->n_live,
                        m->n_moves, call->alg == ALG_VITERBI
                            ? "a vector-matrix product per position (max-plus has no BLAS form)"
                            : "a matrix product per position over each batch of 4 or more "
                              "sequences a thread, through OpenBLAS (HMMRT_DENSE_BLAS=auto|on|off "
                              "at run time; --timing says which ran), else a vector-matrix "
                              "product per position",
                        call->alg == ALG_VITERBI ? "" : dense_gpu_sums(p->arena, plan->n_live),
                        plan->bp_bytes);
            continue;
        }
        if (o->verbose && plan->n_live >= DENSE_MIN_STATES)
            fprintf(o->verbose, "hmmc: plan %s: not dense: %s\n", call->label, not_dense);
    }
    return 1;
}
