/* backend_dense.c: the data files of dense calls and of very large models,
 * and the C declarations that read them (backend_dense.h). */

/* A 6,000-state
 * dense model has 36 million moves: as C text its matrix would take the C
 * compiler minutes; as a binary file assembled with .incbin it takes none.
 * Calls whose matrices hold the same numbers (forward and backward of one
 * model; viterbi too where no parallel paths were merged) share one file,
 * that of the first of them (dense_data_owner), so the program carries each
 * matrix once. */
#include "codegen/backend_dense.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "analysis/dense.h"

int dense_sample_call(const Program *p, int i)
{
    for (int c = 0; c < p->n_calls; c++) {
        const IrCall *call = &p->calls[c];
        if (call->plan.dense && call->model_index == i &&
            dense_same_view(&p->models[i], 0, call->model, call->alg == ALG_VITERBI))
            return c;
    }
    return -1;
}

/* Whether model i is run by main and has too many moves for C text, and no
 * dense call holds them as a matrix. */
static int moves_in_file(const Program *p, int i)
{
    for (int c = 0; c < p->n_calls; c++)
        if (p->calls[c].model_index == i)
            return p->models[i].n_moves > SOURCE_MOVES_INLINE_MAX && dense_sample_call(p, i) < 0;
    return 0;
}

const char *source_text_of(const Program *p)
{
    static const char mark[] = "imported by\n// `hmmc --import-hmmer ";
    if (!p->source_text)
        return NULL;
    size_t n = p->source_length < 8192 ? (size_t)p->source_length : 8192;
    return memmem(p->source_text, n, mark, sizeof mark - 1) ? NULL : p->source_text;
}

int source_in_file(const Program *p)
{
    return source_text_of(p) && p->source_length > SOURCE_TEXT_INLINE_MAX;
}

int dense_data_owner(const Program *p, int c)
{
    const IrCall *call = &p->calls[c];
    for (int k = 0; k < c; k++) {
        const IrCall *other = &p->calls[k];
        if (other->plan.dense && other->model_index == call->model_index &&
            dense_same_view(other->model, other->alg == ALG_VITERBI, call->model,
                            call->alg == ALG_VITERBI))
            return k;
    }
    return c;
}

/* Whether call c writes a matrix file (a dense call that reads no earlier
 * call's file). */
static int owns_data(const Program *p, int c)
{
    return p->calls[c].plan.dense && dense_data_owner(p, c) == c;
}

int dense_needs_data(const Program *p)
{
    for (int c = 0; c < p->n_calls; c++)
        if (p->calls[c].plan.dense || moves_in_file(p, p->calls[c].model_index))
            return 1;
    return source_in_file(p);
}

static int write_file(const char *path, const void *const *parts, const size_t *sizes, int n)
{
    FILE *f = fopen(path, "wb");
    int ok = f != NULL;
    for (int i = 0; ok && i < n; i++)
        ok = fwrite(parts[i], 1, sizes[i], f) == sizes[i];
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, "hmmc: error: cannot write %s: %s\n", path, strerror(errno));
    return ok ? 0 : -1;
}

double sample_move_weight(const IrModel *m, const IrMove *mv)
{
    double w = exp(mv->lw_sum);
    if (mv->length_weight)
        w *= lexpr_eval(m->length_weights[mv->length_weight - 1].expr, SAMPLE_LENGTH);
    return w;
}

/* The moves of a model as the runtime's hmmrt_model_move records (from, to,
 * emission, then the weight as written, 8-byte aligned: 24 bytes). */
static int write_moves(const IrModel *m, const char *path, Arena *a)
{
    unsigned char *rec = arena_alloc(a, (size_t)m->n_moves * 24);
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        int ints[4] = {mv->from, mv->to, mv->emission, 0};
        double weight = sample_move_weight(m, mv);
        memcpy(rec + (size_t)i * 24, ints, 16);
        memcpy(rec + (size_t)i * 24 + 16, &weight, 8);
    }
    const void *parts[] = {rec};
    size_t sizes[] = {(size_t)m->n_moves * 24};
    return write_file(path, parts, sizes, 1);
}

