/* test_passes.c: unit tests of the passes over the program IR, each tested
 * in isolation: the source is taken through sema and then through the passes
 * in the driver's order (compiler/driver/pipeline.c) up to the one under test.
 *   pass_attributes    storage per call
 *   pass_close_cycles  aux states, closing moves with the exact closure sums
 *                      (I - S)^-1 and best paths, moves redirected
 *   pass_fold_silent   the cost rule, folded weights, merged parallel paths,
 *                      kept profile delete states, and when nothing is folded
 *   pass_order         silent moves go forward in silent_order
 *   pass_plan          live states, in-degree, back-pointer width, dense
 *   gpu_plan           the CUDA backend's kernel shape, unrolling, profile lanes
 *                      (codegen/cuda/cuda_plan.c, run after "plan" here)
 *   pipeline_plan_target  only the chosen target's plans (and -v lines); the
 *                      layout: alphabets, columns, models, names
 *   graph.c            SCCs and reachability on hand-made graphs
 *   ir_verify          passes a good program after every pass, and finds
 *                      each kind of broken invariant it checks
 * and a whole-program invariant: the sum over all paths (forward) and the
 * best path (viterbi, with its traceback in source states) that a brute-force
 * enumeration of paths finds on the model as written equal those it finds on
 * the model after the passes.
 *
 * Expected weights are worked out by hand in the comments; the tests take
 * their logs only to compare with the IR, which holds natural logs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fixtures.h"

#include "ir/graph.h"
#include "ir/ir_verify.h"
#include "syntax/parse.h"
#include "passes/pass.h"
#include "codegen/cuda/profile_tuning.h"
#include "sema/sema.h"
#include "codegen/cuda/cuda_plan.h"
#include "driver/pipeline.h"

/* The passes in the order compiler/driver/pipeline.c runs them. */
static const struct {
    const char *name;
    int (*run)(Program *, const PassOptions *, Diag *);
} PASSES[] = {
    {"attributes", pass_attributes}, {"cycles", pass_close_cycles}, {"fold", pass_fold_silent},
    {"order", pass_order},           {"plan", pass_plan},
};
enum { N_PASSES = sizeof PASSES / sizeof PASSES[0] };

enum { FOLD_OFF = 0, FOLD_ON = 1 };

/* One source string through sema and some passes, messages kept in memory. */
typedef struct Compiled {
    Arena arena;
    Diag diag;
    FILE *stream;
    char *messages;
    size_t size;
    Program *program;
    PassOptions options;
    GpuPlan *gpu;      /* through "plan": the CUDA backend's plan of every call */
} Compiled;

/* Compiles src through sema and then the passes up to and including `last`
 * ("sema" runs none); fold_silent is what --no-fold would turn off. */
static Program *compile_through(Compiled *c, const char *src, const char *last, int fold_silent)
{
    arena_init(&c->arena);
    c->messages = NULL;
    c->size = 0;
    c->stream = open_memstream(&c->messages, &c->size);
    assert_non_null(c->stream);
    size_t len = strlen(src);
    diag_init(&c->diag, "t.hmm", src, len, c->stream);
    File *f = parse_source(&c->arena, &c->diag, "t.hmm", src, len);
    Program *p = c->diag.errors ? NULL : sema(&c->arena, f, &c->diag);
    fflush(c->stream);
    if (!p || c->diag.errors)
        fail_msg("the test source does not compile:\n%s", c->messages);
    c->options = (PassOptions){.verbose = NULL, .fold_silent = fold_silent};
    c->gpu = NULL;
    int known = strcmp(last, "sema") == 0;
    for (int i = 0; i < N_PASSES && !known; i++) {
        int ok = PASSES[i].run(p, &c->options, &c->diag);
        fflush(c->stream);
        if (!ok || c->diag.errors)
            fail_msg("pass %s failed:\n%s", PASSES[i].name, c->messages);
        known = strcmp(last, PASSES[i].name) == 0;
    }
    if (!known)
        fail_msg("no pass named %s", last);
    if (strcmp(last, "plan") == 0)
        c->gpu = gpu_plan(p, NULL, NULL);
    c->program = p;
    return p;
}

static void compiled_free(Compiled *c)
{
    fclose(c->stream);
    free(c->messages);
    arena_free(&c->arena);
}

/* The model of call 0, which most tests have alone. */
static IrModel *first_call_model(Program *p)
{
    assert_true(p->n_calls >= 1);
    return p->calls[0].model;
}

static void assert_close(double actual, double expected)
{
    if (!(fabs(actual - expected) <= 1e-12 * (1 + fabs(expected))))
        fail_msg("%.17g is not %.17g", actual, expected);
}

/* A state of the source (not an aux state) by name. */
static int state_index(const IrModel *m, const char *name)
{
    for (int s = 0; s < m->n_states; s++)
        if (m->states[s].aux_of < 0 && strcmp(m->states[s].name, name) == 0)
            return s;
    fail_msg("model %s has no state %s", m->name, name);
    return -1;
}

/* The aux state pass_close_cycles made for source state s. */
static int aux_state_of(const IrModel *m, int s)
{
    int found = -1;
    for (int a = 0; a < m->n_states; a++)
        if (m->states[a].aux_of == s) {
            if (found >= 0)
                fail_msg("two aux states for %s", m->states[s].name);
            found = a;
        }
    if (found < 0)
        fail_msg("no aux state for %s", m->states[s].name);
    return found;
}

static int count_aux_states(const IrModel *m)
{
    int n = 0;
    for (int s = 0; s < m->n_states; s++)
        n += m->states[s].aux_of >= 0;
    return n;
}

static int count_folded(const IrModel *m)
{
    int n = 0;
    for (int s = 0; s < m->n_states; s++)
        n += m->states[s].folded;
    return n;
}

static int count_moves_into(const IrModel *m, int to)
{
    int n = 0;
    for (int i = 0; i < m->n_moves; i++)
        n += m->moves[i].to == to;
    return n;
}

static int has_move(const IrModel *m, int from, int to)
{
    for (int i = 0; i < m->n_moves; i++)
        if (m->moves[i].from == from && m->moves[i].to == to)
            return 1;
    return 0;
}

/* Checks a move's weights (given as plain numbers, not logs), its emission
 * and its via list (state indexes, n_via of them). */
static void assert_move_in(const IrModel *via_model, const IrMove *mv, int emission, double sum,
                           double max, int n_via, const int *via)
{
    assert_int_equal(mv->emission, emission);
    assert_close(mv->lw_sum, log(sum));
    assert_close(mv->lw_max, log(max));
    assert_int_equal(mv->n_via, n_via);
    int states[n_via + 1];
    ir_move_via(via_model, mv, states);
    for (int v = 0; v < n_via; v++)
        assert_int_equal(states[v], via[v]);
}
/* the via paths are the model's: every caller names its model m */
#define assert_move_is(mv, ...) assert_move_in(m, (mv), __VA_ARGS__)

/* Start, end and emitting states are never folded. */
static void assert_only_silent_states_folded(const IrModel *m)
{
    for (int s = 0; s < m->n_states; s++)
        if (m->states[s].folded)
            assert_int_equal(m->states[s].kind, STATE_SILENT);
}

/* No move touches a folded state. */
static void assert_no_move_touches_folded_states(const IrModel *m)
{
    for (int i = 0; i < m->n_moves; i++) {
        assert_false(m->states[m->moves[i].from].folded);
        assert_false(m->states[m->moves[i].to].folded);
    }
}

/* The silent moves form no cycle, self-loops included. */
static void assert_no_silent_cycle(Arena *a, const IrModel *m)
{
    for (int i = 0; i < m->n_moves; i++)
        if (m->moves[i].emission < 0)
            assert_int_not_equal(m->moves[i].from, m->moves[i].to);
    Graph g = graph_of_moves(a, m, 1);
    int *comp = ARENA_ARRAY(a, int, m->n_states);
    assert_int_equal(graph_scc(a, &g, comp), m->n_states);
}

/* ---- models used by several tests ---- */

/* A silent self-loop q -> q of weight c = 0.3, entered from s and from x. */
static const char *SELF_LOOP =
    "hmm m {\n"
    "  alphabet [a, b];\n"
    "  startstate s; state q; state x emits e; endstate t;\n"
    "  emission e = [0.5, 0.5];\n"
    "  s -> q 1;\n"
    "  q -> q 0.3;\n"
    "  q -> x 0.7;\n"
    "  x -> q 0.2;\n"
    "  x -> t 0.8;\n"
    "}\n"
    "main { print forward(new m()).score; }\n";

/* A silent 2-cycle x <-> y with weights a = 0.5 (x -> y) and b = 0.4 (y -> x),
 * entered by a silent move (s -> x), an emitting transition (s -> y emits e)
 * and a silent move from an emitting state (w -> x). */
static const char *TWO_CYCLE =
    "hmm m {\n"
    "  alphabet [a, b];\n"
    "  startstate s; state x; state y; state w emits e; endstate t;\n"
    "  emission e = [0.5, 0.5];\n"
    "  s -> x 0.6;\n"
    "  s -> y 0.4 emits e;\n"
    "  x -> y 0.5;\n"
    "  y -> x 0.4;\n"
    "  x -> w 0.3;\n"
    "  y -> t 0.2;\n"
    "  w -> x 0.1;\n"
    "  w -> t 0.9;\n"
    "}\n"
    "main { print forward(new m()).score; }\n";

/* A silent chain a -> b -> c -> d between two emitting states a and d. */
static const char *CHAIN_MODEL =
    "hmm m {\n"
    "  alphabet [a, b];\n"
    "  startstate s; state a emits e; state b; state c; state d emits e; endstate t;\n"
    "  emission e = [0.5, 0.5];\n"
    "  s -> a 1;\n"
    "  a -> b 0.5;\n"
    "  b -> c 0.4;\n"
    "  c -> d 0.25;\n"
    "  d -> t 1;\n"
    "}\n";

/* A profile of three nodes: match states M1..M3 (emitting) and delete states
 * D1..D3 (silent), each node linked to the next by M->M, M->D, D->M, D->D. */
static const char *PROFILE_MODEL =
    "hmm p {\n"
    "  alphabet [a, b];\n"
    "  startstate S;\n"
    "  state M1 emits e; state M2 emits e; state M3 emits e;\n"
    "  state D1; state D2; state D3;\n"
    "  endstate E;\n"
    "  emission e = [0.25, 0.75];\n"
    "  S -> M1 0.9;   S -> D1 0.1;\n"
    "  M1 -> M2 0.8;  M1 -> D2 0.2;  D1 -> M2 0.6;  D1 -> D2 0.4;\n"
    "  M2 -> M3 0.7;  M2 -> D3 0.3;  D2 -> M3 0.5;  D2 -> D3 0.5;\n"
    "  M3 -> E 1;     D3 -> E 1;\n"
    "}\n";

