/* train_real.c: --train over real observations (train_real.h). The E-step
 * adds, for every gaussian, the expected uses W, sum of x and sum of x x^T
 * (x^2 for a diagonal one), centred on its mean before the update, and for
 * every mixture the expected uses of each component; the M-step sets means,
 * variances or covariances (plus --min-variance) and mixture weights. A
 * gaussian written once is one set of numbers, whoever uses it. */
#include "train_real.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "real_read.h"

struct real_trainer {
    const hmmrt_model *model;
    int D, n;             /* observation size; the model's emissions */
    /* the densities as training changes them */
    hmmrt_gaussian *g;    /* n: emission em's gaussian (a gaussian emission only) */
    double *means, *factors; /* n x D, n x D x D */
    const hmmrt_gaussian **parts; /* the mixtures' parts, into g */
    double *log_weights;
    hmmrt_density *d;
    hmmrt_densities dens;
    int *is_gaussian;     /* n: 1 gaussian, 0 mixture */
    int *diagonal;        /* n */
    int **part_of;        /* n: a mixture's parts as emission indexes */
    /* the numbers, parallel to model->density_span: a gaussian's means then
     * variances or covariance; a mixture's weights */
    const int *at;
    double *params, *kept;
    unsigned char *changed, *kept_changed;
    size_t *stat_at;      /* n + 1: each emission's statistics */
    /* the corpus */
    hmmrt_real_file *files;
    int n_files;
    int64_t n_seqs;
    const double **obs;
    int64_t *length;
    char **names;
};

static int fixed(const real_trainer *r, int em)
{
    return r->model->emission_fixed && r->model->emission_fixed[em];
}

/* ---- preparing ------------------------------------------------------------- */

/* The gaussian's covariance from its factor (C = L L^T), into cov (D or D x D). */
static void covariance_of(const hmmrt_gaussian *g, int D, double *cov)
{
    if (g->diagonal) {
        for (int i = 0; i < D; i++)
            cov[i] = g->factor[i] * g->factor[i];
        return;
    }
    for (int i = 0; i < D; i++)
        for (int j = 0; j <= i; j++) {
            double s = 0;
            for (int k = 0; k <= j; k++)
                s += g->factor[(size_t)i * D + k] * g->factor[(size_t)j * D + k];
            cov[(size_t)i * D + j] = cov[(size_t)j * D + i] = s;
        }
}

/* The emission whose gaussian is p (a gaussian emission), or -1. */
static int emission_of(const hmmrt_densities *s, const hmmrt_gaussian *p)
{
    for (int em = 0; em < s->n; em++)
        if (!s->d[em].log_weights && s->d[em].n_parts == 1 && s->d[em].parts[0] == p)
            return em;
    return -1;
}

void real_trainer_free(real_trainer *r)
{
    if (!r)
        return;
    free(r->g), free(r->means), free(r->factors), free(r->parts), free(r->log_weights);
    free(r->d), free(r->is_gaussian), free(r->diagonal);
    if (r->part_of)
        for (int em = 0; em < r->n; em++)
            free(r->part_of[em]);
    free(r->part_of);
    free(r->params), free(r->kept), free(r->changed), free(r->kept_changed), free(r->stat_at);
    for (int f = 0; f < r->n_files; f++)
        hmmrt_real_free(&r->files[f]);
    free(r->files), free(r->obs), free(r->length), free(r->names);
    free(r);
}

