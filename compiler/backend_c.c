/* backend_c.c: the C backend. For every call of main it writes a C function
 * specialised to the call's model (its moves and weights written into the
 * code as straight-line statements, its emissions as tables indexed by the
 * symbol) and to what the call prints (two columns, back pointers, or whole
 * tables), in double precision:
 *   forward, backward: probabilities, each column rescaled by a power of two
 *                      when it leaves [2^-256, 2^256] (exact: a power of two
 *                      changes no digit), the exponents summed;
 *   viterbi:           natural logs, max and add.
 * The rest of the program (input, threads, output) is libhmmrt's. */
#include "backend.h"

#include <math.h>
#include <string.h>

#include "emit.h"

/* Everything the writer of one call needs. */
typedef struct CallWriter {
    Emitter *e;
    const Program *p;
    const IrCall *call;
    int index;          /* call number: names are c<index>_... */
    const IrModel *m;
    int *in_start, *in_order;   /* incoming moves per state (ir_incoming) */
    int *out_start, *out_order; /* outgoing moves per state */
    int alphabet;       /* index into the program's alphabets */
    int local_arrays;   /* columns as local arrays (small models) or scratch */
} CallWriter;

enum { LOCAL_ARRAY_MAX_STATES = 64 };

static int live(const IrModel *m, int s) { return !m->states[s].folded; }

/* Outgoing moves as compressed rows, like ir_incoming. */
static void outgoing(Arena *a, const IrModel *m, int **start_out, int **order_out)
{
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
    *start_out = start;
    *order_out = order;
}

/* ---- emission tables ------------------------------------------------------ */

/* The emission tables a call uses, as probabilities (forward, backward) or logs (viterbi). */
static void write_emission_tables(CallWriter *w)
{
    const IrModel *m = w->m;
    int in_logs = w->call->alg == ALG_VITERBI;
    char num[32];
    int *used = ARENA_ARRAY(w->p->arena, int, m->n_emissions ? m->n_emissions : 1);
    for (int i = 0; i < m->n_moves; i++)
        if (m->moves[i].emission >= 0)
            used[m->moves[i].emission] = 1;
    for (int em = 0; em < m->n_emissions; em++) {
        if (!used[em])
            continue;
        fprintf(w->e->out, "static const double c%d_%s%d[%d] = {", w->index, in_logs ? "le" : "e",
                em, m->K);
        for (int k = 0; k < m->K; k++) {
            double lp = m->emissions[em].logp[k];
            fprintf(w->e->out, "%s%s", k ? ", " : "", emit_double(num, in_logs ? lp : exp(lp)));
        }
        fprintf(w->e->out, "}; /* %s */\n", m->emissions[em].name);
    }
}

/* ---- forward -------------------------------------------------------------- */

/* A product weight * column[state], with the weight left out when it is 1. */
static void write_term(FILE *o, int first, double lw, const char *column, int state)
{
    char num[32];
    if (lw == 0)
        fprintf(o, "%s%s[%d]", first ? "" : " + ", column, state);
    else
        fprintf(o, "%s%s * %s[%d]", first ? "" : " + ", emit_double(num, exp(lw)), column, state);
}

/* cur[q] = sum over emission tables E of moves into q of
 *          E[c] * (sum of weight * prev[from] over the moves emitting from E). */
static void write_forward_emitting(CallWriter *w)
{
    const IrModel *m = w->m;
    FILE *o = w->e->out;
    int *done = ARENA_ARRAY(w->p->arena, int, m->n_moves ? m->n_moves : 1);
    for (int q = 0; q < m->n_states; q++) {
        if (!live(m, q))
            continue;
        fprintf(o, "%*scur[%d] =", 4 * w->e->indent, "", q);
        int groups = 0;
        for (int k = w->in_start[q]; k < w->in_start[q + 1]; k++) {
            const IrMove *first = &m->moves[w->in_order[k]];
            if (first->emission < 0 || done[w->in_order[k]])
                continue;
            fprintf(o, "%s c%d_e%d[c] * (", groups++ ? " +" : "", w->index, first->emission);
            int terms = 0;
            for (int j = k; j < w->in_start[q + 1]; j++) {
                const IrMove *mv = &m->moves[w->in_order[j]];
                if (mv->emission != first->emission)
                    continue;
                done[w->in_order[j]] = 1;
                write_term(o, !terms++, mv->lw_sum, "prev", mv->from);
            }
            fprintf(o, ")");
        }
        fprintf(o, "%s; /* %s */\n", groups ? "" : " 0.0", m->states[q].name);
    }
}

