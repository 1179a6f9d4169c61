/* backend_c_table.c: the table shape of the C backend, for models whose
 * straight-line code would take the C compiler too long: the moves in static
 * const tables and one loop per phase, giving the straight-line code's
 * numbers to the last bit. */

/* The call's moves become static const tables, in exactly the order the
 * straight-line code (emit_dp.c) evaluates them, and one generic loop per
 * phase walks them, doing the same operations in the same order, so both
 * shapes give the same numbers to the last bit:
 *   emitting phase, forward and viterbi: a row per live state (in state
 *     order); its moves in groups, one group per emission table in order of
 *     first use among the state's incoming moves; a group sums (forward) or
 *     maximises (viterbi) weight and previous value over its moves, then
 *     multiplies by (adds) the table's value once;
 *   emitting phase, backward: a row per live state, its emitting moves out
 *     (the next position's values), each with its own table;
 *   silent phase: a row per state taking silent moves, in dependency order
 *     (IrModel.silent_order; backward walks the rows in reverse);
 *   emission values symbol-major: the values of one symbol are one row.
 * Back pointers are the index of the chosen move among its state's incoming
 * moves, as in the straight-line code; the via lists and move tables that
 * tracebacks follow are backend_c.c's (hmmrt_paths), shared by both shapes.
 * Weights and values are written with emit_double, as the straight-line
 * code writes its literals, one line per row. */
#include "codegen/c/backend_c_table.h"

#include <math.h>
#include <string.h>

/* How many values a wrapped line of a per-row table holds. */
enum { VALUES_PER_LINE = 16 };

/* The moves of one phase as compressed rows: row r holds groups
 * group_start[r] .. group_start[r+1]-1; group g holds entries
 * entry_start[g] .. entry_start[g+1]-1 (for tables without groups, a group is
 * one entry). */
typedef struct PhaseTable {
    int n_rows, n_groups, n_entries;
    int *row_state;     /* the state each row computes */
    int *group_start;   /* n_rows + 1 */
    int *group_table;   /* emission table number of each group */
    int *entry_start;   /* n_groups + 1 */
    int *entry_move;    /* IR move index of each entry */
} PhaseTable;

typedef struct TableWriter {
    DpWriter *dp;
    const IrCall *call;
    FILE *out;
    const char *prefix; /* "c<index>_" */
    int n_tables, *table_of;
} TableWriter;

static PhaseTable phase_alloc(Arena *a, int rows, int moves)
{
    PhaseTable t = {0};
    t.row_state = ARENA_ARRAY(a, int, rows ? rows : 1);
    t.group_start = ARENA_ARRAY(a, int, rows + 1);
    t.group_table = ARENA_ARRAY(a, int, moves ? moves : 1);
    t.entry_start = ARENA_ARRAY(a, int, moves + 1);
    t.entry_move = ARENA_ARRAY(a, int, moves ? moves : 1);
    return t;
}

static void phase_add_entry(PhaseTable *t, int move) { t->entry_move[t->n_entries++] = move; }

static void phase_end_group(PhaseTable *t, int table)
{
    t->group_table[t->n_groups++] = table;
    t->entry_start[t->n_groups] = t->n_entries;
}

static void phase_end_row(PhaseTable *t, int state)
{
    t->row_state[t->n_rows++] = state;
    t->group_start[t->n_rows] = t->n_groups;
}

/* Forward and viterbi: emitting moves into each live state, grouped by
 * emission table in order of first use (as dp_forward_emitting groups them). */
static PhaseTable emitting_into(TableWriter *t)
{
    const DpWriter *w = t->dp;
    const IrModel *m = w->m;
    PhaseTable p = phase_alloc(w->arena, m->n_states, m->n_moves);
    int *done = ARENA_ARRAY(w->arena, int, m->n_moves ? m->n_moves : 1);
    for (int q = 0; q < m->n_states; q++) {
        if (!dp_live(m, q))
            continue;
        for (int k = w->in_start[q]; k < w->in_start[q + 1]; k++) {
            int em = m->moves[w->in_order[k]].emission;
            if (em < 0 || done[w->in_order[k]])
                continue;
            for (int j = k; j < w->in_start[q + 1]; j++)
                if (m->moves[w->in_order[j]].emission == em) {
                    done[w->in_order[j]] = 1;
                    phase_add_entry(&p, w->in_order[j]);
                }
            phase_end_group(&p, t->table_of[em]);
        }
        phase_end_row(&p, q);
    }
    return p;
}

