/* fb_viterbi.c: the best path through a sequence over the model as written,
 * for viterbi training (--train --viterbi-training): each of its moves and
 * emitted symbols counted once a use. Scores are natural logs; silent cycles
 * are relaxed within each component (a cycle never improves a path: its
 * weights multiply to less than 1). */
#include "fb.h"
#include "internal.h"

#include <math.h>
#include <string.h>

size_t hmmrt_fb_viterbi_scratch(const hmmrt_fb *fb, int64_t L)
{
    size_t n = (size_t)fb->n;
    return ((size_t)L + 1) * n * sizeof(int) + 2 * n * sizeof(double) + 64;
}

/* Silent moves within column col (back pointers bp), in component order. */
static void silent_best(const hmmrt_fb *fb, double *col, int *bp)
{
    for (int c = 0; c < fb->n_comps; c++) {
        const int *st = fb->comp_state + fb->comp_start[c];
        int m = fb->comp_start[c + 1] - fb->comp_start[c];
        for (int k = 0; k < m; k++) {
            int v = st[k];
            for (int j = fb->in_start[v]; j < fb->in_start[v + 1]; j++) {
                int mi = fb->in[j];
                double s = col[fb->moves[mi].from] + log(fb->w[mi]);
                if (s > col[v]) {
                    col[v] = s;
                    bp[v] = mi;
                }
            }
        }
        /* within the component: m - 1 rounds of relaxation reach every best path */
        for (int round = 0; round + 1 < m || (m == 1 && round < 1); round++) {
            int changed = 0;
            for (int j = fb->inner_start[c]; j < fb->inner_start[c + 1]; j++) {
                int mi = fb->inner[j];
                const hmmrt_model_move *mv = &fb->moves[mi];
                double s = col[mv->from] + log(fb->w[mi]);
                if (s > col[mv->to]) {
                    col[mv->to] = s;
                    bp[mv->to] = mi;
                    changed = 1;
                }
            }
            if (!changed)
                break;
        }
    }
}

/* The emission values: ln of fb->e at symbol codes x, or (x NULL) a row of
 * logs per position, logs[i * n_emissions + em]; the counts use the same
 * index (value_at). */
typedef struct emit_src {
    const double *e;
    size_t em_step, pos_step;
    const uint8_t *x;
    int symbols; /* x is read, and e holds probabilities (else logs) */
} emit_src;

static inline size_t value_at(const emit_src *s, int em, int64_t i)
{
    return (size_t)em * s->em_step + (s->symbols ? (size_t)s->x[i] : (size_t)i) * s->pos_step;
}

static inline __attribute__((always_inline)) double
best_path(const hmmrt_fb *fb, const emit_src *src, int64_t L, void *scratch, double *move_counts,
          double *emission_counts, int *path, int64_t *n_path)
{
    const size_t n = (size_t)fb->n;
    int *bp = scratch;
    /* the columns after the back pointers, on a double's boundary (the
     * scratch's 64 spare bytes hold the rounding) */
    const size_t bp_bytes = ((size_t)L + 1) * n * sizeof(int);
    double *prev = (double *)((char *)scratch + (bp_bytes + 7) / 8 * 8);
    double *cur = prev + n;
    for (size_t q = 0; q < n; q++) {
        cur[q] = -INFINITY;
        bp[q] = -1;
    }
    cur[fb->start] = 0;
    silent_best(fb, cur, bp);
    for (int64_t i = 1; i <= L; i++) {
        double *swap = prev;
        prev = cur;
        cur = swap;
        int *row = bp + (size_t)i * n;
        for (size_t q = 0; q < n; q++) {
            cur[q] = -INFINITY;
            row[q] = -1;
        }
        for (size_t p = 0; p < n; p++) {
            if (prev[p] == -INFINITY)
                continue;
            for (int j = fb->emit_out_start[p]; j < fb->emit_out_start[p + 1]; j++) {
                int mi = fb->emit_out[j];
                const hmmrt_model_move *mv = &fb->moves[mi];
                const double v = src->e[value_at(src, mv->emission, i - 1)];
                double s = prev[p] + log(fb->w[mi]) + (src->symbols ? log(v) : v);
                if (s > cur[mv->to]) {
                    cur[mv->to] = s;
                    row[mv->to] = mi;
                }
            }
        }
        silent_best(fb, cur, row);
    }
    double best = cur[fb->end];
    if (best == -INFINITY || isnan(best))
        return -INFINITY;
    /* back from the end: an emitting move steps back one position */
    int q = fb->end;
    int64_t i = L, steps = 0, limit = ((int64_t)L + 1) * (int64_t)n + 1;
    while (!(q == fb->start && i == 0) && steps++ < limit) {
        int mi = bp[(size_t)i * n + (size_t)q];
        if (mi < 0)
            break;
        const hmmrt_model_move *mv = &fb->moves[mi];
        if (path) { /* the path's moves, last first (hits_domains.c) */
            path[(*n_path)++] = mi;
        } else {
            move_counts[mi] += 1;
            if (mv->emission >= 0)
                emission_counts[value_at(src, mv->emission, i - 1)] += 1;
        }
        if (mv->emission >= 0)
            i--;
        q = mv->from;
    }
    return best;
}

double hmmrt_fb_viterbi_counts(const hmmrt_fb *fb, const uint8_t *x, int64_t L, void *scratch,
                               double *move_counts, double *emission_counts)
{
    const emit_src src = {fb->e, (size_t)fb->K, 1, x, 1};
    return best_path(fb, &src, L, scratch, move_counts, emission_counts, NULL, NULL);
}

double hmmrt_fb_viterbi_counts_rows(const hmmrt_fb *fb, const double *logs, int64_t L,
                                    void *scratch, double *move_counts, double *use_rows)
{
    const emit_src src = {logs, 1, (size_t)fb->n_emissions, NULL, 0};
    return best_path(fb, &src, L, scratch, move_counts, use_rows, NULL, NULL);
}

double hmmrt_fb_viterbi_path(const hmmrt_fb *fb, const uint8_t *x, int64_t L, void *scratch,
                             int *path, int64_t *n_path)
{
    const emit_src src = {fb->e, (size_t)fb->K, 1, x, 1};
    *n_path = 0;
    return best_path(fb, &src, L, scratch, NULL, NULL, path, n_path);
}