/* Silent moves in order: cur[s] += weight * cur[from]. */
static void write_forward_silent(CallWriter *w)
{
    const IrModel *m = w->m;
    for (int t = 0; t < m->n_silent_order; t++) {
        int s = m->silent_order[t];
        fprintf(w->e->out, "%*scur[%d] += ", 4 * w->e->indent, "", s);
        int terms = 0;
        for (int k = w->in_start[s]; k < w->in_start[s + 1]; k++) {
            const IrMove *mv = &m->moves[w->in_order[k]];
            if (mv->emission < 0)
                write_term(w->e->out, !terms++, mv->lw_sum, "cur", mv->from);
        }
        fprintf(w->e->out, "; /* %s */\n", m->states[s].name);
    }
}

/* Backward, emitting moves: cur[p] = sum over emitting moves out of p of
 * weight * emission[c] * prev[to] (prev is the column of the next position). */
static void write_backward_emitting(CallWriter *w)
{
    const IrModel *m = w->m;
    char num[32];
    for (int p = 0; p < m->n_states; p++) {
        if (!live(m, p))
            continue;
        fprintf(w->e->out, "%*scur[%d] =", 4 * w->e->indent, "", p);
        int terms = 0;
        for (int k = w->out_start[p]; k < w->out_start[p + 1]; k++) {
            const IrMove *mv = &m->moves[w->out_order[k]];
            if (mv->emission < 0)
                continue;
            fprintf(w->e->out, "%s c%d_e%d[c] * %s * prev[%d]", terms ? " +" : "", w->index,
                    mv->emission, emit_double(num, exp(mv->lw_sum)), mv->to);
            terms++;
        }
        fprintf(w->e->out, "%s; /* %s */\n", terms ? "" : " 0.0", m->states[p].name);
    }
}

/* Backward, silent moves in reverse order: cur[from] += weight * cur[s]. */
static void write_backward_silent(CallWriter *w)
{
    const IrModel *m = w->m;
    char num[32];
    for (int t = m->n_silent_order - 1; t >= 0; t--) {
        int s = m->silent_order[t];
        for (int k = w->in_start[s]; k < w->in_start[s + 1]; k++) {
            const IrMove *mv = &m->moves[w->in_order[k]];
            if (mv->emission >= 0)
                continue;
            emit_line(w->e, "cur[%d] += %s * cur[%d]; /* %s -> %s */", mv->from,
                      emit_double(num, exp(mv->lw_sum)), s, m->states[mv->from].name,
                      m->states[s].name);
        }
    }
}

/* The column sum, an early exit when no path is left, and exact rescaling. */
static void write_rescale(CallWriter *w)
{
    const IrModel *m = w->m;
    fprintf(w->e->out, "%*sdouble sum =", 4 * w->e->indent, "");
    int terms = 0;
    for (int s = 0; s < m->n_states; s++)
        if (live(m, s))
            fprintf(w->e->out, "%s cur[%d]", terms++ ? " +" : "", s);
    fprintf(w->e->out, "%s;\n", terms ? "" : " 0.0");
    emit_line(w->e, "if (!(sum > 0.0) && !table)");
    emit_line(w->e, "    return -INFINITY; /* no path emits the sequence so far */");
    emit_open(w->e, "if (sum < 0x1p-256 || sum > 0x1p256)");
    emit_line(w->e, "int exponent;");
    emit_line(w->e, "frexp(sum, &exponent);");
    emit_line(w->e, "const double factor = ldexp(1.0, -exponent);");
    emit_line(w->e, "for (int s = 0; s < %d; s++)", m->n_states);
    emit_line(w->e, "    cur[s] *= factor;");
    emit_line(w->e, "*scale += exponent;");
    emit_close(w->e, "");
}

