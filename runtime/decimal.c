/* decimal.c: a double as fixed-point text with up to 9 decimals, the bytes
 * printf's "%.*f" writes (glibc rounds the exact binary value, ties to
 * even) at a tenth of its cost: scaled by 10^d, the value and the exact
 * error of that product (a fused multiply-add) decide the rounding. Scores
 * are most of a run's output, and printf was 14% of a GPU run's host time. */
#include "internal.h"

#include <math.h>
#include <stdint.h>

static const double POW10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
static const uint64_t IPOW10[] = {1,      10,      100,      1000,      10000,
                                  100000, 1000000, 10000000, 100000000, 1000000000};

int hmmrt_fixed_text(char *out, double x, int decimals)
{
    if (decimals < 0 || decimals > 9)
        return -1;
    double a = fabs(x), s = POW10[decimals];
    double p = a * s;
    if (!(p < 4503599627370496.0)) /* 2^52: ulp(p) <= 1/2 below it; NaN and inf too */
        return -1;
    double e = fma(a, s, -p); /* a * s = p + e exactly */
    double f = floor(p), r = p - f; /* exact; r and 1/2 are multiples of ulp(p) */
    uint64_t n = (uint64_t)f;
    if (r > 0.5 || (r == 0.5 && (e > 0 || (e == 0 && (n & 1)))))
        n++;
    char digits[32];
    int len = 0;
    uint64_t whole = n / IPOW10[decimals], frac = n % IPOW10[decimals];
    for (int k = 0; k < decimals; k++, frac /= 10)
        digits[len++] = (char)('0' + frac % 10);
    if (decimals > 0)
        digits[len++] = '.';
    do {
        digits[len++] = (char)('0' + whole % 10);
        whole /= 10;
    } while (whole);
    int at = 0;
    if (signbit(x) && n > 0) /* "-0.000000" is written "0.000000" */
        out[at++] = '-';
    while (len > 0)
        out[at++] = digits[--len];
    out[at] = '\0';
    return at;
}
