/* real_fb_steps.c: the emitting moves by source for the GPU's backward, and
 * the CPU run of runtime/gpu/real_fb_kernel.cu's steps (forward storing its
 * columns, backward with posteriors, viterbi with back pointers), in the
 * kernels' order and precision, so that tests check their arithmetic
 * without a GPU. */
#include "real_fb_steps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/real_fb_math.cuh"

void hmmrt_rfb_moves_free(hmmrt_rfb_moves *m)
{
    free(m->out_start);
    free(m->out_to);
    free(m->out_em);
    free(m->out_logw);
    memset(m, 0, sizeof *m);
}

int hmmrt_rfb_moves_make(const hmmrt_rg_model *g, hmmrt_rfb_moves *out)
{
    const int n = g->n_states;
    memset(out, 0, sizeof *out);
    out->out_start = calloc((size_t)n + 1, sizeof *out->out_start);
    out->out_to = calloc((size_t)g->n_in + 1, sizeof *out->out_to);
    out->out_em = calloc((size_t)g->n_in + 1, sizeof *out->out_em);
    out->out_logw = calloc((size_t)g->n_in + 1, sizeof *out->out_logw);
    int *fill = calloc((size_t)n + 1, sizeof *fill);
    if (!out->out_start || !out->out_to || !out->out_em || !out->out_logw || !fill) {
        free(fill);
        hmmrt_rfb_moves_free(out);
        return -1;
    }
    for (int m = 0; m < g->n_in; m++)
        out->out_start[g->in_from[m] + 1]++;
    for (int q = 0; q < n; q++)
        out->out_start[q + 1] += out->out_start[q];
    for (int q = 0; q < n; q++)
        for (int m = g->in_start[q]; m < g->in_start[q + 1]; m++) {
            const int from = g->in_from[m], at = out->out_start[from] + fill[from]++;
            out->out_to[at] = q;
            out->out_em[at] = g->in_em[m];
            out->out_logw[at] = g->in_logw[m];
        }
    free(fill);
    return 0;
}

