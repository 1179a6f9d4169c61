/* ir_verify.c: the IR verifier (ir_verify.h): the invariants every pass
 * must keep, checked after sema and after each pass when HMMC_VERIFY_IR is
 * set (make's test targets set it), so that a pass that breaks one fails
 * where it broke it, not as a wrong number three stages later. */
#include "ir/ir_verify.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct Check {
    char *why;
    size_t len;
    int ok;
} Check;

static int fail(Check *c, const char *fmt, ...)
{
    if (c->ok) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->why, c->len, fmt, ap);
        va_end(ap);
    }
    c->ok = 0;
    return 0;
}

uint64_t ir_model_checksum(const IrModel *m)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a over the moves' fields */
    const unsigned char *bytes;
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        int ints[6] = {mv->from, mv->to, mv->emission, mv->n_via, mv->via, mv->length_weight};
        double logs[2] = {mv->lw_sum, mv->lw_max};
        bytes = (const unsigned char *)ints;
        for (size_t k = 0; k < sizeof ints; k++)
            h = (h ^ bytes[k]) * 1099511628211ULL;
        bytes = (const unsigned char *)logs;
        for (size_t k = 0; k < sizeof logs; k++)
            h = (h ^ bytes[k]) * 1099511628211ULL;
    }
    return h ^ (uint64_t)m->n_moves;
}

/* States, emissions and moves of one model. */
static int check_model(Check *c, const IrModel *m, const char *what)
{
    int n = m->n_states;
    if (m->start < 0 || m->start >= n || m->states[m->start].kind != STATE_START)
        return fail(c, "%s: the start state %d is not a start state", what, m->start);
    if (m->end < 0 || m->end >= n || m->states[m->end].kind != STATE_END)
        return fail(c, "%s: the end state %d is not an end state", what, m->end);
    for (int s = 0; s < n; s++) {
        const IrState *st = &m->states[s];
        int emits = st->kind == STATE_EMITTING;
        if (emits != (st->emission >= 0) || st->emission >= m->n_emissions)
            return fail(c, "%s: state %s has emission %d as a %s state", what, st->name,
                        st->emission, emits ? "emitting" : "silent");
        if (st->aux_of < -1 || st->aux_of >= n)
            return fail(c, "%s: state %s gathers for state %d, not a state", what, st->name,
                        st->aux_of);
        if (st->trimmed && !st->folded)
            return fail(c, "%s: state %s is trimmed but not marked folded", what, st->name);
    }
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        if (mv->from < 0 || mv->from >= n || mv->to < 0 || mv->to >= n)
            return fail(c, "%s: move %d goes from %d to %d, outside the %d states", what, i,
                        mv->from, mv->to, n);
        const IrState *to = &m->states[mv->to];
        if (mv->emission < -1 || mv->emission >= m->n_emissions)
            return fail(c, "%s: move %d emits from table %d of %d", what, i, mv->emission,
                        m->n_emissions);
        if (to->kind == STATE_EMITTING && mv->emission != to->emission)
            return fail(c, "%s: move %d into emitting state %s emits from table %d, not its %d",
                        what, i, to->name, mv->emission, to->emission);
        if (to->kind == STATE_START || m->states[mv->from].kind == STATE_END)
            return fail(c, "%s: move %d enters the start state or leaves the end state", what, i);
        if (isnan(mv->lw_sum) || isnan(mv->lw_max) || mv->lw_sum == INFINITY ||
            mv->lw_max == INFINITY)
            return fail(c, "%s: move %d (%s -> %s) weighs e^%g (sum), e^%g (best)", what, i,
                        m->states[mv->from].name, to->name, mv->lw_sum, mv->lw_max);
        /* the sum over the paths a move stands for is at least its best one */
        if (mv->lw_max > mv->lw_sum + 1e-12 * (1 + fabs(mv->lw_sum)))
            return fail(c, "%s: move %d (%s -> %s): its best path e^%.17g weighs more than the "
                        "sum of its paths e^%.17g", what, i, m->states[mv->from].name, to->name,
                        mv->lw_max, mv->lw_sum);
        if (mv->length_weight < 0 || mv->length_weight > m->n_length_weights)
            return fail(c, "%s: move %d has length weight %d of %d", what, i, mv->length_weight,
                        m->n_length_weights);
        if (mv->n_via < 0 || (mv->n_via > 0 && !m->paths))
            return fail(c, "%s: move %d has %d via states and no paths", what, i, mv->n_via);
        if (m->paths && (mv->via < 0 || mv->via >= m->paths->n ||
                         m->paths->node[mv->via].length != mv->n_via))
            return fail(c, "%s: move %d's via path %d does not hold its %d states", what, i,
                        mv->via, mv->n_via);
    }
    return 1;
}

