/* test_dense_tf32.c: dense forward with each GPU product mode emulated on
 * the CPU (TF32 rounding of runtime/gpu/dense_tf32.h, a tensor core's
 * truncating FP32 accumulation), on random dense models of 1,024 and 4,096
 * states, each score against double within the float contract: plain TF32
 * must leave it at 4,096 states, the chunked and split modes stay inside. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <cmocka.h>

#include "gpu/dense_tf32.h"

/* ---- the emulated products ---- */

typedef enum {
    EM_FP32,    /* cuBLAS's FP32: float fma, rounded to nearest */
    EM_TF32_RN, /* TF32 inputs, FP32 accumulation rounded to nearest (an ideal unit) */
    EM_TF32,    /* TF32 inputs, the tensor core's truncating accumulation, one pass */
    EM_TF32X2,  /* the matrix split hi + lo: two passes */
    EM_TF32X3,  /* matrix and vector split: three passes (hi.hi, hi.lo, lo.hi) */
} em_mode;

/* The tensor core modelled (one H200's figures, docs/program.md): a step adds
 * KSTEP exact products of TF32 values to the FP32 accumulator, every addend
 * aligned to the largest and cut (toward zero) EXTRA bits below its float
 * ulp, the sum cut to float. EXTRA = 2 fits the device: the 1,000 x 1,000
 * benchmark's worst TF32 scores (H200) were 0.58 (1,024 states) and 2.2
 * (4,096) of the contract's tolerance; this model gives 0.61 and 1.9, and
 * EXTRA = 1 or 3 0.84 and 3.2 or 0.49 and 1.3 (HMMRT_TF32_CALIBRATE=1). */
enum { KSTEP = 8, EXTRA = 2 };

static int extra_bits = EXTRA; /* calibration may change it */

static float cut_to_float(double s)
{
    if (s == 0)
        return 0.0f;
    int e;
    frexp(s, &e);
    const double q = ldexp(1.0, e - 24);
    return (float)(trunc(s / q) * q);
}

/* acc + SUM x[k] a[k] over k < K, tensor-core style; x, a TF32 values. */
static float tc_dot(float acc, const float *x, const float *a, int K)
{
    for (int k0 = 0; k0 < K; k0 += KSTEP) {
        double p[KSTEP + 1];
        int m = 0;
        p[m++] = acc;
        double big = fabs((double)acc);
        for (int k = k0; k < k0 + KSTEP && k < K; k++) {
            p[m] = (double)x[k] * (double)a[k]; /* exact: 11 x 11 bits */
            if (fabs(p[m]) > big)
                big = fabs(p[m]);
            m++;
        }
        if (big == 0)
            continue;
        int e;
        frexp(big, &e);
        const double q = ldexp(1.0, e - 24 - extra_bits), inv = 1.0 / q;
        double s = 0;
        for (int i = 0; i < m; i++)
            s += trunc(p[i] * inv) * q;
        acc = cut_to_float(s);
    }
    return acc;
}

static float rn_dot(float acc, const float *x, const float *a, int K)
{
    for (int k = 0; k < K; k++)
        acc = fmaf(x[k], a[k], acc);
    return acc;
}

typedef struct {
    int n;
    float *pi, *at, *b; /* at: the matrix transposed, at[j * n + k] = A[k][j]; b: n x 4 */
    float *at_hi, *at_lo;
} model;

static uint64_t rng_state;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}

/* Dirichlet(1) rows, as benchmarks/dense-blas/make-model's, in float. */
static void dirichlet(float *out, int m, size_t stride)
{
    double sum = 0, tmp[8192];
    for (int i = 0; i < m; i++)
        sum += tmp[i] = -log(uniform());
    for (int i = 0; i < m; i++)
        out[(size_t)i * stride] = (float)(tmp[i] / sum);
}