real_trainer *real_trainer_new(const hmmrt_model *m, int *status)
{
    const hmmrt_densities *s = m->densities;
    *status = HMMRT_EXIT_USAGE;
    if (!s || !m->density_span_at || !m->density_span) {
        hmmrt_error("model %s cannot be trained: this program does not carry the places of its "
                    "densities' numbers (compile it again with this hmmc)", m->name);
        return NULL;
    }
    *status = HMMRT_EXIT_INTERNAL; /* from here on, out of memory */
    real_trainer *r = calloc(1, sizeof *r);
    if (!r)
        goto oom;
    const int D = s->D, n = s->n;
    const size_t DD = (size_t)D * (size_t)D;
    r->model = m, r->D = D, r->n = n, r->at = m->density_span_at;
    size_t n_parts = 0;
    for (int em = 0; em < n; em++)
        n_parts += (size_t)s->d[em].n_parts;
    const size_t n_params = (size_t)m->density_span_at[n];
    r->g = calloc((size_t)n + 1, sizeof *r->g);
    r->means = calloc((size_t)n * D + 1, sizeof *r->means);
    r->factors = calloc((size_t)n * DD + 1, sizeof *r->factors);
    r->parts = calloc(n_parts + 1, sizeof *r->parts);
    r->log_weights = calloc(n_parts + 1, sizeof *r->log_weights);
    r->d = calloc((size_t)n + 1, sizeof *r->d);
    r->is_gaussian = calloc((size_t)n + 1, sizeof *r->is_gaussian);
    r->diagonal = calloc((size_t)n + 1, sizeof *r->diagonal);
    r->part_of = calloc((size_t)n + 1, sizeof *r->part_of);
    r->params = calloc(n_params + 1, sizeof *r->params);
    r->kept = calloc(n_params + 1, sizeof *r->kept);
    r->changed = calloc(n_params + 1, 1);
    r->kept_changed = calloc(n_params + 1, 1);
    r->stat_at = calloc((size_t)n + 1, sizeof *r->stat_at);
    if (!r->g || !r->means || !r->factors || !r->parts || !r->log_weights || !r->d ||
        !r->is_gaussian || !r->diagonal || !r->part_of || !r->params || !r->kept ||
        !r->changed || !r->kept_changed || !r->stat_at)
        goto oom;
    /* the gaussians first: the mixtures point at them */
    for (int em = 0; em < n; em++) {
        const hmmrt_density *src = &s->d[em];
        if (src->log_weights || src->n_parts != 1)
            continue;
        const hmmrt_gaussian *g = src->parts[0];
        r->is_gaussian[em] = 1;
        r->diagonal[em] = g->diagonal;
        double *mean = r->means + (size_t)em * D, *factor = r->factors + (size_t)em * DD;
        memcpy(mean, g->mean, (size_t)D * sizeof *mean);
        memcpy(factor, g->factor, (g->diagonal ? (size_t)D : DD) * sizeof *factor);
        r->g[em] = (hmmrt_gaussian){g->diagonal, mean, factor, g->log_norm};
        double *p = r->params + m->density_span_at[em];
        memcpy(p, g->mean, (size_t)D * sizeof *p);
        covariance_of(g, D, p + D);
    }
    size_t next_part = 0, stats = 0;
    for (int em = 0; em < n; em++) {
        const hmmrt_density *src = &s->d[em];
        r->stat_at[em] = stats;
        if (r->is_gaussian[em]) {
            r->d[em] = (hmmrt_density){1, (const hmmrt_gaussian *const *)r->parts + next_part, NULL};
            r->parts[next_part++] = &r->g[em];
            stats += 1 + (size_t)D + (r->diagonal[em] ? (size_t)D : DD);
            continue;
        }
        r->part_of[em] = malloc(((size_t)src->n_parts + 1) * sizeof *r->part_of[em]);
        if (!r->part_of[em])
            goto oom;
        double *w = r->params + m->density_span_at[em];
        for (int k = 0; k < src->n_parts; k++) {
            int part = emission_of(s, src->parts[k]);
            if (part < 0) {
                hmmrt_error("model %s cannot be trained: a part of mixture %d is not one of its "
                            "gaussian emissions (an internal error)", m->name, em);
                real_trainer_free(r);
                return NULL;
            }
            r->part_of[em][k] = part;
            r->parts[next_part + (size_t)k] = &r->g[part];
            r->log_weights[next_part + (size_t)k] = src->log_weights[k];
            w[k] = exp(src->log_weights[k]);
        }
        r->d[em] = (hmmrt_density){src->n_parts,
                                   (const hmmrt_gaussian *const *)r->parts + next_part,
                                   r->log_weights + next_part};
        next_part += (size_t)src->n_parts;
        stats += (size_t)src->n_parts;
    }
    r->stat_at[n] = stats;
    r->dens = (hmmrt_densities){D, n, r->d};
    *status = 0;
    return r;
oom:
    hmmrt_error("out of memory while preparing model %s for training", m->name);
    real_trainer_free(r);
    return NULL;
}

