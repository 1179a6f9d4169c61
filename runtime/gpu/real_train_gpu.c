/* real_train_gpu.c: --train's E-step over real observations on the GPU, for
 * train.c (through hmmrt_gpu_program's real_train_* entries). Each
 * iteration packs the model's current numbers (real_gpu_model.c), and for
 * each chunk of whole sequences runs the emission pass (real_kernel.cu, in
 * float), forward-backward with the moves' and densities' expected uses
 * (real_fb_kernel.cu, counts in double) and the gaussians' sums
 * (real_train_kernel.cu, in double); train_real.c's M-step then fits them
 * on the host as the CPU path does. */
#include "hmmrt_gpu.h"
#include "internal.h"
#include "real_fb_gpu.h"
#include "real_fb_steps.h"
#include "real_gpu.h"
#include "real_gpu_model.h"
#include "real_train_gpu.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A chunk's device memory (frames, the emission table, forward's columns,
 * the uses) is kept under this many bytes. */
#define CHUNK_BYTES ((size_t)1 << 30)
#define MOST_FRAMES ((int64_t)1 << 20)
#define MAX_PARTS 64 /* real_train_kernel.cu's RT_MAX_PARTS */

typedef struct rt_gpu {
    int device, D, n_states, n_dens, n_parts, n_gauss, n_moves;
    int64_t n_seqs, max_frames;
    const double *const *obs;
    const int64_t *length;
    int64_t n_chunks, *chunk_start; /* chunk c: sequences chunk_start[c] .. [c + 1] - 1 */
    int max_pieces;
    cudaStream_t stream;
    /* per chunk, on the device */
    float *frames_f;
    double *frames_d, *uses, *pw, *a_off, *fscore, *bscore;
    float *table, *alpha;
    int64_t *row_d, *len_d;
    int *flags_d;
    float *frames_hf;
    double *frames_hd;
    int64_t *row_h, *len_h;
    int *flags_h;
    double *fscore_h;
    /* the sums */
    double *move_counts, *stats, *counts;
    double *gauss_h, *parts_h;
    int64_t *gauss_at;
    int *part_start;
    char describe[256];
} rt_gpu;

#define CK(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            snprintf(err, errlen, "training over real observations on the GPU: %s failed: %s", \
                     #call, cudaGetErrorString(e_));                                           \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)

void hmmrt_real_train_close(void *ctx)
{
    rt_gpu *g = ctx;
    if (!g)
        return;
    void *dev[] = {g->frames_f, g->frames_d, g->uses, g->pw, g->a_off, g->fscore, g->bscore,
                   g->table, g->alpha, g->row_d, g->len_d, g->flags_d, g->move_counts,
                   g->stats, g->counts};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            cudaFree(dev[i]);
    void *host[] = {g->frames_hf, g->frames_hd, g->row_h, g->len_h, g->flags_h, g->fscore_h};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        if (host[i])
            cudaFreeHost(host[i]);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    free(g->chunk_start), free(g->gauss_h), free(g->parts_h), free(g->gauss_at);
    free(g->part_start);
    free(g);
}

/* Entries of gaussian j's sums: W, z, then z_i z_k (or z_i^2). */
static int64_t entries(const hmmrt_rg_model *m, int j)
{
    return 1 + m->D + (m->diagonal[j] ? m->D : (int64_t)m->D * (m->D + 1) / 2);
}