/* Backward: emitting moves out of each live state, one entry a group. */
static PhaseTable emitting_out_of(TableWriter *t)
{
    const DpWriter *w = t->dp;
    const IrModel *m = w->m;
    PhaseTable p = phase_alloc(w->arena, m->n_states, m->n_moves);
    for (int s = 0; s < m->n_states; s++) {
        if (!dp_live(m, s))
            continue;
        for (int k = w->out_start[s]; k < w->out_start[s + 1]; k++) {
            const IrMove *mv = &m->moves[w->out_order[k]];
            if (mv->emission < 0)
                continue;
            phase_add_entry(&p, w->out_order[k]);
            phase_end_group(&p, t->table_of[mv->emission]);
        }
        phase_end_row(&p, s);
    }
    return p;
}

/* Silent moves into each state of the silent order, one entry a group. */
static PhaseTable silent_into(TableWriter *t)
{
    const DpWriter *w = t->dp;
    const IrModel *m = w->m;
    PhaseTable p = phase_alloc(w->arena, m->n_silent_order, m->n_moves);
    for (int i = 0; i < m->n_silent_order; i++) {
        int s = m->silent_order[i];
        for (int k = w->in_start[s]; k < w->in_start[s + 1]; k++)
            if (m->moves[w->in_order[k]].emission < 0) {
                phase_add_entry(&p, w->in_order[k]);
                phase_end_group(&p, -1);
            }
        phase_end_row(&p, s);
    }
    return p;
}

/* ---- writing tables ---------------------------------------------------------- */

/* The smallest of uint16_t and int32_t that holds 0..max. */
static const char *index_type(int max) { return max <= 65535 ? "uint16_t" : "int32_t"; }

/* Rows of a table's lines: entries start[r] .. start[r+1]-1 are row r's, on
 * one line with the state the row computes named in a comment. */
typedef struct Lines {
    int n;
    const int *start;
    const int *state;
} Lines;

/* Where line breaks go in a table of n values: at each row of `lines`, or
 * every VALUES_PER_LINE values without rows. Writes the break and the
 * comment; `row` walks the rows. */
static void line_break(TableWriter *t, const Lines *lines, int i, int *row)
{
    if (!lines) {
        if (i % VALUES_PER_LINE == 0)
            fputs("\n   ", t->out);
        return;
    }
    while (*row < lines->n && lines->start[*row + 1] <= i)
        ++*row; /* rows without entries have no line */
    if (i == lines->start[*row])
        fprintf(t->out, "\n    /* %s */", t->dp->m->states[lines->state[*row]].name);
}

static void write_ints(TableWriter *t, const char *type, const char *name, const int *v, int n,
                       const Lines *lines)
{
    fprintf(t->out, "static const %s %s%s[%d] = {", type, t->prefix, name, n ? n : 1);
    for (int i = 0, row = 0; i < n; i++) {
        line_break(t, lines, i, &row);
        fprintf(t->out, " %d,", v[i]);
    }
    fputs(n ? "\n};\n" : " 0};\n", t->out);
}

/* values[i] as written: v[i] itself (logs: viterbi) or e^v[i] (probabilities). */
static void write_doubles(TableWriter *t, const char *name, const double *v, int n,
                          const Lines *lines, int logs)
{
    char num[64];
    int wide = !logs && t->dp->wide_tables;
    fprintf(t->out, "static const %s %s%s[%d] = {", wide ? "long double" : "double", t->prefix,
            name, n ? n : 1);
    for (int i = 0, row = 0; i < n; i++) {
        line_break(t, lines, i, &row);
        fprintf(t->out, " %s,", logs ? emit_double(num, v[i]) : dp_probability(num, v[i], wide));
    }
    fputs(n ? "\n};\n" : " 0.0};\n", t->out);
}

