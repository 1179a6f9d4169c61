/* backend_cuda_real.c: the CUDA program's table of its calls over real
 * observations, which libhmmrt_gpu scores without generated kernels: an
 * emission pass and a recursion of its own (runtime/gpu/real_kernel.cu), and
 * backward, posteriors and viterbi's paths (runtime/gpu/real_fb_kernel.cu),
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
        if (pr->attr == ATTR_SCORE_TABLE || pr->attr == ATTR_TRACEBACK_TABLE)
            return arena_printf(p->arena, "it prints %s, a whole table, which the GPU path over "
                                "real observations does not compute", pr->label);
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
    emit_comment(e, "the columns that libhmmrt_gpu computes over real observations: model (index "
                    "into models[]), viterbi, column, what computes it, the column's kind");
    fprintf(o, "static const hmmrt_real_gpu_call real_calls[] = {\n");
    for (int i = 0; i < p->n_prints; i++) {
        const IrCall *call = &p->calls[p->prints[i].call];
        int model = 0;
        for (int k = 0; k < l->n_used; k++)
            if (l->used_models[k] == call->model_index)
                model = k;
        const int attr = p->prints[i].attr;
        /* a posterior's score is forward's; the rest real_fb_gpu.c's */
        const char *what = attr == ATTR_SCORE ? (call->alg == ALG_BACKWARD ? "HMMRT_RG_BACKWARD"
                                                                          : "HMMRT_RG_SCORE")
                           : call->alg == ALG_VITERBI ? "HMMRT_RG_PATH"
                                                      : "HMMRT_RG_POSTERIOR";
        const char *out = attr == ATTR_SCORE       ? "HMMRT_OUT_SCORE"
                          : attr == ATTR_TRACEBACK ? "HMMRT_OUT_TRACEBACK"
                          : attr == ATTR_SEGMENTS  ? "HMMRT_OUT_SEGMENTS"
                          : attr == ATTR_DECODE    ? "HMMRT_OUT_DECODE"
                                                   : "HMMRT_OUT_TABLE";
        fprintf(o, "    {%d, %d, %d, %s, %s}, /* %s */\n", model, call->alg == ALG_VITERBI, i,
                what, out, p->prints[i].label);
    }
    fprintf(o, "};\n");
    return arena_printf(p->arena, "    .n_real_calls = %d, .real_calls = real_calls, "
                                  ".real_open = hmmrt_real_gpu_open,\n    .real_score = "
                                  "hmmrt_real_gpu_score, .real_report = hmmrt_real_gpu_report, "
                                  ".real_close = hmmrt_real_gpu_close,\n"
                                  "    .real_train_open = hmmrt_real_train_open, "
                                  ".real_train_expect = hmmrt_real_train_expect,\n"
                                  "    .real_train_describe = hmmrt_real_train_describe, "
                                  ".real_train_close = hmmrt_real_train_close, /* --train's "
                                  "E-step */\n", p->n_prints);
}