static void write_store_table_column(CallWriter *w, const char *pos)
{
    emit_line(w->e, "if (table)");
    emit_line(w->e, "    for (int s = 0; s < %d; s++)", w->m->n_states);
    emit_line(w->e, "        table[(size_t)(%s) * %d + s] = log(cur[s]) + *scale * LN2;", pos,
              w->m->n_states);
}

/* The columns: local arrays for small models, scratch memory otherwise. */
static void write_columns(CallWriter *w)
{
    int n = w->m->n_states;
    if (w->local_arrays) {
        emit_line(w->e, "double column0[%d], column1[%d];", n, n);
    } else {
        emit_line(w->e, "double *column0 = columns, *column1 = columns + %d;", n);
    }
    emit_line(w->e, "double *prev = column0, *cur = column1;");
}

static void write_swap(CallWriter *w)
{
    emit_line(w->e, "double *swap = prev;");
    emit_line(w->e, "prev = cur;");
    emit_line(w->e, "cur = swap;");
}

static void write_forward(CallWriter *w)
{
    const IrModel *m = w->m;
    emit_comment(w->e, "ln of the forward score; column values are probabilities times 2^-*scale. "
                       "table, when not NULL, receives every column in logs.");
    emit_open(w->e, "static double c%d_forward(const uint8_t *x, int64_t L, double *columns, "
                    "double *table, int64_t *scale)", w->index);
    write_columns(w);
    emit_line(w->e, "(void)columns;");
    emit_line(w->e, "*scale = 0;");
    emit_line(w->e, "for (int s = 0; s < %d; s++)", m->n_states);
    emit_line(w->e, "    cur[s] = 0.0;");
    emit_line(w->e, "cur[%d] = 1.0; /* %s */", m->start, m->states[m->start].name);
    write_forward_silent(w);
    write_store_table_column(w, "0");
    emit_open(w->e, "for (int64_t i = 0; i < L; i++)");
    write_swap(w);
    emit_line(w->e, "const int c = x[i];");
    write_forward_emitting(w);
    write_forward_silent(w);
    write_rescale(w);
    write_store_table_column(w, "i + 1");
    emit_close(w->e, "");
    emit_line(w->e, "return log(cur[%d]) + (double)*scale * LN2; /* %s */", m->end,
              m->states[m->end].name);
    emit_close(w->e, "");
}

static void write_backward(CallWriter *w)
{
    const IrModel *m = w->m;
    emit_comment(w->e, "ln of the backward score, computed from the end of the sequence back; "
                       "table, when not NULL, receives every column in logs.");
    emit_open(w->e, "static double c%d_backward(const uint8_t *x, int64_t L, double *columns, "
                    "double *table, int64_t *scale)", w->index);
    write_columns(w);
    emit_line(w->e, "(void)columns;");
    emit_line(w->e, "*scale = 0;");
    emit_line(w->e, "for (int s = 0; s < %d; s++)", m->n_states);
    emit_line(w->e, "    cur[s] = 0.0;");
    emit_line(w->e, "cur[%d] = 1.0; /* %s */", m->end, m->states[m->end].name);
    write_backward_silent(w);
    write_store_table_column(w, "L");
    emit_open(w->e, "for (int64_t i = L - 1; i >= 0; i--)");
    write_swap(w);
    emit_line(w->e, "const int c = x[i];");
    write_backward_emitting(w);
    write_backward_silent(w);
    write_rescale(w);
    write_store_table_column(w, "i");
    emit_close(w->e, "");
    emit_line(w->e, "return log(cur[%d]) + (double)*scale * LN2; /* %s */", m->start,
              m->states[m->start].name);
    emit_close(w->e, "");
}

/* ---- viterbi -------------------------------------------------------------- */

static const char *bp_type(int bytes)
{
    return bytes == 1 ? "uint8_t" : bytes == 2 ? "uint16_t" : "uint32_t";
}

/* cur[q] = best over emitting moves into q; the back pointer is the index of
 * the best move among q's incoming moves. */