/* A model's text followed by a main block, allocated in `scratch`. */
static const char *with_main(Arena *scratch, const char *model, const char *main_block)
{
    return arena_printf(scratch, "%s%s", model, main_block);
}

/* ---- pass_attributes ---- */

static void test_attributes_storage_per_call(void **state)
{
    Compiled c;
    Program *p = compile_through(&c,
                                 "hmm m { alphabet [a]; startstate s; state x emits e; endstate t;\n"
                                 "  emission e = [1]; s -> x 1; x -> t 1; }\n"
                                 "main {\n"
                                 "  m = new m();\n"
                                 "  print forward(m).score;\n"
                                 "  print viterbi(m).score;\n"
                                 "  print viterbi(m).traceback;\n"
                                 "  print backward(m).score&;\n"
                                 "}\n",
                                 "attributes", FOLD_ON);
    assert_int_equal(p->n_calls, 3);
    assert_int_equal(p->calls[0].storage, STORE_TWO_COLUMNS);  /* score only */
    assert_int_equal(p->calls[1].storage, STORE_BACKPOINTERS); /* score and traceback */
    assert_int_equal(p->calls[2].storage, STORE_WHOLE_TABLE);  /* score& */
    compiled_free(&c);

    p = compile_through(&c,
                        "hmm m { alphabet [a]; startstate s; state x emits e; endstate t;\n"
                        "  emission e = [1]; s -> x 1; x -> t 1; }\n"
                        "main {\n"
                        "  v = viterbi(new m());\n"
                        "  print v.traceback&;\n"
                        "  print v.traceback;\n"
                        "  print viterbi(new m()).score;\n"
                        "  unused = forward(new m());\n"
                        "}\n",
                        "attributes", FOLD_ON);
    assert_int_equal(p->n_calls, 2);
    assert_int_equal(p->calls[0].storage, STORE_WHOLE_TABLE); /* traceback& wins */
    assert_int_equal(p->calls[1].storage, STORE_TWO_COLUMNS); /* nothing printed */
    compiled_free(&c);
}

/* ---- pass_close_cycles ---- */

static void test_close_self_loop(void **state)
{
    Compiled c;
    IrModel *m = first_call_model(compile_through(&c, SELF_LOOP, "cycles", FOLD_ON));
    int s = state_index(m, "s"), q = state_index(m, "q"), x = state_index(m, "x");
    int t = state_index(m, "t");
    assert_int_equal(m->n_states, 5); /* four states and one aux */
    int aux = aux_state_of(m, q);
    assert_int_equal(aux, 4);
    assert_int_equal(m->states[aux].kind, STATE_SILENT);
    assert_int_equal(m->states[aux].emission, -1);
    assert_false(has_move(m, q, q));
    /* closing move: sum 1 + c + c^2 + ... = 1/(1 - 0.3); best path: stay, weight 1 */
    assert_move_is(move_between(m, aux, q), -1, 1 / (1 - 0.3), 1, 0, NULL);
    /* what entered q now enters its aux state; q's only move in is the closing one */
    assert_move_is(move_between(m, s, aux), -1, 1, 1, 0, NULL);
    assert_move_is(move_between(m, x, aux), -1, 0.2, 0.2, 0, NULL);
    assert_int_equal(count_moves_into(m, q), 1);
    /* what leaves q is kept */
    assert_move_is(move_between(m, q, x), 0, 0.7, 0.7, 0, NULL);
    assert_move_is(move_between(m, x, t), -1, 0.8, 0.8, 0, NULL);
    assert_int_equal(m->n_moves, 5); /* 5 moves - the loop + the closing move */
    assert_no_silent_cycle(&c.arena, m);
    /* the model as written is untouched */
    assert_int_equal(c.program->models[0].n_states, 4);
    assert_int_equal(c.program->models[0].n_moves, 5);
    compiled_free(&c);
}

static void test_close_two_cycle(void **state)
{
    Compiled c;
    IrModel *m = first_call_model(compile_through(&c, TWO_CYCLE, "cycles", FOLD_ON));
    int s = state_index(m, "s"), x = state_index(m, "x"), y = state_index(m, "y");
    int w = state_index(m, "w"), t = state_index(m, "t");
    int ax = aux_state_of(m, x), ay = aux_state_of(m, y);
    assert_int_equal(count_aux_states(m), 2);
    /* S = [[0, a], [b, 0]] with a = 0.5, b = 0.4; (I - S)^-1 = 1/(1 - ab) [[1, a], [b, 1]],
     * 1/(1 - ab) = 1/0.8 = 1.25. Best paths: stay (1), x -> y (a, via x), y -> x (b, via y). */
    assert_move_is(move_between(m, ax, x), -1, 1.25, 1, 0, NULL);
    assert_move_is(move_between(m, ax, y), -1, 0.5 * 1.25, 0.5, 1, (int[]){x});
    assert_move_is(move_between(m, ay, x), -1, 0.4 * 1.25, 0.4, 1, (int[]){y});
    assert_move_is(move_between(m, ay, y), -1, 1.25, 1, 0, NULL);
    assert_false(has_move(m, x, y));
    assert_false(has_move(m, y, x));
    assert_int_equal(count_moves_into(m, x), 2); /* the closing moves alone */
    assert_int_equal(count_moves_into(m, y), 2);
    /* moves entering the cycle go to the aux states, emissions kept */
    assert_move_is(move_between(m, s, ax), -1, 0.6, 0.6, 0, NULL);
    assert_move_is(move_between(m, s, ay), 0, 0.4, 0.4, 0, NULL);
    assert_move_is(move_between(m, w, ax), -1, 0.1, 0.1, 0, NULL);
    /* moves leaving it stay on the source states */
    assert_move_is(move_between(m, x, w), 0, 0.3, 0.3, 0, NULL);
    assert_move_is(move_between(m, y, t), -1, 0.2, 0.2, 0, NULL);
    /* 8 moves - 2 inside + 4 closing */
    assert_int_equal(m->n_moves, 10);
    assert_no_silent_cycle(&c.arena, m);
    compiled_free(&c);
}

