/* scan_matrices.c: the host's half of the GPU scan (issue 24, docs/scan.md),
 * free of CUDA so that the CPU tests run it: the symbols' matrices made by
 * the calls' own span functions, the score (and viterbi's back pointers)
 * from the chunks' transfers, and the whole GPU scan emulated on the CPU
 * with the kernel's arithmetic (scan_chunk.h). */
#include "hmmrt_scan.h"
#include "scan_chunk.h"

#include <fenv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double LN2 = 0.693147180559945309417232121458176568;

int hmmrt_scan_pad(int nb)
{
    return nb <= 4 ? nb : nb <= 8 ? 8 : nb <= 16 ? 16 : 32;
}

int hmmrt_scan_matrices(const hmmrt_scan_call *sc, int K, int64_t L, int nbp, double *m,
                        int *me, double *mo, double *least)
{
    int n = sc->n_states, nb = sc->n_boundary;
    double columns[2 * n], value[nbp * nbp]; /* value[j * nbp + s]: from j to s */
    int64_t scales[nbp];
    *least = 1;
    for (int c = 0; c < K; c++) {
        const uint8_t x = (uint8_t)c;
        for (int j = 0; j < nbp; j++) {
            scales[j] = 0;
            for (int s = 0; s < nbp; s++)
                value[j * nbp + s] = sc->max_span ? -INFINITY : 0;
            if (j >= nb)
                continue; /* a padding state: no path */
            if (sc->max_span) {
                double offset[2] = {0, 0};
                for (int s = 0; s < n; s++)
                    columns[s] = -INFINITY;
                columns[sc->boundary[j]] = 0;
                sc->max_span(&x, L, 0, 1, columns, offset, 0);
                for (int s = 0; s < nb; s++)
                    value[j * nbp + s] = columns[sc->boundary[s]] + (offset[0] + offset[1]);
                continue;
            }
            int64_t scale = -960;
            memset(columns, 0, sizeof columns);
            columns[sc->boundary[j]] = 0x1p960;
            feclearexcept(FE_UNDERFLOW | FE_OVERFLOW);
            double got = sc->sum_span(&x, L, 0, 1, columns, &scale, 0);
            if (isnan(got))
                return -1;
            scales[j] = scale;
            for (int s = 0; s < nb; s++)
                value[j * nbp + s] = got == -INFINITY ? 0 : columns[sc->boundary[s]];
        }
        double *mc = m + (size_t)c * nbp * nbp; /* scan_chunk.h's layout: [s * nbp + j] */
        if (sc->max_span) {
            double top = -INFINITY;
            for (int k = 0; k < nbp * nbp; k++)
                top = value[k] > top ? value[k] : top;
            mo[c] = top > -INFINITY ? top : 0;
            for (int j = 0; j < nbp; j++)
                for (int s = 0; s < nbp; s++)
                    mc[s * nbp + j] = value[j * nbp + s] - mo[c];
            continue;
        }
        int64_t top = INT64_MIN;
        for (int j = 0; j < nb; j++)
            for (int s = 0; s < nb; s++)
                if (value[j * nbp + s] > 0 && ilogb(value[j * nbp + s]) + scales[j] > top)
                    top = ilogb(value[j * nbp + s]) + scales[j];
        me[c] = top == INT64_MIN ? 0 : (int)(top + 1); /* every entry below 1 */
        for (int j = 0; j < nbp; j++)
            for (int s = 0; s < nbp; s++) {
                double v = value[j * nbp + s];
                double e = v > 0 ? ldexp(v, (int)(scales[j] - me[c])) : 0;
                mc[s * nbp + j] = e;
                if (e > 0 && e < *least)
                    *least = e;
            }
    }
    return 0;
}

int hmmrt_scan_type(const hmmrt_scan_call *c, double least, int want_double)
{
    if (c->max_span)
        return want_double;
    if (least < 0x1p-300)
        return -1;
    return want_double || least < 0x1p-40;
}

void hmmrt_scan_cut(int64_t L, int64_t want, int64_t *chunk, int64_t *n_chunks)
{
    int64_t len = L - 2;
    want = want < 1 ? 1 : want > HMMRT_SCAN_GPU_MAX_CHUNKS ? HMMRT_SCAN_GPU_MAX_CHUNKS : want;
    int64_t c = len > 0 ? (len + want - 1) / want : 1;
    c = c < HMMRT_SCAN_GPU_MIN_CHUNK ? HMMRT_SCAN_GPU_MIN_CHUNK
        : c > HMMRT_SCAN_GPU_MAX_CHUNK ? HMMRT_SCAN_GPU_MAX_CHUNK
                                       : c;
    *chunk = (c + 15) / 16 * 16;
    *n_chunks = len > 0 ? (len + *chunk - 1) / *chunk : 0;
}

