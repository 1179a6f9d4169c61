/* sema_density.c: continuous observations: checks `alphabet real[D];` and
 * the density emissions gaussian(MEAN, VAR) and mixture(w1 E1, ...), and
 * fills their IR (a gaussian's Cholesky factor is computed here, once, in
 * double), with every error of the contract at its place. */
#include "sema/sema_density.h"

#include <math.h>
#include <string.h>

#include "syntax/number.h"

int sema_real_dim(Diag *diag, const Decl *d)
{
    if (strcmp(d->kind_word.name, "real") != 0) {
        diag_error(diag, d->kind_word.loc, "unknown kind of alphabet '%s': write `alphabet "
                   "real[D];` for observations of D reals, or `alphabet [a, b, ...];` for "
                   "symbols", d->kind_word.name);
        return 0;
    }
    double v = d->real_dim.value;
    if (!(v >= 1 && v <= SEMA_REAL_DIM_MAX && v == floor(v))) {
        diag_error(diag, d->real_dim.loc, "the dimension of a real alphabet is a whole number "
                   "from 1 to %d; '%s' is not", SEMA_REAL_DIM_MAX, d->real_dim.text);
        return 0;
    }
    return (int)v;
}

/* A finite number as written (a mean or a covariance entry); 0 after an error. */
static int finite_value(Diag *diag, const Number *n, double *out, const char *what)
{
    if (!isfinite(n->value)) {
        diag_error(diag, n->loc, "%s '%s' is too large for a double: write a finite number",
                   what, n->text);
        return 0;
    }
    *out = n->value;
    return 1;
}

/* The D values of a vector argument into out; 0 after an error. */
static int vector_values(Diag *diag, const DensityArg *arg, int D, double *out,
                         const char *what, const char *name)
{
    if (arg->kind != DARG_VECTOR) {
        diag_error(diag, arg->loc, "the %ss of gaussian '%s' are a vector of %d number%s: "
                   "write [x1, ..., x%d]", what, name, D, D == 1 ? "" : "s", D);
        return 0;
    }
    const Vector *v = arg->rows;
    if (v->n != D) {
        diag_error(diag, v->loc, "gaussian '%s' has %d %s%s but the alphabet is real[%d]: give "
                   "%d", name, v->n, what, v->n == 1 ? "" : "s", D, D);
        return 0;
    }
    int ok = 1, i = 0;
    for (const NumberList *n = v->values; n; n = n->next, i++)
        ok &= finite_value(diag, &n->num, &out[i], what);
    return ok;
}

/* Training's record of a number's text: the next of e's spans. */
static void record_span(IrEmission *e, const Number *n)
{
    e->spans[e->n_spans++] = (IrSpan){n->begin, n->end};
}

/* The place of entry (i, j) of a covariance matrix. */
static const Number *matrix_entry(const DensityArg *arg, int i, int j)
{
    const Vector *row = arg->rows;
    for (int r = 0; r < i; r++)
        row = row->next;
    const NumberList *n = row->values;
    for (int c = 0; c < j; c++)
        n = n->next;
    return &n->num;
}

/* Cholesky in double: cov = L L^T, L lower triangular into l (D x D,
 * row-major). Returns 0, or k + 1 when the leading (k+1) x (k+1) block is
 * not positive definite. */
static int cholesky(const double *cov, int D, double *l)
{
    for (int i = 0; i < D * D; i++)
        l[i] = 0;
    for (int j = 0; j < D; j++) {
        double s = cov[j * D + j];
        for (int k = 0; k < j; k++)
            s -= l[j * D + k] * l[j * D + k];
        if (!(s > 0) || !isfinite(s))
            return j + 1;
        double d = sqrt(s);
        l[j * D + j] = d;
        for (int i = j + 1; i < D; i++) {
            double t = cov[i * D + j];
            for (int k = 0; k < j; k++)
                t -= l[i * D + k] * l[j * D + k];
            l[i * D + j] = t / d;
        }
    }
    return 0;
}

/* The variances (a vector: diagonal) or the covariance (a D x D matrix) of
 * gaussian e; 0 after an error. */
