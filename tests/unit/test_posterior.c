/* test_posterior.c: the forward-backward engine behind posterior calls and
 * --train (runtime/fb.c, fb_viterbi.c, posterior.c) against enumeration of
 * every path, on models with silent states, an emitting transition into a
 * silent state, a shared emission table and a silent cycle. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "hmmrt.h"
#include "fb.h"
#include "internal.h"

/* A: start -> a (emits e0); a -> a; a -> s (silent) emitting e1 on the way;
 * s -> b (emits e0, shared); s -> t -> s (a silent cycle, 0.3 x 0.2); b -> end;
 * s -> end; a -> end. */
static const char *const names[] = {"start", "a", "s", "t", "b", "end"};
static const hmmrt_model_move moves[] = {
    {0, 1, 0, 1.0}, {1, 1, 0, 0.5}, {1, 2, 1, 0.3}, {2, 4, 0, 0.4}, {2, 3, -1, 0.3},
    {3, 2, -1, 0.2}, {4, 5, -1, 1.0}, {2, 5, -1, 0.3}, {1, 5, -1, 0.2}, {3, 5, -1, 0.8},
};
enum { N_MOVES = sizeof moves / sizeof moves[0], N = 6, K = 3 };
static const double emissions[] = {0.5, 0.3, 0.2, 0.1, 0.6, 0.3};
static const hmmrt_model model = {
    .name = "m", .n_states = N, .state_names = names, .start = 0, .end = 5,
    .n_moves = N_MOVES, .moves = moves, .n_emissions = 2, .emissions = emissions,
};

/* ---- enumeration ----------------------------------------------------------- */

enum { MAX_MOVES = 40, MAX_L = 8 };
typedef struct brute {
    const uint8_t *x;
    int L;
    int path[MAX_MOVES];
    double p, best;
    double counts[N_MOVES], ecounts[2 * K], post[MAX_L][N];
    double best_counts[N_MOVES], best_ecounts[2 * K];
} brute;

static void walk(brute *b, int state, int pos, int depth, double prob)
{
    if (prob < 1e-18)
        return; /* cycles: the rest weighs less than rounding */
    if (state == model.end) {
        if (pos != b->L)
            return;
        b->p += prob;
        int i = 0;
        double vc[N_MOVES] = {0}, ve[2 * K] = {0};
        for (int d = 0; d < depth; d++) {
            const hmmrt_model_move *mv = &moves[b->path[d]];
            b->counts[b->path[d]] += prob;
            vc[b->path[d]] += 1;
            if (mv->emission >= 0) {
                b->ecounts[mv->emission * K + b->x[i]] += prob;
                ve[mv->emission * K + b->x[i]] += 1;
                b->post[i][mv->to] += prob;
                i++;
            }
        }
        if (prob > b->best) {
            b->best = prob;
            memcpy(b->best_counts, vc, sizeof vc);
            memcpy(b->best_ecounts, ve, sizeof ve);
        }
        return;
    }
    if (depth == MAX_MOVES)
        return;
    for (int m = 0; m < N_MOVES; m++) {
        const hmmrt_model_move *mv = &moves[m];
        if (mv->from != state)
            continue;
        double p = prob * mv->weight;
        int next = pos;
        if (mv->emission >= 0) {
            if (pos == b->L)
                continue;
            p *= emissions[mv->emission * K + b->x[pos]];
            next++;
        }
        b->path[depth] = m;
        walk(b, mv->to, next, depth + 1, p);
    }
}

static void check_sequence(const uint8_t *x, int L)
{
    brute *b = calloc(1, sizeof *b);
    b->x = x;
    b->L = L;
    walk(b, model.start, 0, 0, 1.0);
    char err[256];
    hmmrt_fb *fb = hmmrt_fb_new(&model, K, err, sizeof err);
    assert_non_null(fb);
    double *scratch = malloc(hmmrt_fb_scratch(fb, L) * sizeof *scratch);
    double mc[N_MOVES] = {0}, ec[2 * K] = {0}, *post = NULL;
    double lnp = hmmrt_fb_run(fb, x, L, scratch, mc, ec, &post);
    assert_true(fabs(lnp - log(b->p)) < 1e-12 * fabs(log(b->p)) + 1e-13);
    for (int m = 0; m < N_MOVES; m++)
        assert_true(fabs(mc[m] - b->counts[m] / b->p) < 1e-12);
    for (int j = 0; j < 2 * K; j++)
        assert_true(fabs(ec[j] - b->ecounts[j] / b->p) < 1e-12);
    for (int i = 0; i < L; i++) {
        double sum = 0;
        for (int q = 0; q < N; q++) {
            assert_true(fabs(post[i * N + q] - b->post[i][q] / b->p) < 1e-12);
            sum += post[i * N + q];
        }
        assert_true(fabs(sum - 1) < 1e-12);
    }
    /* viterbi training's counts: the moves of the best path */
    void *vs = malloc(hmmrt_fb_viterbi_scratch(fb, L));
    double vc[N_MOVES] = {0}, ve[2 * K] = {0};
    double best = hmmrt_fb_viterbi_counts(fb, x, L, vs, vc, ve);
    assert_true(fabs(best - log(b->best)) < 1e-12 * fabs(log(b->best)));
    assert_memory_equal(vc, b->best_counts, sizeof vc);
    assert_memory_equal(ve, b->best_ecounts, sizeof ve);
    free(vs);
    free(scratch);
    hmmrt_fb_free(fb);
    free(b);
}

