/* gaussian.c: the emission values of real alphabets: gaussian log-densities
 * through the Cholesky factor hmmc computed, mixtures summed in logs, and
 * the rows of a position as logs (viterbi) or scaled probabilities
 * (forward, backward). */
#include "hmmrt.h"

#include <math.h>

/* ln 2 in long double, so that k ln 2 rounds once. */
static const long double LN2L = 0.693147180559945309417232121458176568L;

double hmmrt_gaussian_log(const hmmrt_gaussian *g, int D, const double *x)
{
    double q = 0;
    if (g->diagonal) {
        for (int i = 0; i < D; i++) {
            double z = (x[i] - g->mean[i]) / g->factor[i];
            q += z * z;
        }
        return g->log_norm - 0.5 * q;
    }
    /* z = L^-1 (x - mean) by forward substitution */
    double z[D];
    for (int i = 0; i < D; i++) {
        const double *row = g->factor + (size_t)i * D;
        double t = x[i] - g->mean[i];
        for (int k = 0; k < i; k++)
            t -= row[k] * z[k];
        z[i] = t / row[i];
        q += z[i] * z[i];
    }
    /* an observation near double's limits can make inf - inf: density 0 */
    return q == q ? g->log_norm - 0.5 * q : -INFINITY;
}

/* ln sum_k w_k N_k(x). Terms more than 40 nats below the largest change no
 * digit of a double sum (e^-40 < 2^-57) and are left out, so that a sum
 * raises no underflow flag of its own. */
static double density_log(const hmmrt_density *d, int D, const double *x)
{
    if (!d->log_weights)
        return hmmrt_gaussian_log(d->parts[0], D, x);
    double terms[d->n_parts > 0 ? d->n_parts : 1];
    double top = -INFINITY;
    for (int k = 0; k < d->n_parts; k++) {
        terms[k] = d->log_weights[k] == -INFINITY
                       ? -INFINITY
                       : d->log_weights[k] + hmmrt_gaussian_log(d->parts[k], D, x);
        top = terms[k] > top ? terms[k] : top;
    }
    if (top == -INFINITY)
        return top;
    double sum = 0;
    for (int k = 0; k < d->n_parts; k++)
        if (terms[k] - top > -40)
            sum += exp(terms[k] - top);
    return top + log(sum);
}

void hmmrt_density_logs(const hmmrt_densities *s, const double *x, double *row)
{
    for (int t = 0; t < s->n; t++)
        row[t] = density_log(&s->d[t], s->D, x);
}

/* The largest |k|: a position's densities e^-1.5e9 and beyond are 0 to
 * every path, and L positions of it still fit the column's int64_t exponent. */
#define MOST_K ((double)(1LL << 31))

/* k, the nearest whole number of ln 2 to the largest log-density top (0
 * when every density is 0), within MOST_K. */
static int64_t exponent_of(double top)
{
    double k = nearbyint(top / (double)LN2L);
    return top == -INFINITY ? 0 : k < -MOST_K ? -(int64_t)MOST_K : k > MOST_K ? (int64_t)MOST_K
                                                                              : (int64_t)k;
}

/* Fills row with the logs and returns their exponent_of. */
static int64_t logs_and_exponent(const hmmrt_densities *s, const double *x, double *row)
{
    double top = -INFINITY;
    for (int t = 0; t < s->n; t++) {
        row[t] = density_log(&s->d[t], s->D, x);
        top = row[t] > top ? row[t] : top;
    }
    return exponent_of(top);
}

int64_t hmmrt_density_probs(const hmmrt_densities *s, const double *x, double *row)
{
    int64_t k = logs_and_exponent(s, x, row);
    const double shift = (double)(k * LN2L);
    for (int t = 0; t < s->n; t++)
        row[t] = exp(row[t] - shift);
    return k;
}

int64_t hmmrt_density_probs_wide(const hmmrt_densities *s, const double *x, long double *row)
{
    double top = -INFINITY;
    for (int t = 0; t < s->n; t++) { /* the logs first, in row itself */
        const double l = density_log(&s->d[t], s->D, x);
        row[t] = l;
        top = l > top ? l : top;
    }
    const int64_t k = exponent_of(top);
    const long double shift = k * LN2L;
    for (int t = 0; t < s->n; t++)
        row[t] = expl(row[t] - shift);
    return k;
}

/* A standard normal number (Box-Muller; u1 in (0, 1]). */
static double standard_normal(double (*uniform)(void *), void *state)
{
    double u1 = 1.0 - uniform(state), u2 = uniform(state);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

int hmmrt_density_draw(const hmmrt_density *d, int D, double (*uniform)(void *), void *state,
                       double *x)
{
    int part = 0;
    if (d->log_weights) {
        double total = 0;
        part = -1;
        for (int k = 0; k < d->n_parts; k++)
            if (d->log_weights[k] > -INFINITY) {
                total += exp(d->log_weights[k]);
                part = k;
            }
        if (part < 0)
            return -1;
        double u = uniform(state) * total;
        for (int k = 0; k < d->n_parts; k++)
            if (d->log_weights[k] > -INFINITY && (u -= exp(d->log_weights[k])) < 0) {
                part = k;
                break;
            }
    }
    const hmmrt_gaussian *g = d->parts[part];
    double z[D];
    for (int i = 0; i < D; i++)
        z[i] = standard_normal(uniform, state);
    for (int i = 0; i < D; i++) {
        double v = g->mean[i];
        if (g->diagonal)
            v += g->factor[i] * z[i];
        else
            for (int k = 0; k <= i; k++)
                v += g->factor[(size_t)i * D + k] * z[k];
        x[i] = v;
    }
    return 0;
}
