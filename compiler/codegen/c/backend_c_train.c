/* backend_c_train.c: the C backend's writing for posterior calls (a run
 * function handing the model as written to libhmmrt's engine) and for
 * --train (fixed flags, the places of numbers in the source, the source's
 * text): see backend_c_train.h. */
#include "codegen/c/backend_c_train.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/dense.h"
#include "codegen/backend_dense.h"
#include "codegen/c/backend_c_dense.h"

int c_main_model_slot(const Program *p, int model_index, int *n_used)
{
    int slot = -1, n = 0;
    for (int c = 0; c < p->n_calls; c++) {
        int mi = p->calls[c].model_index, seen = 0;
        for (int k = 0; k < c && !seen; k++)
            seen = p->calls[k].model_index == mi;
        if (seen)
            continue;
        if (mi == model_index)
            slot = n;
        n++;
    }
    if (n_used)
        *n_used = n;
    return slot;
}

/* The first output column of call `index` printing attr, or -1. */
static int column_of(const Program *p, int index, unsigned attr)
{
    for (int i = 0; i < p->n_prints; i++)
        if (p->prints[i].call == index && p->prints[i].attr == attr)
            return i;
    return -1;
}

void c_write_posterior_call(Emitter *e, const Program *p, const Layout *layout, int index)
{
    const IrCall *call = &p->calls[index];
    const int alphabet = layout->calls[index].alphabet;
    const char *name = layout_name(layout, index, "call");
    int n_used, slot = c_main_model_slot(p, call->model_index, &n_used);
    int first = 1; /* the first posterior call declares models[] ahead */
    for (int c = 0; c < index; c++)
        first &= p->calls[c].alg != ALG_POSTERIOR;
    if (first) {
        emit_comment(e, "the models of main, as written (defined with the program below)");
        emit_line(e, "static const hmmrt_model models[%d];", n_used);
    }
    emit_comment(e, "libhmmrt's engine (runtime/posterior.c) runs forward and backward over "
                    "model %s as written; each field the output column of an attribute, -1 "
                    "when it is not printed", call->model->name);
    emit_open(e, "static const hmmrt_posterior_call %s =", name);
    emit_line(e, ".model = &models[%d], /* %s */", slot, call->model->name);
    emit_line(e, ".n_symbols = %d,", call->model->K);
    emit_line(e, ".score_column = %d,", column_of(p, index, ATTR_SCORE));
    emit_line(e, ".decode_column = %d,", column_of(p, index, ATTR_DECODE));
    emit_line(e, ".segments_column = %d,", column_of(p, index, ATTR_SEGMENTS));
    emit_line(e, ".table_column = %d,", column_of(p, index, ATTR_PROBABILITY_TABLE));
    emit_close(e, ";");
    emit_blank(e);
    emit_open(e, "static int %s(const hmmrt_seq *seq, hmmrt_value *values, "
                 "hmmrt_scratch *scratch)", layout_name(layout, index, "run"));
    int batched = c_dense_sum_index(p, index);
    if (batched >= 0) {
        emit_comment(e, "filled with the whole batch (dense_scores: its ln P; NaN: not so), or "
                        "here on its own");
        emit_line(e, "int failed = 0;");
        emit_line(e, "if (!seq->dense_scores || isnan(seq->dense_scores[%d]))", batched);
        emit_line(e, "    failed = hmmrt_posterior(&%s, seq->codes[%d], seq->length, values, "
                     "scratch);", name, alphabet);
    } else if (call->model->real_dim) {
        emit_line(e, "int failed = hmmrt_posterior_real(&%s, seq->obs, seq->length, values, "
                     "scratch);", name);
    } else {
        emit_line(e, "int failed = hmmrt_posterior(&%s, seq->codes[%d], seq->length, values, "
                     "scratch);", name, alphabet);
    }
    /* an attribute printed twice: its later columns copy the first */
    for (int i = 0; i < p->n_prints; i++) {
        const IrPrint *pr = &p->prints[i];
        int first = pr->call == index ? column_of(p, index, pr->attr) : i;
        if (first == i)
            continue;
        if (pr->attr == ATTR_SCORE) {
            emit_line(e, "values[%d].score = values[%d].score;", i, first);
        } else {
            emit_line(e, "hmmrt_buf_reset(&values[%d].text);", i);
            emit_line(e, "hmmrt_buf_puts(&values[%d].text, values[%d].text.len ? "
                         "values[%d].text.data : \"\");", i, first, first);
        }
    }
    emit_line(e, "return failed;");
    emit_close(e, "");
}

/* The most numbers of densities whose places a program carries (two longs
 * each, beside the numbers themselves): beyond, the model is not trainable. */
enum { DENSITY_SPANS_INLINE_MAX = 1 << 20 };

/* A move's place in the dense order: its source's row, then its destination's column. */
typedef struct DenseKey {
    long key;
    int move;
} DenseKey;

