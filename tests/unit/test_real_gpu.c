/* test_real_gpu.c: the GPU path over real observations, its arithmetic run
 * on the CPU (runtime/real_gpu_model.c over runtime/gpu/real_math.cuh, the
 * kernels' own helpers): the packed model (tied gaussians once, flop count),
 * each emission row against runtime/gaussian.c, and forward and viterbi
 * scores in double and float against the CPU path's engine (fb.c's rows)
 * and a plain viterbi in logs, for diagonal, full and mixture models of
 * D = 1, 2, 13 and 36, with the emission pass direct and as the matrix
 * product of expanded features; and the models the GPU path leaves to the
 * CPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "hmmrt.h"
#include "fb.h"
#include "real_gpu_model.h"

/* A small generator of its own (the tests repeat exactly). */
static uint64_t rng = 88172645463325252ULL;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

enum { MAXG = 8, MAXS = 8, MAXM = 40 };

/* A test model: start, S emitting states, end. Each state emits its own
 * density; density kinds by `shape`: 0 diagonal gaussians, 1 full, 2
 * mixtures of 3 parts drawn from 4 shared full gaussians (tied), 3 two
 * states sharing one density and a mixture sharing its gaussian. */
typedef struct {
    int D, S, n_g;
    double mean[MAXG][64], factor[MAXG][64 * 64];
    hmmrt_gaussian g[MAXG];
    const hmmrt_gaussian *parts[MAXS][3];
    double logw[MAXS][3];
    hmmrt_density dens[MAXS];
    hmmrt_densities ds;
    hmmrt_model_move moves[MAXM];
    const char *names[MAXS + 2];
    double ones[MAXS]; /* the emissions table fb.c copies (K = 1; rows replace it) */
    hmmrt_model m;
} TestModel;

static void make_gaussian(TestModel *t, int j, int diagonal)
{
    const int D = t->D;
    double *f = t->factor[j], lsum = 0;
    for (int i = 0; i < D; i++) {
        t->mean[j][i] = 4 * uniform() - 2;
        if (diagonal) {
            f[i] = 0.5 + 1.5 * uniform();
            lsum += log(f[i]);
        } else {
            for (int k = 0; k < D; k++)
                f[i * D + k] = k < i ? 0.6 * uniform() - 0.3 : 0;
            f[i * D + i] = 0.5 + 1.5 * uniform();
            lsum += log(f[i * D + i]);
        }
    }
    t->g[j] = (hmmrt_gaussian){diagonal, t->mean[j], f, -0.5 * D * log(2 * M_PI) - lsum};
}

static void make_model(TestModel *t, int D, int shape)
{
    memset(t, 0, sizeof *t);
    t->D = D;
    t->S = 4;
    t->n_g = shape >= 2 ? 4 : t->S;
    for (int j = 0; j < t->n_g; j++)
        make_gaussian(t, j, shape == 0);
    for (int s = 0; s < t->S; s++) {
        hmmrt_density *d = &t->dens[s];
        if (shape == 2 || (shape == 3 && s == 2)) {
            for (int k = 0; k < 3; k++) {
                t->parts[s][k] = &t->g[(s + k) % t->n_g];
                t->logw[s][k] = log((k + 1) / 6.0);
            }
            *d = (hmmrt_density){3, t->parts[s], t->logw[s]};
        } else {
            t->parts[s][0] = &t->g[shape == 3 && s == 3 ? 0 : s % t->n_g];
            *d = (hmmrt_density){1, t->parts[s], NULL};
        }
    }
    t->ds = (hmmrt_densities){D, t->S, t->dens};
    /* start = 0, states 1..S, end = S + 1; left to right with loops, a skip
     * and a way back, and exits from the last two */
    int n = 0, end = t->S + 1;
    t->moves[n++] = (hmmrt_model_move){0, 1, 0, 0.7};
    t->moves[n++] = (hmmrt_model_move){0, 2, 1, 0.3};
    for (int s = 1; s <= t->S; s++) {
        t->moves[n++] = (hmmrt_model_move){s, s, s - 1, 0.6};
        if (s < t->S)
            t->moves[n++] = (hmmrt_model_move){s, s + 1, s, 0.3};
        if (s + 2 <= t->S)
            t->moves[n++] = (hmmrt_model_move){s, s + 2, s + 1, 0.1};
    }
    t->moves[n++] = (hmmrt_model_move){t->S, 1, 0, 0.2};
    t->moves[n++] = (hmmrt_model_move){2, end, -1, 0.02};
    t->moves[n++] = (hmmrt_model_move){t->S - 1, end, -1, 0.05};
    t->moves[n++] = (hmmrt_model_move){t->S, end, -1, 0.2};
    for (int s = 0; s <= end; s++)
        t->names[s] = "q";
    for (int s = 0; s < t->S; s++)
        t->ones[s] = 1;
    t->m = (hmmrt_model){.name = "m", .n_states = end + 1, .state_names = t->names, .start = 0,
                         .end = end, .n_moves = n, .moves = t->moves, .n_emissions = t->S,
                         .emissions = t->ones, .densities = &t->ds};
}

