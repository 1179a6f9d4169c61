/* real_gpu_model.c: packs a model over real observations for the GPU path
 * (real_gpu_model.h) and runs the kernels' steps on the CPU, so that their
 * arithmetic is checked where there is no GPU. */
#include "real_gpu_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "gpu/real_math.cuh"

void hmmrt_rg_model_free(hmmrt_rg_model *g)
{
    free(g->par_at);
    free(g->diagonal);
    free(g->par);
    free(g->log_norm);
    free(g->part_start);
    free(g->part_gauss);
    free(g->part_logw);
    free(g->in_start);
    free(g->in_from);
    free(g->in_em);
    free(g->in_logw);
    free(g->end_from);
    free(g->end_logw);
    memset(g, 0, sizeof *g);
}

/* Why m's moves are not the GPU path's (NULL: they are): every silent move
 * goes into the end, none into the start, none out of the end. */
static const char *moves_refused(const hmmrt_model *m)
{
    if (!m->moves)
        return "its moves are a dense matrix";
    for (int k = 0; k < m->n_moves; k++) {
        const hmmrt_model_move *mv = &m->moves[k];
        if (!(mv->weight > 0))
            continue;
        if (mv->to == m->start || mv->from == m->end)
            return "a move goes into its start state or out of its end state";
        if (mv->emission < 0 && mv->to != m->end)
            return "it has silent states other than the start and the end";
        if (mv->emission >= 0 && mv->to == m->end)
            return "a move into its end state emits";
    }
    return NULL;
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(const hmmrt_gaussian *const *)a;
    uintptr_t y = (uintptr_t)*(const hmmrt_gaussian *const *)b;
    return x < y ? -1 : x > y;
}

/* The distinct gaussians of m's densities into g (index of each part's):
 * their addresses sorted, each found by bisection (80,000 in seed paper
 * 003's model). */
static int pack_gaussians(const hmmrt_densities *s, hmmrt_rg_model *g)
{
    int n_parts = 0;
    for (int t = 0; t < s->n; t++)
        n_parts += s->d[t].n_parts;
    const hmmrt_gaussian **seen = calloc((size_t)n_parts + 1, sizeof *seen);
    g->part_start = calloc((size_t)s->n + 1, sizeof *g->part_start);
    g->part_gauss = calloc((size_t)n_parts + 1, sizeof *g->part_gauss);
    g->part_logw = calloc((size_t)n_parts + 1, sizeof *g->part_logw);
    if (!seen || !g->part_start || !g->part_gauss || !g->part_logw) {
        free(seen);
        return -1;
    }
    int n_seen = 0;
    for (int t = 0; t < s->n; t++)
        for (int k = 0; k < s->d[t].n_parts; k++)
            seen[n_seen++] = s->d[t].parts[k];
    qsort(seen, (size_t)n_seen, sizeof *seen, by_address);
    for (int k = 0; k < n_seen; k++)
        if (g->n_gauss == 0 || seen[g->n_gauss - 1] != seen[k])
            seen[g->n_gauss++] = seen[k];
    int64_t n_par = 0;
    for (int j = 0; j < g->n_gauss; j++)
        n_par += s->D + (seen[j]->diagonal ? s->D : (int64_t)s->D * (s->D + 1) / 2);
    for (int t = 0; t < s->n; t++) {
        const hmmrt_density *d = &s->d[t];
        g->part_start[t] = g->n_parts;
        for (int k = 0; k < d->n_parts; k++) {
            const double lw = d->log_weights ? d->log_weights[k] : 0;
            if (lw == -INFINITY)
                continue;
            const hmmrt_gaussian **at = bsearch(&d->parts[k], seen, (size_t)g->n_gauss,
                                                sizeof *seen, by_address);
            g->part_gauss[g->n_parts] = (int)(at - seen);
            g->part_logw[g->n_parts++] = lw;
        }
        int here = g->n_parts - g->part_start[t];
        g->max_parts = here > g->max_parts ? here : g->max_parts;
    }
    g->part_start[s->n] = g->n_parts;
    g->par_at = calloc((size_t)g->n_gauss + 1, sizeof *g->par_at);
    g->diagonal = calloc((size_t)g->n_gauss + 1, sizeof *g->diagonal);
    g->log_norm = calloc((size_t)g->n_gauss + 1, sizeof *g->log_norm);
    g->par = calloc((size_t)n_par + 1, sizeof *g->par);
    if (!g->par_at || !g->diagonal || !g->log_norm || !g->par) {
        free(seen);
        return -1;
    }
    const int D = s->D;
    int64_t at = 0;
    for (int j = 0; j < g->n_gauss; j++) {
        const hmmrt_gaussian *ga = seen[j];
        g->par_at[j] = at;
        g->diagonal[j] = ga->diagonal;
        g->log_norm[j] = ga->log_norm;
        double *p = g->par + at;
        memcpy(p, ga->mean, (size_t)D * sizeof *p);
        p += D;
        if (ga->diagonal) {
            for (int i = 0; i < D; i++)
                p[i] = 1.0 / ga->factor[i];
        } else {
            for (int i = 0; i < D; i++) {
                double *row = p + hmmrt_rg_row(i);
                for (int k = 0; k < i; k++)
                    row[k] = ga->factor[(size_t)i * D + k];
                row[i] = 1.0 / ga->factor[(size_t)i * D + i];
            }
        }
        at += D + (ga->diagonal ? D : (int64_t)D * (D + 1) / 2);
        /* seed paper 003's count: 5 flops an off-diagonal covariance element,
         * 4 a diagonal one (for a diagonal gaussian only those) */
        g->flops_per_frame += ga->diagonal ? 4.0 * D : 4.0 * D + 5.0 * D * (D - 1);
    }
    g->n_par = n_par;
    /* and 9 a log-add of a mixture's parts */
    for (int t = 0; t < s->n; t++) {
        int k = g->part_start[t + 1] - g->part_start[t];
        g->flops_per_frame += k > 1 ? 9.0 * (k - 1) : 0;
    }
    free(seen);
    return 0;
}

