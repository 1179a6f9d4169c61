/* real_gpu.c: the GPU path over real observations (hmmrt_gpu_program's
 * real_* entries): the models packed once (real_gpu_model.c) and copied to
 * the device, then each file's frames cut into chunks of bounded size,
 * packed into pinned memory as floats (doubles with --double) and run
 * through three streams, two chunks in flight: the copy in, the emission
 * pass of each model (the matrix product's mode: real_product.h), the
 * recursion of each call over the chunk's pieces (a sequence longer than a
 * chunk carries its column to the next) with the scores back; so the next
 * chunk's packing, copy and emission pass overlap this one's recursion.
 * A program that prints backward, posteriors or paths (real_fb_gpu.c) runs
 * its chunks one at a time: their kernels read the slot's table and rows
 * after its recursions, and the host waits for them before it goes on. */
#include "hmmrt_gpu.h"
#include "internal.h"
#include "real_gpu_model.h"
#include "real_read.h"
#include "real_gpu.h"
#include "real_fb_gpu.h" /* backward, posteriors, paths */
#include "gpu/real_math.cuh" /* HMMRT_RG_MAX_D */
#include "real_product.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The emission table of a chunk is kept under this many bytes (1 GiB; the
 * gaussians' table of the matrix product under GEMM_BYTES, at most a
 * quarter of the device's free memory), and a chunk under this many
 * frames; HMMRT_REAL_FRAMES (tests) sets the frames. Models of GEMM_FROM
 * gaussians or more take the matrix product in float, where cuBLAS loads,
 * in the mode real_product.h's bound picks; HMMRT_REAL_PRODUCT chooses for
 * every model: direct, gemm (the product, the bound's mode), or the product
 * in fp32, tf32x2 or tf32x3. */
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
    int gemm;          /* the emission pass as the matrix product */
    int mode, n_k;     /* its mode (real_math.cuh) and length (sections x padded features) */
    char why[200];     /* why that mode */
    float *w, *center; /* its weights (n_gauss x n_k) and centre (D) */
    int *feat_i, *feat_k;
} dev_model;

/* Events of a chunk, a model: the emission pass's start, features, product
 * and log-sums done; the recursion's start and end. */
enum { EV_E0, EV_E1, EV_E2, EV_E3, EV_R0, EV_R1, EV_MODEL };

/* A chunk in flight: its pinned and device buffers, events and pieces. */
typedef struct rg_slot {
    void *frames_h, *frames_d, *table_d;
    int64_t *row_h, *len_h, *row_d, *len_d;
    int *flags_h, *flags_d, *seq_h;
    double *score_h, *score_d;
    int n, busy;
    int64_t frames;
    cudaEvent_t c0, copied, back, *ev; /* ev: EV_MODEL a model */
} rg_slot;

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
    rg_slot slot[2];
    int next;       /* the slot the next chunk takes */
    void *carry_d, *work_d;
    float *phi_d, *gauss_d; /* the matrix product's features and gaussians' table */
    int max_gauss, n_feat, max_k;
    void *blas;             /* cuBLAS's handle, or NULL */
    char product[640];      /* which emission pass, in words */
    double *carry_off_d;
    cudaStream_t copy, emit, step; /* in, emission passes, recursions and scores back */
    double t_pack, t_in, t_feat, t_prod, t_mix, t_emit, t_step, t_out, t_wall, t_first;
    int64_t frames, sequences, chunks;
    double flops; /* of the emission passes, seed paper 003's count */
    hmmrt_rfb *rfb; /* real_fb_gpu.c's columns, or NULL: scores only */
} rg_gpu;

#define CK(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            snprintf(err, errlen, "the GPU path over real observations: %s failed: %s", #call, \
                     cudaGetErrorString(e_));                                                  \
            return -1;                                                                         \
        }                                                                                      \
    } while (0)

int hmmrt_rg_upload_reals(void **to, const double *v, int64_t n, int use_double, char *err,
                          size_t errlen)
{
    size_t bytes = (size_t)(n > 0 ? n : 1) * (use_double ? sizeof(double) : sizeof(float));
    void *h = malloc(bytes);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int64_t i = 0; i < n; i++)
        if (use_double)
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