static model make_model(int n, uint64_t seed)
{
    model md = {n, malloc(sizeof(float) * n), malloc(sizeof(float) * (size_t)n * n),
                malloc(sizeof(float) * n * 4), malloc(sizeof(float) * (size_t)n * n),
                malloc(sizeof(float) * (size_t)n * n)};
    rng_state = seed;
    dirichlet(md.pi, n, 1);
    for (int k = 0; k < n; k++)
        dirichlet(md.at + k, n, (size_t)n); /* row k of A: column k of at */
    for (int j = 0; j < n; j++)
        dirichlet(md.b + (size_t)j * 4, 4, 1);
    for (size_t i = 0; i < (size_t)n * n; i++)
        hmmrt_tf32_split(md.at[i], &md.at_hi[i], &md.at_lo[i]);
    return md;
}

static void free_model(model *md)
{
    free(md->pi);
    free(md->at);
    free(md->b);
    free(md->at_hi);
    free(md->at_lo);
}

/* A model whose rows are all 1/n (n = 1,000: not a TF32 value): every
 * product rounds the same way, at any size. */
static model uniform_model(int n)
{
    model md = make_model(n, 7);
    for (size_t i = 0; i < (size_t)n * n; i++) {
        md.at[i] = (float)(1.0 / n);
        hmmrt_tf32_split(md.at[i], &md.at_hi[i], &md.at_lo[i]);
    }
    return md;
}

/* out[j] = SUM_k x[k] A[k][j] as the mode's cuBLAS calls make it: for each
 * pass (the small ones first), for each chunk of k (dense_tf32.h), a product
 * from zero added to out by the epilogue (to nearest). */
static void product(const model *md, em_mode mode, int chunked, const float *x, float *x_hi,
                    float *x_lo, float *out)
{
    const int n = md->n;
    for (int k = 0; k < n; k++) {
        if (mode == EM_TF32X3)
            hmmrt_tf32_split(x[k], &x_hi[k], &x_lo[k]);
        else
            x_hi[k] = hmmrt_tf32_round(x[k]); /* what the tensor core takes of x */
    }
    const float *xs[3], *as[3];
    int passes = 0;
    if (mode == EM_TF32X3) {
        xs[passes] = x_lo, as[passes++] = md->at_hi;
        xs[passes] = x_hi, as[passes++] = md->at_lo;
    } else if (mode == EM_TF32X2) {
        xs[passes] = x_hi, as[passes++] = md->at_lo;
    }
    if (mode == EM_FP32) {
        xs[passes] = x, as[passes++] = md->at;
    } else if (mode == EM_TF32_RN || mode == EM_TF32) {
        xs[passes] = x_hi, as[passes++] = md->at; /* the tensor core rounds A itself */
    } else {
        xs[passes] = x_hi, as[passes++] = md->at_hi;
    }
    const int chunks = chunked ? hmmrt_dense_chunks(n) : 1;
    for (int j = 0; j < n; j++) {
        float acc = 0;
        int first = 1;
        for (int p = 0; p < passes; p++)
            for (int c = 0; c < chunks; c++) {
                const int k0 = hmmrt_dense_chunk_first(n, chunks, c),
                          k1 = hmmrt_dense_chunk_first(n, chunks, c + 1);
                const float *a = as[p] + (size_t)j * n;
                float part;
                if (mode == EM_FP32) {
                    part = rn_dot(0, xs[p] + k0, a + k0, k1 - k0);
                } else {
                    float ar[8192];
                    for (int k = k0; k < k1; k++)
                        ar[k - k0] = hmmrt_tf32_round(a[k]);
                    part = mode == EM_TF32_RN ? rn_dot(0, xs[p] + k0, ar, k1 - k0)
                                              : tc_dot(0, xs[p] + k0, ar, k1 - k0);
                }
                acc = first ? part : acc + part;
                first = 0;
            }
        out[j] = acc;
    }
}

/* The forward score of codes[0..L) in the mode (float, the GPU's row step:
 * the emission multiplied in float, the row scaled by a power of two), and in
 * double (ref). */