/* The lines of a phase's per-entry tables: one per row. */
static Lines entry_lines(Arena *a, const PhaseTable *p)
{
    int *start = ARENA_ARRAY(a, int, p->n_rows + 1);
    for (int r = 0; r <= p->n_rows; r++)
        start[r] = p->entry_start[p->group_start[r]];
    return (Lines){p->n_rows, start, p->row_state};
}

/* The index of move i among the incoming moves of its destination. */
static int incoming_index(const DpWriter *w, int i)
{
    int to = w->m->moves[i].to;
    for (int k = w->in_start[to]; k < w->in_start[to + 1]; k++)
        if (w->in_order[k] == i)
            return k - w->in_start[to];
    return -1;
}

/* The tables of one phase, named NAME_row, NAME_group, NAME_table, NAME_from
 * (or NAME_to backward), NAME_w, NAME_bp; with_groups: row -> groups ->
 * entries, else rows of entries with a table per entry (backward) or none
 * (silent). */
static void write_phase(TableWriter *t, const PhaseTable *p, const char *name, int with_groups,
                        int with_tables)
{
    DpWriter *w = t->dp;
    Arena *a = w->arena;
    const IrModel *m = w->m;
    int viterbi = t->call->alg == ALG_VITERBI, backward = t->call->alg == ALG_BACKWARD;
    int n = p->n_entries;
    int *other = ARENA_ARRAY(a, int, n ? n : 1), *bp = ARENA_ARRAY(a, int, n ? n : 1);
    double *weight = ARENA_ARRAY(a, double, n ? n : 1);
    int phase = strcmp(name, "sl") == 0; /* the length weights of this phase's entries */
    w->phase_entries[phase] = n;
    w->length_entry[phase] = ARENA_ARRAY(a, int, n ? n : 1);
    w->length_entry_weight[phase] = ARENA_ARRAY(a, int, n ? n : 1);
    for (int k = 0; k < n; k++) {
        const IrMove *mv = &m->moves[p->entry_move[k]];
        other[k] = backward && mv->emission >= 0 ? mv->to : mv->from;
        weight[k] = viterbi ? mv->lw_max : mv->lw_sum;
        bp[k] = incoming_index(w, p->entry_move[k]);
        if (mv->length_weight) {
            int i = w->n_length_entries[phase]++;
            w->length_entry[phase][i] = k;
            w->length_entry_weight[phase][i] = mv->length_weight;
        }
    }
    Lines lines = entry_lines(a, p);
    const char *state_type = index_type(m->n_states);
    if (with_groups) {
        write_ints(t, "int32_t", arena_printf(a, "%s_row", name), p->group_start, p->n_rows + 1, NULL);
        write_ints(t, "int32_t", arena_printf(a, "%s_group", name), p->entry_start,
                   p->n_groups + 1, NULL);
        write_ints(t, index_type(t->n_tables), arena_printf(a, "%s_table", name), p->group_table,
                   p->n_groups, NULL);
    } else {
        write_ints(t, "int32_t", arena_printf(a, "%s_row", name), lines.start, p->n_rows + 1, NULL);
        if (with_tables)
            write_ints(t, index_type(t->n_tables), arena_printf(a, "%s_table", name),
                       p->group_table, p->n_groups, &lines);
    }
    write_ints(t, state_type, arena_printf(a, "%s_%s", name, backward && with_tables ? "to" : "from"),
               other, n, &lines);
    write_doubles(t, arena_printf(a, "%s_w", name), weight, n, &lines, viterbi);
    if (viterbi && w->back_pointers)
        write_ints(t, dp_bp_type(t->call->plan.bp_bytes), arena_printf(a, "%s_bp", name), bp, n,
                   &lines);
}

