/* test_hits.c: unit tests of the hits mode's pieces (runtime/hits*.c): the
 * P-value of a score (esl_exp_surv: 1 at or below tau), domains read from a
 * viterbi traceback of a tiny profile (one, two through J, broken ones),
 * the domain score of a whole-sequence stretch against the forward score
 * summed by hand, nhmmer's score and null2 of a one-residue envelope, a
 * model that is no profile, and -E's quick rejection (no logarithm) against
 * the plain test lnP + ln Z <= ln E. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <cmocka.h>

#include "hits.h"
#include "internal.h"

/* A profile of two match states in an import's shape: S N B M1 M2 I1 E J C
 * T over the alphabet "AC"; N, J and C emit on their loops (odds 1). */
enum { S, N, B, M1, M2, I1, E, J, C, T, N_STATES };
static const char *const names[] = {"S", "N", "B", "M1", "M2", "I1", "E", "J", "C", "T"};
static const double emissions[] = {1, 1, 2, 0.5, 0.5, 2, 1, 1}; /* null, m1, m2, insert */
static const hmmrt_model_move moves[] = {
    {S, N, -1, 5.0},  {N, N, 0, 0.7},  {N, B, -1, 0.3},  {B, M1, 1, 0.5}, {B, M2, 2, 0.5},
    {M1, M2, 2, 0.9}, {M1, I1, 3, 0.1}, {I1, I1, 3, 0.5}, {I1, M2, 2, 0.5}, {M1, E, -1, 1.0},
    {M2, E, -1, 1.0}, {E, C, -1, 0.5}, {E, J, -1, 0.5}, {J, J, 0, 0.7},  {J, B, -1, 0.3},
    {C, C, 0, 0.7},   {C, T, -1, 0.3},
};
static const hmmrt_model profile = {
    .name = "p", .alphabet = 0, .n_states = N_STATES, .state_names = names, .start = S, .end = T,
    .n_moves = sizeof moves / sizeof moves[0], .moves = moves, .n_emissions = 4,
    .emissions = emissions};

static void test_p_value(void **state)
{
    assert_true(hmmrt_hits_lnP(-4.0, -3.5, 0.7) == 0.0);
    assert_true(hmmrt_hits_lnP(-3.5, -3.5, 0.7) == 0.0); /* at tau: P = 1 */
    assert_true(fabs(hmmrt_hits_lnP(6.5, -3.5, 0.7) - -7.0) < 1e-12);
}

static void test_one_domain(void **state)
{
    hmmrt_path_model *pm = hmmrt_path_model_new(&profile, "AC");
    assert_non_null(pm);
    const uint8_t x[] = {0, 0, 1};
    hmmrt_domain *d;
    int n;
    assert_int_equal(hmmrt_find_domains(pm, "S N N B M1 M2 E C T", x, 3, 1, &d, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].ali_from, 2);
    assert_int_equal(d[0].ali_to, 3);
    assert_int_equal(d[0].hmm_from, 1);
    assert_int_equal(d[0].hmm_to, 2);
    assert_true(isfinite(d[0].bits));
    free(d);
    hmmrt_path_model_free(pm);
}

static void test_two_domains_through_j(void **state)
{
    hmmrt_path_model *pm = hmmrt_path_model_new(&profile, "AC");
    const uint8_t x[] = {0, 1, 1, 0};
    hmmrt_domain *d;
    int n;
    assert_int_equal(hmmrt_find_domains(pm, "S N B M1 E J J B M2 E C C T", x, 4, 1, &d, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].ali_from, 1);
    assert_int_equal(d[0].ali_to, 1);
    assert_int_equal(d[0].hmm_to, 1);
    assert_int_equal(d[1].ali_from, 3);
    assert_int_equal(d[1].hmm_from, 2);
    assert_int_equal(d[1].hmm_to, 2);
    free(d);
    hmmrt_path_model_free(pm);
}

/* The score of a stretch that is the whole sequence is the sequence's
 * forward score with the model unihit for its length (as HMMER rescores an
 * envelope), here summed by hand over every path of the one residue 'A'
 * (L = 1: loops 1/3, moves on 2/3, E -> C 1, S -> N (2/1)^1 * 2 = 4):
 * S N B M1 E C T and S N B M2 E C T. */
static void test_whole_sequence_score(void **state)
{
    hmmrt_path_model *pm = hmmrt_path_model_new(&profile, "AC");
    const uint8_t x[] = {0};
    hmmrt_domain *d;
    int n;
    assert_int_equal(hmmrt_find_domains(pm, "S N B M1 E C T", x, 1, 1, &d, &n), 0);
    assert_int_equal(n, 1);
    double move = 2.0 / 3.0, p = 4.0 * move * (0.5 * 2.0 + 0.5 * 0.5) * 1.0 * move;
    assert_true(fabs(d[0].bits - log(p) / M_LN2) < 1e-9);
    free(d);
    hmmrt_path_model_free(pm);
}

/* nhmmer's score of the envelope 'A' (Ld = 1, alignment 1) for W = 10: the
 * unihit forward without the null model, the entry and exit moved to W,
 * W - 1 loops of W / (W + 2), less the null model of W residues. */
