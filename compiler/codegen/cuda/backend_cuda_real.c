/* backend_cuda_real.c: the CUDA program's table of its calls over real
 * observations, which libhmmrt_gpu scores without generated kernels: an
 * emission pass and a recursion of its own (runtime/gpu/real_kernel.cu),
 * over the model as written (hmmrt_program.models). */
#include "codegen/cuda/backend_cuda_real.h"

#include "support/arena.h"

/* The GPU path's most reals an observation (runtime/gpu/real_math.cuh). */
enum { REAL_GPU_MAX_D = 64 };

const char *cuda_real_refusal(const Program *p)
{
    if (p->n_prints == 0)
        return "it prints nothing";
    for (int i = 0; i < p->n_prints; i++) {
        const IrPrint *pr = &p->prints[i];
        const IrCall *call = &p->calls[pr->call];
        if (!call->model->real_dim)
            return arena_printf(p->arena, "%s observes symbols", call->label);
        if (call->model->real_dim > REAL_GPU_MAX_D)
            return arena_printf(p->arena, "%s observes %d reals, more than the GPU path's %d",
                                call->label, call->model->real_dim, REAL_GPU_MAX_D);
        if ((call->alg != ALG_FORWARD && call->alg != ALG_VITERBI) || pr->attr != ATTR_SCORE)
            return arena_printf(p->arena, "it prints %s, and the GPU path over real observations "
                                "computes forward and viterbi scores only", pr->label);
        /* the model as written, which the path runs (runtime/real_gpu_model.c) */
        const IrModel *m = &p->models[call->model_index];
        for (int s = 0; s < m->n_states; s++)
            if (m->states[s].kind == STATE_SILENT)
                return arena_printf(p->arena, "%s has a silent state (%s) besides its start and "
                                    "end, which the GPU path over real observations does not "
                                    "take", call->label, m->states[s].name);
    }
    return NULL;
}

const char *cuda_write_real_calls(Emitter *e, const Program *p, const Layout *l)
{
    FILE *o = e->out;
    emit_comment(e, "the scores that libhmmrt_gpu computes over real observations: model (index "
                    "into models[]), viterbi, column");
    fprintf(o, "static const hmmrt_real_gpu_call real_calls[] = {\n");
    for (int i = 0; i < p->n_prints; i++) {
        const IrCall *call = &p->calls[p->prints[i].call];
        int model = 0;
        for (int k = 0; k < l->n_used; k++)
            if (l->used_models[k] == call->model_index)
                model = k;
        fprintf(o, "    {%d, %d, %d}, /* %s */\n", model, call->alg == ALG_VITERBI, i,
                p->prints[i].label);
    }
    fprintf(o, "};\n");
    return arena_printf(p->arena, "    .n_real_calls = %d, .real_calls = real_calls, "
                                  ".real_open = hmmrt_real_gpu_open,\n    .real_score = "
                                  "hmmrt_real_gpu_score, .real_report = hmmrt_real_gpu_report, "
                                  ".real_close = hmmrt_real_gpu_close,\n", p->n_prints);
}