static int by_key(const void *a, const void *b)
{
    long x = ((const DenseKey *)a)->key, y = ((const DenseKey *)b)->key;
    return x < y ? -1 : x > y;
}

/* The order in which the program's moves of model i are numbered: the
 * model's own, or, for a model whose moves the program makes from a dense
 * call's matrix (hmmrt_model.dense), the order libhmmrt makes them in
 * (dense_moves, runtime/sample.c): the start's row, then each emitting
 * state's in the matrix's order, each row's columns in that order, the end
 * last. NULL when a move has no place there (then the model is not trainable). */
static int *move_order(const Program *p, int model_index)
{
    const IrModel *m = &p->models[model_index];
    int *order = ARENA_ARRAY(p->arena, int, m->n_moves ? m->n_moves : 1);
    if (dense_sample_call(p, model_index) < 0) {
        for (int i = 0; i < m->n_moves; i++)
            order[i] = i;
        return order;
    }
    DenseView *d = dense_view_header(p->arena, m, 0);
    long n = d->n;
    long *rank = ARENA_ARRAY(p->arena, long, m->n_states); /* from: 0 start, k + 1; to: j, n end */
    for (int s = 0; s < m->n_states; s++)
        rank[s] = -1;
    for (long j = 0; j < n; j++)
        rank[d->state_of[j]] = j;
    DenseKey *keys = xmalloc(sizeof(DenseKey) * (size_t)(m->n_moves ? m->n_moves : 1));
    int ok = 1;
    for (int i = 0; i < m->n_moves && ok; i++) {
        const IrMove *mv = &m->moves[i];
        long row = mv->from == m->start ? 0 : rank[mv->from] >= 0 ? rank[mv->from] + 1 : -1;
        long column = mv->to == m->end ? n : rank[mv->to];
        ok = row >= 0 && column >= 0;
        keys[i] = (DenseKey){row * (n + 1) + column, i};
    }
    qsort(keys, (size_t)m->n_moves, sizeof *keys, by_key);
    for (int i = 0; i < m->n_moves; i++)
        order[i] = keys[i].move;
    free(keys);
    return ok ? order : NULL;
}

/* Why model i of main cannot carry training's tables, or NULL: they need
 * its numbers' places (sema), its moves written in the program (not in a
 * data file) or made from a dense matrix in an order known here, the
 * program's source, and numbers that double holds (the engine's). */
static const char *not_trainable(const Program *p, int model_index)
{
    const IrModel *m = &p->models[model_index];
    if (!source_text_of(p))
        return "the program does not carry its source (a file made by hmmc --import-hmmer: "
               "training keeps HMMER's scores as they are)";
    if (m->n_length_weights)
        return "some of its weights depend on the sequence length (written (EXPR) of L), which "
               "training does not fit";
    long density_numbers = 0;
    for (int em = 0; em < m->n_emissions; em++)
        density_numbers += m->emissions[em].n_spans;
    if (density_numbers > DENSITY_SPANS_INLINE_MAX)
        return "its gaussians hold too many numbers to keep their places in the source (more "
               "than 1,048,576)";
    if (!m->move_span || m->n_moves > SOURCE_MOVES_INLINE_MAX)
        return "too many transitions to keep their places in the source";
    if (!move_order(p, model_index))
        return "its moves are made from a matrix in an order unknown here";
    if (ir_outside_double(m))
        return "a weight or emission value lies outside double's range (below about 1e-308 "
               "or above 1e308), and training works in double";
    return NULL;
}

static int trainable(const Program *p, int model_index)
{
    return not_trainable(p, model_index) == NULL;
}

/* A real alphabet's densities: the bytes of each number's text, emission
 * em's at m<slot>_density_span[m<slot>_density_span_at[em] ..
 * m<slot>_density_span_at[em + 1] - 1] (a gaussian's means, then its
 * variances or covariance row by row; a mixture's weights). */
static void write_density_spans(Emitter *e, const IrModel *m, int slot)
{
    FILE *o = e->out;
    emit_comment(e, "for --train: the bytes of each density's numbers in the source, emission "
                    "by emission (a gaussian's means, then its variances or covariance row by "
                    "row; a mixture's weights)");
    fprintf(o, "static const int m%d_density_span_at[] = {0", slot);
    int at = 0;
    for (int em = 0; em < m->n_emissions; em++)
        fprintf(o, ", %d", at += m->emissions[em].n_spans);
    fprintf(o, "};\nstatic const hmmrt_span m%d_density_span[] = {", slot);
    int first = 1;
    for (int em = 0; em < m->n_emissions; em++)
        for (int k = 0; k < m->emissions[em].n_spans; k++, first = 0)
            fprintf(o, "%s{%ld, %ld}", first ? "" : ", ", m->emissions[em].spans[k].begin,
                    m->emissions[em].spans[k].end);
    fprintf(o, "%s};\nstatic const char *const m%d_emission_names[] = {", first ? "{-1, -1}" : "",
            slot);
    for (int em = 0; em < m->n_emissions; em++)
        fprintf(o, "%s%s", em ? ", " : "", emit_string(m->emissions[em].name));
    fprintf(o, "%s};\n", m->n_emissions ? "" : "NULL");
}