static void test_nhmmer_score(void **state)
{
    hmmrt_path_model *pm = hmmrt_path_model_new(&profile, "AC");
    const uint8_t x[] = {0};
    double move = 2.0 / 3.0, env = log(move * 1.25 * move), w = 10;
    double sc = env - 2 * log(move) + 2 * log(2 / (w + 2)) + (w - 1) * log(w / (w + 2));
    double null = w * log(w / (w + 1)) + log(1 / (w + 1));
    assert_true(fabs(hmmrt_nhmmer_bits(pm, x, 1, 1, 1, 10) - (sc - null) / M_LN2) < 1e-9);
    hmmrt_path_model_free(pm);
}

/* null2 of the envelope 'A': M1 emits it with posterior 1 / 1.25 = 0.8, M2
 * with 0.2, so null2(A) = 0.8 * 2 + 0.2 * 0.5 = 1.7, and the correction is
 * ln(1 + 1.7 / 256). */
static void test_null2(void **state)
{
    hmmrt_path_model *pm = hmmrt_path_model_new(&profile, "AC");
    const uint8_t x[] = {0};
    double sum;
    double bias = hmmrt_null2(pm, x, 1, 1, 1, &sum);
    assert_true(fabs(sum - log(1.7)) < 1e-9);
    assert_true(fabs(bias - log1p(1.7 / 256)) < 1e-12);
    hmmrt_path_model_free(pm);
}

static void test_broken_tracebacks(void **state)
{
    hmmrt_path_model *pm = hmmrt_path_model_new(&profile, "AC");
    const uint8_t x[] = {0, 0, 0, 0, 0};
    hmmrt_domain *d;
    int n;
    assert_int_equal(hmmrt_find_domains(pm, "S N B M2 M1 E C T", x, 2, 1, &d, &n), -2); /* no move */
    assert_int_equal(hmmrt_find_domains(pm, "S N N B M1 E C T", x, 5, 1, &d, &n), -2); /* 2 of 5 */
    assert_int_equal(hmmrt_find_domains(pm, "S X", x, 0, 1, &d, &n), -2);              /* no state */
    assert_null(d);
    assert_int_equal(n, 0);
    hmmrt_path_model_free(pm);
}

/* The plain test the hits mode's -E threshold stands for. */
static int plain_may_report(double bits, double tau, double lambda, double Z, double E)
{
    return hmmrt_hits_lnP(bits, tau, lambda) + log(Z) <= log(E);
}

/* hmmrt_hits_may_report with the bound refreshed as Z grows (hmmrt_hits_count)
 * says what the plain test says, at and around the threshold's score, for
 * E-values on both sides of 1, with and without -Z. */
static void test_quick_rejection(void **state)
{
    static const double Es[] = {10, 1, 0.01, 1e-10, 1e6};
    static const double taus[] = {-3.5, -12.2, 0.4};
    hmmrt_record rec = {.name = "s", .length = 100};
    hmmrt_hits_info info = {.lambda = 0.7, .score_column = 0};
    int tested = 0, rejected_quickly = 0;
    for (int zs = 0; zs < 2; zs++)
        for (size_t e = 0; e < sizeof Es / sizeof *Es; e++)
            for (size_t t = 0; t < sizeof taus / sizeof *taus; t++) {
                hmmrt_hits_options opt = {.E = Es[e], .by_E = 1, .cut = HMMRT_CUT_NONE,
                                          .Z_set = zs, .Z = 12345};
                info.tau = taus[t];
                hmmrt_hits h = {.info = &info, .opt = &opt, .sure_bits = -INFINITY};
                for (int64_t n = 1; n <= 5000; n++) {
                    hmmrt_hits_count(&h, &rec);
                    if (n % 97 && n > 20)
                        continue;
                    for (int before = 0; before < 3; before++) {
                        double Z = zs ? opt.Z : (double)(n + before + 1);
                        double at = info.tau + (log(Z) - log(opt.E)) / info.lambda;
                        for (double d = -3; d <= 3; d += 0.25) {
                            double nats = (at + d * (fabs(d) < 0.5 ? 1e-9 : 1)) * M_LN2;
                            double bits = nats / M_LN2; /* as the hits mode has it */
                            int plain = plain_may_report(bits, info.tau, info.lambda, Z, opt.E);
                            assert_int_equal(hmmrt_hits_may_report(&h, nats, before), plain);
                            tested++;
                            rejected_quickly += h.sure_Z <= Z && bits < h.sure_bits;
                        }
                    }
                }
            }
    assert_true(tested > 10000);
    assert_true(rejected_quickly > tested / 4); /* the quick way is taken */
}

static void test_not_a_profile(void **state)
{
    static const char *const two[] = {"start", "end"};
    static const hmmrt_model_move one[] = {{0, 1, -1, 1.0}};
    const hmmrt_model m = {.name = "m", .n_states = 2, .state_names = two, .start = 0, .end = 1,
                           .n_moves = 1, .moves = one};
    assert_null(hmmrt_path_model_new(&m, "AC"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_p_value),
        cmocka_unit_test(test_one_domain),
        cmocka_unit_test(test_two_domains_through_j),
        cmocka_unit_test(test_whole_sequence_score),
        cmocka_unit_test(test_nhmmer_score),
        cmocka_unit_test(test_null2),
        cmocka_unit_test(test_broken_tracebacks),
        cmocka_unit_test(test_not_a_profile),
        cmocka_unit_test(test_quick_rejection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
