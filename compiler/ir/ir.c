/* ir.c: helpers over the model and program IR: names, deep copies, incoming
 * move lists, and the stable text dump used by --dump-after and golden tests. */
#include "ir/ir.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *algorithm_name(Algorithm alg)
{
    switch (alg) {
    case ALG_FORWARD: return "forward";
    case ALG_BACKWARD: return "backward";
    case ALG_VITERBI: return "viterbi";
    case ALG_POSTERIOR: return "posterior";
    }
    return "?";
}

const char *attr_name(unsigned attr)
{
    switch (attr) {
    case ATTR_SCORE: return "score";
    case ATTR_SCORE_TABLE: return "score&";
    case ATTR_TRACEBACK: return "traceback";
    case ATTR_TRACEBACK_TABLE: return "traceback&";
    case ATTR_SEGMENTS: return "segments";
    case ATTR_DECODE: return "decode";
    case ATTR_PROBABILITY_TABLE: return "probability&";
    }
    return "?";
}

IrModel *ir_model_copy(Arena *a, const IrModel *m)
{
    IrModel *c = ARENA_NEW(a, IrModel);
    *c = *m;
    c->states = ARENA_ARRAY(a, IrState, m->n_states);
    memcpy(c->states, m->states, sizeof(IrState) * (size_t)m->n_states);
    c->moves_shared = 1;
    c->move_fixed = NULL; /* training's tables follow the source's moves only */
    c->move_span = NULL;
    c->emission_fixed = NULL;
    c->emission_span = NULL;
    if (m->n_silent_order) {
        c->silent_order = ARENA_ARRAY(a, int, m->n_silent_order);
        memcpy(c->silent_order, m->silent_order, sizeof(int) * (size_t)m->n_silent_order);
    }
    return c; /* emissions are never changed by a pass, so they are shared */
}

void ir_model_own_moves(Arena *a, IrModel *m)
{
    if (!m->moves_shared)
        return;
    IrMove *own = ARENA_ARRAY(a, IrMove, m->n_moves ? m->n_moves : 1);
    memcpy(own, m->moves, sizeof(IrMove) * (size_t)m->n_moves);
    m->moves = own;
    m->moves_shared = 0;
}

static IrPaths *paths_of(Arena *a, IrModel *m)
{
    if (!m->paths)
        m->paths = ARENA_NEW(a, IrPaths);
    IrPaths *p = m->paths;
    if (p->n == 0) { /* node 0: the empty path */
        p->cap = 1024;
        p->node = arena_grow(a, NULL, 0, sizeof(IrPathNode) * (size_t)p->cap);
        p->node[0] = (IrPathNode){0, -1, 0, 0};
        p->n = 1;
    }
    return p;
}

int ir_path_join(Arena *a, IrModel *m, int left, int state, int right)
{
    IrPaths *p = paths_of(a, m);
    if (state < 0 && (left == 0 || right == 0))
        return left ? left : right;
    if (p->n == p->cap) {
        p->node = arena_grow(a, p->node, sizeof(IrPathNode) * (size_t)p->cap,
                             sizeof(IrPathNode) * (size_t)p->cap * 2);
        p->cap *= 2;
    }
    int length = p->node[left].length + (state >= 0) + p->node[right].length;
    p->node[p->n] = (IrPathNode){left, state, right, length};
    return p->n++;
}

int ir_path_length(const IrModel *m, int node)
{
    return node && m->paths ? m->paths->node[node].length : 0;
}

void ir_path_states(const IrModel *m, int node, int *out)
{
    if (!node || !m->paths)
        return;
    /* in order, without recursion (a path may nest 100,000 deep): a stack of
     * nodes whose left part is done, its depth bounded by the path's length */
    const IrPathNode *nodes = m->paths->node;
    int depth = 0, cap = 64, n = 0;
    int *stack = xmalloc(sizeof(int) * (size_t)cap);
    for (;;) {
        while (node) { /* go left, remembering each node */
            if (depth == cap) {
                cap *= 2;
                stack = xrealloc(stack, sizeof(int) * (size_t)cap);
            }
            stack[depth++] = node;
            node = nodes[node].left;
        }
        if (!depth)
            break;
        int top = stack[--depth];
        if (nodes[top].state >= 0)
            out[n++] = nodes[top].state;
        node = nodes[top].right;
    }
    free(stack);
}

void ir_move_via(const IrModel *m, const IrMove *mv, int *out)
{
    if (mv->n_via)
        ir_path_states(m, mv->via, out);
}

/* The moves grouped by destination (by_source 0) or by source, as
 * compressed rows in move order. */