static void write_viterbi_emitting(CallWriter *w)
{
    const IrModel *m = w->m;
    char num[32];
    for (int q = 0; q < m->n_states; q++) {
        if (!live(m, q))
            continue;
        int any = 0;
        for (int k = w->in_start[q]; k < w->in_start[q + 1]; k++)
            any |= m->moves[w->in_order[k]].emission >= 0;
        if (!any) {
            emit_line(w->e, "cur[%d] = -INFINITY; /* %s */", q, m->states[q].name);
            continue;
        }
        emit_open(w->e, "/* %s */", m->states[q].name);
        emit_line(w->e, "double best = -INFINITY, v;");
        for (int k = w->in_start[q]; k < w->in_start[q + 1]; k++) {
            const IrMove *mv = &m->moves[w->in_order[k]];
            if (mv->emission < 0)
                continue;
            emit_line(w->e, "v = prev[%d] + %s + c%d_le%d[c];", mv->from,
                      emit_double(num, mv->lw_max), w->index, mv->emission);
            if (w->call->plan.bp_bytes)
                emit_line(w->e, "if (v > best) { best = v; bp[%d] = %d; }", q,
                          k - w->in_start[q]);
            else
                emit_line(w->e, "best = v > best ? v : best;");
        }
        emit_line(w->e, "cur[%d] = best;", q);
        emit_close(w->e, "");
    }
}

static void write_viterbi_silent(CallWriter *w)
{
    const IrModel *m = w->m;
    char num[32];
    for (int t = 0; t < m->n_silent_order; t++) {
        int s = m->silent_order[t];
        emit_open(w->e, "/* %s */", m->states[s].name);
        emit_line(w->e, "double v;");
        for (int k = w->in_start[s]; k < w->in_start[s + 1]; k++) {
            const IrMove *mv = &m->moves[w->in_order[k]];
            if (mv->emission >= 0)
                continue;
            emit_line(w->e, "v = cur[%d] + %s;", mv->from, emit_double(num, mv->lw_max));
            if (w->call->plan.bp_bytes)
                emit_line(w->e, "if (v > cur[%d]) { cur[%d] = v; bp[%d] = %d; }", s, s, s,
                          k - w->in_start[s]);
            else
                emit_line(w->e, "if (v > cur[%d]) cur[%d] = v;", s, s);
        }
        emit_close(w->e, "");
    }
}

static void write_viterbi(CallWriter *w)
{
    const IrModel *m = w->m;
    int bytes = w->call->plan.bp_bytes;
    const char *type = bp_type(bytes ? bytes : 1);
    emit_comment(w->e, "ln of the viterbi score. bp_table, when not NULL, receives the back "
                       "pointers of every cell (%d byte%s each); table, when not NULL, every "
                       "column.", bytes, bytes == 1 ? "" : "s");
    emit_open(w->e, "static double c%d_viterbi(const uint8_t *x, int64_t L, double *columns, "
                    "double *table, %s *bp_table)", w->index, type);
    write_columns(w);
    emit_line(w->e, "(void)columns;");
    if (bytes) {
        emit_line(w->e, "%s *bp = bp_table;", type);
        emit_line(w->e, "memset(bp, 0xff, sizeof(%s) * %d);", type, m->n_states);
    } else {
        emit_line(w->e, "(void)bp_table;");
    }
    emit_line(w->e, "for (int s = 0; s < %d; s++)", m->n_states);
    emit_line(w->e, "    cur[s] = -INFINITY;");
    emit_line(w->e, "cur[%d] = 0.0; /* %s */", m->start, m->states[m->start].name);
    write_viterbi_silent(w);
    emit_line(w->e, "if (table)");
    emit_line(w->e, "    memcpy(table, cur, sizeof(double) * %d);", m->n_states);
    emit_open(w->e, "for (int64_t i = 0; i < L; i++)");
    write_swap(w);
    emit_line(w->e, "const int c = x[i];");
    if (bytes) {
        emit_line(w->e, "bp = bp_table + (size_t)(i + 1) * %d;", m->n_states);
        emit_line(w->e, "memset(bp, 0xff, sizeof(%s) * %d);", type, m->n_states);
    }
    write_viterbi_emitting(w);
    write_viterbi_silent(w);
    emit_line(w->e, "if (table)");
    emit_line(w->e, "    memcpy(table + (size_t)(i + 1) * %d, cur, sizeof(double) * %d);",
              m->n_states, m->n_states);
    emit_close(w->e, "");
    emit_line(w->e, "return cur[%d]; /* %s */", m->end, m->states[m->end].name);
    emit_close(w->e, "");
}

