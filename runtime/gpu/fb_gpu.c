/* fb_gpu.c: --train's E-step on the GPU: uploads the model's tables
 * (fb_device.c) and the sequences once, and each iteration the model's
 * numbers; runs the forward-backward kernel (fb_kernel.cu) over chunks of
 * sequences whose forward tables fit in device memory, and brings back each
 * sequence's ln P and the summed counts. */
#include "hmmrt_gpu.h"
#include "fb_device.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hmmrt_gpu_trainer {
    int (*launch)(const hmmrt_fb_gpu_job *job);
    hmmrt_fb_device dev;       /* the model, and every device allocation */
    int64_t n_seqs;
    int64_t *order;            /* the device's k-th sequence is order[k]: longest first in
                                  the HMM form (its warps' columns interleave), else as given */
    double *lnp_host;          /* the scores in the device's order */
    int64_t *chunk_start;      /* chunk c: sequences [chunk_start[c], chunk_start[c+1]) */
    int64_t n_chunks;
    double *counts;            /* n_moves + n_values */
    double *lnp;
};

void hmmrt_gpu_fb_close(hmmrt_gpu_trainer *g)
{
    if (!g)
        return;
    hmmrt_fb_device_close(&g->dev);
    free(g->chunk_start);
    free(g->order);
    free(g->lnp_host);
    free(g);
}

/* Splits the sequences (in the device's order, lengths[k]) into chunks
 * whose forward tables and scales fit in budget bytes, and gives each its
 * first column within its chunk, cols_at[k]. With grouped (the HMM form)
 * the columns of each HMMRT_GROUP sequences of a chunk interleave
 * (hmmrt_group_offsets: position i at cols_at[k] + HMMRT_GROUP i), a group
 * as many columns as its longest needs. Returns the most columns a chunk has. */
static int64_t plan_chunks(hmmrt_gpu_trainer *g, const int64_t *lengths, int column, int grouped,
                           size_t budget, int64_t *cols_at)
{
    const int64_t n = g->n_seqs, step = grouped ? HMMRT_GROUP : 1;
    size_t per_column = (size_t)column * sizeof(float) + sizeof(int);
    int64_t used = 0, most = 0;
    g->n_chunks = 0;
    g->chunk_start[0] = 0;
    for (int64_t k = 0; k < n; k += step) {
        int64_t longest = 0;
        for (int64_t m = k; m < k + step && m < n; m++)
            longest = lengths[m] > longest ? lengths[m] : longest;
        int64_t need = (longest + 1) * step;
        if (k > g->chunk_start[g->n_chunks] && (size_t)(used + need) * per_column > budget) {
            g->chunk_start[++g->n_chunks] = k;
            used = 0;
        }
        used += need;
        most = used > most ? used : most;
    }
    g->chunk_start[++g->n_chunks] = n;
    for (int64_t c = 0; c < g->n_chunks; c++) {
        int64_t first = g->chunk_start[c], count = g->chunk_start[c + 1] - first;
        if (grouped)
            hmmrt_group_offsets(lengths + first, count, cols_at + first);
        else
            hmmrt_bp_offsets(lengths + first, count, 1, cols_at + first);
    }
    return most;
}

/* The device's order: longest first when grouped (a warp's sequences then
 * take about as long, and its columns waste little), else as given. */
static int by_length(const void *a, const void *b, void *lengths)
{
    int64_t la = ((const int64_t *)lengths)[*(const int64_t *)a];
    int64_t lb = ((const int64_t *)lengths)[*(const int64_t *)b];
    if (la != lb)
        return la > lb ? -1 : 1;
    return *(const int64_t *)a < *(const int64_t *)b ? -1 : 1;
}

