/* number.c: reading and checking the numbers of the language (number.h). */
#include "syntax/number.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Powers of ten that a double holds exactly. */
static const double EXACT_POWERS[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
enum { MAX_EXACT_POWER = 22 };
#define MAX_EXACT_DIGITS ((uint64_t)1 << 53)

double number_parse(const char *text, size_t length)
{
    uint64_t digits = 0;
    int scale = 0, exact = 1, seen_point = 0;
    size_t i = 0;
    for (; i < length && (text[i] == '.' || (text[i] >= '0' && text[i] <= '9')); i++) {
        if (text[i] == '.') {
            seen_point = 1;
            continue;
        }
        if (digits >= MAX_EXACT_DIGITS / 10) {
            exact = 0;
            break;
        }
        digits = digits * 10 + (uint64_t)(text[i] - '0');
        scale -= seen_point;
    }
    if (exact && i < length) { /* an exponent: e, a sign, digits */
        int sign = 1, power = 0;
        i++;
        if (i < length && (text[i] == '+' || text[i] == '-'))
            sign = text[i++] == '-' ? -1 : 1;
        for (; i < length && text[i] >= '0' && text[i] <= '9' && power < 1000; i++)
            power = power * 10 + (text[i] - '0');
        exact = i == length;
        scale += sign * power;
    }
    if (exact && digits < MAX_EXACT_DIGITS && scale >= -MAX_EXACT_POWER &&
        scale <= MAX_EXACT_POWER)
        return scale < 0 ? (double)digits / EXACT_POWERS[-scale]
                         : (double)digits * EXACT_POWERS[scale];
    char small[64], *copy = length < sizeof small ? small : xmalloc(length + 1);
    memcpy(copy, text, length);
    copy[length] = 0;
    double value = strtod(copy, NULL);
    if (copy != small)
        free(copy);
    return value;
}

int number_value(Diag *d, const Number *n, double *out, const char *what)
{
    if (n->negative) {
        diag_error(d, n->loc, "%s must be >= 0, not %s", what, n->text);
        return 0;
    }
    if (!isfinite(n->value)) {
        diag_error(d, n->loc, "%s %s is too large to represent", what, n->text);
        return 0;
    }
    if (n->value == 0 && strpbrk(n->text, "123456789")) {
        diag_error(d, n->loc, "%s %s is too small to represent; write 0 if you mean 0", what,
                   n->text);
        return 0;
    }
    *out = n->value;
    return 1;
}

int number_fraction(Diag *d, const Number *num, double num_value, const Number *den,
                    double den_value, Loc loc, double *out, const char *what)
{
    if (den_value == 0) {
        diag_error(d, den->loc, "division by zero in %s %s/%s", what, num->text, den->text);
        return 0;
    }
    double v = num_value / den_value;
    if (!isfinite(v) || (v == 0 && num_value != 0)) {
        diag_error(d, loc, "%s %s/%s cannot be represented", what, num->text, den->text);
        return 0;
    }
    *out = v;
    return 1;
}

int number_prob(Diag *d, const Prob *p, double *out, const char *what)
{
    double num, den;
    if (!number_value(d, &p->num, &num, what))
        return 0;
    if (!p->has_den) {
        *out = num;
        return 1;
    }
    if (!number_value(d, &p->den, &den, what))
        return 0;
    return number_fraction(d, &p->num, num, &p->den, den, p->loc, out, what);
}

/* ln of a checked number (value as number_value gave it). A normal double
 * holds 16 digits, so log(value) keeps them; a subnormal one (below
 * DBL_MIN, 2.2e-308) holds fewer (1e-322 is 9.88e-323), so its text is read
 * again in long double, whose range goes down to 1e-4951. */
static double number_log(const Number *n, double value)
{
    if (value == 0)
        return -INFINITY;
    if (value >= DBL_MIN)
        return log(value);
    return (double)logl(strtold(n->text, NULL));
}

double number_prob_log(const Prob *p, double value)
{
    if (!p->has_den || value == 0)
        return number_log(&p->num, value);
    if (value >= DBL_MIN && p->num.value >= DBL_MIN && p->den.value >= DBL_MIN)
        return log(value);
    return number_log(&p->num, p->num.value) - number_log(&p->den, p->den.value);
}
