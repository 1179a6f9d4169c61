/* test_real_fb_gpu.c: backward, posteriors and viterbi's paths over real
 * observations as the GPU computes them (runtime/real_fb_steps.c over
 * runtime/gpu/real_fb_math.cuh, the kernels' own helpers), in double and
 * float, against the CPU path's engine (fb.c's rows: ln P, posteriors and
 * their decode) and a plain viterbi in logs (its score, and each path's own
 * score), for diagonal, full, mixture and tied models of D = 1, 2 and 13. */
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
#include "real_fb_steps.h"
#include "real_gpu_model.h"

static uint64_t rng = 1181783497276652981ULL;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

enum { MAXG = 6, S = 4, MAXM = 40, MAXD = 13 };

/* start = 0, states 1..S, end = S + 1, left to right with loops, a skip, a
 * way back and exits from the last three; shape 0 diagonal, 1 full, 2
 * mixtures of 3 of 4 shared full gaussians, 3 two states sharing one. */
typedef struct {
    int D;
    double mean[MAXG][MAXD], factor[MAXG][MAXD * MAXD];
    hmmrt_gaussian g[MAXG];
    const hmmrt_gaussian *parts[S][3];
    double logw[S][3];
    hmmrt_density dens[S];
    hmmrt_densities ds;
    hmmrt_model_move moves[MAXM];
    const char *names[S + 2];
    double ones[S];
    hmmrt_model m;
} Model;

static void gaussian(Model *t, int j, int diagonal)
{
    const int D = t->D;
    double *f = t->factor[j], lsum = 0;
    for (int i = 0; i < D; i++) {
        t->mean[j][i] = 4 * uniform() - 2;
        if (diagonal) {
            f[i] = 0.5 + 1.5 * uniform();
        } else {
            for (int k = 0; k < D; k++)
                f[i * D + k] = k < i ? 0.6 * uniform() - 0.3 : 0;
            f[i * D + i] = 0.5 + 1.5 * uniform();
        }
        lsum += log(diagonal ? f[i] : f[i * D + i]);
    }
    t->g[j] = (hmmrt_gaussian){diagonal, t->mean[j], f, -0.5 * D * log(2 * M_PI) - lsum};
}

static void make(Model *t, int D, int shape)
{
    memset(t, 0, sizeof *t);
    t->D = D;
    const int n_g = shape >= 2 ? 4 : S;
    for (int j = 0; j < n_g; j++)
        gaussian(t, j, shape == 0);
    for (int s = 0; s < S; s++) {
        if (shape == 2 || (shape == 3 && s == 2)) {
            for (int k = 0; k < 3; k++) {
                t->parts[s][k] = &t->g[(s + k) % n_g];
                t->logw[s][k] = log((k + 1) / 6.0);
            }
            t->dens[s] = (hmmrt_density){3, t->parts[s], t->logw[s]};
        } else {
            t->parts[s][0] = &t->g[shape == 3 && s == 3 ? 0 : s % n_g];
            t->dens[s] = (hmmrt_density){1, t->parts[s], NULL};
        }
    }
    t->ds = (hmmrt_densities){D, S, t->dens};
    int n = 0, end = S + 1;
    t->moves[n++] = (hmmrt_model_move){0, 1, 0, 0.7};
    t->moves[n++] = (hmmrt_model_move){0, 2, 1, 0.3};
    for (int s = 1; s <= S; s++) {
        t->moves[n++] = (hmmrt_model_move){s, s, s - 1, 0.6};
        if (s < S)
            t->moves[n++] = (hmmrt_model_move){s, s + 1, s, 0.3};
        if (s + 2 <= S)
            t->moves[n++] = (hmmrt_model_move){s, s + 2, s + 1, 0.1};
    }
    t->moves[n++] = (hmmrt_model_move){S, 1, 0, 0.2};
    t->moves[n++] = (hmmrt_model_move){2, end, -1, 0.02};
    t->moves[n++] = (hmmrt_model_move){S - 1, end, -1, 0.05};
    t->moves[n++] = (hmmrt_model_move){S, end, -1, 0.2};
    for (int s = 0; s <= end; s++)
        t->names[s] = "q";
    for (int s = 0; s < S; s++)
        t->ones[s] = 1;
    t->m = (hmmrt_model){.name = "m", .n_states = end + 1, .state_names = t->names, .start = 0,
                         .end = end, .n_moves = n, .moves = t->moves, .n_emissions = S,
                         .emissions = t->ones, .densities = &t->ds};
}