void *hmmrt_real_train_open(const hmmrt_model *m, int64_t n_seqs, const double *const *obs,
                            const int64_t *length, int device, char *err, size_t errlen)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        snprintf(err, errlen, "no CUDA device found");
        return NULL;
    }
    if (device < 0) /* under mpirun: each rank its own (mpi_run.c) */
        device = (-1 - device) % count;
    if (device >= count || cudaSetDevice(device) != cudaSuccess) {
        snprintf(err, errlen, "there is no GPU %d (%d found)", device, count);
        return NULL;
    }
    hmmrt_rg_model rg;
    if (hmmrt_rg_model_make(m, &rg, err, errlen) != 0)
        return NULL;
    rt_gpu *g = calloc(1, sizeof *g);
    if (!g) {
        hmmrt_rg_model_free(&rg);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    g->device = device, g->D = rg.D, g->n_states = rg.n_states, g->n_dens = rg.n_dens;
    g->n_parts = rg.n_parts, g->n_gauss = rg.n_gauss, g->n_moves = m->n_moves;
    g->n_seqs = n_seqs, g->obs = obs, g->length = length;
    const int max_parts = rg.max_parts;
    hmmrt_rg_model_free(&rg);
    if (max_parts > MAX_PARTS) {
        snprintf(err, errlen, "a mixture of %d parts, more than its %d", max_parts, MAX_PARTS);
        free(g);
        return NULL;
    }
    const size_t per = (size_t)g->n_states * sizeof(float) + 3 * sizeof(double) +
                       (size_t)g->n_dens * (sizeof(float) + sizeof(double)) +
                       (size_t)g->n_parts * sizeof(double) +
                       (size_t)g->D * (2 * sizeof(float) + 2 * sizeof(double)) + 32;
    int64_t frames = (int64_t)(CHUNK_BYTES / per);
    frames = frames < MOST_FRAMES ? frames : MOST_FRAMES;
    const char *env = getenv("HMMRT_REAL_FRAMES"); /* tests: small chunks */
    if (env && atol(env) > 0)
        frames = atol(env);
    g->max_frames = frames;
    g->chunk_start = malloc(((size_t)n_seqs + 2) * sizeof *g->chunk_start);
    if (!g->chunk_start) {
        snprintf(err, errlen, "out of memory");
        free(g);
        return NULL;
    }
    /* chunks of whole sequences (those of no observation are the host's) */
    int64_t used = 0, pieces = 0;
    g->chunk_start[0] = 0;
    for (int64_t i = 0; i < n_seqs; i++) {
        if (length[i] > frames) {
            snprintf(err, errlen, "sequence %lld has %lld observations, more than a chunk's "
                     "%lld", (long long)i + 1, (long long)length[i], (long long)frames);
            hmmrt_real_train_close(g);
            return NULL;
        }
        if (used + length[i] > frames) {
            g->chunk_start[++g->n_chunks] = i;
            used = pieces = 0;
        }
        used += length[i];
        pieces++;
        g->max_pieces = pieces > g->max_pieces ? (int)pieces : g->max_pieces;
    }
    g->chunk_start[++g->n_chunks] = n_seqs;
    const size_t F = (size_t)frames, P = (size_t)(g->max_pieces > 0 ? g->max_pieces : 1);
    const size_t D = (size_t)g->D;
    CK(cudaStreamCreate(&g->stream));
    CK(cudaMalloc((void **)&g->frames_f, F * D * sizeof(float)));
    CK(cudaMalloc((void **)&g->frames_d, F * D * sizeof(double)));
    CK(cudaMalloc((void **)&g->uses, F * g->n_dens * sizeof(double)));
    CK(cudaMalloc((void **)&g->pw, F * (g->n_parts + 1) * sizeof(double)));
    CK(cudaMalloc((void **)&g->a_off, F * sizeof(double)));
    CK(cudaMalloc((void **)&g->table, F * g->n_dens * sizeof(float)));
    CK(cudaMalloc((void **)&g->alpha, F * g->n_states * sizeof(float)));
    CK(cudaMalloc((void **)&g->fscore, P * sizeof(double)));
    CK(cudaMalloc((void **)&g->bscore, P * sizeof(double)));
    CK(cudaMalloc((void **)&g->row_d, P * sizeof(int64_t)));
    CK(cudaMalloc((void **)&g->len_d, P * sizeof(int64_t)));
    CK(cudaMalloc((void **)&g->flags_d, P * sizeof(int)));
    CK(cudaMallocHost((void **)&g->frames_hf, F * D * sizeof(float)));
    CK(cudaMallocHost((void **)&g->frames_hd, F * D * sizeof(double)));
    CK(cudaMallocHost((void **)&g->row_h, P * sizeof(int64_t)));
    CK(cudaMallocHost((void **)&g->len_h, P * sizeof(int64_t)));
    CK(cudaMallocHost((void **)&g->flags_h, P * sizeof(int)));
    CK(cudaMallocHost((void **)&g->fscore_h, P * sizeof(double)));
    CK(cudaMalloc((void **)&g->move_counts, ((size_t)g->n_moves + 1) * sizeof(double)));
    CK(cudaMalloc((void **)&g->counts, ((size_t)g->n_parts + 1) * sizeof(double)));
    snprintf(g->describe, sizeof g->describe,
             "real observations: the emission pass and forward-backward in float, the moves' "
             "uses and the gaussians' sums in double (runtime/gpu/real_train_kernel.cu), %lld "
             "chunk%s of at most %lld frames", (long long)g->n_chunks,
             g->n_chunks == 1 ? "" : "s", (long long)frames);
    return g;
fail:
    hmmrt_real_train_close(g);
    return NULL;
}

