/* backend_c_dense.c: the table of a program's batched dense sums (dense
 * forward and backward calls), which libhmmrt scores over each batch as
 * matrix products before the sequences' turns (runtime/dense_batch.c). */
#include "codegen/c/backend_c_dense.h"

static int is_dense_sum(const IrCall *call)
{
    return call->plan.dense && (call->alg == ALG_FORWARD || call->alg == ALG_BACKWARD);
}

int c_dense_sum_index(const Program *p, int c)
{
    if (!is_dense_sum(&p->calls[c]))
        return -1;
    int k = 0;
    for (int i = 0; i < c; i++)
        k += is_dense_sum(&p->calls[i]);
    return k;
}

int c_dense_uses_blas(const Program *p)
{
    for (int c = 0; c < p->n_calls; c++)
        if (is_dense_sum(&p->calls[c]))
            return 1;
    return 0;
}

void c_write_dense_batching(Emitter *e, const Program *p, const Layout *layout)
{
    if (!c_dense_uses_blas(p))
        return;
    emit_blank(e);
    emit_comment(e, "The dense forward and backward calls, which the CPU path scores over a "
                    "whole batch of sequences at once: a matrix product per position "
                    "(libhmmrt's dense_blas.c, OpenBLAS; HMMC_DENSE_BLAS=auto|on|off); "
                    "--train's E-step likewise for a model in fb.c's dense form (fb_blas.c).");
    fprintf(e->out, "static const hmmrt_dense_sum hmmc_dense_sums[] = {\n");
    for (int c = 0; c < p->n_calls; c++)
        if (is_dense_sum(&p->calls[c]))
            fprintf(e->out, "    {&hmmc_%s, %d, %d}, /* %s */\n", layout_name(layout, c, "dense"),
                    p->calls[c].alg == ALG_BACKWARD, layout->calls[c].alphabet,
                    p->calls[c].label);
    fprintf(e->out, "};\nstatic const hmmrt_dense_batching hmmc_dense_batching = {\n"
                    "    .n_sums = sizeof hmmc_dense_sums / sizeof hmmc_dense_sums[0], .sums = "
                    "hmmc_dense_sums,\n    .tile = hmmrt_dense_blas_tile, .single_threaded = "
                    "hmmrt_dense_blas_single_threaded,\n"
                    "    .fb_tile = hmmrt_fb_blas_tile, .fb_counts = hmmrt_fb_blas_counts,\n};\n");
}
