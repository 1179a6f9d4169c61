/* backend_c.c: the C backend. For every call of main it writes a C function
 * specialised to the call's model and to what the call prints, in double
 * precision, and the program around them; the rest (input, threads, output)
 * is libhmmrt's. */

/* Each call's function is specialised to the call's model (its moves and
 * weights written into the code as straight-line statements, its emissions as tables indexed by the
 * symbol; or, for large models, the moves as tables that one loop per phase
 * walks: backend_c_table.c) and to what the call prints (two columns, back
 * pointers, or whole tables), in double precision:
 *   forward, backward: probabilities, each column rescaled by a power of two
 *                      when it leaves [2^928, 2^992] (exact: a power of two
 *                      changes no digit), the exponents summed; a sequence
 *                      on which a value left double's normal range (the
 *                      FE_UNDERFLOW and FE_OVERFLOW flags) is summed again in
 *                      long double;
 *   viterbi:           natural logs, max and add, each column less the best
 *                      value of the one before, the offsets summed with their
 *                      rounding errors. */
#include "codegen/backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/dense.h"
#include "codegen/backend_dense.h"
#include "codegen/c/backend_c_dense.h"
#include "codegen/c/backend_c_density.h"
#include "codegen/c/backend_c_table.h"
#include "codegen/c/c_plan.h"
#include "codegen/c/backend_c_hits.h"
#include "codegen/c/backend_c_profile.h"
#include "codegen/c/backend_c_rows.h"
#include "codegen/c/backend_c_train.h"
#include "codegen/emit.h"
#include "codegen/emit_dp.h"

/* Everything the writer of one call needs. */
typedef struct CallWriter {
    Emitter *e;
    const Program *p;
    const IrCall *call;
    int index;          /* call number: its names are layout_name(layout, index, ...) */
    const Layout *layout;
    const CPlan *plan;  /* the call's C plan */
    const IrModel *m;
    DpWriter dp;        /* the statements of one position */
    const PositionWriter *position; /* in the call's shape: straight-line or table */
    int *in_start, *in_order; /* incoming moves per state (the same as dp's) */
    const char *data_prefix; /* where the data files are (backend_dense.h) */
} CallWriter;

/* The name of one of the call's symbols: "c0_forward". */
static const char *name_of(const CallWriter *w, const char *what)
{
    return layout_name(w->layout, w->index, what);
}

static const PositionWriter position_straight_line = {
    dp_forward_emitting, dp_forward_silent, dp_backward_emitting, dp_backward_silent,
    dp_viterbi_emitting, dp_viterbi_silent, dp_column_sum, dp_viterbi_position,
};

/* ---- emission tables ------------------------------------------------------ */

/* The emission tables a call uses, as probabilities (forward, backward) or
 * logs (viterbi), as one row per symbol: a position reads the row of its
 * symbol, whose entries lie next to each other (a few cache lines, where a
 * table per emission would touch one line per table). */
static void write_emission_tables(CallWriter *w)
{
    const IrModel *m = w->m;
    FILE *o = w->e->out;
    int in_logs = w->call->alg == ALG_VITERBI;
    char num[64];
    int *table_of, *emission_of;
    int n = dp_emission_tables(w->p->arena, m, &table_of, &emission_of);
    const char *name = in_logs ? w->dp.log_table : w->dp.prob_table;
    int width = fprintf(o, "/* %s[c][t]: emission table t at symbol c; the tables:", name);
    for (int t = 0; t < n; t++) {
        const char *entry = arena_printf(w->p->arena, " %d %s%s", t,
                                         m->emissions[emission_of[t]].name, t + 1 < n ? "," : "");
        if (width + (int)strlen(entry) > 96) {
            fprintf(o, "\n  ");
            width = 2;
        }
        width += fprintf(o, "%s", entry);
    }
    /* values outside double's range (plan.long_double_only) in long double */
    int wide = w->dp.wide_tables;
    fprintf(o, " */\nstatic const %s %s[%d][%d] = {\n", wide ? "long double" : "double", name,
            m->K ? m->K : 1, n ? n : 1);
    for (int k = 0; k < m->K; k++) {
        fprintf(o, "    {");
        for (int t = 0; t < n; t++) {
            double lp = m->emissions[emission_of[t]].logp[k];
            fprintf(o, "%s%s", t ? ", " : "",
                    in_logs ? emit_double(num, lp) : dp_probability(num, lp, wide));
        }
        fprintf(o, "%s}, /* '%c' */\n", n ? "" : "0", m->symbols[k]);
    }
    fprintf(o, "%s};\n", m->K ? "" : "    {0},\n");
}

/* ---- forward -------------------------------------------------------------- */

/* The precision a sum over paths is written in. Double is the one that runs;
 * long double (on x86-64 an 80-bit number whose exponent reaches 2^-16382)
 * is its twin for the sequences on which a double value left the normal
 * range: there a state far below its column's largest may carry the paths
 * that end, as on long profiles, where double would print -inf or a score
 * that lost paths. */
typedef struct SumPrecision {
    const char *suffix; /* of the function's name */
    const char *type;
    const char *frexp, *ldexp, *log; /* the math functions of that type */
    const char *one;                 /* 1 in that type */
} SumPrecision;

static const SumPrecision in_double = {"", "double", "frexp", "ldexp", "log", "1.0"};
static const SumPrecision in_long_double = {"_wide", "long double", "frexpl", "ldexpl", "logl",
                                            "1.0L"};

/* A column's sum is kept within 2^(SUM_EXP +- SUM_BAND), near the top of
 * double's range, so that a state may fall 2^-1950 below it before it
 * leaves the normal range; a column that grows past 2^1023 (by 2^31 in one
 * position) overflows, which the caller sees as it sees an underflow. */
enum { SUM_EXP = 960, SUM_BAND = 32 };

/* The column sum, an early exit when no path is left, and exact rescaling. */
static void write_rescale(CallWriter *w, const SumPrecision *p)
{
    const IrModel *m = w->m;
    w->position->column_sum(&w->dp, arena_printf(w->p->arena, "%s sum", p->type));
    emit_line(w->e, "if (!(sum > 0.0) && !table)");
    emit_line(w->e, "    return -INFINITY; /* no path emits the sequence so far */");
    emit_open(w->e, "if (sum < 0x1p%d || sum > 0x1p%d)", SUM_EXP - SUM_BAND, SUM_EXP + SUM_BAND);
    emit_line(w->e, "int exponent;");
    emit_line(w->e, "%s(sum, &exponent);", p->frexp);
    emit_line(w->e, "const %s factor = %s(%s, %d - exponent);", p->type, p->ldexp, p->one, SUM_EXP);
    emit_line(w->e, "for (int s = 0; s < %d; s++)", m->n_states);
    emit_line(w->e, "    cur[s] *= factor;");
    emit_line(w->e, "*scale += exponent - %d;", SUM_EXP);
    emit_close(w->e, "");
}

static void write_store_table_column(CallWriter *w, const SumPrecision *p, const char *pos)
{
    emit_line(w->e, "if (table)");
    emit_line(w->e, "    for (int s = 0; s < %d; s++)", w->m->n_states);
    emit_line(w->e, "        table[(size_t)(%s) * %d + s] = %s(cur[s]) + *scale * LN2;", pos,
              w->m->n_states, p->log);
}

/* The columns: local arrays for small models (the run function passes
 * NULL for `columns`), scratch memory otherwise. */
static void write_columns(CallWriter *w, const char *type)
{
    int n = w->m->n_states;
    if (w->plan->local_arrays) {
        emit_line(w->e, "%s column0[%d], column1[%d];", type, n, n);
        emit_line(w->e, "(void)columns; /* NULL: the columns are local arrays */");
    } else {
        emit_line(w->e, "%s *column0 = columns, *column1 = columns + %d;", type, n);
    }
    emit_line(w->e, "%s *prev = column0, *cur = column1;", type);
}

/* The type of the observations a call's functions read. */
static const char *x_type(const CallWriter *w)
{
    return w->m->real_dim ? "const double *" : "const uint8_t *";
}

/* What a position reads of a real observation: its densities, as logs
 * (viterbi: less the previous column's best) or as probabilities times
 * 2^-k, k added to the column's exponent (forward, backward). */
static void write_position_densities(CallWriter *w, const char *rows)
{
    int *table_of, *emission_of;
    int n = dp_emission_tables(w->p->arena, w->m, &table_of, &emission_of);
    const char *densities = name_of(w, "densities");
    const char *at = arena_printf(w->p->arena, "x + (size_t)i * %d", w->m->real_dim);
    if (rows == w->dp.log_table && w->position == &position_table) {
        emit_line(w->e, "double row[%d]; /* ln of the densities at observation i */", n ? n : 1);
        emit_line(w->e, "hmmrt_density_logs(&%s, %s, row);", densities, at);
        return;
    }
    if (rows == w->dp.log_table) {
        emit_line(w->e, "double row[%d]; /* ln of the densities at observation i, less the "
                        "previous column's best */", n ? n : 1);
        emit_line(w->e, "hmmrt_density_logs(&%s, %s, row);", densities, at);
        emit_line(w->e, "for (int t = 0; t < %d; t++)", n);
        emit_line(w->e, "    row[t] -= top;");
        return;
    }
    int wide = strcmp(w->dp.value_type, "long double") == 0;
    emit_line(w->e, "%s row[%d]; /* the densities at observation i, times 2^-k */",
              wide ? "long double" : "double", n ? n : 1);
    emit_line(w->e, "*scale += hmmrt_density_probs%s(&%s, %s, row); /* + k */",
              wide ? "_wide" : "", densities, at);
}

