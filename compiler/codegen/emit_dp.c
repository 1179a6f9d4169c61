/* emit_dp.c: the statements of one position of forward, backward and
 * viterbi, move by move, shared by the C and CUDA backends. Emitting moves
 * into a state are grouped by emission table so that each table is read once
 * per state; a weight of 1 is left out. */
#include "codegen/emit_dp.h"

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
    int *emission_of;
    dp_emission_tables(a, m, &w->table_of, &emission_of);
    ir_outgoing(a, m, &w->out_start, &w->out_order);
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

const char *dp_probability(char buf[64], double lw, int wide)
{
    if (wide && !ir_log_in_double(lw)) {
        snprintf(buf, 64, "%.21LgL", expl((long double)lw));
        return buf;
    }
    return emit_double(buf, exp(lw));
}

/* A weight given by its natural log lw, as the target spells it (the C
 * backend's wide tables: dp_probability). */
static const char *weight_literal(const DpWriter *w, char buf[64], double lw)
{
    return w->wide_tables ? dp_probability(buf, lw, 1) : literal(w, buf, exp(lw));
}

const char *dp_length_weight_name(Arena *a, int length_weight)
{
    return arena_printf(a, "lenw%d", length_weight - 1);
}

/* A move's weight as the code writes it: a literal, or for a
 * length-dependent weight the variable dp_length_weights declared, times
 * (plus, in logs) its constant factor when that is not 1. */
static const char *move_weight(const DpWriter *w, const IrMove *mv, int logs)
{
    char buf[64];
    double lw = logs ? mv->lw_max : mv->lw_sum;
    if (!mv->length_weight)
        return arena_strdup(w->arena, logs ? literal(w, buf, lw) : weight_literal(w, buf, lw));
    const char *name = dp_length_weight_name(w->arena, mv->length_weight);
    if (lw == 0)
        return name;
    if (logs)
        return arena_printf(w->arena, "(%s + %s)", name, literal(w, buf, lw));
    return arena_printf(w->arena, "%s * %s", name, weight_literal(w, buf, lw));
}

void dp_length_weights(DpWriter *w, int logs)
{
    const IrModel *m = w->m;
    for (int k = 0; k < m->n_length_weights; k++) {
        const IrLengthWeight *lw = &m->length_weights[k];
        emit_line(w->e, "const double %s = %s%s%s; /* (%s), line %d */",
                  dp_length_weight_name(w->arena, k + 1), logs ? "log(" : "", lw->c_text,
                  logs ? ")" : "", lexpr_source(w->arena, lw->expr), lw->loc.first_line);
    }
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

/* The value of emission em at the current symbol: PREFIX<em>[c], or
 * ROW[table number] when the writer reads a row per symbol. */
static const char *emission(const DpWriter *w, const char *prefix, int em)
{
    if (w->emission_row)
        return arena_printf(w->arena, "%s[%d]", w->emission_row, w->table_of[em]);
    return arena_printf(w->arena, "%s%d[c]", prefix, em);
}

/* A product weight * column[state], with the weight left out when it is 1. */
static void write_term(const DpWriter *w, int first, const IrMove *mv, const char *column, int state)
{
    FILE *o = w->e->out;
    if (mv->lw_sum == 0 && !mv->length_weight)
        fprintf(o, "%s%s[%d]", first ? "" : " + ", column, state);
    else
        fprintf(o, "%s%s * %s[%d]", first ? "" : " + ", move_weight(w, mv, 0), column, state);
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
            fprintf(o, "%s %s * (", groups++ ? " +" : "", emission(w, w->prob_table, first->emission));
            int terms = 0;
            for (int j = k; j < w->in_start[q + 1]; j++) {
                const IrMove *mv = &m->moves[w->in_order[j]];
                if (mv->emission != first->emission)
                    continue;
                done[w->in_order[j]] = 1;
                write_term(w, !terms++, mv, "prev", mv->from);
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
                write_term(w, !terms++, mv, "cur", mv->from);
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
            /* the weight times the value first: the product of two constants
               could leave the range that each of them is in */
            fprintf(w->e->out, "%s %s * (", terms ? " +" : "", emission(w, w->prob_table, mv->emission));
            fprintf(w->e->out, "%s * prev[%d])", move_weight(w, mv, 0), mv->to);
            terms++;
        }
        fprintf(w->e->out, "%s; /* %s */\n", terms ? "" : " 0.0", m->states[p].name);
    }
}

/* Backward, silent moves in reverse order: cur[from] += weight * cur[s]. */
void dp_backward_silent(DpWriter *w)
{
    const IrModel *m = w->m;
    for (int t = m->n_silent_order - 1; t >= 0; t--) {
        int s = m->silent_order[t];
        for (int k = w->in_start[s]; k < w->in_start[s + 1]; k++) {
            const IrMove *mv = &m->moves[w->in_order[k]];
            if (mv->emission >= 0)
                continue;
            emit_line(w->e, "cur[%d] += %s * cur[%d]; /* %s -> %s */", mv->from,
                      move_weight(w, mv, 0), s, m->states[mv->from].name,
                      m->states[s].name);
        }
    }
}

