/* dense.c: recognises dense models and builds their matrix view (dense.h). */
#include "analysis/dense.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* index of each emitting live state among them, or -1 */
static int *dense_indexes(Arena *a, const IrModel *m, int *n)
{
    int *index = ARENA_ARRAY(a, int, m->n_states);
    *n = 0;
    for (int s = 0; s < m->n_states; s++)
        index[s] = !m->states[s].folded && m->states[s].kind == STATE_EMITTING ? (*n)++ : -1;
    return index;
}

int dense_fits(Arena *a, const IrModel *m, const char **why)
{
    const char *reason = NULL;
    int n;
    int *index = dense_indexes(a, m, &n);
    long inner = 0;
    for (int s = 0; s < m->n_states && !reason; s++)
        if (!m->states[s].folded && index[s] < 0 && s != m->start && s != m->end)
            reason = "a silent state other than the start and the end is kept";
    for (int i = 0; i < m->n_moves && !reason; i++) {
        const IrMove *mv = &m->moves[i];
        int from_ok = mv->from == m->start || index[mv->from] >= 0;
        if (mv->n_via > 0)
            reason = "a move stands for folded silent states";
        else if (mv->to == m->end ? !from_ok || mv->emission >= 0
                 : index[mv->to] < 0 || !from_ok ||
                   mv->emission != m->states[mv->to].emission)
            reason = "a move is not start or emitting state -> emitting state or end";
        else
            inner += mv->from != m->start && mv->to != m->end;
    }
    if (!reason && n < DENSE_MIN_STATES)
        reason = "too few emitting states";
    if (!reason && 2 * inner < (long)n * n)
        reason = "fewer than half of the pairs are joined";
    if (why)
        *why = reason;
    return reason == NULL;
}

static double move_weight(const IrMove *mv, int viterbi) { return viterbi ? mv->lw_max : mv->lw_sum; }

static DenseView *view(Arena *a, const IrModel *m, int viterbi, int tables)
{
    DenseView *d = ARENA_NEW(a, DenseView);
    int *index = dense_indexes(a, m, &d->n);
    size_t n = (size_t)d->n, K = (size_t)m->K;
    d->K = m->K;
    d->state_of = ARENA_ARRAY(a, int, n ? n : 1);
    d->start_end = -INFINITY;
    for (int s = 0; s < m->n_states; s++)
        if (index[s] >= 0)
            d->state_of[index[s]] = s;
    for (int i = 0; i < m->n_moves; i++)
        if (m->moves[i].from == m->start && m->moves[i].to == m->end)
            d->start_end = move_weight(&m->moves[i], viterbi);
    if (!tables)
        return d;
    d->matrix = xmalloc(sizeof(double) * (n ? n * n : 1));
    d->start = xmalloc(sizeof(double) * (n ? n : 1));
    d->end = xmalloc(sizeof(double) * (n ? n : 1));
    d->emission = xmalloc(sizeof(double) * (n && K ? n * K : 1));
    for (size_t i = 0; i < n * n; i++)
        d->matrix[i] = -INFINITY;
    for (size_t j = 0; j < n; j++)
        d->start[j] = d->end[j] = -INFINITY;
    for (size_t j = 0; j < n; j++)
        for (size_t c = 0; c < K; c++)
            d->emission[c * n + j] = m->emissions[m->states[d->state_of[j]].emission].logp[c];
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        double w = move_weight(mv, viterbi);
        if (mv->from == m->start && mv->to == m->end)
            continue;
        else if (mv->from == m->start)
            d->start[index[mv->to]] = w;
        else if (mv->to == m->end)
            d->end[index[mv->from]] = w;
        else {
            d->matrix[(size_t)index[mv->from] * n + (size_t)index[mv->to]] = w;
            d->n_moves++;
        }
    }
    return d;
}

DenseView *dense_view(Arena *a, const IrModel *m, int viterbi) { return view(a, m, viterbi, 1); }

DenseView *dense_view_header(Arena *a, const IrModel *m, int viterbi)
{
    return view(a, m, viterbi, 0);
}

void dense_view_free(DenseView *d)
{
    free(d->matrix), free(d->start), free(d->end), free(d->emission);
    d->matrix = d->start = d->end = d->emission = NULL;
}

int dense_same_view(const IrModel *a, int a_viterbi, const IrModel *b, int b_viterbi)
{
    if (a->moves != b->moves || a->n_moves != b->n_moves || a->n_states != b->n_states ||
        memcmp(a->states, b->states, sizeof(IrState) * (size_t)a->n_states) != 0)
        return 0;
    if (a_viterbi == b_viterbi)
        return 1;
    for (int i = 0; i < a->n_moves; i++)
        if (a->moves[i].lw_sum != a->moves[i].lw_max)
            return 0;
    return 1;
}