void hmmrt_real_train_describe(void *ctx, char *buf, size_t len)
{
    snprintf(buf, len, "%s", ((rt_gpu *)ctx)->describe);
}

/* The model's arrays on the device for one iteration (freed by free_all). */
typedef struct iteration {
    void *p[40];
    int n;
} iteration;

static void *put(iteration *it, const void *v, size_t bytes, int *failed)
{
    void *d = NULL;
    if (*failed || cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess) {
        *failed = 1;
        return NULL;
    }
    it->p[it->n++] = d;
    if (v && bytes && cudaMemcpy(d, v, bytes, cudaMemcpyHostToDevice) != cudaSuccess)
        *failed = 1;
    return d;
}

static void *put_float(iteration *it, const double *v, int64_t n, int *failed)
{
    float *h = malloc((size_t)(n > 0 ? n : 1) * sizeof *h);
    if (!h) {
        *failed = 1;
        return NULL;
    }
    for (int64_t i = 0; i < n; i++)
        h[i] = (float)v[i];
    void *d = put(it, h, (size_t)n * sizeof *h, failed);
    free(h);
    return d;
}

static void free_all(iteration *it)
{
    for (int i = 0; i < it->n; i++)
        cudaFree(it->p[i]);
    it->n = 0;
}

/* A sequence of no observation: the start's moves into the end. */
static double empty_sequence(const hmmrt_model *m, double *move_counts)
{
    double total = 0;
    for (int k = 0; k < m->n_moves; k++)
        if (m->moves[k].from == m->start && m->moves[k].to == m->end && m->moves[k].weight > 0)
            total += m->moves[k].weight;
    if (!(total > 0))
        return -INFINITY;
    for (int k = 0; k < m->n_moves; k++)
        if (m->moves[k].from == m->start && m->moves[k].to == m->end && m->moves[k].weight > 0)
            move_counts[k] += m->moves[k].weight / total;
    return log(total);
}