/* What a position reads of its symbol: the straight-line code the row of
 * its emission values, the table shape the symbol itself. */
static void write_position_symbol(CallWriter *w, const char *rows)
{
    if (w->m->real_dim) {
        write_position_densities(w, rows);
    } else if (w->position == &position_table) {
        emit_line(w->e, "const int c = x[i];");
    } else if (rows == w->dp.log_table) {
        int *table_of, *emission_of;
        int n = dp_emission_tables(w->p->arena, w->m, &table_of, &emission_of);
        emit_line(w->e, "const double *table_row = %s[x[i]]; /* the emissions at x[i] */", rows);
        emit_line(w->e, "double row[%d]; /* less the previous column's best */", n ? n : 1);
        emit_line(w->e, "for (int t = 0; t < %d; t++)", n);
        emit_line(w->e, "    row[t] = table_row[t] - top;");
    } else
        emit_line(w->e, "const %s *row = %s[x[i]]; /* the emissions at x[i] */",
                  rows == w->dp.prob_table && w->dp.wide_tables ? "long double" : "double",
                  rows);
}

static void write_swap(CallWriter *w, const char *type)
{
    emit_line(w->e, "%s *swap = prev;", type);
    emit_line(w->e, "prev = cur;");
    emit_line(w->e, "cur = swap;");
}

/* Forward, or backward read from the end: both sum over paths, from one
 * silent state to the other, column by column, in precision p. */
static void write_sum(CallWriter *w, int backward, const SumPrecision *p)
{
    const IrModel *m = w->m;
    int first = backward ? m->end : m->start, last = backward ? m->start : m->end;
    if (backward)
        emit_comment(w->e, "ln of the backward score in %s, computed from the end of the sequence "
                           "back; table, when not NULL, receives every column in logs.", p->type);
    else
        emit_comment(w->e, "ln of the forward score in %s; column values are probabilities times "
                           "2^-*scale. table, when not NULL, receives every column in logs.",
                     p->type);
    emit_open(w->e, "static double %s%s(%sx, int64_t L, %s *columns, "
                    "double *table, int64_t *scale)", name_of(w, backward ? "backward" : "forward"),
              p->suffix, x_type(w), p->type);
    w->dp.value_type = p->type;
    write_columns(w, p->type);
    dp_length_weights(&w->dp, 0);
    if (w->position == &position_table)
        c_table_length_weights(&w->dp, 0);
    emit_line(w->e, "*scale = -%d;", SUM_EXP);
    emit_comment(w->e, "both columns from 0: a folded state's value, never written, stays 0 "
                       "when rescaled (memory of an earlier sequence could underflow and send the "
                       "sum to long double)");
    emit_line(w->e, "for (int s = 0; s < %d; s++)", m->n_states);
    emit_line(w->e, "    prev[s] = cur[s] = 0.0;");
    emit_comment(w->e, "read through a volatile: a compiler that knew the first column would "
                       "fold its products at build time, and an overflow there would raise no "
                       "flag for the caller to see");
    emit_line(w->e, "const volatile %s one = 0x1p%d; /* 1 times 2^-*scale */", p->type, SUM_EXP);
    emit_line(w->e, "cur[%d] = one; /* %s */", first, m->states[first].name);
    void (*silent)(DpWriter *) = backward ? w->position->backward_silent
                                          : w->position->forward_silent;
    silent(&w->dp);
    write_store_table_column(w, p, backward ? "L" : "0");
    if (backward)
        emit_open(w->e, "for (int64_t i = L - 1; i >= 0; i--)");
    else
        emit_open(w->e, "for (int64_t i = 0; i < L; i++)");
    write_swap(w, p->type);
    write_position_symbol(w, w->dp.prob_table);
    if (backward)
        w->position->backward_emitting(&w->dp);
    else
        w->position->forward_emitting(&w->dp);
    silent(&w->dp);
    write_rescale(w, p);
    if (p == &in_double) {
        emit_comment(w->e, "a value left double's range: stop, the caller sums again in long "
                           "double (tested every 64 positions: a test costs about as much as a "
                           "small model's position)");
        emit_line(w->e, "if ((i & 63) == 63 && fetestexcept(FE_UNDERFLOW | FE_OVERFLOW))");
        emit_line(w->e, "    return NAN;");
    }
    write_store_table_column(w, p, backward ? "i" : "i + 1");
    emit_close(w->e, "");
    emit_line(w->e, "return %s(cur[%d]) + (double)*scale * LN2; /* %s */", p->log, last,
              m->states[last].name);
    emit_close(w->e, "");
    w->dp.value_type = in_double.type;
}

/* ---- viterbi -------------------------------------------------------------- */

static void write_viterbi(CallWriter *w)
{
    const IrModel *m = w->m;
    int bytes = w->call->plan.bp_bytes;
    const char *type = dp_bp_type(bytes ? bytes : 1);
    emit_comment(w->e, "ln of the viterbi score. bp_table, when not NULL, receives the back "
                       "pointers of every cell (%d byte%s each); table, when not NULL, every "
                       "column. The column holds ln scores minus `offset`: each position "
                       "subtracts the previous column's best value, so that the values stay "
                       "small and each addition rounds by an ulp of a small number, and the "
                       "offsets are summed with their rounding errors kept (Neumaier): over "
                       "10^7 positions a plain running sum drifted by 7e-4.", bytes,
                 bytes == 1 ? "" : "s");
    emit_open(w->e, "static double %s(%sx, int64_t L, double *columns, "
                    "double *table, %s *bp_table)", name_of(w, "viterbi"), x_type(w), type);
    write_columns(w, "double");
    dp_length_weights(&w->dp, 1);
    if (w->position == &position_table)
        c_table_length_weights(&w->dp, 1);
    if (bytes) {
        emit_line(w->e, "%s *bp = bp_table;", type);
        emit_line(w->e, "memset(bp, 0xff, sizeof(%s) * %d);", type, m->n_states);
    } else {
        emit_line(w->e, "(void)bp_table;");
    }
    emit_comment(w->e, "both columns from -inf: a folded state's value, never written, takes part "
                       "in each column's best value");
    emit_line(w->e, "for (int s = 0; s < %d; s++)", m->n_states);
    emit_line(w->e, "    prev[s] = cur[s] = -INFINITY;");
    emit_line(w->e, "cur[%d] = 0.0; /* %s */", m->start, m->states[m->start].name);
    emit_line(w->e, "double offset = 0.0, offset_error = 0.0;");
    w->position->viterbi_silent(&w->dp);
    emit_line(w->e, "if (table)");
    emit_line(w->e, "    memcpy(table, cur, sizeof(double) * %d);", m->n_states);
    emit_open(w->e, "for (int64_t i = 0; i < L; i++)");
    write_swap(w, "double");
    emit_comment(w->e, "every value of this column comes from one of the previous column by one "
                       "emitting move: taking the previous column's best value from the emission "
                       "values (off the chain of dependent operations) takes it from the column");
    emit_line(w->e, "double top = prev[0];");
    emit_line(w->e, "for (int s = 1; s < %d; s++)", m->n_states);
    emit_line(w->e, "    top = prev[s] > top ? prev[s] : top;");
    emit_line(w->e, "top = top > -INFINITY ? top : 0.0; /* no path so far */");
    emit_line(w->e, "const double sum = offset + top;");
    emit_line(w->e, "offset_error += fabs(offset) >= fabs(top) ? (offset - sum) + top : (top - sum) + offset;");
    emit_line(w->e, "offset = sum;");
    write_position_symbol(w, w->dp.log_table);
    if (bytes) {
        emit_line(w->e, "bp = bp_table + (size_t)(i + 1) * %d;", m->n_states);
        emit_line(w->e, "memset(bp, 0xff, sizeof(%s) * %d);", type, m->n_states);
    }
    w->position->viterbi_position(&w->dp);
    emit_line(w->e, "if (table)");
    emit_line(w->e, "    for (int s = 0; s < %d; s++)", m->n_states);
    emit_line(w->e, "        table[(size_t)(i + 1) * %d + s] = cur[s] + (offset + offset_error);",
              m->n_states);
    emit_close(w->e, "");
    emit_line(w->e, "return cur[%d] + (offset + offset_error); /* %s */", m->end,
              m->states[m->end].name);
    emit_close(w->e, "");
}

/* ---- spans for libhmmrt's time-parallel scan (runtime/scan.c) ------------- */

/* Whether a call gets span functions and a scan descriptor: forward,
 * backward and viterbi in double on the straight-line or table shape, when
 * no whole table is printed (dense calls and long double only calls run as
 * before). */
static int scan_supported(const IrCall *call)
{
    return call->alg != ALG_POSTERIOR && !call->plan.dense && !call->plan.long_double_only &&
           !(call->attrs & (ATTR_SCORE_TABLE | ATTR_TRACEBACK_TABLE));
}