static void move_rows(Arena *a, const IrModel *m, int by_source, int **start_out, int **order_out)
{
    int *start = ARENA_ARRAY(a, int, m->n_states + 1);
    int *order = ARENA_ARRAY(a, int, m->n_moves ? m->n_moves : 1);
    for (int i = 0; i < m->n_moves; i++)
        start[(by_source ? m->moves[i].from : m->moves[i].to) + 1]++;
    for (int s = 0; s < m->n_states; s++)
        start[s + 1] += start[s];
    int *fill = ARENA_ARRAY(a, int, m->n_states);
    for (int i = 0; i < m->n_moves; i++) {
        int s = by_source ? m->moves[i].from : m->moves[i].to;
        order[start[s] + fill[s]++] = i;
    }
    *start_out = start;
    *order_out = order;
}

void ir_incoming(Arena *a, const IrModel *m, int **start, int **order)
{
    move_rows(a, m, 0, start, order);
}

void ir_outgoing(Arena *a, const IrModel *m, int **start, int **order)
{
    move_rows(a, m, 1, start, order);
}

static const char *kind_name(StateKind k)
{
    switch (k) {
    case STATE_START: return "start";
    case STATE_END: return "end";
    case STATE_SILENT: return "silent";
    case STATE_EMITTING: return "emitting";
    }
    return "?";
}

/* Weights are printed with enough digits to be exact in a golden file yet stable. */
static void dump_weight(FILE *out, double lw)
{
    if (isinf(lw))
        fprintf(out, lw < 0 ? "-inf" : "inf");
    else
        fprintf(out, "%.9g", lw);
}

/* A density emission: gaussian(mean; factor; log_norm) or mixture(w name, ...). */
static void dump_density(const IrModel *m, const IrEmission *em, FILE *out, const char *indent)
{
    int D = m->real_dim;
    fprintf(out, "%s  emission %s ", indent, em->name);
    if (em->kind == EMISSION_MIXTURE) {
        fprintf(out, "mixture(");
        for (int k = 0; k < em->n_parts; k++) {
            fprintf(out, "%s", k ? ", " : "");
            dump_weight(out, em->log_weights[k]);
            fprintf(out, " %s", m->emissions[em->parts[k]].name);
        }
        fprintf(out, ")\n");
        return;
    }
    fprintf(out, "gaussian(mean");
    for (int i = 0; i < D; i++)
        fprintf(out, " %.9g", em->mean[i]);
    fprintf(out, "; %s", em->diagonal ? "sd" : "cholesky");
    int n = em->diagonal ? D : D * D;
    for (int i = 0; i < n; i++)
        if (em->diagonal || i % D <= i / D)
            fprintf(out, " %.9g", em->factor[i]);
    fprintf(out, "; log-norm %.9g)\n", em->log_norm);
}

static void dump_model(const IrModel *m, FILE *out, const char *indent)
{
    if (m->real_dim > 0)
        fprintf(out, "%smodel %s: alphabet real[%d]\n", indent, m->name, m->real_dim);
    else
        fprintf(out, "%smodel %s: alphabet \"%s\" (K=%d)\n", indent, m->name, m->symbols, m->K);
    for (int s = 0; s < m->n_states; s++) {
        const IrState *st = &m->states[s];
        fprintf(out, "%s  state %d %s %s", indent, s, st->name, kind_name(st->kind));
        if (st->emission >= 0)
            fprintf(out, " emits %s", m->emissions[st->emission].name);
        if (st->trimmed)
            fprintf(out, " trimmed");
        else if (st->folded)
            fprintf(out, " folded");
        if (st->aux_of >= 0)
            fprintf(out, " gathers-for %s", m->states[st->aux_of].name);
        fprintf(out, "\n");
    }
    for (int e = 0; e < m->n_emissions; e++) {
        if (m->emissions[e].kind != EMISSION_TABLE) {
            dump_density(m, &m->emissions[e], out, indent);
            continue;
        }
        fprintf(out, "%s  emission %s [", indent, m->emissions[e].name);
        for (int k = 0; k < m->K; k++) {
            if (k)
                fprintf(out, " ");
            dump_weight(out, m->emissions[e].logp[k]);
        }
        fprintf(out, "]%s\n", m->emission_fixed && m->emission_fixed[e] ? " fixed" : "");
    }
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        fprintf(out, "%s  move %s -> %s", indent, m->states[mv->from].name, m->states[mv->to].name);
        if (mv->emission >= 0)
            fprintf(out, " emits %s", m->emissions[mv->emission].name);
        else
            fprintf(out, " silent");
        fprintf(out, " sum ");
        dump_weight(out, mv->lw_sum);
        fprintf(out, " max ");
        dump_weight(out, mv->lw_max);
        if (mv->length_weight) {
            Arena a;
            arena_init(&a);
            fprintf(out, " times (%s)",
                    lexpr_source(&a, m->length_weights[mv->length_weight - 1].expr));
            arena_free(&a);
        }
        if (mv->n_via) {
            int *via = xmalloc(sizeof(int) * (size_t)mv->n_via);
            ir_move_via(m, mv, via);
            fprintf(out, " via");
            for (int v = 0; v < mv->n_via; v++)
                fprintf(out, " %s", m->states[via[v]].name);
            free(via);
        }
        if (m->move_fixed && m->move_fixed[i])
            fprintf(out, " fixed");
        fprintf(out, "\n");
    }
    if (m->n_silent_order) {
        fprintf(out, "%s  silent order", indent);
        for (int i = 0; i < m->n_silent_order; i++)
            fprintf(out, " %s", m->states[m->silent_order[i]].name);
        fprintf(out, "\n");
    }
}

