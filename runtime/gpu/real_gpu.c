/* real_gpu.c: the GPU path over real observations (hmmrt_gpu_program's
 * real_* entries): the models packed once (real_gpu_model.c) and copied to
 * the device, then each file's frames cut into chunks of bounded size,
 * packed into pinned memory as floats (doubles with --double), copied, the
 * emission pass run once per model and chunk, the recursion of each call
 * over the chunk's pieces (a sequence longer than a chunk carries its
 * column to the next), and the scores copied back. */
#include "hmmrt_gpu.h"
#include "internal.h"
#include "real_gpu_model.h"
#include "real_read.h"
#include "real_gpu.h"
#include "real_fb_gpu.h" /* backward, posteriors, paths */
#include "gpu/real_math.cuh" /* HMMRT_RG_MAX_D */

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The emission table of a chunk is kept under this many bytes (1 GiB; the
 * gaussians' table of the matrix product under GEMM_BYTES, at most a
 * quarter of the device's free memory), and a chunk under this many
 * frames; HMMRT_REAL_FRAMES (tests) sets the frames. Models of GEMM_FROM
 * gaussians or more take the matrix product in float, where cuBLAS loads;
 * HMMRT_REAL_PRODUCT=direct or gemm chooses for every model. */
#define TABLE_BYTES ((size_t)1 << 30)
#define GEMM_BYTES ((size_t)4 << 30)
#define GEMM_FROM 1024
#define MOST_FRAMES ((int64_t)1 << 20)
#define WORK_BYTES ((size_t)512 << 20)
#define SHARED_BYTES ((size_t)48 << 10)

typedef struct dev_model {
    int packed;
    hmmrt_rg_model m;
    void *par, *log_norm, *part_logw, *in_logw, *end_logw; /* reals */
    int64_t *par_at;
    int *diagonal, *part_start, *part_gauss, *in_start, *in_from, *in_em, *end_from;
    int gemm;         /* the emission pass as the matrix product */
    float *w, *center; /* its weights (n_gauss x n_feat) and centre (D) */
    int *feat_i, *feat_k;
} dev_model;

typedef struct rg_gpu {
    const hmmrt_program *prog;
    const hmmrt_gpu_program *gp;
    int device, use_double;
    size_t rs; /* bytes of a real */
    char device_name[256];
    dev_model *models;
    int max_states, max_dens, D;
    int64_t max_frames;
    int max_pieces;
    int carry_side; /* which half of carry_d and carry_off_d the next chunk reads */
    void *frames_h, *frames_d, *table_d, *carry_d, *work_d;
    float *phi_d, *gauss_d; /* the matrix product's features and gaussians' table */
    int max_gauss, n_feat;
    void *blas;             /* cuBLAS's handle, or NULL */
    char product[160];      /* which emission pass, in words */
    int64_t *row_h, *len_h, *row_d, *len_d;
    int *flags_h, *flags_d, *seq_h;
    double *score_h, *score_d, *carry_off_d;
    cudaStream_t stream;
    double t_pack, t_in, t_emit, t_step, t_out;
    int64_t frames, sequences, chunks;
    double flops; /* of the emission passes, seed paper 003's count */
    hmmrt_rfb *rfb; /* real_fb_gpu.c's columns, or NULL: scores only */
} rg_gpu;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CK(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            snprintf(err, errlen, "the GPU path over real observations: %s failed: %s", #call, \
                     cudaGetErrorString(e_));                                                  \
            return -1;                                                                         \
        }                                                                                      \
    } while (0)

/* n values of v (doubles) to the device as reals. */
static int upload_reals(rg_gpu *g, void **to, const double *v, int64_t n, char *err, size_t errlen)
{
    size_t bytes = (size_t)(n > 0 ? n : 1) * g->rs;
    void *h = malloc(bytes);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int64_t i = 0; i < n; i++)
        if (g->use_double)
            ((double *)h)[i] = v[i];
        else
            ((float *)h)[i] = (float)v[i];
    cudaError_t e = cudaMalloc(to, bytes);
    if (e == cudaSuccess)
        e = cudaMemcpy(*to, h, bytes, cudaMemcpyHostToDevice);
    free(h);
    CK(e);
    return 0;
}

static int upload(void **to, const void *v, size_t bytes, char *err, size_t errlen)
{
    CK(cudaMalloc(to, bytes ? bytes : 1));
    if (bytes)
        CK(cudaMemcpy(*to, v, bytes, cudaMemcpyHostToDevice));
    return 0;
}