int hmmrt_real_train_expect(void *ctx, const hmmrt_model *m, double *lnp, double *move_counts,
                            double **gauss, int64_t **gauss_at, double **parts, int **part_start,
                            char *err, size_t errlen)
{
    rt_gpu *g = ctx;
    hmmrt_rg_model rg;
    hmmrt_rfb_moves mv = {0};
    iteration it = {.n = 0};
    int failed = 0, status = -1;
    int *in_move = NULL, *end_move = NULL, *fill = NULL, *gps = NULL, *gp = NULL, *tri = NULL;
    double *mc = NULL;
    if (cudaSetDevice(g->device) != cudaSuccess) {
        snprintf(err, errlen, "GPU %d could not be used", g->device);
        return -1;
    }
    if (hmmrt_rg_model_make(m, &rg, err, errlen) != 0)
        return -1;
    if (rg.n_gauss != g->n_gauss || rg.n_parts != g->n_parts || m->n_moves != g->n_moves) {
        snprintf(err, errlen, "the model's shape changed between iterations (an internal error)");
        hmmrt_rg_model_free(&rg);
        return -1;
    }
    const int n = rg.n_states, D = rg.D;
    /* each emitting move's and end move's index among the model's, in
     * real_gpu_model.c's packing order */
    in_move = malloc(((size_t)rg.n_in + 1) * sizeof *in_move);
    end_move = malloc(((size_t)rg.n_end + 1) * sizeof *end_move);
    fill = calloc((size_t)n + 1, sizeof *fill);
    gps = calloc((size_t)rg.n_gauss + 2, sizeof *gps);
    gp = malloc(((size_t)rg.n_parts + 1) * sizeof *gp);
    tri = malloc(((size_t)D * (D + 1) + 2) * sizeof *tri);
    mc = malloc(((size_t)g->n_moves + 1) * sizeof *mc);
    free(g->gauss_at);
    g->gauss_at = malloc(((size_t)rg.n_gauss + 1) * sizeof *g->gauss_at);
    free(g->part_start);
    g->part_start = malloc(((size_t)rg.n_dens + 1) * sizeof *g->part_start);
    if (!in_move || !end_move || !fill || !gps || !gp || !tri || !mc || !g->gauss_at ||
        !g->part_start || hmmrt_rfb_moves_make(&rg, &mv) != 0) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (int k = 0, ends = 0; k < m->n_moves; k++) {
        const hmmrt_model_move *x = &m->moves[k];
        if (!(x->weight > 0))
            continue;
        if (x->emission < 0)
            end_move[ends++] = k;
        else
            in_move[rg.in_start[x->to] + fill[x->to]++] = k;
    }
    for (int p = 0; p < rg.n_parts; p++) /* each gaussian's parts */
        gps[rg.part_gauss[p] + 1]++;
    for (int j = 0; j < rg.n_gauss; j++)
        gps[j + 1] += gps[j];
    {
        int *at = calloc((size_t)rg.n_gauss + 1, sizeof *at);
        if (!at) {
            snprintf(err, errlen, "out of memory");
            goto done;
        }
        for (int p = 0; p < rg.n_parts; p++)
            gp[gps[rg.part_gauss[p]] + at[rg.part_gauss[p]]++] = p;
        free(at);
    }
    int64_t total = 0;
    for (int j = 0; j < rg.n_gauss; j++) {
        g->gauss_at[j] = total;
        total += entries(&rg, j);
    }
    for (int i = 0, e = 0; i < D; i++)
        for (int k = 0; k <= i; k++, e++) {
            tri[e] = i;
            tri[(size_t)D * (D + 1) / 2 + e] = k;
        }
    memcpy(g->part_start, rg.part_start, ((size_t)rg.n_dens + 1) * sizeof *g->part_start);
    /* the numbers, in float for the emission pass and forward-backward and
     * in double for the sums */
    const void *par_f = put_float(&it, rg.par, rg.n_par, &failed);
    const void *norm_f = put_float(&it, rg.log_norm, rg.n_gauss, &failed);
    const void *lw_f = put_float(&it, rg.part_logw, rg.n_parts, &failed);
    const double *par_d = put(&it, rg.par, (size_t)rg.n_par * sizeof(double), &failed);
    const double *norm_d = put(&it, rg.log_norm, (size_t)rg.n_gauss * sizeof(double), &failed);
    const double *lw_d = put(&it, rg.part_logw, (size_t)rg.n_parts * sizeof(double), &failed);
    const int64_t *par_at = put(&it, rg.par_at, (size_t)rg.n_gauss * sizeof(int64_t), &failed);
    const int *diag = put(&it, rg.diagonal, (size_t)rg.n_gauss * sizeof(int), &failed);
    const int *pstart = put(&it, rg.part_start, ((size_t)rg.n_dens + 1) * sizeof(int), &failed);
    const int *pgauss = put(&it, rg.part_gauss, (size_t)rg.n_parts * sizeof(int), &failed);
    const int *in_start = put(&it, rg.in_start, ((size_t)n + 1) * sizeof(int), &failed);
    const int *in_from = put(&it, rg.in_from, (size_t)rg.n_in * sizeof(int), &failed);
    const int *in_em = put(&it, rg.in_em, (size_t)rg.n_in * sizeof(int), &failed);
    const void *in_logw = put_float(&it, rg.in_logw, rg.n_in, &failed);
    const int *out_start = put(&it, mv.out_start, ((size_t)n + 1) * sizeof(int), &failed);
    const int *out_to = put(&it, mv.out_to, (size_t)rg.n_in * sizeof(int), &failed);
    const int *out_em = put(&it, mv.out_em, (size_t)rg.n_in * sizeof(int), &failed);
    const void *out_logw = put_float(&it, mv.out_logw, rg.n_in, &failed);
    const int *end_from = put(&it, rg.end_from, (size_t)rg.n_end * sizeof(int), &failed);
    const void *end_logw = put_float(&it, rg.end_logw, rg.n_end, &failed);
    const int *in_move_d = put(&it, in_move, (size_t)rg.n_in * sizeof(int), &failed);
    const int *end_move_d = put(&it, end_move, (size_t)rg.n_end * sizeof(int), &failed);
    const int *gps_d = put(&it, gps, ((size_t)rg.n_gauss + 1) * sizeof(int), &failed);
    const int *gp_d = put(&it, gp, (size_t)rg.n_parts * sizeof(int), &failed);
    const int *tri_d = put(&it, tri, ((size_t)D * (D + 1) + 2) * sizeof(int), &failed);
    const int64_t *stat_at = put(&it, g->gauss_at, (size_t)rg.n_gauss * sizeof(int64_t), &failed);
    double *stats = put(&it, NULL, (size_t)(total + 1) * sizeof(double), &failed);
    void *cols = NULL;
    if (!failed && hmmrt_rfb_shared(n, 0) > ((size_t)48 << 10))
        cols = put(&it, NULL, (size_t)g->max_pieces * hmmrt_rfb_shared(n, 0), &failed);
    if (failed) {
        snprintf(err, errlen, "training over real observations on the GPU: the model's numbers "
                 "could not be copied to the device");
        goto done;
    }
    CK(cudaMemset(stats, 0, (size_t)(total + 1) * sizeof(double)));
    CK(cudaMemset(g->move_counts, 0, ((size_t)g->n_moves + 1) * sizeof(double)));
    CK(cudaMemset(g->counts, 0, ((size_t)g->n_parts + 1) * sizeof(double)));
    memset(mc, 0, ((size_t)g->n_moves + 1) * sizeof *mc);
    int block = (n + 31) / 32 * 32;
    block = block < 1024 ? block : 1024;
    for (int64_t c = 0; c < g->n_chunks; c++) {
        int pieces = 0;
        int64_t frames = 0;
        for (int64_t i = g->chunk_start[c]; i < g->chunk_start[c + 1]; i++) {
            const int64_t L = g->length[i];
            if (L == 0) { /* the host's */
                lnp[i] = empty_sequence(m, mc);
                continue;
            }
            g->row_h[pieces] = frames;
            g->len_h[pieces] = L;
            g->flags_h[pieces] = RG_FIRST | RG_LAST;
            pieces++;
            const double *x = g->obs[i];
            memcpy(g->frames_hd + (size_t)frames * D, x, (size_t)L * D * sizeof(double));
            for (size_t k = 0; k < (size_t)L * D; k++)
                g->frames_hf[(size_t)frames * D + k] = (float)x[k];
            frames += L;
        }
        if (pieces == 0)
            continue;
        CK(cudaMemcpyAsync(g->frames_f, g->frames_hf, (size_t)frames * D * sizeof(float),
                           cudaMemcpyHostToDevice, g->stream));
        CK(cudaMemcpyAsync(g->frames_d, g->frames_hd, (size_t)frames * D * sizeof(double),
                           cudaMemcpyHostToDevice, g->stream));
        CK(cudaMemcpyAsync(g->row_d, g->row_h, (size_t)pieces * sizeof(int64_t),
                           cudaMemcpyHostToDevice, g->stream));
        CK(cudaMemcpyAsync(g->len_d, g->len_h, (size_t)pieces * sizeof(int64_t),
                           cudaMemcpyHostToDevice, g->stream));
        CK(cudaMemcpyAsync(g->flags_d, g->flags_h, (size_t)pieces * sizeof(int),
                           cudaMemcpyHostToDevice, g->stream));
        CK(cudaMemsetAsync(g->uses, 0, (size_t)frames * rg.n_dens * sizeof(double), g->stream));
        hmmrt_rg_emit_job ej = {
            .use_double = 0, .D = D, .n_dens = rg.n_dens, .n_frames = frames,
            .frames = g->frames_f, .par = par_f, .par_at = par_at, .diagonal = diag,
            .log_norm = norm_f, .part_start = pstart, .part_gauss = pgauss, .part_logw = lw_f,
            .table = g->table, .stream = g->stream};
        CK((cudaError_t)hmmrt_rg_emit_launch(&ej));
        hmmrt_rfb_job fj = {
            .use_double = 0, .n_states = n, .start = rg.start, .n_dens = rg.n_dens,
            .n_pieces = pieces, .row = g->row_d, .len = g->len_d, .flags = g->flags_d,
            .in_start = in_start, .in_from = in_from, .in_em = in_em, .in_logw = in_logw,
            .out_start = out_start, .out_to = out_to, .out_em = out_em, .out_logw = out_logw,
            .n_end = rg.n_end, .end_from = end_from, .end_logw = end_logw, .table = g->table,
            .alpha = g->alpha, .a_off = g->a_off, .cols = cols, .fscore = g->fscore,
            .bscore = g->bscore, .in_move = in_move_d, .end_move = end_move_d,
            .move_counts = g->move_counts, .uses = g->uses, .block = block,
            .stream = g->stream};
        CK((cudaError_t)hmmrt_rfb_launch(&fj));
        hmmrt_rt_job tj = {
            .D = D, .n_dens = rg.n_dens, .n_parts = rg.n_parts, .n_gauss = rg.n_gauss,
            .n_frames = frames, .frames = g->frames_d, .uses = g->uses, .par = par_d,
            .log_norm = norm_d, .part_logw = lw_d, .par_at = par_at, .diagonal = diag,
            .part_start = pstart, .part_gauss = pgauss, .gauss_part_start = gps_d,
            .gauss_part = gp_d, .tri_i = tri_d, .tri_k = tri_d + (size_t)D * (D + 1) / 2,
            .stat_at = stat_at, .pw = g->pw, .stats = stats, .counts = g->counts,
            .stream = g->stream};
        CK((cudaError_t)hmmrt_rt_launch(&tj));
        CK(cudaMemcpyAsync(g->fscore_h, g->fscore, (size_t)pieces * sizeof(double),
                           cudaMemcpyDeviceToHost, g->stream));
        CK(cudaStreamSynchronize(g->stream));
        for (int64_t i = g->chunk_start[c], p = 0; i < g->chunk_start[c + 1]; i++)
            if (g->length[i] > 0)
                lnp[i] = g->fscore_h[p++];
    }
    free(g->gauss_h);
    free(g->parts_h);
    g->gauss_h = malloc((size_t)(total + 1) * sizeof *g->gauss_h);
    g->parts_h = malloc(((size_t)rg.n_parts + 1) * sizeof *g->parts_h);
    if (!g->gauss_h || !g->parts_h) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    CK(cudaMemcpy(g->gauss_h, stats, (size_t)total * sizeof(double), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(g->parts_h, g->counts, (size_t)rg.n_parts * sizeof(double),
                  cudaMemcpyDeviceToHost));
    {
        double *dev_mc = malloc(((size_t)g->n_moves + 1) * sizeof *dev_mc);
        if (!dev_mc) {
            snprintf(err, errlen, "out of memory");
            goto done;
        }
        if (cudaMemcpy(dev_mc, g->move_counts, (size_t)g->n_moves * sizeof(double),
                       cudaMemcpyDeviceToHost) != cudaSuccess) {
            free(dev_mc);
            snprintf(err, errlen, "training over real observations on the GPU: the counts "
                     "could not be copied back");
            goto done;
        }
        for (int k = 0; k < g->n_moves; k++)
            move_counts[k] += dev_mc[k] + mc[k];
        free(dev_mc);
    }
    *gauss = g->gauss_h;
    *gauss_at = g->gauss_at;
    *parts = g->parts_h;
    *part_start = g->part_start;
    status = 0;
fail:
done:
    free_all(&it);
    hmmrt_rfb_moves_free(&mv);
    hmmrt_rg_model_free(&rg);
    free(in_move), free(end_move), free(fill), free(gps), free(gp), free(tri), free(mc);
    return status;
}
