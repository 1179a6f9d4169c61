/* sema_sums.c: the guard rail for models written as probabilities: a
 * warning when a state's outgoing weights or an emission table's values sum
 * to more than 1 by more than the rounding of their written digits explains
 * (a typo, most likely), unless the model declares its numbers scores
 * (`hmm NAME scores { ... }`). */
#include "sema/sema.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/symtab.h"

/* What floating-point sums may add to exact ones (1/6 six times). */
#define SUM_FLOAT_SLACK 1e-6
/* The most that the rounding of written digits may excuse: 0.167 six times
 * (1.002) or a CpG table row of 3-decimal values summing to 1.001 pass, but
 * 0.2 six times (1.2) does not, though 1/6 rounds to 0.2: one decimal is
 * too coarse for a probability to hide behind. */
#define SUM_ROUNDING_CAP 0.01
/* Warnings shown per model for states, and for emission tables: a model of
 * scores that does not say so would otherwise get one per state. */
#define SUM_WARNINGS_SHOWN 10

/* ---- how much rounding the written digits may hide ---- */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Half a unit of the last digit of the decimal number at p (digits, a point,
 * an exponent), and in *end the byte after it: 0.167 may be 1/6 rounded, so
 * 0.0005; 0.95 gives 0.005, 1e-5 gives 5e-6. A number written without
 * decimals or exponent (1, 0, 1.) is taken as exact. */
static double rounding_of(const char *p, const char **end)
{
    int point = 0, decimals = 0, has_exponent = 0, negative_exponent = 0;
    long exponent = 0;
    while (is_digit(*p) || (*p == '.' && !point)) {
        if (*p == '.')
            point = 1;
        else if (point)
            decimals++;
        p++;
    }
    if ((*p == 'e' || *p == 'E') &&
        (is_digit(p[1]) || ((p[1] == '+' || p[1] == '-') && is_digit(p[2])))) {
        has_exponent = 1;
        p++;
        if (*p == '+' || *p == '-')
            negative_exponent = *p++ == '-';
        for (; is_digit(*p); p++)
            if (exponent < 1000)
                exponent = exponent * 10 + (*p - '0');
    }
    if (end)
        *end = p;
    if (!decimals && !has_exponent)
        return 0; /* 1, 1. */
    return 0.5 * pow(10.0, (double)((negative_exponent ? -exponent : exponent) - decimals));
}

/* The same for a weight or value as written: NUMBER, or NUMBER / NUMBER
 * (the numerator's rounding, divided). */
static double prob_rounding(const Prob *p)
{
    double r = rounding_of(p->num.text, NULL);
    if (!p->has_den)
        return r;
    return p->den.value > 0 ? r / p->den.value : 0;
}

/* Skips white space and comments inside a matrix. */
static const char *skip_blanks(const char *p)
{
    for (;;) {
        if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '\f' || *p == '\v') {
            p++;
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                p++;
        } else if (p[0] == '/' && p[1] == '*') {
            p += 2;
            while (*p && !(p[0] == '*' && p[1] == '/'))
                p++;
            if (*p)
                p += 2;
        } else {
            return p;
        }
    }
}

/* The rounding of every value of row r of a matrix, read again from the
 * source (only rows whose sum is already above 1 are). */
static double row_rounding(const Matrix *mx, int r)
{
    const char *p = mx->source + mx->rows[r].offset;
    double total = 0;
    for (p = skip_blanks(p); *p && *p != ';' && *p != ']'; p = skip_blanks(p)) {
        if (!is_digit(*p) && *p != '.') {
            p++; /* ',' (anything else was an error, and sums are not checked then) */
            continue;
        }
        double r_num = rounding_of(p, &p);
        const char *after = skip_blanks(p);
        if (*after == '/') {
            const char *den_text = skip_blanks(after + 1);
            const char *den_end = den_text;
            rounding_of(den_text, &den_end);
            double den = strtod(den_text, NULL);
            r_num = den > 0 ? r_num / den : 0;
            p = den_end;
        }
        total += r_num;
    }
    return total;
}

/* The sum, written with as few digits as show that it is above 1. */
static const char *show_sum(char *buf, size_t size, double sum)
{
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, sum);
        if (strtod(buf, NULL) > 1 + SUM_FLOAT_SLACK)
            break;
    }
    return buf;
}

/* rounding: the sum of the rounding of every value written (rounding_of). */
static int over(double sum, double rounding)
{
    return sum > 1 + fmin(rounding, SUM_ROUNDING_CAP) + SUM_FLOAT_SLACK;
}

/* ---- states ---- */

/* The rounding of the weights written for each state of over_one (states
 * whose sum is above 1): one walk over the declarations. */