int hmmrt_rg_upload(void **to, const void *v, size_t bytes, char *err, size_t errlen)
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
    if (hmmrt_rg_upload_reals(&d->par, m->par, m->n_par, g->use_double, err, errlen) ||
        hmmrt_rg_upload_reals(&d->log_norm, m->log_norm, m->n_gauss, g->use_double, err, errlen) ||
        hmmrt_rg_upload_reals(&d->part_logw, m->part_logw, m->n_parts, g->use_double, err, errlen) ||
        hmmrt_rg_upload_reals(&d->in_logw, m->in_logw, m->n_in, g->use_double, err, errlen) ||
        hmmrt_rg_upload_reals(&d->end_logw, m->end_logw, m->n_end, g->use_double, err, errlen) ||
        hmmrt_rg_upload((void **)&d->par_at, m->par_at, (size_t)m->n_gauss * sizeof(int64_t), err, errlen) ||
        hmmrt_rg_upload((void **)&d->diagonal, m->diagonal, (size_t)m->n_gauss * I, err, errlen) ||
        hmmrt_rg_upload((void **)&d->part_start, m->part_start, ((size_t)m->n_dens + 1) * I, err, errlen) ||
        hmmrt_rg_upload((void **)&d->part_gauss, m->part_gauss, (size_t)m->n_parts * I, err, errlen) ||
        hmmrt_rg_upload((void **)&d->in_start, m->in_start, ((size_t)m->n_states + 1) * I, err, errlen) ||
        hmmrt_rg_upload((void **)&d->in_from, m->in_from, (size_t)m->n_in * I, err, errlen) ||
        hmmrt_rg_upload((void **)&d->in_em, m->in_em, (size_t)m->n_in * I, err, errlen) ||
        hmmrt_rg_upload((void **)&d->end_from, m->end_from, (size_t)m->n_end * I, err, errlen))
        return -1;
    return 0;
}

/* The matrix product's weights (in the sections of d's mode: forced, or
 * -1 for the bound's choice), centre and feature indices of d. */
