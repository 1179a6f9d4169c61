/* test_sema.c: unit tests of semantic analysis (sema_main.c, sema_model.c,
 * sema_graph.c) through parse_source and sema: the model IR it builds
 * (states, kinds, emissions and weights as natural logs, moves, alphabets),
 * the program IR of main (calls, their deduplication, attributes, prints and
 * labels), and that programs with errors give NULL with the right number of
 * errors. The exact texts of the messages are pinned by the golden tests in
 * tests/golden/sema; here only counts and a few key phrases are checked.
 *
 * Expected logarithms are written as literals worked out by hand (and noted
 * beside them), not computed with log() the way sema does. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fixtures.h"

#include "syntax/parse.h"
#include "sema/sema.h"

/* Natural logs used below, to 16 significant digits. */
#define LN_6 1.791759469228055       /* ln 6: ln(1/6) = -LN_6 */
#define LN_10 2.302585092994046      /* ln 10: ln 0.1 = -LN_10 */
#define LN_2 0.6931471805599453      /* ln 2: ln 0.5 = -LN_2 */
#define LN_0_95 (-0.05129329438755058) /* ln 0.95 */
#define LN_0_05 (-2.995732273553991)   /* ln 0.05 = -ln 20 = -(ln 2 + ln 10) */
#define LN_1E_5 (-11.51292546497023)   /* ln 1e-5 = -5 ln 10 */
#define LN_2_5 0.9162907318741551      /* ln 2.5 = ln 10 - 2 ln 2 */
#define LN_0_25 (-1.386294361119891)   /* ln 0.25 = -2 ln 2 */
#define LN_0_75 (-0.2876820724517809)  /* ln 0.75 = ln 3 - 2 ln 2 */

/* One source string taken through the parser and sema, messages kept in memory. */
typedef TestSource Checked;

static void check_source(Checked *c, const char *src)
{
    test_source_compile(c, src, strlen(src), 0);
    if (c->diag.errors)
        fail_msg("the test source has syntax errors:\n%s", c->messages);
    c->program = sema(&c->arena, c->file, &c->diag);
    fflush(c->stream);
}

/* Checks src, which must give a program without errors or warnings. */
static Program *check_ok(Checked *c, const char *src)
{
    check_source(c, src);
    if (c->diag.errors || c->diag.warnings)
        fail_msg("unexpected messages:\n%s", c->messages);
    assert_non_null(c->program);
    return c->program;
}

static void checked_free(Checked *c)
{
    test_source_free(c);
}

/* Checks src, which must fail with `errors` errors and messages holding `phrase`. */
static void expect_errors(const char *src, int errors, const char *phrase)
{
    Checked c;
    check_source(&c, src);
    assert_null(c.program);
    if (c.diag.errors != errors)
        fail_msg("expected %d errors, got %d:\n%s", errors, c.diag.errors, c.messages);
    if (!strstr(c.messages, phrase))
        fail_msg("no '%s' in the messages:\n%s", phrase, c.messages);
    checked_free(&c);
}

static void assert_close(double actual, double expected)
{
    if (!(fabs(actual - expected) <= 1e-14 * (1 + fabs(expected))))
        fail_msg("%.17g is not %.17g", actual, expected);
}

static void assert_minus_infinity(double v)
{
    if (!(isinf(v) && v < 0))
        fail_msg("%.17g is not -inf", v);
}

static int state_index(const IrModel *m, const char *name)
{
    for (int s = 0; s < m->n_states; s++)
        if (strcmp(m->states[s].name, name) == 0)
            return s;
    fail_msg("model %s has no state %s", m->name, name);
    return -1;
}

static int emission_index(const IrModel *m, const char *name)
{
    for (int e = 0; e < m->n_emissions; e++)
        if (strcmp(m->emissions[e].name, name) == 0)
            return e;
    fail_msg("model %s has no emission %s", m->name, name);
    return -1;
}

/* The one move from -> to; fails when there is none or more than one. */
static const IrMove *the_move(const IrModel *m, const char *from, const char *to)
{
    return move_between(m, state_index(m, from), state_index(m, to));
}

/* A source transition is one move whose two weights are the log of its weight. */
static void assert_move(const IrModel *m, const char *from, const char *to, int emission,
                        double log_weight)
{
    const IrMove *mv = the_move(m, from, to);
    assert_int_equal(mv->emission, emission);
    assert_close(mv->lw_sum, log_weight);
    assert_close(mv->lw_max, log_weight);
    assert_int_equal(mv->n_via, 0);
}

static const char *CASINO = CASINO_MODEL_SOURCE;

/* The casino with main_block appended, checked; the source lives in `scratch`. */
static Program *check_casino(Checked *c, Arena *scratch, const char *main_block)
{
    arena_init(scratch);
    const char *src = arena_printf(scratch, "%s%s", CASINO, main_block);
    return check_ok(c, src);
}

static void test_states_in_declaration_order_with_kinds(void **state)
{
    Checked c;
    Arena scratch;
    Program *p = check_casino(&c, &scratch, "main { print forward(new casino()).score; }\n");
    assert_int_equal(p->n_models, 1);
    const IrModel *m = &p->models[0];
    assert_string_equal(m->name, "casino");
    assert_int_equal(m->n_states, 4);
    const char *names[] = {"start", "fair", "loaded", "end"};
    StateKind kinds[] = {STATE_START, STATE_EMITTING, STATE_EMITTING, STATE_END};
    int emissions[] = {-1, 0, 1, -1};
    for (int s = 0; s < 4; s++) {
        assert_string_equal(m->states[s].name, names[s]);
        assert_int_equal(m->states[s].kind, kinds[s]);
        assert_int_equal(m->states[s].emission, emissions[s]);
        assert_int_equal(m->states[s].folded, 0);
        assert_int_equal(m->states[s].aux_of, -1);
    }
    assert_int_equal(m->start, 0);
    assert_int_equal(m->end, 3);
    assert_string_equal(m->emissions[0].name, "fairemission");
    assert_string_equal(m->emissions[1].name, "loadedemission");
    assert_int_equal(m->n_silent_order, 0);
    checked_free(&c);
    arena_free(&scratch);
}

