/* test_scan_gpu.c: unit tests of the GPU scan's arithmetic on the CPU
 * (runtime/scan_chunk.h, scan_matrices.c): matrices by hand, a chunk run
 * against its matrices' product, a dying column, float leaving its range,
 * the type rule, the cut, and a hand-written model scored by the emulated
 * scan in float and double at every chunk length against one run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "hmmrt_scan.h"
#include "scan_chunk.h"

enum { N = 4, NB = 2 };
static const int boundary[NB] = {1, 2};

static double rel(double a, double b)
{
    double d = fabs(a - b), m = fabs(b) > 1 ? fabs(b) : 1;
    return d / m;
}

/* ---- a hand-written model (as tests/unit/test_scan.c's) ----------------------
 * States 0 start, 1 A, 2 B, 3 end; start -> A 1; A -> A 0.9, A -> B 0.1,
 * B -> B 0.8, B -> A 0.15, B -> end 0.05 (silent); three symbols, the third
 * emitted by neither state at some weight far below the others. */
static const double emit[3][2] = {{0.7, 0.2}, {0.3, 0.8}, {1e-3, 2e-3}};

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
        if (!(sum > 0)) {
            memset(columns, 0, sizeof(double) * N);
            return -INFINITY;
        }
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

static const hmmrt_scan_call sum_call = {.label = "test", .n_states = N, .n_boundary = NB,
                                         .boundary = boundary, .last = 3, .sum_span = sum_span};
static const hmmrt_scan_call max_call = {.label = "test", .n_states = N, .n_boundary = NB,
                                         .boundary = boundary, .last = 3, .max_span = max_span};

/* ---- the matrices and one chunk ---------------------------------------------- */

static void test_matrices_by_hand(void **state)
{
    double m[3 * NB * NB], mo[3], least;
    int me[3];
    assert_int_equal(hmmrt_scan_matrices(&sum_call, 3, 100, NB, m, me, mo, &least), 0);
    /* symbol 0: from A: A 0.9 x 0.7, B 0.1 x 0.2; from B: A 0.15 x 0.7, B 0.8 x 0.2 */
    double want[NB][NB] = {{0.63, 0.105}, {0.02, 0.16}}; /* [to][from] */
    for (int s = 0; s < NB; s++)
        for (int j = 0; j < NB; j++) {
            double got = ldexp(m[s * NB + j], me[0]);
            assert_true(rel(got, want[s][j]) < 1e-15);
            assert_true(m[s * NB + j] < 1.0);
        }
    assert_true(least > 0 && least < 1);
    assert_int_equal(hmmrt_scan_matrices(&max_call, 3, 100, NB, m, me, mo, &least), 0);
    for (int s = 0; s < NB; s++)
        for (int j = 0; j < NB; j++)
            assert_true(fabs(m[s * NB + j] + mo[0] - log(want[s][j])) < 1e-14);
}

/* A chunk run from each boundary state equals its matrices' product. */
static void test_chunk_is_the_product(void **state)
{
    enum { LEN = 40 };
    uint8_t x[LEN];
    srand(11);
    for (int i = 0; i < LEN; i++)
        x[i] = (uint8_t)(rand() % 3);
    double m[3 * NB * NB], mo[3], least;
    int me[3];
    assert_int_equal(hmmrt_scan_matrices(&sum_call, 3, LEN, NB, m, me, mo, &least), 0);
    for (int j = 0; j < NB; j++) {
        long double p[NB] = {0, 0}, q[NB];
        p[j] = 1;
        for (int i = 0; i < LEN; i++) {
            for (int s = 0; s < NB; s++) {
                q[s] = 0;
                for (int k = 0; k < NB; k++)
                    q[s] += ldexpl(m[(x[i] * NB + s) * NB + k], me[x[i]]) * p[k];
            }
            memcpy(p, q, sizeof p);
        }
        double v[HMMRT_SCAN_NB_MAX] = {0};
        v[j] = 1;
        int e = 0;
        assert_int_equal(hmmrt_scan_run_sum_d(NB, m, me, x, LEN, 0, v, &e), HMMRT_SCAN_LIVE);
        float m_f[3 * NB * NB], vf[HMMRT_SCAN_NB_MAX] = {0};
        for (int k = 0; k < 3 * NB * NB; k++)
            m_f[k] = (float)m[k];
        vf[j] = 1;
        int ef = 0;
        assert_int_equal(hmmrt_scan_run_sum_f(NB, m_f, me, x, LEN, 0, vf, &ef), HMMRT_SCAN_LIVE);
        for (int s = 0; s < NB; s++) {
            assert_true(fabsl(ldexpl(v[s], e) - p[s]) <= 1e-13L * p[s]);
            assert_true(fabsl(ldexpl(vf[s], ef) - p[s]) <= 1e-5L * p[s]);
        }
    }
}

