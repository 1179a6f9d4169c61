/* fixtures.h: what several unit tests share: a source compiled with its
 * messages kept in memory, the casino model's source, and finding the one
 * move between two states of an IR model (cmocka must be included first). */
#ifndef HMMC_TEST_FIXTURES_H
#define HMMC_TEST_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>

#include "ir/ir.h"
#include "sema/sema.h"
#include "syntax/parse.h"

/* A test source taken through the parser (and sema), its messages in memory. */
typedef struct TestSource {
    Arena arena;
    Diag diag;
    FILE *stream;
    char *messages;
    size_t size;
    File *file;
    Program *program; /* NULL without run_sema, or after a syntax error */
} TestSource;

/* Parses src (len bytes) as t.hmm and, with run_sema and no syntax error,
 * checks it. */
static inline void test_source_compile(TestSource *c, const char *src, size_t len, int run_sema)
{
    arena_init(&c->arena);
    c->messages = NULL;
    c->size = 0;
    c->stream = open_memstream(&c->messages, &c->size);
    assert_non_null(c->stream);
    diag_init(&c->diag, "t.hmm", src, len, c->stream);
    c->file = parse_source(&c->arena, &c->diag, "t.hmm", src, len);
    c->program = NULL;
    if (run_sema && c->diag.errors == 0)
        c->program = sema(&c->arena, c->file, &c->diag);
    fflush(c->stream);
}

static inline void test_source_free(TestSource *c)
{
    fclose(c->stream);
    free(c->messages);
    arena_free(&c->arena);
}

/* The occasionally dishonest casino, as in the README, without a main. */
#define CASINO_MODEL_SOURCE                                           \
    "hmm casino {\n"                                                  \
    "    alphabet [1, 2, 3, 4, 5, 6];\n"                              \
    "    startstate start;\n"                                         \
    "    state fair emits fairemission;\n"                            \
    "    state loaded emits loadedemission;\n"                        \
    "    endstate end;\n"                                             \
    "    emission fairemission =   [1/6, 1/6, 1/6, 1/6, 1/6, 1/6];\n" \
    "    emission loadedemission = [0.1, 0.1, 0.1, 0.1, 0.1, 0.5];\n" \
    "    start -> fair 1;\n"                                          \
    "    fair -> fair 0.95;\n"                                        \
    "    fair -> loaded 0.05;\n"                                      \
    "    loaded -> loaded 0.97999;\n"                                 \
    "    loaded -> fair 0.02;\n"                                      \
    "    loaded -> end 0.00001;\n"                                    \
    "}\n"

/* The one move between two state indexes; fails unless there is exactly one. */
static inline const IrMove *move_between(const IrModel *m, int from, int to)
{
    const IrMove *found = NULL;
    for (int i = 0; i < m->n_moves; i++)
        if (m->moves[i].from == from && m->moves[i].to == to) {
            if (found)
                fail_msg("two moves %s -> %s", m->states[from].name, m->states[to].name);
            found = &m->moves[i];
        }
    if (!found)
        fail_msg("no move %s -> %s", m->states[from].name, m->states[to].name);
    return found;
}

#endif
