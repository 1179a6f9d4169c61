/* fb_gpu.c: --train's E-step on the GPU: uploads the sequences once, and
 * each iteration the model's numbers, runs the program's forward-backward
 * kernel (fb_kernel.cu) over chunks of sequences whose forward tables fit in
 * device memory, and brings back each sequence's ln P and the summed counts. */
#include "hmmrt_gpu.h"
#include "hmmrt_fb_gpu.h"
#include "fb.h"
#include "internal.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hmmrt_gpu_trainer {
    int (*launch)(const hmmrt_fb_gpu_job *job);
    hmmrt_fb_gpu_job job;      /* device tables; the per-chunk fields are set per launch */
    int64_t n_seqs;
    int64_t *chunk_start;      /* chunk c: sequences [chunk_start[c], chunk_start[c+1]) */
    int64_t n_chunks;
    /* device memory */
    void **owned;              /* every cudaMalloc, freed at close */
    int n_owned, cap_owned;
    float *w, *e, *closure;
    size_t closure_cells;
    float *matrix;             /* dense form: w_matrix then w_transposed (n x n each), or NULL */
    double *counts;            /* n_moves + n_values */
    double *lnp;
    /* host */
    float *host_params;        /* w, e, closure as floats */
    size_t values;
};

static int fail(char *err, size_t errlen, cudaError_t e, const char *what)
{
    snprintf(err, errlen, "%s failed: %s", what, cudaGetErrorString(e));
    return -1;
}

/* cudaMalloc, remembered for close; NULL after a message. */
static void *device_alloc(hmmrt_gpu_trainer *g, size_t bytes, char *err, size_t errlen)
{
    if (g->n_owned == g->cap_owned) {
        int cap = g->cap_owned ? 2 * g->cap_owned : 32;
        void **owned = realloc(g->owned, (size_t)cap * sizeof *owned);
        if (!owned) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        g->owned = owned;
        g->cap_owned = cap;
    }
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 8);
    if (e != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "cudaMalloc of %.1f MiB", (double)bytes / (1 << 20));
        fail(err, errlen, e, what);
        return NULL;
    }
    g->owned[g->n_owned++] = p;
    return p;
}

/* A copy of host memory on the device; NULL after a message. */
static void *upload(hmmrt_gpu_trainer *g, const void *host, size_t bytes, char *err, size_t errlen)
{
    void *p = device_alloc(g, bytes, err, errlen);
    if (p && bytes) {
        cudaError_t e = cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
            fail(err, errlen, e, "cudaMemcpy of the model");
            return NULL;
        }
    }
    return p;
}

/* The components of fb in levels: a component's level is one more than the
 * highest of the components its silent moves come from. */
static int make_levels(const hmmrt_fb *fb, int **level_start, int **level_comp, int *n_levels)
{
    int *level = calloc((size_t)fb->n_comps + 1, sizeof *level);
    *level_start = NULL;
    *level_comp = malloc(((size_t)fb->n_comps + 1) * sizeof **level_comp);
    if (!level || !*level_comp) {
        free(level);
        return -1;
    }
    int top = -1;
    for (int c = 0; c < fb->n_comps; c++) { /* components come in dependency order */
        for (int k = fb->comp_start[c]; k < fb->comp_start[c + 1]; k++) {
            int v = fb->comp_state[k];
            for (int j = fb->in_start[v]; j < fb->in_start[v + 1]; j++) {
                int from = fb->comp_of[fb->moves[fb->in[j]].from];
                if (from >= 0 && level[from] + 1 > level[c])
                    level[c] = level[from] + 1;
            }
        }
        if (level[c] > top)
            top = level[c];
    }
    *n_levels = top + 1;
    *level_start = calloc((size_t)*n_levels + 2, sizeof **level_start);
    if (!*level_start) {
        free(level);
        return -1;
    }
    for (int c = 0; c < fb->n_comps; c++)
        (*level_start)[level[c] + 1]++;
    for (int l = 0; l < *n_levels; l++)
        (*level_start)[l + 1] += (*level_start)[l];
    int *next = malloc(((size_t)*n_levels + 1) * sizeof *next);
    if (!next) {
        free(level);
        return -1;
    }
    memcpy(next, *level_start, (size_t)*n_levels * sizeof *next);
    for (int c = 0; c < fb->n_comps; c++)
        (*level_comp)[next[level[c]]++] = c;
    free(next);
    free(level);
    return 0;
}

