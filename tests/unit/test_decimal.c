/* test_decimal.c: a score's text (hmmrt_format_score: decimal.c's fast
 * fixed-point path, printf beyond it, nan and the infinities) against glibc's
 * printf "%.*f" on millions of doubles: random bit patterns (subnormals,
 * infinities, NaNs, the largest magnitudes), random values of every binary
 * exponent, values either side of a decimal half and of the fast path's
 * limit, for every --decimals (0 to 17). */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

static uint64_t seed = 0x9E3779B97F4A7C15u;

static uint64_t next_random(void)
{
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return seed;
}

/* What a score's field must hold: printf's "%.*f", but "nan" for every NaN
 * (printf writes "-nan" for some) and no sign on a zero ("-0.000" is
 * "0.000"). */
static void reference_text(char *out, size_t cap, double x, int d)
{
    if (isnan(x)) {
        snprintf(out, cap, "nan");
        return;
    }
    snprintf(out, cap, "%.*f", d, x);
    int zero = out[0] == '-' && !isinf(x);
    for (const char *p = out + 1; zero && *p; p++)
        zero = *p == '0' || *p == '.';
    if (zero)
        memmove(out, out + 1, strlen(out));
}

static long checked;

static void expect_same(double x, int d)
{
    char fast[HMMRT_SCORE_MAX], slow[HMMRT_SCORE_MAX + 64];
    size_t n = hmmrt_format_score(fast, x);
    reference_text(slow, sizeof slow, x, d);
    if (n != strlen(slow) || memcmp(fast, slow, n) != 0)
        fail_msg("%a (%.17g) with %d decimals: '%.*s', printf '%s'", x, x, d, (int)n, fast, slow);
    checked++;
}

static double from_bits(uint64_t bits)
{
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static void test_score_text_is_printf(void **state)
{
    (void)state;
    for (int d = 0; d <= 17; d++) {
        hmmrt_set_decimals(d);
        double scale = pow(10, d);
        for (int i = 0; i < 30000; i++) {
            /* any double at all: 1 in 2,048 subnormal, 1 in 2,048 inf or NaN */
            expect_same(from_bits(next_random()), d);
            /* any binary exponent, subnormals included, either sign */
            uint64_t r = next_random();
            double mant = (double)(r >> 11) / 9007199254740992.0;
            int exp = (int)(next_random() % 2100) - 1075;
            double x = ldexp(mant, exp) * (r & 1 ? -1 : 1);
            expect_same(x, d);
            /* scores as runs print them: -1e5 to 1e5 */
            double score = ((double)(r >> 11) / 9007199254740992.0 - 0.5) * 2e5;
            expect_same(score, d);
            /* either side of a decimal half, where rounding decides */
            double half = (floor(score * scale) + 0.5) / scale;
            expect_same(half, d);
            expect_same(nextafter(half, INFINITY), d);
            expect_same(nextafter(half, -INFINITY), d);
        }
        /* the fast path's limit (2^52 after scaling) and around it */
        double limit = 4503599627370496.0 / scale;
        double below = limit, above = limit;
        for (int k = 0; k < 40; k++, below = nextafter(below, 0), above = nextafter(above, INFINITY))
            for (int sign = -1; sign <= 1; sign += 2) {
                expect_same(sign * below, d);
                expect_same(sign * above, d);
                expect_same(sign * (floor(limit) - k), d);
            }
        const double odd[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, DBL_MIN, -DBL_MIN,
                              DBL_TRUE_MIN, -DBL_TRUE_MIN, DBL_MAX, -DBL_MAX, 0.5, -0.5, 1.5,
                              2.5, -2.5, 1e-7, -1e-7, 5e-7, -5e-7, 9.9999995, 1e22, 1e23};
        for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
            expect_same(odd[i], d);
    }
    hmmrt_set_decimals(6);
    print_message("%ld values compared with printf\n", checked);
    assert_true(checked > 3000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_score_text_is_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
