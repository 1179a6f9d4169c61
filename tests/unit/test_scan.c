/* test_scan.c: unit tests of the time-parallel scan's boundary combination
 * (runtime/scan_combine.c) and engine (runtime/scan.c): transfers applied
 * in order equal their composition (associativity, sum-product with
 * exponents and max-plus), exponents far apart, no path, a column of zeros
 * beside live ones, a hand-written two-state model scored in chunks of
 * every length against one run (viterbi's transfers one column at a time
 * and together), and the cut into chunks and each thread's memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "hmmrt_scan.h"

enum { N = 4, NB = 2 };
static const int boundary[NB] = {1, 2};

static double rel(double a, double b)
{
    double d = fabs(a - b), m = fabs(b) > 1 ? fabs(b) : 1;
    return d / m;
}

/* a transfer with positive entries and exponents drawn from seed */
static void random_transfer(unsigned seed, double *t, int64_t *e)
{
    srand(seed);
    for (int j = 0; j < NB; j++) {
        for (int i = 0; i < N; i++)
            t[j * N + i] = ldexp(1.0 + rand() / (double)RAND_MAX, 900 + rand() % 60);
        e[j] = (rand() % 4000) - 2000;
    }
}

/* value i of a vector, as a long double ln */
static long double ln_value(const double *v, int64_t e, int i)
{
    return logl((long double)v[i]) + (long double)e * logl(2.0L);
}

static void test_apply_by_hand(void **state)
{
    /* column 0 (from state 1): 2 at state 1, 6 at state 3; column 1 (from
       state 2): 4 at state 2, with exponents 1 and -1 */
    double t[NB * N] = {0, 2, 0, 6, 0, 0, 4, 0};
    int64_t e[NB] = {1, -1};
    double v[N] = {5, 1, 3, 7}, out[N];
    int64_t oe;
    assert_int_equal(hmmrt_scan_apply_sum(N, NB, boundary, t, e, v, 10, out, &oe), 0);
    /* true values: state 1: 2*2*1, state 2: 4/2*3, state 3: 6*2*1, times 2^10 */
    double want[N] = {0, 4, 6, 12};
    for (int i = 0; i < N; i++)
        assert_true(fabs(ldexp(out[i], (int)oe) - ldexp(want[i], 10)) <=
                    1e-15 * ldexp(want[i], 10));
    /* v[0] and v[3] are not boundary states: they are not read */
    double zero[N] = {9, 0, 0, 9};
    assert_int_equal(hmmrt_scan_apply_sum(N, NB, boundary, t, e, zero, 0, out, &oe), -1);
    for (int i = 0; i < N; i++)
        assert_true(out[i] == 0.0);
}

static void test_sum_associative(void **state)
{
    for (unsigned seed = 1; seed <= 50; seed++) {
        double a[NB * N], b[NB * N], c[NB * N], ab[NB * N], bc[NB * N], abc1[NB * N],
            abc2[NB * N];
        int64_t ae[NB], be[NB], ce[NB], abe[NB], bce[NB], abc1e[NB], abc2e[NB];
        random_transfer(seed, a, ae);
        random_transfer(seed + 1000, b, be);
        random_transfer(seed + 2000, c, ce);
        /* (A after B) after C and A after (B after C): the same transfer */
        assert_int_equal(hmmrt_scan_compose_sum(N, NB, boundary, a, ae, b, be, ab, abe), 0);
        assert_int_equal(hmmrt_scan_compose_sum(N, NB, boundary, ab, abe, c, ce, abc1, abc1e), 0);
        assert_int_equal(hmmrt_scan_compose_sum(N, NB, boundary, b, be, c, ce, bc, bce), 0);
        assert_int_equal(hmmrt_scan_compose_sum(N, NB, boundary, a, ae, bc, bce, abc2, abc2e), 0);
        for (int j = 0; j < NB; j++)
            for (int i = 0; i < N; i++)
                assert_true(fabsl(ln_value(abc1 + j * N, abc1e[j], i) -
                                  ln_value(abc2 + j * N, abc2e[j], i)) < 1e-12L);
        /* applied one by one to a vector: the composition's result */
        double v[N] = {0.5, 0x1p950, 0x1p940, 3}, x[N], y[N], z[N], w[N];
        int64_t xe, ye, ze, we;
        hmmrt_scan_apply_sum(N, NB, boundary, c, ce, v, 77, x, &xe);
        hmmrt_scan_apply_sum(N, NB, boundary, b, be, x, xe, y, &ye);
        hmmrt_scan_apply_sum(N, NB, boundary, a, ae, y, ye, z, &ze);
        hmmrt_scan_apply_sum(N, NB, boundary, abc1, abc1e, v, 77, w, &we);
        for (int i = 0; i < N; i++)
            assert_true(fabsl(ln_value(z, ze, i) - ln_value(w, we, i)) < 1e-12L);
    }
}