/* Whether a dense call gets a scan descriptor: forward and backward scores,
 * whose chunks' transfers are matrix products (runtime/scan_dense.c);
 * viterbi's would be max-plus products of n^3 a position, which no number of
 * cores makes pay against the one-thread n^2 (docs/scan.md). */
static int scan_dense_supported(const IrCall *call)
{
    return call->plan.dense && (call->alg == ALG_FORWARD || call->alg == ALG_BACKWARD) &&
           !call->plan.long_double_only && !(call->attrs & (ATTR_SCORE_TABLE | ATTR_TRACEBACK_TABLE));
}

/* Whether a posterior call gets a scan descriptor: libhmmrt's engine runs
 * its forward and backward in chunks (runtime/scan_fb.c) over symbols. */
static int scan_posterior_supported(const IrCall *call)
{
    return call->alg == ALG_POSTERIOR && !call->model->real_dim;
}

/* Whether the call is in the program's scan_calls (score.c sets a long
 * sequence aside for them). */
static int scan_listed(const IrCall *call)
{
    return scan_supported(call) || scan_dense_supported(call) || scan_posterior_supported(call);
}

/* A posterior call's descriptor cN_scan, for the plan alone (libhmmrt's
 * engine decides again from the model it prepares): its boundary states,
 * the more of the sources of emitting moves (less the start) and their
 * destinations (less the end). */
static void write_scan_posterior(Emitter *e, const Program *p, const Layout *layout, int index)
{
    const IrCall *call = &p->calls[index];
    const IrModel *m = call->model;
    int n = m->n_states > 0 ? m->n_states : 1, counts[2] = {0, 0};
    unsigned char *seen = ARENA_ARRAY(p->arena, unsigned char, 2 * (size_t)n);
    memset(seen, 0, 2 * (size_t)n);
    for (int k = 0; k < m->n_moves; k++) {
        const IrMove *mv = &m->moves[k];
        if (mv->emission < 0)
            continue;
        if (mv->from != m->start && !seen[mv->from])
            seen[mv->from] = 1, counts[0]++;
        if (mv->to != m->end && !seen[n + mv->to])
            seen[n + mv->to] = 1, counts[1]++;
    }
    emit_blank(e);
    emit_comment(e, "for libhmmrt's time-parallel scan of one long sequence (runtime/scan_fb.c)");
    emit_line(e, "static const hmmrt_scan_call %s = {", layout_name(layout, index, "scan"));
    emit_line(e, "    .label = \"%s\", .n_states = %d, .n_boundary = %d, .posterior = 1,",
              call->label, m->n_states, counts[0] > counts[1] ? counts[0] : counts[1]);
    emit_line(e, "};");
}

/* A dense call's descriptor cN_scan: its model as a matrix, every emitting
 * state a boundary state. */
static void write_scan_dense(CallWriter *w)
{
    emit_line(w->e, "static const hmmrt_scan_call %s = {", name_of(w, "scan"));
    const DenseView *d = dense_view_header(w->p->arena, w->m, 0);
    emit_line(w->e, "    .label = \"%s\", .n_states = %d, .n_boundary = %ld, .backward = %d,",
              w->call->label, w->m->n_states, (long)d->n, w->call->alg == ALG_BACKWARD);
    emit_line(w->e, "    .dense = &hmmc_%s, /* transfers as matrix products (runtime/scan_dense.c) */",
              name_of(w, "dense"));
    emit_line(w->e, "};");
}

/* The states whose values one position reads from the column before it:
 * the sources of emitting moves (forward, viterbi) or their destinations
 * (backward), less the start (nothing enters it) or the end (nothing leaves
 * it), whose value is 0 between two positions. The scan's transfers have
 * one column per such state. */
static int scan_boundary(const CallWriter *w, int *states)
{
    const IrModel *m = w->m;
    int backward = w->call->alg == ALG_BACKWARD, n = 0;
    for (int s = 0; s < m->n_states; s++) {
        if (!dp_live(m, s) || s == (backward ? m->end : m->start))
            continue;
        for (int k = 0; k < m->n_moves; k++) {
            const IrMove *mv = &m->moves[k];
            if (mv->emission >= 0 && (backward ? mv->to : mv->from) == s) {
                states[n++] = s;
                break;
            }
        }
    }
    return n;
}

/* The statements that bring a span's column back near 2^SUM_EXP when its
 * sum leaves the band around it, adding the power of two to `scale`. */
static void write_span_rescale(CallWriter *w, int n, const char *scale)
{
    emit_open(w->e, "if (sum < 0x1p%d || sum > 0x1p%d)", SUM_EXP - SUM_BAND, SUM_EXP + SUM_BAND);
    emit_line(w->e, "int exponent;");
    emit_line(w->e, "frexp(sum, &exponent);");
    emit_line(w->e, "const double factor = ldexp(1.0, %d - exponent);", SUM_EXP);
    emit_line(w->e, "for (int s = 0; s < %d; s++)", n);
    emit_line(w->e, "    cur[s] *= factor;");
    emit_line(w->e, "%s += exponent - %d;", scale, SUM_EXP);
    emit_close(w->e, "");
}

/* cN_forward_span / cN_backward_span: the positions [i0, i1) (backward:
 * from i1 down to i0) from the column in columns[0 .. n) to the column
 * after them, in the same place; columns[n .. 2n) is the other column.
 * `first` starts from the start (the end) instead. The same statements as
 * the whole function; NAN when a value left double's range. */
static void write_sum_span(CallWriter *w, int backward)
{
    const IrModel *m = w->m;
    int n = m->n_states, first = backward ? m->end : m->start;
    const SumPrecision *p = &in_double;
    emit_comment(w->e, "%s over positions [i0, i1) for libhmmrt's scan (runtime/scan.c): columns[0 "
                       "..%d) holds the column %s them, times 2^-*scale, and receives the column %s "
                       "them; columns[%d ..%d) is the other column. first: start from the %s "
                       "instead. 0, -inf when no path is left, NAN when a value left double's "
                       "range.", backward ? "backward" : "forward", n,
                 backward ? "after" : "before", backward ? "before" : "after", n, 2 * n,
                 backward ? "end" : "start");
    emit_open(w->e, "static double %s(const void *xs, int64_t L, int64_t i0, int64_t i1, "
                    "double *columns, int64_t *scale, int first)",
              name_of(w, backward ? "backward_span" : "forward_span"));
    emit_line(w->e, "%sx = xs;", x_type(w));
    emit_line(w->e, "double *cur = columns, *prev = columns + %d;", n);
    dp_length_weights(&w->dp, 0);
    if (w->position == &position_table)
        c_table_length_weights(&w->dp, 0);
    emit_open(w->e, "if (first)");
    emit_line(w->e, "*scale = -%d;", SUM_EXP);
    emit_line(w->e, "for (int s = 0; s < %d; s++)", n);
    emit_line(w->e, "    cur[s] = 0.0;");
    emit_line(w->e, "const volatile double one = 0x1p%d;", SUM_EXP);
    emit_line(w->e, "cur[%d] = one; /* %s */", first, m->states[first].name);
    (backward ? w->position->backward_silent : w->position->forward_silent)(&w->dp);
    emit_close(w->e, "");
    emit_line(w->e, "for (int s = 0; s < %d; s++)", n);
    emit_line(w->e, "    prev[s] = 0.0;");
    if (backward)
        emit_open(w->e, "for (int64_t i = i1 - 1; i >= i0; i--)");
    else
        emit_open(w->e, "for (int64_t i = i0; i < i1; i++)");
    write_swap(w, p->type);
    write_position_symbol(w, w->dp.prob_table);
    (backward ? w->position->backward_emitting : w->position->forward_emitting)(&w->dp);
    (backward ? w->position->backward_silent : w->position->forward_silent)(&w->dp);
    w->position->column_sum(&w->dp, "double sum");
    emit_open(w->e, "if (!(sum > 0.0))");
    emit_line(w->e, "memset(columns, 0, sizeof(double) * %d);", n);
    emit_line(w->e, "return fetestexcept(FE_UNDERFLOW) ? NAN : -INFINITY; /* no path goes through */");
    emit_close(w->e, "");
    write_span_rescale(w, n, "*scale");
    emit_line(w->e, "if ((i & 63) == 63 && fetestexcept(FE_UNDERFLOW | FE_OVERFLOW))");
    emit_line(w->e, "    return NAN;");
    emit_close(w->e, "");
    emit_line(w->e, "if (cur != columns)");
    emit_line(w->e, "    memcpy(columns, cur, sizeof(double) * %d);", n);
    emit_line(w->e, "return fetestexcept(FE_UNDERFLOW | FE_OVERFLOW) ? NAN : 0.0;");
    emit_close(w->e, "");
}

/* cN_forward_spans / cN_backward_spans: the span above for `width` columns
 * at once (the transfer of a chunk: one column from each boundary state),
 * each position's statements applied to every column in turn, so that the
 * columns' chains of operations overlap. Column v lies in columns[v * 2n ..
 * v * 2n + n), the other half its second column; its exponent in scales[v].
 * A column from which no path goes through stays 0. */