void dense_remove_data(const Program *p, const char *prefix)
{
    for (int c = 0; c < p->n_calls; c++)
        if (owns_data(p, c))
            unlink(arena_printf(p->arena, "%s.c%d.dense", prefix, c));
    for (int i = 0; i < p->n_models; i++)
        if (moves_in_file(p, i))
            unlink(arena_printf(p->arena, "%s.m%d.moves", prefix, i));
    if (source_in_file(p))
        unlink(arena_printf(p->arena, "%s.source", prefix));
}

int dense_write_data(const Program *p, const char *prefix)
{
    for (int c = 0; c < p->n_calls; c++) {
        const IrCall *call = &p->calls[c];
        if (!owns_data(p, c))
            continue;
        DenseView *d = dense_view(p->arena, call->model, call->alg == ALG_VITERBI);
        size_t n = (size_t)d->n;
        const void *parts[] = {d->matrix, d->start, d->end, d->emission};
        size_t sizes[] = {8 * n * n, 8 * n, 8 * n, 8 * n * (size_t)d->K};
        int written = write_file(arena_printf(p->arena, "%s.c%d.dense", prefix, c), parts, sizes, 4);
        dense_view_free(d);
        if (written != 0)
            return -1;
    }
    for (int i = 0; i < p->n_models; i++) {
        if (moves_in_file(p, i) &&
            write_moves(&p->models[i], arena_printf(p->arena, "%s.m%d.moves", prefix, i),
                        p->arena) != 0)
            return -1;
    }
    if (source_in_file(p)) {
        const void *parts[] = {p->source_text};
        size_t sizes[] = {(size_t)p->source_length};
        if (write_file(arena_printf(p->arena, "%s.source", prefix), parts, sizes, 1) != 0)
            return -1;
    }
    return 0;
}

void dense_write_incbin_macro(Emitter *e)
{
    emit_comment(e, "HMMC_INCBIN(type, symbol, file): the array `symbol` of `type`, read-only, "
                    "assembled from a binary file that hmmc wrote beside this source.");
    emit_line(e, "#define HMMC_INCBIN(type, symbol, file) \\");
    emit_line(e, "    __asm__(\".section .rodata\\n.balign 64\\n.globl \" #symbol \"\\n.hidden \" "
                 "#symbol \"\\n\" \\");
    emit_line(e, "            #symbol \":\\n.incbin \\\"\" file \"\\\"\\n.previous\\n\"); \\");
    emit_line(e, "    extern const type symbol[]");
}

void dense_write_c_call(Emitter *e, const Program *p, const Layout *layout, int index,
                        const char *prefix)
{
    const IrCall *call = &p->calls[index];
    const IrModel *m = call->model;
    DenseView *d = dense_view_header(p->arena, m, call->alg == ALG_VITERBI);
    FILE *o = e->out;
    char num[32];
    long n = d->n;
    int owner = dense_data_owner(p, index);
    const char *data = arena_printf(p->arena, "hmmc_%s", layout_name(layout, owner, "data"));
    const char *state_of = layout_name(layout, index, "state_of");
    emit_comment(e, "The model as a matrix over its %ld emitting states (natural logs, -inf: no "
                    "move), from %s.c%d.dense: the matrix (k -> j at [k * %ld + j]), the start "
                    "vector, the end vector, the emissions (symbol c from state j at [c * %ld + "
                    "j]).", n, prefix, owner, n, n);
    if (owner == index)
        fprintf(o, "HMMC_INCBIN(double, %s, %s);\n", data,
                emit_string(arena_printf(p->arena, "%s.c%d.dense", prefix, index)));
    else
        emit_comment(e, "%s holds the same numbers as %s: it reads its data (%s)",
                     call->label, p->calls[owner].label, data);
    fprintf(o, "static const int %s[] = {", state_of);
    for (long j = 0; j < n; j++)
        fprintf(o, "%s%d", j ? ", " : "", d->state_of[j]);
    fprintf(o, "%s};\n", n ? "" : "0");
    fprintf(o, "hmmrt_dense hmmc_%s = {\n    .n = %ld, .K = %d, .n_states = %d, .start = %d, "
               ".end = %d, .state_of = %s,\n    .matrix = %s, .start_w = "
               "%s + %ld, .end_w = %s + %ld,\n    .start_end = %s, "
               ".emission = %s + %ld,\n};\n", layout_name(layout, index, "dense"), n, d->K,
            m->n_states, m->start, m->end, state_of, data, data, n * n, data, n * n + n,
            emit_double(num, d->start_end), data, n * n + 2 * n);
}