static void forward(const model *md, em_mode mode, int chunked, const uint8_t *codes, int L,
                    double *score, double *ref)
{
    const int n = md->n;
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
    float *xh = malloc(sizeof(float) * n), *xl = malloc(sizeof(float) * n);
    double *d = malloc(sizeof(double) * n), *dy = malloc(sizeof(double) * n);
    double shift = 0, dlog = 0;
    for (int j = 0; j < n; j++) {
        x[j] = md->pi[j] * md->b[(size_t)j * 4 + codes[0]];
        d[j] = (double)md->pi[j] * md->b[(size_t)j * 4 + codes[0]];
    }
    for (int t = 0;; t++) {
        float best = 0;
        double dsum = 0;
        for (int j = 0; j < n; j++) {
            best = x[j] > best ? x[j] : best;
            dsum += d[j];
        }
        int e;
        frexp(best, &e);
        for (int j = 0; j < n; j++) {
            x[j] = ldexpf(x[j], -e);
            d[j] /= dsum;
        }
        shift += e;
        dlog += log(dsum);
        if (t == L - 1)
            break;
        product(md, mode, chunked, x, xh, xl, y);
        for (int j = 0; j < n; j++) {
            double s = 0;
            const float *a = md->at + (size_t)j * n;
            for (int k = 0; k < n; k++)
                s += d[k] * a[k];
            dy[j] = s * md->b[(size_t)j * 4 + codes[t + 1]];
        }
        for (int j = 0; j < n; j++) {
            x[j] = y[j] * md->b[(size_t)j * 4 + codes[t + 1]];
            d[j] = dy[j];
        }
    }
    double total = 0;
    for (int j = 0; j < n; j++)
        total += x[j]; /* every state -> end 1 */
    *score = log(total) + shift * 0.69314718055994530942;
    *ref = dlog; /* d sums to 1 after the last scaling */
    free(x), free(y), free(xh), free(xl), free(d), free(dy);
}

/* The worst |score - double| over the contract's tolerance, 1e-5 x max(1,
 * |score|) + 1e-8 nats a symbol, of `seqs` random DNA sequences of L. */
static double worst_of(const model *md, em_mode mode, int chunked, int seqs, int L)
{
    double worst = 0;
    uint8_t *codes = malloc((size_t)L);
    uint64_t s = 99;
    for (int q = 0; q < seqs; q++) {
        for (int t = 0; t < L; t++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            codes[t] = (uint8_t)(s >> 62);
        }
        double got, want;
        forward(md, mode, chunked, codes, L, &got, &want);
        const double tol = 1e-5 * fmax(1.0, fabs(want)) + 1e-8 * L;
        const double e = fabs(got - want) / tol;
        worst = e > worst || isnan(e) ? e : worst;
    }
    free(codes);
    return worst;
}

/* ---- the tests ---- */