/* ---- reading ------------------------------------------------------------- */

int real_read_corpus(real_trainer *r, const hmmrt_options *o, int64_t *n, char ***names,
                     int64_t *longest)
{
    r->files = calloc((size_t)o->n_files + 1, sizeof *r->files);
    if (!r->files) {
        hmmrt_error("out of memory while reading the observations");
        return HMMRT_EXIT_INTERNAL;
    }
    char err[2048];
    int64_t total = 0;
    for (int f = 0; f < o->n_files; f++) {
        int status = hmmrt_real_read(o->files[f], r->D, &r->files[f], err, sizeof err);
        r->n_files = f + 1;
        if (status != 0) {
            hmmrt_error("%s", err);
            return r->files[f].out_of_memory ? HMMRT_EXIT_INTERNAL : HMMRT_EXIT_INPUT;
        }
        total += r->files[f].n;
    }
    if (total == 0) {
        hmmrt_error("no sequence to train on in the files given");
        return HMMRT_EXIT_INPUT;
    }
    r->obs = malloc((size_t)total * sizeof *r->obs);
    r->length = malloc((size_t)total * sizeof *r->length);
    r->names = malloc((size_t)total * sizeof *r->names);
    if (!r->obs || !r->length || !r->names) {
        hmmrt_error("out of memory while reading the observations");
        return HMMRT_EXIT_INTERNAL;
    }
    *longest = 0;
    for (int f = 0; f < r->n_files; f++)
        for (int64_t i = 0; i < r->files[f].n; i++) {
            const hmmrt_real_seq *q = &r->files[f].seqs[i];
            r->obs[r->n_seqs] = q->obs;
            r->length[r->n_seqs] = q->length;
            r->names[r->n_seqs++] = q->name;
            if (q->length > *longest)
                *longest = q->length;
        }
    *n = r->n_seqs;
    *names = r->names;
    return 0;
}

/* ---- the expectation step ----------------------------------------------------- */

int64_t real_length(const real_trainer *r, int64_t i) { return r->length[i]; }

size_t real_stats_size(const real_trainer *r) { return r->stat_at[r->n]; }

size_t real_scratch(const real_trainer *r, int64_t L)
{
    return 2 * ((size_t)L + 1) * (size_t)r->n;
}

/* Adds observation x, used u times, to gaussian em's statistics, centred on
 * its mean (the sums of x - mean keep their digits where x is far from 0). */
static void add_to_gaussian(const real_trainer *r, int em, const double *x, double u,
                            double *stats)
{
    const int D = r->D;
    double *s = stats + r->stat_at[em], *s1 = s + 1, *s2 = s1 + D;
    const double *mean = r->g[em].mean;
    double z[D];
    for (int i = 0; i < D; i++)
        z[i] = x[i] - mean[i];
    s[0] += u;
    for (int i = 0; i < D; i++)
        s1[i] += u * z[i];
    if (r->diagonal[em]) {
        for (int i = 0; i < D; i++)
            s2[i] += u * z[i] * z[i];
        return;
    }
    for (int i = 0; i < D; i++) {
        const double uz = u * z[i];
        for (int j = 0; j <= i; j++) /* the lower triangle; the M-step mirrors it */
            s2[(size_t)i * D + j] += uz * z[j];
    }
}