/* ---- viterbi --------------------------------------------------------------- */

/* Maxima over this many terms or more are spread over MAX_LANES running
 * maxima (max is exact and does not depend on order, so this changes no
 * value), which breaks the chain of dependent max instructions. */
enum { MANY_TERMS = 8, MAX_LANES = 4 };

/* "target = max(terms)" (or "target = max(target, terms)" when keep is set)
 * for the score-only case, branch-free: `v > best ? v : best` is one max
 * instruction. The caller has declared `v`. */
static void write_best_of(DpWriter *w, const char *target, char **terms, int n, int keep)
{
    if (n < MANY_TERMS) {
        for (int i = 0; i < n; i++) {
            if (i == 0 && !keep) {
                emit_line(w->e, "%s = %s;", target, terms[i]);
                continue;
            }
            emit_line(w->e, "v = %s;", terms[i]);
            emit_line(w->e, "%s = v > %s ? v : %s;", target, target, target);
        }
        return;
    }
    emit_open(w->e, "/* %d terms, over %d running maxima */", n, MAX_LANES);
    for (int l = 0; l < MAX_LANES; l++)
        emit_line(w->e, "%s lane%d = %s;", w->value_type, l, terms[l]);
    for (int i = MAX_LANES; i < n; i++) {
        int l = i % MAX_LANES;
        emit_line(w->e, "v = %s;", terms[i]);
        emit_line(w->e, "lane%d = v > lane%d ? v : lane%d;", l, l, l);
    }
    for (int step = 1; step < MAX_LANES; step *= 2)
        for (int l = 0; l + step < MAX_LANES; l += 2 * step)
            emit_line(w->e, "lane%d = lane%d > lane%d ? lane%d : lane%d;", l, l + step, l, l + step, l);
    if (keep)
        emit_line(w->e, "%s = lane0 > %s ? lane0 : %s;", target, target, target);
    else
        emit_line(w->e, "%s = lane0;", target);
    emit_close(w->e, "");
}

static int has_emitting_moves(const DpWriter *w, int q)
{
    for (int k = w->in_start[q]; k < w->in_start[q + 1]; k++)
        if (w->m->moves[w->in_order[k]].emission >= 0)
            return 1;
    return 0;
}

/* Viterbi, the emitting moves into one state q: for each emission table of
 * its incoming moves, the best prev[from] + weight over that table's moves,
 * plus the table's value once; the best of those. With back pointers, the
 * index (among q's incoming moves) of the best move; it stays "none" when
 * every candidate is -inf. */
static void write_viterbi_emitting_state(DpWriter *w, int q, int *done)
{
    const IrModel *m = w->m;
    if (!has_emitting_moves(w, q)) {
        emit_line(w->e, "cur[%d] = -INFINITY; /* %s */", q, m->states[q].name);
        return;
    }
    emit_open(w->e, "/* %s */", m->states[q].name);
    char **terms = ARENA_ARRAY(w->arena, char *, w->in_start[q + 1] - w->in_start[q]);
    int groups = 0, n_groups = 0, uses_v = 0;
    for (int k = w->in_start[q]; k < w->in_start[q + 1]; k++) {
        int em = m->moves[w->in_order[k]].emission, seen = 0;
        for (int j = w->in_start[q]; j < k; j++)
            seen |= m->moves[w->in_order[j]].emission == em;
        n_groups += em >= 0 && !seen;
        uses_v |= em >= 0 && seen; /* a group of two moves or more: v holds the second */
    }
    /* group: the running value of one table's moves, unless a single table's
     * best goes straight into best */
    const char *group = w->back_pointers || n_groups > 1 ? ", group" : "", *v = uses_v ? ", v" : "";
    if (w->back_pointers) {
        emit_line(w->e, "%s best = -INFINITY%s%s;", w->value_type, group, v);
        emit_line(w->e, "int arg;");
    } else {
        emit_line(w->e, "%s best%s%s;", w->value_type, group, v);
    }
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
            terms[n] = arena_printf(w->arena, "prev[%d] + %s", mv->from, move_weight(w, mv, 1));
            if (!w->back_pointers) {
                n++;
                continue;
            }
            if (n++ == 0) {
                emit_line(w->e, "group = %s;", terms[0]);
                emit_line(w->e, "arg = %d;", j - w->in_start[q]);
            } else {
                emit_line(w->e, "v = %s;", terms[n - 1]);
                emit_line(w->e, "if (v > group) { group = v; arg = %d; }", j - w->in_start[q]);
            }
        }
        if (!w->back_pointers && n_groups == 1) {
            write_best_of(w, "best", terms, n, 0);
            emit_line(w->e, "cur[%d] = best + %s;", q, emission(w, w->log_table, first->emission));
            break;
        }
        if (!w->back_pointers)
            write_best_of(w, "group", terms, n, 0);
        emit_line(w->e, "group += %s;", emission(w, w->log_table, first->emission));
        if (w->back_pointers)
            emit_line(w->e, "if (group > best) { best = group; bp[%d] = arg; }", q);
        else if (groups == 0)
            emit_line(w->e, "best = group;");
        else
            emit_line(w->e, "best = group > best ? group : best;");
        groups++;
    }
    if (w->back_pointers || n_groups > 1)
        emit_line(w->e, "cur[%d] = best;", q);
    emit_close(w->e, "");
}