static int pack_moves(const hmmrt_model *m, hmmrt_rg_model *g)
{
    const int n = m->n_states;
    g->in_start = calloc((size_t)n + 1, sizeof *g->in_start);
    g->in_from = calloc((size_t)m->n_moves + 1, sizeof *g->in_from);
    g->in_em = calloc((size_t)m->n_moves + 1, sizeof *g->in_em);
    g->in_logw = calloc((size_t)m->n_moves + 1, sizeof *g->in_logw);
    g->end_from = calloc((size_t)m->n_moves + 1, sizeof *g->end_from);
    g->end_logw = calloc((size_t)m->n_moves + 1, sizeof *g->end_logw);
    if (!g->in_start || !g->in_from || !g->in_em || !g->in_logw || !g->end_from || !g->end_logw)
        return -1;
    for (int k = 0; k < m->n_moves; k++)
        if (m->moves[k].weight > 0 && m->moves[k].emission >= 0)
            g->in_start[m->moves[k].to + 1]++;
    for (int q = 0; q < n; q++)
        g->in_start[q + 1] += g->in_start[q];
    int *fill = calloc((size_t)n + 1, sizeof *fill);
    if (!fill)
        return -1;
    for (int k = 0; k < m->n_moves; k++) { /* in the moves' order: the sums' order is fixed */
        const hmmrt_model_move *mv = &m->moves[k];
        if (!(mv->weight > 0))
            continue;
        if (mv->emission < 0) {
            g->end_from[g->n_end] = mv->from;
            g->end_logw[g->n_end++] = log(mv->weight);
            continue;
        }
        int at = g->in_start[mv->to] + fill[mv->to]++;
        g->in_from[at] = mv->from;
        g->in_em[at] = mv->emission;
        g->in_logw[at] = log(mv->weight);
    }
    g->n_in = g->in_start[n];
    free(fill);
    return 0;
}