static void write_sum_spans(CallWriter *w, int backward)
{
    const IrModel *m = w->m;
    int n = m->n_states;
    emit_comment(w->e, "%s over positions [i0, i1) for `width` columns at once (the transfer of "
                       "a chunk, runtime/scan.c): column v in columns[v * %d ..+%d), its exponent "
                       "in scales[v]; columns[v * %d + %d ..+%d) is its other column. 0, or NAN "
                       "when a value left double's range.", backward ? "backward" : "forward",
                 2 * n, n, 2 * n, n, n);
    emit_open(w->e, "static double %s(const void *xs, int64_t L, int64_t i0, int64_t i1, "
                    "double *columns, int64_t *scales, int width)",
              name_of(w, backward ? "backward_spans" : "forward_spans"));
    emit_line(w->e, "%sx = xs;", x_type(w));
    dp_length_weights(&w->dp, 0);
    if (w->position == &position_table)
        c_table_length_weights(&w->dp, 0);
    emit_line(w->e, "for (int v = 0; v < width; v++)");
    emit_line(w->e, "    memset(columns + (size_t)v * %d + %d, 0, sizeof(double) * %d);", 2 * n, n, n);
    if (backward)
        emit_open(w->e, "for (int64_t i = i1 - 1; i >= i0; i--)");
    else
        emit_open(w->e, "for (int64_t i = i0; i < i1; i++)");
    emit_line(w->e, "const int64_t step = %s; /* the columns swap halves each position */",
              backward ? "i1 - 1 - i" : "i - i0");
    write_position_symbol(w, w->dp.prob_table);
    emit_open(w->e, "for (int v = 0; v < width; v++)");
    emit_line(w->e, "const double *prev = columns + (size_t)v * %d + (step & 1) * %d;", 2 * n, n);
    emit_line(w->e, "double *cur = columns + (size_t)v * %d + ((step + 1) & 1) * %d;", 2 * n, n);
    (backward ? w->position->backward_emitting : w->position->forward_emitting)(&w->dp);
    (backward ? w->position->backward_silent : w->position->forward_silent)(&w->dp);
    w->position->column_sum(&w->dp, "double sum");
    emit_line(w->e, "if (!(sum > 0.0))");
    emit_line(w->e, "    continue; /* no path goes through: the column stays 0 */");
    write_span_rescale(w, n, "scales[v]");
    emit_close(w->e, "");
    emit_line(w->e, "if ((i & 63) == 63 && fetestexcept(FE_UNDERFLOW | FE_OVERFLOW))");
    emit_line(w->e, "    return NAN;");
    emit_close(w->e, "");
    emit_line(w->e, "if ((i1 - i0) & 1)");
    emit_line(w->e, "    for (int v = 0; v < width; v++)");
    emit_line(w->e, "        memcpy(columns + (size_t)v * %d, columns + (size_t)v * %d + %d, "
                    "sizeof(double) * %d);", 2 * n, 2 * n, n, n);
    emit_line(w->e, "return fetestexcept(FE_UNDERFLOW | FE_OVERFLOW) ? NAN : 0.0;");
    emit_close(w->e, "");
}

/* cN_viterbi_span (and cN_viterbi_span_bp, which writes the back pointers
 * of rows i0 + 1 .. i1, and of row 0 when `first`): the positions [i0, i1)
 * of viterbi from the column in columns[0 .. n) (ln values less
 * offset[0] + offset[1]) to the column after them; first: from the start. */
static void write_viterbi_span(CallWriter *w, int with_bp)
{
    const IrModel *m = w->m;
    int n = m->n_states, bytes = w->call->plan.bp_bytes;
    const char *type = dp_bp_type(bytes ? bytes : 1);
    int saved = w->dp.back_pointers;
    w->dp.back_pointers = with_bp;
    emit_comment(w->e, "viterbi over positions [i0, i1) for libhmmrt's scan (runtime/scan.c): "
                       "columns[0 ..%d) holds the column before them, ln values less offset[0] + "
                       "offset[1] (a sum and its rounding error), and receives the column after "
                       "them; columns[%d ..%d) is the other column. first: start from the start "
                       "instead.%s", n, n, 2 * n,
                 with_bp ? " bp_table receives the back pointers of rows i0 + 1 .. i1 (and 0 "
                           "when first), as the whole function writes them." : "");
    emit_open(w->e, "static void %s(const void *xs, int64_t L, int64_t i0, int64_t i1, "
                    "double *columns, double *offset_pair, %s)",
              name_of(w, with_bp ? "viterbi_span_bp" : "viterbi_span"),
              with_bp ? "void *bp_rows, int first" : "int first");
    emit_line(w->e, "%sx = xs;", x_type(w));
    emit_line(w->e, "double *cur = columns, *prev = columns + %d;", n);
    dp_length_weights(&w->dp, 1);
    if (w->position == &position_table)
        c_table_length_weights(&w->dp, 1);
    if (with_bp) {
        emit_line(w->e, "%s *const bp_table = bp_rows;", type);
        emit_line(w->e, "%s *bp = bp_table;", type);
    }
    emit_line(w->e, "double offset = offset_pair[0], offset_error = offset_pair[1];");
    emit_open(w->e, "if (first)");
    if (with_bp)
        emit_line(w->e, "memset(bp, 0xff, sizeof(%s) * %d);", type, n);
    emit_line(w->e, "for (int s = 0; s < %d; s++)", n);
    emit_line(w->e, "    cur[s] = -INFINITY;");
    emit_line(w->e, "cur[%d] = 0.0; /* %s */", m->start, m->states[m->start].name);
    emit_line(w->e, "offset = offset_error = 0.0;");
    w->position->viterbi_silent(&w->dp);
    emit_close(w->e, "");
    emit_line(w->e, "for (int s = 0; s < %d; s++)", n);
    emit_line(w->e, "    prev[s] = -INFINITY;");
    emit_open(w->e, "for (int64_t i = i0; i < i1; i++)");
    write_swap(w, "double");
    emit_line(w->e, "double top = prev[0];");
    emit_line(w->e, "for (int s = 1; s < %d; s++)", n);
    emit_line(w->e, "    top = prev[s] > top ? prev[s] : top;");
    emit_line(w->e, "top = top > -INFINITY ? top : 0.0; /* no path so far */");
    emit_line(w->e, "const double sum = offset + top;");
    emit_line(w->e, "offset_error += fabs(offset) >= fabs(top) ? (offset - sum) + top : (top - sum) + offset;");
    emit_line(w->e, "offset = sum;");
    write_position_symbol(w, w->dp.log_table);
    if (with_bp) {
        emit_line(w->e, "bp = bp_table + (size_t)(i + 1) * %d;", n);
        emit_line(w->e, "memset(bp, 0xff, sizeof(%s) * %d);", type, n);
    }
    w->position->viterbi_position(&w->dp);
    emit_close(w->e, "");
    emit_line(w->e, "if (cur != columns)");
    emit_line(w->e, "    memcpy(columns, cur, sizeof(double) * %d);", n);
    emit_line(w->e, "offset_pair[0] = offset;");
    emit_line(w->e, "offset_pair[1] = offset_error;");
    emit_close(w->e, "");
    w->dp.back_pointers = saved;
}

/* cN_viterbi_spans: the span above for `width` columns at once (the transfer
 * of a chunk: one column from each boundary state), each position's
 * statements applied to every column in turn, so that the columns' chains
 * of operations overlap (as cN_forward_spans). Column v lies in
 * columns[v * 2n .. v * 2n + n), the other half its second column; its
 * offset pair (a sum and its rounding error) in offsets[2v], offsets[2v + 1]. */
static void write_viterbi_spans(CallWriter *w)
{
    const IrModel *m = w->m;
    int n = m->n_states;
    int saved = w->dp.back_pointers;
    w->dp.back_pointers = 0;
    emit_comment(w->e, "viterbi over positions [i0, i1) for `width` columns at once (the transfer "
                       "of a chunk, runtime/scan.c): column col in columns[col * %d ..+%d), ln "
                       "values less offsets[2 col] + offsets[2 col + 1]; columns[col * %d + %d "
                       "..+%d) is its other column.", 2 * n, n, 2 * n, n, n);
    emit_open(w->e, "static void %s(const void *xs, int64_t L, int64_t i0, int64_t i1, "
                    "double *columns, double *offsets, int width)",
              name_of(w, "viterbi_spans"));
    emit_line(w->e, "%sx = xs;", x_type(w));
    dp_length_weights(&w->dp, 1);
    if (w->position == &position_table)
        c_table_length_weights(&w->dp, 1);
    emit_line(w->e, "for (int col = 0; col < width; col++)");
    emit_line(w->e, "    for (int s = 0; s < %d; s++)", n);
    emit_line(w->e, "        columns[(size_t)col * %d + %d + s] = -INFINITY;", 2 * n, n);
    emit_open(w->e, "for (int64_t i = i0; i < i1; i++)");
    emit_line(w->e, "const int64_t step = i - i0; /* the columns swap halves each position */");
    emit_open(w->e, "for (int col = 0; col < width; col++)");
    emit_line(w->e, "double *prev = columns + (size_t)col * %d + (step & 1) * %d;", 2 * n, n);
    emit_line(w->e, "double *cur = columns + (size_t)col * %d + ((step + 1) & 1) * %d;", 2 * n, n);
    emit_line(w->e, "double top = prev[0];");
    emit_line(w->e, "for (int s = 1; s < %d; s++)", n);
    emit_line(w->e, "    top = prev[s] > top ? prev[s] : top;");
    emit_line(w->e, "top = top > -INFINITY ? top : 0.0; /* no path so far */");
    emit_line(w->e, "const double offset = offsets[2 * col], sum = offset + top;");
    emit_line(w->e, "offsets[2 * col + 1] += fabs(offset) >= fabs(top) ? (offset - sum) + top : "
                    "(top - sum) + offset;");
    emit_line(w->e, "offsets[2 * col] = sum;");
    write_position_symbol(w, w->dp.log_table);
    w->position->viterbi_position(&w->dp);
    emit_close(w->e, "");
    emit_close(w->e, "");
    emit_line(w->e, "if ((i1 - i0) & 1)");
    emit_line(w->e, "    for (int col = 0; col < width; col++)");
    emit_line(w->e, "        memcpy(columns + (size_t)col * %d, columns + (size_t)col * %d + %d, "
                    "sizeof(double) * %d);", 2 * n, 2 * n, n, n);
    emit_close(w->e, "");
    w->dp.back_pointers = saved;
}