/* A 3-cycle x -> y -> z -> x with a chord x -> z: two cycles through x. */
static void test_close_three_cycle_with_chord(void **state)
{
    Compiled c;
    IrModel *m = first_call_model(compile_through(
        &c,
        "hmm m {\n"
        "  alphabet [a];\n"
        "  startstate s; state x; state y; state z; state o emits e; endstate t;\n"
        "  emission e = [1];\n"
        "  s -> x 1; s -> y 1; s -> z 1;\n"
        "  x -> y 0.5; y -> z 0.8; z -> x 0.5; x -> z 0.3;\n"
        "  z -> o 0.5; o -> t 1;\n"
        "}\n"
        "main { print viterbi(new m()).traceback; }\n",
        "cycles", FOLD_ON));
    int x = state_index(m, "x"), y = state_index(m, "y"), z = state_index(m, "z");
    int aux[3] = {aux_state_of(m, x), aux_state_of(m, y), aux_state_of(m, z)};
    int member[3] = {x, y, z};
    /* I - S = [[1, -.5, -.3], [0, 1, -.8], [-.5, 0, 1]]; det = 1 - .5*.4 - .3*.5 = 0.65
     * (1 minus the two cycles through x: x y z x = .2, x z x = .15). Cofactors give
     * (I - S)^-1 = 1/0.65 [[1, .5, .7], [.4, .85, .8], [.5, .25, 1]]; e.g. x -> z:
     * first passage .3 + .5*.8 = .7, times returns to x 1/(1 - .35). */
    const double sum[3][3] = {{1, .5, .7}, {.4, .85, .8}, {.5, .25, 1}};
    /* best simple paths: x->y .5 [x]; x->z max(.3 direct, .5*.8 = .4 via y) = .4 [x y];
     * y->x .8*.5 = .4 [y z]; y->z .8 [y]; z->x .5 [z]; z->y .5*.5 = .25 [z x] */
    const double best[3][3] = {{1, .5, .4}, {.4, 1, .8}, {.5, .25, 1}};
    const int via_len[3][3] = {{0, 1, 2}, {2, 0, 1}, {1, 2, 0}};
    const int via[3][3][2] = {{{0}, {x}, {x, y}}, {{y, z}, {0}, {y}}, {{z}, {z, x}, {0}}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            assert_move_is(move_between(m, aux[i], member[j]), -1, sum[i][j] / 0.65, best[i][j],
                           via_len[i][j], via[i][j]);
    assert_no_silent_cycle(&c.arena, m);
    compiled_free(&c);
}

static void test_close_two_separate_cycles(void **state)
{
    Compiled c;
    IrModel *m = first_call_model(compile_through(
        &c,
        "hmm m {\n"
        "  alphabet [a];\n"
        "  startstate s; state p; state q; state r; state o emits e; endstate t;\n"
        "  emission e = [1];\n"
        "  s -> p 1; p -> q 0.5; q -> p 0.5; q -> o 1; o -> r 1; r -> r 0.5; r -> t 1;\n"
        "}\n"
        "main { print forward(new m()).score; }\n",
        "cycles", FOLD_ON));
    assert_int_equal(count_aux_states(m), 3); /* p, q and r */
    int r = state_index(m, "r");
    /* r's self-loop: 1/(1 - 0.5) = 2 */
    assert_move_is(move_between(m, aux_state_of(m, r), r), -1, 2, 1, 0, NULL);
    /* the pq cycle: 1/(1 - .25) = 4/3 on the diagonal */
    int p = state_index(m, "p");
    assert_move_is(move_between(m, aux_state_of(m, p), p), -1, 4.0 / 3, 1, 0, NULL);
    assert_no_silent_cycle(&c.arena, m);
    compiled_free(&c);
}

/* A cycle of weight product 1 - 2^-43: its closing weight is 2^43 to 1e-9
 * relative (1 - T from expm1 of the summed logs, not 1 - the product). */
static void test_close_cycle_of_product_near_one(void **state)
{
    Compiled c;
    IrModel *m = first_call_model(compile_through(
        &c,
        "hmm m {\n"
        "  alphabet [a];\n"
        "  startstate s; state x; state y; state o emits e; endstate t;\n"
        "  emission e = [1];\n"
        "  s -> x 1;\n"
        "  x -> y 0.9999999999998863131622783839702606201171875; y -> x 1;\n"
        "  y -> o 0.5; o -> t 1;\n"
        "}\n"
        "main { print forward(new m()).score; }\n",
        "cycles", FOLD_ON));
    int x = state_index(m, "x"), y = state_index(m, "y");
    const IrMove *mv = move_between(m, aux_state_of(m, x), x);
    assert_true(fabs(mv->lw_sum - 43 * log(2)) < 1e-9);
    mv = move_between(m, aux_state_of(m, x), y);
    assert_true(fabs(mv->lw_sum - 43 * log(2)) < 1e-9);
    compiled_free(&c);
}

/* A cycle of 2,000 states is closed through one cut state: O(n) states and
 * moves (not 4 million), with the numbers of the model as written. */
static void test_close_long_cycle_sparsely(void **state)
{
    enum { N = 2000 };
    Arena scratch;
    arena_init(&scratch);
    char *src = arena_printf(&scratch, "hmm m {\n  alphabet [a];\n  startstate s; endstate t;\n"
                                       "  state o emits e; emission e = [1];\n");
    for (int i = 0; i < N; i++)
        src = arena_printf(&scratch, "%s  state q%d; q%d -> q%d 0.999;\n", src, i, i, (i + 1) % N);
    src = arena_printf(&scratch, "%s  s -> q0 1; q%d -> o 0.01; o -> t 1;\n}\n"
                                 "main { print forward(new m()).score; }\n", src, N / 2);
    Compiled c;
    IrModel *m = first_call_model(compile_through(&c, src, "cycles", FOLD_OFF));
    assert_true(m->n_states <= 3 * N + 10);
    assert_true(m->n_moves <= 5 * N + 10);
    assert_no_silent_cycle(&c.arena, m);
    /* the one way from s to o: into q0, around the cycle any number of times,
     * to q(N/2): sum 0.999^(N/2) / (1 - 0.999^N) * 0.01; through the pass's
     * copies and closing moves, summed over the moves' DAG */
    int o = state_index(m, "o");
    double *sum = calloc((size_t)m->n_states, sizeof(double));
    sum[state_index(m, "s")] = 1;
    for (int round = 0; round < 4 * N; round++) { /* relax until stable (a DAG) */
        double *next = calloc((size_t)m->n_states, sizeof(double));
        next[state_index(m, "s")] = 1;
        for (int i = 0; i < m->n_moves; i++)
            if (m->moves[i].emission < 0 || m->moves[i].to == o)
                next[m->moves[i].to] += sum[m->moves[i].from] * exp(m->moves[i].lw_sum);
        int same = memcmp(next, sum, sizeof(double) * (size_t)m->n_states) == 0;
        free(sum);
        sum = next;
        if (same)
            break;
    }
    double want = pow(0.999, N / 2) / (1 - pow(0.999, N)) * 0.01;
    assert_true(fabs(sum[o] / want - 1) < 1e-9);
    free(sum);
    compiled_free(&c);
    arena_free(&scratch);
}

static void test_no_silent_cycle_then_order_succeeds(void **state)
{
    const char *models[] = {SELF_LOOP, TWO_CYCLE};
    for (int k = 0; k < 2; k++) {
        Compiled c;
        Program *p = compile_through(&c, models[k], "cycles", FOLD_OFF);
        assert_int_equal(pass_fold_silent(p, &c.options, &c.diag), 1);
        assert_int_equal(pass_order(p, &c.options, &c.diag), 1);
        assert_int_equal(c.diag.errors, 0);
        compiled_free(&c);
    }
}

/* ---- pass_fold_silent ---- */

static void test_fold_silent_chain(void **state)
{
    Compiled c;
    Arena scratch;
    arena_init(&scratch);
    const char *src = with_main(&scratch, CHAIN_MODEL, "main { print viterbi(new m()).traceback; }\n");
    Program *p = compile_through(&c, src, "cycles", FOLD_ON);
    IrModel *m = first_call_model(p);
    assert_int_equal(m->n_moves, 5);
    assert_int_equal(pass_fold_silent(p, &c.options, &c.diag), 1);
    int a = state_index(m, "a"), b = state_index(m, "b"), cc = state_index(m, "c");
    int d = state_index(m, "d");
    assert_true(m->states[b].folded);
    assert_true(m->states[cc].folded);
    assert_int_equal(count_folded(m), 2);
    /* s -> a, a -> d, d -> t */
    assert_int_equal(m->n_moves, 3);
    /* a -> b -> c -> d: 0.5 * 0.4 * 0.25 = 0.05, emitting d's emission on arrival */
    assert_move_is(move_between(m, a, d), 0, 0.05, 0.05, 2, (int[]){b, cc});
    assert_only_silent_states_folded(m);
    assert_no_move_touches_folded_states(m);
    compiled_free(&c);
    arena_free(&scratch);
}

static void test_fold_merges_parallel_paths(void **state)
{
    Compiled c;
    Program *p = compile_through(&c,
                                 "hmm m {\n"
                                 "  alphabet [a];\n"
                                 "  startstate s; state a; state b; state x emits e; endstate t;\n"
                                 "  emission e = [1];\n"
                                 "  s -> a 0.3; a -> x 0.4;\n"
                                 "  s -> b 0.6; b -> x 0.25;\n"
                                 "  s -> x 0.1;\n"
                                 "  x -> x 0.5; x -> t 0.5;\n"
                                 "}\n"
                                 "main { print viterbi(new m()).traceback; }\n",
                                 "fold", FOLD_ON);
    IrModel *m = first_call_model(p);
    int s = state_index(m, "s"), b = state_index(m, "b"), x = state_index(m, "x");
    assert_int_equal(count_folded(m), 2);
    assert_int_equal(m->n_moves, 3); /* s -> x, x -> x, x -> t */
    /* three paths s -> x: via a .3 * .4 = .12, via b .6 * .25 = .15, direct .1;
     * sum .37, best .15 via b */
    assert_move_is(move_between(m, s, x), 0, 0.37, 0.15, 1, (int[]){b});
    compiled_free(&c);
}

static void test_fold_keeps_profile_delete_states(void **state)
{
    Compiled c;
    Arena scratch;
    arena_init(&scratch);
    const char *src = with_main(&scratch, PROFILE_MODEL, "main { print viterbi(new p()).traceback; }\n");
    Program *p = compile_through(&c, src, "cycles", FOLD_ON);
    IrModel *m = first_call_model(p);
    assert_int_equal(m->n_moves, 12);
    assert_int_equal(pass_fold_silent(p, &c.options, &c.diag), 1);
    int S = state_index(m, "S"), E = state_index(m, "E");
    int M2 = state_index(m, "M2"), M3 = state_index(m, "M3");
    int D1 = state_index(m, "D1"), D2 = state_index(m, "D2"), D3 = state_index(m, "D3");
    /* D1 has one move in (from S) and D3 one move out (to E): folded. D2 has two
     * in (M1, D1) and two out (M3, D3): folding it would make 4 moves of 4, kept. */
    assert_true(m->states[D1].folded);
    assert_true(m->states[D3].folded);
    assert_false(m->states[D2].folded);
    assert_int_equal(count_folded(m), 2);
    /* folding D1 (1 in, 2 out) takes 3 moves and makes 2; D3 (2 in, 1 out) the same */
    assert_int_equal(m->n_moves, 12 - 3 + 2 - 3 + 2);
    assert_move_is(move_between(m, S, M2), 0, 0.1 * 0.6, 0.1 * 0.6, 1, (int[]){D1});
    assert_move_is(move_between(m, S, D2), -1, 0.1 * 0.4, 0.1 * 0.4, 1, (int[]){D1});
    assert_move_is(move_between(m, M2, E), -1, 0.3, 0.3, 1, (int[]){D3});
    assert_move_is(move_between(m, D2, E), -1, 0.5, 0.5, 1, (int[]){D3});
    assert_move_is(move_between(m, D2, M3), 0, 0.5, 0.5, 0, NULL);
    assert_only_silent_states_folded(m);
    assert_no_move_touches_folded_states(m);
    compiled_free(&c);
    arena_free(&scratch);
}

static void test_fold_never_joins_two_emitting_moves(void **state)
{
    Compiled c;
    /* q has one move in and one out, but both emit: folded, s -> x would emit twice */
    Program *p = compile_through(&c,
                                 "hmm m {\n"
                                 "  alphabet [a, b];\n"
                                 "  startstate s; state q; state x emits e; endstate t;\n"
                                 "  emission e = [0.5, 0.5];\n"
                                 "  s -> q 1 emits e; q -> x 1; x -> t 1;\n"
                                 "}\n"
                                 "main { print forward(new m()).score; }\n",
                                 "fold", FOLD_ON);
    IrModel *m = first_call_model(p);
    assert_false(m->states[state_index(m, "q")].folded);
    assert_int_equal(m->n_moves, 3);
    compiled_free(&c);
}

static void test_fold_never_touches_start_end_or_emitting_states(void **state)
{
    Compiled c;
    /* s has no move in, t no move out, x one of each: the cost rule alone would fold them */
    Program *p = compile_through(&c,
                                 "hmm m {\n"
                                 "  alphabet [a];\n"
                                 "  startstate s; state x emits e; endstate t;\n"
                                 "  emission e = [1];\n"
                                 "  s -> x 1; x -> t 1;\n"
                                 "}\n"
                                 "main { print forward(new m()).score; }\n",
                                 "fold", FOLD_ON);
    IrModel *m = first_call_model(p);
    assert_int_equal(count_folded(m), 0);
    assert_int_equal(m->n_moves, 2);
    compiled_free(&c);
}

static void test_fold_off_for_whole_tables_and_no_fold(void **state)
{
    Compiled c;
    Arena scratch;
    arena_init(&scratch);
    /* the chain folds for a score, not when the whole table is printed */
    const char *src = with_main(&scratch, CHAIN_MODEL,
                                "main { print forward(new m()).score&; print viterbi(new m()).score; }\n");
    Program *p = compile_through(&c, src, "fold", FOLD_ON);
    assert_int_equal(p->calls[0].storage, STORE_WHOLE_TABLE);
    assert_int_equal(count_folded(p->calls[0].model), 0);
    assert_int_equal(p->calls[0].model->n_moves, 5);
    assert_int_equal(count_folded(p->calls[1].model), 2);
    assert_int_equal(p->calls[1].model->n_moves, 3);
    compiled_free(&c);
    /* with folding off (--no-fold) nothing is folded */
    p = compile_through(&c, src, "fold", FOLD_OFF);
    assert_int_equal(count_folded(p->calls[1].model), 0);
    assert_int_equal(p->calls[1].model->n_moves, 5);
    compiled_free(&c);
    arena_free(&scratch);
}

static void test_fold_after_closing_a_self_loop(void **state)
{
    Compiled c;
    IrModel *m = first_call_model(compile_through(&c, SELF_LOOP, "fold", FOLD_ON));
    int s = state_index(m, "s"), q = state_index(m, "q"), x = state_index(m, "x");
    int aux = aux_state_of(m, q);
    /* aux q' (2 in, 1 out) and q (1 in, 1 out) both fold, in either order */
    assert_true(m->states[aux].folded);
    assert_true(m->states[q].folded);
    /* s -> q' -> q -> x: 1 * 1/0.7 * 0.7 = 1 summed; best 1 * 1 * 0.7 */
    assert_move_is(move_between(m, s, x), 0, 1, 0.7, 2, (int[]){aux, q});
    /* x -> q' -> q -> x: 0.2 * 1/0.7 * 0.7 = 0.2; best 0.2 * 0.7 = 0.14 */
    assert_move_is(move_between(m, x, x), 0, 0.2, 0.14, 2, (int[]){aux, q});
    assert_no_move_touches_folded_states(m);
    compiled_free(&c);
}

/* ---- pass_order ---- */

/* Every silent move goes from a state earlier in silent_order (or one outside
 * it, which receives no silent move) to one later in it; silent_order holds
 * exactly the live states that receive silent moves. */
static void assert_silent_order_is_topological(const IrModel *m)
{
    int *position = malloc(sizeof(int) * (size_t)m->n_states);
    int *silent_in = calloc((size_t)m->n_states, sizeof(int));
    for (int s = 0; s < m->n_states; s++)
        position[s] = -1;
    for (int i = 0; i < m->n_silent_order; i++) {
        int s = m->silent_order[i];
        assert_int_equal(position[s], -1);
        position[s] = i;
    }
    for (int i = 0; i < m->n_moves; i++)
        if (m->moves[i].emission < 0)
            silent_in[m->moves[i].to] = 1;
    for (int s = 0; s < m->n_states; s++)
        assert_int_equal(position[s] >= 0, silent_in[s] && !m->states[s].folded);
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        if (mv->emission < 0 && position[mv->from] >= 0)
            assert_true(position[mv->from] < position[mv->to]);
    }
    free(position);
    free(silent_in);
}

