/* number.h: the numbers of the language: reading a decimal number exactly
 * and fast, and the checks every weight and emission value passes (finite,
 * >= 0, representable, fractions with a non-zero denominator). The lexer
 * uses both for transition matrices, sema for everything else. */
#ifndef HMMC_NUMBER_H
#define HMMC_NUMBER_H

#include <stddef.h>

#include "syntax/ast.h"
#include "support/diag.h"

/* The double nearest to the decimal number text[0..length) (the lexer's
 * NUMBER: digits, a point, an exponent), the same as strtod gives: digits
 * that fit 2^53 and a power of ten up to 22 are one correctly rounded
 * multiplication or division; anything else goes to strtod. */
double number_parse(const char *text, size_t length);

/* The value of a written number, checked as `what` (e.g. "transition
 * weight"): sign, overflow, underflow; 0 after an error. */
int number_value(Diag *d, const Number *n, double *out, const char *what);

/* num / den of two checked numbers; 0 after an error (division by zero, a
 * quotient that a double cannot hold). loc is the whole fraction. */
int number_fraction(Diag *d, const Number *num, double num_value, const Number *den,
                    double den_value, Loc loc, double *out, const char *what);

/* The value of NUMBER or NUMBER / NUMBER, finite and >= 0; 0 after an error. */
int number_prob(Diag *d, const Prob *p, double *out, const char *what);

/* ln of the value of a checked NUMBER or NUMBER / NUMBER (value is what
 * number_prob gave): log(value), to every digit also where value is a
 * subnormal double (the text is read again in long double); -inf for 0. */
double number_prob_log(const Prob *p, double value);

#endif