/* L observations near the model's means (and some far). */
static double *observations(const TestModel *t, int64_t L)
{
    double *x = malloc((size_t)L * t->D * sizeof *x);
    for (int64_t i = 0; i < L; i++)
        for (int d = 0; d < t->D; d++)
            x[i * t->D + d] = (i % 17 == 5 ? 30 : 3) * (2 * uniform() - 1);
    return x;
}

/* The CPU path's forward: fb.c's engine over gaussian.c's scaled rows. */
static double forward_ref(const TestModel *t, const double *x, int64_t L)
{
    char err[256];
    hmmrt_fb *fb = hmmrt_fb_new(&t->m, 1, err, sizeof err);
    assert_non_null(fb);
    double *scratch = calloc(hmmrt_fb_scratch(fb, L), sizeof *scratch);
    double *rows = calloc((size_t)L * t->S + 1, sizeof *rows);
    long double shift = hmmrt_real_rows(&t->ds, x, L, rows);
    double lnp = hmmrt_fb_run_rows(fb, rows, L, scratch, NULL, NULL, NULL);
    free(scratch);
    free(rows);
    hmmrt_fb_free(fb);
    return lnp == -INFINITY ? lnp : (double)(lnp + shift);
}

/* A plain viterbi in logs over the moves as written and gaussian.c's logs. */
static double viterbi_ref(const TestModel *t, const double *x, int64_t L)
{
    const int n = t->m.n_states;
    double v[MAXS + 2], w[MAXS + 2], row[MAXS];
    for (int q = 0; q < n; q++)
        v[q] = q == 0 ? 0 : -INFINITY;
    for (int64_t i = 0; i < L; i++) {
        hmmrt_density_logs(&t->ds, x + i * t->D, row);
        for (int q = 0; q < n; q++)
            w[q] = -INFINITY;
        for (int k = 0; k < t->m.n_moves; k++) {
            const hmmrt_model_move *mv = &t->moves[k];
            if (mv->emission < 0)
                continue;
            double c = v[mv->from] + log(mv->weight) + row[mv->emission];
            w[mv->to] = c > w[mv->to] ? c : w[mv->to];
        }
        memcpy(v, w, sizeof v);
    }
    double best = -INFINITY;
    for (int k = 0; k < t->m.n_moves; k++)
        if (t->moves[k].emission < 0) {
            double c = v[t->moves[k].from] + log(t->moves[k].weight);
            best = c > best ? c : best;
        }
    return best;
}

/* The float contract: 1e-5 x max(1, |score|) + 1e-8 nats a position. */
static int within_float(double got, double want, int64_t L)
{
    double tol = 1e-5 * (fabs(want) > 1 ? fabs(want) : 1) + 1e-8 * (double)L;
    if (!(fabs(got - want) <= tol))
        fprintf(stderr, "got %.12g want %.12g (diff %.3g, tolerance %.3g)\n", got, want,
                fabs(got - want), tol);
    return fabs(got - want) <= tol;
}

static int close_double(double got, double want)
{
    double tol = 1e-9 * (fabs(want) > 1 ? fabs(want) : 1);
    if (!(fabs(got - want) <= tol))
        fprintf(stderr, "got %.15g want %.15g\n", got, want);
    return fabs(got - want) <= tol;
}