int hmmrt_rg_model_make(const hmmrt_model *m, hmmrt_rg_model *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const hmmrt_densities *s = m->densities;
    const char *why = !s ? "it has no densities" : moves_refused(m);
    if (!why && s->D > HMMRT_RG_MAX_D)
        why = "its observations hold more reals than the GPU path's 64";
    if (why) {
        snprintf(err, errlen, "model %s: %s", m->name, why);
        return -1;
    }
    out->D = s->D;
    out->n_dens = s->n;
    out->n_states = m->n_states;
    out->start = m->start;
    out->end = m->end;
    if (pack_gaussians(s, out) != 0 || pack_moves(m, out) != 0) {
        hmmrt_rg_model_free(out);
        snprintf(err, errlen, "model %s: out of memory", m->name);
        return -1;
    }
    return 0;
}

void hmmrt_rg_par_float(const hmmrt_rg_model *g, float *out)
{
    for (int64_t i = 0; i < g->n_par; i++)
        out[i] = (float)g->par[i];
}

int hmmrt_rg_n_features(int D) { return D * (D + 1) / 2 + D + 1; }

void hmmrt_rg_feature_index(int D, int *feat_i, int *feat_k)
{
    int j = 0;
    for (int i = 0; i < D; i++)
        for (int k = 0; k <= i; k++, j++) {
            feat_i[j] = i;
            feat_k[j] = k;
        }
    for (int i = 0; i < D; i++, j++) {
        feat_i[j] = i;
        feat_k[j] = -1;
    }
    feat_i[j] = -1;
    feat_k[j] = -1;
}

/* Gaussian j's precision P (D x D) from its packed parameters: L^-1 by
 * forward substitution on the unit vectors, then L^-T L^-1. */
static void precision(const hmmrt_rg_model *g, int j, double *inv, double *P)
{
    const int D = g->D;
    const double *f = g->par + g->par_at[j] + D;
    memset(inv, 0, (size_t)D * D * sizeof *inv);
    if (g->diagonal[j]) {
        for (int i = 0; i < D; i++)
            inv[i * D + i] = f[i];
    } else {
        for (int c = 0; c < D; c++) /* column c of L^-1 */
            for (int i = c; i < D; i++) {
                const double *row = f + hmmrt_rg_row(i);
                double t = i == c ? 1 : 0;
                for (int k = c; k < i; k++)
                    t -= row[k] * inv[k * D + c];
                inv[i * D + c] = t * row[i];
            }
    }
    for (int i = 0; i < D; i++)
        for (int k = 0; k <= i; k++) {
            double t = 0;
            for (int m = i; m < D; m++) /* L^-1 is lower: rows m >= i, k */
                t += inv[m * D + i] * inv[m * D + k];
            P[i * D + k] = P[k * D + i] = t;
        }
}

int hmmrt_rg_gemm_weights(const hmmrt_rg_model *g, double *center, double *w)
{
    const int D = g->D, F = hmmrt_rg_n_features(D);
    for (int d = 0; d < D; d++) {
        double t = 0;
        for (int j = 0; j < g->n_gauss; j++)
            t += g->par[g->par_at[j] + d];
        center[d] = g->n_gauss ? t / g->n_gauss : 0;
    }
    int failed = 0;
#pragma omp parallel
    {
        double *inv = malloc((size_t)D * D * sizeof *inv), *P = malloc((size_t)D * D * sizeof *P);
        double mu[HMMRT_RG_MAX_D];
        if (!inv || !P) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 64)
        for (int j = 0; j < g->n_gauss; j++) {
            if (!inv || !P)
                continue;
            precision(g, j, inv, P);
            double *wj = w + (size_t)j * F, quad = 0;
            for (int d = 0; d < D; d++)
                mu[d] = g->par[g->par_at[j] + d] - center[d];
            int at = 0;
            for (int i = 0; i < D; i++)
                for (int k = 0; k <= i; k++)
                    wj[at++] = k == i ? -0.5 * P[i * D + i] : -P[i * D + k];
            for (int i = 0; i < D; i++) {
                double t = 0;
                for (int k = 0; k < D; k++)
                    t += P[i * D + k] * mu[k];
                quad += mu[i] * t;
                wj[at++] = t;
            }
            wj[at] = g->log_norm[j] - 0.5 * quad;
        }
        free(inv);
        free(P);
    }
    return failed ? -1 : 0;
}