static void against_enumeration(void **state)
{
    const uint8_t xs[][MAX_L] = {{0}, {1, 2}, {0, 1, 2}, {2, 2, 1, 0}, {0, 0, 1, 1, 2, 2}};
    const int lengths[] = {1, 2, 3, 4, 6};
    for (int s = 0; s < 5; s++)
        check_sequence(xs[s], lengths[s]);
}

/* The call's text forms: decode, segments, the table, and '-' without a path. */
static void call_columns(void **state)
{
    hmmrt_posterior_call call = {.model = &model, .n_symbols = K, .score_column = 0,
                                 .decode_column = 1, .segments_column = 2, .table_column = 3};
    hmmrt_value v[4] = {0};
    hmmrt_scratch scratch = {0};
    const uint8_t x[] = {0, 0, 0, 1};
    assert_int_equal(hmmrt_posterior(&call, x, 4, v, &scratch), 0);
    assert_string_equal(v[1].text.data, "a a a s");
    assert_string_equal(v[2].text.data, "a:1-3 s:4");
    assert_non_null(strstr(v[3].text.data, ";"));
    for (int c = 1; c < 4; c++)
        hmmrt_buf_reset(&v[c].text);
    /* no path for the empty sequence: '-' */
    assert_int_equal(hmmrt_posterior(&call, x, 0, v, &scratch), 0);
    assert_true(v[0].score == -INFINITY);
    assert_string_equal(v[1].text.data, "-");
    assert_string_equal(v[2].text.data, "-");
    assert_string_equal(v[3].text.data, "-");
    for (int c = 0; c < 4; c++)
        hmmrt_buf_free(&v[c].text);
    hmmrt_scratch_free(&scratch);
}

/* A silent cycle whose weights multiply to 1 or more is refused. */
static void divergent_cycle(void **state)
{
    static const hmmrt_model_move loop[] = {
        {0, 1, -1, 1.0}, {1, 2, -1, 2.0}, {2, 1, -1, 0.5}, {2, 3, -1, 0.5}};
    static const char *const loop_names[] = {"start", "p", "q", "end"};
    static const double none[] = {1, 1, 1};
    hmmrt_model m = {.name = "loop", .n_states = 4, .state_names = loop_names, .start = 0,
                     .end = 3, .n_moves = 4, .moves = loop, .n_emissions = 0, .emissions = none};
    char err[256];
    hmmrt_fb *fb = hmmrt_fb_new(&m, K, err, sizeof err);
    assert_null(fb);
    assert_non_null(strstr(err, "diverges"));
}

/* Segments from states stored in 1, 2 and 4 bytes (the GPU's back-pointer
 * widths and the CPU's ints) are the same text, and the runs a plain
 * reference finds: runs shorter and longer than the 8 states compared at a
 * time, ending at and away from the sequence's end. */
static void segments_of_each_width(void **state)
{
    static const char *const names[] = {"a", "b", "c"};
    enum { L = 300 };
    uint8_t s1[L];
    uint16_t s2[L];
    int s4[L];
    unsigned seed = 7;
    for (int i = 0, q = 0; i < L; i++) {
        seed = seed * 1103515245u + 12345u;
        if ((seed >> 16) % (i < 150 ? 3 : 23) == 0)
            q = (q + 1 + (int)((seed >> 8) % 2)) % 3;
        s1[i] = (uint8_t)q, s2[i] = (uint16_t)q, s4[i] = q;
    }
    hmmrt_buf want = {0}, got = {0};
    for (int first = 0; first < L;) {
        int last = first;
        while (last + 1 < L && s4[last + 1] == s4[first])
            last++;
        char seg[64];
        if (last > first)
            snprintf(seg, sizeof seg, "%s%s:%d-%d", first ? " " : "", names[s4[first]],
                     first + 1, last + 1);
        else
            snprintf(seg, sizeof seg, "%s%s:%d", first ? " " : "", names[s4[first]], first + 1);
        hmmrt_buf_puts(&want, seg);
        first = last + 1;
    }
    const void *widths[] = {s1, s2, s4};
    const int bytes[] = {1, 2, 4};
    for (int w = 0; w < 3; w++) {
        hmmrt_buf_reset(&got);
        hmmrt_write_segments(&got, names, widths[w], bytes[w], L);
        assert_string_equal(got.data, want.data);
    }
    hmmrt_buf_free(&want);
    hmmrt_buf_free(&got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(against_enumeration),
        cmocka_unit_test(call_columns),
        cmocka_unit_test(divergent_cycle),
        cmocka_unit_test(segments_of_each_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