/* The move tables hmmrt_traceback follows (viterbi calls that print a traceback). */
static void write_paths(CallWriter *w)
{
    const IrModel *m = w->m;
    FILE *o = w->e->out;
    int c = w->index;
    fprintf(o, "static const char *const c%d_names[] = {", c);
    for (int s = 0; s < m->n_states; s++)
        fprintf(o, "%s%s", s ? ", " : "", emit_string(m->states[s].name));
    fprintf(o, "};\nstatic const unsigned char c%d_hidden[] = {", c);
    for (int s = 0; s < m->n_states; s++)
        fprintf(o, "%s%d", s ? ", " : "", m->states[s].aux_of >= 0);
    fprintf(o, "};\nstatic const int c%d_in_start[] = {", c);
    for (int s = 0; s <= m->n_states; s++)
        fprintf(o, "%s%d", s ? ", " : "", w->in_start[s]);
    fprintf(o, "};\nstatic const int c%d_in_moves[] = {", c);
    for (int i = 0; i < m->n_moves; i++)
        fprintf(o, "%s%d", i ? ", " : "", w->in_order[i]);
    fprintf(o, "%s};\nstatic const int c%d_move_from[] = {", m->n_moves ? "" : "0", c);
    for (int i = 0; i < m->n_moves; i++)
        fprintf(o, "%s%d", i ? ", " : "", m->moves[i].from);
    fprintf(o, "%s};\nstatic const unsigned char c%d_move_emits[] = {", m->n_moves ? "" : "0", c);
    for (int i = 0; i < m->n_moves; i++)
        fprintf(o, "%s%d", i ? ", " : "", m->moves[i].emission >= 0);
    fprintf(o, "%s};\nstatic const int c%d_via_start[] = {0", m->n_moves ? "" : "0", c);
    int total = 0;
    for (int i = 0; i < m->n_moves; i++)
        fprintf(o, ", %d", total += m->moves[i].n_via);
    fprintf(o, "};\nstatic const int c%d_via[] = {", c);
    int first = 1;
    for (int i = 0; i < m->n_moves; i++)
        for (int v = 0; v < m->moves[i].n_via; v++, first = 0)
            fprintf(o, "%s%d", first ? "" : ", ", m->moves[i].via[v]);
    fprintf(o, "%s};\n", total ? "" : "0");
    fprintf(o, "static const hmmrt_paths c%d_paths = {%d, c%d_names, c%d_hidden, %d, %d, "
               "c%d_in_start, c%d_in_moves, c%d_move_from, c%d_move_emits, c%d_via_start, c%d_via};\n",
            c, m->n_states, c, c, m->start, m->end, c, c, c, c, c, c);
}

/* The states a whole table shows: every state of the source, in declaration
 * order; for backward, a state on a silent cycle is shown through the state
 * that gathers what enters it (its value counts the paths around the cycle). */
static void write_shown_states(CallWriter *w)
{
    const IrModel *m = w->m;
    fprintf(w->e->out, "static const int c%d_shown[] = {", w->index);
    int n = 0;
    for (int s = 0; s < m->n_states; s++) {
        if (m->states[s].aux_of >= 0)
            continue;
        int shown = s;
        for (int a = 0; a < m->n_states && w->call->alg == ALG_BACKWARD; a++)
            if (m->states[a].aux_of == s)
                shown = a;
        fprintf(w->e->out, "%s%d", n++ ? ", " : "", shown);
    }
    fprintf(w->e->out, "};\n");
}

static int n_source_states(const IrModel *m)
{
    int n = 0;
    for (int s = 0; s < m->n_states; s++)
        n += m->states[s].aux_of < 0;
    return n;
}