static void test_silent_states_and_declarations_in_any_order(void **state)
{
    Checked c;
    /* the end state and transitions come before the states they name */
    Program *p = check_ok(&c, "hmm m {\n"
                              "  endstate e;\n"
                              "  q -> e 1;\n"
                              "  s -> q 1;\n"
                              "  state q;\n"
                              "  alphabet [a];\n"
                              "  startstate s;\n"
                              "}\n"
                              "main { print forward(new m()).score; }\n");
    const IrModel *m = &p->models[0];
    assert_int_equal(m->n_states, 3);
    assert_string_equal(m->states[0].name, "e");
    assert_int_equal(m->states[0].kind, STATE_END);
    assert_string_equal(m->states[1].name, "q");
    assert_int_equal(m->states[1].kind, STATE_SILENT);
    assert_int_equal(m->states[1].emission, -1);
    assert_string_equal(m->states[2].name, "s");
    assert_int_equal(m->states[2].kind, STATE_START);
    assert_int_equal(m->start, 2);
    assert_int_equal(m->end, 0);
    /* moves in the order of the transitions */
    assert_int_equal(m->n_moves, 2);
    assert_int_equal(m->moves[0].from, 1);
    assert_int_equal(m->moves[0].to, 0);
    assert_int_equal(m->moves[1].from, 2);
    assert_int_equal(m->moves[1].to, 1);
    checked_free(&c);
}

static void test_list_emissions_are_logs(void **state)
{
    Checked c;
    Arena scratch;
    Program *p = check_casino(&c, &scratch, "main { print forward(new casino()).score; }\n");
    const IrModel *m = &p->models[0];
    assert_int_equal(m->K, 6);
    assert_int_equal(m->n_emissions, 2);
    for (int k = 0; k < 6; k++)
        assert_close(m->emissions[0].logp[k], -LN_6);
    for (int k = 0; k < 5; k++)
        assert_close(m->emissions[1].logp[k], -LN_10);
    assert_close(m->emissions[1].logp[5], -LN_2);
    checked_free(&c);
    arena_free(&scratch);
}

static void test_zero_emission_value_is_minus_infinity(void **state)
{
    Checked c;
    Program *p = check_ok(&c, "hmm m {\n"
                              "  alphabet [a, b, c];\n"
                              "  startstate s; state x emits e; endstate t;\n"
                              "  emission e = [0, 1, 0.0];\n"
                              "  s -> x 1; x -> t 1;\n"
                              "}\n"
                              "main { print forward(new m()).score; }\n");
    const double *logp = p->models[0].emissions[0].logp;
    assert_minus_infinity(logp[0]);
    assert_close(logp[1], 0); /* ln 1 */
    assert_minus_infinity(logp[2]);
    checked_free(&c);
}

static void test_dict_emission_fills_unnamed_symbols_with_minus_infinity(void **state)
{
    Checked c;
    Program *p = check_ok(&c, "hmm dna {\n"
                              "  alphabet [A, C, G, T];\n"
                              "  startstate s; state x emits e; endstate t;\n"
                              "  emission e = { T: 0.75, C: 1/4 };\n"
                              "  s -> x 1; x -> t 1;\n"
                              "}\n"
                              "main { print forward(new dna()).score; }\n");
    const IrModel *m = &p->models[0];
    assert_string_equal(m->symbols, "ACGT");
    const double *logp = m->emissions[0].logp;
    assert_minus_infinity(logp[0]);   /* A: not named */
    assert_close(logp[1], LN_0_25);   /* C: 1/4 */
    assert_minus_infinity(logp[2]);   /* G: not named */
    assert_close(logp[3], LN_0_75);   /* T */
    checked_free(&c);
}

static void test_moves_take_the_emission_of_their_destination(void **state)
{
    Checked c;
    Arena scratch;
    Program *p = check_casino(&c, &scratch, "main { print forward(new casino()).score; }\n");
    const IrModel *m = &p->models[0];
    assert_int_equal(m->n_moves, 6);
    int fair = emission_index(m, "fairemission"), loaded = emission_index(m, "loadedemission");
    assert_move(m, "start", "fair", fair, 0);        /* ln 1 */
    assert_move(m, "fair", "fair", fair, LN_0_95);
    assert_move(m, "fair", "loaded", loaded, LN_0_05);
    /* ln 0.97999 = ln(1 - x), x = 0.02001: -(x + x^2/2 + x^3/3 + ...) */
    assert_move(m, "loaded", "loaded", loaded, -0.02021291145121407);
    assert_move(m, "loaded", "fair", fair, -3.912023005428146);        /* ln 0.02 = -ln 50 */
    assert_move(m, "loaded", "end", -1, LN_1E_5);                       /* into end: silent */
    checked_free(&c);
    arena_free(&scratch);
}