static void test_order_of_an_unfolded_profile(void **state)
{
    Compiled c;
    Arena scratch;
    arena_init(&scratch);
    const char *src = with_main(&scratch, PROFILE_MODEL, "main { print forward(new p()).score; }\n");
    IrModel *m = first_call_model(compile_through(&c, src, "order", FOLD_OFF));
    /* silent moves: S->D1, D1->D2, M1->D2, D2->D3, M2->D3, D3->E, M3->E */
    int D1 = state_index(m, "D1"), D2 = state_index(m, "D2"), D3 = state_index(m, "D3");
    int E = state_index(m, "E");
    assert_int_equal(m->n_silent_order, 4);
    assert_int_equal(m->silent_order[0], D1);
    assert_int_equal(m->silent_order[1], D2);
    assert_int_equal(m->silent_order[2], D3);
    assert_int_equal(m->silent_order[3], E);
    assert_silent_order_is_topological(m);
    compiled_free(&c);
    arena_free(&scratch);
}

static void test_order_after_folding_and_closing(void **state)
{
    const char *models[] = {SELF_LOOP, TWO_CYCLE};
    for (int k = 0; k < 2; k++)
        for (int fold = FOLD_OFF; fold <= FOLD_ON; fold++) {
            Compiled c;
            IrModel *m = first_call_model(compile_through(&c, models[k], "order", fold));
            assert_true(m->n_silent_order > 0);
            assert_silent_order_is_topological(m);
            compiled_free(&c);
        }
    Compiled c;
    Arena scratch;
    arena_init(&scratch);
    const char *src = with_main(&scratch, PROFILE_MODEL, "main { print forward(new p()).score; }\n");
    IrModel *m = first_call_model(compile_through(&c, src, "order", FOLD_ON));
    /* after folding D1 and D3 the silent moves are S->D2, M1->D2, D2->E, M2->E, M3->E */
    assert_int_equal(m->n_silent_order, 2);
    assert_int_equal(m->silent_order[0], state_index(m, "D2"));
    assert_int_equal(m->silent_order[1], state_index(m, "E"));
    assert_silent_order_is_topological(m);
    compiled_free(&c);
    arena_free(&scratch);
}

/* ---- pass_plan ---- */

/* A model where the end state has `fan_in` moves in: s -> xi -> t for n emitting xi. */
static char *fan_in_source(Arena *a, int fan_in, const char *main_block)
{
    size_t cap = 200 + (size_t)fan_in * 80 + strlen(main_block);
    char *src = arena_alloc(a, cap);
    size_t n = (size_t)snprintf(src, cap, "hmm fan {\n  alphabet [a];\n  startstate s;\n"
                                "  endstate t;\n  emission e = [1];\n");
    for (int i = 0; i < fan_in; i++)
        n += (size_t)snprintf(src + n, cap - n, "  state x%d emits e; s -> x%d 1; x%d -> t 1;\n",
                              i, i, i);
    snprintf(src + n, cap - n, "}\n%s", main_block);
    return src;
}

static void test_plan_back_pointer_width(void **state)
{
    const char *traceback = "main { print viterbi(new fan()).traceback; }\n";
    const struct {
        int fan_in;
        const char *main_block;
        int bp_bytes;
    } cases[] = {
        {254, traceback, 1},
        {255, traceback, 2}, /* 255 moves into t: an index no longer fits a byte */
        {300, "main { print viterbi(new fan()).score; }\n", 0},
        {300, "main { print forward(new fan()).score; }\n", 0},
        {3, traceback, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        Arena scratch;
        arena_init(&scratch);
        Compiled c;
        Program *p = compile_through(&c, fan_in_source(&scratch, cases[k].fan_in,
                                                       cases[k].main_block),
                                     "plan", FOLD_ON);
        const IrPlan *plan = &p->calls[0].plan;
        assert_int_equal(plan->max_in_degree, cases[k].fan_in);
        assert_int_equal(plan->n_live, cases[k].fan_in + 2);
        assert_int_equal(plan->bp_bytes, cases[k].bp_bytes);
        compiled_free(&c);
        arena_free(&scratch);
    }
}

/* The fan model with fan_in emitting states has 2 * fan_in moves. */
static GpuPlan plan_of_fan(int fan_in)
{
    Arena scratch;
    arena_init(&scratch);
    Compiled c;
    Program *p = compile_through(&c, fan_in_source(&scratch, fan_in,
                                                   "main { print forward(new fan()).score; }\n"),
                                 "plan", FOLD_ON);
    assert_int_equal(p->calls[0].model->n_moves, 2 * fan_in);
    GpuPlan plan = c.gpu[0];
    compiled_free(&c);
    arena_free(&scratch);
    return plan;
}

static void test_plan_code_shape_by_model_size(void **state)
{
    /* CUDA: a thread per sequence up to 24 live states (fan_in + 2 here), a block above */
    assert_int_equal(plan_of_fan(22).shape, GPU_THREAD_PER_SEQUENCE);
    assert_int_equal(plan_of_fan(23).shape, GPU_BLOCK_PER_SEQUENCE);
    /* CUDA: sixteen positions written out up to 256 moves, one above */
    assert_int_equal(plan_of_fan(128).unroll, 16);
    assert_int_equal(plan_of_fan(129).unroll, 1);
}

/* n emitting states; pair (i, j) joined when (3 i + 7 j) % 20 < tenths * 2
 * (a share of tenths / 10 of the pairs); main as given. */
static const char *dense_source(Arena *a, int n, int tenths, const char *main_block)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    fprintf(f, "hmm d {\n alphabet [x, y];\n startstate s;\n endstate e;\n"
               " emission em = [0.5, 0.5];\n");
    for (int i = 0; i < n; i++)
        fprintf(f, " state q%d emits em;\n s -> q%d 0.01;\n q%d -> e 0.01;\n", i, i, i);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if ((3 * i + 7 * j) % 20 < tenths * 2)
                fprintf(f, " q%d -> q%d 0.001;\n", i, j);
    fprintf(f, "}\n%s", main_block);
    fclose(f);
    const char *src = arena_strdup(a, text);
    free(text);
    return src;
}

/* The shared plan and the GPU plan of a call. */
typedef struct BothPlans {
    IrPlan ir;
    GpuPlan gpu;
} BothPlans;

static BothPlans plan_of_dense(int n, int tenths, const char *main_block)
{
    Arena scratch;
    arena_init(&scratch);
    Compiled c;
    Program *p = compile_through(&c, dense_source(&scratch, n, tenths, main_block), "plan",
                                 FOLD_ON);
    BothPlans plan = {p->calls[0].plan, c.gpu[0]};
    compiled_free(&c);
    arena_free(&scratch);
    return plan;
}

static void test_plan_dense_shape(void **state)
{
    const char *score = "main { print viterbi(new d()).score; }\n";
    const char *traceback = "main { print viterbi(new d()).traceback; }\n";
    const char *table = "main { print forward(new d()).score&; }\n";
    /* 128 emitting states, every pair joined: dense, on both targets */
    BothPlans plan = plan_of_dense(128, 10, score);
    assert_true(plan.ir.dense);
    assert_int_equal(plan.gpu.shape, GPU_DENSE);
    assert_int_equal(plan.ir.bp_bytes, 0);
    /* one state fewer, or fewer than half of the pairs joined: not dense */
    assert_false(plan_of_dense(127, 10, score).ir.dense);
    assert_false(plan_of_dense(128, 4, score).ir.dense);
    assert_true(plan_of_dense(128, 6, score).ir.dense);
    /* tracebacks keep the source state: 16 bits */
    assert_int_equal(plan_of_dense(128, 10, traceback).ir.bp_bytes, 2);
    /* whole tables are the straight-line code's */
    assert_false(plan_of_dense(128, 10, table).ir.dense);
}

/* A Plan7-like profile of k nodes over {x, y} (S N B M1..Mk I1..Ik-1
 * D2..Dk-1 E C T), N and C emitting on their loops; `extra`: more moves.
 * B -> Mi weighs 0.01 * shrink^(i-1) and Mi -> E 0.01 * shrink^(k-i) (but
 * not below `floor`), as HMMER's glocal entries and exits shrink along the
 * profile. */
