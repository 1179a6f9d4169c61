/* sema_length.c: a transition weight written `(EXPR)` of the sequence
 * length L (docs/language.md, "Length-dependent weights"): checked at many
 * lengths, then kept in the model as a length weight, or as a plain number
 * when L does not appear in it. */
#include "sema/sema.h"

#include <math.h>

/* The lengths a weight is checked at: every short length, then powers of
 * ten up to a length no FASTA file reaches. */
static double checked_length(int i)
{
    return i <= 64 ? (double)i : pow(10.0, (double)(i - 64 + 1)); /* 100 ... 1e13 */
}
enum { N_CHECKED = 64 + 1 + 12 };

int sema_length_weight(Arena *a, Diag *d, IrModel *m, Symtab *texts, const Prob *p,
                       double *constant)
{
    const LExpr *e = p->length, *name = lexpr_unknown_name(e);
    if (name) {
        diag_error(d, name->loc, "unknown name '%s' in a length-dependent weight: only L (the "
                   "length of the sequence being scored) may appear there", name->text);
        return -1;
    }
    for (int i = 0; i < N_CHECKED; i++) {
        double L = checked_length(i), v = lexpr_eval(e, L);
        if (isfinite(v) && v >= 0)
            continue;
        diag_error(d, p->loc, "this weight is %s at L = %.0f: a length-dependent weight must be "
                   "finite and >= 0 for every sequence length L >= 0",
                   isnan(v) ? "not a number" : !isfinite(v) ? "infinite" : "negative", L);
        return -1;
    }
    if (!lexpr_uses_length(e)) {
        *constant = lexpr_eval(e, 0);
        return 0;
    }
    const char *c_text = lexpr_c(a, e);
    int n = m->n_length_weights, seen = symtab_put(texts, c_text, n);
    if (seen >= 0) /* written twice: computed once */
        return seen + 1;
    if ((n & (n - 1)) == 0) /* 0, 1, 2, 4...: full, double it */
        m->length_weights = arena_grow(a, m->length_weights, sizeof(IrLengthWeight) * (size_t)n,
                                       sizeof(IrLengthWeight) * (size_t)(n ? 2 * n : 1));
    m->length_weights[n] = (IrLengthWeight){.expr = e, .c_text = c_text, .loc = p->loc};
    m->n_length_weights = n + 1;
    return n + 1;
}