/* After pass_order: every live silent move between live states goes from a
 * state earlier in silent_order (or one not in it) to a later one. */
static int check_silent_order(Check *c, Arena *a, const IrModel *m, const char *what)
{
    int *rank = ARENA_ARRAY(a, int, m->n_states ? m->n_states : 1);
    for (int s = 0; s < m->n_states; s++)
        rank[s] = -1;
    for (int t = 0; t < m->n_silent_order; t++) {
        int s = m->silent_order[t];
        if (s < 0 || s >= m->n_states || m->states[s].folded || rank[s] >= 0)
            return fail(c, "%s: silent order entry %d (state %d) is folded, repeated or not a "
                        "state", what, t, s);
        rank[s] = t;
    }
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        if (mv->emission >= 0 || m->states[mv->from].folded || m->states[mv->to].folded)
            continue;
        if (rank[mv->to] < 0)
            return fail(c, "%s: silent move %s -> %s enters a state missing from the silent order",
                        what, m->states[mv->from].name, m->states[mv->to].name);
        if (rank[mv->from] >= rank[mv->to])
            return fail(c, "%s: silent move %s -> %s goes back in the silent order", what,
                        m->states[mv->from].name, m->states[mv->to].name);
    }
    return 1;
}

int ir_verify(Arena *a, const Program *p, const char *after, const uint64_t *source_sums,
              char *why, size_t len)
{
    Check c = {why, len, 1};
    char what[256];
    int ordered = strcmp(after, "order") == 0 || strcmp(after, "plan") == 0;
    for (int i = 0; i < p->n_models; i++) {
        snprintf(what, sizeof what, "after %s, model %s", after, p->models[i].name);
        if (!check_model(&c, &p->models[i], what))
            return 0;
        if (source_sums && ir_model_checksum(&p->models[i]) != source_sums[i])
            return fail(&c, "%s: a pass changed the moves of the model as written (copy them "
                        "first: ir_model_own_moves)", what);
    }
    for (int k = 0; k < p->n_calls; k++) {
        const IrCall *call = &p->calls[k];
        const IrModel *m = call->model;
        snprintf(what, sizeof what, "after %s, call %s", after, call->label);
        if (call->model_index < 0 || call->model_index >= p->n_models)
            return fail(&c, "%s: runs model %d of %d", what, call->model_index, p->n_models);
        if (!check_model(&c, m, what))
            return 0;
        /* moves held by another model are shared, and only a model as written owns them */
        for (int j = 0; j < p->n_models; j++)
            if (p->models[j].moves == m->moves && m->n_moves && !m->moves_shared)
                return fail(&c, "%s: owns the moves of model %s", what, p->models[j].name);
        for (int j = 0; j < k; j++)
            if (p->calls[j].model->moves == m->moves && m->n_moves &&
                (!m->moves_shared || !p->calls[j].model->moves_shared))
                return fail(&c, "%s: shares its moves with %s, and one of them owns them", what,
                            p->calls[j].label);
        /* a posterior call runs on the model as written: no pass orders it */
        if (ordered && call->alg != ALG_POSTERIOR && !check_silent_order(&c, a, m, what))
            return 0;
    }
    return 1;
}
