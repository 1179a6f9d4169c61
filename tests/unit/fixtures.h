/* fixtures.h: what several unit tests share: the casino model's source, and
 * finding the one move between two states of an IR model (cmocka must be
 * included first). */
#ifndef HMMC_TEST_FIXTURES_H
#define HMMC_TEST_FIXTURES_H

#include "ir/ir.h"

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