/* Why fb cannot train on the GPU, or NULL. */
static const char *unsuitable(const hmmrt_fb *fb)
{
    if (fb->n > HMMRT_FB_GPU_MAX_STATES)
        return "more states than the GPU kernel keeps in shared memory";
    if (fb->max_comp > HMMRT_FB_GPU_MAX_CYCLE)
        return "a silent cycle larger than the GPU kernel holds";
    return NULL;
}

/* Each state's emission table when the model can take the dense form
 * (hmmrt_fb_gpu_tables.dense): at most HMMRT_FB_GPU_DENSE_MAX states, and
 * the live emitting moves into each state all of one table. NULL otherwise. */
static int *dense_tables(const hmmrt_fb *fb)
{
    if (fb->n > HMMRT_FB_GPU_DENSE_MAX)
        return NULL;
    int *table = malloc(((size_t)fb->n + 1) * sizeof *table);
    if (!table)
        return NULL;
    for (int q = 0; q < fb->n; q++)
        table[q] = -1;
    for (int i = 0; i < fb->n_moves; i++) {
        const hmmrt_model_move *mv = &fb->moves[i];
        if (mv->emission < 0 || !fb->live[i])
            continue;
        if (table[mv->to] >= 0 && table[mv->to] != mv->emission) {
            free(table);
            return NULL;
        }
        table[mv->to] = mv->emission;
    }
    return table;
}

/* Lanes a sequence, threads a block, blocks, and where the counts gather:
 * a small model's sequences go to groups of 4 to 32 lanes of a warp, a
 * larger one's to a block; the groups stay resident and walk the sequences. */
static void choose_shape(hmmrt_gpu_trainer *g, const hmmrt_fb *fb, int device)
{
    hmmrt_fb_gpu_job *j = &g->job;
    int n = fb->n;
    j->group = n <= 4 ? 4 : n <= 8 ? 8 : n <= 16 ? 16 : n <= 32 ? 32 : 0;
    int lanes = j->group ? j->group : ((n + 31) / 32 * 32 > 256 ? 256 : (n + 31) / 32 * 32);
    j->block = j->group ? 128 : lanes;
    int per_block = j->group ? j->block / j->group : 1;
    size_t column = (size_t)lanes * (size_t)((n + lanes - 1) / lanes) * sizeof(float);
    size_t own = (2 * column + (j->group ? 0 : 32 * sizeof(float)) + 7) / 8 * 8;
    size_t nn = j->t.dense ? (size_t)n * (size_t)n : 0;
    size_t counts = ((size_t)fb->n_moves + g->values + nn) * sizeof(double);
    j->block_bytes = (2 * nn * sizeof(float) + 7) / 8 * 8;
    j->counts_in_shared = j->block_bytes + (own + counts) * (size_t)per_block <= 160 * 1024;
    if (j->t.dense && !j->counts_in_shared) { /* the dense form counts in shared memory only */
        j->t.dense = 0;
        nn = 0;
        j->block_bytes = 0;
        counts = ((size_t)fb->n_moves + g->values) * sizeof(double);
        j->counts_in_shared = (own + counts) * (size_t)per_block <= 160 * 1024;
    }
    j->group_bytes = own + (j->counts_in_shared ? counts : 0);
    int sms = 132;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    int64_t needed = (g->n_seqs + per_block - 1) / per_block;
    int64_t resident = (int64_t)sms * (j->group ? 16 : 2048 / j->block);
    j->grid = (int)(needed < resident ? (needed > 0 ? needed : 1) : resident);
}

void hmmrt_gpu_fb_close(hmmrt_gpu_trainer *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->n_owned; i++)
        cudaFree(g->owned[i]);
    free(g->owned);
    free(g->chunk_start);
    free(g->host_params);
    free(g);
}