/* The emission pass and the recursion for one precision, as the kernels
 * run them: rows of log-densities, then per position each state's step,
 * the column less its largest value, that value added to a double. */
#define RG_CPU(RT, SFX, LOG)                                                                   \
    static void row##SFX(const hmmrt_rg_model *g, const RT *par, const RT *norm,               \
                         const RT *logw, const RT *x, RT *row)                                 \
    {                                                                                          \
        for (int t = 0; t < g->n_dens; t++) {                                                  \
            RT top = (RT)-INFINITY, sum = 0;                                                   \
            for (int p = g->part_start[t]; p < g->part_start[t + 1]; p++) {                    \
                const int j = g->part_gauss[p];                                                \
                hmmrt_rg_lse_add##SFX(&top, &sum,                                              \
                                      logw[p] + hmmrt_rg_gaussian_log##SFX(par + g->par_at[j],  \
                                                                           g->diagonal[j],     \
                                                                           norm[j], g->D, x)); \
            }                                                                                  \
            row[t] = top == (RT)-INFINITY ? top : top + LOG(sum);                              \
        }                                                                                      \
    }                                                                                          \
    static void rowg##SFX(const hmmrt_rg_model *g, const RT *w, const RT *center,              \
                          const int *fi, const int *fk, const RT *logw, const RT *x, RT *xc,   \
                          RT *grow, RT *row)                                                   \
    {                                                                                          \
        const int F = hmmrt_rg_n_features(g->D);                                               \
        for (int d = 0; d < g->D; d++)                                                         \
            xc[d] = x[d] - center[d];                                                          \
        for (int j = 0; j < g->n_gauss; j++) {                                                 \
            RT t = 0;                                                                          \
            for (int f = 0; f < F; f++)                                                        \
                t += hmmrt_rg_feature##SFX(fi[f], fk[f], xc) * w[(size_t)j * F + f];           \
            grow[j] = t;                                                                       \
        }                                                                                      \
        for (int t = 0; t < g->n_dens; t++)                                                    \
            row[t] = hmmrt_rg_mix##SFX(g->part_start[t], g->part_start[t + 1], g->part_gauss,  \
                                       logw, grow);                                            \
    }                                                                                          \
    static double run##SFX(const hmmrt_rg_model *g, int viterbi, int gemm, const double *obs,  \
                           int64_t L)                                                          \
    {                                                                                          \
        const int n = g->n_states, F = hmmrt_rg_n_features(g->D);                              \
        RT *w = NULL, *center = NULL, *grow = NULL, *xc = NULL;                                \
        int *fi = NULL, *fk = NULL;                                                            \
        if (gemm) {                                                                            \
            double *wd = malloc((size_t)g->n_gauss * F * sizeof *wd), cd[HMMRT_RG_MAX_D];      \
            w = malloc((size_t)g->n_gauss * F * sizeof *w);                                    \
            center = malloc((size_t)(g->D + g->n_gauss + g->D) * sizeof *center);              \
            fi = malloc((size_t)2 * F * sizeof *fi);                                           \
            if (!wd || !w || !center || !fi || hmmrt_rg_gemm_weights(g, cd, wd) != 0) {        \
                free(wd), free(w), free(center), free(fi);                                     \
                return NAN;                                                                    \
            }                                                                                  \
            for (size_t k = 0; k < (size_t)g->n_gauss * F; k++)                                \
                w[k] = (RT)wd[k];                                                              \
            for (int d = 0; d < g->D; d++)                                                     \
                center[d] = (RT)cd[d];                                                         \
            grow = center + g->D;                                                              \
            xc = grow + g->n_gauss;                                                            \
            fk = fi + F;                                                                       \
            hmmrt_rg_feature_index(g->D, fi, fk);                                              \
            free(wd);                                                                          \
        }                                                                                      \
        RT *par = malloc(((size_t)g->n_par + g->n_gauss + g->n_parts + g->n_in + g->n_end +    \
                          g->n_dens + 2 * (size_t)n + g->D + 8) * sizeof(RT));                 \
        if (!par)                                                                              \
            return NAN;                                                                        \
        RT *norm = par + g->n_par, *logw = norm + g->n_gauss, *in_logw = logw + g->n_parts;    \
        RT *end_logw = in_logw + g->n_in, *row = end_logw + g->n_end, *prev = row + g->n_dens; \
        RT *cur = prev + n, *x = cur + n;                                                      \
        for (int64_t i = 0; i < g->n_par; i++)                                                 \
            par[i] = (RT)g->par[i];                                                            \
        for (int j = 0; j < g->n_gauss; j++)                                                   \
            norm[j] = (RT)g->log_norm[j];                                                      \
        for (int p = 0; p < g->n_parts; p++)                                                   \
            logw[p] = (RT)g->part_logw[p];                                                     \
        for (int k = 0; k < g->n_in; k++)                                                      \
            in_logw[k] = (RT)g->in_logw[k];                                                    \
        for (int k = 0; k < g->n_end; k++)                                                     \
            end_logw[k] = (RT)g->end_logw[k];                                                  \
        for (int q = 0; q < n; q++)                                                            \
            prev[q] = q == g->start ? (RT)0 : (RT)-INFINITY;                                   \
        double offset = 0;                                                                     \
        for (int64_t i = 0; i < L; i++) {                                                      \
            for (int d = 0; d < g->D; d++)                                                     \
                x[d] = (RT)obs[(size_t)i * g->D + d];                                          \
            if (gemm)                                                                          \
                rowg##SFX(g, w, center, fi, fk, logw, x, xc, grow, row);                       \
            else                                                                               \
                row##SFX(g, par, norm, logw, x, row);                                          \
            RT top = (RT)-INFINITY;                                                            \
            for (int q = 0; q < n; q++) {                                                      \
                cur[q] = hmmrt_rg_state##SFX(viterbi, g->in_start[q], g->in_start[q + 1],      \
                                             g->in_from, in_logw, g->in_em, prev, row);        \
                top = cur[q] > top ? cur[q] : top;                                             \
            }                                                                                  \
            if (top == (RT)-INFINITY) {                                                        \
                free(par), free(w), free(center), free(fi);                                    \
                return -INFINITY;                                                              \
            }                                                                                  \
            for (int q = 0; q < n; q++)                                                        \
                prev[q] = cur[q] - top;                                                        \
            offset += (double)top;                                                             \
        }                                                                                      \
        RT top = (RT)-INFINITY, sum = 0;                                                       \
        for (int k = 0; k < g->n_end; k++) {                                                   \
            const RT v = prev[g->end_from[k]] + end_logw[k];                                   \
            if (viterbi)                                                                       \
                top = v > top ? v : top;                                                       \
            else                                                                               \
                hmmrt_rg_lse_add##SFX(&top, &sum, v);                                          \
        }                                                                                      \
        free(par), free(w), free(center), free(fi);                                            \
        if (top == (RT)-INFINITY)                                                              \
            return -INFINITY;                                                                  \
        return offset + (double)(viterbi ? top : top + LOG(sum));                              \
    }

RG_CPU(float, f, logf)
RG_CPU(double, d, log)

double hmmrt_rg_score_cpu(const hmmrt_rg_model *g, int viterbi, int use_double,
                          const double *obs, int64_t L)
{
    return use_double ? rund(g, viterbi, 0, obs, L) : runf(g, viterbi, 0, obs, L);
}

double hmmrt_rg_score_cpu_gemm(const hmmrt_rg_model *g, int viterbi, int use_double,
                               const double *obs, int64_t L)
{
    return use_double ? rund(g, viterbi, 1, obs, L) : runf(g, viterbi, 1, obs, L);
}

void hmmrt_rg_row_d(const hmmrt_rg_model *g, const double *x, double *row)
{
    rowd(g, g->par, g->log_norm, g->part_logw, x, row);
}