hmmrt_gpu_trainer *hmmrt_gpu_fb_open(const struct hmmrt_fb *fb, int64_t n_seqs,
                                     const int64_t *start, const uint8_t *codes, int device,
                                     int (*launch)(const struct hmmrt_fb_gpu_job *job), char *err,
                                     size_t errlen)
{
    int devices = 0;
    cudaError_t ce = cudaGetDeviceCount(&devices);
    if (ce == cudaSuccess && devices > 0 && device < 0) /* under mpirun (mpi_run.c) */
        device = (-1 - device) % devices;
    if (ce != cudaSuccess || devices <= device) {
        if (ce != cudaSuccess)
            hmmrt_fb_device_fail(err, errlen, ce, "cudaGetDeviceCount");
        else
            snprintf(err, errlen, "no GPU number %d (this machine has %d)", device, devices);
        return NULL;
    }
    if ((ce = cudaSetDevice(device)) != cudaSuccess) {
        hmmrt_fb_device_fail(err, errlen, ce, "cudaSetDevice");
        return NULL;
    }
    hmmrt_gpu_trainer *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    g->launch = launch;
    g->n_seqs = n_seqs;
    if (hmmrt_fb_device_open(&g->dev, fb, 0, device, err, errlen) != 0) {
        free(g);
        return NULL;
    }
    hmmrt_fb_device *d = &g->dev;
    size_t nm = (size_t)fb->n_moves;
    int ok = (g->counts = hmmrt_fb_device_alloc(d, (nm + d->values + 1) * sizeof(double), err,
                                                errlen)) != NULL;
    ok = ok && (g->lnp = hmmrt_fb_device_alloc(d, ((size_t)n_seqs + 1) * sizeof(double), err,
                                               errlen)) != NULL;

    /* the sequences, once; then chunks whose forward tables fit */
    int64_t total = n_seqs ? start[n_seqs] : 0;
    int64_t *lengths = malloc(((size_t)n_seqs + 1) * sizeof *lengths);
    int64_t *cols_at = malloc(((size_t)n_seqs + 1) * sizeof *cols_at);
    g->chunk_start = malloc(((size_t)n_seqs + 2) * sizeof *g->chunk_start);
    ok = ok && lengths && cols_at && g->chunk_start;
    size_t free_bytes = 0, total_bytes = 0;
    if (ok && (ce = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess)
        ok = hmmrt_fb_device_fail(err, errlen, ce, "cudaMemGetInfo") == 0;
    /* a chunk's tables may take half of what is free once the sequences are there */
    size_t budget = free_bytes > (size_t)total * 2 ? (free_bytes - (size_t)total * 2) / 2 : 0;
    int64_t most = 0;
    int grouped = d->job.t.hmm.N != 0;
    g->order = ok ? malloc(((size_t)n_seqs + 1) * sizeof *g->order) : NULL;
    g->lnp_host = ok ? malloc(((size_t)n_seqs + 1) * sizeof *g->lnp_host) : NULL;
    int64_t *sorted = ok ? malloc(((size_t)n_seqs + 1) * sizeof *sorted) : NULL;
    ok = ok && g->order && g->lnp_host && sorted;
    if (ok) {
        for (int64_t s = 0; s < n_seqs; s++) {
            lengths[s] = start[s + 1] - start[s];
            g->order[s] = s;
        }
        if (grouped)
            qsort_r(g->order, (size_t)n_seqs, sizeof *g->order, by_length, lengths);
        for (int64_t k = 0; k < n_seqs; k++)
            sorted[k] = lengths[g->order[k]];
        most = plan_chunks(g, sorted, d->column, grouped, budget, cols_at);
    }
    hmmrt_fb_gpu_job *j = &d->job;
    j->col_stride = grouped ? HMMRT_GROUP : 1;
    /* each sequence at a multiple of 16 bytes, zero-padded (the kernel reads
     * sixteen symbols at a time), in the device's order */
    int64_t *padded_at = ok ? malloc(((size_t)n_seqs + 1) * sizeof *padded_at) : NULL;
    int64_t padded = padded_at ? hmmrt_code_offsets(sorted, n_seqs, padded_at) : 0;
    uint8_t *padded_codes = padded_at ? calloc((size_t)padded + 16, 1) : NULL;
    ok = ok && padded_codes;
    for (int64_t k = 0; ok && k < n_seqs; k++)
        memcpy(padded_codes + padded_at[k], codes + start[g->order[k]], (size_t)sorted[k]);
    void *d_codes = NULL, *tables = NULL, *scales = NULL;
    ok = ok && (d_codes = hmmrt_fb_device_upload(d, padded_codes, (size_t)padded + 16, err,
                                                 errlen)) != NULL;
    ok = ok && (j->offsets = hmmrt_fb_device_upload(d, padded_at, (size_t)n_seqs * 8, err, errlen));
    free(padded_at), free(padded_codes);
    ok = ok && (j->lengths = hmmrt_fb_device_upload(d, sorted, (size_t)n_seqs * 8, err, errlen));
    ok = ok && (j->cols_at = hmmrt_fb_device_upload(d, cols_at, (size_t)n_seqs * 8, err, errlen));
    free(sorted);
    ok = ok && (tables = hmmrt_fb_device_alloc(d, (size_t)most * (size_t)d->column * sizeof(float),
                                               err, errlen)) != NULL;
    ok = ok && (scales = hmmrt_fb_device_alloc(d, (size_t)most * sizeof(int), err, errlen));
    free(lengths), free(cols_at);
    if (!ok) {
        if (!err[0])
            snprintf(err, errlen, "out of memory");
        hmmrt_gpu_fb_close(g);
        return NULL;
    }
    j->codes = d_codes;
    j->f = tables;
    j->scale = scales;
    j->lnp = g->lnp;
    j->move_counts = g->counts;
    j->emission_counts = g->counts + nm;
    return g;
}

int hmmrt_gpu_fb_expect(hmmrt_gpu_trainer *g, const struct hmmrt_fb *fb, double *lnp,
                        double *move_counts, double *emission_counts, char *err, size_t errlen)
{
    const hmmrt_fb_device *d = &g->dev;
    size_t nm = (size_t)fb->n_moves;
    if (hmmrt_fb_device_set_numbers(&g->dev, fb, err, errlen) != 0)
        return -1;
    cudaError_t ce = cudaMemset(g->counts, 0, (nm + d->values) * sizeof(double));
    if (ce != cudaSuccess)
        return hmmrt_fb_device_fail(err, errlen, ce, "cudaMemset of the counts");
    hmmrt_fb_gpu_job job = d->job;
    /* the per-sequence arrays of the whole set, offset to each chunk; the
     * chunk's forward tables and scales start at f and scale */
    for (int64_t c = 0; c < g->n_chunks; c++) {
        int64_t first = g->chunk_start[c];
        job.n_seqs = g->chunk_start[c + 1] - first;
        job.grid = hmmrt_fb_device_grid(d, job.n_seqs);
        job.offsets = d->job.offsets + first;
        job.lengths = d->job.lengths + first;
        job.cols_at = d->job.cols_at + first;
        job.lnp = g->lnp + first;
        int e = g->launch(&job);
        if (e != 0)
            return hmmrt_fb_device_fail(err, errlen, (cudaError_t)e,
                                        "the forward-backward kernel's launch");
        if ((ce = cudaDeviceSynchronize()) != cudaSuccess)
            return hmmrt_fb_device_fail(err, errlen, ce, "the forward-backward kernel");
    }
    if ((ce = cudaMemcpy(g->lnp_host, g->lnp, (size_t)g->n_seqs * sizeof(double),
                         cudaMemcpyDeviceToHost)) != cudaSuccess)
        return hmmrt_fb_device_fail(err, errlen, ce, "cudaMemcpy of the scores");
    for (int64_t k = 0; k < g->n_seqs; k++)
        lnp[g->order[k]] = g->lnp_host[k];
    if ((ce = cudaMemcpy(move_counts, g->counts, nm * sizeof(double), cudaMemcpyDeviceToHost)) !=
            cudaSuccess ||
        (ce = cudaMemcpy(emission_counts, g->counts + nm, d->values * sizeof(double),
                         cudaMemcpyDeviceToHost)) != cudaSuccess)
        return hmmrt_fb_device_fail(err, errlen, ce, "cudaMemcpy of the counts");
    return 0;
}

void hmmrt_gpu_fb_describe(const hmmrt_gpu_trainer *g, char *buf, size_t len)
{
    hmmrt_fb_device_shape(&g->dev, buf, len);
}