static void rounding(void **state)
{
    (void)state;
    assert_true(hmmrt_tf32_round(1.0f) == 1.0f);
    /* 1 + 2^-11 is a tie: away from zero; just under it rounds down */
    assert_true(hmmrt_tf32_round(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);
    assert_true(hmmrt_tf32_round(1.0f + 0x1p-11f - 0x1p-23f) == 1.0f);
    assert_true(hmmrt_tf32_round(-(1.0f + 0x1p-11f)) == -(1.0f + 0x1p-10f));
    assert_true(isinf(hmmrt_tf32_round(INFINITY)));
    assert_true(isnan(hmmrt_tf32_round(NAN)));
    /* the split: both parts TF32, the rest within 2^-22 of x */
    rng_state = 5;
    for (int i = 0; i < 100000; i++) {
        const float x = (float)(uniform() * ldexp(1.0, (int)(uniform() * 60) - 40));
        float hi, lo;
        hmmrt_tf32_split(x, &hi, &lo);
        assert_true(hmmrt_tf32_round(hi) == hi && hmmrt_tf32_round(lo) == lo);
        assert_true(fabs((double)x - hi) <= ldexp(fabs((double)x), -11));
        assert_true(fabs((double)x - hi - lo) <= ldexp(fabs((double)x), -22));
    }
}

static void chunks(void **state)
{
    (void)state;
    assert_int_equal(hmmrt_dense_chunks(1024), 1);
    assert_int_equal(hmmrt_dense_chunks(1025), 2);
    assert_int_equal(hmmrt_dense_chunks(4096), 4);
    assert_int_equal(hmmrt_dense_chunks(6000), 6);
    for (int n = 1; n < 9000; n += 37) {
        const int c = hmmrt_dense_chunks(n);
        assert_int_equal(hmmrt_dense_chunk_first(n, c, 0), 0);
        assert_int_equal(hmmrt_dense_chunk_first(n, c, c), n);
        for (int i = 0; i < c; i++) {
            const int w = hmmrt_dense_chunk_first(n, c, i + 1) - hmmrt_dense_chunk_first(n, c, i);
            assert_true(w >= 1 && w <= HMMRT_DENSE_TF32_CHUNK);
        }
    }
}

enum { SEQS = 3, L = 40 };

/* 1,024 states: everything inside (plain TF32 near where the device put it) */
static void states_1024(void **state)
{
    (void)state;
    model md = make_model(1024, 1024);
    const double fp32 = worst_of(&md, EM_FP32, 0, SEQS, L);
    const double tf32 = worst_of(&md, EM_TF32, 0, SEQS, L);
    const double x2 = worst_of(&md, EM_TF32X2, 1, SEQS, L);
    printf("    1,024 states, worst / tolerance: fp32 %.3f, tf32 %.3f, tf32x2 %.3f\n", fp32, tf32,
           x2);
    assert_true(fp32 < 0.1);
    assert_true(tf32 > 0.2 && tf32 < 1.0);
    assert_true(x2 < 1.0);
    free_model(&md);
}

/* 4,096 states: plain TF32 leaves the contract (as on the device: 2.2); an
 * ideal TF32 unit that rounds its sums would not; chunks of K bring it back */
static void states_4096(void **state)
{
    (void)state;
    model md = make_model(4096, 4096);
    const double tf32 = worst_of(&md, EM_TF32, 0, 1, 12);
    const double ideal = worst_of(&md, EM_TF32_RN, 0, 1, 12);
    const double chunked = worst_of(&md, EM_TF32, 1, 1, 12);
    const double x2 = worst_of(&md, EM_TF32X2, 1, 1, 12);
    printf("    4,096 states, worst / tolerance: tf32 %.3f (rounded sums %.3f), chunks of %d "
           "%.3f, tf32x2 in chunks %.3f\n",
           tf32, ideal, (int)HMMRT_DENSE_TF32_CHUNK, chunked, x2);
    assert_true(tf32 > 1.0);
    assert_true(ideal < 0.5);
    assert_true(chunked < 0.75);
    assert_true(x2 < 0.75);
    free_model(&md);
}

/* A matrix of one repeated value rounds the same way every time: TF32 leaves
 * the contract at any size even with sums rounded to nearest (28 times the
 * tolerance); the split keeps the matrix and stays inside */
static void repeated_value(void **state)
{
    (void)state;
    model md = uniform_model(1000);
    const double tf32 = worst_of(&md, EM_TF32_RN, 0, SEQS, L);
    const double x2 = worst_of(&md, EM_TF32X2, 1, SEQS, L);
    const double x3 = worst_of(&md, EM_TF32X3, 1, SEQS, L);
    printf("    1,000 states of 1/1,000: tf32 %.3f, tf32x2 %.3f, tf32x3 %.3f\n", tf32, x2, x3);
    assert_true(tf32 > 1.0);
    assert_true(x2 < 0.75); /* 0.6: the 1,000 states' truncated sums, as at 1,024 */
    assert_true(x3 < 0.75);
    free_model(&md);
}

/* HMMRT_TF32_CALIBRATE=1: the table the model's EXTRA was read from */
static void calibrate(void)
{
    for (int n = 256; n <= 4096; n *= 4) {
        model md = make_model(n, (uint64_t)n);
        for (extra_bits = 0; extra_bits <= 3; extra_bits++)
            printf("n %d extra %d: tf32 %.3f chunked %.3f x2 %.3f rn %.3f\n", n, extra_bits,
                   worst_of(&md, EM_TF32, 0, 2, 24), worst_of(&md, EM_TF32, 1, 2, 24),
                   worst_of(&md, EM_TF32X2, 1, 2, 24), worst_of(&md, EM_TF32_RN, 0, 2, 24));
        free_model(&md);
    }
}

int main(void)
{
    if (getenv("HMMRT_TF32_CALIBRATE")) {
        calibrate();
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rounding),   cmocka_unit_test(chunks),
        cmocka_unit_test(states_1024), cmocka_unit_test(states_4096),
        cmocka_unit_test(repeated_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