static double *observations(const Model *t, int64_t L)
{
    double *x = malloc((size_t)(L > 0 ? L : 1) * t->D * sizeof *x);
    for (int64_t i = 0; i < L * t->D; i++)
        x[i] = 3 * (2 * uniform() - 1);
    return x;
}

/* The CPU path's engine: ln P and the posteriors (L x n) into post. */
static double posterior_ref(const Model *t, const double *x, int64_t L, double *post)
{
    char err[256];
    hmmrt_fb *fb = hmmrt_fb_new(&t->m, 1, err, sizeof err);
    assert_non_null(fb);
    double *scratch = calloc(hmmrt_fb_scratch(fb, L), sizeof *scratch);
    double *rows = calloc((size_t)L * S + 1, sizeof *rows);
    long double shift = hmmrt_real_rows(&t->ds, x, L, rows);
    double *p = NULL;
    double lnp = hmmrt_fb_run_rows(fb, rows, L, scratch, NULL, NULL, &p);
    assert_non_null(p);
    memcpy(post, p, (size_t)L * fb->n * sizeof *post);
    free(scratch);
    free(rows);
    hmmrt_fb_free(fb);
    return lnp == -INFINITY ? lnp : (double)(lnp + shift);
}

/* A plain viterbi in logs over the moves as written. */
static double viterbi_ref(const Model *t, const double *x, int64_t L)
{
    const int n = t->m.n_states;
    double v[S + 2], w[S + 2], row[S];
    for (int q = 0; q < n; q++)
        v[q] = q == 0 ? 0 : -INFINITY;
    for (int64_t i = 0; i < L; i++) {
        hmmrt_density_logs(&t->ds, x + i * t->D, row);
        for (int q = 0; q < n; q++)
            w[q] = -INFINITY;
        for (int k = 0; k < t->m.n_moves; k++) {
            const hmmrt_model_move *mv = &t->moves[k];
            if (mv->emission >= 0) {
                double c = v[mv->from] + log(mv->weight) + row[mv->emission];
                w[mv->to] = c > w[mv->to] ? c : w[mv->to];
            }
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

/* A path's own ln score (start, path[0..L-1], end), in double. */
static double path_score(const Model *t, const double *x, const int *path, int64_t L)
{
    double total = 0, row[S];
    int from = t->m.start;
    for (int64_t i = 0; i <= L; i++) {
        const int to = i < L ? path[i] : t->m.end;
        double best = -INFINITY;
        if (i < L)
            hmmrt_density_logs(&t->ds, x + i * t->D, row);
        for (int k = 0; k < t->m.n_moves; k++) {
            const hmmrt_model_move *mv = &t->moves[k];
            if (mv->from != from || mv->to != to || (mv->emission >= 0) != (i < L))
                continue;
            double c = log(mv->weight) + (i < L ? row[mv->emission] : 0);
            best = c > best ? c : best;
        }
        total += best;
        from = to;
    }
    return total;
}

static int close_to(double got, double want, double rel, double abs_tol, const char *what)
{
    double tol = rel * (fabs(want) > 1 ? fabs(want) : 1) + abs_tol;
    int ok = got == want || fabs(got - want) <= tol;
    if (!ok)
        fprintf(stderr, "%s: got %.15g want %.15g (tolerance %.3g)\n", what, got, want, tol);
    return ok;
}

static void check(int D, int shape)
{
    Model *t = calloc(1, sizeof *t);
    make(t, D, shape);
    hmmrt_rg_model g;
    hmmrt_rfb_moves mv;
    char err[256];
    assert_int_equal(hmmrt_rg_model_make(&t->m, &g, err, sizeof err), 0);
    assert_int_equal(hmmrt_rfb_moves_make(&g, &mv), 0);
    /* the moves by source: each emitting move once, from its source */
    assert_int_equal(mv.out_start[g.n_states], g.n_in);
    for (int q = 0; q < g.n_states; q++)
        for (int k = mv.out_start[q]; k < mv.out_start[q + 1]; k++) {
            int found = 0;
            for (int m = g.in_start[mv.out_to[k]]; m < g.in_start[mv.out_to[k] + 1]; m++)
                found |= g.in_from[m] == q && g.in_em[m] == mv.out_em[k] &&
                         g.in_logw[m] == mv.out_logw[k];
            assert_true(found);
        }
    const int n = g.n_states;
    const int64_t lengths[] = {1, 7, 200};
    for (int li = 0; li < 3; li++) {
        const int64_t L = lengths[li];
        double *x = observations(t, L), *want = calloc((size_t)L * n, sizeof *want);
        const double lnp = posterior_ref(t, x, L, want), vt = viterbi_ref(t, x, L);
        assert_true(isfinite(lnp) && isfinite(vt));
        for (int use_double = 0; use_double < 2; use_double++) {
            const double rel = use_double ? 1e-9 : 1e-5, per = use_double ? 1e-12 : 1e-8;
            const double ptol = use_double ? 1e-9 : 2e-5;
            double *post = calloc((size_t)L * n, sizeof *post);
            int *best = calloc((size_t)L, sizeof *best), *path = calloc((size_t)L, sizeof *path);
            hmmrt_rfb_result r = {.post = post, .best = best, .path = path};
            assert_int_equal(hmmrt_rfb_run_cpu(&g, &mv, use_double, x, L, &r), 0);
            assert_true(close_to(r.forward, lnp, rel, per * L, "forward"));
            assert_true(close_to(r.backward, lnp, rel, per * L, "backward"));
            assert_true(close_to(r.viterbi, vt, rel, per * L, "viterbi"));
            /* the path is a best one: its own score is the best score */
            assert_true(close_to(path_score(t, x, path, L), vt, rel, per * L, "the path's score"));
            int decode_differs = 0;
            for (int64_t i = 0; i < L; i++) {
                double sum = 0;
                int arg = 0;
                for (int q = 0; q < n; q++) {
                    assert_true(close_to(post[i * n + q], want[i * n + q], 0, ptol, "posterior"));
                    sum += post[i * n + q];
                    arg = want[i * n + q] > want[i * n + arg] ? q : arg;
                }
                assert_true(close_to(sum, 1, 0, ptol * n, "posteriors' sum"));
                /* decode: the CPU's, but for a near-tie in float */
                if (best[i] != arg) {
                    assert_true(!use_double);
                    assert_true(fabs(want[i * n + arg] - want[i * n + best[i]]) <= ptol);
                    decode_differs++;
                }
            }
            assert_true(decode_differs <= 1);
            free(post), free(best), free(path);
        }
        free(x), free(want);
    }
    hmmrt_rfb_moves_free(&mv);
    hmmrt_rg_model_free(&g);
    free(t);
}

static void test_diagonal(void **state)
{
    (void)state;
    check(1, 0);
    check(13, 0);
}

static void test_full(void **state)
{
    (void)state;
    check(2, 1);
    check(13, 1);
}

static void test_mixtures_tied(void **state)
{
    (void)state;
    check(2, 2);
    check(13, 2);
    check(1, 3);
    check(13, 3);
}

/* No path: forward, backward and viterbi -inf, nothing else written. */
static void test_no_path(void **state)
{
    (void)state;
    Model *t = calloc(1, sizeof *t);
    make(t, 2, 1);
    t->moves[t->m.n_moves - 1].weight = 0; /* only 2 -> end and 3 -> end left */
    t->moves[t->m.n_moves - 2].weight = 0;
    t->moves[t->m.n_moves - 3].weight = 0; /* no way to the end at all */
    hmmrt_rg_model g;
    hmmrt_rfb_moves mv;
    char err[256];
    assert_int_equal(hmmrt_rg_model_make(&t->m, &g, err, sizeof err), 0);
    assert_int_equal(hmmrt_rfb_moves_make(&g, &mv), 0);
    double *x = observations(t, 5);
    int path[5] = {-7, -7, -7, -7, -7};
    for (int use_double = 0; use_double < 2; use_double++) {
        hmmrt_rfb_result r = {.path = path};
        assert_int_equal(hmmrt_rfb_run_cpu(&g, &mv, use_double, x, 5, &r), 0);
        assert_true(r.forward == -INFINITY && r.backward == -INFINITY && r.viterbi == -INFINITY);
        assert_int_equal(path[0], -7);
    }
    free(x);
    hmmrt_rfb_moves_free(&mv);
    hmmrt_rg_model_free(&g);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diagonal),
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_mixtures_tied),
        cmocka_unit_test(test_no_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
