/* stream.c: the front end of a file of many models (stream.h), a model at a
 * time: each `hmm` block is parsed into an arena of its own, lowered to IR
 * by sema in the same arena, its IR copied out at its size, and the arena
 * (syntax tree, sema's tables) freed, so that a file of thousands of
 * imported profiles never holds every tree at once (the tree of a profile
 * is about 16 times its text); the model's text too, where the file is mapped
 * (source.h). */
#include "driver/stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/source.h"
#include "sema/sema.h"
#include "syntax/parse.h"

/* One top-level piece of the text: an `hmm` block, or what lies between. */
typedef struct Piece {
    size_t from, to;
    int line, column;
    int is_model;
} Piece;

static int word_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.';
}

/* Cuts the text at the ends of its top-level `hmm` blocks, skipping
 * comments and quoted symbols as the lexer does. Returns the number of
 * pieces (*out malloc'd), or -1 when the text is not cut with confidence
 * (an unterminated comment or quote, unbalanced braces): the whole file is
 * then parsed at once, which reports what is wrong. */
static int split(const char *s, size_t len, Piece **out, int *n_models)
{
    int cap = 64, n = 0, depth = 0, line = 1, column = 1, in_model = 0;
    Piece *p = malloc(sizeof *p * (size_t)cap);
    if (!p)
        return -1;
    p[0] = (Piece){0, 0, 1, 1, 0};
    *n_models = 0;
    size_t i = 0, released = 0; /* the text before `released` is given back (source.h) */
#define STEP()                                                                                 \
    do {                                                                                       \
        if (s[i] == '\n') {                                                                    \
            line++;                                                                            \
            column = 1;                                                                        \
        } else {                                                                               \
            column++;                                                                          \
        }                                                                                      \
        i++;                                                                                   \
    } while (0)
    while (i < len) {
        if (i - released > ((size_t)16 << 20)) { /* read again, a model at a time, later */
            source_release(s, released, i);
            released = i;
        }
        char c = s[i];
        if (c == '/' && i + 1 < len && s[i + 1] == '/') {
            while (i < len && s[i] != '\n')
                STEP();
        } else if (c == '/' && i + 1 < len && s[i + 1] == '*') {
            STEP();
            STEP();
            while (i + 1 < len && !(s[i] == '*' && s[i + 1] == '/'))
                STEP();
            if (i + 1 >= len)
                goto unsure;
            STEP();
            STEP();
        } else if (c == '\'') {
            if (i + 2 < len && s[i + 1] == '\'' && s[i + 2] == '\'') { /* ''' */
                STEP();
                STEP();
                STEP();
                continue;
            }
            STEP();
            while (i < len && s[i] != '\'' && s[i] != '\n')
                STEP();
            if (i >= len || s[i] != '\'')
                goto unsure;
            STEP();
        } else if (c == '{') {
            depth++;
            STEP();
        } else if (c == '}') {
            if (--depth < 0)
                goto unsure;
            STEP();
            if (depth == 0 && in_model) { /* the block ends: the next piece starts */
                in_model = 0;
                p[n].to = i;
                if (++n == cap) {
                    Piece *grown = realloc(p, sizeof *p * (size_t)(cap *= 2));
                    if (!grown)
                        goto unsure;
                    p = grown;
                }
                p[n] = (Piece){i, i, line, column, 0};
            }
        } else if (word_byte(c)) {
            size_t start = i;
            int l0 = line, c0 = column;
            while (i < len && word_byte(s[i]))
                STEP();
            if (depth == 0 && !in_model && i - start == 3 && memcmp(s + start, "hmm", 3) == 0) {
                p[n].to = start; /* what came before, then the model's block */
                if (n + 2 >= cap) {
                    Piece *grown = realloc(p, sizeof *p * (size_t)(cap *= 2));
                    if (!grown)
                        goto unsure;
                    p = grown;
                }
                p[++n] = (Piece){start, start, l0, c0, 1};
                in_model = 1;
                ++*n_models;
            }
        } else {
            STEP();
        }
    }
#undef STEP
    if (depth != 0 || in_model)
        goto unsure;
    p[n].to = len;
    *out = p;
    return n + 1;
unsure:
    free(p);
    return -1;
}

/* ---- a model's IR, out of the arena sema lowered it in ---------------------------- */

static void *copy_array(Arena *a, const void *from, size_t bytes)
{
    if (!from)
        return NULL;
    void *to = arena_alloc(a, bytes ? bytes : 1);
    memcpy(to, from, bytes);
    return to;
}
#define COPY(a, ptr, n) copy_array((a), (ptr), sizeof *(ptr) * (size_t)(n))

static const char *copy_string(Arena *a, const char *s)
{
    return s ? arena_strdup(a, s) : NULL;
}

static const LExpr *copy_lexpr(Arena *a, const LExpr *e)
{
    if (!e)
        return NULL;
    LExpr *c = ARENA_NEW(a, LExpr);
    *c = *e;
    c->text = copy_string(a, e->text);
    c->a = copy_lexpr(a, e->a);
    c->b = copy_lexpr(a, e->b);
    return c;
}