static void test_sum_exponents_far_apart(void **state)
{
    /* column 1's paths lie 2^-5000 below column 0's: long double still adds
       them, and where only they reach a state it keeps its value */
    double t[NB * N] = {0, 0x1p960, 0, 0, 0, 0, 0x1p960, 0x1p960};
    int64_t e[NB] = {0, -5000};
    double v[N] = {0, 0x1p960, 0x1p960, 0}, out[N];
    int64_t oe;
    int got = hmmrt_scan_apply_sum(N, NB, boundary, t, e, v, 0, out, &oe);
    /* state 2 and 3 fall 2^-5000 below state 1: more than double holds */
    assert_int_equal(got, -2);
    e[1] = -900;
    assert_int_equal(hmmrt_scan_apply_sum(N, NB, boundary, t, e, v, 0, out, &oe), 0);
    assert_true(out[3] > 0 && fabs(log2(out[1]) - log2(out[3]) - 900) < 1e-9);
}

static void test_sum_column_of_zeros(void **state)
{
    /* column 1 has no path (all 0) and a stale exponent far above column
       0's: column 0's paths must still count */
    double t[NB * N] = {0, 0x1p960, 0, 0x1p959, 0, 0, 0, 0};
    int64_t e[NB] = {-5000000, 0};
    double v[N] = {0, 0x1p960, 0x1p960, 0}, out[N];
    int64_t oe;
    assert_int_equal(hmmrt_scan_apply_sum(N, NB, boundary, t, e, v, 0, out, &oe), 0);
    assert_true(out[1] > 0 && out[3] == out[1] / 2 && out[2] == 0);
    assert_true(fabsl(ln_value(out, oe, 1) - (ln_value(t, e[0], 1) + ln_value(v, 0, 1))) < 1e-9L);
}

static void test_max_associative(void **state)
{
    srand(7);
    for (int round = 0; round < 50; round++) {
        double a[NB * N], b[NB * N], ab[NB * N], v[N], x[N], y[N], z[N];
        for (int k = 0; k < NB * N; k++) {
            a[k] = rand() % 5 == 0 ? -INFINITY : -(double)(rand() % 100000) / 7.0;
            b[k] = rand() % 5 == 0 ? -INFINITY : -(double)(rand() % 100000) / 3.0;
        }
        for (int i = 0; i < N; i++)
            v[i] = -(double)(rand() % 1000);
        hmmrt_scan_compose_max(N, NB, boundary, a, b, ab);
        hmmrt_scan_apply_max(N, NB, boundary, b, v, x);
        hmmrt_scan_apply_max(N, NB, boundary, a, x, y);
        hmmrt_scan_apply_max(N, NB, boundary, ab, v, z);
        for (int i = 0; i < N; i++) {
            if (y[i] == -INFINITY) {
                assert_true(z[i] == -INFINITY);
                continue;
            }
            assert_true(rel(z[i], y[i]) < 1e-14);
        }
    }
}