/* c<i>_run: runs the call on one sequence and fills the columns it prints. */
static void write_run(CallWriter *w)
{
    const IrCall *call = w->call;
    const IrModel *m = w->m;
    int c = w->index, n = m->n_states;
    int want_table = (call->attrs & ATTR_SCORE_TABLE) != 0;
    int bp_bytes = call->plan.bp_bytes;
    emit_open(w->e, "static int c%d_run(const hmmrt_seq *seq, hmmrt_value *values, "
                    "hmmrt_scratch *scratch)", c);
    emit_line(w->e, "const uint8_t *x = seq->codes[%d];", w->alphabet);
    emit_line(w->e, "const int64_t L = seq->length;");
    emit_line(w->e, "const size_t cells = (size_t)(L + 1) * %d;", n);
    emit_line(w->e, "size_t bytes = %s;",
              w->local_arrays ? "0" : arena_printf(w->p->arena, "sizeof(double) * %d", 2 * n));
    if (want_table)
        emit_line(w->e, "const size_t table_at = bytes; bytes += sizeof(double) * cells;");
    if (bp_bytes)
        emit_line(w->e, "const size_t bp_at = bytes; bytes += sizeof(%s) * cells + 64;",
                  bp_type(bp_bytes));
    emit_line(w->e, "char *mem = bytes ? hmmrt_scratch_get(scratch, bytes) : NULL;");
    emit_line(w->e, "if (bytes && !mem)");
    emit_line(w->e, "    return 1;");
    emit_line(w->e, "double *columns = (double *)mem;");
    emit_line(w->e, "(void)columns;");
    emit_line(w->e, "double *table = %s;", want_table ? "(double *)(mem + table_at)" : "NULL");
    if (call->alg == ALG_VITERBI) {
        if (bp_bytes)
            emit_line(w->e, "%s *bp = (%s *)(mem + bp_at);", bp_type(bp_bytes), bp_type(bp_bytes));
        emit_line(w->e, "const double score = c%d_viterbi(x, L, columns, table, %s);", c,
                  bp_bytes ? "bp" : "NULL");
    } else {
        emit_line(w->e, "int64_t scale;");
        emit_line(w->e, "const double score = c%d_%s(x, L, columns, table, &scale);", c,
                  algorithm_name(call->alg));
    }
    for (int i = 0; i < w->p->n_prints; i++) {
        const IrPrint *pr = &w->p->prints[i];
        if (pr->call != c)
            continue;
        switch (pr->attr) {
        case ATTR_SCORE:
            emit_line(w->e, "values[%d].score = score;", i);
            break;
        case ATTR_SCORE_TABLE:
            emit_line(w->e, "hmmrt_buf_table(&values[%d].text, table, L + 1, %d, c%d_shown, %d);",
                      i, n, c, n_source_states(m));
            break;
        case ATTR_TRACEBACK:
            emit_open(w->e, "if (score == -INFINITY)");
            emit_line(w->e, "hmmrt_buf_puts(&values[%d].text, \"-\");", i);
            emit_close(w->e, "");
            emit_line(w->e, "else if (hmmrt_traceback(&c%d_paths, bp, %d, L, &values[%d].text) != 0)",
                      c, bp_bytes, i);
            emit_line(w->e, "    return 2;");
            break;
        case ATTR_TRACEBACK_TABLE:
            emit_line(w->e, "hmmrt_traceback_table(&c%d_paths, bp, %d, L, c%d_shown, %d, "
                            "&values[%d].text);", c, bp_bytes, c, n_source_states(m), i);
            break;
        }
    }
    emit_line(w->e, "return 0;");
    emit_close(w->e, "");
}