/* Emission values, symbol-major: PREFIXemit[c][table], probabilities or logs. */
static void write_emissions(TableWriter *t)
{
    const IrModel *m = t->dp->m;
    int *emission_of, logs = t->call->alg == ALG_VITERBI;
    char num[64];
    t->n_tables = dp_emission_tables(t->dp->arena, m, &t->table_of, &emission_of);
    if (m->real_dim) /* each position's row is computed (backend_c.c): no table */
        return;
    fprintf(t->out, "static const %s %semit[%d][%d] = {\n",
            t->dp->wide_tables ? "long double" : "double", t->prefix, m->K,
            t->n_tables ? t->n_tables : 1);
    for (int c = 0; c < m->K; c++) {
        fprintf(t->out, "    { /* %c */", m->symbols[c]);
        for (int i = 0; i < t->n_tables; i++) {
            double lp = m->emissions[emission_of[i]].logp[c];
            fprintf(t->out, " %s,",
                    logs ? emit_double(num, lp) : dp_probability(num, lp, t->dp->wide_tables));
        }
        fputs(t->n_tables ? " },\n" : " 0.0 },\n", t->out);
    }
    fputs("};\n", t->out);
}

void c_table_write_tables(DpWriter *w, const IrCall *call, const Layout *layout, int index)
{
    TableWriter t = {w, call, w->e->out, layout_name(layout, index, ""), 0, NULL};
    w->tables = t.prefix;
    w->weights = w->m->n_length_weights ? "" : t.prefix; /* c_table_length_weights */
    const IrModel *m = w->m;
    int backward = call->alg == ALG_BACKWARD;
    emit_comment(w->e, "call %d in the table shape: the moves of each phase as tables, walked by "
                       "one loop per phase in the order of the straight-line shape (%semit: "
                       "emission %s by symbol, then table; _row: where each row starts; "
                       "_group: where each group of moves sharing an emission table starts; "
                       "_%s, _w, _bp: each move's other state, %s and back pointer)",
                 index, t.prefix, call->alg == ALG_VITERBI ? "logs" : "probabilities",
                 backward ? "to" : "from", call->alg == ALG_VITERBI ? "ln weight" : "weight");
    write_emissions(&t);
    int *live = ARENA_ARRAY(w->arena, int, m->n_states), n_live = 0;
    for (int s = 0; s < m->n_states; s++)
        if (dp_live(m, s))
            live[n_live++] = s;
    write_ints(&t, index_type(m->n_states), "live", live, n_live, NULL);
    PhaseTable emitting = backward ? emitting_out_of(&t) : emitting_into(&t);
    write_phase(&t, &emitting, "em", !backward, 1);
    PhaseTable silent = silent_into(&t);
    write_ints(&t, index_type(m->n_states), "sl_state", silent.row_state, silent.n_rows, NULL);
    write_phase(&t, &silent, "sl", 0, 0);
}

void c_table_length_weights(DpWriter *w, int logs)
{
    static const char *phase_name[2] = {"em", "sl"};
    if (!w->m->n_length_weights)
        return;
    const char *type = !logs && w->wide_tables ? "long double" : "double";
    emit_comment(w->e, "the weight tables with this sequence's length-dependent weights in "
                       "them (the static tables hold their constant factors)");
    for (int phase = 0; phase < 2; phase++) {
        const char *name = phase_name[phase];
        int n = w->phase_entries[phase] ? w->phase_entries[phase] : 1;
        emit_line(w->e, "%s %s_w[%d];", type, name, n);
        emit_line(w->e, "memcpy(%s_w, %s%s_w, sizeof %s_w);", name, w->tables, name, name);
        for (int i = 0; i < w->n_length_entries[phase]; i++)
            emit_line(w->e, "%s_w[%d] %s %s;", name, w->length_entry[phase][i], logs ? "+=" : "*=",
                      dp_length_weight_name(w->arena, w->length_entry_weight[phase][i]));
    }
}

/* ---- the loops of one position -------------------------------------------- */