/* The IR of m (as sema writes it: no paths, no silent order yet) in a, each
 * array of the size it holds: sema's arrays have room for every declaration
 * of the model, and its tables (names, pairs seen, declarations) stay in
 * the arena that is freed (a profile's scratch is most of what sema made). */
static void keep_model(Arena *a, IrModel *m)
{
    const int n = m->n_states, e = m->n_emissions, v = m->n_moves, K = m->K, D = m->real_dim;
    m->name = copy_string(a, m->name);
    m->symbols = copy_string(a, m->symbols);
    IrState *states = COPY(a, m->states, n);
    for (int i = 0; i < n; i++)
        states[i].name = copy_string(a, states[i].name);
    m->states = states;
    IrEmission *em = COPY(a, m->emissions, e);
    for (int i = 0; i < e; i++) {
        IrEmission *x = &em[i];
        x->name = copy_string(a, x->name);
        x->logp = x->kind == EMISSION_TABLE ? COPY(a, x->logp, K ? K : 1) : NULL;
        x->mean = COPY(a, x->mean, D);
        x->factor = COPY(a, x->factor, x->diagonal ? D : D * D);
        x->parts = COPY(a, x->parts, x->n_parts);
        x->log_weights = COPY(a, x->log_weights, x->n_parts);
        x->spans = COPY(a, x->spans, x->n_spans);
    }
    m->emissions = em;
    m->moves = COPY(a, m->moves, v);
    IrLengthWeight *lw = COPY(a, m->length_weights, m->n_length_weights);
    for (int i = 0; i < m->n_length_weights; i++) {
        lw[i].expr = copy_lexpr(a, lw[i].expr);
        lw[i].c_text = copy_string(a, lw[i].c_text);
    }
    m->length_weights = lw;
    m->silent_order = COPY(a, m->silent_order, m->n_silent_order);
    m->move_fixed = COPY(a, m->move_fixed, v);
    m->move_span = COPY(a, m->move_span, v);
    m->emission_fixed = COPY(a, m->emission_fixed, e);
    m->emission_span = COPY(a, m->emission_span, (size_t)e * (size_t)K);
}

/* Appends the main blocks of f to the list whose tail is *tail. */
static void take_mains(File *whole, MainBlock **tail, const File *f)
{
    for (MainBlock *m = f->mains; m;) {
        MainBlock *next = m->next;
        m->next = NULL;
        if (*tail)
            (*tail)->next = m;
        else
            whole->mains = m;
        *tail = m;
        m = next;
    }
}

int stream_front_end(Arena *a, Diag *d, const char *path, const char *src, size_t len,
                     Program **program)
{
    *program = NULL;
    Piece *pieces = NULL;
    int n_models = 0, n = split(src, len, &pieces, &n_models);
    if (n < 0 || n_models < STREAM_MIN_MODELS) {
        free(pieces);
        return 0;
    }
    /* messages wait: a file with any goes the whole-file way, which prints
     * them in that way's order (all of the parser's, then sema's) */
    char *held = NULL;
    size_t held_len = 0;
    FILE *memory = open_memstream(&held, &held_len);
    if (!memory) {
        free(pieces);
        return 0;
    }
    Diag quiet = *d;
    quiet.out = memory;
    File *whole = ARENA_NEW(a, File);
    whole->path = path ? arena_strdup(a, path) : NULL;
    MainBlock *tail = NULL;
    SemaStream *s = sema_begin(a, whole->path, n_models, &quiet);
    int ok = 1;
    for (int k = 0; k < n && ok; k++) {
        const Piece *pc = &pieces[k];
        if (!pc->is_model) { /* comments and main: kept */
            File *f = parse_source_range(a, &quiet, path, src, len, pc->from, pc->to, pc->line,
                                         pc->column);
            ok = !quiet.errors && !quiet.warnings && !f->models;
            take_mains(whole, &tail, f);
            continue;
        }
        Arena tree;
        arena_init(&tree);
        File *f = parse_source_range(&tree, &quiet, path, src, len, pc->from, pc->to, pc->line,
                                     pc->column);
        ok = !quiet.errors && !quiet.warnings && f->models && !f->models->next && !f->mains;
        IrModel *m = ok ? sema_add_model_in(s, f->models, &tree) : NULL;
        ok = ok && m && !quiet.errors && !quiet.warnings;
        if (ok)
            keep_model(a, m); /* its IR into the program's arena, at its size */
        arena_free(&tree); /* the model is IR now: its tree and sema's tables go */
        source_release(src, pc->from, pc->to); /* and its text, where it is mapped */
    }
    Program *p = ok ? sema_finish(s, whole) : NULL;
    ok = ok && p && !quiet.errors && !quiet.warnings;
    fclose(memory);
    free(held);
    free(pieces);
    if (!ok)
        return 0; /* the whole-file way again, from the start */
    *program = p;
    return 1;
}