static void check_model(int D, int shape)
{
    TestModel *t = calloc(1, sizeof *t);
    make_model(t, D, shape);
    hmmrt_rg_model g;
    char err[256];
    assert_int_equal(hmmrt_rg_model_make(&t->m, &g, err, sizeof err), 0);
    assert_int_equal(g.n_gauss, t->n_g); /* each gaussian once, however often used */
    const int64_t lengths[] = {0, 1, 7, 300};
    for (int li = 0; li < 4; li++) {
        const int64_t L = lengths[li];
        double *x = observations(t, L > 0 ? L : 1);
        for (int64_t i = 0; i < L; i++) { /* the emission pass against gaussian.c */
            double a[MAXS], b[MAXS];
            hmmrt_rg_row_d(&g, x + i * D, a);
            hmmrt_density_logs(&t->ds, x + i * D, b);
            for (int s = 0; s < t->S; s++)
                assert_true(close_double(a[s], b[s]));
        }
        const double fw = forward_ref(t, x, L), vt = viterbi_ref(t, x, L);
        if (L == 0) { /* no move from start to end: no path */
            assert_true(fw == -INFINITY && vt == -INFINITY);
        } else {
            if (!(isfinite(fw) && isfinite(vt) && vt <= fw + 1e-12 * fabs(fw)))
                fprintf(stderr, "D %d shape %d L %lld: forward %g viterbi %g\n", D, shape,
                        (long long)L, fw, vt);
            assert_true(isfinite(fw) && isfinite(vt) && vt <= fw + 1e-12 * fabs(fw));
        }
        const double fd = hmmrt_rg_score_cpu(&g, 0, 1, x, L), vd = hmmrt_rg_score_cpu(&g, 1, 1, x, L);
        const double ff = hmmrt_rg_score_cpu(&g, 0, 0, x, L), vf = hmmrt_rg_score_cpu(&g, 1, 0, x, L);
        if (L == 0) {
            assert_true(fd == -INFINITY && vd == -INFINITY && ff == -INFINITY && vf == -INFINITY);
        } else {
            assert_true(close_double(fd, fw));
            assert_true(close_double(vd, vt));
            assert_true(within_float(ff, fw, L));
            assert_true(within_float(vf, vt, L));
        }
        /* the emission pass as the matrix product of features and weights */
        const double gd = hmmrt_rg_score_cpu_gemm(&g, 0, 1, x, L);
        const double gv = hmmrt_rg_score_cpu_gemm(&g, 1, 1, x, L);
        const double gf = hmmrt_rg_score_cpu_gemm(&g, 0, 0, x, L);
        const double gvf = hmmrt_rg_score_cpu_gemm(&g, 1, 0, x, L);
        if (L == 0) {
            assert_true(gd == -INFINITY && gv == -INFINITY && gf == -INFINITY && gvf == -INFINITY);
        } else {
            assert_true(close_double(gd, fw));
            assert_true(close_double(gv, vt));
            assert_true(within_float(gf, fw, L));
            assert_true(within_float(gvf, vt, L));
        }
        free(x);
    }
    hmmrt_rg_model_free(&g);
    free(t);
}

static void test_diagonal(void **state)
{
    (void)state;
    check_model(1, 0);
    check_model(2, 0);
    check_model(13, 0);
    check_model(36, 0);
}

static void test_full(void **state)
{
    (void)state;
    check_model(1, 1);
    check_model(2, 1);
    check_model(13, 1);
    check_model(36, 1);
}

static void test_mixtures_tied(void **state)
{
    (void)state;
    check_model(2, 2);
    check_model(13, 2);
    check_model(36, 2);
    check_model(2, 3);
    check_model(36, 3);
}

/* The flops of seed paper 003's count: a full gaussian of D = 2 has 2
 * diagonal (4 each) and 2 off-diagonal (5 each) covariance elements; a
 * mixture of 3 parts adds 2 log-adds of 9. */
static void test_flop_count(void **state)
{
    (void)state;
    TestModel *t = calloc(1, sizeof *t);
    make_model(t, 2, 2);
    hmmrt_rg_model g;
    char err[256];
    assert_int_equal(hmmrt_rg_model_make(&t->m, &g, err, sizeof err), 0);
    assert_int_equal(g.n_gauss, 4);
    assert_int_equal(g.n_parts, 12);
    assert_true(g.flops_per_frame == 4 * (2 * 4 + 2 * 5) + 4 * 2 * 9);
    hmmrt_rg_model_free(&g);
    free(t);
}

/* A silent state between emitting ones, a move into the start, D > 64:
 * the CPU path, with the reason. */
static void test_refused(void **state)
{
    (void)state;
    TestModel *t = calloc(1, sizeof *t);
    make_model(t, 2, 0);
    hmmrt_rg_model g;
    char err[256];
    t->moves[3].emission = -1; /* a silent move between emitting states */
    assert_int_equal(hmmrt_rg_model_make(&t->m, &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "silent states"));
    make_model(t, 2, 0);
    t->moves[3].to = 0;
    assert_int_equal(hmmrt_rg_model_make(&t->m, &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "start state"));
    make_model(t, 2, 0);
    t->ds.D = 65;
    assert_int_equal(hmmrt_rg_model_make(&t->m, &g, err, sizeof err), -1);
    assert_non_null(strstr(err, "64"));
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diagonal),     cmocka_unit_test(test_full),
        cmocka_unit_test(test_mixtures_tied), cmocka_unit_test(test_flop_count),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