static int n_live(const IrModel *m)
{
    int n = 0;
    for (int s = 0; s < m->n_states; s++)
        n += dp_live(m, s);
    return n;
}

static void table_column_sum(DpWriter *w, const char *target)
{
    const char *space = strrchr(target, ' ');
    const char *name = space ? space + 1 : target;
    emit_line(w->e, "%s = 0.0;", target);
    emit_line(w->e, "for (int r = 0; r < %d; r++)", n_live(w->m));
    emit_line(w->e, "    %s += cur[%slive[r]];", name, w->tables);
}

/* Where a position's emission values are: the row of its symbol, or for
 * real observations the row of densities backend_c.c computes. */
static const char *emission_row(const DpWriter *w)
{
    return w->m->real_dim ? "row" : arena_printf(w->arena, "%semit[c]", w->tables);
}

/* The type of the emission tables: long double where the call's values lie
 * outside double's range (the straight-line code's long_double_only). */
static const char *emission_type(const DpWriter *w)
{
    return w->wide_tables ? "long double" : "double";
}

/* cur[q] = sum over groups of emission * (sum of weight * prev[from]). */
static void table_forward_emitting(DpWriter *w)
{
    const char *t = w->tables;
    emit_open(w->e, "/* the emitting moves, as the tables list them */");
    emit_line(w->e, "const %s *emission = %s;", w->m->real_dim ? w->value_type : emission_type(w),
              emission_row(w));
    emit_open(w->e, "for (int r = 0; r < %d; r++)", n_live(w->m));
    emit_line(w->e, "%s value = 0.0;", w->value_type);
    emit_open(w->e, "for (int g = %sem_row[r]; g < %sem_row[r + 1]; g++)", t, t);
    emit_line(w->e, "%s group = 0.0;", w->value_type);
    emit_line(w->e, "for (int k = %sem_group[g]; k < %sem_group[g + 1]; k++)", t, t);
    emit_line(w->e, "    group += %sem_w[k] * prev[%sem_from[k]];", w->weights, t);
    emit_line(w->e, "value += emission[%sem_table[g]] * group;", t);
    emit_close(w->e, "");
    emit_line(w->e, "cur[%slive[r]] = value;", t);
    emit_close(w->e, "");
    emit_close(w->e, "");
}

/* cur[s] += sum of weight * cur[from], in the silent order. */
static void table_forward_silent(DpWriter *w)
{
    const char *t = w->tables;
    if (!w->m->n_silent_order)
        return;
    emit_open(w->e, "for (int r = 0; r < %d; r++)", w->m->n_silent_order);
    emit_line(w->e, "%s add = 0.0;", w->value_type);
    emit_line(w->e, "for (int k = %ssl_row[r]; k < %ssl_row[r + 1]; k++)", t, t);
    emit_line(w->e, "    add += %ssl_w[k] * cur[%ssl_from[k]];", w->weights, t);
    emit_line(w->e, "cur[%ssl_state[r]] += add;", t);
    emit_close(w->e, "");
}

/* cur[p] = sum over emitting moves out of p of emission * weight * prev[to]. */
static void table_backward_emitting(DpWriter *w)
{
    const char *t = w->tables;
    emit_open(w->e, "/* the emitting moves, as the tables list them */");
    emit_line(w->e, "const %s *emission = %s;", w->m->real_dim ? w->value_type : emission_type(w),
              emission_row(w));
    emit_open(w->e, "for (int r = 0; r < %d; r++)", n_live(w->m));
    emit_line(w->e, "%s value = 0.0;", w->value_type);
    emit_line(w->e, "for (int k = %sem_row[r]; k < %sem_row[r + 1]; k++)", t, t);
    emit_line(w->e, "    value += emission[%sem_table[k]] * (%sem_w[k] * prev[%sem_to[k]]);", t,
              w->weights, t);
    emit_line(w->e, "cur[%slive[r]] = value;", t);
    emit_close(w->e, "");
    emit_close(w->e, "");
}

