/* profile_data.c: the generic profile scorer (hmmrt_profile.h): forward and
 * viterbi of a Plan7 profile held as tables, one row of nodes per residue,
 * in double on probabilities rescaled by powers of two (exact), so that its
 * scores are those of the code hmmc specialises to each model. */
#include "hmmrt_profile.h"

#include <math.h>
#include <string.h>

static const double LN2 = 0.693147180559945309417232121458176568;

/* The special moves' weights for this sequence's length. */
static void specials(const hmmrt_profile *p, const double *lw, double *w)
{
    for (int s = 0; s < HMMRT_PX_N; s++)
        w[s] = p->special[s] * (p->special_lw[s] >= 0 ? lw[p->special_lw[s]] : 1.0);
}

/* Keeps the row's largest value near 2^960, as the specialised code keeps
 * its sum: multiplying by a power of two loses nothing. */
static double rescale(double top, double *row, size_t n, double *spec, int n_spec,
                      int64_t *scale)
{
    if (!(top > 0.0) || (top >= 0x1p928 && top <= 0x1p992))
        return 1.0;
    int exponent;
    frexp(top, &exponent);
    const double factor = ldexp(1.0, 960 - exponent);
    for (size_t i = 0; i < n; i++)
        row[i] *= factor;
    for (int i = 0; i < n_spec; i++)
        spec[i] *= factor;
    *scale += exponent - 960;
    return factor;
}

/* One function for both: viterbi takes the larger term where forward adds. */
#define PROFILE_COMBINE(a, b) (VITERBI ? ((a) > (b) ? (a) : (b)) : (a) + (b))

#define VITERBI 0
#define PROFILE_FN profile_sum
#include "profile_data_dp.h"
#undef PROFILE_FN
#undef VITERBI

#define VITERBI 1
#define PROFILE_FN profile_max
#include "profile_data_dp.h"
#undef PROFILE_FN
#undef VITERBI

static int run(double (*fn)(const hmmrt_profile *, const double *, const uint8_t *, int64_t,
                            double *),
               const hmmrt_profile *p, const double *lw, const uint8_t *x, int64_t L,
               hmmrt_scratch *scratch, double *score)
{
    double *rows = hmmrt_scratch_get(scratch, sizeof(double) * 6 * (size_t)p->stride);
    if (!rows)
        return 1;
    *score = fn(p, lw, x, L, rows);
    return 0;
}

int hmmrt_profile_forward(const hmmrt_profile *p, const double *lw, const uint8_t *x, int64_t L,
                          hmmrt_scratch *scratch, double *score)
{
    return run(profile_sum, p, lw, x, L, scratch, score);
}

int hmmrt_profile_viterbi(const hmmrt_profile *p, const double *lw, const uint8_t *x, int64_t L,
                          hmmrt_scratch *scratch, double *score)
{
    return run(profile_max, p, lw, x, L, scratch, score);
}