static int upload_model(rg_gpu *g, dev_model *d, char *err, size_t errlen)
{
    const hmmrt_rg_model *m = &d->m;
    const size_t I = sizeof(int);
    if (upload_reals(g, &d->par, m->par, m->n_par, err, errlen) ||
        upload_reals(g, &d->log_norm, m->log_norm, m->n_gauss, err, errlen) ||
        upload_reals(g, &d->part_logw, m->part_logw, m->n_parts, err, errlen) ||
        upload_reals(g, &d->in_logw, m->in_logw, m->n_in, err, errlen) ||
        upload_reals(g, &d->end_logw, m->end_logw, m->n_end, err, errlen) ||
        upload((void **)&d->par_at, m->par_at, (size_t)m->n_gauss * sizeof(int64_t), err, errlen) ||
        upload((void **)&d->diagonal, m->diagonal, (size_t)m->n_gauss * I, err, errlen) ||
        upload((void **)&d->part_start, m->part_start, ((size_t)m->n_dens + 1) * I, err, errlen) ||
        upload((void **)&d->part_gauss, m->part_gauss, (size_t)m->n_parts * I, err, errlen) ||
        upload((void **)&d->in_start, m->in_start, ((size_t)m->n_states + 1) * I, err, errlen) ||
        upload((void **)&d->in_from, m->in_from, (size_t)m->n_in * I, err, errlen) ||
        upload((void **)&d->in_em, m->in_em, (size_t)m->n_in * I, err, errlen) ||
        upload((void **)&d->end_from, m->end_from, (size_t)m->n_end * I, err, errlen))
        return -1;
    return 0;
}

/* The matrix product's weights, centre and feature indices of d. */
static int upload_gemm(dev_model *d, char *err, size_t errlen)
{
    const hmmrt_rg_model *m = &d->m;
    const int F = hmmrt_rg_n_features(m->D);
    double *w = malloc((size_t)m->n_gauss * F * sizeof *w), center[HMMRT_RG_MAX_D];
    float *wf = malloc((size_t)m->n_gauss * F * sizeof *wf), cf[HMMRT_RG_MAX_D];
    int *fi = malloc((size_t)2 * F * sizeof *fi);
    int failed = !w || !wf || !fi || hmmrt_rg_gemm_weights(m, center, w) != 0;
    if (!failed) {
        for (size_t k = 0; k < (size_t)m->n_gauss * F; k++)
            wf[k] = (float)w[k];
        for (int k = 0; k < m->D; k++)
            cf[k] = (float)center[k];
        hmmrt_rg_feature_index(m->D, fi, fi + F);
        failed = upload((void **)&d->w, wf, (size_t)m->n_gauss * F * sizeof *wf, err, errlen) ||
                 upload((void **)&d->center, cf, (size_t)m->D * sizeof *cf, err, errlen) ||
                 upload((void **)&d->feat_i, fi, (size_t)F * sizeof *fi, err, errlen) ||
                 upload((void **)&d->feat_k, fi + F, (size_t)F * sizeof *fi, err, errlen);
    } else {
        snprintf(err, errlen, "out of memory for the matrix product's weights");
    }
    free(w);
    free(wf);
    free(fi);
    return failed ? -1 : 0;
}

static void free_model(dev_model *d)
{
    void *p[] = {d->par, d->log_norm, d->part_logw, d->in_logw, d->end_logw, d->par_at,
                 d->diagonal, d->part_start, d->part_gauss, d->in_start, d->in_from, d->in_em,
                 d->end_from, d->w, d->center, d->feat_i, d->feat_k};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        if (p[i])
            cudaFree(p[i]);
    hmmrt_rg_model_free(&d->m);
}

void hmmrt_real_gpu_close(void *ctx)
{
    rg_gpu *g = ctx;
    if (!g)
        return;
    if (g->models)
        for (int i = 0; i < g->prog->n_models; i++)
            free_model(&g->models[i]);
    free(g->models);
    void *dev[] = {g->frames_d, g->table_d, g->carry_d, g->work_d, g->row_d, g->len_d,
                   g->flags_d, g->score_d, g->carry_off_d, g->phi_d, g->gauss_d};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            cudaFree(dev[i]);
    void *host[] = {g->frames_h, g->row_h, g->len_h, g->flags_h, g->score_h};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        if (host[i])
            cudaFreeHost(host[i]);
    free(g->seq_h);
    hmmrt_rfb_close(g->rfb);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    free(g);
}