/* Silent moves in reverse order: cur[from] += weight * cur[s]. */
static void table_backward_silent(DpWriter *w)
{
    const char *t = w->tables;
    if (!w->m->n_silent_order)
        return;
    emit_open(w->e, "for (int r = %d; r >= 0; r--)", w->m->n_silent_order - 1);
    emit_line(w->e, "const int s = %ssl_state[r];", t);
    emit_line(w->e, "for (int k = %ssl_row[r]; k < %ssl_row[r + 1]; k++)", t, t);
    emit_line(w->e, "    cur[%ssl_from[k]] += %ssl_w[k] * cur[s];", t, w->weights);
    emit_close(w->e, "");
}

/* cur[q] = best over groups of (best of prev[from] + weight) + emission; the
 * back pointer is the index of the best move among q's incoming moves. */
static void table_viterbi_emitting(DpWriter *w)
{
    const char *t = w->tables;
    int *table_of, *emission_of;
    int n = dp_emission_tables(w->arena, w->m, &table_of, &emission_of);
    emit_open(w->e, "/* the emitting moves, as the tables list them */");
    emit_line(w->e, "double emission[%d]; /* less the previous column's best (backend_c.c) */",
              n ? n : 1);
    emit_line(w->e, "for (int t = 0; t < %d; t++)", n);
    emit_line(w->e, "    emission[t] = %s[t] - top;", emission_row(w));
    emit_open(w->e, "for (int r = 0; r < %d; r++)", n_live(w->m));
    emit_line(w->e, "const int q = %slive[r];", t);
    emit_line(w->e, "double best = -INFINITY;");
    emit_open(w->e, "for (int g = %sem_row[r]; g < %sem_row[r + 1]; g++)", t, t);
    emit_line(w->e, "double group = -INFINITY;");
    if (w->back_pointers)
        emit_line(w->e, "int arg = -1;");
    emit_open(w->e, "for (int k = %sem_group[g]; k < %sem_group[g + 1]; k++)", t, t);
    emit_line(w->e, "const double v = prev[%sem_from[k]] + %sem_w[k];", t, w->weights);
    if (w->back_pointers)
        emit_line(w->e, "if (v > group) { group = v; arg = %sem_bp[k]; }", t);
    else
        emit_line(w->e, "group = v > group ? v : group;");
    emit_close(w->e, "");
    emit_line(w->e, "group += emission[%sem_table[g]];", t);
    if (w->back_pointers)
        emit_line(w->e, "if (group > best) { best = group; bp[q] = arg; }");
    else
        emit_line(w->e, "best = group > best ? group : best;");
    emit_close(w->e, "");
    emit_line(w->e, "cur[q] = best;");
    emit_close(w->e, "");
    emit_close(w->e, "");
}

/* Silent moves in order: cur[s] = the best of itself and cur[from] + weight. */
static void table_viterbi_silent(DpWriter *w)
{
    const char *t = w->tables;
    if (!w->m->n_silent_order)
        return;
    emit_open(w->e, "for (int r = 0; r < %d; r++)", w->m->n_silent_order);
    emit_line(w->e, "const int s = %ssl_state[r];", t);
    emit_open(w->e, "for (int k = %ssl_row[r]; k < %ssl_row[r + 1]; k++)", t, t);
    emit_line(w->e, "const double v = cur[%ssl_from[k]] + %ssl_w[k];", t, w->weights);
    if (w->back_pointers)
        emit_line(w->e, "if (v > cur[s]) { cur[s] = v; bp[s] = %ssl_bp[k]; }", t);
    else
        emit_line(w->e, "if (v > cur[s]) cur[s] = v;");
    emit_close(w->e, "");
    emit_close(w->e, "");
}

static void table_viterbi_position(DpWriter *w)
{
    table_viterbi_emitting(w);
    table_viterbi_silent(w);
}

const PositionWriter position_table = {
    table_forward_emitting, table_forward_silent, table_backward_emitting,
    table_backward_silent,  table_viterbi_emitting, table_viterbi_silent, table_column_sum,
    table_viterbi_position,
};
