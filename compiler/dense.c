/* dense.c: recognises dense models and builds their matrix view (dense.h). */
#include "dense.h"

#include <math.h>

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

DenseView *dense_view(Arena *a, const IrModel *m, int viterbi)
{
    DenseView *d = ARENA_NEW(a, DenseView);
    int *index = dense_indexes(a, m, &d->n);
    int n = d->n;
    d->K = m->K;
    d->state_of = ARENA_ARRAY(a, int, n ? n : 1);
    d->start = ARENA_ARRAY(a, double, n ? n : 1);
    d->end = ARENA_ARRAY(a, double, n ? n : 1);
    d->matrix = ARENA_ARRAY(a, double, n ? (size_t)n * n : 1);
    d->emission = ARENA_ARRAY(a, double, n && m->K ? (size_t)n * m->K : 1);
    d->start_end = -INFINITY;
    for (size_t i = 0; i < (size_t)n * n; i++)
        d->matrix[i] = -INFINITY;
    for (int j = 0; j < n; j++)
        d->start[j] = d->end[j] = -INFINITY;
    for (int s = 0; s < m->n_states; s++)
        if (index[s] >= 0) {
            int j = index[s];
            d->state_of[j] = s;
            for (int c = 0; c < m->K; c++)
                d->emission[(size_t)c * n + j] = m->emissions[m->states[s].emission].logp[c];
        }
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        double w = viterbi ? mv->lw_max : mv->lw_sum;
        if (mv->from == m->start && mv->to == m->end)
            d->start_end = w;
        else if (mv->from == m->start)
            d->start[index[mv->to]] = w;
        else if (mv->to == m->end)
            d->end[index[mv->from]] = w;
        else {
            d->matrix[(size_t)index[mv->from] * n + index[mv->to]] = w;
            d->n_moves++;
        }
    }
    return d;
}
