/* emit_dp.c: the statements of one position of forward, backward and
 * viterbi, move by move, shared by the C and CUDA backends. Emitting moves
 * into a state are grouped by emission table so that each table is read once
 * per state; a weight of 1 is left out. */
#include "emit_dp.h"

#include <math.h>
#include <string.h>

void dp_writer_init(DpWriter *w, Emitter *e, Arena *a, const IrModel *m)
{
    memset(w, 0, sizeof *w);
    w->e = e;
    w->arena = a;
    w->m = m;
    w->literal = "%s";
    w->value_type = "double";
    ir_incoming(a, m, &w->in_start, &w->in_order);
    int *start = ARENA_ARRAY(a, int, m->n_states + 1);
    int *order = ARENA_ARRAY(a, int, m->n_moves ? m->n_moves : 1);
    int *fill = ARENA_ARRAY(a, int, m->n_states);
    for (int i = 0; i < m->n_moves; i++)
        start[m->moves[i].from + 1]++;
    for (int s = 0; s < m->n_states; s++)
        start[s + 1] += start[s];
    for (int i = 0; i < m->n_moves; i++) {
        int from = m->moves[i].from;
        order[start[from] + fill[from]++] = i;
    }
    w->out_start = start;
    w->out_order = order;
}

int dp_live(const IrModel *m, int s) { return !m->states[s].folded; }

int dp_emission_tables(Arena *a, const IrModel *m, int **table_of, int **emission_of)
{
    int n = m->n_emissions ? m->n_emissions : 1, used = 0;
    *table_of = ARENA_ARRAY(a, int, n);
    *emission_of = ARENA_ARRAY(a, int, n);
    for (int em = 0; em < m->n_emissions; em++)
        (*table_of)[em] = -1;
    for (int i = 0; i < m->n_moves; i++) {
        int em = m->moves[i].emission;
        if (em >= 0 && (*table_of)[em] < 0) {
            (*emission_of)[used] = em;
            (*table_of)[em] = used++;
        }
    }
    return used;
}

const char *dp_bp_type(int bytes)
{
    return bytes == 1 ? "uint8_t" : bytes == 2 ? "uint16_t" : "uint32_t";
}

/* A number as the target spells it (buf holds 64 bytes). */
static const char *literal(const DpWriter *w, char buf[64], double v)
{
    char num[32];
    snprintf(buf, 64, w->literal, emit_double(num, v));
    return buf;
}

static void write_literal(const DpWriter *w, double v)
{
    char buf[64];
    fputs(literal(w, buf, v), w->e->out);
}

void dp_column_sum(DpWriter *w, const char *target)
{
    const IrModel *m = w->m;
    fprintf(w->e->out, "%*s%s =", 4 * w->e->indent, "", target);
    int terms = 0;
    for (int s = 0; s < m->n_states; s++)
        if (dp_live(m, s))
            fprintf(w->e->out, "%s cur[%d]", terms++ ? " +" : "", s);
    fprintf(w->e->out, "%s;\n", terms ? "" : " 0");
}

/* A product weight * column[state], with the weight left out when it is 1. */
static void write_term(const DpWriter *w, int first, double lw, const char *column, int state)
{
    FILE *o = w->e->out;
    if (lw == 0) {
        fprintf(o, "%s%s[%d]", first ? "" : " + ", column, state);
    } else {
        fprintf(o, "%s", first ? "" : " + ");
        write_literal(w, exp(lw));
        fprintf(o, " * %s[%d]", column, state);
    }
}

/* cur[q] = sum over emission tables E of moves into q of
 *          E[c] * (sum of weight * prev[from] over the moves emitting from E). */
void dp_forward_emitting(DpWriter *w)
{
    const IrModel *m = w->m;
    FILE *o = w->e->out;
    int *done = ARENA_ARRAY(w->arena, int, m->n_moves ? m->n_moves : 1);
    for (int q = 0; q < m->n_states; q++) {
        if (!dp_live(m, q))
            continue;
        fprintf(o, "%*scur[%d] =", 4 * w->e->indent, "", q);
        int groups = 0;
        for (int k = w->in_start[q]; k < w->in_start[q + 1]; k++) {
            const IrMove *first = &m->moves[w->in_order[k]];
            if (first->emission < 0 || done[w->in_order[k]])
                continue;
            fprintf(o, "%s %s%d[c] * (", groups++ ? " +" : "", w->prob_table, first->emission);
            int terms = 0;
            for (int j = k; j < w->in_start[q + 1]; j++) {
                const IrMove *mv = &m->moves[w->in_order[j]];
                if (mv->emission != first->emission)
                    continue;
                done[w->in_order[j]] = 1;
                write_term(w, !terms++, mv->lw_sum, "prev", mv->from);
            }
            fprintf(o, ")");
        }
        fprintf(o, "%s; /* %s */\n", groups ? "" : " 0.0", m->states[q].name);
    }
}

/* Silent moves in order: cur[s] += weight * cur[from]. */
void dp_forward_silent(DpWriter *w)
{
    const IrModel *m = w->m;
    for (int t = 0; t < m->n_silent_order; t++) {
        int s = m->silent_order[t];
        fprintf(w->e->out, "%*scur[%d] += ", 4 * w->e->indent, "", s);
        int terms = 0;
        for (int k = w->in_start[s]; k < w->in_start[s + 1]; k++) {
            const IrMove *mv = &m->moves[w->in_order[k]];
            if (mv->emission < 0)
                write_term(w, !terms++, mv->lw_sum, "cur", mv->from);
        }
        fprintf(w->e->out, "; /* %s */\n", m->states[s].name);
    }
}