/* Packs the models of the calls, sizes and allocates the buffers. */
static int open_buffers(rg_gpu *g, char *err, size_t errlen)
{
    const hmmrt_gpu_program *gp = g->gp;
    const char *asked = getenv("HMMRT_REAL_PRODUCT");
    if (asked && strcmp(asked, "direct") != 0 && strcmp(asked, "gemm") != 0) {
        snprintf(err, errlen, "HMMRT_REAL_PRODUCT is %s: direct or gemm", asked);
        return -1;
    }
    int gemm_models = 0;
    for (int c = 0; c < gp->n_real_calls; c++) {
        dev_model *d = &g->models[gp->real_calls[c].model];
        if (d->packed)
            continue;
        if (hmmrt_rg_model_make(&g->prog->models[gp->real_calls[c].model], &d->m, err, errlen))
            return -1;
        d->packed = 1;
        if (upload_model(g, d, err, errlen))
            return -1;
        g->D = d->m.D;
        g->max_states = d->m.n_states > g->max_states ? d->m.n_states : g->max_states;
        g->max_dens = d->m.n_dens > g->max_dens ? d->m.n_dens : g->max_dens;
        d->gemm = !g->use_double && (asked ? strcmp(asked, "gemm") == 0 : d->m.n_gauss >= GEMM_FROM);
        if (d->gemm && !g->blas && !(g->blas = hmmrt_cublas_handle()))
            d->gemm = 0; /* no cuBLAS: the direct pass */
        if (d->gemm) {
            if (upload_gemm(d, err, errlen))
                return -1;
            g->max_gauss = d->m.n_gauss > g->max_gauss ? d->m.n_gauss : g->max_gauss;
            gemm_models++;
        }
    }
    g->n_feat = hmmrt_rg_n_features(g->D);
    snprintf(g->product, sizeof g->product, "%s", gemm_models
             ? "the emission pass as an FP32 matrix product of expanded features (cuBLAS)"
             : g->use_double || (asked && !strcmp(asked, "direct")) || !g->max_dens
                   ? "the direct emission pass"
                   : "the direct emission pass (fewer than 1,024 gaussians, or no cuBLAS)");
    int64_t frames = (int64_t)(TABLE_BYTES / ((size_t)(g->max_dens > 0 ? g->max_dens : 1) * g->rs));
    if (gemm_models) {
        size_t free_bytes = 0, total = 0, budget = GEMM_BYTES;
        if (cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes / 4 < budget)
            budget = free_bytes / 4;
        int64_t most = (int64_t)(budget / ((size_t)g->max_gauss * sizeof(float)));
        frames = frames < most ? frames : most;
    }
    frames = frames < MOST_FRAMES ? frames : MOST_FRAMES;
    if (hmmrt_rfb_wanted(g->prog)) /* real_fb_gpu.c's stored columns */
        frames = hmmrt_rfb_frames(g->max_states, g->use_double, frames);
    const char *env = getenv("HMMRT_REAL_FRAMES");
    if (env && atol(env) > 0)
        frames = atol(env);
    g->max_frames = frames > 1 ? frames : 1;
    size_t cols = hmmrt_rg_step_shared(g->max_states, g->use_double);
    int64_t pieces = g->max_frames;
    if (cols > SHARED_BYTES) { /* the columns in global memory: a piece's own */
        int64_t most = (int64_t)(WORK_BYTES / cols);
        pieces = pieces < most ? pieces : most;
        pieces = pieces > 1 ? pieces : 1;
    }
    g->max_pieces = (int)(pieces < (1 << 30) ? pieces : (1 << 30));
    const int n_calls = gp->n_real_calls;
    const size_t P = (size_t)g->max_pieces, F = (size_t)g->max_frames;
    CK(cudaStreamCreate(&g->stream));
    CK(cudaMallocHost(&g->frames_h, F * g->D * g->rs));
    CK(cudaMallocHost((void **)&g->row_h, P * sizeof(int64_t)));
    CK(cudaMallocHost((void **)&g->len_h, P * sizeof(int64_t)));
    CK(cudaMallocHost((void **)&g->flags_h, P * sizeof(int)));
    CK(cudaMallocHost((void **)&g->score_h, P * n_calls * sizeof(double)));
    CK(cudaMalloc(&g->frames_d, F * g->D * g->rs));
    CK(cudaMalloc(&g->table_d, F * (size_t)g->max_dens * g->rs));
    CK(cudaMalloc((void **)&g->row_d, P * sizeof(int64_t)));
    CK(cudaMalloc((void **)&g->len_d, P * sizeof(int64_t)));
    CK(cudaMalloc((void **)&g->flags_d, P * sizeof(int)));
    CK(cudaMalloc((void **)&g->score_d, P * n_calls * sizeof(double)));
    CK(cudaMalloc(&g->carry_d, 2 * (size_t)n_calls * g->max_states * g->rs));
    CK(cudaMalloc((void **)&g->carry_off_d, 2 * (size_t)n_calls * sizeof(double)));
    if (cols > SHARED_BYTES)
        CK(cudaMalloc(&g->work_d, P * cols));
    if (g->max_gauss > 0) {
        CK(cudaMalloc((void **)&g->phi_d, F * g->n_feat * sizeof(float)));
        CK(cudaMalloc((void **)&g->gauss_d, F * g->max_gauss * sizeof(float)));
    }
    g->seq_h = malloc(P * sizeof *g->seq_h);
    if (!g->seq_h) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (hmmrt_rfb_wanted(g->prog) &&
        !(g->rfb = hmmrt_rfb_open(g->prog, g->use_double, g->max_frames, g->max_pieces, err, errlen)))
        return -1;
    return 0;
}