static void test_emits_on_a_transition_into_a_silent_state(void **state)
{
    Checked c;
    /* scores: q's weights sum to 1.5 */
    Program *p = check_ok(&c, "hmm m scores {\n"
                              "  alphabet [a, b];\n"
                              "  startstate s; state q; state x emits ex; endstate t;\n"
                              "  emission ex = [0.5, 0.5];\n"
                              "  emission onway = [0.25, 0.75];\n"
                              "  s -> q 0.5 emits onway;\n"
                              "  q -> x 1;\n"
                              "  x -> t 1 emits onway;\n"
                              "  q -> t .5;\n"
                              "}\n"
                              "main { print forward(new m()).score; }\n");
    const IrModel *m = &p->models[0];
    int onway = emission_index(m, "onway"), ex = emission_index(m, "ex");
    assert_move(m, "s", "q", onway, -LN_2);
    assert_move(m, "q", "x", ex, 0);
    assert_move(m, "x", "t", onway, 0);
    assert_move(m, "q", "t", -1, -LN_2);
    checked_free(&c);
}

static void test_weights_are_logs_of_fractions_and_numbers(void **state)
{
    Checked c;
    /* scores: p's weight is 2.5 */
    Program *p = check_ok(&c, "hmm m scores {\n"
                              "  alphabet [a];\n"
                              "  startstate s; state p; state q; state r; endstate t;\n"
                              "  s -> p 1/6;\n"
                              "  p -> q 2.5;\n"
                              "  q -> r 1e-5;\n"
                              "  r -> t 5E-2;\n"
                              "  s -> t 3/12;\n"
                              "}\n"
                              "main { print forward(new m()).score; }\n");
    const IrModel *m = &p->models[0];
    assert_move(m, "s", "p", -1, -LN_6);
    assert_move(m, "p", "q", -1, LN_2_5);  /* weights may exceed 1 */
    assert_move(m, "q", "r", -1, LN_1E_5);
    assert_move(m, "r", "t", -1, LN_0_05);
    assert_move(m, "s", "t", -1, LN_0_25); /* 3/12 = 1/4 */
    checked_free(&c);
}

/* A matrix makes the moves its arrow statements would, in row order; a 0
 * makes none. */
static void test_matrix_makes_the_moves_of_its_rows(void **state)
{
    Checked c;
    Program *p = check_ok(&c, "hmm m { alphabet [a]; startstate s; state x emits e; state q;\n"
                              "  endstate t; emission e = [1];\n"
                              "  [s, x, q] -> [x, q, t] [1, 0, 0; 1/4, 0.5, 0.25; 0.5, 0, 0.5];\n"
                              "}\nmain { print forward(new m()).score; }\n");
    const IrModel *m = &p->models[0];
    int e = emission_index(m, "e");
    assert_int_equal(m->n_moves, 6);
    assert_move(m, "s", "x", e, 0);
    assert_move(m, "x", "x", e, LN_0_25);
    assert_move(m, "x", "q", -1, -LN_2);
    assert_move(m, "x", "t", -1, LN_0_25);
    assert_move(m, "q", "x", e, -LN_2);
    assert_move(m, "q", "t", -1, -LN_2);
    assert_int_equal(m->moves[1].from, state_index(m, "x")); /* row order */
    assert_int_equal(m->moves[3].to, state_index(m, "t"));
    checked_free(&c);
}

