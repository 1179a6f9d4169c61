/* backend_cuda_profile_data.c: the CUDA side of profiles as data
 * (backend_cuda_profile_data.h). A call on the generic profile scorer has no
 * kernel of its own: its launcher hands its model's hmmrt_profile (the C
 * path's tables, in the .c) to libhmmrt_gpu's generic kernel. What does
 * differ between models, the length-dependent weights' expressions, is
 * computed by one small kernel per distinct set of them (an import's models
 * all share one), so nvcc's work does not grow with the number of models. */
#include "codegen/cuda/backend_cuda_profile_data.h"

#include <ctype.h>
#include <string.h>

#include "gpu/profile_data_regs.h" /* runtime/: the float kernel's shapes */

#include "codegen/c/c_plan.h"
#include "codegen/layout.h"
#include "support/arena.h"

/* The model's length-dependent weights' expressions, one after another. */
static const char *lw_text(Arena *a, const IrModel *m)
{
    const char *t = "";
    for (int k = 0; k < m->n_length_weights; k++)
        t = arena_printf(a, "%s%s\n", t, m->length_weights[k].c_text);
    return t;
}

/* Per call on the generic kernel: the index of its set of weights (-1: none,
 * or not such a call); *n_sets: how many sets. */
static int *lw_sets(const Program *p, const Plans *plans, int *n_sets)
{
    int *set = ARENA_ARRAY(p->arena, int, p->n_calls + 1);
    const char **texts = ARENA_ARRAY(p->arena, const char *, p->n_calls + 1);
    *n_sets = 0;
    for (int c = 0; c < p->n_calls; c++) {
        set[c] = -1;
        const IrModel *m = p->calls[c].model;
        if (!plans->c[c].profile_data || !m->n_length_weights)
            continue;
        const char *t = lw_text(p->arena, m);
        for (int s = 0; s < *n_sets && set[c] < 0; s++)
            if (strcmp(texts[s], t) == 0)
                set[c] = s;
        if (set[c] < 0) {
            texts[*n_sets] = t;
            set[c] = (*n_sets)++;
        }
    }
    return set;
}

/* The first call of each set (its model writes the expressions). */
static int first_of_set(const int *set, int n_calls, int s)
{
    for (int c = 0; c < n_calls; c++)
        if (set[c] == s)
            return c;
    return -1;
}

void cuda_write_profile_data(Emitter *e, const Program *p, const Plans *plans)
{
    int n_sets, *set = lw_sets(p, plans, &n_sets), any = 0;
    for (int c = 0; c < p->n_calls; c++)
        any |= plans->c[c].profile_data;
    if (!any)
        return;
    emit_blank(e);
    emit_comment(e, "==== profiles as data: these calls have no kernel of their own; "
                    "libhmmrt_gpu's generic profile kernel reads their models' tables ====");
    for (int c = 0; c < p->n_calls; c++)
        if (plans->c[c].profile_data)
            emit_comment(e, "%s", p->calls[c].label);
    for (int s = 0; s < n_sets; s++) {
        const IrModel *m = p->calls[first_of_set(set, p->n_calls, s)].model;
        emit_blank(e);
        emit_comment(e, "the length-dependent weights of the models of set %d (%s's and every "
                        "model's with the same expressions), in double as the C path computes "
                        "them: weight k of sequence j at out[j * %d + k]", s, m->name,
                     m->n_length_weights);
        emit_open(e, "static __global__ void hmmc_pd_lw%d_kernel(const int64_t *lengths, int64_t n, "
                     "double *out)", s);
        emit_line(e, "const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;");
        emit_line(e, "if (j >= n)");
        emit_line(e, "    return;");
        emit_line(e, "const int64_t L = lengths[j];");
        for (int k = 0; k < m->n_length_weights; k++)
            emit_line(e, "out[j * %d + %d] = %s;", m->n_length_weights, k,
                      m->length_weights[k].c_text);
        emit_close(e, "");
        emit_open(e, "extern \"C\" int hmmc_pd_lw%d(const int64_t *lengths, int64_t n, double *out, "
                     "void *stream)", s);
        emit_line(e, "hmmc_pd_lw%d_kernel<<<(unsigned)((n + 127) / 128), 128, 0, "
                     "(cudaStream_t)stream>>>(lengths, n, out);", s);
        emit_line(e, "return (int)cudaGetLastError();");
        emit_close(e, "");
    }
}

void cuda_write_profile_data_host(Emitter *e, const Program *p, const Plans *plans)
{
    int n_sets, *set = lw_sets(p, plans, &n_sets), any = 0;
    const Layout *layout = plans->layout;
    for (int c = 0; c < p->n_calls; c++)
        any |= plans->c[c].profile_data;
    if (!any)
        return;
    emit_comment(e, "profiles as data: these calls run libhmmrt_gpu's generic profile kernel on "
                    "their model's tables (the hmmrt_profile the CPU path reads)");
    emit_line(e, "#include \"profile_data_gpu.h\"");
    for (int s = 0; s < n_sets; s++)
        emit_line(e, "int hmmc_pd_lw%d(const int64_t *lengths, int64_t n, double *out, void *stream);",
                  s);
    for (int c = 0; c < p->n_calls; c++) {
        if (!plans->c[c].profile_data)
            continue;
        const IrCall *call = &p->calls[c];
        const IrModel *m = call->model;
        const char *gpu = layout_name(layout, c, "gpu_profile");
        fprintf(e->out, "static const hmmrt_gpu_profile_call %s = {&hmmc_profile_m%d, %d, %d, %d, %s};\n",
                gpu, call->model_index, call->alg == ALG_VITERBI, m->K, m->n_length_weights,
                set[c] >= 0 ? arena_printf(p->arena, "hmmc_pd_lw%d", set[c]) : "NULL");
        fprintf(e->out, "int %s(const hmmrt_gpu_batch *b) { return hmmrt_gpu_profile_launch(&%s, b); }\n",
                layout_name(layout, c, "launch"), gpu);
        fprintf(e->out, "void %s(int device, int use_double, char *buf, size_t len)\n"
                        "{\n    hmmrt_gpu_profile_describe(&%s, device, use_double, buf, len);\n}\n",
                layout_name(layout, c, "describe"), gpu);
    }
}

const char *cuda_profile_data_plan_text(Arena *a, const IrCall *call)
{
    const IrModel *m = call->model;
    int M = 0, viterbi = call->alg == ALG_VITERBI, G, S;
    for (int s = 0; s < m->n_states; s++) {
        const char *n = m->states[s].name;
        M += n[0] == 'M' && isdigit((unsigned char)n[1]);
    }
    if (!hmmrt_pd_regs_shape(M, viterbi, &G, &S))
        return arena_printf(a, "libhmmrt_gpu's generic profile kernel (a warp a sequence, double: "
                               "M %d is beyond the float kernel's %d nodes a lane)", M,
                            HMMRT_PD_NODES_MOST);
    return arena_printf(a, "libhmmrt_gpu's float profile kernel (%d lanes a sequence, %d nodes a "
                           "lane in registers, M %d; sequences float cannot hold, and --double, "
                           "on the double kernel; a model whose weights float cannot hold too: "
                           "PROG --timing says which)", G, S, M);
}