/* The call's spans and its descriptor cN_scan (hmmrt_scan.h). */
static void write_scan(CallWriter *w)
{
    const IrModel *m = w->m;
    int *states = ARENA_ARRAY(w->p->arena, int, m->n_states ? m->n_states : 1);
    int n_boundary = scan_boundary(w, states);
    int viterbi = w->call->alg == ALG_VITERBI, backward = w->call->alg == ALG_BACKWARD;
    int bp = viterbi && w->call->plan.bp_bytes > 0;
    if (viterbi) {
        write_viterbi_span(w, 0);
        if (!m->real_dim) {
            emit_blank(w->e);
            write_viterbi_spans(w);
        }
        if (bp) {
            emit_blank(w->e);
            write_viterbi_span(w, 1);
        }
    } else {
        write_sum_span(w, backward);
        if (!m->real_dim) {
            emit_blank(w->e);
            write_sum_spans(w, backward);
        }
    }
    emit_blank(w->e);
    fprintf(w->e->out, "static const int %s[] = {", name_of(w, "boundary"));
    for (int k = 0; k < n_boundary; k++)
        fprintf(w->e->out, "%s%d", k ? ", " : "", states[k]);
    fprintf(w->e->out, "%s}; /* the states a position reads of the column %s it */\n",
            n_boundary ? "" : "0", backward ? "after" : "before");
    emit_line(w->e, "static const hmmrt_scan_call %s = {", name_of(w, "scan"));
    emit_line(w->e, "    .label = \"%s\", .n_states = %d, .n_boundary = %d, .boundary = %s,",
              w->call->label, m->n_states, n_boundary, name_of(w, "boundary"));
    emit_line(w->e, "    .last = %d, .backward = %d, .bp_bytes = %d,", backward ? m->start : m->end,
              backward, bp ? w->call->plan.bp_bytes : 0);
    if (viterbi)
        emit_line(w->e, "    .max_span = %s, .max_span_bp = %s, .max_spans = %s,",
                  name_of(w, "viterbi_span"), bp ? name_of(w, "viterbi_span_bp") : "NULL",
                  m->real_dim ? "NULL" : name_of(w, "viterbi_spans"));
    else
        emit_line(w->e, "    .sum_span = %s, .sum_spans = %s,",
                  name_of(w, backward ? "backward_span" : "forward_span"),
                  m->real_dim ? "NULL" : name_of(w, backward ? "backward_spans" : "forward_spans"));
    emit_line(w->e, "};");
}

/* The state the emitting part of move mv ends in, as the source names it
 * (segments): its destination when that emits on arrival; else, along its
 * path from -> via... -> to, the destination of the source transition that
 * carries the emission (a folded move's may be a via state); -1 if silent. */
static int emit_end_state(const IrModel *src, const int *out_start, const int *out_order,
                          const IrModel *m, const IrMove *mv, const int *via)
{
    if (mv->emission < 0)
        return -1;
    int to = m->states[mv->to].aux_of >= 0 ? m->states[mv->to].aux_of : mv->to;
    if (m->states[mv->to].kind == STATE_EMITTING)
        return to;
    for (int j = 0; j <= mv->n_via; j++) {
        int a = j == 0 ? mv->from : via[j - 1], b = j == mv->n_via ? mv->to : via[j];
        a = m->states[a].aux_of >= 0 ? m->states[a].aux_of : a;
        b = m->states[b].aux_of >= 0 ? m->states[b].aux_of : b;
        for (int k = out_start[a]; k < out_start[a + 1]; k++) {
            const IrMove *s = &src->moves[out_order[k]];
            if (s->to == b && s->emission >= 0)
                return b;
        }
    }
    return to;
}

/* c<i>_move_emit_to (hmmrt_paths.move_emit_to), for viterbi's segments. */
static void write_emit_to(CallWriter *w)
{
    const IrModel *m = w->m, *src = &w->p->models[w->call->model_index];
    int *out_start, *out_order, longest = 1;
    ir_outgoing(w->p->arena, src, &out_start, &out_order);
    for (int i = 0; i < m->n_moves; i++)
        longest = m->moves[i].n_via > longest ? m->moves[i].n_via : longest;
    int *via = xmalloc(sizeof(int) * (size_t)longest);
    fprintf(w->e->out, "static const int %s[] = {", name_of(w, "move_emit_to"));
    for (int i = 0; i < m->n_moves; i++) {
        ir_move_via(m, &m->moves[i], via);
        fprintf(w->e->out, "%s%d", i ? ", " : "",
                emit_end_state(src, out_start, out_order, m, &m->moves[i], via));
    }
    free(via);
    fprintf(w->e->out, "%s};\n", m->n_moves ? "" : "-1");
}

/* The move tables hmmrt_traceback follows (viterbi calls that print a traceback). */
static void write_paths(CallWriter *w)
{
    const IrModel *m = w->m;
    FILE *o = w->e->out;
    const char *names = name_of(w, "names"), *hidden = name_of(w, "hidden");
    const char *paths = name_of(w, "paths");
    fprintf(o, "static const char *const %s[] = {", names);
    for (int s = 0; s < m->n_states; s++)
        fprintf(o, "%s%s", s ? ", " : "", emit_string(m->states[s].name));
    fprintf(o, "};\nstatic const unsigned char %s[] = {", hidden);
    for (int s = 0; s < m->n_states; s++)
        fprintf(o, "%s%d", s ? ", " : "", m->states[s].aux_of >= 0);
    if (w->call->plan.dense) {
        const char *state_emits = name_of(w, "state_emits");
        fprintf(o, "};\nstatic const unsigned char %s[] = {", state_emits);
        for (int s = 0; s < m->n_states; s++)
            fprintf(o, "%s%d", s ? ", " : "", m->states[s].kind == STATE_EMITTING);
        fprintf(o, "};\nstatic const hmmrt_paths %s = {\n    .n_states = %d, .state_names = "
                   "%s, .hidden = %s, .start = %d, .end = %d,\n"
                   "    .state_emits = %s,\n};\n", paths, m->n_states, names, hidden, m->start,
                m->end, state_emits);
        return;
    }
    const char *in_start = name_of(w, "in_start"), *in_moves = name_of(w, "in_moves");
    const char *move_from = name_of(w, "move_from"), *move_emits = name_of(w, "move_emits");
    const char *via_start = name_of(w, "via_start"), *via_name = name_of(w, "via");
    fprintf(o, "};\nstatic const int %s[] = {", in_start);
    for (int s = 0; s <= m->n_states; s++)
        fprintf(o, "%s%d", s ? ", " : "", w->in_start[s]);
    fprintf(o, "};\nstatic const int %s[] = {", in_moves);
    for (int i = 0; i < m->n_moves; i++)
        fprintf(o, "%s%d", i ? ", " : "", w->in_order[i]);
    fprintf(o, "%s};\nstatic const int %s[] = {", m->n_moves ? "" : "0", move_from);
    for (int i = 0; i < m->n_moves; i++)
        fprintf(o, "%s%d", i ? ", " : "", m->moves[i].from);
    fprintf(o, "%s};\nstatic const unsigned char %s[] = {", m->n_moves ? "" : "0", move_emits);
    for (int i = 0; i < m->n_moves; i++)
        fprintf(o, "%s%d", i ? ", " : "", m->moves[i].emission >= 0);
    fprintf(o, "%s};\nstatic const int %s[] = {0", m->n_moves ? "" : "0", via_start);
    int total = 0;
    for (int i = 0; i < m->n_moves; i++)
        fprintf(o, ", %d", total += m->moves[i].n_via);
    fprintf(o, "};\nstatic const int %s[] = {", via_name);
    int first = 1, longest = 1;
    for (int i = 0; i < m->n_moves; i++)
        longest = m->moves[i].n_via > longest ? m->moves[i].n_via : longest;
    int *via = xmalloc(sizeof(int) * (size_t)longest);
    for (int i = 0; i < m->n_moves; i++) {
        ir_move_via(m, &m->moves[i], via);
        for (int v = 0; v < m->moves[i].n_via; v++, first = 0)
            fprintf(o, "%s%d", first ? "" : ", ", via[v]);
    }
    free(via);
    fprintf(o, "%s};\n", total ? "" : "0");
    int segments = (w->call->attrs & ATTR_SEGMENTS) != 0;
    if (segments)
        write_emit_to(w);
    fprintf(o, "static const hmmrt_paths %s = {\n    .n_states = %d, .state_names = %s, "
               ".hidden = %s, .start = %d, .end = %d,\n    .in_start = %s, "
               ".in_moves = %s, .move_from = %s,\n    .move_emits = "
               "%s, .via_start = %s, .via = %s,%s\n};\n",
            paths, m->n_states, names, hidden, m->start, m->end, in_start, in_moves, move_from,
            move_emits, via_start, via_name,
            segments ? arena_printf(w->p->arena, "\n    .move_emit_to = %s,",
                                    name_of(w, "move_emit_to"))
                     : "");
}

