/* backend_c_dense.c: the table of a program's batched dense sums (dense
 * forward and backward calls), which libhmmrt scores over each batch as
 * matrix products before the sequences' turns (runtime/dense_batch.c). */
#include "codegen/c/backend_c_dense.h"

#include "analysis/dense.h"

static int is_dense_sum(const IrCall *call)
{
    return call->plan.dense && (call->alg == ALG_FORWARD || call->alg == ALG_BACKWARD);
}

/* A posterior call whose model, as written, has the dense form (libhmmrt's
 * engine then takes its dense form too: runtime/fb.c, make_dense). */
static int is_dense_posterior(const Program *p, int c)
{
    const IrCall *call = &p->calls[c];
    return call->alg == ALG_POSTERIOR && !call->model->real_dim &&
           dense_fits(p->arena, &p->models[call->model_index], NULL);
}

int c_dense_sum_index(const Program *p, int c)
{
    int sums = 0, k = 0;
    for (int i = 0; i < p->n_calls; i++)
        sums += is_dense_sum(&p->calls[i]);
    if (is_dense_sum(&p->calls[c])) {
        for (int i = 0; i < c; i++)
            k += is_dense_sum(&p->calls[i]);
        return k;
    }
    if (!is_dense_posterior(p, c))
        return -1;
    for (int i = 0; i < c; i++)
        k += is_dense_posterior(p, i);
    return sums + k;
}

int c_dense_uses_blas(const Program *p)
{
    for (int c = 0; c < p->n_calls; c++)
        if (is_dense_sum(&p->calls[c]) || is_dense_posterior(p, c))
            return 1;
    return 0;
}

void c_write_dense_batching(Emitter *e, const Program *p, const Layout *layout)
{
    if (!c_dense_uses_blas(p))
        return;
    emit_blank(e);
    emit_comment(e, "The dense forward and backward calls and the posterior calls of dense "
                    "models, which the CPU path scores over a whole batch of sequences at once: "
                    "matrix products per position (libhmmrt's dense_blas.c and fb_blas.c, "
                    "OpenBLAS; HMMRT_DENSE_BLAS=auto|on|off); --train's E-step likewise for a "
                    "model in fb.c's dense form.");
    int n_sums = 0, n_posteriors = 0;
    fprintf(e->out, "static const hmmrt_dense_sum hmmc_dense_sums[] = {\n");
    for (int c = 0; c < p->n_calls; c++)
        if (is_dense_sum(&p->calls[c]) && ++n_sums)
            fprintf(e->out, "    {&hmmc_%s, %d, %d}, /* %s */\n", layout_name(layout, c, "dense"),
                    p->calls[c].alg == ALG_BACKWARD, layout->calls[c].alphabet,
                    p->calls[c].label);
    fprintf(e->out, "%s};\nstatic const hmmrt_posterior_call *const hmmc_dense_posteriors[] = {\n",
            n_sums ? "" : "    {0},\n");
    for (int c = 0; c < p->n_calls; c++)
        if (is_dense_posterior(p, c) && ++n_posteriors)
            fprintf(e->out, "    &%s, /* %s */\n", layout_name(layout, c, "call"), p->calls[c].label);
    fprintf(e->out, "%s};\nstatic const hmmrt_dense_batching hmmc_dense_batching = {\n"
                    "    .n_sums = %d, .sums = hmmc_dense_sums,\n"
                    "    .tile = hmmrt_dense_blas_tile, .single_threaded = "
                    "hmmrt_dense_blas_single_threaded,\n"
                    "    .fb_tile = hmmrt_fb_blas_tile, .fb_counts = hmmrt_fb_blas_counts,\n"
                    "    .n_posteriors = %d, .posteriors = hmmc_dense_posteriors,\n};\n",
            n_posteriors ? "" : "    NULL,\n", n_sums, n_posteriors);
}