/* ---- the engine on a hand-written model -------------------------------------
 * States 0 start, 1 A, 2 B, 3 end; start -> A 1; A -> A 0.9, A -> B 0.1,
 * B -> B 0.8, B -> A 0.15, B -> end 0.05 (silent); two symbols. The spans
 * behave as generated ones do (runtime/hmmrt_scan.h). */
static const double emit[2][2] = {{0.7, 0.2}, {0.3, 0.8}};

static double sum_span(const void *xs, int64_t L, int64_t i0, int64_t i1, double *columns,
                       int64_t *scale, int first)
{
    const uint8_t *x = xs;
    double *cur = columns, *prev = columns + N;
    if (first) {
        *scale = -960;
        memset(cur, 0, sizeof(double) * N);
        cur[0] = 0x1p960;
    }
    for (int64_t i = i0; i < i1; i++) {
        double *swap = prev;
        prev = cur;
        cur = swap;
        const double *e = emit[x[i]];
        cur[0] = 0;
        cur[1] = e[0] * (prev[0] + 0.9 * prev[1] + 0.15 * prev[2]);
        cur[2] = e[1] * (0.1 * prev[1] + 0.8 * prev[2]);
        cur[3] = 0.05 * cur[2];
        double sum = cur[0] + cur[1] + cur[2] + cur[3];
        if (!(sum > 0))
            return -INFINITY;
        int ex;
        frexp(sum, &ex);
        for (int s = 0; s < N; s++)
            cur[s] = ldexp(cur[s], 960 - ex);
        *scale += ex - 960;
    }
    if (cur != columns)
        memcpy(columns, cur, sizeof(double) * N);
    return 0;
}

static void max_span(const void *xs, int64_t L, int64_t i0, int64_t i1, double *columns,
                     double *offset, int first)
{
    const uint8_t *x = xs;
    double *cur = columns, *prev = columns + N;
    if (first) {
        for (int s = 0; s < N; s++)
            cur[s] = -INFINITY;
        cur[0] = 0;
        offset[0] = offset[1] = 0;
    }
    for (int64_t i = i0; i < i1; i++) {
        double *swap = prev;
        prev = cur;
        cur = swap;
        const double *e = emit[x[i]];
        cur[0] = -INFINITY;
        cur[1] = fmax(prev[0], fmax(prev[1] + log(0.9), prev[2] + log(0.15))) + log(e[0]);
        cur[2] = fmax(prev[1] + log(0.1), prev[2] + log(0.8)) + log(e[1]);
        cur[3] = cur[2] + log(0.05);
    }
    if (cur != columns)
        memcpy(columns, cur, sizeof(double) * N);
}

/* max_span for `width` columns at once (hmmrt_max_spans' layout) */
static void max_spans(const void *xs, int64_t L, int64_t i0, int64_t i1, double *columns,
                      double *offsets, int width)
{
    for (int v = 0; v < width; v++) {
        double pair[2] = {offsets[2 * v], offsets[2 * v + 1]};
        max_span(xs, L, i0, i1, columns + (size_t)v * 2 * N, pair, 0);
        offsets[2 * v] = pair[0];
        offsets[2 * v + 1] = pair[1];
    }
}

static const hmmrt_scan_call sum_call = {.label = "test", .n_states = N, .n_boundary = NB,
                                         .boundary = boundary, .last = 3, .sum_span = sum_span};
static const hmmrt_scan_call max_call = {.label = "test", .n_states = N, .n_boundary = NB,
                                         .boundary = boundary, .last = 3, .max_span = max_span};
static const hmmrt_scan_call max_call_together = {
    .label = "test", .n_states = N, .n_boundary = NB, .boundary = boundary, .last = 3,
    .max_span = max_span, .max_spans = max_spans};