static int variance(Arena *a, Diag *diag, const DensityArg *arg, int D, IrEmission *e)
{
    if (arg->kind == DARG_VECTOR) {
        double *var = ARENA_ARRAY(a, double, D);
        if (!vector_values(diag, arg, D, var, "variance", e->name))
            return 0;
        int ok = 1, i = 0;
        for (const NumberList *n = arg->rows->values; n; n = n->next, i++)
            if (!(var[i] > 0)) {
                diag_error(diag, n->num.loc, "variance '%s' of gaussian '%s' is not above 0: "
                           "a variance must be > 0", n->num.text, e->name);
                ok = 0;
            }
        if (!ok)
            return 0;
        e->diagonal = 1;
        e->factor = ARENA_ARRAY(a, double, D);
        for (i = 0; i < D; i++)
            e->factor[i] = sqrt(var[i]);
        return 1;
    }
    if (arg->kind != DARG_MATRIX) {
        diag_error(diag, arg->loc, "the second argument of gaussian '%s' is its variances "
                   "[v1, ..., v%d] or its covariance, a %d x %d matrix [[c11, ...], ...]",
                   e->name, D, D, D);
        return 0;
    }
    if (arg->n_rows != D) {
        diag_error(diag, arg->loc, "the covariance of gaussian '%s' has %d row%s but the "
                   "alphabet is real[%d]: give a %d x %d matrix", e->name, arg->n_rows,
                   arg->n_rows == 1 ? "" : "s", D, D, D);
        return 0;
    }
    double *cov = ARENA_ARRAY(a, double, (size_t)D * D);
    int ok = 1, r = 0;
    for (const Vector *row = arg->rows; row; row = row->next, r++) {
        if (row->n != D) {
            diag_error(diag, row->loc, "row %d of the covariance of gaussian '%s' has %d "
                       "value%s but the alphabet is real[%d]: give %d", r + 1, e->name, row->n,
                       row->n == 1 ? "" : "s", D, D);
            ok = 0;
            continue;
        }
        int c = 0;
        for (const NumberList *n = row->values; n; n = n->next, c++)
            ok &= finite_value(diag, &n->num, &cov[r * D + c], "covariance entry");
    }
    if (!ok)
        return 0;
    for (int i = 0; i < D; i++)
        for (int j = i + 1; j < D; j++)
            if (cov[i * D + j] != cov[j * D + i]) {
                const Number *upper = matrix_entry(arg, i, j), *lower = matrix_entry(arg, j, i);
                diag_error(diag, lower->loc, "the covariance of gaussian '%s' is not symmetric: "
                           "entry (%d, %d) is %s but entry (%d, %d) is %s; a covariance must "
                           "equal its transpose", e->name, j + 1, i + 1, lower->text, i + 1,
                           j + 1, upper->text);
                diag_note(diag, upper->loc, "entry (%d, %d) is here", i + 1, j + 1);
                return 0;
            }
    e->factor = ARENA_ARRAY(a, double, (size_t)D * D);
    int bad = cholesky(cov, D, e->factor);
    if (bad) {
        diag_error(diag, arg->loc, "the covariance of gaussian '%s' is not positive definite "
                   "(its leading %d x %d block is not, by Cholesky in double): a covariance "
                   "must be symmetric positive definite", e->name, bad, bad);
        return 0;
    }
    e->diagonal = 0;
    return 1;
}

static void check_gaussian(Arena *a, Diag *diag, IrModel *m, IrEmission *e, const Decl *d)
{
    int D = m->real_dim, n = 0;
    for (const DensityArg *x = d->args; x; x = x->next)
        n++;
    if (n != 2) {
        diag_error(diag, d->loc, "gaussian '%s' has %d argument%s; it takes two, a mean and "
                   "variances or a covariance: gaussian(MEAN, VAR), MEAN %d number%s, VAR %d "
                   "variance%s or a %d x %d covariance", e->name, n, n == 1 ? "" : "s", D,
                   D == 1 ? "" : "s", D, D == 1 ? "" : "s", D, D);
        return;
    }
    e->kind = EMISSION_GAUSSIAN;
    e->mean = ARENA_ARRAY(a, double, D);
    int ok = vector_values(diag, d->args, D, e->mean, "mean value", e->name);
    ok &= variance(a, diag, d->args->next, D, e);
    if (!ok)
        return;
    e->spans = ARENA_ARRAY(a, IrSpan, (size_t)D + (size_t)D * D);
    for (const NumberList *n = d->args->rows->values; n; n = n->next)
        record_span(e, &n->num);
    for (const Vector *row = d->args->next->rows; row; row = row->next)
        for (const NumberList *n = row->values; n; n = n->next)
            record_span(e, &n->num);
    double log_norm = -0.5 * D * log(2 * M_PI);
    for (int i = 0; i < D; i++)
        log_norm -= log(e->factor[e->diagonal ? i : i * D + i]);
    e->log_norm = log_norm;
}