/* Viterbi, the silent moves into one state s, after its emitting moves:
 * cur[s] = max(cur[s], cur[from] + weight). Score only: the maximum is
 * built in a local and stored once; a state without emitting moves starts
 * from its first silent move (its emitting value is -inf) when `fresh`. */
static void write_viterbi_silent_state(DpWriter *w, int s, int fresh)
{
    const IrModel *m = w->m;
    emit_open(w->e, "/* %s */", m->states[s].name);
    if (w->back_pointers)
        emit_line(w->e, "%s v;", w->value_type);
    else
        emit_line(w->e, "%s v, best%s;", w->value_type,
                  fresh ? "" : arena_printf(w->arena, " = cur[%d]", s));
    char **terms = ARENA_ARRAY(w->arena, char *, w->in_start[s + 1] - w->in_start[s]);
    int n = 0;
    for (int k = w->in_start[s]; k < w->in_start[s + 1]; k++) {
        const IrMove *mv = &m->moves[w->in_order[k]];
        if (mv->emission >= 0)
            continue;
        terms[n] = arena_printf(w->arena, "cur[%d] + %s", mv->from, move_weight(w, mv, 1));
        if (w->back_pointers) {
            emit_line(w->e, "v = %s;", terms[n]);
            emit_line(w->e, "if (v > cur[%d]) { cur[%d] = v; bp[%d] = %d; }", s, s, s,
                      k - w->in_start[s]);
        }
        n++;
    }
    if (!w->back_pointers) {
        write_best_of(w, "best", terms, n, !fresh);
        emit_line(w->e, "cur[%d] = best;", s);
        emit_line(w->e, "(void)v;");
    }
    emit_close(w->e, "");
}

void dp_viterbi_emitting(DpWriter *w)
{
    const IrModel *m = w->m;
    int *done = ARENA_ARRAY(w->arena, int, m->n_moves ? m->n_moves : 1);
    for (int q = 0; q < m->n_states; q++)
        if (dp_live(m, q))
            write_viterbi_emitting_state(w, q, done);
}

void dp_viterbi_silent(DpWriter *w)
{
    const IrModel *m = w->m;
    for (int t = 0; t < m->n_silent_order; t++)
        write_viterbi_silent_state(w, m->silent_order[t], 0);
}

/* One position as the two functions above compute it, in another order:
 * each silent state (in the silent order) is written as soon as the values
 * it reads are final, instead of after every emitting state. A chain of
 * silent states (a profile's deletes) then runs beside the emitting states'
 * work instead of after it: the processor overlaps the two. The statements
 * and the values are the same; only their order changes. */
void dp_viterbi_position(DpWriter *w)
{
    const IrModel *m = w->m;
    int *done = ARENA_ARRAY(w->arena, int, m->n_moves ? m->n_moves : 1);
    int *is_final = ARENA_ARRAY(w->arena, int, m->n_states);
    int *is_silent = ARENA_ARRAY(w->arena, int, m->n_states);
    int *emitted = ARENA_ARRAY(w->arena, int, m->n_states);
    for (int t = 0; t < m->n_silent_order; t++)
        is_silent[m->silent_order[t]] = 1;
    int next = 0; /* the next silent state to write */
    for (int q = 0; q <= m->n_states; q++) {
        if (q < m->n_states && dp_live(m, q)) {
            /* a state taking silent moves but no emitting ones is written
             * whole when its turn in the silent order comes */
            if (has_emitting_moves(w, q) || !is_silent[q])
                write_viterbi_emitting_state(w, q, done);
            emitted[q] = 1;
            is_final[q] = !is_silent[q];
        }
        for (; next < m->n_silent_order; next++) {
            int s = m->silent_order[next], ready = 1;
            int fresh = !has_emitting_moves(w, s);
            if (!fresh && !emitted[s])
                break;
            /* after the last emitting state everything is ready */
            for (int k = w->in_start[s]; k < w->in_start[s + 1] && ready && q < m->n_states; k++) {
                const IrMove *mv = &m->moves[w->in_order[k]];
                ready = mv->emission >= 0 || is_final[mv->from];
            }
            if (!ready)
                break;
            if (fresh && w->back_pointers)
                write_viterbi_emitting_state(w, s, done); /* cur[s] = -INFINITY */
            write_viterbi_silent_state(w, s, fresh && !w->back_pointers);
            is_final[s] = 1;
        }
    }
}