hmmrt_gpu_trainer *hmmrt_gpu_fb_open(const struct hmmrt_fb *fb, int64_t n_seqs,
                                     const int64_t *start, const uint8_t *codes, int device,
                                     int (*launch)(const struct hmmrt_fb_gpu_job *job), char *err,
                                     size_t errlen)
{
    const char *why = unsuitable(fb);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return NULL;
    }
    int devices = 0;
    cudaError_t ce = cudaGetDeviceCount(&devices);
    if (ce != cudaSuccess || devices <= device) {
        if (ce != cudaSuccess)
            fail(err, errlen, ce, "cudaGetDeviceCount");
        else
            snprintf(err, errlen, "no GPU number %d (this machine has %d)", device, devices);
        return NULL;
    }
    if ((ce = cudaSetDevice(device)) != cudaSuccess) {
        fail(err, errlen, ce, "cudaSetDevice");
        return NULL;
    }
    hmmrt_gpu_trainer *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    g->launch = launch;
    g->n_seqs = n_seqs;
    hmmrt_fb_gpu_tables *t = &g->job.t;
    t->n = fb->n, t->K = fb->K, t->start = fb->start, t->end = fb->end;
    t->n_moves = fb->n_moves, t->n_emissions = fb->n_emissions, t->n_silent = fb->n_silent;
    g->values = (size_t)fb->n_emissions * (size_t)fb->K;
    size_t nm = (size_t)fb->n_moves, n1 = (size_t)fb->n + 1;
    int *from = malloc((nm + 1) * sizeof *from), *to = malloc((nm + 1) * sizeof *to);
    int *em = malloc((nm + 1) * sizeof *em), *key = malloc((nm + 1) * sizeof *key);
    int *in_start = calloc(n1, sizeof *in_start), *in = malloc((nm + 1) * sizeof *in);
    int *level_start = NULL, *level_comp = NULL, n_levels = 0;
    int64_t *closure_at = malloc(((size_t)fb->n_comps + 1) * sizeof *closure_at);
    int ok = from && to && em && key && in_start && in && closure_at &&
             make_levels(fb, &level_start, &level_comp, &n_levels) == 0;
    if (ok) {
        /* emitting moves by destination, for the forward kernel's pull */
        for (size_t i = 0; i < nm; i++) {
            from[i] = fb->moves[i].from, to[i] = fb->moves[i].to, em[i] = fb->moves[i].emission;
            if (em[i] >= 0 && fb->live[i])
                in_start[to[i] + 1]++;
        }
        for (int s = 0; s < fb->n; s++)
            in_start[s + 1] += in_start[s];
        memcpy(key, in_start, (size_t)fb->n * sizeof *key);
        for (size_t i = 0; i < nm; i++)
            if (em[i] >= 0 && fb->live[i])
                in[key[to[i]]++] = (int)i;
        for (int c = 0; c < fb->n_comps; c++) {
            closure_at[c] = fb->closure_at[c] == (size_t)-1 ? -1 : (int64_t)fb->closure_at[c];
            size_t m = (size_t)(fb->comp_start[c + 1] - fb->comp_start[c]);
            if (closure_at[c] >= 0 && fb->closure_at[c] + m * m > g->closure_cells)
                g->closure_cells = fb->closure_at[c] + m * m;
        }
        t->n_levels = n_levels;
    }
    size_t ni = sizeof(int), cs = (size_t)fb->n_comps + 1;
#define UP(field, host, bytes) (ok = ok && ((t->field = upload(g, host, bytes, err, errlen)) != NULL))
    UP(move_from, from, nm * ni);
    UP(move_to, to, nm * ni);
    UP(move_emission, em, nm * ni);
    UP(emit_in_start, in_start, n1 * ni);
    UP(emit_in, in, nm * ni);
    UP(emit_out_start, fb->emit_out_start, n1 * ni);
    UP(emit_out, fb->emit_out, nm * ni);
    UP(silent, fb->silent, (size_t)fb->n_silent * ni);
    UP(level_start, level_start, ((size_t)n_levels + 1) * ni);
    UP(level_comp, level_comp, cs * ni);
    UP(comp_start, fb->comp_start, cs * ni);
    UP(comp_state, fb->comp_state, n1 * ni);
    UP(closure_at, closure_at, cs * sizeof(int64_t));
    UP(in_start, fb->in_start, n1 * ni);
    UP(in, fb->in, nm * ni);
    UP(out_start, fb->out_start, n1 * ni);
    UP(out, fb->out, nm * ni);
