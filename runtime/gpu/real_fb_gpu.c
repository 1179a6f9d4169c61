/* real_fb_gpu.c: backward scores, posterior columns (decode, segments,
 * probability&) and viterbi's tracebacks and segments over real
 * observations on the GPU, for real_gpu.c: each model's moves by destination
 * and by source on the device, buffers for a chunk's stored columns, and
 * after each chunk's emission pass the kernels of real_fb_kernel.cu over
 * its (whole) sequences; their results back and written as the CPU path
 * writes them (posterior.c, traceback.c). */
#include "hmmrt_gpu.h"
#include "internal.h"
#include "real_fb_gpu.h"
#include "real_fb_steps.h"
#include "real_gpu.h"
#include "real_gpu_model.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A chunk's stored columns (forward's, the posteriors, viterbi's back
 * pointers) are kept under this many bytes: a sequence longer than the
 * frames that allows is the CPU path's. */
#define RFB_BYTES ((size_t)1 << 30)
#define SHARED_BYTES ((size_t)48 << 10)

typedef struct rfb_model {
    int ready, n;
    int *in_start, *in_from, *in_em, *out_start, *out_to, *out_em, *end_from;
    void *in_logw, *out_logw, *end_logw; /* reals */
} rfb_model;

struct hmmrt_rfb {
    const hmmrt_program *prog;
    const hmmrt_gpu_program *gp;
    int use_double;
    size_t rs;
    int64_t max_frames;
    int max_pieces, max_states;
    int want_post, want_best, want_path;
    rfb_model *models;
    void *alpha, *post, *cols;
    double *a_off, *fscore, *bscore;
    int *best, *bp, *path;
    void *post_h;
    int *best_h, *path_h;
    double *fscore_h, *bscore_h;
    double t_fb, t_viterbi, t_back, t_write;
    int64_t sequences;
};

#define CK(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            snprintf(err, errlen, "the GPU path over real observations (backward, posteriors " \
                     "and paths): %s failed: %s", #call, cudaGetErrorString(e_));              \
            return -1;                                                                         \
        }                                                                                      \
    } while (0)

static int is_fb(const hmmrt_real_gpu_call *c)
{
    return c->what == HMMRT_RG_BACKWARD || c->what == HMMRT_RG_POSTERIOR;
}

int hmmrt_rfb_wanted(const hmmrt_program *prog)
{
    const hmmrt_gpu_program *gp = prog->gpu;
    for (int c = 0; gp && c < gp->n_real_calls; c++)
        if (gp->real_calls[c].what != HMMRT_RG_SCORE)
            return 1;
    return 0;
}

int64_t hmmrt_rfb_frames(int n_states, int use_double, int64_t frames)
{
    /* forward's columns and the posteriors (reals), viterbi's back pointers
     * (ints), a double offset and two ints */
    const size_t rs = use_double ? sizeof(double) : sizeof(float);
    const size_t per = (size_t)(n_states > 0 ? n_states : 1) * (2 * rs + sizeof(int)) + 16;
    const int64_t most = (int64_t)(RFB_BYTES / per);
    return frames < most ? frames : most > 1 ? most : 1;
}

/* n doubles of v to the device as reals; n ints: real_gpu.c's uploads. */
static int reals(hmmrt_rfb *r, void **to, const double *v, int64_t n, char *err, size_t errlen)
{
    return hmmrt_rg_upload_reals(to, v, n, r->use_double, err, errlen);
}

static int ints(int **to, const int *v, int64_t n, char *err, size_t errlen)
{
    return hmmrt_rg_upload((void **)to, v, (size_t)(n > 0 ? n : 0) * sizeof(int), err, errlen);
}

