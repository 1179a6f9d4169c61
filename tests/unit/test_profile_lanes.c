/* test_profile_lanes.c: unit tests of the GPU's generic profile scorer's
 * arithmetic (runtime/profile_data_lanes.h), run on the CPU as a group of
 * lanes runs it (profile_data_lanes.c), against the CPU's generic scorer
 * (runtime/profile_data.c): random profiles of 1 to 200 nodes, tiles full
 * and partial, length-dependent weights, impossible and empty sequences. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "hmmrt_profile.h"
#include "profile_data_lanes.h"

/* A random profile: K symbols in n_cols columns; zero moves where zero_every
 * divides the index (the profile's missing moves). */
typedef struct random_profile {
    hmmrt_profile p;
    unsigned char col[8];
    double *data;
} random_profile;

static uint64_t rng = 88172645463325252ull;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static void make_profile(random_profile *r, int M, int K, int n_cols, int zero_every)
{
    int S = (M + 1 + 7) / 8 * 8;
    size_t n = (size_t)HMMRT_PT_N * S + 2 * (size_t)n_cols * S + 3 * (size_t)n_cols;
    r->data = calloc(n, sizeof(double));
    assert_non_null(r->data);
    for (int tab = 0; tab < HMMRT_PT_N; tab++)
        for (int k = 1; k <= M; k++) {
            int idx = tab * S + k;
            r->data[idx] = zero_every && idx % zero_every == 0 ? 0.0 : uniform() * 0.5;
        }
    double *em = r->data + (size_t)HMMRT_PT_N * S;
    for (int c = 0; c < 2 * n_cols; c++)
        for (int k = 1; k <= M; k++)
            em[(size_t)c * S + k] = 0.01 + uniform() * 0.2;
    double *loops = em + 2 * (size_t)n_cols * S;
    for (int i = 0; i < 3 * n_cols; i++)
        loops[i] = 0.02 + uniform() * 0.1;
    for (int x = 0; x < K; x++)
        r->col[x] = (unsigned char)(x % n_cols);
    memset(&r->p, 0, sizeof r->p);
    r->p.label = "random";
    r->p.M = M;
    r->p.stride = S;
    r->p.n_cols = n_cols;
    r->p.col = r->col;
    r->p.data = r->data;
    for (int s = 0; s < HMMRT_PX_N; s++) {
        r->p.special[s] = 0.1 + uniform() * 0.8;
        r->p.special_lw[s] = -1;
    }
    /* as HMMER3's: N, J and C loops and their exits take L-dependent weights */
    r->p.special_lw[HMMRT_PX_NN] = r->p.special_lw[HMMRT_PX_JJ] = r->p.special_lw[HMMRT_PX_CC] = 0;
    r->p.special_lw[HMMRT_PX_NB] = r->p.special_lw[HMMRT_PX_JB] = r->p.special_lw[HMMRT_PX_CT] = 1;
}

/* Compares the lanes' score with the generic scorer's: the float contract's
 * double part is 1e-12 x max(1, |score|) + 1e-14 nats a symbol; -inf exactly. */
static void expect_same(const hmmrt_profile *p, const uint8_t *x, int64_t L)
{
    double lw[2] = {(double)L / (L + 3.0), 3.0 / (L + 3.0)};
    hmmrt_scratch scratch = {0};
    double *rows = malloc(sizeof(double) * 6 * (size_t)p->stride);
    assert_non_null(rows);
    for (int viterbi = 0; viterbi <= 1; viterbi++) {
        double want, got = hmmrt_profile_lanes_score(p, viterbi, lw, x, L, rows);
        assert_int_equal((viterbi ? hmmrt_profile_viterbi : hmmrt_profile_forward)(
                             p, lw, x, L, &scratch, &want), 0);
        if (isinf(want) || isinf(got)) {
            assert_true(want == got);
            continue;
        }
        double tol = 1e-12 * fmax(1.0, fabs(want)) + 1e-14 * (double)L;
        if (!(fabs(got - want) <= tol))
            fail_msg("M %d L %lld %s: lanes %.17g, generic scorer %.17g", p->M, (long long)L,
                     viterbi ? "viterbi" : "forward", got, want);
    }
    free(rows);
    hmmrt_scratch_free(&scratch);
}

static void random_sequence(uint8_t *x, int64_t L, int K)
{
    for (int64_t i = 0; i < L; i++)
        x[i] = (uint8_t)(uniform() * K);
}

static void test_lanes_equal_the_generic_scorer(void **state)
{
    static const int Ms[] = {1, 2, 31, 32, 33, 64, 65, 100, 200};
    uint8_t x[600];
    for (size_t m = 0; m < sizeof Ms / sizeof Ms[0]; m++)
        for (int zero_every = 0; zero_every <= 7; zero_every += 7) {
            random_profile r;
            make_profile(&r, Ms[m], 6, 4, zero_every);
            for (int64_t L = 0; L <= 600; L += 150) {
                random_sequence(x, L, 6);
                expect_same(&r.p, x, L);
            }
            free(r.data);
        }
}

/* Long sequences move the scale many times: the rescaling follows the
 * generic scorer's rule, so both agree over thousands of rows. */
static void test_many_rescalings(void **state)
{
    random_profile r;
    make_profile(&r, 45, 6, 6, 0);
    int64_t L = 5000;
    uint8_t *x = malloc((size_t)L);
    assert_non_null(x);
    random_sequence(x, L, 6);
    expect_same(&r.p, x, L);
    free(x);
    free(r.data);
}

/* No way into the nodes or out to C: -inf from both. */
static void test_impossible(void **state)
{
    random_profile r;
    make_profile(&r, 40, 6, 4, 0);
    r.p.special[HMMRT_PX_EC] = 0.0;
    r.p.special[HMMRT_PX_EJ] = 0.0;
    uint8_t x[50];
    random_sequence(x, 50, 6);
    expect_same(&r.p, x, 50);
    double rows[6 * 48];
    double lw[2] = {50.0 / 53, 3.0 / 53};
    assert_true(isinf(hmmrt_profile_lanes_score(&r.p, 0, lw, x, 50, rows)));
    free(r.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lanes_equal_the_generic_scorer),
        cmocka_unit_test(test_many_rescalings),
        cmocka_unit_test(test_impossible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