void *hmmrt_real_gpu_open(const hmmrt_program *prog, int device, int use_double, char *err,
                          size_t errlen)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        snprintf(err, errlen, "no CUDA device found");
        return NULL;
    }
    if (device < 0 || device >= count) {
        snprintf(err, errlen, "there is no GPU %d (%d found)", device, count);
        return NULL;
    }
    rg_gpu *g = calloc(1, sizeof *g);
    if (!g || !(g->models = calloc((size_t)(prog->n_models > 0 ? prog->n_models : 1),
                                   sizeof *g->models))) {
        free(g);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    g->prog = prog;
    g->gp = prog->gpu;
    g->device = device;
    g->use_double = use_double;
    g->rs = use_double ? sizeof(double) : sizeof(float);
    struct cudaDeviceProp p;
    if (cudaSetDevice(device) != cudaSuccess || cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        snprintf(err, errlen, "GPU %d could not be opened", device);
        hmmrt_real_gpu_close(g);
        return NULL;
    }
    snprintf(g->device_name, sizeof g->device_name, "%s", p.name);
    if (open_buffers(g, err, errlen) != 0) {
        hmmrt_real_gpu_close(g);
        return NULL;
    }
    return g;
}

/* Call c's column between chunks, side 0 or 1. */
static void *carry(const rg_gpu *g, int c, int side)
{
    return (char *)g->carry_d + (size_t)(2 * c + side) * g->max_states * g->rs;
}

/* The chunk in the pinned buffers (n pieces, frames frames) through the
 * device: each model's emission pass, each call's recursion, the scores
 * back into values; done[seq] for the sequences that ended in it. */