void c_write_training_tables(Emitter *e, const Program *p, int model_index, int slot)
{
    const IrModel *m = &p->models[model_index];
    FILE *o = e->out;
    if (!trainable(p, model_index)) {
        if (m->n_moves)
            emit_comment(e, "not trainable (--train): %s", not_trainable(p, model_index));
        return;
    }
    int dense = dense_sample_call(p, model_index) >= 0;
    emit_comment(e, "for --train: which numbers are `fixed`, and the bytes [begin, end) of each "
                    "in the source (hmmc_source_text)%s", dense ? "; the moves in the order "
                    "libhmmrt makes them from the matrix (row by row, the start first)" : "");
    const int *order = move_order(p, model_index);
    fprintf(o, "static const unsigned char m%d_move_fixed[] = {", slot);
    for (int i = 0; i < m->n_moves; i++)
        fprintf(o, "%s%d", i ? ", " : "", m->move_fixed[order[i]]);
    fprintf(o, "%s};\nstatic const hmmrt_span m%d_move_span[] = {", m->n_moves ? "" : "0", slot);
    for (int i = 0; i < m->n_moves; i++)
        fprintf(o, "%s{%ld, %ld}", i ? ", " : "", m->move_span[order[i]].begin,
                m->move_span[order[i]].end);
    fprintf(o, "%s};\nstatic const unsigned char m%d_emission_fixed[] = {",
            m->n_moves ? "" : "{-1, -1}", slot);
    for (int em = 0; em < m->n_emissions; em++)
        fprintf(o, "%s%d", em ? ", " : "", m->emission_fixed[em]);
    fprintf(o, "%s};\nstatic const hmmrt_span m%d_emission_span[] = {", m->n_emissions ? "" : "0",
            slot);
    size_t n = (size_t)m->n_emissions * (size_t)m->K;
    for (size_t i = 0; i < n; i++)
        fprintf(o, "%s{%ld, %ld}", i ? ", " : "", m->emission_span[i].begin,
                m->emission_span[i].end);
    fprintf(o, "%s};\n", n ? "" : "{-1, -1}");
    if (m->real_dim)
        write_density_spans(e, m, slot);
}

const char *c_training_fields(const Program *p, int model_index, int slot)
{
    if (!trainable(p, model_index))
        return arena_printf(p->arena, ",\n     .not_trainable = %s",
                            emit_string(not_trainable(p, model_index)));
    const char *fields = arena_printf(
        p->arena, ",\n     .move_fixed = m%d_move_fixed, .emission_fixed = m%d_emission_fixed, "
        ".move_span = m%d_move_span,\n     .emission_span = m%d_emission_span", slot, slot, slot,
        slot);
    if (p->models[model_index].real_dim)
        fields = arena_printf(p->arena, "%s,\n     .density_span_at = m%d_density_span_at, "
                              ".density_span = m%d_density_span,\n     .emission_names = m%d_emission_names",
                              fields, slot, slot, slot);
    return fields;
}

void c_write_source_text(Emitter *e, const Program *p, const char *data_prefix)
{
    if (!source_text_of(p))
        return;
    FILE *o = e->out;
    emit_blank(e);
    if (source_in_file(p)) {
        emit_comment(e, "the source, %ld bytes, for --train: from %s.source", p->source_length,
                     data_prefix);
        fprintf(o, "HMMC_INCBIN(char, hmmc_source_text, %s);\n",
                emit_string(arena_printf(p->arena, "%s.source", data_prefix)));
        return;
    }
    emit_comment(e, "the source, for --train: it writes this text with the fitted numbers in "
                    "place of the old ones");
    fprintf(o, "static const char hmmc_source_text[] =\n");
    const char *s = p->source_text, *end = s + p->source_length;
    /* a line of the source a line of C */
    if (s == end)
        fprintf(o, "    \"\"");
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *line_end = nl ? nl : end;
        const char *literal = emit_string(arena_strndup(p->arena, s, (size_t)(line_end - s)));
        /* the line's literal, its closing quote after "\n" when it has one */
        fprintf(o, "%s    %.*s%s\"", s == p->source_text ? "" : "\n", (int)strlen(literal) - 1,
                literal, nl ? "\\n" : "");
        s = nl ? nl + 1 : end;
    }
    fprintf(o, ";\n");
}

const char *c_source_fields(const Program *p)
{
    if (!source_text_of(p))
        return "";
    return arena_printf(p->arena, ".source_text = hmmc_source_text, .source_length = %ld,\n    ",
                        p->source_length);
}