double hmmrt_scan_finish(const hmmrt_scan_call *sc, const void *x, int64_t L, int nbp,
                         int64_t n_chunks, hmmrt_scan_transfer_fn transfer, const void *ctx)
{
    int n = sc->n_states, nb = sc->n_boundary;
    int64_t head = sc->backward ? L - 1 : 0, tail = sc->backward ? 0 : L - 1;
    int ident[nbp];
    double columns[2 * n], v[nbp], next[nbp], t[nbp * nbp];
    int64_t e[nbp];
    for (int j = 0; j < nbp; j++)
        ident[j] = j;
    if (sc->max_span) {
        double offset[2] = {0, 0};
        sc->max_span(x, L, head, head + 1, columns, offset, 1);
        for (int j = 0; j < nbp; j++)
            v[j] = j < nb ? columns[sc->boundary[j]] + (offset[0] + offset[1]) : -INFINITY;
        for (int64_t q = 0; q < n_chunks; q++) {
            transfer(ctx, sc->backward ? n_chunks - 1 - q : q, t, e);
            hmmrt_scan_apply_max(nbp, nbp, ident, t, v, next);
            memcpy(v, next, sizeof v);
        }
        double top = -INFINITY;
        for (int j = 0; j < nb; j++)
            top = v[j] > top ? v[j] : top;
        if (top == -INFINITY)
            return -INFINITY;
        for (int q = 0; q < n; q++)
            columns[q] = -INFINITY;
        for (int j = 0; j < nb; j++)
            columns[sc->boundary[j]] = v[j] - top;
        offset[0] = top;
        offset[1] = 0;
        sc->max_span(x, L, tail, tail + 1, columns, offset, 0);
        return columns[sc->last] + (offset[0] + offset[1]);
    }
    int64_t ve = 0;
    feclearexcept(FE_UNDERFLOW | FE_OVERFLOW);
    double got = sc->sum_span(x, L, head, head + 1, columns, &ve, 1);
    if (isnan(got))
        return NAN;
    if (got == -INFINITY)
        return -INFINITY;
    for (int j = 0; j < nbp; j++)
        v[j] = j < nb ? columns[sc->boundary[j]] : 0;
    for (int64_t q = 0; q < n_chunks; q++) {
        transfer(ctx, sc->backward ? n_chunks - 1 - q : q, t, e);
        int status = hmmrt_scan_apply_sum(nbp, nbp, ident, t, e, v, ve, next, &ve);
        if (status == -1)
            return -INFINITY;
        if (status != 0)
            return NAN;
        memcpy(v, next, sizeof v);
    }
    memset(columns, 0, sizeof columns);
    for (int j = 0; j < nb; j++)
        columns[sc->boundary[j]] = v[j];
    feclearexcept(FE_UNDERFLOW | FE_OVERFLOW);
    got = sc->sum_span(x, L, tail, tail + 1, columns, &ve, 0);
    if (isnan(got))
        return NAN;
    if (got == -INFINITY || !(columns[sc->last] > 0))
        return -INFINITY;
    return log(columns[sc->last]) + (double)ve * LN2;
}

void hmmrt_scan_read_transfer(int nbp, int use_double, int max_plus, int64_t n_chunks,
                              const void *results, int64_t k, double *t, int64_t *e)
{
    size_t scales_at, status_at;
    hmmrt_scan_results(nbp, n_chunks, use_double, &scales_at, &status_at);
    const char *scales = (const char *)results + scales_at;
    for (int j = 0; j < nbp; j++) {
        size_t col = (size_t)k * nbp + j;
        for (int q = 0; q < nbp; q++) {
            size_t at = col * nbp + q;
            t[j * nbp + q] = use_double ? ((const double *)results)[at]
                                        : (double)((const float *)results)[at];
            if (max_plus)
                t[j * nbp + q] += ((const double *)scales)[col];
        }
        if (!max_plus)
            e[j] = ((const int64_t *)scales)[col];
    }
}

int hmmrt_scan_results_risky(int nbp, int64_t n_chunks, int use_double, const void *results)
{
    size_t scales_at, status_at;
    hmmrt_scan_results(nbp, n_chunks, use_double, &scales_at, &status_at);
    const int *status = (const int *)((const char *)results + status_at);
    for (int64_t k = 0; k < n_chunks * nbp; k++)
        if (status[k] == HMMRT_SCAN_RISKY)
            return 1;
    return 0;
}