static void test_engine_every_chunk_length(void **state)
{
    enum { L = 2000 };
    static uint8_t x[L];
    srand(3);
    for (int i = 0; i < L; i++)
        x[i] = rand() % 2;
    double columns[2 * N];
    int64_t scale;
    sum_span(x, L, 0, L, columns, &scale, 1);
    double want = log(columns[3]) + scale * log(2.0);
    double offset[2];
    max_span(x, L, 0, L, columns, offset, 1);
    double want_max = columns[3] + offset[0] + offset[1];
    assert_int_equal(hmmrt_scan_set_mode("on"), 0);
    const char *lengths[] = {"1", "2", "7", "100", "1999", "2000", "5000"};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        setenv("HMMRT_SCAN_CHUNK", lengths[k], 1);
        assert_true(rel(hmmrt_scan_sum(&sum_call, x, L), want) < 1e-13);
        assert_true(rel(hmmrt_scan_max(&max_call, x, L, NULL), want_max) < 1e-13);
        assert_true(rel(hmmrt_scan_max(&max_call_together, x, L, NULL), want_max) < 1e-13);
    }
    unsetenv("HMMRT_SCAN_CHUNK");
    assert_int_equal(hmmrt_scan_set_mode("sideways"), -1);
    assert_int_equal(hmmrt_scan_set_mode("auto"), 0);
}

/* The cut (auto mode): four chunks a thread, chunk 0 as long as the other
 * threads' share of the transfers; fewer chunks where their transfers would
 * keep more than 64 MB, never fewer than the threads; one without a second
 * thread. Each thread's memory on 128-byte lines of its own. */
static void test_chunks_and_thread_memory(void **state)
{
    assert_int_equal(hmmrt_scan_set_mode("auto"), 0);
    unsetenv("HMMRT_SCAN_CHUNK");
    const int64_t L = 1000000;
    struct { int threads; size_t bytes; int64_t count; double first; } cases[] = {
        {16, 64, 64, 1.3 * 63 / 15}, /* the casino on 16 threads */
        {2, 64, 8, 1.3 * 7},
        {16, 8u << 20, 16, 1.3},     /* 8 MB a transfer: 16 chunks, not 8 */
        {4, 1u << 20, 16, 1.3 * 15 / 3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t count;
        int64_t *begin = hmmrt_scan_chunks(L, cases[k].threads, 1.3, cases[k].bytes, &count);
        assert_non_null(begin);
        assert_int_equal(count, cases[k].count);
        assert_int_equal(begin[0], 0);
        assert_int_equal(begin[count], L);
        for (int64_t c = 0; c < count; c++)
            assert_true(begin[c + 1] > begin[c]);
        double other = (double)(begin[2] - begin[1]);
        assert_true(fabs((double)begin[1] / other - cases[k].first) < 0.01 * cases[k].first);
        free(begin);
    }
    int64_t count;
    int64_t *begin = hmmrt_scan_chunks(L, 1, 1.3, 64, &count);
    assert_int_equal(count, 1);
    free(begin);
    size_t sizes[] = {1, 8, 16, 17, 1000}, strides[] = {16, 16, 16, 32, 1008};
    for (size_t k = 0; k < 5; k++) {
        size_t stride;
        double *memory = hmmrt_scan_thread_memory(sizes[k], 3, &stride);
        assert_non_null(memory);
        assert_int_equal(stride, strides[k]);
        assert_int_equal((uintptr_t)memory % 128, 0);
        memset(memory, 0, sizeof(double) * stride * 3);
        free(memory);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_apply_by_hand),
        cmocka_unit_test(test_sum_associative),
        cmocka_unit_test(test_sum_exponents_far_apart),
        cmocka_unit_test(test_sum_column_of_zeros),
        cmocka_unit_test(test_max_associative),
        cmocka_unit_test(test_engine_every_chunk_length),
        cmocka_unit_test(test_chunks_and_thread_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