/* Mixture em at x, used u times: each part's share (its responsibility,
 * w_k N_k(x) / sum) to its weight's count and to its gaussian. */
static void add_to_mixture(const real_trainer *r, int em, const double *x, double u,
                           double *stats)
{
    const hmmrt_density *d = &r->d[em];
    double terms[d->n_parts > 0 ? d->n_parts : 1];
    double top = -INFINITY;
    for (int k = 0; k < d->n_parts; k++) {
        terms[k] = d->log_weights[k] == -INFINITY
                       ? -INFINITY
                       : d->log_weights[k] + hmmrt_gaussian_log(d->parts[k], r->D, x);
        top = terms[k] > top ? terms[k] : top;
    }
    if (top == -INFINITY)
        return;
    double sum = 0;
    for (int k = 0; k < d->n_parts; k++)
        sum += terms[k] = exp(terms[k] - top);
    double *counts = stats + r->stat_at[em];
    for (int k = 0; k < d->n_parts; k++) {
        const double share = u * terms[k] / sum;
        if (share > 0) {
            counts[k] += share;
            add_to_gaussian(r, r->part_of[em][k], x, share, stats);
        }
    }
}

double real_expect(const real_trainer *r, const hmmrt_fb *fb, int64_t i, int viterbi,
                   double *scratch, double *move_counts, double *stats)
{
    const int64_t L = r->length[i];
    const double *obs = r->obs[i];
    const size_t n = (size_t)r->n;
    double *rows = scratch, *uses = rows + ((size_t)L + 1) * n;
    double *fb_scratch = uses + ((size_t)L + 1) * n;
    memset(uses, 0, (size_t)L * n * sizeof *uses);
    double lnp;
    if (viterbi) {
        hmmrt_real_log_rows(&r->dens, obs, L, rows);
        lnp = hmmrt_fb_viterbi_counts_rows(fb, rows, L, fb_scratch, move_counts, uses);
    } else {
        const long double shift = hmmrt_real_rows(&r->dens, obs, L, rows);
        lnp = hmmrt_fb_run_rows(fb, rows, L, fb_scratch, move_counts, uses, NULL);
        if (lnp != -INFINITY)
            lnp = (double)(lnp + shift);
    }
    if (lnp == -INFINITY || !isfinite(lnp))
        return -INFINITY;
    for (int64_t p = 0; p < L; p++) {
        const double *x = obs + (size_t)p * (size_t)r->D, *u = uses + (size_t)p * n;
        for (size_t em = 0; em < n; em++) {
            if (!(u[em] > 0))
                continue;
            if (r->is_gaussian[em])
                add_to_gaussian(r, (int)em, x, u[em], stats);
            else
                add_to_mixture(r, (int)em, x, u[em], stats);
        }
    }
    return lnp;
}

const hmmrt_densities *real_densities(const real_trainer *r) { return &r->dens; }
const double *const *real_observations(const real_trainer *r) { return r->obs; }
const int64_t *real_lengths(const real_trainer *r) { return r->length; }

void real_add_gpu_stats(const real_trainer *r, const double *gauss, const int64_t *gauss_at,
                        const double *parts, const int *part_start, double *stats)
{
    const int D = r->D;
    int j = 0; /* the distinct gaussians: r->g in emission order */
    for (int em = 0; em < r->n; em++) {
        if (!r->is_gaussian[em])
            continue;
        const double *src = gauss + gauss_at[j++];
        double *s = stats + r->stat_at[em], *s2 = s + 1 + D;
        for (int i = 0; i <= D; i++)
            s[i] += src[i];
        const double *t = src + 1 + D;
        if (r->diagonal[em]) {
            for (int i = 0; i < D; i++)
                s2[i] += t[i];
            continue;
        }
        for (int i = 0, e = 0; i < D; i++)
            for (int k = 0; k <= i; k++, e++)
                s2[(size_t)i * D + k] += t[e];
    }
    for (int em = 0; em < r->n; em++) {
        if (r->is_gaussian[em])
            continue;
        const hmmrt_density *d = &r->d[em];
        double *counts = stats + r->stat_at[em];
        for (int k = 0, p = part_start[em]; k < d->n_parts; k++)
            if (d->log_weights[k] != -INFINITY)
                counts[k] += parts[p++];
    }
}