static int upload_gemm(dev_model *d, int forced, char *err, size_t errlen)
{
    const hmmrt_rg_model *m = &d->m;
    const int F = hmmrt_rg_n_features(m->D);
    double *w = malloc((size_t)m->n_gauss * F * sizeof *w), center[HMMRT_RG_MAX_D];
    float *wf = NULL, cf[HMMRT_RG_MAX_D];
    int *fi = malloc((size_t)2 * F * sizeof *fi);
    int failed = !w || !fi || hmmrt_rg_gemm_weights(m, center, w) != 0;
    if (!failed) {
        char bound[160];
        d->mode = hmmrt_rg_product_choose(m, center, w, bound, sizeof bound);
        if (forced >= 0) {
            d->mode = forced;
            snprintf(d->why, sizeof d->why, "HMMRT_REAL_PRODUCT=%s; %s",
                     hmmrt_rg_mode_name(forced), bound);
        } else {
            snprintf(d->why, sizeof d->why, "%s", bound);
        }
        d->n_k = hmmrt_rg_sections(d->mode) * hmmrt_rg_padded(F);
        wf = malloc((size_t)m->n_gauss * d->n_k * sizeof *wf);
        failed = !wf;
    }
    if (!failed) {
        hmmrt_rg_weights_split(d->mode, m->n_gauss, F, w, wf);
        for (int k = 0; k < m->D; k++)
            cf[k] = (float)center[k];
        hmmrt_rg_feature_index(m->D, fi, fi + F);
        failed = hmmrt_rg_upload((void **)&d->w, wf, (size_t)m->n_gauss * d->n_k * sizeof *wf, err, errlen) ||
                 hmmrt_rg_upload((void **)&d->center, cf, (size_t)m->D * sizeof *cf, err, errlen) ||
                 hmmrt_rg_upload((void **)&d->feat_i, fi, (size_t)F * sizeof *fi, err, errlen) ||
                 hmmrt_rg_upload((void **)&d->feat_k, fi + F, (size_t)F * sizeof *fi, err, errlen);
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

static void free_slot(rg_slot *b, int n_models)
{
    void *dev[] = {b->frames_d, b->table_d, b->row_d, b->len_d, b->flags_d, b->score_d};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            cudaFree(dev[i]);
    void *host[] = {b->frames_h, b->row_h, b->len_h, b->flags_h, b->score_h};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        if (host[i])
            cudaFreeHost(host[i]);
    free(b->seq_h);
    cudaEvent_t ev[] = {b->c0, b->copied, b->back};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++)
        if (ev[i])
            cudaEventDestroy(ev[i]);
    if (b->ev)
        for (int i = 0; i < n_models * EV_MODEL; i++)
            if (b->ev[i])
                cudaEventDestroy(b->ev[i]);
    free(b->ev);
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
    for (int k = 0; k < 2; k++)
        free_slot(&g->slot[k], g->prog->n_models);
    void *dev[] = {g->carry_d, g->work_d, g->carry_off_d, g->phi_d, g->gauss_d};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            cudaFree(dev[i]);
    hmmrt_rfb_close(g->rfb);
    cudaStream_t st[] = {g->copy, g->emit, g->step};
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
        if (st[i])
            cudaStreamDestroy(st[i]);
    free(g);
}

/* A slot's buffers and events (F frames, P pieces). */
static int open_slot(rg_gpu *g, rg_slot *b, char *err, size_t errlen)
{
    const size_t P = (size_t)g->max_pieces, F = (size_t)g->max_frames;
    const int n_calls = g->gp->n_real_calls, n_models = g->prog->n_models;
    CK(cudaMallocHost(&b->frames_h, F * g->D * g->rs));
    CK(cudaMallocHost((void **)&b->row_h, P * sizeof(int64_t)));
    CK(cudaMallocHost((void **)&b->len_h, P * sizeof(int64_t)));
    CK(cudaMallocHost((void **)&b->flags_h, P * sizeof(int)));
    CK(cudaMallocHost((void **)&b->score_h, P * n_calls * sizeof(double)));
    CK(cudaMalloc(&b->frames_d, F * g->D * g->rs));
    CK(cudaMalloc(&b->table_d, F * (size_t)g->max_dens * g->rs));
    CK(cudaMalloc((void **)&b->row_d, P * sizeof(int64_t)));
    CK(cudaMalloc((void **)&b->len_d, P * sizeof(int64_t)));
    CK(cudaMalloc((void **)&b->flags_d, P * sizeof(int)));
    CK(cudaMalloc((void **)&b->score_d, P * n_calls * sizeof(double)));
    b->seq_h = malloc(P * sizeof *b->seq_h);
    b->ev = calloc((size_t)(n_models > 0 ? n_models : 1) * EV_MODEL, sizeof *b->ev);
    if (!b->seq_h || !b->ev) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    CK(cudaEventCreate(&b->c0));
    CK(cudaEventCreate(&b->copied));
    CK(cudaEventCreate(&b->back));
    for (int i = 0; i < n_models * EV_MODEL; i++)
        CK(cudaEventCreate(&b->ev[i]));
    return 0;
}

/* HMMRT_REAL_PRODUCT's mode for the product (-1: the bound's), or -2 for
 * direct, -3 for none given; -4: not a name it takes. */
static int asked_product(const char *asked)
{
    if (!asked || !*asked)
        return -3;
    static const struct { const char *name; int mode; } names[] = {
        {"direct", -2}, {"gemm", -1}, {"fp32", HMMRT_RG_FP32}, {"tf32x2", HMMRT_RG_TF32X2},
        {"tf32x3", HMMRT_RG_TF32X3}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(asked, names[k].name) == 0)
            return names[k].mode;
    return -4;
}

/* Packs the models of the calls, sizes and allocates the buffers. */
static int open_buffers(rg_gpu *g, char *err, size_t errlen)
{
    const hmmrt_gpu_program *gp = g->gp;
    const char *asked = getenv("HMMRT_REAL_PRODUCT");
    const int want = asked_product(asked);
    if (want == -4) {
        snprintf(err, errlen, "HMMRT_REAL_PRODUCT is %s: direct, gemm (the product in the mode "
                              "its error bound picks), fp32, tf32x2 or tf32x3", asked);
        return -1;
    }
    int gemm_models = 0;
    const char *why = "";
    char modes[200] = "";
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
        d->gemm = !g->use_double && (want != -3 ? want != -2 : d->m.n_gauss >= GEMM_FROM);
        if (d->gemm && !g->blas && !(g->blas = hmmrt_cublas_handle()))
            d->gemm = 0; /* no cuBLAS: the direct pass */
        if (d->gemm) {
            if (upload_gemm(d, want >= 0 ? want : -1, err, errlen))
                return -1;
            g->max_gauss = d->m.n_gauss > g->max_gauss ? d->m.n_gauss : g->max_gauss;
            g->max_k = d->n_k > g->max_k ? d->n_k : g->max_k;
            if (!gemm_models++) {
                why = d->why;
                snprintf(modes, sizeof modes, "%s",
                         d->mode == HMMRT_RG_FP32 ? "FP32 on the CUDA cores"
                         : d->mode == HMMRT_RG_TF32X2
                             ? "TF32 x 2 on the tensor cores: features in TF32 times the weights "
                               "split hi + lo"
                             : "TF32 x 3 on the tensor cores: x_hi w_hi + x_hi w_lo + x_lo w_hi");
            }
        }
    }
    g->n_feat = hmmrt_rg_n_features(g->D);
    if (gemm_models)
        snprintf(g->product, sizeof g->product, "the emission pass as a matrix product of "
                 "expanded features (cuBLAS), %s%s (%s)", modes,
                 gemm_models > 1 ? ", the first model's" : "", why);
    else
        snprintf(g->product, sizeof g->product, "%s", g->use_double || want == -2 || !g->max_dens
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
    /* the recursions first where both wait for the GPU's cores: each is a
     * long chain of steps on a few blocks, the product many short blocks */
    int least = 0, greatest = 0;
    CK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CK(cudaStreamCreate(&g->copy));
    CK(cudaStreamCreate(&g->emit));
    CK(cudaStreamCreateWithPriority(&g->step, cudaStreamDefault, greatest));
    for (int k = 0; k < 2; k++)
        if (open_slot(g, &g->slot[k], err, errlen))
            return -1;
    CK(cudaMalloc(&g->carry_d, 2 * (size_t)n_calls * g->max_states * g->rs));
    CK(cudaMalloc((void **)&g->carry_off_d, 2 * (size_t)n_calls * sizeof(double)));
    if (cols > SHARED_BYTES)
        CK(cudaMalloc(&g->work_d, P * cols));
    if (g->max_gauss > 0) {
        CK(cudaMalloc((void **)&g->phi_d, F * g->max_k * sizeof(float)));
        CK(cudaMalloc((void **)&g->gauss_d, F * g->max_gauss * sizeof(float)));
    }
    if (hmmrt_rfb_wanted(g->prog) &&
        !(g->rfb = hmmrt_rfb_open(g->prog, g->use_double, g->max_frames, g->max_pieces, err, errlen)))
        return -1;
    return 0;
}

void *hmmrt_real_gpu_open(const hmmrt_program *prog, int device, int use_double, char *err,
                          size_t errlen)
{
    /* Float posteriors over real observations measured up to 3e-3 from the
     * CPU path's on 20,000-observation sequences (tests/gpu/real-check's
     * all-long, H200, 2026-11-26): until that is found, backward, posteriors
     * and paths run on the GPU in double only; HMMRT_REAL_FB_FLOAT=on tries
     * float. */
    const char *fb_float = getenv("HMMRT_REAL_FB_FLOAT");
    if (!use_double && hmmrt_rfb_wanted(prog) && !(fb_float && strcmp(fb_float, "on") == 0)) {
        snprintf(err, errlen, "backward, posteriors and paths over real observations run on the "
                              "GPU with --double only (in float their posteriors are not yet "
                              "within 1e-5 of the CPU path's on long sequences)");
        return NULL;
    }
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

/* Model mi's emission pass over slot b's frames into its table, on the
 * emission stream between its events. */
static int emit_model(rg_gpu *g, rg_slot *b, int mi, char *err, size_t errlen)
{
    const dev_model *d = &g->models[mi];
    cudaEvent_t *ev = b->ev + (size_t)mi * EV_MODEL;
    CK(cudaEventRecord(ev[EV_E0], g->emit));
    if (d->gemm) {
        hmmrt_rg_gemm_job gj = {
            .D = d->m.D, .n_feat = g->n_feat, .n_pad = hmmrt_rg_padded(g->n_feat), .n_k = d->n_k,
            .mode = d->mode, .n_gauss = d->m.n_gauss, .n_dens = d->m.n_dens, .n_frames = b->frames,
            .frames = b->frames_d, .center = d->center, .feat_i = d->feat_i, .feat_k = d->feat_k,
            .phi = g->phi_d, .gauss = g->gauss_d, .part_start = d->part_start,
            .part_gauss = d->part_gauss, .part_logw = d->part_logw, .table = b->table_d,
            .stream = g->emit};
        CK((cudaError_t)hmmrt_rg_features_launch(&gj));
        CK(cudaEventRecord(ev[EV_E1], g->emit));
        int st = d->mode == HMMRT_RG_FP32
                     ? hmmrt_cublas_sgemm_tn(g->blas, g->emit, d->m.n_gauss, (int)b->frames, d->n_k,
                                             d->w, g->phi_d, g->gauss_d)
                     : hmmrt_cublas_tf32_tn(g->blas, g->emit, d->m.n_gauss, (int)b->frames, d->n_k,
                                            d->w, g->phi_d, g->gauss_d);
        if (st != 0) {
            snprintf(err, errlen, "the GPU path over real observations: cuBLAS's product "
                                  "failed (status %d)", st);
            return -1;
        }
        CK(cudaEventRecord(ev[EV_E2], g->emit));
        CK((cudaError_t)hmmrt_rg_mix_launch(&gj));
    } else {
        hmmrt_rg_emit_job ej = {
            .use_double = g->use_double, .D = d->m.D, .n_dens = d->m.n_dens, .n_frames = b->frames,
            .frames = b->frames_d, .par = d->par, .par_at = d->par_at, .diagonal = d->diagonal,
            .log_norm = d->log_norm, .part_start = d->part_start, .part_gauss = d->part_gauss,
            .part_logw = d->part_logw, .table = b->table_d, .stream = g->emit};
        CK(cudaEventRecord(ev[EV_E1], g->emit));
        CK((cudaError_t)hmmrt_rg_emit_launch(&ej));
        CK(cudaEventRecord(ev[EV_E2], g->emit));
    }
    CK(cudaEventRecord(ev[EV_E3], g->emit));
    return 0;
}

/* Slot b's chunk (packed: n pieces, frames frames) into the streams: the
 * copy in; per model its emission pass (after the copy, and after the
 * model before's recursions: they share the table), then its calls'
 * recursions (after its emission pass); the scores back. Nothing waits
 * here (but real_fb_gpu.c's kernels, which write their columns into values
 * and wait for themselves): hmmrt_real_gpu_score harvests the slot before
 * it packs it again. */
static int issue_chunk(rg_gpu *g, rg_slot *b, hmmrt_value *values, char *err, size_t errlen)
{
    const hmmrt_gpu_program *gp = g->gp;
    const int n = b->n;
    CK(cudaEventRecord(b->c0, g->copy));
    CK(cudaMemcpyAsync(b->frames_d, b->frames_h, (size_t)b->frames * g->D * g->rs,
                       cudaMemcpyHostToDevice, g->copy));
    CK(cudaMemcpyAsync(b->row_d, b->row_h, (size_t)n * sizeof(int64_t), cudaMemcpyHostToDevice,
                       g->copy));
    CK(cudaMemcpyAsync(b->len_d, b->len_h, (size_t)n * sizeof(int64_t), cudaMemcpyHostToDevice,
                       g->copy));
    CK(cudaMemcpyAsync(b->flags_d, b->flags_h, (size_t)n * sizeof(int), cudaMemcpyHostToDevice,
                       g->copy));
    CK(cudaEventRecord(b->copied, g->copy));
    CK(cudaStreamWaitEvent(g->emit, b->copied, 0));
    CK(cudaStreamWaitEvent(g->step, b->copied, 0));
    int before = -1; /* the model run before in this chunk */
    for (int mi = 0; mi < g->prog->n_models; mi++) {
        const dev_model *d = &g->models[mi];
        int used = 0;
        for (int c = 0; c < gp->n_real_calls; c++)
            used |= gp->real_calls[c].model == mi;
        if (!used)
            continue;
        if (before >= 0)
            CK(cudaStreamWaitEvent(g->emit, b->ev[(size_t)before * EV_MODEL + EV_R1], 0));
        if (emit_model(g, b, mi, err, errlen))
            return -1;
        cudaEvent_t *ev = b->ev + (size_t)mi * EV_MODEL;
        g->flops += d->m.flops_per_frame * (double)b->frames;
        CK(cudaStreamWaitEvent(g->step, ev[EV_E3], 0));
        CK(cudaEventRecord(ev[EV_R0], g->step));
        for (int c = 0; c < gp->n_real_calls; c++) {
            if (gp->real_calls[c].model != mi || gp->real_calls[c].what != HMMRT_RG_SCORE)
                continue; /* real_fb_gpu.c's */
            int block = (d->m.n_states + 31) / 32 * 32;
            block = block < 1024 ? block : 1024;
            hmmrt_rg_step_job sj = {
                .use_double = g->use_double, .viterbi = gp->real_calls[c].viterbi,
                .n_states = d->m.n_states, .start = d->m.start, .n_dens = d->m.n_dens,
                .n_pieces = n, .row = b->row_d, .len = b->len_d, .flags = b->flags_d,
                .in_start = d->in_start, .in_from = d->in_from, .in_em = d->in_em,
                .in_logw = d->in_logw, .n_end = d->m.n_end, .end_from = d->end_from,
                .end_logw = d->end_logw, .table = b->table_d,
                .carry = carry(g, c, g->carry_side), .carry_offset = g->carry_off_d +
                2 * c + g->carry_side, .carry_out = carry(g, c, !g->carry_side),
                .carry_offset_out = g->carry_off_d + 2 * c + !g->carry_side,
                .score = b->score_d + (size_t)c * g->max_pieces,
                .work = g->work_d, .block = block, .stream = g->step};
            CK((cudaError_t)hmmrt_rg_step_launch(&sj));
        }
        CK(cudaEventRecord(ev[EV_R1], g->step));
        /* backward, posteriors and paths (real_fb_gpu.c) over this slot's
         * table, rows and lengths, on the recursions' stream after the
         * emission pass; it waits for its kernels and copies before it
         * returns, so neither the next model's emission pass into the table
         * nor the next chunk packed into this slot can race them */
        if (g->rfb && hmmrt_rfb_chunk(g->rfb, mi, &d->m, b->table_d, n, b->row_d, b->len_d,
                                      b->flags_d, b->row_h, b->len_h, b->seq_h, values, g->step,
                                      err, errlen) != 0)
            return -1;
        before = mi;
    }
    g->carry_side = !g->carry_side;
    for (int c = 0; c < gp->n_real_calls; c++)
        CK(cudaMemcpyAsync(b->score_h + (size_t)c * g->max_pieces,
                           b->score_d + (size_t)c * g->max_pieces, (size_t)n * sizeof(double),
                           cudaMemcpyDeviceToHost, g->step));
    CK(cudaEventRecord(b->back, g->step));
    b->busy = 1;
    return 0;
}

/* Seconds between two events that have happened (0 where one did not). */
static double between(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return 1e-3 * ms;
}

/* Waits for slot b's chunk, puts its scores into values, done[seq] for the
 * sequences that ended in it, and adds its stages' times. */
static int harvest(rg_gpu *g, rg_slot *b, hmmrt_value *values, unsigned char *done, char *err,
                   size_t errlen)
{
    const hmmrt_gpu_program *gp = g->gp;
    if (!b->busy)
        return 0;
    b->busy = 0;
    CK(cudaEventSynchronize(b->back));
    g->t_in += between(b->c0, b->copied);
    int last = -1;
    for (int mi = 0; mi < g->prog->n_models; mi++) {
        int used = 0;
        for (int c = 0; c < gp->n_real_calls; c++)
            used |= gp->real_calls[c].model == mi;
        if (!used)
            continue;
        const cudaEvent_t *ev = b->ev + (size_t)mi * EV_MODEL;
        g->t_feat += between(ev[EV_E0], ev[EV_E1]);
        g->t_prod += between(ev[EV_E1], ev[EV_E2]);
        g->t_mix += between(ev[EV_E2], ev[EV_E3]);
        g->t_emit += between(ev[EV_E0], ev[EV_E3]);
        g->t_step += between(ev[EV_R0], ev[EV_R1]);
        last = mi;
    }
    if (last >= 0) /* after the last model's recursions: the scores back */
        g->t_out += between(b->ev[(size_t)last * EV_MODEL + EV_R1], b->back);
    const int n_columns = g->prog->n_columns;
    for (int p = 0; p < b->n; p++) {
        if (!(b->flags_h[p] & RG_LAST))
            continue;
        for (int c = 0; c < gp->n_real_calls; c++)
            if (gp->real_calls[c].what == HMMRT_RG_SCORE) /* the others: real_fb_gpu.c */
                values[(size_t)b->seq_h[p] * n_columns + gp->real_calls[c].column].score =
                    b->score_h[(size_t)c * g->max_pieces + p];
        done[b->seq_h[p]] = 1;
        g->sequences++;
    }
    g->frames += b->frames;
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
    const double w0 = hmmrt_seconds();
    while (s < f->n) {
        rg_slot *b = &g->slot[g->next];
        /* the chunk before the last one leaves this slot: its scores first */
        if (harvest(g, b, values, done, err, errlen))
            return -1;
        double t0 = hmmrt_seconds();
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
            b->row_h[n] = frames;
            b->len_h[n] = take;
            b->flags_h[n] = (pos == 0 ? RG_FIRST : 0) | (pos + take == q->length ? RG_LAST : 0);
            b->seq_h[n] = (int)s;
            const double *from = q->obs + (size_t)pos * D;
            const size_t k = (size_t)take * D;
            if (g->use_double)
                memcpy((double *)b->frames_h + (size_t)frames * D, from, k * sizeof(double));
            else {
                float *to = (float *)b->frames_h + (size_t)frames * D;
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
        g->t_pack += hmmrt_seconds() - t0;
        b->n = n;
        b->frames = frames;
        if (n > 0) {
            if (issue_chunk(g, b, values, err, errlen))
                return -1;
            g->next = !g->next;
        }
    }
    /* the older chunk first: both are done before the scores are read */
    for (int k = 0; k < 2; k++)
        if (harvest(g, &g->slot[(g->next + k) % 2], values, done, err, errlen))
            return -1;
    g->t_wall += hmmrt_seconds() - w0;
    return 0;
}

void hmmrt_real_gpu_report(void *ctx, FILE *out)
{
    const rg_gpu *g = ctx;
    fprintf(out, "timing: real observations on GPU %d (%s) in %s: %s, then the "
                 "forward/viterbi recursion (runtime/gpu/real_kernel.cu)\n",
            g->device, g->device_name, g->use_double ? "double" : "float", g->product);
    fprintf(out, "timing:   %lld sequences, %lld frames in %lld chunks of at most %lld frames, "
                 "%s\n",
            (long long)g->sequences, (long long)g->frames, (long long)g->chunks,
            (long long)g->max_frames,
            g->rfb ? "one at a time (backward, posteriors or paths: each chunk's kernels end "
                     "before the next chunk is packed)"
                   : "two in flight (copy, emission pass and recursion streams)");
    fprintf(out, "timing:   wall %.3f s: packing %.3f s on the host; on the GPU (overlapping "
                 "one another): to the device %.3f s, emission pass %.3f s, recursion %.3f s, "
                 "back %.3f s\n", g->t_wall, g->t_pack, g->t_in, g->t_emit, g->t_step, g->t_out);
    if (g->max_gauss > 0)
        fprintf(out, "timing:   the emission pass's matrix product: features %.3f s, product "
                     "%.3f s, log-sums over the mixtures %.3f s\n", g->t_feat, g->t_prod, g->t_mix);
    if (g->t_emit > 0)
        fprintf(out, "timing:   emission pass %.1f GFLOPS (seed paper 003's count: 5 flops an "
                     "off-diagonal covariance element, 4 a diagonal one, 9 a log-add)\n",
                g->flops / g->t_emit * 1e-9);
    if (g->t_wall > 0)
        fprintf(out, "timing:   1/RTF at 100 frames/s, packing and transfers included: %.0f\n",
                (double)g->frames / 100.0 / g->t_wall);
    if (g->rfb)
        hmmrt_rfb_report(g->rfb, out);
}