#undef UP
    free(from), free(to), free(em), free(key), free(in_start), free(in);
    free(level_start), free(level_comp), free(closure_at);
    size_t params = nm + g->values + g->closure_cells;
    g->host_params = ok ? malloc((params + 1) * sizeof *g->host_params) : NULL;
    ok = ok && g->host_params;
    ok = ok && (g->w = device_alloc(g, (params + 1) * sizeof(float), err, errlen)) != NULL;
    if (ok) {
        g->e = g->w + nm;
        g->closure = g->e + g->values;
        t->w = g->w, t->e = g->e, t->closure = g->closure;
    }
    ok = ok && (g->counts = device_alloc(g, (nm + g->values + 1) * sizeof(double), err, errlen));
    ok = ok && (g->lnp = device_alloc(g, ((size_t)n_seqs + 1) * sizeof(double), err, errlen));

    /* the sequences, once; then chunks whose forward tables fit */
    int64_t total = n_seqs ? start[n_seqs] : 0;
    int64_t *lengths = malloc(((size_t)n_seqs + 1) * sizeof *lengths);
    int64_t *f_off = malloc(((size_t)n_seqs + 1) * sizeof *f_off);
    int64_t *ls_off = malloc(((size_t)n_seqs + 1) * sizeof *ls_off);
    g->chunk_start = malloc(((size_t)n_seqs + 2) * sizeof *g->chunk_start);
    ok = ok && lengths && f_off && ls_off && g->chunk_start;
    size_t free_bytes = 0, total_bytes = 0;
    if (ok && (ce = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess)
        ok = fail(err, errlen, ce, "cudaMemGetInfo") == 0;
    /* a chunk's tables may take half of what is free once the sequences are there */
    size_t budget = free_bytes > (size_t)total * 2 ? (free_bytes - (size_t)total * 2) / 2 : 0;
    int64_t max_f = 0, max_ls = 0;
    if (ok) {
        int64_t f_used = 0, ls_used = 0;
        g->n_chunks = 0;
        g->chunk_start[0] = 0;
        for (int64_t s = 0; s < n_seqs; s++) {
            lengths[s] = start[s + 1] - start[s];
            int64_t cells = (lengths[s] + 1) * (int64_t)fb->n;
            if (s > g->chunk_start[g->n_chunks] &&
                (size_t)(f_used + cells) * sizeof(float) + (size_t)(ls_used + lengths[s] + 1) * 4 > budget) {
                g->chunk_start[++g->n_chunks] = s;
                f_used = ls_used = 0;
            }
            f_off[s] = f_used; /* within the chunk */
            ls_off[s] = ls_used;
            f_used += cells;
            ls_used += lengths[s] + 1;
            if (f_used > max_f)
                max_f = f_used;
            if (ls_used > max_ls)
                max_ls = ls_used;
        }
        g->chunk_start[++g->n_chunks] = n_seqs;
    }
    void *d_codes = NULL;
    ok = ok && (d_codes = upload(g, codes, (size_t)total, err, errlen)) != NULL;
    ok = ok && (g->job.offsets = upload(g, start, (size_t)n_seqs * 8, err, errlen)) != NULL;
    ok = ok && (g->job.lengths = upload(g, lengths, (size_t)n_seqs * 8, err, errlen)) != NULL;
    ok = ok && (g->job.f_offsets = upload(g, f_off, (size_t)n_seqs * 8, err, errlen)) != NULL;
    ok = ok && (g->job.scale_offsets = upload(g, ls_off, (size_t)n_seqs * 8, err, errlen)) != NULL;
    void *tables = NULL, *scales = NULL;
    ok = ok && (tables = device_alloc(g, (size_t)max_f * sizeof(float), err, errlen)) != NULL;
    ok = ok && (scales = device_alloc(g, (size_t)max_ls * sizeof(int), err, errlen)) != NULL;
    free(lengths), free(f_off), free(ls_off);
    if (!ok) {
        if (!err[0])
            snprintf(err, errlen, "out of memory");
        hmmrt_gpu_fb_close(g);
        return NULL;
    }
    g->job.codes = d_codes;
    g->job.f = tables;
    g->job.scale = scales;
    int *tables_of = dense_tables(fb);
    if (tables_of) {
        size_t nn = (size_t)fb->n * (size_t)fb->n;
        g->matrix = device_alloc(g, 2 * nn * sizeof(float), err, errlen);
        g->job.t.state_emission = g->matrix
            ? upload(g, tables_of, (size_t)fb->n * sizeof(int), err, errlen) : NULL;
        if (g->matrix && g->job.t.state_emission) {
            g->job.t.dense = 1;
            g->job.t.w_matrix = g->matrix;
            g->job.t.w_transposed = g->matrix + nn;
        }
        free(tables_of);
        err[0] = '\0'; /* without the dense form the kernel walks the move lists */
    }
    g->job.lnp = g->lnp;
    g->job.move_counts = g->counts;
    g->job.emission_counts = g->counts + nm;
    choose_shape(g, fb, device);
    return g;
}