static void test_matrix_errors(void **state)
{
    const char *head = "hmm m { alphabet [a]; startstate s; state x emits e; state y emits e;\n"
                       "  endstate t; emission e = [1];\n";
    char src[1024];
    const struct {
        const char *body;
        int errors;
        const char *phrase;
    } cases[] = {
        {"[s, x] -> [x, zz] [1, 0; 0, 1];", 1, "unknown state 'zz'"},
        {"[s, x] -> [x, t] [1, 0; 0, 1, 0];", 1,
         "row 2 of the matrix (source 'x') has 3 values but there are 2 destinations"},
        {"[s, x, y] -> [x, t] [1, 0; 0, 1];", 1, "the matrix has 2 rows but 3 source states"},
        {"x -> t 1; [s, x] -> [x, t] [1, 0; 0, 1];", 1, "transition x -> t is declared twice"},
        {"[s, x] -> [x, t] [1, 0; 0, 1]; [x] -> [t] [0.5];", 1, "it is first given here"},
        {"[s, x] -> [x, t] [1, 0; 0, 1]; [x] -> [t, x] [0, 0.5];", 0, ""},
        {"[s, t] -> [x] [1; 1];", 1, "nothing may leave the end state 't'"},
        {"[s, x] -> [s, x] [0, 1; 0, 1];", 1, "nothing may enter the start state 's'"},
        {"[s, x, x] -> [x] [1; 1; 1];", 1, "state 'x' is listed twice among the sources"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(src, sizeof src, "%s  %s y -> t 1; x -> y 0.5; }\n"
                 "main { print forward(new m()).score; }\n", head, cases[i].body);
        if (cases[i].errors) {
            expect_errors(src, cases[i].errors, cases[i].phrase);
        } else { /* zeros declare nothing: the pair may be given elsewhere */
            Checked c;
            check_source(&c, src);
            if (c.diag.errors)
                fail_msg("case %zu: unexpected errors:\n%s", i, c.messages);
            checked_free(&c);
        }
    }
}

static void test_weight_zero_transitions_are_dropped(void **state)
{
    Checked c;
    Program *p = check_ok(&c, "hmm m {\n"
                              "  alphabet [a];\n"
                              "  startstate s; state x emits e; endstate t;\n"
                              "  emission e = [1];\n"
                              "  s -> x 1;\n"
                              "  x -> x 0;\n"
                              "  x -> t 1;\n"
                              "  s -> t 0/3;\n"
                              "}\n"
                              "main { print forward(new m()).score; }\n");
    const IrModel *m = &p->models[0];
    assert_int_equal(m->n_moves, 2);
    int x = state_index(m, "x");
    for (int i = 0; i < m->n_moves; i++) {
        assert_false(m->moves[i].from == x && m->moves[i].to == x);
        assert_false(m->moves[i].from == m->start && m->moves[i].to == m->end);
    }
    checked_free(&c);
}

static void test_weight_zero_transition_still_counts_as_declared(void **state)
{
    /* a weight of 0 does not make a transition, but writing it twice is still a mistake */
    expect_errors("hmm m {\n"
                  "  alphabet [a];\n"
                  "  startstate s; endstate t;\n"
                  "  s -> t 0;\n"
                  "  s -> t 1;\n"
                  "}\n"
                  "main { print forward(new m()).score; }\n",
                  1, "transition s -> t is declared twice");
}

static void test_several_hmm_blocks_in_order(void **state)
{
    Checked c;
    Program *p = check_ok(&c, "hmm first {\n"
                              "  alphabet [a, b];\n"
                              "  startstate s; state x emits e; endstate t;\n"
                              "  emission e = [0.5, 0.5];\n"
                              "  s -> x 1; x -> t 1;\n"
                              "}\n"
                              "hmm second {\n"
                              "  alphabet ['*', z, '-'];\n"
                              "  startstate b; state y emits f; state q; endstate u;\n"
                              "  emission f = {'-': 1};\n"
                              "  b -> y 1; y -> q 0.5; q -> u 1;\n"
                              "}\n"
                              "main {\n"
                              "  print viterbi(new second()).score;\n"
                              "  print forward(new first()).score;\n"
                              "}\n");
    assert_int_equal(p->n_models, 2);
    const IrModel *first = &p->models[0], *second = &p->models[1];
    assert_string_equal(first->name, "first");
    assert_string_equal(first->symbols, "ab");
    assert_int_equal(first->K, 2);
    assert_int_equal(first->n_states, 3);
    assert_string_equal(second->name, "second");
    assert_string_equal(second->symbols, "*z-");
    assert_int_equal(second->K, 3);
    assert_int_equal(second->n_states, 4);
    assert_minus_infinity(second->emissions[0].logp[0]);
    assert_minus_infinity(second->emissions[0].logp[1]);
    assert_close(second->emissions[0].logp[2], 0);
    /* calls in order of first use, each on its own model */
    assert_int_equal(p->n_calls, 2);
    assert_int_equal(p->calls[0].alg, ALG_VITERBI);
    assert_int_equal(p->calls[0].model_index, 1);
    assert_string_equal(p->calls[0].label, "viterbi(second)");
    assert_int_equal(p->calls[1].alg, ALG_FORWARD);
    assert_int_equal(p->calls[1].model_index, 0);
    assert_string_equal(p->calls[1].label, "forward(first)");
    checked_free(&c);
}

static void test_calls_are_deduplicated(void **state)
{
    Checked c;
    Arena scratch;
    Program *p = check_casino(&c, &scratch,
                              "main {\n"
                              "  m = new casino();\n"
                              "  f = forward(m);\n"
                              "  print f.score;\n"
                              "  print forward(m).score;\n"
                              "  print forward(new casino()).score;\n"
                              "  print backward(m).score;\n"
                              "  v = viterbi(m);\n"
                              "  print f.score;\n"
                              "}\n");
    /* three forward prints, one backward; viterbi bound but never printed still runs once */
    assert_int_equal(p->n_calls, 3);
    assert_int_equal(p->calls[0].alg, ALG_FORWARD);
    assert_int_equal(p->calls[1].alg, ALG_BACKWARD);
    assert_int_equal(p->calls[2].alg, ALG_VITERBI);
    assert_int_equal(p->calls[2].attrs, 0);
    assert_int_equal(p->n_prints, 5);
    int calls[] = {0, 0, 0, 1, 0};
    for (int i = 0; i < 5; i++)
        assert_int_equal(p->prints[i].call, calls[i]);
    checked_free(&c);
    arena_free(&scratch);
}

static void test_each_call_has_its_own_copy_of_the_model(void **state)
{
    Checked c;
    Arena scratch;
    Program *p = check_casino(&c, &scratch,
                              "main { m = new casino(); print forward(m).score;"
                              " print viterbi(m).score; }\n");
    assert_int_equal(p->n_calls, 2);
    const IrModel *source = &p->models[0];
    for (int k = 0; k < 2; k++) {
        const IrModel *copy = p->calls[k].model;
        assert_ptr_not_equal(copy, source);
        assert_ptr_not_equal(copy->states, source->states);
        assert_int_equal(copy->n_states, source->n_states);
        assert_int_equal(copy->n_moves, source->n_moves);
        /* the moves are shared until a pass changes them */
        assert_ptr_equal(copy->moves, source->moves);
        assert_true(copy->moves_shared);
    }
    IrModel *first = p->calls[0].model;
    IrMove before = source->moves[0];
    ir_model_own_moves(&scratch, first);
    assert_false(first->moves_shared);
    assert_ptr_not_equal(first->moves, source->moves);
    assert_memory_equal(first->moves, source->moves, sizeof(IrMove) * (size_t)source->n_moves);
    first->moves[0].lw_sum = 42;
    assert_memory_equal(&source->moves[0], &before, sizeof before);
    assert_ptr_equal(p->calls[1].model->moves, source->moves);
    IrMove *own = first->moves;
    ir_model_own_moves(&scratch, first); /* already its own: no copy */
    assert_ptr_equal(first->moves, own);
    checked_free(&c);
    arena_free(&scratch);
}

static void test_prints_in_order_with_labels(void **state)
{
    Checked c;
    Arena scratch;
    Program *p = check_casino(&c, &scratch,
                              "main {\n"
                              "  cas = new casino();\n"
                              "  dptable = forward(cas);\n"
                              "  print dptable.score;\n"
                              "  v = viterbi(cas);\n"
                              "  print v.traceback;\n"
                              "  print v.score;\n"
                              "  print backward(cas).score&;\n"
                              "  print v.traceback&;\n"
                              "}\n");
    assert_int_equal(p->n_prints, 5);
    const char *labels[] = {"forward(casino).score", "viterbi(casino).traceback",
                            "viterbi(casino).score", "backward(casino).score&",
                            "viterbi(casino).traceback&"};
    unsigned attrs[] = {ATTR_SCORE, ATTR_TRACEBACK, ATTR_SCORE, ATTR_SCORE_TABLE,
                        ATTR_TRACEBACK_TABLE};
    int calls[] = {0, 1, 1, 2, 1};
    for (int i = 0; i < 5; i++) {
        assert_string_equal(p->prints[i].label, labels[i]);
        assert_int_equal(p->prints[i].attr, attrs[i]);
        assert_int_equal(p->prints[i].call, calls[i]);
    }
    assert_int_equal(p->prints[0].loc.first_line, 19); /* the line of `print dptable.score;` */
    checked_free(&c);
    arena_free(&scratch);
}

static void test_attributes_are_collected_per_call(void **state)
{
    Checked c;
    Arena scratch;
    Program *p = check_casino(&c, &scratch,
                              "main {\n"
                              "  v = viterbi(new casino());\n"
                              "  print v.score;\n"
                              "  print forward(new casino()).score&;\n"
                              "  print v.traceback;\n"
                              "  print v.score;\n"
                              "  print backward(new casino()).score;\n"
                              "}\n");
    assert_int_equal(p->n_calls, 3);
    assert_int_equal(p->calls[0].attrs, ATTR_SCORE | ATTR_TRACEBACK);
    assert_int_equal(p->calls[1].attrs, ATTR_SCORE_TABLE);
    assert_int_equal(p->calls[2].attrs, ATTR_SCORE);
    checked_free(&c);
    arena_free(&scratch);
}

static void test_warnings_alone_still_give_a_program(void **state)
{
    Checked c;
    check_source(&c, "hmm m {\n"
                     "  alphabet [a, b];\n"
                     "  startstate s; state x emits e; endstate t;\n"
                     "  emission e = [0.5, 0.5];\n"
                     "  emission unused = [1, 0];\n"
                     "  state lost emits e;\n"
                     "  state stuck;\n"
                     "  s -> x 1; x -> t 0.5; x -> stuck 0.5; lost -> t 1;\n"
                     "}\n"
                     "main { print forward(new m()).score; }\n");
    assert_non_null(c.program);
    assert_int_equal(c.diag.errors, 0);
    assert_int_equal(c.diag.warnings, 3);
    assert_non_null(strstr(c.messages, "emission 'unused' is never used"));
    assert_non_null(strstr(c.messages, "state 'lost' cannot be reached from the start state"));
    assert_non_null(strstr(c.messages, "state 'stuck' cannot reach the end state"));
    checked_free(&c);
}

/* A model with one emitting state x, whose body lines are given. */
#define TINY_MODEL(lines)                                                                  \
    "hmm m {\n  alphabet [a, b];\n  startstate s; state x emits e; endstate t;\n"          \
    "  emission e = [0.5, 0.5];\n" lines "}\nmain { print forward(new m()).score; }\n"
/* The same, declared scores (sema_sums.c): its rows may sum above 1 unwarned. */
#define TINY_SCORES_MODEL(lines)                                                           \
    "hmm m scores {\n  alphabet [a, b];\n  startstate s; state x emits e; endstate t;\n"   \
    "  emission e = [0.5, 0.5];\n" lines "}\nmain { print forward(new m()).score; }\n"

/* The number of warnings a source draws, with no error. */
static int warnings_of(const char *src)
{
    Checked c;
    check_source(&c, src);
    assert_int_equal(c.diag.errors, 0);
    int n = c.diag.warnings;
    if (n)
        assert_non_null(strstr(c.messages, "more than 1"));
    checked_free(&c);
    return n;
}

/* sema_sums.c: a sum above 1 warns beyond the rounding of the digits
 * written (half a unit of each value's last digit, at most 0.01 in all) and
 * 1e-6; numbers without a point or exponent, and fractions, are exact. */
static void test_sums_above_one_warn_beyond_rounding(void **state)
{
    /* 1.00001: "1" is exact, 0.00001 may hide 5e-6 */
    assert_int_equal(warnings_of(TINY_MODEL("  state y; y -> t 1; s -> x 1;"
                                            " x -> y 1; x -> x 0.00001;\n")), 1);
    /* 1.00001 again: "1." is exact too */
    assert_int_equal(warnings_of(TINY_MODEL("  state y; y -> t 1; s -> x 1;"
                                            " x -> y 1.; x -> x 0.00001;\n")), 1);
    /* 1.000001: within 5e-7 + 1e-6 */
    assert_int_equal(warnings_of(TINY_MODEL("  state y; y -> t 1; s -> x 1;"
                                            " x -> y 1; x -> x 0.000001;\n")), 0);
    /* 1.0005: 0.4995 and 5.01e-1 (a unit of 1e-3) may hide 0.00055 */
    assert_int_equal(warnings_of(TINY_MODEL("  state y; y -> t 1; s -> x 1;"
                                            " x -> y 0.4995; x -> x 5.01e-1;\n")), 0);
    /* 1.001 with 1/2 exact: more than 5.01e-1's 0.0005 */
    assert_int_equal(warnings_of(TINY_MODEL("  state y; y -> t 1; s -> x 1;"
                                            " x -> y 1/2; x -> x 5.01e-1;\n")), 1);
    /* 1.02: 5e-1 may hide 0.05, but no more than 0.01 is excused */
    assert_int_equal(warnings_of(TINY_MODEL("  state y; y -> t 1; s -> x 1;"
                                            " x -> y 5e-1; x -> x 5.2e-1;\n")), 1);
    /* the move into the end state counts on its own: `x -> t 1` beside 1 is
     * a model whose sequences end anywhere; above 1 it warns */
    assert_int_equal(warnings_of(TINY_MODEL("  s -> x 1; x -> t 1; x -> x 1;\n")), 0);
    assert_int_equal(warnings_of(TINY_MODEL("  s -> x 1; x -> t 1.5; x -> x 0.5;\n")), 1);
    /* an emission table: 1/2 + 0.6 = 1.1 */
    assert_int_equal(warnings_of("hmm m {\n  alphabet [a, b];\n  startstate s; state x emits e;\n"
                                 "  endstate t; emission e = [1/2, 0.6];\n  s -> x 1; x -> t 1;\n}\n"
                                 "main { print forward(new m()).score; }\n"),
                     1);
    /* a model declared scores: nothing, for its rows or tables */
    assert_int_equal(warnings_of("hmm m scores {\n  alphabet [a, b];\n  startstate s;\n"
                                 "  state x emits e; endstate t; emission e = [2, 0.6];\n"
                                 "  s -> x 3; x -> t 1; x -> x 0.5;\n}\n"
                                 "main { print forward(new m()).score; }\n"),
                     0);
}

static void test_name_errors(void **state)
{
    expect_errors(TINY_MODEL("  s -> x 1; x -> tt 1; x -> t 1;\n"), 1,
                  "unknown state 'tt' in model 'm'");
    expect_errors(TINY_MODEL("  state y emits nope; s -> x 1; x -> t 1; x -> y 1; y -> t 1;\n"),
                  1, "unknown emission 'nope' in model 'm'");
    expect_errors(TINY_MODEL("  state x; s -> x 1; x -> t 1;\n"), 1,
                  "state 'x' is declared twice");
    expect_errors(TINY_MODEL("  emission e = [1, 0]; s -> x 1; x -> t 1;\n"), 1,
                  "emission 'e' is declared twice");
    expect_errors(TINY_MODEL("  startstate s2; endstate t2; s -> x 1; x -> t 1;\n"), 2,
                  "model 'm' has a second start state");
}

static void test_number_and_emission_errors(void **state)
{
    expect_errors(TINY_MODEL("  emission f = [0.5, 0.25, 0.25]; state y emits f;"
                             " s -> x 1; x -> y 1; y -> t 1;\n"),
                  1, "emission 'f' has 3 values but the alphabet has 2 symbols");
    expect_errors(TINY_MODEL("  s -> x -1; x -> t 1;\n"), 1,
                  "transition weight must be >= 0, not -1");
    expect_errors(TINY_MODEL("  s -> x 1/0; x -> t 1;\n"), 1, "division by zero");
    expect_errors(TINY_MODEL("  s -> x 1e999; x -> t 1;\n"), 1, "is too large to represent");
    expect_errors(TINY_MODEL("  emission f = { a: 0.5, c: 0.5 }; state y emits f;"
                             " s -> x 1; x -> y 1; y -> t 1;\n"),
                  1, "symbol 'c' is not in the alphabet of model 'm'");
}

static void test_transition_errors(void **state)
{
    expect_errors(TINY_MODEL("  s -> x 1; x -> t 1; x -> s 1; t -> x 1;\n"), 2,
                  "nothing may enter the start state 's'");
    expect_errors(TINY_MODEL("  s -> x 1; x -> t 1; x -> t 0.5;\n"), 1,
                  "transition x -> t is declared twice");
    expect_errors(TINY_MODEL("  s -> x 1 emits e; x -> t 1;\n"), 1,
                  "transition s -> x emits, but 'x' emits on arrival too");
}

/* Silent cycles: an error exactly when the sum over their paths diverges. */
static void test_silent_cycles_that_diverge_are_errors(void **state)
{
    const char *diverges = "the sum over their paths diverges";
    /* the models are declared scores: their rows sum above 1 */
    /* a self-loop converges below 1 */
    Checked c;
    check_ok(&c, TINY_SCORES_MODEL("  state q; s -> q 1; q -> q 0.99; q -> x 1; x -> t 1;\n"));
    checked_free(&c);
    expect_errors(TINY_SCORES_MODEL("  state q; s -> q 1; q -> q 1; q -> x 1; x -> t 1;\n"), 1,
                  diverges);
    /* a 2-cycle: the product of its weights counts, not each weight: 0.5 * 1.9 = 0.95 */
    check_ok(&c, TINY_SCORES_MODEL("  state p; state q; s -> p 1; p -> q 0.5; q -> p 1.9;"
                            " q -> x 1; x -> t 1;\n"));
    checked_free(&c);
    expect_errors(TINY_SCORES_MODEL("  state p; state q; s -> p 1; p -> q 0.5; q -> p 2;"
                             " q -> x 1; x -> t 1;\n"),
                  1, diverges);
    /* two cycles through p, each below 1 alone: S = [[c, 1], [0.5, 0]] has spectral
     * radius r with r^2 - c r - 0.5 = 0: c = 0.4 gives r = (0.4 + sqrt(2.16)) / 2 = 0.935,
     * c = 0.6 gives r = (0.6 + sqrt(2.36)) / 2 = 1.068 */
    check_ok(&c, TINY_SCORES_MODEL("  state p; state q; s -> p 1; p -> p 0.4; p -> q 1; q -> p 0.5;"
                            " q -> x 1; x -> t 1;\n"));
    checked_free(&c);
    expect_errors(TINY_SCORES_MODEL("  state p; state q; s -> p 1; p -> p 0.6; p -> q 1; q -> p 0.5;"
                             " q -> x 1; x -> t 1;\n"),
                  1, diverges);
    /* a product of 1 - 2^-43 (about 1 - 1.1e-13, written exactly) converges; exactly 1
     * (2 * 0.5) and 1 + 2^-43 do not: the test sums the weights' logs, not 1 - pivots */
    check_ok(&c, TINY_SCORES_MODEL("  state p; state q; s -> p 1; "
                            "p -> q 0.9999999999998863131622783839702606201171875; q -> p 1;"
                            " q -> x 1; x -> t 1;\n"));
    checked_free(&c);
    expect_errors(TINY_SCORES_MODEL("  state p; state q; s -> p 1; p -> q 0.5; q -> p 2;"
                             " q -> x 1; x -> t 1;\n"), 1, diverges);
    expect_errors(TINY_SCORES_MODEL("  state p; state q; s -> p 1; "
                             "p -> q 1.0000000000001136868377216160297393798828125; q -> p 1;"
                             " q -> x 1; x -> t 1;\n"), 1, diverges);
    /* an emitting move breaks a cycle: q -> x emits (x emits on arrival), so q -> x -> q
     * is no silent cycle however heavy */
    check_ok(&c, TINY_SCORES_MODEL("  state q; s -> q 1; q -> x 5; x -> q 5; x -> t 1;\n"));
    checked_free(&c);
}

static void test_main_errors(void **state)
{
    Checked c;
    Arena scratch;
    arena_init(&scratch);
    check_source(&c, arena_printf(&scratch, "%s%s", CASINO,
                                  "main {\n"
                                  "  a = new casino();\n"
                                  "  b = new nothere();\n"
                                  "  f = forward(a);\n"
                                  "  print f.traceback;\n"
                                  "  print f.colour;\n"
                                  "  print f;\n"
                                  "  print smooth(a).score;\n"
                                  "  print b.score;\n"   /* b is an error already: no second one */
                                  "  a = forward(a);\n"
                                  "}\n"));
    assert_null(c.program);
    if (c.diag.errors != 6)
        fail_msg("expected 6 errors, got %d:\n%s", c.diag.errors, c.messages);
    assert_non_null(strstr(c.messages, "unknown model 'nothere'"));
    assert_non_null(strstr(c.messages, "forward has no traceback: only viterbi does"));
    assert_non_null(strstr(c.messages, "'a' is already bound"));
    checked_free(&c);
    arena_free(&scratch);
}

static void test_missing_main_and_missing_declarations(void **state)
{
    expect_errors("hmm m { alphabet [a]; startstate s; endstate t; s -> t 1; }\n", 1,
                  "has no main block");
    expect_errors("hmm m { state x; }\nmain { print forward(new m()).score; }\n", 3,
                  "model 'm' has no alphabet");
    expect_errors("hmm m { alphabet [a]; startstate s; endstate t; s -> t 1; }\n"
                  "hmm m { alphabet [a]; startstate s; endstate t; s -> t 1; }\n"
                  "main { print forward(new m()).score; }\n",
                  1, "model 'm' is declared twice");
}

/* posterior is an algorithm with score, decode, segments and probability&;
 * viterbi has segments too. */
static void test_posterior_calls_and_their_attributes(void **state)
{
    Checked c;
    Arena scratch;
    Program *p = check_casino(&c, &scratch,
                              "main {\n"
                              "  p = posterior(new casino());\n"
                              "  print p.decode;\n"
                              "  print p.probability&;\n"
                              "  print viterbi(new casino()).segments;\n"
                              "  print p.segments;\n"
                              "  print p.score;\n"
                              "}\n");
    assert_int_equal(p->n_calls, 2);
    assert_int_equal(p->calls[0].alg, ALG_POSTERIOR);
    assert_string_equal(p->calls[0].label, "posterior(casino)");
    assert_int_equal(p->calls[0].attrs,
                     ATTR_DECODE | ATTR_PROBABILITY_TABLE | ATTR_SEGMENTS | ATTR_SCORE);
    assert_int_equal(p->calls[1].attrs, ATTR_SEGMENTS);
    assert_string_equal(p->prints[1].label, "posterior(casino).probability&");
    assert_string_equal(p->prints[2].label, "viterbi(casino).segments");
    checked_free(&c);
    arena_free(&scratch);
}

static void test_attributes_of_the_wrong_algorithm(void **state)
{
    const char *m = "hmm m { alphabet [a]; startstate s; state x emits e; endstate t;\n"
                    "  emission e = [1]; s -> x 1; x -> t 1; }\n";
    struct { const char *main, *phrase; } cases[] = {
        {"print forward(new m()).segments;", "forward has no segments"},
        {"print backward(new m()).decode;", "backward has no decode: only posterior does"},
        {"print viterbi(new m()).probability&;", "viterbi has no probability"},
        {"print posterior(new m()).probability;", "write .probability&"},
        {"print posterior(new m()).traceback;", "posterior has no traceback"},
        {"print posterior(new m()).decode&;", "decode has no whole table"},
        {"print posterior(new m()).score&;", "posterior has no score&"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[512];
        snprintf(src, sizeof src, "%smain { %s }\n", m, cases[i].main);
        expect_errors(src, 1, cases[i].phrase);
    }
}

/* The model as written keeps, per move and per emission value, `fixed` and
 * the bytes of the number's text; a call's copy does not (its moves change). */
static void test_fixed_flags_and_places_of_numbers(void **state)
{
    const char *src = "hmm m { alphabet [a, b]; startstate s; state x emits e; endstate t;\n"
                      "  emission e = {b: 0.5} fixed;\n"
                      "  s -> x 1/2 fixed; x -> t 0.25;\n"
                      "  [x] -> [x, t] [0.125, 0] fixed;\n"
                      "}\n"
                      "main { print forward(new m()).score; }\n";
    Checked c;
    check_source(&c, src);
    assert_non_null(c.program);
    const IrModel *m = &c.program->models[0];
    assert_int_equal(m->n_moves, 3);
    static const char *const weights[] = {"1/2", "0.25", "0.125"};
    static const int fixed[] = {1, 0, 1};
    for (int i = 0; i < 3; i++) {
        const IrSpan *s = &m->move_span[i];
        assert_int_equal(s->end - s->begin, (long)strlen(weights[i]));
        assert_memory_equal(src + s->begin, weights[i], strlen(weights[i]));
        assert_int_equal(m->move_fixed[i], fixed[i]);
    }
    assert_int_equal(m->emission_fixed[0], 1);
    assert_int_equal(m->emission_span[0].begin, -1); /* a: left out, 0 */
    assert_memory_equal(src + m->emission_span[1].begin, "0.5", 3);
    assert_int_equal(m->emission_span[1].end - m->emission_span[1].begin, 3);
    assert_null(c.program->calls[0].model->move_span);
    assert_null(c.program->calls[0].model->move_fixed);
    checked_free(&c);
}

/* `(EXPR)` of L: a move marked with its length weight (constant factor 1),
 * whose expression has the language's precedence; without L, a plain
 * weight. Values at a length worked out by hand. */
static void test_length_dependent_weights(void **state)
{
    Checked c;
    Program *p = check_ok(&c, "hmm m scores { alphabet [a]; startstate s; state x emits e;\n"
                              "  endstate t; emission e = [1];\n"
                              "  s -> x (L / (L + 3)); x -> x (-L^2 + 2 * L ^ 3 ^ 0.5 + L^2 * 2);\n"
                              "  x -> t (2 ^ 3 ^ 2 / 1024);\n"
                              "}\n"
                              "main { print forward(new m()).score; }\n");
    const IrModel *m = &p->models[0];
    assert_int_equal(m->n_length_weights, 2);
    assert_int_equal(m->n_moves, 3);
    assert_int_equal(m->moves[0].length_weight, 1);
    assert_int_equal(m->moves[1].length_weight, 2);
    assert_int_equal(m->moves[2].length_weight, 0);
    assert_close(m->moves[0].lw_sum, 0);
    /* 3 / (3 + 3) = 0.5 at L = 3 */
    assert_close(lexpr_eval(m->length_weights[0].expr, 3), 0.5);
    /* -(4^2) + 2 * 4^(3^0.5) + 4^2 * 2 at L = 4, 4^1.7320508075688772 = 11.0356646... */
    assert_close(lexpr_eval(m->length_weights[1].expr, 4), -16 + 2 * 11.03566463596361 + 32);
    /* 2^(3^2) / 1024 = 512 / 1024: ln 0.5 */
    assert_close(m->moves[2].lw_sum, -LN_2);
    checked_free(&c);
    expect_errors("hmm m { alphabet [a]; startstate s; endstate t;\n"
                  "  s -> t (L - 3); }\n"
                  "main { print forward(new m()).score; }\n",
                  1, "this weight is negative at L = 0");
    expect_errors("hmm m { alphabet [a]; startstate s; endstate t;\n"
                  "  s -> t (K / 2); }\n"
                  "main { print forward(new m()).score; }\n",
                  1, "unknown name 'K' in a length-dependent weight");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_states_in_declaration_order_with_kinds),
        cmocka_unit_test(test_silent_states_and_declarations_in_any_order),
        cmocka_unit_test(test_list_emissions_are_logs),
        cmocka_unit_test(test_zero_emission_value_is_minus_infinity),
        cmocka_unit_test(test_dict_emission_fills_unnamed_symbols_with_minus_infinity),
        cmocka_unit_test(test_moves_take_the_emission_of_their_destination),
        cmocka_unit_test(test_emits_on_a_transition_into_a_silent_state),
        cmocka_unit_test(test_weights_are_logs_of_fractions_and_numbers),
        cmocka_unit_test(test_weight_zero_transitions_are_dropped),
        cmocka_unit_test(test_weight_zero_transition_still_counts_as_declared),
        cmocka_unit_test(test_several_hmm_blocks_in_order),
        cmocka_unit_test(test_calls_are_deduplicated),
        cmocka_unit_test(test_each_call_has_its_own_copy_of_the_model),
        cmocka_unit_test(test_prints_in_order_with_labels),
        cmocka_unit_test(test_attributes_are_collected_per_call),
        cmocka_unit_test(test_warnings_alone_still_give_a_program),
        cmocka_unit_test(test_sums_above_one_warn_beyond_rounding),
        cmocka_unit_test(test_name_errors),
        cmocka_unit_test(test_number_and_emission_errors),
        cmocka_unit_test(test_transition_errors),
        cmocka_unit_test(test_silent_cycles_that_diverge_are_errors),
        cmocka_unit_test(test_main_errors),
        cmocka_unit_test(test_missing_main_and_missing_declarations),
        cmocka_unit_test(test_matrix_makes_the_moves_of_its_rows),
        cmocka_unit_test(test_matrix_errors),
        cmocka_unit_test(test_posterior_calls_and_their_attributes),
        cmocka_unit_test(test_attributes_of_the_wrong_algorithm),
        cmocka_unit_test(test_fixed_flags_and_places_of_numbers),
        cmocka_unit_test(test_length_dependent_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