/* The states a whole table shows: every state of the source, in declaration
 * order; for backward, a state on a silent cycle is shown through the state
 * that gathers what enters it (its value counts the paths around the cycle). */
static void write_shown_states(CallWriter *w)
{
    const IrModel *m = w->m;
    fprintf(w->e->out, "static const int %s[] = {", name_of(w, "shown"));
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
/* Column i from the best path (hmmrt_traceback or hmmrt_segments): '-'
 * without a path, and status 2 for broken back pointers. */
static void write_path_column(CallWriter *w, const char *fn, int bp_bytes, int i)
{
    emit_open(w->e, "if (score == -INFINITY)");
    emit_line(w->e, "hmmrt_buf_puts(&values[%d].text, \"-\");", i);
    emit_close(w->e, "");
    emit_line(w->e, "else if (%s(&%s, bp, %d, L, &values[%d].text) != 0)", fn, name_of(w, "paths"),
              bp_bytes, i);
    emit_line(w->e, "    return 2;");
}

static void write_run(CallWriter *w)
{
    const IrCall *call = w->call;
    const IrModel *m = w->m;
    int n = m->n_states;
    int want_table = (call->attrs & ATTR_SCORE_TABLE) != 0;
    int bp_bytes = call->plan.bp_bytes;
    emit_open(w->e, "static int %s(const hmmrt_seq *seq, hmmrt_value *values, "
                    "hmmrt_scratch *scratch)", name_of(w, "run"));
    if (m->real_dim)
        emit_line(w->e, "const double *x = seq->obs; /* L observations of %d reals */",
                  m->real_dim);
    else
        emit_line(w->e, "const uint8_t *x = seq->codes[%d];", w->layout->calls[w->index].alphabet);
    emit_line(w->e, "const int64_t L = seq->length;");
    if (want_table || bp_bytes)
        emit_line(w->e, "const size_t cells = (size_t)(L + 1) * %d;", n);
    /* the scratch memory: the columns (dense, or too many states for local
     * arrays), the table, the back pointers, each present one after the last */
    int scratch_columns = call->plan.dense || !w->plan->local_arrays;
    const char *columns_size =
        call->plan.dense ? arena_printf(w->p->arena, "(sizeof(double) * 3 + sizeof(int)) * %d", n)
                         : arena_printf(w->p->arena, "sizeof(%s) * %d",
                                        call->alg == ALG_VITERBI ? "double" : "long double", 2 * n);
    const char *part[3] = {"columns", "table", "bp"};
    const char *what[3] = {call->plan.dense ? "the dense kernel's columns" : "the two columns", "the table",
                           "the back pointers"};
    const char *size[3] = {columns_size, "sizeof(double) * cells",
                           arena_printf(w->p->arena, "sizeof(%s) * cells + 64",
                                        dp_bp_type(bp_bytes ? bp_bytes : 1))};
    int present[3] = {scratch_columns, want_table, bp_bytes > 0};
    const char *at[3] = {NULL, NULL, NULL}; /* where each present part begins in mem */
    int n_parts = present[0] + present[1] + present[2], first = 1;
    for (int k = 0; k < 3; k++) {
        if (!present[k])
            continue;
        if (first && n_parts == 1)
            emit_line(w->e, "const size_t bytes = %s; /* %s */", size[k], what[k]);
        else if (first)
            emit_line(w->e, "size_t bytes = %s; /* %s */", size[k], what[k]);
        else
            emit_line(w->e, "const size_t %s_at = bytes; bytes += %s;", part[k], size[k]);
        at[k] = first ? "mem" : arena_printf(w->p->arena, "(mem + %s_at)", part[k]);
        first = 0;
    }
    if (n_parts) {
        emit_line(w->e, "char *mem = hmmrt_scratch_get(scratch, bytes);");
        emit_line(w->e, "if (!mem)");
        emit_line(w->e, "    return 1;");
    } else {
        emit_line(w->e, "(void)scratch; /* none needed: the columns are local arrays */");
    }
    /* what the DP functions are handed: NULL for a part not in scratch memory */
    const char *columns = scratch_columns ? "columns" : "NULL";
    const char *wide_columns = scratch_columns ? "(long double *)mem" : "NULL";
    const char *table = want_table ? "table" : "NULL";
    if (scratch_columns)
        emit_line(w->e, "double *columns = (double *)mem;");
    if (want_table)
        emit_line(w->e, "double *table = (double *)%s;", at[1]);
    if (call->alg == ALG_VITERBI) {
        if (bp_bytes)
            emit_line(w->e, "%s *bp = (%s *)%s;", dp_bp_type(bp_bytes), dp_bp_type(bp_bytes), at[2]);
        if (call->plan.dense)
            emit_line(w->e, "const double score = hmmrt_dense_viterbi(&hmmc_%s, x, L, "
                            "columns, (int *)(columns + %d), %s, %d);", name_of(w, "dense"), 2 * n,
                      bp_bytes ? "bp" : "NULL", bp_bytes);
        else if (scan_supported(call)) {
            emit_line(w->e, "double score = hmmrt_scan_chosen(&%s, L) ? hmmrt_scan_max(&%s, x, L, "
                            "%s) : NAN; /* NAN: on one thread */", name_of(w, "scan"),
                      name_of(w, "scan"), bp_bytes ? "bp" : "NULL");
            emit_line(w->e, "if (isnan(score))");
            emit_line(w->e, "    score = %s(x, L, %s, %s, %s);", name_of(w, "viterbi"), columns,
                      table, bp_bytes ? "bp" : "NULL");
        } else
            emit_line(w->e, "const double score = %s(x, L, %s, %s, %s);", name_of(w, "viterbi"),
                      columns, table, bp_bytes ? "bp" : "NULL");
    } else if (call->plan.dense) {
        emit_comment(w->e, "scored with the whole batch (dense_scores; NaN: not so), or here on "
                           "its own");
        emit_line(w->e, "double score = seq->dense_scores ? seq->dense_scores[%d] : NAN;",
                  c_dense_sum_index(w->p, w->index));
        if (scan_dense_supported(call)) {
            emit_line(w->e, "if (isnan(score) && hmmrt_scan_chosen(&%s, L))", name_of(w, "scan"));
            emit_line(w->e, "    score = hmmrt_scan_sum(&%s, x, L); /* NAN: on one thread */",
                      name_of(w, "scan"));
        }
        emit_line(w->e, "if (isnan(score))");
        emit_line(w->e, "    score = hmmrt_dense_%s(&hmmc_%s, x, L, columns);",
                  algorithm_name(call->alg), name_of(w, "dense"));
        emit_line(w->e, "if (isnan(score))");
        emit_line(w->e, "    return 1; /* no memory for the probabilities */");
    } else {
        const char *name = name_of(w, algorithm_name(call->alg));
        emit_line(w->e, "int64_t scale;");
        if (call->plan.long_double_only) {
            emit_comment(w->e, "weights or emission values outside double's range: summed in long "
                               "double only");
            emit_line(w->e, "double score = %s_wide(x, L, %s, %s, &scale);", name, wide_columns,
                      table);
            emit_line(w->e, "hmmrt_count_long_double();");
        } else {
            int scan = scan_supported(call);
            if (scan) {
                emit_line(w->e, "double score = hmmrt_scan_chosen(&%s, L) ? hmmrt_scan_sum(&%s, x, "
                                "L) : NAN; /* NAN: on one thread */", name_of(w, "scan"),
                          name_of(w, "scan"));
                emit_open(w->e, "if (isnan(score))");
            }
            emit_line(w->e, "feclearexcept(FE_UNDERFLOW | FE_OVERFLOW);");
            emit_line(w->e, "%sscore = %s(x, L, %s, %s, &scale);", scan ? "" : "double ", name,
                      columns, table);
            emit_open(w->e, "if (fetestexcept(FE_UNDERFLOW | FE_OVERFLOW) || isnan(score) || "
                            "score == INFINITY)");
            emit_comment(w->e, "a value left double's normal range: digits or whole paths may be lost, "
                               "so the sum is done again in long double");
            emit_line(w->e, "score = %s_wide(x, L, %s, %s, &scale);", name, wide_columns, table);
            emit_line(w->e, "hmmrt_count_long_double();");
            emit_close(w->e, "");
            if (scan)
                emit_close(w->e, "");
        }
    }
    const LayoutCall *lc = &w->layout->calls[w->index];
    for (int k = 0; k < lc->n_columns; k++) {
        int i = lc->columns[k];
        const IrPrint *pr = &w->p->prints[i];
        switch (pr->attr) {
        case ATTR_SCORE:
            emit_line(w->e, "values[%d].score = score;", i);
            break;
        case ATTR_SCORE_TABLE:
            emit_line(w->e, "hmmrt_buf_table(&values[%d].text, table, L + 1, %d, %s, %d);",
                      i, n, name_of(w, "shown"), n_source_states(m));
            break;
        case ATTR_TRACEBACK:
            write_path_column(w, "hmmrt_traceback", bp_bytes, i);
            break;
        case ATTR_TRACEBACK_TABLE:
            emit_line(w->e, "hmmrt_traceback_table(&%s, bp, %d, L, %s, %d, &values[%d].text);",
                      name_of(w, "paths"), bp_bytes, name_of(w, "shown"), n_source_states(m), i);
            break;
        case ATTR_SEGMENTS:
            write_path_column(w, "hmmrt_segments", bp_bytes, i);
            break;
        default: /* the others are posterior's (c_write_posterior_call) */
            break;
        }
    }
    emit_line(w->e, "return 0;");
    emit_close(w->e, "");
}

static void write_call(Emitter *e, const Program *p, const Plans *plans, int index,
                       const char *data_prefix)
{
    const IrCall *call = &p->calls[index];
    if (plans->c[index].profile_data) {
        c_profile_write_call(e, p, plans, index, data_prefix);
        return;
    }
    if (call->alg == ALG_POSTERIOR) {
        emit_blank(e);
        emit_comment(e, "==== call %d: %s; libhmmrt's posterior engine on the model as written, "
                        "%d states, %d moves ====", index, call->label, call->model->n_states,
                     call->model->n_moves);
        c_write_posterior_call(e, p, plans->layout, index);
        if (scan_posterior_supported(call))
            write_scan_posterior(e, p, plans->layout, index);
        return;
    }
    CallWriter w = {.e = e, .p = p, .call = call, .index = index, .layout = plans->layout,
                    .plan = &plans->c[index], .m = call->model};
    dp_writer_init(&w.dp, e, p->arena, w.m);
    w.dp.prob_table = name_of(&w, "e");
    w.dp.log_table = name_of(&w, "le");
    w.dp.emission_row = "row";
    w.dp.back_pointers = call->plan.bp_bytes > 0;
    w.dp.wide_tables = call->alg != ALG_VITERBI && call->plan.long_double_only;
    w.in_start = w.dp.in_start;
    w.in_order = w.dp.in_order;
    int table_shape = w.plan->shape == C_SHAPE_TABLE;
    w.position = table_shape ? &position_table : &position_straight_line;
    emit_blank(e);
    emit_comment(e, "==== call %d: %s; %d live states, %d moves, %d state%s taking silent moves "
                    "in order; keeps %s%s ====", index, call->label, call->plan.n_live, w.m->n_moves,
                 w.m->n_silent_order, w.m->n_silent_order == 1 ? "" : "s",
                 call->storage == STORE_WHOLE_TABLE ? "whole tables"
                 : call->storage == STORE_BACKPOINTERS ? "two columns and back pointers"
                                                       : "two columns",
                 call->plan.dense ? "; dense: a vector-matrix product per position" : "");
    if (call->plan.dense) {
        dense_write_c_call(e, p, plans->layout, index, data_prefix);
        if (call->plan.bp_bytes)
            write_paths(&w);
        if (scan_dense_supported(call)) {
            emit_blank(e);
            write_scan_dense(&w);
        }
        emit_blank(e);
        write_run(&w);
        return;
    }
    if (w.m->real_dim)
        c_write_call_densities(e, p, call, plans->layout->calls[index].prefix);
    if (table_shape)
        c_table_write_tables(&w.dp, call, plans->layout, index);
    else if (!w.m->real_dim)
        write_emission_tables(&w);
    if (call->plan.bp_bytes)
        write_paths(&w);
    if (call->attrs & (ATTR_SCORE_TABLE | ATTR_TRACEBACK_TABLE))
        write_shown_states(&w);
    emit_blank(e);
    switch (call->alg) {
    case ALG_FORWARD:
    case ALG_BACKWARD:
        if (!call->plan.long_double_only) {
            write_sum(&w, call->alg == ALG_BACKWARD, &in_double);
            emit_blank(e);
        }
        write_sum(&w, call->alg == ALG_BACKWARD, &in_long_double);
        break;
    case ALG_VITERBI: write_viterbi(&w); break;
    case ALG_POSTERIOR: break; /* above */
    }
    if (scan_supported(call)) {
        emit_blank(e);
        write_scan(&w);
    }
    emit_blank(e);
    write_run(&w);
}

/* ---- the program: models for the sampler, columns, main -------------------- */


static void write_source_model(Emitter *e, const Program *p, const Plans *plans,
                               int model_index, int index, const char *data_prefix)
{
    const IrModel *m = &p->models[model_index];
    FILE *o = e->out;
    char num[32];
    emit_blank(e);
    emit_comment(e, "model %s as written (used by --sample)", m->name);
    fprintf(o, "static const char *const m%d_states[] = {", index);
    for (int s = 0; s < m->n_states; s++)
        fprintf(o, "%s%s", s ? ", " : "", emit_string(m->states[s].name));
    fprintf(o, "};\n");
    int dense = dense_sample_call(p, model_index);
    if (c_profile_model_in_data(p, plans, model_index)) {
        size_t emissions_at, at = c_profile_sample_offset(p, plans, model_index, &emissions_at);
        emit_comment(e, "its %d moves and %d emission tables, from %s.profiles (bytes %zu and %zu)",
                     m->n_moves, m->n_emissions, data_prefix, at, emissions_at);
        emit_line(e, "_Static_assert(sizeof(hmmrt_model_move) == 24, \"the data file holds "
                     "24-byte records\");");
        fprintf(o, "#define m%d_moves ((const hmmrt_model_move *)((const char *)hmmc_profile_data + "
                   "%zu))\n", index, at);
        fprintf(o, "#define m%d_emissions ((const double *)((const char *)hmmc_profile_data + "
                   "%zu))\n", index, emissions_at);
        c_write_training_tables(e, p, model_index, index);
        return;
    }
    if (dense >= 0) {
        emit_comment(e, "its %d moves are made from the matrix of %s when --sample needs them",
                     m->n_moves, p->calls[dense].label);
        fprintf(o, "static const int m%d_state_emission[] = {", index);
        for (int s = 0; s < m->n_states; s++)
            fprintf(o, "%s%d", s ? ", " : "", m->states[s].emission);
        fprintf(o, "};\n");
    } else if (m->n_moves > SOURCE_MOVES_INLINE_MAX) {
        emit_comment(e, "its %d moves, from %s.m%d.moves", m->n_moves, data_prefix, model_index);
        emit_line(e, "_Static_assert(sizeof(hmmrt_model_move) == 24, \"the moves file holds "
                     "24-byte records\");");
        fprintf(o, "HMMC_INCBIN(hmmrt_model_move, m%d_moves, %s);\n", index,
                emit_string(arena_printf(p->arena, "%s.m%d.moves", data_prefix, model_index)));
    } else {
        if (m->n_length_weights)
            emit_comment(e, "length-dependent weights taken at L = %d for --sample, which "
                            "does not know the length it will draw", SAMPLE_LENGTH);
        fprintf(o, "static const hmmrt_model_move m%d_moves[] = {\n", index);
        for (int i = 0; i < m->n_moves; i++) {
            const IrMove *mv = &m->moves[i];
            fprintf(o, "    {%d, %d, %d, %s},\n", mv->from, mv->to, mv->emission,
                    emit_double(num, sample_move_weight(m, mv)));
        }
        if (!m->n_moves)
            fprintf(o, "    {0, 0, -1, 0.0},\n");
        fprintf(o, "};\n");
    }
    fprintf(o, "static const double m%d_emissions[] = {", index);
    for (int em = 0; em < m->n_emissions; em++)
        for (int k = 0; k < m->K; k++)
            fprintf(o, "%s%s", em || k ? ", " : "", emit_double(num, exp(m->emissions[em].logp[k])));
    fprintf(o, "%s};\n", m->n_emissions && m->K ? "" : "0.0");
    if (m->real_dim)
        c_write_model_densities(e, p, model_index);
    c_write_training_tables(e, p, model_index, index);
}

/* ".real_dim = D" for a program over real observations, else "". */
static const char *real_dim_field(const Program *p)
{
    for (int c = 0; c < p->n_calls; c++)
        if (p->calls[c].model->real_dim)
            return arena_printf(p->arena, " .real_dim = %d,", p->calls[c].model->real_dim);
    return "";
}

static void write_program(Emitter *e, const Program *p, const Plans *plans, const char *name,
                          const char *data_prefix)
{
    FILE *o = e->out;
    const Layout *layout = plans->layout;
    int gpu = plans->gpu != NULL;
    const int *order = layout->used_models, n_used = layout->n_used;
    for (int i = 0; i < n_used; i++)
        write_source_model(e, p, plans, order[i], i, data_prefix);

    emit_blank(e);
    emit_comment(e, "==== the program ====");
    emit_open(e, "static int score_cpu(const hmmrt_seq *seq, hmmrt_value *values, "
                 "hmmrt_scratch *scratch)");
    for (int c = 0; c < p->n_calls; c++) {
        emit_line(e, "int failed%d = %s(seq, values, scratch);", c, layout_name(layout, c, "run"));
        emit_line(e, "if (failed%d)", c);
        emit_line(e, "    return failed%d;", c);
    }
    if (!p->n_calls)
        emit_line(e, "(void)seq, (void)values, (void)scratch;");
    emit_line(e, "return 0;");
    emit_close(e, "");
    emit_blank(e);
    fprintf(o, "static const char *const alphabets[] = {");
    for (int a = 0; a < layout->n_alphabets; a++)
        fprintf(o, "%s%s", a ? ", " : "", emit_string(layout->alphabets[a]));
    fprintf(o, "%s};\n", layout->n_alphabets ? "" : "\"\"");
    fprintf(o, "static const hmmrt_column columns[] = {\n");
    for (int i = 0; i < p->n_prints; i++) {
        const IrPrint *pr = &p->prints[i];
        const IrCall *call = &p->calls[pr->call];
        int text = pr->attr != ATTR_SCORE;
        fprintf(o, "    {.label = %s, .kind = %s, ", emit_string(pr->label),
                text ? "HMMRT_FIELD_TEXT" : "HMMRT_FIELD_SCORE");
        if (pr->attr == ATTR_SCORE_TABLE || pr->attr == ATTR_TRACEBACK_TABLE) {
            const IrModel *m = call->model;
            char *states = arena_strdup(p->arena, "");
            for (int s = 0; s < m->n_states; s++)
                if (m->states[s].aux_of < 0)
                    states = arena_printf(p->arena, "%s%s%s", states, *states ? "," : "",
                                          m->states[s].name);
            fprintf(o, ".note = %s},\n", emit_string(arena_printf(
                p->arena, "positions 0..length separated by ';', each the %s of the states %s "
                "separated by ','", pr->attr == ATTR_SCORE_TABLE ? "ln values" :
                "best predecessors ('-' for none)", states)));
        } else if (pr->attr == ATTR_PROBABILITY_TABLE) {
            const IrModel *m = call->model;
            char *states = arena_strdup(p->arena, "");
            for (int s = 0; s < m->n_states; s++)
                states = arena_printf(p->arena, "%s%s%s", states, s ? "," : "", m->states[s].name);
            fprintf(o, ".note = %s},\n", emit_string(arena_printf(
                p->arena, "positions 1..length separated by ';', each the posterior "
                "probabilities of the states %s separated by ',' ('-': no path)", states)));
        } else {
            /* viterbi works in logs: its -inf is always an impossible sequence */
            int sum = pr->attr == ATTR_SCORE && call->alg != ALG_VITERBI;
            fprintf(o, ".possible_from = %d, .sum_of_paths = %d},\n",
                    layout->columns[i].possible_from, sum && !call->plan.dense && call->alg != ALG_POSTERIOR);
        }
    }
    if (!p->n_prints)
        fprintf(o, "    {.label = \"\", .kind = HMMRT_FIELD_SCORE},\n");
    fprintf(o, "};\nstatic const hmmrt_model models[] = {\n");
    for (int i = 0; i < n_used; i++) {
        const IrModel *m = &p->models[order[i]];
        int dense = dense_sample_call(p, order[i]);
        fprintf(o, "    {.name = %s, .alphabet = %d, .n_states = %d, .state_names = m%d_states, "
                   ".start = %d, .end = %d,\n", emit_string(m->name),
                layout->model_alphabet[order[i]],
                m->n_states, i, m->start, m->end);
        if (dense >= 0)
            fprintf(o, "     .n_emissions = %d, .emissions = m%d_emissions, .dense = &hmmc_%s, "
                       ".state_emission = m%d_state_emission%s},\n", m->n_emissions, i,
                    layout_name(layout, dense, "dense"), i, c_training_fields(p, order[i], i));
        else
            fprintf(o, "     .n_moves = %d, .moves = m%d_moves, .n_emissions = %d, .emissions = "
                       "m%d_emissions%s%s},\n", m->n_moves, i, m->n_emissions, i,
                    c_training_fields(p, order[i], i),
                    m->real_dim ? arena_printf(p->arena, ", .densities = &r%d_densities",
                                               order[i]) : "");
    }
    fprintf(o, "};\n");
    int n_scan = 0;
    for (int c = 0; c < p->n_calls; c++)
        n_scan += scan_listed(&p->calls[c]) && !plans->c[c].profile_data;
    if (n_scan) {
        emit_comment(e, "the calls that can scan one long sequence over every thread (hmmrt_scan.h)");
        fprintf(o, "static const hmmrt_scan_call *const scan_calls[] = {");
        for (int c = 0, k = 0; c < p->n_calls; c++)
            if (scan_listed(&p->calls[c]) && !plans->c[c].profile_data)
                fprintf(o, "%s&%s", k++ ? ", " : "", layout_name(layout, c, "scan"));
        fprintf(o, "};\n");
    }
    if (gpu)
        backend_cuda_write_host(e, p, plans);
    c_write_source_text(e, p, data_prefix);
    const char *hits = c_write_hits(e, p, layout);
    const char *rows = c_write_rows(e, p);
    c_write_dense_batching(e, p, layout);
    /* emit_string's result lasts until its next call: one a printf */
    fprintf(o, "static const hmmrt_program program = {\n    .name = %s, ", emit_string(name));
    fprintf(o, ".source = %s, ", emit_string(p->path));
    fprintf(o, "%s.target = \"%s\",\n    .n_alphabets = %d, .alphabets = alphabets, "
               ".n_columns = %d, .columns = columns,\n    .n_models = %d, .models = models, "
               ".score_cpu = score_cpu, .gpu = %s,%s%s%s%s%s%s\n};\n", c_source_fields(p),
            gpu ? "cuda" : "c", layout->n_alphabets, p->n_prints, n_used,
            gpu ? "&gpu_program" : "NULL", real_dim_field(p), *hits ? "\n    " : "", hits,
            c_dense_uses_blas(p) ? "\n    .dense_batching = &hmmc_dense_batching," : "",
            n_scan ? arena_printf(p->arena, "\n    .n_scan_calls = %d, .scan_calls = scan_calls,",
                                  n_scan) : "", rows);
    emit_blank(e);
    emit_line(e, "int main(int argc, char **argv) { return hmmrt_main(argc, argv, &program); }");
}

int backend_c_write(const Program *p, const Plans *plans, FILE *out, const char *name,
                    const char *data_prefix)
{
    Emitter e = {out, 0};
    int gpu = plans->gpu != NULL;
    emit_comment(&e, "%s.c: generated by hmmc %s from %s for the C target. Do not edit: change "
                     "the model and run hmmc again. Each call of main is a function specialised "
                     "to its model; libhmmrt (hmmrt.h) reads the sequences, runs the calls on "
                     "many threads and prints the table.", name, HMMC_VERSION, p->path);
    emit_line(&e, "#include <fenv.h>");
    emit_line(&e, "#include <math.h>");
    emit_line(&e, "#include <stdint.h>");
    emit_line(&e, "#include <string.h>");
    emit_line(&e, "#include \"%s\"", gpu ? "hmmrt_gpu.h" : "hmmrt.h");
    emit_line(&e, "#include \"hmmrt_scan.h\"");
    emit_blank(&e);
    emit_line(&e, "static const double LN2 = 0.693147180559945309417232121458176568; /* ln 2 */");
    int profiles = c_profile_needs_data(p, plans);
    if (profiles)
        emit_line(&e, "#include \"hmmrt_profile.h\"");
    if (dense_needs_data(p) || profiles) {
        emit_blank(&e);
        dense_write_incbin_macro(&e);
    }
    if (profiles) {
        emit_blank(&e);
        emit_comment(&e, "The tables of the profiles that libhmmrt's generic scorer reads "
                         "(hmmrt_profile.h), from %s.profiles", data_prefix);
        emit_line(&e, "_Static_assert(HMMRT_PX_N == 9 && HMMRT_PT_N == 10, \"the tables' "
                      "layout of hmmc's backend_c_profile.c\");");
        fprintf(e.out, "HMMC_INCBIN(double, hmmc_profile_data, %s);\n",
                emit_string(arena_printf(p->arena, "%s.profiles", data_prefix)));
    }
    for (int i = 0; i < plans->layout->n_used; i++)
        if (p->models[plans->layout->used_models[i]].real_dim)
            c_write_model_gaussians(&e, p, plans->layout->used_models[i]);
    for (int c = 0; c < p->n_calls; c++)
        write_call(&e, p, plans, c, data_prefix);
    write_program(&e, p, plans, name, data_prefix);
    return ferror(out) ? -1 : 0;
}
