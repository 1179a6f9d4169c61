/* test_segments.c: unit tests of hmmrt_segments (runtime/traceback.c), the
 * runs of a viterbi path's positions by the state each emitting move ends in,
 * on hand-made move tables and back pointers: runs of one and of several,
 * a folded move whose emitting part ends in its via state, the dense form
 * (back pointers hold states), broken back pointers, and agreement with
 * hmmrt_traceback's path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"

/* States: 0 S (start), 1 A and 2 B (emitting), 3 q (silent, folded into
 * m5), 4 E (end). Moves: m0 S->A, m1 A->A, m2 A->B, m3 B->B (emitting), m4
 * B->E (silent), m5 A->E emitting via q: an emitting transition A->q, then
 * q->E, folded, so its symbol is q's. */
static const char *const names[] = {"S", "A", "B", "q", "E"};
static const unsigned char hidden[] = {0, 0, 0, 0, 0};
static const int in_start[] = {0, 0, 2, 4, 4, 6};
static const int in_moves[] = {0, 1, 2, 3, 4, 5};
static const int move_from[] = {0, 1, 1, 2, 2, 1};
static const unsigned char move_emits[] = {1, 1, 1, 1, 0, 1};
static const int via_start[] = {0, 0, 0, 0, 0, 0, 1};
static const int via[] = {3};
static const int move_emit_to[] = {1, 1, 2, 2, -1, 3};

static hmmrt_paths paths(const int *emit_to)
{
    return (hmmrt_paths){.n_states = 5, .state_names = names, .hidden = hidden, .start = 0,
                         .end = 4, .in_start = in_start, .in_moves = in_moves,
                         .move_from = move_from, .move_emits = move_emits,
                         .via_start = via_start, .via = via, .move_emit_to = emit_to};
}

enum { N = 5, NONE = 0xff };

/* Back pointers for `length` positions, all none, then the cells given as
 * (position, state, index among the state's incoming moves). */
static void set_bp(uint8_t *bp, int length, const int (*cells)[3], int n)
{
    memset(bp, NONE, (size_t)(length + 1) * N);
    for (int i = 0; i < n; i++)
        bp[cells[i][0] * N + cells[i][1]] = (uint8_t)cells[i][2];
}

static void expect(const hmmrt_paths *p, const uint8_t *bp, int length, const char *segments,
                   const char *traceback)
{
    hmmrt_buf out = {0};
    assert_int_equal(hmmrt_segments(p, bp, 1, length, &out), 0);
    assert_string_equal(out.len ? out.data : "", segments);
    hmmrt_buf_reset(&out);
    assert_int_equal(hmmrt_traceback(p, bp, 1, length, &out), 0);
    assert_string_equal(out.len ? out.data : "", traceback);
    hmmrt_buf_free(&out);
}

/* S A A B B E: two runs of two. */
static void test_runs_of_the_best_path(void **state)
{
    static const int cells[][3] = {{1, 1, 0}, {2, 1, 1}, {3, 2, 0}, {4, 2, 1}, {4, 4, 0}};
    uint8_t bp[(4 + 1) * N];
    set_bp(bp, 4, cells, 5);
    hmmrt_paths p = paths(move_emit_to);
    expect(&p, bp, 4, "A:1-2 B:3-4", "S A A B B E");
    /* without move_emit_to each emitting move ends in its destination: the same here */
    p = paths(NULL);
    expect(&p, bp, 4, "A:1-2 B:3-4", "S A A B B E");
}

/* S A B B E then S A A A (q) E: runs of one, and the last symbol emitted by
 * the folded move A -> q -> E, which ends in q, not in E. */
static void test_runs_of_one_and_a_via_state(void **state)
{
    static const int one[][3] = {{1, 1, 0}, {2, 2, 0}, {3, 2, 1}, {3, 4, 0}};
    uint8_t bp[(4 + 1) * N];
    set_bp(bp, 3, one, 4);
    hmmrt_paths p = paths(move_emit_to);
    expect(&p, bp, 3, "A:1 B:2-3", "S A B B E");
    static const int via_q[][3] = {{1, 1, 0}, {2, 1, 1}, {3, 1, 1}, {4, 4, 1}};
    set_bp(bp, 4, via_q, 4);
    expect(&p, bp, 4, "A:1-3 q:4", "S A A A q E");
    static const int unreached[][3] = {{1, 1, 0}, {2, 2, 0}, {3, 4, 1}};
    set_bp(bp, 3, unreached, 3);
    /* position 3 is not reached from B: the back pointer of (2, A) is none */
    hmmrt_buf out = {0};
    assert_int_equal(hmmrt_segments(&p, bp, 1, 3, &out), -1);
    hmmrt_buf_free(&out);
}

/* A dense call's back pointers hold the state the best move came from, and
 * its moves emit exactly when they enter an emitting state. */
static void test_dense_form(void **state)
{
    static const char *const dense_names[] = {"S", "A", "B", "E"};
    static const unsigned char none[] = {0, 0, 0, 0};
    static const unsigned char emits[] = {0, 1, 1, 0};
    hmmrt_paths p = {.n_states = 4, .state_names = dense_names, .hidden = none, .start = 0,
                     .end = 3, .state_emits = emits};
    uint16_t bp[(3 + 1) * 4];
    for (size_t i = 0; i < sizeof bp / sizeof bp[0]; i++)
        bp[i] = UINT16_MAX;
    bp[1 * 4 + 1] = 0; /* A at 1 from S */
    bp[2 * 4 + 2] = 1; /* B at 2 from A */
    bp[3 * 4 + 2] = 2; /* B at 3 from B */
    bp[3 * 4 + 3] = 2; /* E at 3 from B, silent */
    hmmrt_buf out = {0};
    assert_int_equal(hmmrt_segments(&p, bp, 2, 3, &out), 0);
    assert_string_equal(out.data, "A:1 B:2-3");
    hmmrt_buf_free(&out);
}

/* Broken back pointers (a cell of the path has none) are an error, not a guess. */
static void test_broken_back_pointers(void **state)
{
    static const int cells[][3] = {{1, 1, 0}, {2, 1, 1}, {3, 2, 0}, {4, 4, 0}};
    uint8_t bp[(4 + 1) * N];
    set_bp(bp, 4, cells, 4); /* (4, B) is missing */
    hmmrt_paths p = paths(move_emit_to);
    hmmrt_buf out = {0};
    assert_int_equal(hmmrt_segments(&p, bp, 1, 4, &out), -1);
    hmmrt_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_of_the_best_path),
        cmocka_unit_test(test_runs_of_one_and_a_via_state),
        cmocka_unit_test(test_dense_form),
        cmocka_unit_test(test_broken_back_pointers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
