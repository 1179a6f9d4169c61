/* test_real_fb.c: forward-backward over rows of emission values per
 * position (hmmrt_fb_run_rows, hmmrt_fb_viterbi_counts_rows: what posterior
 * and --train over real observations run) against the symbol engine on the
 * same model, with the rows made from its tables; and the rows of gaussians
 * (hmmrt_real_rows) against their log-densities. */
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

/* start -> a (e0); a -> a; a -> s (silent) emitting e1 on the way; s -> b
 * (e0, shared); s -> t -> s (a silent cycle); b, s, a, t -> end. */
static const char *const names[] = {"start", "a", "s", "t", "b", "end"};
static const hmmrt_model_move moves[] = {
    {0, 1, 0, 1.0}, {1, 1, 0, 0.5}, {1, 2, 1, 0.3}, {2, 4, 0, 0.4}, {2, 3, -1, 0.3},
    {3, 2, -1, 0.2}, {4, 5, -1, 1.0}, {2, 5, -1, 0.3}, {1, 5, -1, 0.2}, {3, 5, -1, 0.8},
};
enum { N_MOVES = sizeof moves / sizeof moves[0], N = 6, K = 3, E = 2, L = 7 };
static const double emissions[] = {0.5, 0.3, 0.2, 0.1, 0.6, 0.3};
static const hmmrt_model model = {
    .name = "m", .n_states = N, .state_names = names, .start = 0, .end = 5,
    .n_moves = N_MOVES, .moves = moves, .n_emissions = E, .emissions = emissions,
};
static const uint8_t x[L] = {0, 2, 1, 1, 0, 2, 0};

/* rows[i * E + em]: table em's value at symbol x[i], times 2^-shift[i]. */
static void rows_of(double *rows, const int *shift)
{
    for (int i = 0; i < L; i++)
        for (int em = 0; em < E; em++)
            rows[i * E + em] = ldexp(emissions[em * K + x[i]], shift ? -shift[i] : 0);
}

static void test_rows_match_symbols(void **state)
{
    (void)state;
    char err[256];
    hmmrt_fb *fb = hmmrt_fb_new(&model, K, err, sizeof err);
    assert_non_null(fb);
    size_t doubles = hmmrt_fb_scratch(fb, L);
    double *s1 = calloc(doubles, sizeof *s1), *s2 = calloc(doubles, sizeof *s2);
    double mc1[N_MOVES] = {0}, mc2[N_MOVES] = {0}, ec[E * K] = {0}, uses[L * E] = {0};
    double rows[L * E];
    /* a different power of two at each position: ln P gains their sum */
    const int shift[L] = {3, -7, 0, 12, -1, 5, 2};
    rows_of(rows, shift);
    double *post1 = NULL, *post2 = NULL;
    double lnp1 = hmmrt_fb_run(fb, x, L, s1, mc1, ec, &post1);
    double lnp2 = hmmrt_fb_run_rows(fb, rows, L, s2, mc2, uses, &post2);
    int total = 0;
    for (int i = 0; i < L; i++)
        total += shift[i];
    assert_true(isfinite(lnp1));
    assert_true(fabs(lnp2 + total * log(2.0) - lnp1) < 1e-12 * fabs(lnp1));
    for (int m = 0; m < N_MOVES; m++)
        assert_true(fabs(mc1[m] - mc2[m]) < 1e-12);
    /* each position's uses of a table, summed by symbol, are its counts */
    double by_symbol[E * K] = {0};
    for (int i = 0; i < L; i++)
        for (int em = 0; em < E; em++)
            by_symbol[em * K + x[i]] += uses[i * E + em];
    for (int v = 0; v < E * K; v++)
        assert_true(fabs(by_symbol[v] - ec[v]) < 1e-12);
    for (int i = 0; i < L * N; i++)
        assert_true(fabs(post1[i] - post2[i]) < 1e-12);
    free(s1), free(s2);
    hmmrt_fb_free(fb);
}