/* ---- the maximisation step ---------------------------------------------------- */

int real_has_free_parameter(const real_trainer *r)
{
    for (int em = 0; em < r->n; em++) {
        if (fixed(r, em))
            continue;
        if (r->is_gaussian[em])
            return 1;
        int above = 0;
        for (int k = 0; k < r->d[em].n_parts; k++)
            above += r->d[em].log_weights[k] > -INFINITY;
        if (above > 1)
            return 1;
    }
    return 0;
}

/* Cholesky of cov (D x D) into l: 0, or -1 when cov is not positive definite. */
static int cholesky(const double *cov, int D, double *l)
{
    for (int j = 0; j < D; j++) {
        double s = cov[(size_t)j * D + j];
        for (int k = 0; k < j; k++)
            s -= l[(size_t)j * D + k] * l[(size_t)j * D + k];
        if (!(s > 0) || !isfinite(s))
            return -1;
        const double dj = sqrt(s);
        l[(size_t)j * D + j] = dj;
        for (int i = j + 1; i < D; i++) {
            double t = cov[(size_t)i * D + j];
            for (int k = 0; k < j; k++)
                t -= l[(size_t)i * D + k] * l[(size_t)j * D + k];
            l[(size_t)i * D + j] = t / dj;
        }
        for (int i = 0; i < j; i++)
            l[(size_t)i * D + j] = 0;
    }
    return 0;
}

/* The name of emission em, for messages. */
static const char *name_of(const real_trainer *r, int em)
{
    static char number[32];
    if (r->model->emission_names)
        return r->model->emission_names[em];
    snprintf(number, sizeof number, "#%d", em + 1);
    return number;
}

/* Gaussian em from its statistics; -1 with why in err. */
static int fit_gaussian(real_trainer *r, int em, const double *stats, double min_variance,
                        char *err, size_t errlen)
{
    const int D = r->D;
    const size_t DD = (size_t)D * (size_t)D;
    const double *s = stats + r->stat_at[em], *s1 = s + 1, *s2 = s1 + D;
    const double W = s[0];
    if (!(W > 0))
        return 0; /* no expected use: kept as it is */
    hmmrt_gaussian *g = &r->g[em];
    double delta[D];
    for (int i = 0; i < D; i++)
        delta[i] = s1[i] / W;
    double *p = r->params + r->at[em], *mean = p, *cov = p + D;
    const size_t entries = r->diagonal[em] ? (size_t)D : DD;
    /* on the heap: a full covariance of D = 4096 is 128 MB */
    double *new_cov = malloc(2 * entries * sizeof *new_cov), *factor = new_cov + entries;
    if (!new_cov) {
        snprintf(err, errlen, "out of memory for the covariance of gaussian '%s'", name_of(r, em));
        return -1;
    }
    if (r->diagonal[em]) {
        for (int i = 0; i < D; i++) {
            new_cov[i] = s2[i] / W - delta[i] * delta[i] + min_variance;
            if (!(new_cov[i] > 0) || !isfinite(new_cov[i])) {
                snprintf(err, errlen, "variance %d of gaussian '%s' came out %g (its expected "
                         "uses, %g, all at one value there); raise --min-variance above 0",
                         i + 1, name_of(r, em), new_cov[i], W);
                free(new_cov);
                return -1;
            }
        }
    } else {
        for (int i = 0; i < D; i++)
            for (int j = 0; j <= i; j++) {
                double c = s2[(size_t)i * D + j] / W - delta[i] * delta[j];
                if (i == j)
                    c += min_variance;
                new_cov[(size_t)i * D + j] = new_cov[(size_t)j * D + i] = c;
            }
    }
    if (r->diagonal[em]) {
        for (int i = 0; i < D; i++)
            factor[i] = sqrt(new_cov[i]);
    } else if (cholesky(new_cov, D, factor) != 0) {
        snprintf(err, errlen, "the covariance of gaussian '%s' is not positive definite after "
                 "the update (its expected uses, %g, lie on fewer than %d dimensions); raise "
                 "--min-variance above 0, or mark it `fixed`", name_of(r, em), W, D);
        free(new_cov);
        return -1;
    }
    for (int i = 0; i < D; i++)
        mean[i] = g->mean[i] + delta[i];
    memcpy(cov, new_cov, entries * sizeof *cov);
    memcpy((double *)g->mean, mean, (size_t)D * sizeof *mean);
    memcpy((double *)g->factor, factor, entries * sizeof *factor);
    free(new_cov);
    double log_norm = -0.5 * D * log(2 * M_PI);
    for (int i = 0; i < D; i++)
        log_norm -= log(g->factor[r->diagonal[em] ? (size_t)i : (size_t)i * D + i]);
    g->log_norm = log_norm;
    memset(r->changed + r->at[em], 1, (size_t)(r->at[em + 1] - r->at[em]));
    return 0;
}