static const char *shrinking_profile_source(Arena *a, int k, double shrink, double floor,
                                            const char *extra, const char *main_block)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    fprintf(f, "hmm p {\n alphabet [x, y];\n startstate S;\n endstate T;\n state N;\n state B;\n"
               " state E;\n state C;\n emission null = [0.5, 0.5];\n emission m = [0.8, 0.2];\n"
               " S -> N 1;\n N -> N 0.9 emits null;\n N -> B 0.1;\n E -> C 1;\n"
               " C -> C 0.9 emits null;\n C -> T 0.1;\n");
    for (int i = 1; i <= k; i++) {
        fprintf(f, " state M%d emits m;\n B -> M%d %.17g;\n M%d -> E %.17g;\n", i, i,
                fmax(0.01 * pow(shrink, i - 1), floor), i, fmax(0.01 * pow(shrink, k - i), floor));
        if (i < k)
            fprintf(f, " state I%d emits null;\n M%d -> I%d 0.05;\n I%d -> I%d 0.5;\n"
                       " I%d -> M%d 0.5;\n M%d -> M%d 0.85;\n", i, i, i, i, i, i, i + 1, i, i + 1);
        if (i > 1 && i < k)
            fprintf(f, " state D%d;\n D%d -> M%d 0.6;\n", i, i, i + 1);
        if (i < k - 1)
            fprintf(f, " M%d -> D%d 0.09;\n", i, i + 1);
        if (i > 1 && i < k - 1)
            fprintf(f, " D%d -> D%d 0.4;\n", i, i + 1);
    }
    fprintf(f, "%s}\n%s", extra, main_block);
    fclose(f);
    const char *src = arena_strdup(a, text);
    free(text);
    return src;
}

static const char *profile_source(Arena *a, int k, const char *extra, const char *main_block)
{
    return shrinking_profile_source(a, k, 1, 0, extra, main_block);
}

/* The plan of the first call of a profile of k nodes, and its view. */
static GpuPlan plan_of_profile(int k, const char *extra, const char *main_block, int *nodes,
                               int *specials)
{
    Arena scratch;
    arena_init(&scratch);
    Compiled c;
    Program *p = compile_through(&c, profile_source(&scratch, k, extra, main_block), "plan", FOLD_ON);
    GpuPlan plan = c.gpu[0];
    ProfileView *v = profile_view(p->arena, p->calls[0].model, NULL);
    *nodes = v ? v->K : 0;
    *specials = v ? v->n_specials : 0;
    compiled_free(&c);
    arena_free(&scratch);
    return plan;
}

static void test_plan_profile_shape(void **state)
{
    const char *both = "main { print forward(new p()).score; print viterbi(new p()).traceback; }\n";
    int nodes, specials;
    /* 30 nodes: a profile; its specials S N C T (B and E fold into N's entries
     * and the exits to C) */
    GpuPlan plan = plan_of_profile(30, "", both, &nodes, &specials);
    assert_int_equal(plan.shape, GPU_PROFILE);
    assert_int_equal(nodes, 30);
    assert_int_equal(specials, 4);
    /* viterbi too (the second call) */
    Arena scratch;
    arena_init(&scratch);
    Compiled c;
    compile_through(&c, profile_source(&scratch, 30, "", both), "plan", FOLD_ON);
    assert_int_equal(c.gpu[1].shape, GPU_PROFILE);
    compiled_free(&c);
    arena_free(&scratch);
    /* backward and whole tables keep the block shape */
    assert_int_equal(plan_of_profile(30, "", "main { print backward(new p()).score; }\n", &nodes,
                                     &specials).shape, GPU_BLOCK_PER_SEQUENCE);
    assert_int_equal(plan_of_profile(30, "", "main { print forward(new p()).score&; }\n", &nodes,
                                     &specials).shape, GPU_BLOCK_PER_SEQUENCE);
    /* too few nodes, a move four nodes ahead, a move back: not profiles */
    assert_int_equal(plan_of_profile(20, "", both, &nodes, &specials).shape, GPU_BLOCK_PER_SEQUENCE);
    assert_int_equal(plan_of_profile(30, " M5 -> M9 0.01;\n", both, &nodes, &specials).shape,
                     GPU_BLOCK_PER_SEQUENCE);
    assert_int_equal(plan_of_profile(30, " M12 -> M3 0.01;\n", both, &nodes, &specials).shape,
                     GPU_BLOCK_PER_SEQUENCE);
    /* a special state entering a delete state silently: not a profile (the
     * kernel evaluates the specials after the delete chain) */
    assert_int_equal(plan_of_profile(30, " B -> D5 0.01;\n", both, &nodes, &specials).shape,
                     GPU_BLOCK_PER_SEQUENCE);
    /* a move two nodes ahead (as folding a delete state makes) is still a profile */
    assert_int_equal(plan_of_profile(30, " M5 -> M7 0.01;\n", both, &nodes, &specials).shape,
                     GPU_PROFILE);
}

static void test_plan_counts_live_states(void **state)
{
    Compiled c;
    Arena scratch;
    arena_init(&scratch);
    const char *src = with_main(&scratch, CHAIN_MODEL,
                                "main { print viterbi(new m()).traceback; print forward(new m()).score&; }\n");
    Program *p = compile_through(&c, src, "plan", FOLD_ON);
    /* 6 states, b and c folded for viterbi; none for the whole table */
    assert_int_equal(p->calls[0].plan.n_live, 4);
    assert_int_equal(p->calls[0].plan.max_in_degree, 1);
    assert_int_equal(p->calls[0].plan.bp_bytes, 1);
    assert_int_equal(p->calls[1].plan.n_live, 6);
    assert_int_equal(p->calls[1].plan.bp_bytes, 0);
    compiled_free(&c);
    /* a closed cycle: aux states are live; with folding off, TWO_CYCLE keeps all 5 + 2 */
    p = compile_through(&c, TWO_CYCLE, "plan", FOLD_OFF);
    assert_int_equal(p->calls[0].plan.n_live, 7);
    /* x receives the two closing moves; t receives y -> t and w -> t */
    assert_int_equal(p->calls[0].plan.max_in_degree, 2);
    compiled_free(&c);
    arena_free(&scratch);
}

/* ---- graph.c ---- */

/* A graph over n vertices from a list of edges (pairs), in the arena. */
static Graph make_graph(Arena *a, int n, const int (*edges)[2], int n_edges)
{
    Graph g = {.n = n};
    g.start = ARENA_ARRAY(a, int, n + 1);
    g.adj = ARENA_ARRAY(a, int, n_edges ? n_edges : 1);
    for (int e = 0; e < n_edges; e++)
        g.start[edges[e][0] + 1]++;
    for (int v = 0; v < n; v++)
        g.start[v + 1] += g.start[v];
    int *fill = ARENA_ARRAY(a, int, n);
    for (int e = 0; e < n_edges; e++)
        g.adj[g.start[edges[e][0]] + fill[edges[e][0]]++] = edges[e][1];
    return g;
}

/* Every edge between components goes from a higher component number to a lower one. */
static void assert_reverse_topological(const Graph *g, const int *comp)
{
    for (int u = 0; u < g->n; u++)
        for (int e = g->start[u]; e < g->start[u + 1]; e++) {
            int v = g->adj[e];
            if (comp[u] != comp[v])
                assert_true(comp[u] > comp[v]);
        }
}

/* Checks that each lane's weights of row `move` (an entry from a special or
 * an exit) fit float times 2^c, the largest in [1/2, 1); returns how many
 * lanes need a c. */
static int check_lane_exponents(const IrModel *m, const int *move, int K, int G)
{
    int S = (K + G - 1) / G, scaled = 0;
    for (int lane = 0; lane < G; lane++) {
        int c = profile_lane_exponent(m, move, K, G, lane, 0);
        double most = 0;
        for (int k = lane * S; k < K && k < (lane + 1) * S; k++) {
            if (move[k] < 0)
                continue;
            double w = exp(m->moves[move[k]].lw_sum);
            assert_true(ldexp(w, c) >= 0x1p-126);
            most = fmax(most, ldexp(w, c));
        }
        if (c != 0) {
            assert_true(most >= 0.5 && most < 1);
            scaled++;
        }
    }
    return scaled;
}

/* Forward on a profile whose entries and exits shrink below float's range
 * (as HMMER's glocal ones do) still runs in float on the GPU: each lane holds
 * its weights of those rows times a power of two of its own. */
static void test_plan_holds_shrinking_weights_per_lane(void **state)
{
    (void)state;
    const char *calls = "main { print forward(new p()).score; print viterbi(new p()).score; }\n";
    Arena scratch;
    arena_init(&scratch);
    Compiled c;
    Program *p = compile_through(&c, shrinking_profile_source(&scratch, 40, 0.04, 0, "", calls), "plan",
                                 FOLD_ON);
    const IrCall *forward = &p->calls[0];
    const GpuPlan *forward_gpu = &c.gpu[0];
    assert_int_equal(forward_gpu->shape, GPU_PROFILE);
    /* the weights go down to 0.001 * 0.04^39, 2^-191 (N -> B and B fold into
     * N's entries) */
    assert_true(ir_float_underflow(forward->model) < -130);
    assert_true(forward_gpu->float_underflow == 0);
    const ProfileView *v = forward_gpu->profile;
    int G = forward_gpu->profile_lanes, scaled_rows = 0;
    for (int e = 0; e < v->n_entries; e++)
        if (profile_entry_is_scaled(v, e))
            scaled_rows += check_lane_exponents(forward->model, v->entries[e].move, v->K, G) > 0;
    for (int x = 0; x < v->n_exits; x++)
        scaled_rows += check_lane_exponents(forward->model, v->exits[x].move, v->K, G) > 0;
    assert_int_equal(scaled_rows, 2); /* N's entries into the matches, the exits to C */
    assert_true(c.gpu[1].float_underflow == 0); /* viterbi adds logs */
    assert_int_equal(forward_gpu->profile_lane_scales, 0);
    compiled_free(&c);
    /* entries below 2^-200 (0.001 * 1e-4^39) would put values below float's
     * range in every column of one scale; lanes of 5 nodes are too short to
     * pay for an exponent each (profile.h): double */
    p = compile_through(&c, shrinking_profile_source(&scratch, 40, 1e-4, 1e-300, "", calls), "plan", FOLD_ON);
    assert_int_equal(c.gpu[0].shape, GPU_PROFILE);
    assert_true(c.gpu[0].float_underflow < -350);
    assert_int_equal(c.gpu[0].profile_lane_scales, 0);
    compiled_free(&c);
    /* the same at 600 nodes (0.001 * 0.5^599, 2^-609; lanes of 19 nodes):
     * float, each lane and special state with an exponent of its own */
    p = compile_through(&c, shrinking_profile_source(&scratch, 600, 0.5, 0, "", calls), "plan", FOLD_ON);
    assert_int_equal(c.gpu[0].shape, GPU_PROFILE);
    assert_true((c.gpu[0].profile->K + c.gpu[0].profile_lanes - 1) /
                c.gpu[0].profile_lanes > PROFILE_LANE_SCALES_MIN_NODES);
    assert_true(c.gpu[0].float_underflow == 0);
    assert_int_equal(c.gpu[0].profile_lane_scales, 1);
    assert_int_equal(c.gpu[1].profile_lane_scales, 0); /* viterbi */
    compiled_free(&c);
    /* a lane whose own weights span more than float's range (1e-3 to 1e-56,
     * 2^-176, in lane 0; none below 2^-200): double */
    p = compile_through(&c, shrinking_profile_source(&scratch, 40, 1e-20, 1e-56, "", calls), "plan",
                        FOLD_ON);
    assert_int_equal(c.gpu[0].shape, GPU_PROFILE);
    assert_true(c.gpu[0].float_underflow < 0);
    compiled_free(&c);
    /* no tiny weights: no lane needs an exponent */
    p = compile_through(&c, shrinking_profile_source(&scratch, 40, 1, 0, "", calls), "plan", FOLD_ON);
    v = c.gpu[0].profile;
    for (int x = 0; x < v->n_exits; x++)
        assert_int_equal(check_lane_exponents(p->calls[0].model, v->exits[x].move, v->K,
                                              c.gpu[0].profile_lanes), 0);
    compiled_free(&c);
    arena_free(&scratch);
}

