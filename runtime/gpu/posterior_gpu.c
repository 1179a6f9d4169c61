/* posterior_gpu.c: a program's posterior calls in the GPU driver. Each runs
 * libhmmrt_gpu's forward-backward kernel (fb_kernel.cu, through the
 * program's fb_launch) on the model as written, a chunk at a time: the score
 * and, when printed, each position's state of highest posterior and the
 * posteriors come back; the forward tables stay on the device. In double,
 * for a sequence the float kernel cannot hold (a NaN or -inf score) and for
 * one longer than HMMRT_FB_GPU_LONGEST, the CPU engine (runtime/posterior.c)
 * fills the row's columns instead. */
#include "driver.h"
#include "fb_device.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef struct gpu_posterior {
    hmmrt_fb *fb;          /* the model as written; NULL for a kernel call */
    hmmrt_fb_device dev;   /* on the device, when on_device */
    int on_device;
    int decodes, table;    /* decode or segments printed; probability& printed */
    int64_t on_cpu;        /* sequences the CPU engine scored (--timing) */
} gpu_posterior;

int gpu_open_posteriors(hmmrt_gpu *g)
{
    const hmmrt_gpu_program *gp = g->gp;
    int any = 0;
    for (int c = 0; c < gp->n_calls; c++)
        any |= gp->calls[c].posterior != NULL;
    if (!any)
        return 0;
    g->posteriors = calloc((size_t)gp->n_calls, sizeof *g->posteriors);
    g->n_scratches = omp_get_max_threads();
    g->scratches = calloc((size_t)g->n_scratches, sizeof *g->scratches);
    if (!g->posteriors || !g->scratches)
        return gpu_error(g, "out of memory");
    for (int c = 0; c < gp->n_calls; c++) {
        const hmmrt_gpu_call *call = &gp->calls[c];
        gpu_posterior *p = &g->posteriors[c];
        if (!call->posterior)
            continue;
        char why[256] = "";
        p->fb = hmmrt_fb_new(call->posterior->model, call->posterior->n_symbols, why, sizeof why);
        if (!p->fb)
            return gpu_error(g, "%s: %s", call->label, why);
        for (int k = 0; k < call->n_outputs; k++) {
            p->decodes |= call->output_kind[k] == HMMRT_OUT_DECODE ||
                          call->output_kind[k] == HMMRT_OUT_SEGMENTS;
            p->table |= call->output_kind[k] == HMMRT_OUT_TABLE;
        }
        /* the kernel is float's; in double, and for a model it cannot
         * take, every sequence goes to the CPU engine */
        if (g->use_double || hmmrt_fb_device_unsuitable(p->fb))
            continue;
        if (hmmrt_fb_device_open(&p->dev, p->fb, 1, g->device, why, sizeof why) != 0 ||
            hmmrt_fb_device_set_numbers(&p->dev, p->fb, why, sizeof why) != 0)
            return gpu_error(g, "%s: %s (%s)", call->label, why, g->where);
        p->on_device = 1;
    }
    return 0;
}

void gpu_close_posteriors(hmmrt_gpu *g)
{
    if (g->posteriors)
        for (int c = 0; c < g->gp->n_calls; c++) {
            gpu_posterior *p = &g->posteriors[c];
            if (p->on_device)
                hmmrt_fb_device_close(&p->dev);
            hmmrt_fb_free(p->fb);
        }
    for (int t = 0; t < g->n_scratches; t++)
        hmmrt_scratch_free(&g->scratches[t]);
    free(g->posteriors);
    free(g->scratches);
    g->posteriors = NULL;
    g->scratches = NULL;
}