#define RFB_CPU(RT, SFX, LOG)                                                                  \
    static int run##SFX(const hmmrt_rg_model *g, const hmmrt_rfb_moves *mv, const double *obs, \
                        int64_t L, hmmrt_rfb_result *r)                                        \
    {                                                                                          \
        const int n = g->n_states, E = g->n_dens, N = g->n_in;                                 \
        const size_t cells = (size_t)(L > 0 ? L : 1) * (size_t)n;                              \
        RT *table = malloc(((size_t)(L > 0 ? L : 1) * E + cells + 4 * (size_t)n +          \
                            2 * (size_t)N + g->n_end + 4) * sizeof(RT));                       \
        double *a_off = malloc((size_t)(L > 0 ? L : 1) * sizeof *a_off);                       \
        int *bp = r->path ? malloc(cells * sizeof *bp) : NULL;                                 \
        double *erow = malloc(((size_t)E + 1) * sizeof *erow);                                 \
        if (!table || !a_off || !erow || (r->path && !bp)) {                                   \
            free(table), free(a_off), free(bp), free(erow);                                    \
            return -1;                                                                         \
        }                                                                                      \
        RT *alpha = table + (size_t)(L > 0 ? L : 1) * E;                                       \
        RT *col = alpha + cells, *nxt = col + n, *prev = nxt + n, *cur = prev + n;               \
        RT *in_logw = cur + n, *out_logw = in_logw + N, *end_logw = out_logw + N;              \
        for (int k = 0; k < N; k++) {                                                          \
            in_logw[k] = (RT)g->in_logw[k];                                                    \
            out_logw[k] = (RT)mv->out_logw[k];                                                 \
        }                                                                                      \
        for (int k = 0; k < g->n_end; k++)                                                     \
            end_logw[k] = (RT)g->end_logw[k];                                                  \
        for (int64_t i = 0; i < L; i++) {                                                      \
            hmmrt_rg_row_d(g, obs + (size_t)i * g->D, erow);                                   \
            for (int t = 0; t < E; t++)                                                        \
                table[(size_t)i * E + t] = (RT)erow[t];                                        \
        }                                                                                      \
        /* forward, every column kept */                                                       \
        for (int q = 0; q < n; q++)                                                            \
            col[q] = q == g->start ? (RT)0 : (RT)-INFINITY;                                    \
        double offset = 0;                                                                     \
        int dead = L == 0;                                                                     \
        for (int64_t i = 0; i < L && !dead; i++) {                                             \
            const RT *pv = i == 0 ? col : alpha + (size_t)(i - 1) * n;                         \
            RT *cu = alpha + (size_t)i * n, top = (RT)-INFINITY;                               \
            for (int q = 0; q < n; q++) {                                                      \
                cu[q] = hmmrt_rg_state##SFX(0, g->in_start[q], g->in_start[q + 1], g->in_from, \
                                            in_logw, g->in_em, pv, table + (size_t)i * E);     \
                top = cu[q] > top ? cu[q] : top;                                               \
            }                                                                                  \
            if (top == (RT)-INFINITY) {                                                        \
                dead = 1;                                                                      \
                break;                                                                         \
            }                                                                                  \
            for (int q = 0; q < n; q++)                                                        \
                cu[q] -= top;                                                                  \
            offset += (double)top;                                                             \
            a_off[i] = offset;                                                                 \
        }                                                                                      \
        RT top = (RT)-INFINITY, sum = 0;                                                       \
        for (int k = 0; k < g->n_end && !dead; k++)                                            \
            hmmrt_rg_lse_add##SFX(&top, &sum,                                                  \
                                  alpha[(size_t)(L - 1) * n + g->end_from[k]] + end_logw[k]);  \
        const double lnp = dead || top == (RT)-INFINITY ? -INFINITY                            \
                                                        : offset + (double)(top + LOG(sum));   \
        r->forward = lnp;                                                                      \
        r->backward = -INFINITY;                                                               \
        if (lnp != -INFINITY) { /* backward, with the posteriors */                            \
            for (int q = 0; q < n; q++)                                                        \
                nxt[q] = (RT)-INFINITY;                                                        \
            for (int k = 0; k < g->n_end; k++)                                                 \
                nxt[g->end_from[k]] = hmmrt_rfb_logadd##SFX(nxt[g->end_from[k]], end_logw[k]); \
            double b_off = 0;                                                                  \
            int ok = 1;                                                                        \
            for (int64_t i = L; i >= 1 && ok; i--) {                                           \
                RT t = (RT)-INFINITY;                                                          \
                for (int q = 0; q < n; q++) {                                                  \
                    col[q] = i < L ? hmmrt_rg_state##SFX(0, mv->out_start[q],                  \
                                                         mv->out_start[q + 1], mv->out_to,     \
                                                         out_logw, mv->out_em, nxt,            \
                                                         table + (size_t)i * E)                \
                                   : nxt[q];                                                   \
                    t = col[q] > t ? col[q] : t;                                               \
                }                                                                              \
                if (t == (RT)-INFINITY) {                                                      \
                    ok = 0;                                                                    \
                    break;                                                                     \
                }                                                                              \
                for (int q = 0; q < n; q++)                                                    \
                    col[q] -= t;                                                               \
                b_off += (double)t;                                                            \
                const RT c = (RT)(a_off[i - 1] + b_off - lnp);                                 \
                RT best = (RT)-INFINITY;                                                       \
                int arg = 0;                                                                   \
                for (int q = 0; q < n; q++) {                                                  \
                    const RT v = hmmrt_rfb_post##SFX(alpha[(size_t)(i - 1) * n + q], col[q], c); \
                    if (r->post)                                                               \
                        r->post[(size_t)(i - 1) * n + q] = (double)v;                          \
                    if (v > best) {                                                            \
                        best = v;                                                              \
                        arg = q;                                                               \
                    }                                                                          \
                }                                                                              \
                if (r->best)                                                                   \
                    r->best[i - 1] = arg;                                                      \
                RT *swap = nxt;                                                                \
                nxt = col;                                                                     \
                col = swap;                                                                    \
            }                                                                                  \
            if (ok) {                                                                          \
                const RT v = hmmrt_rg_state##SFX(0, mv->out_start[g->start],                   \
                                                 mv->out_start[g->start + 1], mv->out_to,      \
                                                 out_logw, mv->out_em, nxt, table);            \
                r->backward = v == (RT)-INFINITY ? -INFINITY : b_off + (double)v;              \
            }                                                                                  \
        }                                                                                      \
        r->viterbi = -INFINITY;                                                                \
        if (r->path) { /* viterbi with back pointers */                                        \
            for (int q = 0; q < n; q++)                                                        \
                prev[q] = q == g->start ? (RT)0 : (RT)-INFINITY;                               \
            double voff = 0;                                                                   \
            int vdead = L == 0;                                                                \
            for (int64_t i = 0; i < L && !vdead; i++) {                                        \
                RT t = (RT)-INFINITY;                                                          \
                for (int q = 0; q < n; q++) {                                                  \
                    cur[q] = hmmrt_rfb_best##SFX(g->in_start[q], g->in_start[q + 1],           \
                                                 g->in_from, in_logw, g->in_em, prev,          \
                                                 table + (size_t)i * E, &bp[(size_t)i * n + q]); \
                    t = cur[q] > t ? cur[q] : t;                                               \
                }                                                                              \
                if (t == (RT)-INFINITY) {                                                      \
                    vdead = 1;                                                                 \
                    break;                                                                     \
                }                                                                              \
                for (int q = 0; q < n; q++)                                                    \
                    prev[q] = cur[q] - t;                                                      \
                voff += (double)t;                                                             \
            }                                                                                  \
            RT vt = (RT)-INFINITY;                                                             \
            int last = -1;                                                                     \
            for (int k = 0; k < g->n_end && !vdead; k++) {                                     \
                const RT v = prev[g->end_from[k]] + end_logw[k];                               \
                if (v > vt) {                                                                  \
                    vt = v;                                                                    \
                    last = g->end_from[k];                                                     \
                }                                                                              \
            }                                                                                  \
            if (!vdead && last >= 0) {                                                         \
                r->viterbi = voff + (double)vt;                                                \
                for (int64_t i = L - 1; i >= 0; i--) {                                         \
                    r->path[i] = last;                                                         \
                    last = g->in_from[bp[(size_t)i * n + last]];                               \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        free(table), free(a_off), free(bp), free(erow);                                        \
        return 0;                                                                              \
    }

RFB_CPU(float, f, logf)
RFB_CPU(double, d, log)

int hmmrt_rfb_run_cpu(const hmmrt_rg_model *g, const hmmrt_rfb_moves *mv, int use_double,
                      const double *obs, int64_t L, hmmrt_rfb_result *r)
{
    return use_double ? rund(g, mv, obs, L, r) : runf(g, mv, obs, L, r);
}