static void write_call(Emitter *e, const Program *p, int index, const int *model_alphabet)
{
    const IrCall *call = &p->calls[index];
    CallWriter w = {.e = e, .p = p, .call = call, .index = index, .m = call->model};
    ir_incoming(p->arena, w.m, &w.in_start, &w.in_order);
    outgoing(p->arena, w.m, &w.out_start, &w.out_order);
    w.alphabet = model_alphabet[call->model_index];
    w.local_arrays = w.m->n_states <= LOCAL_ARRAY_MAX_STATES;
    emit_blank(e);
    emit_comment(e, "==== call %d: %s; %d live states, %d moves, %d state%s taking silent moves "
                    "in order; keeps %s ====", index, call->label, call->plan.n_live, w.m->n_moves,
                 w.m->n_silent_order, w.m->n_silent_order == 1 ? "" : "s",
                 call->storage == STORE_WHOLE_TABLE ? "whole tables"
                 : call->storage == STORE_BACKPOINTERS ? "two columns and back pointers"
                                                       : "two columns");
    write_emission_tables(&w);
    if (call->plan.bp_bytes)
        write_paths(&w);
    if (call->attrs & (ATTR_SCORE_TABLE | ATTR_TRACEBACK_TABLE))
        write_shown_states(&w);
    emit_blank(e);
    switch (call->alg) {
    case ALG_FORWARD: write_forward(&w); break;
    case ALG_BACKWARD: write_backward(&w); break;
    case ALG_VITERBI: write_viterbi(&w); break;
    }
    emit_blank(e);
    write_run(&w);
}

/* ---- the program: models for the sampler, columns, main -------------------- */

static void write_source_model(Emitter *e, const IrModel *m, int index)
{
    FILE *o = e->out;
    char num[32];
    emit_blank(e);
    emit_comment(e, "model %s as written (used by --sample)", m->name);
    fprintf(o, "static const char *const m%d_states[] = {", index);
    for (int s = 0; s < m->n_states; s++)
        fprintf(o, "%s%s", s ? ", " : "", emit_string(m->states[s].name));
    fprintf(o, "};\nstatic const hmmrt_model_move m%d_moves[] = {\n", index);
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        fprintf(o, "    {%d, %d, %d, %s},\n", mv->from, mv->to, mv->emission,
                emit_double(num, exp(mv->lw_sum)));
    }
    if (!m->n_moves)
        fprintf(o, "    {0, 0, -1, 0.0},\n");
    fprintf(o, "};\nstatic const double m%d_emissions[] = {", index);
    for (int em = 0; em < m->n_emissions; em++)
        for (int k = 0; k < m->K; k++)
            fprintf(o, "%s%s", em || k ? ", " : "", emit_double(num, exp(m->emissions[em].logp[k])));
    fprintf(o, "%s};\n", m->n_emissions && m->K ? "" : "0.0");
}