/* Mixture em's weights in proportion to their counts plus c, keeping their
 * sum; zeros stay zero; no expected use keeps them. */
static void fit_mixture(real_trainer *r, int em, const double *stats, double c)
{
    const hmmrt_density *d = &r->d[em];
    const double *counts = stats + r->stat_at[em];
    double *w = r->params + r->at[em], *lw = (double *)d->log_weights;
    double total = 0, used = 0, denominator = 0;
    int n_free = 0;
    for (int k = 0; k < d->n_parts; k++)
        if (w[k] > 0) {
            total += w[k];
            used += counts[k];
            denominator += counts[k] + c;
            n_free++;
        }
    if (n_free < 2 || !(used > 0) || !(denominator > 0))
        return;
    for (int k = 0; k < d->n_parts; k++)
        if (w[k] > 0) {
            w[k] = total * (counts[k] + c) / denominator;
            lw[k] = w[k] > 0 ? log(w[k]) : -INFINITY;
            r->changed[r->at[em] + k] = 1;
        }
}

int real_maximise(real_trainer *r, const double *stats, double min_variance, double c,
                  char *err, size_t errlen)
{
    /* the weights first: the responsibilities were taken with the old parts */
    for (int em = 0; em < r->n; em++)
        if (!r->is_gaussian[em] && !fixed(r, em))
            fit_mixture(r, em, stats, c);
    for (int em = 0; em < r->n; em++)
        if (r->is_gaussian[em] && !fixed(r, em) &&
            fit_gaussian(r, em, stats, min_variance, err, errlen) != 0)
            return -1;
    return 0;
}

/* ---- the fitted source -------------------------------------------------------- */

void real_keep(real_trainer *r)
{
    const size_t n = (size_t)r->at[r->n];
    memcpy(r->kept, r->params, n * sizeof *r->kept);
    memcpy(r->kept_changed, r->changed, n);
}

void real_replacements(const real_trainer *r, int kept,
                       void (*add)(void *context, int64_t begin, int64_t end, double value),
                       void *context)
{
    const double *v = kept ? r->kept : r->params;
    const unsigned char *changed = kept ? r->kept_changed : r->changed;
    const hmmrt_span *span = r->model->density_span;
    for (int j = 0; j < r->at[r->n]; j++)
        if (changed[j] && span[j].begin >= 0)
            add(context, span[j].begin, span[j].end, v[j]);
}