/* Backward, emitting moves: cur[p] = sum over emitting moves out of p of
 * weight * emission[c] * prev[to] (prev is the column of the next position). */
void dp_backward_emitting(DpWriter *w)
{
    const IrModel *m = w->m;
    for (int p = 0; p < m->n_states; p++) {
        if (!dp_live(m, p))
            continue;
        fprintf(w->e->out, "%*scur[%d] =", 4 * w->e->indent, "", p);
        int terms = 0;
        for (int k = w->out_start[p]; k < w->out_start[p + 1]; k++) {
            const IrMove *mv = &m->moves[w->out_order[k]];
            if (mv->emission < 0)
                continue;
            fprintf(w->e->out, "%s %s%d[c] * ", terms ? " +" : "", w->prob_table, mv->emission);
            write_literal(w, exp(mv->lw_sum));
            fprintf(w->e->out, " * prev[%d]", mv->to);
            terms++;
        }
        fprintf(w->e->out, "%s; /* %s */\n", terms ? "" : " 0.0", m->states[p].name);
    }
}

/* Backward, silent moves in reverse order: cur[from] += weight * cur[s]. */
void dp_backward_silent(DpWriter *w)
{
    const IrModel *m = w->m;
    char num[64];
    for (int t = m->n_silent_order - 1; t >= 0; t--) {
        int s = m->silent_order[t];
        for (int k = w->in_start[s]; k < w->in_start[s + 1]; k++) {
            const IrMove *mv = &m->moves[w->in_order[k]];
            if (mv->emission >= 0)
                continue;
            emit_line(w->e, "cur[%d] += %s * cur[%d]; /* %s -> %s */", mv->from,
                      literal(w, num, exp(mv->lw_sum)), s, m->states[mv->from].name,
                      m->states[s].name);
        }
    }
}

/* cur[q] = best over emitting moves into q; the back pointer is the index of
 * the best move among q's incoming moves. */
/* Viterbi, one state: for each emission table of its incoming moves, the best
 * prev[from] + weight over that table's moves, plus the table's value once;
 * the best of those. With back pointers, the index (among q's incoming moves)
 * of the best move; it stays "none" when every candidate is -inf. */
void dp_viterbi_emitting(DpWriter *w)
{
    const IrModel *m = w->m;
    char num[64];
    int *done = ARENA_ARRAY(w->arena, int, m->n_moves ? m->n_moves : 1);
    for (int q = 0; q < m->n_states; q++) {
        if (!dp_live(m, q))
            continue;
        int any = 0;
        for (int k = w->in_start[q]; k < w->in_start[q + 1]; k++)
            any |= m->moves[w->in_order[k]].emission >= 0;
        if (!any) {
            emit_line(w->e, "cur[%d] = -INFINITY; /* %s */", q, m->states[q].name);
            continue;
        }
        emit_open(w->e, "/* %s */", m->states[q].name);
        emit_line(w->e, "%s best = -INFINITY, group, v;", w->value_type);
        if (w->back_pointers)
            emit_line(w->e, "int arg;");
        for (int k = w->in_start[q]; k < w->in_start[q + 1]; k++) {
            const IrMove *first = &m->moves[w->in_order[k]];
            if (first->emission < 0 || done[w->in_order[k]])
                continue;
            int n = 0;
            for (int j = k; j < w->in_start[q + 1]; j++) {
                const IrMove *mv = &m->moves[w->in_order[j]];
                if (mv->emission != first->emission)
                    continue;
                done[w->in_order[j]] = 1;
                const char *sum = arena_printf(w->arena, "prev[%d] + %s", mv->from,
                                               literal(w, num, mv->lw_max));
                if (n++ == 0) {
                    emit_line(w->e, "group = %s;", sum);
                    if (w->back_pointers)
                        emit_line(w->e, "arg = %d;", j - w->in_start[q]);
                    continue;
                }
                emit_line(w->e, "v = %s;", sum);
                if (w->back_pointers)
                    emit_line(w->e, "if (v > group) { group = v; arg = %d; }", j - w->in_start[q]);
                else
                    emit_line(w->e, "group = v > group ? v : group;");
            }
            emit_line(w->e, "group += %s%d[c];", w->log_table, first->emission);
            if (w->back_pointers)
                emit_line(w->e, "if (group > best) { best = group; bp[%d] = arg; }", q);
            else
                emit_line(w->e, "best = group > best ? group : best;");
        }
        emit_line(w->e, "cur[%d] = best;", q);
        emit_close(w->e, "");
    }
}

void dp_viterbi_silent(DpWriter *w)
{
    const IrModel *m = w->m;
    char num[64];
    for (int t = 0; t < m->n_silent_order; t++) {
        int s = m->silent_order[t];
        emit_open(w->e, "/* %s */", m->states[s].name);
        emit_line(w->e, "%s v;", w->value_type);
        for (int k = w->in_start[s]; k < w->in_start[s + 1]; k++) {
            const IrMove *mv = &m->moves[w->in_order[k]];
            if (mv->emission >= 0)
                continue;
            emit_line(w->e, "v = cur[%d] + %s;", mv->from, literal(w, num, mv->lw_max));
            if (w->back_pointers)
                emit_line(w->e, "if (v > cur[%d]) { cur[%d] = v; bp[%d] = %d; }", s, s, s,
                          k - w->in_start[s]);
            else
                emit_line(w->e, "if (v > cur[%d]) cur[%d] = v;", s, s);
        }
        emit_close(w->e, "");
    }
}