/* pipeline_plan_target with or without the GPU side: -v's lines and the plans. */
static void plan_target(const char *src, int gpu, Plans *plans, char **said, Arena *a)
{
    Diag d;
    size_t size = 0;
    FILE *out = open_memstream(said, &size);
    assert_non_null(out);
    diag_init(&d, "t.hmm", src, strlen(src), out);
    PipelineOptions o = {.verbose = out, .gpu = gpu};
    Program *p;
    assert_int_equal(pipeline_run(a, &d, "t.hmm", src, strlen(src), &o, &p), PIPELINE_PLANNED);
    assert_int_equal(pipeline_plan_target(p, &o, plans), PIPELINE_PLANNED);
    fclose(out);
}

static void test_plans_only_for_the_chosen_target(void **state)
{
    (void)state;
    Arena a;
    arena_init(&a);
    const char *src = with_main(&a, CHAIN_MODEL, "main { print viterbi(new m()).traceback; }\n");
    Plans plans;
    char *said = NULL;
    plan_target(src, 0, &plans, &said, &a);
    assert_null(plans.gpu);
    assert_non_null(plans.c);
    assert_non_null(strstr(said, "hmmc: plan viterbi(m): 4 live states"));
    assert_null(strstr(said, "GPU")); /* --target=c says nothing of GPUs */
    free(said);
    said = NULL;
    plan_target(src, 1, &plans, &said, &a);
    assert_non_null(plans.gpu);
    assert_int_equal(plans.gpu[0].shape, GPU_THREAD_PER_SEQUENCE);
    assert_non_null(strstr(said, "hmmc: plan viterbi(m): GPU: thread per sequence"));
    free(said);
    arena_free(&a);
}

static void test_layout_of_the_program(void **state)
{
    (void)state;
    Arena a;
    arena_init(&a);
    /* two models over one alphabet, a third over another; the second model
     * first used by the second call; prints interleaved between calls */
    const char *src =
        "hmm x { alphabet [a, b]; startstate s; state q emits e; endstate t;\n"
        "  emission e = [0.5, 0.5]; s -> q 1; q -> q 0.5; q -> t 0.5; }\n"
        "hmm y { alphabet [a, b]; startstate s; state q emits e; endstate t;\n"
        "  emission e = [0.5, 0.5]; s -> q 1; q -> q 0.5; q -> t 0.5; }\n"
        "hmm z { alphabet [c, d, e]; startstate s; state q emits e; endstate t;\n"
        "  emission e = [0.2, 0.3, 0.5]; s -> q 1; q -> q 0.5; q -> t 0.5; }\n"
        "main { v = viterbi(new z()); print v.score; print forward(new y()).score;\n"
        "  print v.traceback; print forward(new x()).score; }\n";
    Plans plans;
    char *said = NULL;
    plan_target(src, 1, &plans, &said, &a);
    free(said);
    const Layout *l = plans.layout;
    assert_int_equal(l->n_alphabets, 2);
    assert_string_equal(l->alphabets[0], "cde");
    assert_string_equal(l->alphabets[1], "ab");
    assert_int_equal(l->n_used, 3);
    assert_int_equal(l->used_models[0], 2); /* z, y, x: in order of first use */
    assert_int_equal(l->used_models[1], 1);
    assert_int_equal(l->used_models[2], 0);
    assert_int_equal(l->calls[0].alphabet, 0);
    assert_int_equal(l->calls[1].alphabet, 1);
    assert_int_equal(l->calls[2].alphabet, 1);
    assert_int_equal(l->calls[0].n_columns, 2); /* viterbi: columns 0 and 2 */
    assert_int_equal(l->calls[0].columns[0], 0);
    assert_int_equal(l->calls[0].columns[1], 2);
    assert_int_equal(l->calls[1].n_columns, 1);
    assert_int_equal(l->calls[1].columns[0], 1);
    assert_int_equal(l->columns[0].possible_from, 0); /* viterbi's -inf needs no length */
    assert_int_equal(l->columns[1].possible_from, 1); /* every length from 1 has a path */
    assert_null(l->cpu_only);
    assert_string_equal(layout_name(l, 2, "forward"), "c2_forward");
    arena_free(&a);
}

static void test_scc_of_a_small_graph(void **state)
{
    Arena a;
    arena_init(&a);
    /* {0 1 2} a cycle, {3 4} a cycle, 5 alone with a self-loop, 6 alone */
    const int edges[][2] = {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 3},
                            {5, 0}, {5, 5}, {6, 4}, {1, 4}};
    Graph g = make_graph(&a, 7, edges, (int)(sizeof edges / sizeof edges[0]));
    int comp[7];
    assert_int_equal(graph_scc(&a, &g, comp), 4); /* {0 1 2} {3 4} {5} {6} */
    assert_int_equal(comp[0], comp[1]);
    assert_int_equal(comp[1], comp[2]);
    assert_int_equal(comp[3], comp[4]);
    assert_int_not_equal(comp[0], comp[3]);
    assert_int_not_equal(comp[5], comp[0]);
    assert_int_not_equal(comp[6], comp[3]);
    assert_int_not_equal(comp[5], comp[6]);
    for (int v = 0; v < 7; v++)
        assert_true(comp[v] >= 0 && comp[v] < 4);
    assert_reverse_topological(&g, comp);
    arena_free(&a);
}

static void test_scc_of_a_graph_without_edges_and_a_dag(void **state)
{
    Arena a;
    arena_init(&a);
    int comp[5];
    Graph empty = make_graph(&a, 5, NULL, 0);
    assert_int_equal(graph_scc(&a, &empty, comp), 5);
    /* a diamond 0 -> {1, 2} -> 3, and 4 -> 0: every vertex its own component */
    const int edges[][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {4, 0}};
    Graph dag = make_graph(&a, 5, edges, 5);
    assert_int_equal(graph_scc(&a, &dag, comp), 5);
    assert_reverse_topological(&dag, comp);
    arena_free(&a);
}

static void test_scc_of_long_chains_does_not_recurse(void **state)
{
    enum { N = 200000 };
    Arena a;
    arena_init(&a);
    int (*edges)[2] = arena_alloc(&a, sizeof(int[2]) * N);
    for (int v = 0; v + 1 < N; v++) {
        edges[v][0] = v;
        edges[v][1] = v + 1;
    }
    int *comp = ARENA_ARRAY(&a, int, N);
    Graph chain = make_graph(&a, N, (const int(*)[2])edges, N - 1);
    assert_int_equal(graph_scc(&a, &chain, comp), N);
    assert_reverse_topological(&chain, comp);
    edges[N - 1][0] = N - 1; /* close the chain into one cycle */
    edges[N - 1][1] = 0;
    Graph cycle = make_graph(&a, N, (const int(*)[2])edges, N);
    assert_int_equal(graph_scc(&a, &cycle, comp), 1);
    arena_free(&a);
}

static void test_reach_and_reversed(void **state)
{
    Arena a;
    arena_init(&a);
    const int edges[][2] = {{0, 1}, {1, 2}, {3, 1}, {2, 2}, {4, 5}};
    Graph g = make_graph(&a, 6, edges, 5);
    int seen[6] = {0};
    graph_reach(&a, &g, 0, seen);
    const int from_0[6] = {1, 1, 1, 0, 0, 0};
    assert_memory_equal(seen, from_0, sizeof seen);
    Graph r = graph_reversed(&a, &g);
    assert_int_equal(r.start[r.n], 5);
    memset(seen, 0, sizeof seen);
    graph_reach(&a, &r, 2, seen);
    const int to_2[6] = {1, 1, 1, 1, 0, 0}; /* 0, 1, 3 reach 2, and 2 itself */
    assert_memory_equal(seen, to_2, sizeof seen);
    memset(seen, 0, sizeof seen);
    graph_reach(&a, &g, 5, seen);
    const int from_5[6] = {0, 0, 0, 0, 0, 1};
    assert_memory_equal(seen, from_5, sizeof seen);
    arena_free(&a);
}

static void test_graph_of_moves_skips_emitting_moves_and_folded_states(void **state)
{
    Compiled c;
    Arena scratch;
    arena_init(&scratch);
    const char *src = with_main(&scratch, CHAIN_MODEL, "main { print forward(new m()).score; }\n");
    Program *p = compile_through(&c, src, "sema", FOLD_ON);
    IrModel *m = first_call_model(p);
    /* moves: s->a (emits), a->b, b->c, c->d (emits), d->t */
    Graph all = graph_of_moves(&c.arena, m, 0);
    assert_int_equal(all.start[all.n], 5);
    Graph silent = graph_of_moves(&c.arena, m, 1);
    assert_int_equal(silent.start[silent.n], 3);
    int b = state_index(m, "b");
    m->states[b].folded = 1; /* as if folded: a->b and b->c disappear */
    Graph live = graph_of_moves(&c.arena, m, 0);
    assert_int_equal(live.start[live.n], 3);
    for (int u = 0; u < live.n; u++)
        for (int e = live.start[u]; e < live.start[u + 1]; e++)
            assert_true(u != b && live.adj[e] != b);
    compiled_free(&c);
    arena_free(&scratch);
}