void gpu_posterior_shapes(hmmrt_gpu *g)
{
    for (int c = 0; c < g->gp->n_calls; c++) {
        const gpu_posterior *p = g->posteriors ? &g->posteriors[c] : NULL;
        if (!p || !p->fb)
            continue;
        /* a back pointer a column: the state of highest posterior, in the
         * fewest bytes that hold every state */
        g->n_states[c] = 1;
        g->bp_bytes[c] = !p->on_device || !p->decodes ? 0 : p->fb->n <= 256 ? 1
                         : p->fb->n <= 65536 ? 2 : 4;
        g->fb_states[c] = p->on_device ? p->dev.column : 0;
        g->fb_table[c] = p->on_device && p->table;
        /* the HMM form: a thread a sequence, each warp's records side by side */
        g->fb_grouped[c] = p->on_device && p->dev.job.t.hmm.N;
        if (g->fb_grouped[c])
            g->min_chunk_sequences = (int64_t)g->multiprocessors * 2048;
    }
}

int gpu_launch_posterior(hmmrt_gpu *g, gpu_slot *s, int c)
{
    const gpu_posterior *p = &g->posteriors[c];
    if (!p->on_device)
        return 0;
    const hmmrt_gpu_call *call = &g->gp->calls[c];
    const hmmrt_chunk_layout *lay = &s->layout;
    int copy = g->copy_of_alphabet[call->alphabet];
    hmmrt_fb_gpu_job job = p->dev.job;
    size_t cells = (size_t)(lay->size.symbols + lay->size.sequences);
    job.n_seqs = lay->size.sequences;
    job.grid = hmmrt_fb_device_grid(&p->dev, job.n_seqs);
    job.codes = gpu_device_at(s, lay->codes + (size_t)copy * lay->codes_stride);
    job.offsets = gpu_device_at(s, lay->offsets);
    job.lengths = gpu_device_at(s, lay->lengths);
    job.cols_at = gpu_device_at(s, lay->bp_offsets[c]);
    job.f = gpu_device_at(s, lay->work[c]);
    job.rec_at = gpu_device_at(s, lay->rec_offsets[c]);
    job.col_stride = job.rec_at ? HMMRT_GROUP : 1;
    /* the scales follow the tables; the HMM form's records hold their own */
    job.scale = job.rec_at ? NULL : (int *)(job.f + cells * (size_t)p->dev.column);
    job.lnp = gpu_device_at(s, lay->scores[c]);
    job.best = gpu_device_at(s, lay->bp[c]);
    job.best_bytes = g->bp_bytes[c];
    job.longest = HMMRT_FB_GPU_LONGEST;
    job.post = gpu_device_at(s, lay->post[c]);
    job.stream = s->stream;
    char what[256];
    snprintf(what, sizeof what, "launching the forward-backward kernel of %s", call->label);
    cudaError_t launched = gpu_take_fault(g, HMMRT_FAULT_ERROR)
                               ? cudaErrorLaunchFailure
                               : (cudaError_t)g->gp->fb_launch(&job);
    return gpu_check(g, launched, what);
}

/* The CPU engine's columns of the call, then copied to the call's other
 * columns of the same attribute (an attribute printed twice). */
static int on_cpu(const hmmrt_gpu *g, const hmmrt_gpu_call *call, int64_t i, hmmrt_value *row)
{
    const hmmrt_posterior_call *pc = call->posterior;
    const hmmrt_gpu_input *in = g->in;
    hmmrt_scratch *scratch = &g->scratches[omp_get_thread_num() % g->n_scratches];
    for (int k = 0; k < call->n_outputs; k++)
        hmmrt_buf_reset(&row[call->output_column[k]].text);
    if (hmmrt_posterior(pc, hmmrt_gpu_codes_of(in, g->prog->n_alphabets, call->alphabet, i),
                        in->lengths[i], row, scratch) != 0)
        return 1;
    for (int k = 0; k < call->n_outputs; k++) {
        int kind = call->output_kind[k];
        int first = kind == HMMRT_OUT_SCORE      ? pc->score_column
                    : kind == HMMRT_OUT_DECODE   ? pc->decode_column
                    : kind == HMMRT_OUT_SEGMENTS ? pc->segments_column
                                                 : pc->table_column;
        hmmrt_value *v = &row[call->output_column[k]];
        if (call->output_column[k] == first)
            continue;
        if (kind == HMMRT_OUT_SCORE)
            v->score = row[first].score;
        else
            hmmrt_buf_append(&v->text, row[first].text.data, row[first].text.len);
    }
    return 0;
}