static const char *storage_name(Storage s)
{
    switch (s) {
    case STORE_UNDECIDED: return "undecided";
    case STORE_TWO_COLUMNS: return "two-columns";
    case STORE_BACKPOINTERS: return "back-pointers";
    case STORE_WHOLE_TABLE: return "whole-table";
    case STORE_RUNTIME: return "runtime";
    }
    return "?";
}

void ir_dump(const Program *p, FILE *out)
{
    ir_dump_with(p, out, NULL, NULL);
}

void ir_dump_with(const Program *p, FILE *out,
                  void (*call_lines)(const void *ctx, int call, FILE *out), const void *ctx)
{
    fprintf(out, "program %s\n", p->path);
    for (int i = 0; i < p->n_models; i++)
        dump_model(&p->models[i], out, "");
    for (int c = 0; c < p->n_calls; c++) {
        const IrCall *call = &p->calls[c];
        fprintf(out, "call %d %s attrs", c, call->label);
        for (unsigned bit = 1; bit <= ATTR_PROBABILITY_TABLE; bit <<= 1)
            if (call->attrs & bit)
                fprintf(out, " %s", attr_name(bit));
        fprintf(out, " storage %s\n", storage_name(call->storage));
        if (call->plan.n_live)
            fprintf(out, "  plan live-states %d max-in-degree %d back-pointer-bytes %d dense %d "
                    "float-underflow %.17g float-overflow %.17g long-double-only %d\n",
                    call->plan.n_live, call->plan.max_in_degree, call->plan.bp_bytes,
                    call->plan.dense, call->plan.float_underflow, call->plan.float_overflow,
                    call->plan.long_double_only);
        if (call_lines)
            call_lines(ctx, c, out);
        dump_model(call->model, out, "  ");
    }
    for (int i = 0; i < p->n_prints; i++)
        fprintf(out, "print %d %s (call %d %s)\n", i, p->prints[i].label, p->prints[i].call,
                attr_name(p->prints[i].attr));
}

double ir_log_add(double x, double y)
{
    if (x == -INFINITY)
        return y;
    if (y == -INFINITY)
        return x;
    return x > y ? x + log1p(exp(y - x)) : y + log1p(exp(x - y));
}

int ir_log_in_double(double lw)
{
    return lw == -INFINITY || (lw >= log(DBL_MIN) && lw < log(DBL_MAX));
}

/* The range of the non-zero weights (sums) of m's live moves, leaving out
 * the moves i with held_apart[i] (NULL: none), and of the emission values
 * those moves use, widened to hold 1: least <= 0 <= most, as natural logs,
 * what a backend's literals must hold. */
static void live_log_range(const IrModel *m, const char *held_apart, double *least, double *most)
{
    *least = *most = 0;
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        if (m->states[mv->from].folded || m->states[mv->to].folded)
            continue;
        if ((!held_apart || !held_apart[i]) && mv->lw_sum > -INFINITY) {
            *least = fmin(*least, mv->lw_sum);
            *most = fmax(*most, mv->lw_sum);
        }
        for (int c = 0; mv->emission >= 0 && c < m->K; c++) {
            double lp = m->emissions[mv->emission].logp[c];
            if (lp > -INFINITY) {
                *least = fmin(*least, lp);
                *most = fmax(*most, lp);
            }
        }
    }
}

int ir_outside_double(const IrModel *m)
{
    double least, most;
    live_log_range(m, NULL, &least, &most);
    return !ir_log_in_double(least) || !ir_log_in_double(most);
}

double ir_float_overflow(const IrModel *m)
{
    double least, most;
    live_log_range(m, NULL, &least, &most);
    return most >= IR_LN_FLOAT_MAX ? most : 0;
}

double ir_float_underflow(const IrModel *m) { return ir_float_underflow_except(m, NULL); }

double ir_float_underflow_except(const IrModel *m, const char *held_apart)
{
    double least, most;
    live_log_range(m, held_apart, &least, &most);
    return least < IR_LN_FLOAT_MIN ? least : 0;
}