/* The declared kind of emission j: "gaussian", "mixture" or NULL (a table). */
static const char *kind_of(const Decl *const *decls, int j)
{
    return decls[j]->kind_word.name;
}

static void check_mixture(Arena *a, Diag *diag, IrModel *m, IrEmission *e, const Decl *d,
                          const Symtab *names, const Decl *const *decls, int *used)
{
    int n = 0;
    for (const DensityArg *x = d->args; x; x = x->next)
        n++;
    e->kind = EMISSION_MIXTURE;
    e->parts = ARENA_ARRAY(a, int, n ? n : 1);
    e->log_weights = ARENA_ARRAY(a, double, n ? n : 1);
    e->spans = ARENA_ARRAY(a, IrSpan, n ? n : 1);
    if (n == 0) {
        diag_error(diag, d->loc, "mixture '%s' has no components: write mixture(w1 E1, "
                   "w2 E2, ...) with gaussian emissions E1, E2, ...", e->name);
        return;
    }
    int k = 0, any = 0;
    for (const DensityArg *x = d->args; x; x = x->next) {
        if (x->kind != DARG_WEIGHTED) {
            diag_error(diag, x->loc, "a component of mixture '%s' is a weight and the name of "
                       "a gaussian emission of the model (`0.4 g1`)", e->name);
            continue;
        }
        double w = 0;
        int weight_ok = number_prob(diag, &x->weight, &w, "mixture weight");
        int j = symtab_get(names, x->name.name);
        if (j < 0) {
            diag_error(diag, x->name.loc, "unknown emission '%s' in model '%s'", x->name.name,
                       m->name);
            continue;
        }
        used[j] = 1;
        const char *kind = kind_of(decls, j);
        if (!kind || strcmp(kind, "gaussian") != 0) {
            diag_error(diag, x->name.loc, "mixture '%s' combines gaussian emissions only; "
                       "'%s' is %s", e->name, x->name.name,
                       !kind ? "a table of values" : strcmp(kind, "mixture") == 0
                       ? "a mixture (write its gaussians into this mixture instead)"
                       : "not a gaussian");
            continue;
        }
        if (!weight_ok)
            continue;
        e->parts[k] = j;
        e->spans[k] = (IrSpan){prob_begin(&x->weight), prob_end(&x->weight)};
        e->log_weights[k++] = number_prob_log(&x->weight, w);
        any |= w > 0;
    }
    e->n_parts = k;
    e->n_spans = k;
    if (k == n && !any)
        diag_warning(diag, d->loc, "every weight of mixture '%s' is 0, so no path goes through "
                     "a state or move that emits from it; give a component a weight above 0",
                     e->name);
}

void sema_density(Arena *a, Diag *diag, IrModel *m, int index, const Decl *const *decls,
                  const Symtab *names, int *used)
{
    const Decl *d = decls[index];
    IrEmission *e = &m->emissions[index];
    e->logp = ARENA_ARRAY(a, double, 1);
    e->kind = EMISSION_GAUSSIAN; /* until known: refers to nothing */
    if (!d->kind_word.name) {
        diag_error(diag, d->loc, "emission '%s' is a table of values, but model '%s' observes "
                   "vectors of reals (alphabet real[%d]): write gaussian(MEAN, VAR) or "
                   "mixture(w1 E1, ...)", e->name, m->name, m->real_dim);
        return;
    }
    if (strcmp(d->kind_word.name, "gaussian") == 0)
        check_gaussian(a, diag, m, e, d);
    else if (strcmp(d->kind_word.name, "mixture") == 0)
        check_mixture(a, diag, m, e, d, names, decls, used);
    else
        diag_error(diag, d->kind_word.loc, "unknown kind of emission '%s': a real alphabet's "
                   "emissions are gaussian(MEAN, VAR) and mixture(w1 E1, ...)",
                   d->kind_word.name);
}