int gpu_fill_posterior(const hmmrt_gpu *g, const gpu_slot *s, int c, int64_t j, hmmrt_value *row)
{
    const hmmrt_gpu_call *call = &g->gp->calls[c];
    gpu_posterior *p = &g->posteriors[c];
    const hmmrt_chunk_layout *lay = &s->layout;
    int64_t i = g->order[s->first + j];
    double lnp = p->on_device ? ((const double *)((const char *)s->host + lay->scores[c]))[j] : NAN;
    if (!isfinite(lnp)) {
#pragma omp atomic
        p->on_cpu++;
        return on_cpu(g, call, i, row);
    }
    const int64_t L = ((const int64_t *)((const char *)s->host + lay->lengths))[j];
    const int64_t col0 = ((const int64_t *)((const char *)s->host + lay->bp_offsets[c]))[j];
    const int bytes = g->bp_bytes[c];
    const void *best = lay->bp[c] == HMMRT_NO_SECTION
                           ? NULL
                           : (const char *)s->host + lay->bp[c] + (size_t)(col0 + 1) * (size_t)bytes;
    const float *post = lay->post[c] == HMMRT_NO_SECTION
                            ? NULL
                            : (const float *)((const char *)s->host + lay->post[c]) +
                                  (size_t)(col0 + 1) * (size_t)p->fb->n;
    const char *const *names = call->posterior->model->state_names;
    for (int k = 0; k < call->n_outputs; k++) {
        int kind = call->output_kind[k];
        hmmrt_value *v = &row[call->output_column[k]];
        if (kind == HMMRT_OUT_SCORE) {
            v->score = lnp;
            continue;
        }
        hmmrt_buf_reset(&v->text);
        if (L == 0) {
            hmmrt_buf_puts(&v->text, "-");
        } else if (kind == HMMRT_OUT_SEGMENTS) {
            hmmrt_write_segments(&v->text, names, best, bytes, L);
        } else if (kind == HMMRT_OUT_DECODE) {
            for (int64_t x = 0; x < L; x++) {
                if (x)
                    hmmrt_buf_putc(&v->text, ' ');
                hmmrt_buf_puts(&v->text, names[hmmrt_state_at(best, bytes, x)]);
            }
        } else {
            const int n = p->fb->n;
            for (int64_t x = 0; x < L; x++) {
                if (x)
                    hmmrt_buf_putc(&v->text, ';');
                for (int q = 0; q < n; q++) {
                    if (q)
                        hmmrt_buf_putc(&v->text, ',');
                    hmmrt_buf_score(&v->text, post[(size_t)x * (size_t)n + (size_t)q]);
                }
            }
        }
    }
    return 0;
}

void gpu_describe_posterior(const hmmrt_gpu *g, int c, char *buf, size_t len)
{
    const gpu_posterior *p = &g->posteriors[c];
    char shape[256];
    if (!p->on_device) {
        snprintf(buf, len, "the CPU engine (libhmmrt's posterior), every sequence: %s",
                 g->use_double ? "the forward-backward kernel is float's"
                               : hmmrt_fb_device_unsuitable(p->fb));
        return;
    }
    hmmrt_fb_device_shape(&p->dev, shape, sizeof shape);
    snprintf(buf, len, "forward-backward kernel (libhmmrt_gpu), %d states, %s; to the CPU "
             "engine: sequences it cannot hold in float or longer than %d symbols (%lld so far)",
             p->fb->n, shape, HMMRT_FB_GPU_LONGEST, (long long)p->on_cpu);
}