int hmmrt_gpu_fb_expect(hmmrt_gpu_trainer *g, const struct hmmrt_fb *fb, double *lnp,
                        double *move_counts, double *emission_counts, char *err, size_t errlen)
{
    size_t nm = (size_t)fb->n_moves, params = nm + g->values + g->closure_cells;
    for (size_t i = 0; i < nm; i++)
        g->host_params[i] = (float)fb->w[i];
    for (size_t i = 0; i < g->values; i++)
        g->host_params[nm + i] = (float)fb->e[i];
    for (size_t i = 0; i < g->closure_cells; i++)
        g->host_params[nm + g->values + i] = (float)fb->closure[i];
    cudaError_t ce = cudaMemcpy(g->w, g->host_params, params * sizeof(float),
                                cudaMemcpyHostToDevice);
    if (ce != cudaSuccess)
        return fail(err, errlen, ce, "cudaMemcpy of the model's numbers");
    if (g->job.t.dense) {
        size_t n = (size_t)fb->n, nn = n * n;
        float *m = calloc(2 * nn, sizeof *m);
        if (!m) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < nm; i++) {
            const hmmrt_model_move *mv = &fb->moves[i];
            if (mv->emission >= 0 && fb->live[i]) {
                m[(size_t)mv->from * n + (size_t)mv->to] = (float)fb->w[i];
                m[nn + (size_t)mv->to * n + (size_t)mv->from] = (float)fb->w[i];
            }
        }
        ce = cudaMemcpy(g->matrix, m, 2 * nn * sizeof(float), cudaMemcpyHostToDevice);
        free(m);
        if (ce != cudaSuccess)
            return fail(err, errlen, ce, "cudaMemcpy of the model's matrix");
    }
    if ((ce = cudaMemset(g->counts, 0, (nm + g->values) * sizeof(double))) != cudaSuccess)
        return fail(err, errlen, ce, "cudaMemset of the counts");
    hmmrt_fb_gpu_job job = g->job;
    /* the per-sequence arrays of the whole set, offset to each chunk; the
     * chunk's forward tables and scales start at f and ls */
    for (int64_t c = 0; c < g->n_chunks; c++) {
        int64_t first = g->chunk_start[c];
        job.n_seqs = g->chunk_start[c + 1] - first;
        job.offsets = g->job.offsets + first;
        job.lengths = g->job.lengths + first;
        job.f_offsets = g->job.f_offsets + first;
        job.scale_offsets = g->job.scale_offsets + first;
        job.lnp = g->lnp + first;
        int e = g->launch(&job);
        if (e != 0)
            return fail(err, errlen, (cudaError_t)e, "the forward-backward kernel's launch");
        if ((ce = cudaDeviceSynchronize()) != cudaSuccess)
            return fail(err, errlen, ce, "the forward-backward kernel");
    }
    if ((ce = cudaMemcpy(lnp, g->lnp, (size_t)g->n_seqs * sizeof(double),
                         cudaMemcpyDeviceToHost)) != cudaSuccess)
        return fail(err, errlen, ce, "cudaMemcpy of the scores");
    if ((ce = cudaMemcpy(move_counts, g->counts, nm * sizeof(double), cudaMemcpyDeviceToHost)) !=
            cudaSuccess ||
        (ce = cudaMemcpy(emission_counts, g->counts + nm, g->values * sizeof(double),
                         cudaMemcpyDeviceToHost)) != cudaSuccess)
        return fail(err, errlen, ce, "cudaMemcpy of the counts");
    return 0;
}