/* ---- the numbers are unchanged by the passes ---- */

/* What a brute-force enumeration of the paths of a model finds for one sequence. */
typedef struct PathSearch {
    const IrModel *m;
    const int *out_start, *out_moves; /* moves out of each state, compressed rows */
    const int *seq;
    int length;
    double sum, sum_error; /* sum over paths of the product of lw_sum weights and
                              emissions, with Neumaier's compensation for the
                              rounding of millions of additions */
    double best;           /* the largest product of lw_max weights and emissions (a log) */
    int *stack, depth;
    int *best_moves, n_best_moves;
    long paths;
} PathSearch;

/* Paths whose weight drops below this are cut off. The silent cycles of the
 * test models weigh at most 0.2 a turn, so a path cut off has taken some 30
 * turns, and all such paths together weigh below 1e-16 of every total the
 * tests compare (those are above 1e-4), far under the 1e-12 asked for. */
static const double CUTOFF = 1e-24;
enum { MAX_DEPTH = 4096 };

static void add_path(PathSearch *ps, double w)
{
    double t = ps->sum + w;
    ps->sum_error += fabs(ps->sum) >= fabs(w) ? (ps->sum - t) + w : (w - t) + ps->sum;
    ps->sum = t;
    ps->paths++;
}

static void search_from(PathSearch *ps, int state, int pos, double weight, double log_best)
{
    const IrModel *m = ps->m;
    if (state == m->end) {
        if (pos == ps->length) {
            add_path(ps, weight);
            if (log_best > ps->best) {
                ps->best = log_best;
                memcpy(ps->best_moves, ps->stack, sizeof(int) * (size_t)ps->depth);
                ps->n_best_moves = ps->depth;
            }
        }
        return;
    }
    assert_true(ps->depth < MAX_DEPTH);
    for (int k = ps->out_start[state]; k < ps->out_start[state + 1]; k++) {
        const IrMove *mv = &m->moves[ps->out_moves[k]];
        double lw_sum = mv->lw_sum, lw_max = mv->lw_max;
        int next_pos = pos;
        if (mv->emission >= 0) {
            if (pos == ps->length)
                continue;
            double lp = m->emissions[mv->emission].logp[ps->seq[pos]];
            lw_sum += lp;
            lw_max += lp;
            next_pos++;
        }
        double w = weight * exp(lw_sum);
        if (w < CUTOFF)
            continue;
        ps->stack[ps->depth++] = ps->out_moves[k];
        search_from(ps, mv->to, next_pos, w, log_best + lw_max);
        ps->depth--;
    }
}

/* Enumerates every path of m emitting seq; the best path's moves go to
 * best_moves (freed by search_done). */
static void search_paths(PathSearch *ps, const IrModel *m, const int *seq, int length)
{
    int *start = calloc((size_t)m->n_states + 1, sizeof(int));
    int *moves = malloc(sizeof(int) * (size_t)(m->n_moves + 1));
    int *fill = calloc((size_t)m->n_states, sizeof(int));
    for (int i = 0; i < m->n_moves; i++)
        start[m->moves[i].from + 1]++;
    for (int s = 0; s < m->n_states; s++)
        start[s + 1] += start[s];
    for (int i = 0; i < m->n_moves; i++)
        moves[start[m->moves[i].from] + fill[m->moves[i].from]++] = i;
    *ps = (PathSearch){.m = m, .out_start = start, .out_moves = moves, .seq = seq,
                       .length = length, .best = -INFINITY};
    ps->stack = malloc(sizeof(int) * MAX_DEPTH);
    ps->best_moves = malloc(sizeof(int) * MAX_DEPTH);
    search_from(ps, m->start, 0, 1, 0);
    ps->sum += ps->sum_error;
    free(start);
    free(moves);
    free(fill);
    free(ps->stack);
}

static void search_done(PathSearch *ps)
{
    free(ps->best_moves);
}

/* The states of the best path in the source's own states: each move's via
 * and destination, without the aux states the passes made. Returns the count. */
static int best_path_states(const PathSearch *ps, int *out)
{
    const IrModel *m = ps->m;
    int n = 0;
    out[n++] = m->start;
    for (int k = 0; k < ps->n_best_moves; k++) {
        const IrMove *mv = &m->moves[ps->best_moves[k]];
        int via[mv->n_via + 1];
        ir_move_via(m, mv, via);
        for (int v = 0; v < mv->n_via; v++)
            if (m->states[via[v]].aux_of < 0)
                out[n++] = via[v];
        if (m->states[mv->to].aux_of < 0)
            out[n++] = mv->to;
    }
    return n;
}

/* The sequence "ab.." as symbol indexes of m's alphabet. */
static int encode(const IrModel *m, const char *text, int *seq)
{
    int n = 0;
    for (; *text; text++) {
        const char *at = strchr(m->symbols, *text);
        assert_non_null(at);
        seq[n++] = (int)(at - m->symbols);
    }
    return n;
}

/* The passes a model goes through before its paths are compared. */
typedef struct Stage {
    const char *last;
    int fold;
} Stage;

/* For every sequence and every stage: the model after the passes up to
 * stage.last has the same path sum and the same best path (score and
 * states) as the model as written. Returns how many sequences have a path. */
static int assert_passes_keep_numbers(const char *src, const Stage *stages, int n_stages,
                                      const char *const *sequences, int n_sequences)
{
    Compiled c[8];
    assert_true(n_stages <= 8);
    for (int k = 0; k < n_stages; k++)
        compile_through(&c[k], src, stages[k].last, stages[k].fold);
    const IrModel *written = &c[0].program->models[0];
    int with_paths = 0;
    for (int i = 0; i < n_sequences; i++) {
        int seq[64];
        int length = encode(written, sequences[i], seq);
        PathSearch before;
        search_paths(&before, written, seq, length);
        int states_before[MAX_DEPTH];
        int n_before = best_path_states(&before, states_before);
        with_paths += before.sum > 0;
        for (int k = 0; k < n_stages; k++) {
            PathSearch after;
            search_paths(&after, first_call_model(c[k].program), seq, length);
            if (!(fabs(after.sum - before.sum) <= 1e-12 * before.sum))
                fail_msg("'%s' after %s: path sum %.17g, as written %.17g", sequences[i],
                         stages[k].last, after.sum, before.sum);
            if (before.sum == 0) {
                assert_true(after.best == -INFINITY);
                search_done(&after);
                continue;
            }
            if (!(fabs(after.best - before.best) <= 1e-12 * fabs(before.best)))
                fail_msg("'%s' after %s: best path %.17g, as written %.17g", sequences[i],
                         stages[k].last, after.best, before.best);
            int states_after[MAX_DEPTH];
            int n_after = best_path_states(&after, states_after);
            assert_int_equal(n_after, n_before);
            assert_memory_equal(states_after, states_before, sizeof(int) * (size_t)n_before);
            search_done(&after);
        }
        search_done(&before);
    }
    for (int k = 0; k < n_stages; k++)
        compiled_free(&c[k]);
    return with_paths;
}

/* A silent chain c1 -> c2 -> c3 (c2 also entered by an emitting transition),
 * a silent 2-cycle x <-> y (product 0.1) and a silent self-loop z (0.2). */
static const char *MIXED =
    "hmm mix {\n"
    "  alphabet [a, b];\n"
    "  startstate S;\n"
    "  state A emits eA; state B emits eB;\n"
    "  state c1; state c2; state c3;\n"
    "  state x; state y; state z;\n"
    "  endstate E;\n"
    "  emission eA = [0.7, 0.3];\n"
    "  emission eB = [0.2, 0.8];\n"
    "  S -> A 0.5;  S -> c1 0.5;\n"
    "  c1 -> c2 0.9;  c2 -> c3 0.8;  c3 -> B 0.7;  c3 -> x 0.3;\n"
    "  A -> A 0.3;  A -> x 0.4;  A -> c2 0.2 emits eB;  A -> E 0.1;\n"
    "  x -> y 0.2;  y -> x 0.5;  x -> B 0.45;  y -> E 0.3;  y -> z 0.2;\n"
    "  B -> B 0.2;  B -> z 0.5;  B -> E 0.3;\n"
    "  z -> z 0.2;  z -> A 0.35;  z -> E 0.25;\n"
    "}\n"
    "main { print viterbi(new mix()).traceback; }\n";

static const char *const SEQUENCES[] = {"", "a", "b", "ab", "ba", "bb", "abb", "bab", "aabb"};
enum { N_SEQUENCES = sizeof SEQUENCES / sizeof SEQUENCES[0] };

/* Each pass in turn, and the whole pipeline without folding (--no-fold). */
static const Stage STAGES[] = {
    {"cycles", FOLD_ON}, {"fold", FOLD_ON}, {"plan", FOLD_ON}, {"plan", FOLD_OFF},
};
enum { N_STAGES = sizeof STAGES / sizeof STAGES[0] };

static void test_passes_keep_the_numbers_of_a_mixed_model(void **state)
{
    int with_paths = assert_passes_keep_numbers(MIXED, STAGES, N_STAGES, SEQUENCES, N_SEQUENCES);
    assert_int_equal(with_paths, N_SEQUENCES);
}

static void test_passes_fold_the_mixed_model(void **state)
{
    /* the invariant above would hold trivially if nothing were folded */
    Compiled c;
    IrModel *m = first_call_model(compile_through(&c, MIXED, "fold", FOLD_ON));
    assert_true(m->states[state_index(m, "c1")].folded);
    assert_true(m->states[state_index(m, "c2")].folded);
    /* c3 has an emitting move in (A -> c2 -> c3 emits eB) and out (c3 -> B): kept */
    assert_false(m->states[state_index(m, "c3")].folded);
    assert_int_equal(count_aux_states(m), 3);
    compiled_free(&c);
}