static void test_viterbi_rows_match_symbols(void **state)
{
    (void)state;
    char err[256];
    hmmrt_fb *fb = hmmrt_fb_new(&model, K, err, sizeof err);
    assert_non_null(fb);
    void *scratch = calloc(1, hmmrt_fb_viterbi_scratch(fb, L));
    double mc1[N_MOVES] = {0}, mc2[N_MOVES] = {0}, ec[E * K] = {0}, uses[L * E] = {0};
    double logs[L * E];
    rows_of(logs, NULL);
    for (int v = 0; v < L * E; v++)
        logs[v] = log(logs[v]);
    double best1 = hmmrt_fb_viterbi_counts(fb, x, L, scratch, mc1, ec);
    double best2 = hmmrt_fb_viterbi_counts_rows(fb, logs, L, scratch, mc2, uses);
    assert_true(isfinite(best1));
    assert_true(best1 == best2);
    for (int m = 0; m < N_MOVES; m++)
        assert_true(mc1[m] == mc2[m]);
    double by_symbol[E * K] = {0}, used = 0;
    for (int i = 0; i < L; i++)
        for (int em = 0; em < E; em++) {
            by_symbol[em * K + x[i]] += uses[i * E + em];
            used += uses[i * E + em];
        }
    assert_true(used == L); /* one emission a position on the best path */
    for (int v = 0; v < E * K; v++)
        assert_true(by_symbol[v] == ec[v]);
    free(scratch);
    hmmrt_fb_free(fb);
}

static void test_gaussian_rows(void **state)
{
    (void)state;
    /* N([1, -2], diag(4, 0.25)) and N([0, 0], [[2, 0.6], [0.6, 1]]) (L of it) */
    static const double m0[] = {1, -2}, f0[] = {2, 0.5};
    static const double m1[] = {0, 0};
    static double f1[4];
    f1[0] = sqrt(2.0), f1[1] = 0, f1[2] = 0.6 / sqrt(2.0), f1[3] = sqrt(1 - 0.36 / 2);
    const double two_pi = 2 * M_PI;
    const hmmrt_gaussian g0 = {1, m0, f0, -log(two_pi) - log(2 * 0.5)};
    const hmmrt_gaussian g1 = {0, m1, f1, -log(two_pi) - log(f1[0] * f1[3])};
    const hmmrt_gaussian *p0[] = {&g0}, *p1[] = {&g1};
    const hmmrt_density d[] = {{1, p0, NULL}, {1, p1, NULL}};
    const hmmrt_densities s = {2, 2, d};
    const double obs[] = {0.5, -1.5, 30, 10, -3, 2};
    double rows[6];
    long double shift = hmmrt_real_rows(&s, obs, 3, rows);
    /* the textbook densities: ln N = -ln(2 pi) - ln|C|/2 - q/2 */
    long double total = 0;
    for (int i = 0; i < 3; i++) {
        const double *o = obs + 2 * i;
        double q0 = pow((o[0] - 1) / 2, 2) + pow((o[1] + 2) / 0.5, 2);
        double det = 2 * 1 - 0.36, q1 = (1 * o[0] * o[0] - 2 * 0.6 * o[0] * o[1] + 2 * o[1] * o[1]) / det;
        double l0 = -log(two_pi) - log(1.0) - q0 / 2, l1 = -log(two_pi) - 0.5 * log(det) - q1 / 2;
        double top = l0 > l1 ? l0 : l1;
        /* the row holds each density times one power of two: their ratio is kept */
        assert_true(fabs(log(rows[2 * i]) - log(rows[2 * i + 1]) - (l0 - l1)) < 1e-9 * fabs(top));
        total += log(rows[2 * i]) - l0;
    }
    assert_true(fabsl(total + shift) < 1e-9L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_match_symbols),
        cmocka_unit_test(test_viterbi_rows_match_symbols),
        cmocka_unit_test(test_gaussian_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