static void test_column_dies(void **state)
{
    /* symbol 0: nothing goes anywhere */
    double m[NB * NB] = {0, 0, 0, 0};
    int me[1] = {0};
    uint8_t x[5] = {0};
    double v[HMMRT_SCAN_NB_MAX] = {1, 0};
    int e = 0;
    assert_int_equal(hmmrt_scan_run_sum_d(NB, m, me, x, 5, 0, v, &e), HMMRT_SCAN_DEAD);
    assert_true(v[0] == 0 && v[1] == 0);
    double mm[NB * NB] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY}, mo[1] = {0}, offset = 0;
    double w[HMMRT_SCAN_NB_MAX] = {0, -INFINITY};
    hmmrt_scan_run_max_d(NB, mm, mo, x, 5, 0, w, &offset);
    assert_true(w[0] == -INFINITY && w[1] == -INFINITY);
}

/* A state that falls 2^-10 a position behind the other: float marks it
 * before it leaves float's range, double keeps it. */
static void test_float_leaves_its_range(void **state)
{
    float mf[NB * NB] = {0.5f, 0, 0, 0x1p-11f};
    double md[NB * NB] = {0.5, 0, 0, 0x1p-11};
    int me[1] = {0};
    uint8_t x[20] = {0};
    float vf[HMMRT_SCAN_NB_MAX] = {1, 1};
    double vd[HMMRT_SCAN_NB_MAX] = {1, 1};
    int ef = 0, ed = 0;
    assert_int_equal(hmmrt_scan_run_sum_f(NB, mf, me, x, 20, 0, vf, &ef), HMMRT_SCAN_RISKY);
    assert_int_equal(hmmrt_scan_run_sum_d(NB, md, me, x, 20, 0, vd, &ed), HMMRT_SCAN_LIVE);
    assert_true(rel(ldexp(vd[1], ed), ldexp(1.0, -220)) < 1e-15);
    /* the type rule: float from 2^-40, double from 2^-300, else neither */
    assert_int_equal(hmmrt_scan_type(&sum_call, 0x1p-30, 0), 0);
    assert_int_equal(hmmrt_scan_type(&sum_call, 0x1p-30, 1), 1);
    assert_int_equal(hmmrt_scan_type(&sum_call, 0x1p-50, 0), 1);
    assert_int_equal(hmmrt_scan_type(&sum_call, 0x1p-400, 0), -1);
    assert_int_equal(hmmrt_scan_type(&max_call, 0x1p-400, 0), 0);
}

static void test_cut(void **state)
{
    int64_t lengths[] = {3, 100, 4097, 1000000, 100000000, 3000000000LL};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        int64_t chunk, n;
        hmmrt_scan_cut(lengths[k], 270336, &chunk, &n);
        assert_true(chunk % 16 == 0 && chunk >= HMMRT_SCAN_GPU_MIN_CHUNK);
        assert_true(n <= HMMRT_SCAN_GPU_MAX_CHUNKS);
        assert_true(n * chunk >= lengths[k] - 2 && (n - 1) * chunk < lengths[k] - 2);
    }
    assert_int_equal(hmmrt_scan_pad(3), 3);
    assert_int_equal(hmmrt_scan_pad(5), 8);
    assert_int_equal(hmmrt_scan_pad(17), 32);
}

/* ---- the whole emulated scan ------------------------------------------------------ */

static void test_emulated_every_chunk_length(void **state)
{
    enum { L = 3000 };
    static uint8_t x[L];
    srand(5);
    for (int i = 0; i < L; i++)
        x[i] = (uint8_t)(rand() % 7 == 0 ? 2 : rand() % 2);
    double columns[2 * N];
    int64_t scale;
    sum_span(x, L, 0, L, columns, &scale, 1);
    double want = log(columns[3]) + (double)scale * log(2.0);
    double offset[2];
    max_span(x, L, 0, L, columns, offset, 1);
    double want_max = columns[3] + offset[0] + offset[1];
    int64_t chunks[] = {1, 2, 16, 100, 2997, 2998, 10000};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        int status;
        double d = hmmrt_scan_emulate(&sum_call, x, L, 3, 1, chunks[k], NULL, &status);
        assert_true(rel(d, want) < 1e-13);
        double f = hmmrt_scan_emulate(&sum_call, x, L, 3, 0, chunks[k], NULL, &status);
        assert_int_equal(status, HMMRT_SCAN_LIVE);
        assert_true(fabs(f - want) < 1e-5 * fabs(want) + 1e-8 * L);
        assert_true(rel(hmmrt_scan_emulate(&max_call, x, L, 3, 1, chunks[k], NULL, &status), want_max) <
                    1e-13);
        assert_true(fabs(hmmrt_scan_emulate(&max_call, x, L, 3, 0, chunks[k], NULL, &status) -
                         want_max) < 1e-5 * fabs(want_max) + 1e-8 * L);
    }
    /* three symbols: the middle is one position */
    sum_span(x, 3, 0, 3, columns, &scale, 1);
    int status;
    assert_true(rel(hmmrt_scan_emulate(&sum_call, x, 3, 3, 1, 16, NULL, &status),
                    log(columns[3]) + (double)scale * log(2.0)) < 1e-14);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matrices_by_hand),
        cmocka_unit_test(test_chunk_is_the_product),
        cmocka_unit_test(test_column_dies),
        cmocka_unit_test(test_float_leaves_its_range),
        cmocka_unit_test(test_cut),
        cmocka_unit_test(test_emulated_every_chunk_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