static void test_passes_keep_the_numbers_of_other_models(void **state)
{
    Arena scratch;
    arena_init(&scratch);
    const char *const sequences[] = {"", "a", "ab", "bb", "aba", "bab", "abba"};
    const struct {
        const char *src;
        int with_paths; /* sequences the model can emit */
    } models[] = {
        /* profile: 0 to 3 symbols */
        {with_main(&scratch, PROFILE_MODEL, "main { print viterbi(new p()).score; }\n"), 6},
        /* chain: exactly 2 */
        {with_main(&scratch, CHAIN_MODEL, "main { print viterbi(new m()).score; }\n"), 2},
        /* self-loop: at least 1 */
        {SELF_LOOP, 6},
        /* two-cycle: any number */
        {TWO_CYCLE, 7},
    };
    for (int k = 0; k < 4; k++)
        assert_int_equal(assert_passes_keep_numbers(models[k].src, STAGES, N_STAGES, sequences, 7),
                         models[k].with_paths);
    arena_free(&scratch);
}

/* ---- every_sequence.c ---- */

/* The length from which ir_every_sequence_from says every sequence has a
 * path, for a model source with one forward call, through every pass. */
static int every_sequence_from(const char *model)
{
    Compiled c;
    Arena scratch;
    arena_init(&scratch);
    Program *p = compile_through(&c, with_main(&scratch, model, "main { print forward(new m()).score; }\n"),
                                 "plan", FOLD_ON);
    int from = ir_every_sequence_from(&c.arena, first_call_model(p));
    compiled_free(&c);
    arena_free(&scratch);
    return from;
}

static void test_every_sequence_from_the_loop_and_its_ways_in_and_out(void **state)
{
    (void)state;
    /* the casino: start -> fair emits, fair -> loaded -> end: 2 symbols at least */
    assert_int_equal(every_sequence_from(
        "hmm m { alphabet [1, 2]; startstate s; state f emits e; state l emits g; endstate t;\n"
        "  emission e = [0.5, 0.5]; emission g = [0.9, 0.1];\n"
        "  s -> f 1; f -> f 0.9; f -> l 0.1; l -> l 0.9; l -> f 0.05; l -> t 0.05; }\n"), 2);
    /* out through three more emitting states: 1 + 3 */
    assert_int_equal(every_sequence_from(
        "hmm m { alphabet [a, b]; startstate s; state x emits e; state y1 emits e;\n"
        "  state y2 emits e; state y3 emits e; endstate t; emission e = [0.5, 0.5];\n"
        "  s -> x 1; x -> x 0.5; x -> y1 1e-200; y1 -> y2 1e-200; y2 -> y3 1e-200; y3 -> t 1; }\n"), 4);
    /* a silent state on the way in and out of an emitting loop (a profile's
     * N): only the symbol of the move into x, 1 */
    assert_int_equal(every_sequence_from(
        "hmm m { alphabet [a, b]; startstate s; state n; state x emits e; endstate t;\n"
        "  emission e = [0.5, 0.5]; s -> n 1; n -> x 0.5; n -> t 0.5; x -> x 0.5; x -> t 0.5; }\n"), 1);
}

static void test_every_sequence_from_is_unknown_where_a_symbol_is_missing(void **state)
{
    (void)state;
    /* the loop cannot emit b: "abba" has no path, so no length is claimed */
    assert_int_equal(every_sequence_from(
        "hmm m { alphabet [a, b]; startstate s; state x emits e; endstate t;\n"
        "  emission e = [1, 0]; s -> x 1; x -> x 0.5; x -> t 0.5; }\n"), -1);
    /* no loop: only sequences of one length have paths */
    assert_int_equal(every_sequence_from(
        "hmm m { alphabet [a, b]; startstate s; state x emits e; state y emits e; endstate t;\n"
        "  emission e = [0.5, 0.5]; s -> x 1; x -> y 1; y -> t 1; }\n"), -1);
    /* the loop's way out needs a symbol of a table that lacks one */
    assert_int_equal(every_sequence_from(
        "hmm m { alphabet [a, b]; startstate s; state x emits e; state y emits g; endstate t;\n"
        "  emission e = [0.5, 0.5]; emission g = [1, 0]; s -> x 1; x -> x 0.5; x -> y 0.5;\n"
        "  y -> t 1; }\n"), -1);
}

/* ---- the IR verifier ---------------------------------------------------- */

static const char *VERIFY_SRC =
    "hmm h { alphabet [a, b]; startstate s; state x emits e; state q; state r; endstate t;\n"
    "  emission e = [0.5, 0.5]; s -> x 1; x -> q 0.5; q -> r 0.5; r -> x 0.3;\n"
    "  r -> q 0.2; x -> x 0.2; r -> t 0.4; }\n"
    "main { m = new h(); print forward(m).score; print viterbi(m).traceback; }\n";

/* After every stage a good program passes. */
static void test_verify_accepts_every_stage(void **state)
{
    (void)state;
    const char *stages[] = {"sema", "attributes", "cycles", "fold", "order", "plan"};
    for (int i = 0; i < 6; i++) {
        Compiled c;
        Program *p = compile_through(&c, VERIFY_SRC, stages[i], FOLD_ON);
        char why[512] = "";
        if (!ir_verify(&c.arena, p, stages[i], NULL, why, sizeof why))
            fail_msg("after %s: %s", stages[i], why);
        compiled_free(&c);
    }
}

/* verify_broken: after `stage`, break the program with `breaker`, and
 * ir_verify must fail with a message holding `expected`. */
static void verify_broken(const char *stage, void (*breaker)(Program *), const char *expected)
{
    Compiled c;
    Program *p = compile_through(&c, VERIFY_SRC, "sema", FOLD_ON);
    uint64_t *sums = ARENA_ARRAY(&c.arena, uint64_t, p->n_models);
    for (int i = 0; i < p->n_models; i++)
        sums[i] = ir_model_checksum(&p->models[i]);
    for (int i = 0; i < N_PASSES && strcmp(stage, "sema") != 0; i++) {
        assert_true(PASSES[i].run(p, &c.options, &c.diag));
        if (strcmp(stage, PASSES[i].name) == 0)
            break;
    }
    char why[512] = "";
    assert_true(ir_verify(&c.arena, p, stage, sums, why, sizeof why));
    breaker(p);
    if (ir_verify(&c.arena, p, stage, sums, why, sizeof why))
        fail_msg("a broken program passed after %s (expected: %s)", stage, expected);
    if (!strstr(why, expected))
        fail_msg("after %s: '%s' does not say '%s'", stage, why, expected);
    compiled_free(&c);
}

static void break_best_above_sum(Program *p) { p->calls[0].model->moves[0].lw_max = 5; }
static void break_move_out_of_range(Program *p) { p->calls[0].model->moves[0].to = 99; }
static void break_move_into_start(Program *p)
{
    IrModel *m = p->calls[0].model;
    m->moves[0].to = m->start;
}
static void break_source_model(Program *p) { p->models[0].moves[1].lw_sum += 1; }
static void break_sharing(Program *p)
{
    IrModel *m = p->calls[1].model;
    m->moves = p->models[0].moves;
    m->n_moves = p->models[0].n_moves;
    m->moves_shared = 0;
}
static void break_silent_order(Program *p)
{
    IrModel *m = p->calls[0].model; /* the last state taking silent moves left out */
    assert_true(m->n_silent_order > 0);
    m->n_silent_order--;
}
static void break_emitting_move(Program *p)
{
    IrModel *m = p->calls[0].model;
    for (int i = 0; i < m->n_moves; i++)
        if (m->states[m->moves[i].to].kind == STATE_EMITTING) {
            m->moves[i].emission = -1;
            return;
        }
}

static void test_verify_finds_broken_invariants(void **state)
{
    (void)state;
    verify_broken("sema", break_best_above_sum, "weighs more than the sum");
    verify_broken("plan", break_move_out_of_range, "outside the");
    verify_broken("fold", break_move_into_start, "enters the start state");
    verify_broken("fold", break_source_model, "changed the moves of the model as written");
    verify_broken("attributes", break_sharing, "owns the moves of model");
    verify_broken("order", break_silent_order, "silent order");
    verify_broken("cycles", break_emitting_move, "into emitting state");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attributes_storage_per_call),
        cmocka_unit_test(test_verify_accepts_every_stage),
        cmocka_unit_test(test_verify_finds_broken_invariants),
        cmocka_unit_test(test_close_self_loop),
        cmocka_unit_test(test_close_two_cycle),
        cmocka_unit_test(test_close_three_cycle_with_chord),
        cmocka_unit_test(test_close_two_separate_cycles),
        cmocka_unit_test(test_close_cycle_of_product_near_one),
        cmocka_unit_test(test_close_long_cycle_sparsely),
        cmocka_unit_test(test_no_silent_cycle_then_order_succeeds),
        cmocka_unit_test(test_fold_silent_chain),
        cmocka_unit_test(test_fold_merges_parallel_paths),
        cmocka_unit_test(test_fold_keeps_profile_delete_states),
        cmocka_unit_test(test_fold_never_joins_two_emitting_moves),
        cmocka_unit_test(test_fold_never_touches_start_end_or_emitting_states),
        cmocka_unit_test(test_fold_off_for_whole_tables_and_no_fold),
        cmocka_unit_test(test_fold_after_closing_a_self_loop),
        cmocka_unit_test(test_order_of_an_unfolded_profile),
        cmocka_unit_test(test_order_after_folding_and_closing),
        cmocka_unit_test(test_plan_back_pointer_width),
        cmocka_unit_test(test_plan_code_shape_by_model_size),
        cmocka_unit_test(test_plan_counts_live_states),
        cmocka_unit_test(test_plan_dense_shape),
        cmocka_unit_test(test_plan_profile_shape),
        cmocka_unit_test(test_plan_holds_shrinking_weights_per_lane),
        cmocka_unit_test(test_plans_only_for_the_chosen_target),
        cmocka_unit_test(test_layout_of_the_program),
        cmocka_unit_test(test_scc_of_a_small_graph),
        cmocka_unit_test(test_scc_of_a_graph_without_edges_and_a_dag),
        cmocka_unit_test(test_scc_of_long_chains_does_not_recurse),
        cmocka_unit_test(test_reach_and_reversed),
        cmocka_unit_test(test_graph_of_moves_skips_emitting_moves_and_folded_states),
        cmocka_unit_test(test_passes_keep_the_numbers_of_a_mixed_model),
        cmocka_unit_test(test_passes_fold_the_mixed_model),
        cmocka_unit_test(test_passes_keep_the_numbers_of_other_models),
        cmocka_unit_test(test_every_sequence_from_the_loop_and_its_ways_in_and_out),
        cmocka_unit_test(test_every_sequence_from_is_unknown_where_a_symbol_is_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