static int run_chunk(rg_gpu *g, int n, int64_t frames, hmmrt_value *values, unsigned char *done,
                     char *err, size_t errlen)
{
    const hmmrt_gpu_program *gp = g->gp;
    double t0 = now();
    CK(cudaMemcpyAsync(g->frames_d, g->frames_h, (size_t)frames * g->D * g->rs,
                       cudaMemcpyHostToDevice, g->stream));
    CK(cudaMemcpyAsync(g->row_d, g->row_h, (size_t)n * sizeof(int64_t), cudaMemcpyHostToDevice,
                       g->stream));
    CK(cudaMemcpyAsync(g->len_d, g->len_h, (size_t)n * sizeof(int64_t), cudaMemcpyHostToDevice,
                       g->stream));
    CK(cudaMemcpyAsync(g->flags_d, g->flags_h, (size_t)n * sizeof(int), cudaMemcpyHostToDevice,
                       g->stream));
    CK(cudaStreamSynchronize(g->stream));
    double t1 = now();
    g->t_in += t1 - t0;
    for (int mi = 0; mi < g->prog->n_models; mi++) {
        const dev_model *d = &g->models[mi];
        int used = 0;
        for (int c = 0; c < gp->n_real_calls; c++)
            used |= gp->real_calls[c].model == mi;
        if (!used)
            continue;
        double e0 = now();
        if (d->gemm) {
            hmmrt_rg_gemm_job gj = {
                .D = d->m.D, .n_feat = g->n_feat, .n_gauss = d->m.n_gauss, .n_dens = d->m.n_dens,
                .n_frames = frames, .frames = g->frames_d, .center = d->center,
                .feat_i = d->feat_i, .feat_k = d->feat_k, .phi = g->phi_d, .gauss = g->gauss_d,
                .part_start = d->part_start, .part_gauss = d->part_gauss,
                .part_logw = d->part_logw, .table = g->table_d, .stream = g->stream};
            CK((cudaError_t)hmmrt_rg_features_launch(&gj));
            int st = hmmrt_cublas_sgemm_tn(g->blas, g->stream, d->m.n_gauss, (int)frames, g->n_feat,
                                           d->w, g->phi_d, g->gauss_d);
            if (st != 0) {
                snprintf(err, errlen, "the GPU path over real observations: cuBLAS's product "
                                      "failed (status %d)", st);
                return -1;
            }
            CK((cudaError_t)hmmrt_rg_mix_launch(&gj));
        } else {
            hmmrt_rg_emit_job ej = {
                .use_double = g->use_double, .D = d->m.D, .n_dens = d->m.n_dens, .n_frames = frames,
                .frames = g->frames_d, .par = d->par, .par_at = d->par_at, .diagonal = d->diagonal,
                .log_norm = d->log_norm, .part_start = d->part_start, .part_gauss = d->part_gauss,
                .part_logw = d->part_logw, .table = g->table_d, .stream = g->stream};
            CK((cudaError_t)hmmrt_rg_emit_launch(&ej));
        }
        CK(cudaStreamSynchronize(g->stream));
        double e1 = now();
        g->t_emit += e1 - e0;
        g->flops += d->m.flops_per_frame * (double)frames;
        for (int c = 0; c < gp->n_real_calls; c++) {
            if (gp->real_calls[c].model != mi || gp->real_calls[c].what != HMMRT_RG_SCORE)
                continue; /* real_fb_gpu.c's */
            int block = (d->m.n_states + 31) / 32 * 32;
            block = block < 1024 ? block : 1024;
            hmmrt_rg_step_job sj = {
                .use_double = g->use_double, .viterbi = gp->real_calls[c].viterbi,
                .n_states = d->m.n_states, .start = d->m.start, .n_dens = d->m.n_dens,
                .n_pieces = n, .row = g->row_d, .len = g->len_d, .flags = g->flags_d,
                .in_start = d->in_start, .in_from = d->in_from, .in_em = d->in_em,
                .in_logw = d->in_logw, .n_end = d->m.n_end, .end_from = d->end_from,
                .end_logw = d->end_logw, .table = g->table_d,
                .carry = carry(g, c, g->carry_side), .carry_offset = g->carry_off_d +
                2 * c + g->carry_side, .carry_out = carry(g, c, !g->carry_side),
                .carry_offset_out = g->carry_off_d + 2 * c + !g->carry_side, .score = g->score_d + (size_t)c * g->max_pieces,
                .work = g->work_d, .block = block, .stream = g->stream};
            CK((cudaError_t)hmmrt_rg_step_launch(&sj));
        }
        CK(cudaStreamSynchronize(g->stream));
        g->t_step += now() - e1;
        if (g->rfb && hmmrt_rfb_chunk(g->rfb, mi, &d->m, g->table_d, n, g->row_d, g->len_d,
                                      g->flags_d, g->row_h, g->len_h, g->seq_h, values, g->stream,
                                      err, errlen) != 0)
            return -1;
    }
    g->carry_side = !g->carry_side;
    double o0 = now();
    for (int c = 0; c < gp->n_real_calls; c++)
        CK(cudaMemcpyAsync(g->score_h + (size_t)c * g->max_pieces,
                           g->score_d + (size_t)c * g->max_pieces, (size_t)n * sizeof(double),
                           cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    g->t_out += now() - o0;
    const int n_columns = g->prog->n_columns;
    for (int p = 0; p < n; p++) {
        if (!(g->flags_h[p] & RG_LAST))
            continue;
        for (int c = 0; c < gp->n_real_calls; c++)
            if (gp->real_calls[c].what == HMMRT_RG_SCORE)
                values[(size_t)g->seq_h[p] * n_columns + gp->real_calls[c].column].score =
                    g->score_h[(size_t)c * g->max_pieces + p];
        done[g->seq_h[p]] = 1;
        g->sequences++;
    }
    g->frames += frames;
    g->chunks++;
    return 0;
}

/* Whether the float path holds q's observations: |x| below 1e15, so that
 * (x - mean)^2 and the features stay far inside float's range (larger
 * ones, which double holds, are the CPU path's); with posteriors or paths
 * printed, in double too: ln P of such a sequence is beyond 1e20, where
 * posteriors from logs lose every digit and viterbi's paths tie. */
static int fits_float(const rg_gpu *g, const hmmrt_real_seq *q)
{
    if (g->use_double && !g->rfb) /* posteriors and paths: in double too (real_fb_gpu.c) */
        return 1;
    for (size_t k = 0; k < (size_t)q->length * g->D; k++)
        if (!(fabs(q->obs[k]) < 1e15))
            return 0;
    return 1;
}

int hmmrt_real_gpu_score(void *ctx, const hmmrt_real_file *f, hmmrt_value *values,
                         unsigned char *done, char *err, size_t errlen)
{
    rg_gpu *g = ctx;
    const int D = g->D;
    int64_t s = 0, pos = 0;
    CK(cudaSetDevice(g->device));
    while (s < f->n) {
        double t0 = now();
        int n = 0;
        int64_t frames = 0;
        while (s < f->n && n < g->max_pieces && frames < g->max_frames) {
            const hmmrt_real_seq *q = &f->seqs[s];
            if (q->length == 0 || (pos == 0 && !fits_float(g, q)) ||
                (g->rfb && q->length > g->max_frames)) { /* the CPU path's */
                s++;
                continue;
            }
            int64_t take = q->length - pos, room = g->max_frames - frames;
            if (g->rfb && take > room)
                break; /* real_fb_gpu.c's kernels take whole sequences: the next chunk */
            take = take < room ? take : room;
            g->row_h[n] = frames;
            g->len_h[n] = take;
            g->flags_h[n] = (pos == 0 ? RG_FIRST : 0) | (pos + take == q->length ? RG_LAST : 0);
            g->seq_h[n] = (int)s;
            const double *from = q->obs + (size_t)pos * D;
            const size_t k = (size_t)take * D;
            if (g->use_double)
                memcpy((double *)g->frames_h + (size_t)frames * D, from, k * sizeof(double));
            else {
                float *to = (float *)g->frames_h + (size_t)frames * D;
                for (size_t j = 0; j < k; j++)
                    to[j] = (float)from[j];
            }
            frames += take;
            pos += take;
            n++;
            if (pos == q->length) {
                s++;
                pos = 0;
            }
        }
        g->t_pack += now() - t0;
        if (n > 0 && run_chunk(g, n, frames, values, done, err, errlen) != 0)
            return -1;
    }
    return 0;
}

void hmmrt_real_gpu_report(void *ctx, FILE *out)
{
    const rg_gpu *g = ctx;
    const double device = g->t_in + g->t_emit + g->t_step + g->t_out;
    fprintf(out, "timing: real observations on GPU %d (%s) in %s: %s, then the "
                 "forward/viterbi recursion (runtime/gpu/real_kernel.cu)\n",
            g->device, g->device_name, g->use_double ? "double" : "float", g->product);
    fprintf(out, "timing:   %lld sequences, %lld frames in %lld chunks of at most %lld frames\n",
            (long long)g->sequences, (long long)g->frames, (long long)g->chunks,
            (long long)g->max_frames);
    fprintf(out, "timing:   packing %.3f s, to the device %.3f s, emission pass %.3f s, "
                 "recursion %.3f s, back %.3f s\n", g->t_pack, g->t_in, g->t_emit, g->t_step,
            g->t_out);
    if (g->t_emit > 0)
        fprintf(out, "timing:   emission pass %.1f GFLOPS (seed paper 003's count: 5 flops an "
                     "off-diagonal covariance element, 4 a diagonal one, 9 a log-add)\n",
                g->flops / g->t_emit * 1e-9);
    if (device + g->t_pack > 0)
        fprintf(out, "timing:   1/RTF at 100 frames/s, packing and transfers included: %.0f\n",
                (double)g->frames / 100.0 / (device + g->t_pack));
    if (g->rfb)
        hmmrt_rfb_report(g->rfb, out);
}