double hmmrt_scan_finish_bp(const hmmrt_scan_call *sc, const void *x, int64_t L, int nbp,
                            int64_t n_chunks, int64_t chunk, hmmrt_scan_transfer_fn transfer,
                            const void *ctx, void *bp)
{
    int n = sc->n_states, nb = sc->n_boundary;
    int ident[nbp];
    for (int j = 0; j < nbp; j++)
        ident[j] = j;
    /* entries[k]: the boundary states' ln values before chunk k of the middle;
       entries[n_chunks]: before the last position */
    double *entries = malloc(sizeof(double) * (size_t)(n_chunks + 1) * nbp);
    if (!entries)
        return NAN;
    double columns[2 * n], offset[2] = {0, 0}, t[nbp * nbp];
    int64_t e[nbp];
    sc->max_span_bp(x, L, 0, 1, columns, offset, bp, 1);
    for (int j = 0; j < nbp; j++)
        entries[j] = j < nb ? columns[sc->boundary[j]] + (offset[0] + offset[1]) : -INFINITY;
    for (int64_t k = 0; k < n_chunks; k++) {
        transfer(ctx, k, t, e);
        hmmrt_scan_apply_max(nbp, nbp, ident, t, entries + k * nbp, entries + (k + 1) * nbp);
    }
    /* every chunk again from its exact entry, writing its rows (as scan.c's
       max_rerun), then the last position */
    double score = -INFINITY;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = 0; k <= n_chunks; k++) {
        const double *entry = entries + k * nbp;
        int64_t i0 = 1 + k * chunk, i1 = k == n_chunks ? L : 1 + (k + 1) * chunk;
        if (k == n_chunks)
            i0 = L - 1;
        else if (i1 > L - 1)
            i1 = L - 1;
        double col[2 * n], off[2] = {-INFINITY, 0};
        for (int j = 0; j < nb; j++)
            off[0] = entry[j] > off[0] ? entry[j] : off[0];
        if (off[0] == -INFINITY)
            continue; /* no path reaches this chunk: its rows are never read */
        for (int q = 0; q < n; q++)
            col[q] = -INFINITY;
        for (int j = 0; j < nb; j++)
            col[sc->boundary[j]] = entry[j] - off[0];
        sc->max_span_bp(x, L, i0, i1, col, off, bp, 0);
        if (k == n_chunks)
            score = col[sc->last] + (off[0] + off[1]);
    }
    free(entries);
    return score;
}

/* ---- the GPU scan on the CPU (tests) ---------------------------------------------------- */

typedef struct emulated {
    int nbp, use_double, max_plus;
    int64_t n_chunks;
    const void *results;
} emulated;

static void emulated_transfer(const void *ctx, int64_t k, double *t, int64_t *e)
{
    const emulated *em = ctx;
    hmmrt_scan_read_transfer(em->nbp, em->use_double, em->max_plus, em->n_chunks, em->results, k,
                             t, e);
}

double hmmrt_scan_emulate(const hmmrt_scan_call *sc, const uint8_t *x, int64_t L, int K,
                          int use_double, int64_t chunk, void *bp, int *status)
{
    int nbp = hmmrt_scan_pad(sc->n_boundary), max_plus = sc->max_span != NULL;
    size_t cells = (size_t)K * nbp * nbp, scales_at, status_at;
    int64_t len = L - 2, n_chunks = len > 0 ? (len + chunk - 1) / chunk : 0;
    double *m = malloc(sizeof(double) * (cells + (size_t)K));
    int *me = malloc(sizeof(int) * (size_t)K);
    float *mf = malloc(sizeof(float) * cells);
    void *results = NULL;
    double least = 1, score = NAN;
    *status = HMMRT_SCAN_LIVE;
    if (!m || !me || !mf ||
        hmmrt_scan_matrices(sc, K, L, nbp, m, me, m + cells, &least) != 0 ||
        (use_double = hmmrt_scan_type(sc, least, use_double)) < 0 ||
        !(results = malloc(hmmrt_scan_results(nbp, n_chunks, use_double, &scales_at,
                                              &status_at) + 8)))
        goto done;
    for (size_t k = 0; k < cells; k++)
        mf[k] = (float)m[k]; /* as scan_gpu.c stages them for a float launch */
    /* every thread of the launch, one after another */
    for (int64_t t = 0; t < n_chunks * nbp; t++) {
        if (use_double)
            hmmrt_scan_thread_d(nbp, m, me, m + cells, max_plus, sc->backward, x + 1, len, chunk,
                                t, (double *)results, (char *)results + scales_at,
                                (int *)((char *)results + status_at));
        else
            hmmrt_scan_thread_f(nbp, mf, me, m + cells, max_plus, sc->backward, x + 1, len, chunk,
                                t, (float *)results, (char *)results + scales_at,
                                (int *)((char *)results + status_at));
    }
    if (hmmrt_scan_results_risky(nbp, n_chunks, use_double, results)) {
        *status = HMMRT_SCAN_RISKY;
        goto done;
    }
    emulated em = {.nbp = nbp, .use_double = use_double, .max_plus = max_plus,
                   .n_chunks = n_chunks, .results = results};
    score = bp ? hmmrt_scan_finish_bp(sc, x, L, nbp, n_chunks, chunk, emulated_transfer, &em, bp)
               : hmmrt_scan_finish(sc, x, L, nbp, n_chunks, emulated_transfer, &em);
done:
    free(m);
    free(me);
    free(mf);
    free(results);
    return score;
}