static double *state_roundings(Arena *a, const Model *ast, const IrModel *m,
                               const unsigned char *over_one)
{
    double *rounding = ARENA_ARRAY(a, double, m->n_states);
    Symtab states;
    symtab_init(&states, a);
    for (int s = 0; s < m->n_states; s++)
        symtab_put(&states, m->states[s].name, s);
    for (const Decl *d = ast->decls; d; d = d->next) {
        if (d->kind == DECL_TRANSITION) {
            int s = symtab_get(&states, d->from.name);
            if (s >= 0 && over_one[s])
                rounding[s] += prob_rounding(&d->weight);
        } else if (d->kind == DECL_MATRIX) {
            const IdentList *source = d->sources;
            for (int r = 0; source && r < d->matrix->n_rows; r++, source = source->next) {
                int s = symtab_get(&states, source->id.name);
                if (s >= 0 && over_one[s])
                    rounding[s] += row_rounding(d->matrix, r);
            }
        }
    }
    return rounding;
}

/* A state's weights are summed without its silent move into the end state:
 * that weight is the chance of ending there, and a model whose sequences may
 * end anywhere (as hmmlearn's and pomegranate's do) writes `X -> end 1`
 * beside weights that sum to 1. It is checked on its own: at most 1. */
static void check_states(Arena *a, Diag *d, const Model *ast, const IrModel *m)
{
    int n = m->n_states ? m->n_states : 1, any = 0;
    double *sum = ARENA_ARRAY(a, double, n), *to_end = ARENA_ARRAY(a, double, n);
    unsigned char *over_one = ARENA_ARRAY(a, unsigned char, n);
    unsigned char *by_length = ARENA_ARRAY(a, unsigned char, n);
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        by_length[mv->from] |= mv->length_weight != 0;
        if (mv->to == m->end && mv->emission < 0)
            to_end[mv->from] += exp(mv->lw_sum);
        else
            sum[mv->from] += exp(mv->lw_sum);
    }
    /* a state with a length-dependent weight out of it is not checked: its
       sum changes with the length */
    for (int s = 0; s < m->n_states; s++)
        any |= over_one[s] = !by_length[s] && (over(sum[s], 0) || over(to_end[s], 0));
    if (!any)
        return;
    double *rounding = state_roundings(a, ast, m, over_one);
    char shown[64];
    int n_over = 0;
    for (int s = 0; s < m->n_states; s++) {
        if (!over_one[s])
            continue;
        int row = over(sum[s], rounding[s]), end = over(to_end[s], rounding[s]);
        if ((!row && !end) || ++n_over > SUM_WARNINGS_SHOWN)
            continue;
        if (row)
            diag_warning(d, m->states[s].loc,
                         "the weights of the transitions out of state '%s' sum to %s, more than "
                         "1: if they are probabilities, check them for a typo; if the numbers of "
                         "model '%s' are scores, say so with `hmm %s scores { ... }`",
                         m->states[s].name, show_sum(shown, sizeof shown, sum[s]), m->name,
                         m->name);
        else
            diag_warning(d, m->states[s].loc,
                         "the weight of the move from state '%s' into the end state is %s, more "
                         "than 1: if it is a probability, check it for a typo; if the numbers of "
                         "model '%s' are scores, say so with `hmm %s scores { ... }`",
                         m->states[s].name, show_sum(shown, sizeof shown, to_end[s]), m->name,
                         m->name);
    }
    if (n_over > SUM_WARNINGS_SHOWN)
        diag_warning(d, m->loc, "and %d more states of model '%s' whose weights sum to more "
                     "than 1", n_over - SUM_WARNINGS_SHOWN, m->name);
}

/* ---- emission tables ---- */

static void check_emissions(Diag *d, const Model *ast, const IrModel *m)
{
    int e = 0, n_over = 0;
    char shown[64];
    for (const Decl *x = ast->decls; x && e < m->n_emissions; x = x->next) {
        if (x->kind != DECL_EMISSION)
            continue;
        const IrEmission *em = &m->emissions[e++];
        double sum = 0, rounding = 0;
        for (int k = 0; k < m->K; k++)
            sum += exp(em->logp[k]);
        if (!over(sum, 0))
            continue;
        for (const EmissionEntry *v = x->entries; v; v = v->next)
            rounding += prob_rounding(&v->p);
        if (!over(sum, rounding) || ++n_over > SUM_WARNINGS_SHOWN)
            continue;
        diag_warning(d, em->loc,
                     "the values of emission '%s' sum to %s, more than 1: if they are "
                     "probabilities, check them for a typo; if the numbers of model '%s' are "
                     "scores, say so with `hmm %s scores { ... }`",
                     em->name, show_sum(shown, sizeof shown, sum), m->name, m->name);
    }
    if (n_over > SUM_WARNINGS_SHOWN)
        diag_warning(d, m->loc, "and %d more emission tables of model '%s' whose values sum to "
                     "more than 1", n_over - SUM_WARNINGS_SHOWN, m->name);
}

void sema_check_sums(Arena *a, Diag *d, const Model *ast, const IrModel *m)
{
    if (ast->scores)
        return;
    check_states(a, d, ast, m);
    check_emissions(d, ast, m);
}