/* Model m's moves on the device, once. */
static int upload_model(hmmrt_rfb *r, rfb_model *d, const hmmrt_rg_model *m, char *err,
                        size_t errlen)
{
    hmmrt_rfb_moves mv;
    if (hmmrt_rfb_moves_make(m, &mv) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int failed = ints(&d->in_start, m->in_start, m->n_states + 1, err, errlen) ||
                 ints(&d->in_from, m->in_from, m->n_in, err, errlen) ||
                 ints(&d->in_em, m->in_em, m->n_in, err, errlen) ||
                 ints(&d->out_start, mv.out_start, m->n_states + 1, err, errlen) ||
                 ints(&d->out_to, mv.out_to, m->n_in, err, errlen) ||
                 ints(&d->out_em, mv.out_em, m->n_in, err, errlen) ||
                 ints(&d->end_from, m->end_from, m->n_end, err, errlen) ||
                 reals(r, &d->in_logw, m->in_logw, m->n_in, err, errlen) ||
                 reals(r, &d->out_logw, mv.out_logw, m->n_in, err, errlen) ||
                 reals(r, &d->end_logw, m->end_logw, m->n_end, err, errlen);
    hmmrt_rfb_moves_free(&mv);
    d->ready = !failed;
    d->n = m->n_states;
    return failed ? -1 : 0;
}

static void free_model(rfb_model *d)
{
    void *p[] = {d->in_start, d->in_from, d->in_em, d->out_start, d->out_to, d->out_em,
                 d->end_from, d->in_logw, d->out_logw, d->end_logw};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        if (p[i])
            cudaFree(p[i]);
}

void hmmrt_rfb_close(hmmrt_rfb *r)
{
    if (!r)
        return;
    if (r->models)
        for (int i = 0; i < r->prog->n_models; i++)
            free_model(&r->models[i]);
    free(r->models);
    void *dev[] = {r->alpha, r->post, r->cols, r->a_off, r->fscore, r->bscore, r->best, r->bp,
                   r->path};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            cudaFree(dev[i]);
    void *host[] = {r->post_h, r->best_h, r->path_h, r->fscore_h, r->bscore_h};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        if (host[i])
            cudaFreeHost(host[i]);
    free(r);
}

static int open_buffers(hmmrt_rfb *r, char *err, size_t errlen)
{
    const hmmrt_gpu_program *gp = r->gp;
    for (int c = 0; c < gp->n_real_calls; c++) {
        const hmmrt_real_gpu_call *k = &gp->real_calls[c];
        const int n = r->prog->models[k->model].n_states;
        r->max_states = n > r->max_states ? n : r->max_states;
        r->want_post |= k->what == HMMRT_RG_POSTERIOR && k->out == HMMRT_OUT_TABLE;
        r->want_best |= k->what == HMMRT_RG_POSTERIOR && k->out != HMMRT_OUT_TABLE;
        r->want_path |= k->what == HMMRT_RG_PATH;
    }
    const size_t F = (size_t)r->max_frames, P = (size_t)r->max_pieces, N = (size_t)r->max_states;
    CK(cudaMalloc(&r->alpha, F * N * r->rs));
    CK(cudaMalloc((void **)&r->a_off, F * sizeof(double)));
    CK(cudaMalloc((void **)&r->fscore, P * sizeof(double)));
    CK(cudaMalloc((void **)&r->bscore, P * sizeof(double)));
    CK(cudaMallocHost((void **)&r->fscore_h, P * sizeof(double)));
    CK(cudaMallocHost((void **)&r->bscore_h, P * sizeof(double)));
    if (hmmrt_rfb_shared(r->max_states, r->use_double) > SHARED_BYTES)
        CK(cudaMalloc(&r->cols, P * hmmrt_rfb_shared(r->max_states, r->use_double)));
    if (r->want_post) {
        CK(cudaMalloc(&r->post, F * N * r->rs));
        CK(cudaMallocHost(&r->post_h, F * N * r->rs));
    }
    if (r->want_best) {
        CK(cudaMalloc((void **)&r->best, F * sizeof(int)));
        CK(cudaMallocHost((void **)&r->best_h, F * sizeof(int)));
    }
    if (r->want_path) {
        CK(cudaMalloc((void **)&r->bp, F * N * sizeof(int)));
        CK(cudaMalloc((void **)&r->path, F * sizeof(int)));
        CK(cudaMallocHost((void **)&r->path_h, F * sizeof(int)));
    }
    return 0;
}

hmmrt_rfb *hmmrt_rfb_open(const hmmrt_program *prog, int use_double, int64_t max_frames,
                          int max_pieces, char *err, size_t errlen)
{
    hmmrt_rfb *r = calloc(1, sizeof *r);
    if (!r || !(r->models = calloc((size_t)(prog->n_models > 0 ? prog->n_models : 1),
                                   sizeof *r->models))) {
        free(r);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->prog = prog;
    r->gp = prog->gpu;
    r->use_double = use_double;
    r->rs = use_double ? sizeof(double) : sizeof(float);
    r->max_frames = max_frames;
    r->max_pieces = max_pieces;
    if (open_buffers(r, err, errlen) != 0) {
        hmmrt_rfb_close(r);
        return NULL;
    }
    return r;
}

/* Position i's posteriors of a sequence (n reals at p) as the CPU path
 * writes them. */
static void write_table(hmmrt_buf *out, const hmmrt_rfb *r, const void *p, int64_t L, int n)
{
    for (int64_t i = 0; i < L; i++) {
        if (i)
            hmmrt_buf_putc(out, ';');
        for (int q = 0; q < n; q++) {
            if (q)
                hmmrt_buf_putc(out, ',');
            const size_t at = (size_t)i * n + (size_t)q;
            hmmrt_buf_score(out, r->use_double ? ((const double *)p)[at]
                                               : (double)((const float *)p)[at]);
        }
    }
}

static void write_names(hmmrt_buf *out, const char *const *names, const int *state, int64_t L)
{
    for (int64_t i = 0; i < L; i++) {
        if (i)
            hmmrt_buf_putc(out, ' ');
        hmmrt_buf_puts(out, names[state[i]]);
    }
}

/* The columns of model mi's calls for piece p (L observations at frame row
 * of the chunk) into its sequence's values v: those of forward-backward
 * when fb_ran, those of viterbi's path when vscore (its scores). */
static void write_piece(const hmmrt_rfb *r, int mi, int p, int64_t row, int64_t L,
                        hmmrt_value *v, int fb_ran, const double *vscore)
{
    const hmmrt_gpu_program *gp = r->gp;
    const hmmrt_model *m = &r->prog->models[mi];
    const int n = m->n_states;
    for (int c = 0; c < gp->n_real_calls; c++) {
        const hmmrt_real_gpu_call *k = &gp->real_calls[c];
        if (k->model != mi || k->what == HMMRT_RG_SCORE ||
            (k->what == HMMRT_RG_PATH ? !vscore : !fb_ran))
            continue;
        hmmrt_value *out = &v[k->column];
        if (k->what == HMMRT_RG_BACKWARD) {
            out->score = r->bscore_h[p];
            continue;
        }
        hmmrt_buf_reset(&out->text);
        const int none = (k->what == HMMRT_RG_PATH ? vscore[p] : r->fscore_h[p]) == -INFINITY;
        if (none) {
            hmmrt_buf_puts(&out->text, "-");
        } else if (k->what == HMMRT_RG_PATH && k->out == HMMRT_OUT_TRACEBACK) {
            hmmrt_buf_puts(&out->text, m->state_names[m->start]);
            hmmrt_buf_putc(&out->text, ' ');
            write_names(&out->text, m->state_names, r->path_h + row, L);
            hmmrt_buf_putc(&out->text, ' ');
            hmmrt_buf_puts(&out->text, m->state_names[m->end]);
        } else if (k->out == HMMRT_OUT_SEGMENTS) {
            hmmrt_write_segments(&out->text, m->state_names,
                                 k->what == HMMRT_RG_PATH ? r->path_h + row : r->best_h + row,
                                 (int)sizeof(int), L);
        } else if (k->out == HMMRT_OUT_DECODE) {
            write_names(&out->text, m->state_names, r->best_h + row, L);
        } else {
            write_table(&out->text, r, (const char *)r->post_h + (size_t)row * n * r->rs, L, n);
        }
    }
}

int hmmrt_rfb_chunk(hmmrt_rfb *r, int mi, const hmmrt_rg_model *m, const void *table, int n,
                    const int64_t *row_d, const int64_t *len_d, const int *flags_d,
                    const int64_t *row_h, const int64_t *len_h, const int *seq_h, void *values,
                    void *stream, char *err, size_t errlen)
{
    const hmmrt_gpu_program *gp = r->gp;
    int fb = 0, path = 0;
    for (int c = 0; c < gp->n_real_calls; c++) {
        fb |= gp->real_calls[c].model == mi && is_fb(&gp->real_calls[c]);
        path |= gp->real_calls[c].model == mi && gp->real_calls[c].what == HMMRT_RG_PATH;
    }
    if ((!fb && !path) || n == 0)
        return 0;
    rfb_model *d = &r->models[mi];
    if (!d->ready && upload_model(r, d, m, err, errlen) != 0)
        return -1;
    int64_t frames = 0;
    for (int p = 0; p < n; p++)
        frames = row_h[p] + len_h[p] > frames ? row_h[p] + len_h[p] : frames;
    int block = (m->n_states + 31) / 32 * 32;
    block = block < 1024 ? block : 1024;
    hmmrt_rfb_job job = {
        .use_double = r->use_double, .n_states = m->n_states, .start = m->start,
        .n_dens = m->n_dens, .n_pieces = n, .row = row_d, .len = len_d, .flags = flags_d,
        .in_start = d->in_start, .in_from = d->in_from, .in_em = d->in_em, .in_logw = d->in_logw,
        .out_start = d->out_start, .out_to = d->out_to, .out_em = d->out_em,
        .out_logw = d->out_logw, .n_end = m->n_end, .end_from = d->end_from,
        .end_logw = d->end_logw, .table = table, .alpha = r->alpha, .a_off = r->a_off,
        .cols = r->cols, .post = r->post, .best = r->best, .bp = r->bp, .path = r->path,
        .fscore = r->fscore, .bscore = r->bscore, .block = block, .stream = stream};
    const size_t N = (size_t)m->n_states;
    cudaStream_t st = (cudaStream_t)stream;
    if (fb) {
        double t0 = hmmrt_seconds();
        CK((cudaError_t)hmmrt_rfb_launch(&job));
        CK(cudaMemcpyAsync(r->bscore_h, r->bscore, (size_t)n * sizeof(double),
                           cudaMemcpyDeviceToHost, st));
        CK(cudaMemcpyAsync(r->fscore_h, r->fscore, (size_t)n * sizeof(double),
                           cudaMemcpyDeviceToHost, st));
        if (r->want_post)
            CK(cudaMemcpyAsync(r->post_h, r->post, (size_t)frames * N * r->rs,
                               cudaMemcpyDeviceToHost, st));
        if (r->want_best)
            CK(cudaMemcpyAsync(r->best_h, r->best, (size_t)frames * sizeof(int),
                               cudaMemcpyDeviceToHost, st));
        CK(cudaStreamSynchronize(st));
        r->t_fb += hmmrt_seconds() - t0;
    }
    double *vscore = NULL;
    if (path) {
        double t0 = hmmrt_seconds();
        /* viterbi's scores into the device's fscore after forward's were
         * copied back */
        job.viterbi = 1;
        CK((cudaError_t)hmmrt_rfb_launch(&job));
        CK(cudaMemcpyAsync(r->path_h, r->path, (size_t)frames * sizeof(int),
                           cudaMemcpyDeviceToHost, st));
        vscore = malloc((size_t)n * sizeof *vscore);
        if (!vscore) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        CK(cudaMemcpyAsync(vscore, r->fscore, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost,
                           st));
        CK(cudaStreamSynchronize(st));
        r->t_viterbi += hmmrt_seconds() - t0;
    }
    double t0 = hmmrt_seconds();
    const int nc = r->prog->n_columns;
    hmmrt_value *vals = values;
    for (int p = 0; p < n; p++) {
        hmmrt_value *v = vals + (size_t)seq_h[p] * nc;
        write_piece(r, mi, p, row_h[p], len_h[p], v, fb, vscore);
    }
    free(vscore);
    r->t_write += hmmrt_seconds() - t0;
    r->sequences += n;
    return 0;
}

void hmmrt_rfb_report(const hmmrt_rfb *r, void *out)
{
    fprintf((FILE *)out, "timing:   backward, posteriors and paths (runtime/gpu/real_fb_kernel.cu, "
                         "whole sequences of at most %lld frames): %lld sequences, "
                         "forward-backward %.3f s, viterbi with back pointers %.3f s, "
                         "writing the columns %.3f s\n",
            (long long)r->max_frames, (long long)r->sequences, r->t_fb, r->t_viterbi, r->t_write);
}