static void write_program(Emitter *e, const Program *p, const int *model_alphabet,
                          const char *const *alphabets, int n_alphabets, const char *name)
{
    FILE *o = e->out;
    /* the models of main, in order of first use */
    int *used = ARENA_ARRAY(p->arena, int, p->n_models ? p->n_models : 1);
    int *order = ARENA_ARRAY(p->arena, int, p->n_models ? p->n_models : 1), n_used = 0;
    for (int c = 0; c < p->n_calls; c++)
        if (!used[p->calls[c].model_index]++)
            order[n_used++] = p->calls[c].model_index;
    for (int i = 0; i < n_used; i++)
        write_source_model(e, &p->models[order[i]], i);

    emit_blank(e);
    emit_comment(e, "==== the program ====");
    emit_open(e, "static int score_cpu(const hmmrt_seq *seq, hmmrt_value *values, "
                 "hmmrt_scratch *scratch)");
    for (int c = 0; c < p->n_calls; c++) {
        emit_line(e, "int failed%d = c%d_run(seq, values, scratch);", c, c);
        emit_line(e, "if (failed%d)", c);
        emit_line(e, "    return failed%d;", c);
    }
    emit_line(e, "(void)seq, (void)values, (void)scratch;");
    emit_line(e, "return 0;");
    emit_close(e, "");
    emit_blank(e);
    fprintf(o, "static const char *const alphabets[] = {");
    for (int a = 0; a < n_alphabets; a++)
        fprintf(o, "%s%s", a ? ", " : "", emit_string(alphabets[a]));
    fprintf(o, "%s};\n", n_alphabets ? "" : "\"\"");
    fprintf(o, "static const hmmrt_column columns[] = {\n");
    for (int i = 0; i < p->n_prints; i++) {
        const IrPrint *pr = &p->prints[i];
        const IrCall *call = &p->calls[pr->call];
        int text = pr->attr != ATTR_SCORE;
        fprintf(o, "    {%s, %s, ", emit_string(pr->label),
                text ? "HMMRT_FIELD_TEXT" : "HMMRT_FIELD_SCORE");
        if (pr->attr == ATTR_SCORE_TABLE || pr->attr == ATTR_TRACEBACK_TABLE) {
            const IrModel *m = call->model;
            char *states = arena_strdup(p->arena, "");
            for (int s = 0; s < m->n_states; s++)
                if (m->states[s].aux_of < 0)
                    states = arena_printf(p->arena, "%s%s%s", states, *states ? "," : "",
                                          m->states[s].name);
            fprintf(o, "%s},\n", emit_string(arena_printf(
                p->arena, "positions 0..length separated by ';', each the %s of the states %s "
                "separated by ','", pr->attr == ATTR_SCORE_TABLE ? "ln values" :
                "best predecessors ('-' for none)", states)));
        } else {
            fprintf(o, "NULL},\n");
        }
    }
    if (!p->n_prints)
        fprintf(o, "    {\"\", HMMRT_FIELD_SCORE, NULL},\n");
    fprintf(o, "};\nstatic const hmmrt_model models[] = {\n");
    for (int i = 0; i < n_used; i++) {
        const IrModel *m = &p->models[order[i]];
        fprintf(o, "    {%s, %d, %d, m%d_states, %d, %d, %d, m%d_moves, %d, m%d_emissions},\n",
                emit_string(m->name), model_alphabet[order[i]], m->n_states, i, m->start, m->end,
                m->n_moves, i, m->n_emissions, i);
    }
    fprintf(o, "};\n");
    fprintf(o, "static const hmmrt_program program = {%s, ", emit_string(name));
    fprintf(o, "%s, \"c\", %d, alphabets, %d, columns, %d, models, score_cpu};\n",
            emit_string(p->path), n_alphabets, p->n_prints, n_used);
    emit_blank(e);
    emit_line(e, "int main(int argc, char **argv) { return hmmrt_main(argc, argv, &program); }");
}

int backend_c_write(const Program *p, FILE *out, const char *name)
{
    Emitter e = {out, 0};
    /* one alphabet per distinct symbol string among the models of main */
    const char **alphabets = ARENA_ARRAY(p->arena, const char *, p->n_models ? p->n_models : 1);
    int *model_alphabet = ARENA_ARRAY(p->arena, int, p->n_models ? p->n_models : 1);
    int n_alphabets = 0;
    for (int i = 0; i < p->n_models; i++)
        model_alphabet[i] = -1;
    for (int c = 0; c < p->n_calls; c++) {
        int mi = p->calls[c].model_index;
        for (int a = 0; a < n_alphabets && model_alphabet[mi] < 0; a++)
            if (strcmp(alphabets[a], p->models[mi].symbols) == 0)
                model_alphabet[mi] = a;
        if (model_alphabet[mi] < 0) {
            alphabets[n_alphabets] = p->models[mi].symbols;
            model_alphabet[mi] = n_alphabets++;
        }
    }
    emit_comment(&e, "%s.c: generated by hmmc %s from %s for the C target. Do not edit: change "
                     "the model and run hmmc again. Each call of main is a function specialised "
                     "to its model; libhmmrt (hmmrt.h) reads the sequences, runs the calls on "
                     "many threads and prints the table.", name, HMMC_VERSION, p->path);
    emit_line(&e, "#include <math.h>");
    emit_line(&e, "#include <stdint.h>");
    emit_line(&e, "#include <string.h>");
    emit_line(&e, "#include \"hmmrt.h\"");
    emit_blank(&e);
    emit_line(&e, "static const double LN2 = 0.693147180559945309417232121458176568; /* ln 2 */");
    for (int c = 0; c < p->n_calls; c++)
        write_call(&e, p, c, model_alphabet);
    write_program(&e, p, model_alphabet, alphabets, n_alphabets, name);
    return ferror(out) ? -1 : 0;
}
