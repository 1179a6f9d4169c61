/* sema_model.c: checks one `hmm` block and builds its model IR: names,
 * alphabet, emissions, transitions and numbers, with every error of the
 * language contract reported at its place. Whole-model checks (silent
 * cycles, reachability) are in sema_graph.c. */
#include "sema.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "symtab.h"

/* Everything known about one model while it is checked. */
typedef struct ModelScope {
    Arena *arena;
    Diag *diag;
    const Model *ast;
    Symtab states;     /* name -> state index */
    Symtab emissions;  /* name -> emission index */
    Symtab symbols;    /* one-character name -> symbol index */
    Symtab pairs;      /* (from, to) -> index of the declaration's transition */
    const Decl *alphabet, *start, *end;
    IrModel *m;
    const Decl **state_decl;    /* per state, its declaration */
    const Decl **emission_decl; /* per emission, its declaration */
    int *emission_used;
} ModelScope;

/* The value of a written number: checks sign, overflow and underflow. */
static int number_value(ModelScope *sc, const Number *n, double *out, const char *what)
{
    if (n->negative) {
        diag_error(sc->diag, n->loc, "%s must be >= 0, not %s", what, n->text);
        return 0;
    }
    if (!isfinite(n->value)) {
        diag_error(sc->diag, n->loc, "%s %s is too large to represent", what, n->text);
        return 0;
    }
    if (n->value == 0 && strpbrk(n->text, "123456789")) {
        diag_error(sc->diag, n->loc, "%s %s is too small to represent; write 0 if you mean 0", what,
                   n->text);
        return 0;
    }
    *out = n->value;
    return 1;
}

/* The value of NUMBER or NUMBER / NUMBER, finite and >= 0; 0 on error. */
static int prob_value(ModelScope *sc, const Prob *p, double *out, const char *what)
{
    double num, den = 1;
    if (!number_value(sc, &p->num, &num, what))
        return 0;
    if (p->has_den) {
        if (!number_value(sc, &p->den, &den, what))
            return 0;
        if (den == 0) {
            diag_error(sc->diag, p->den.loc, "division by zero in %s %s/%s", what, p->num.text,
                       p->den.text);
            return 0;
        }
    }
    double v = num / den;
    if (!isfinite(v) || (v == 0 && num != 0)) {
        diag_error(sc->diag, p->loc, "%s %s/%s cannot be represented", what, p->num.text,
                   p->den.text);
        return 0;
    }
    *out = v;
    return 1;
}

static double log_of(double v) { return v > 0 ? log(v) : -INFINITY; }

/* Reports a second declaration of something that must appear once. */
static int once(ModelScope *sc, const Decl **slot, const Decl *d, const char *what)
{
    if (*slot) {
        diag_error(sc->diag, d->loc, "model '%s' has a second %s", sc->ast->name.name, what);
        diag_note(sc->diag, (*slot)->loc, "the first %s is here", what);
        return 0;
    }
    *slot = d;
    return 1;
}

static void check_alphabet(ModelScope *sc, const Decl *d)
{
    if (!once(sc, &sc->alphabet, d, "alphabet"))
        return;
    int k = 0;
    for (const SymbolList *s = d->symbols; s; s = s->next)
        k++;
    char *symbols = arena_alloc(sc->arena, (size_t)k + 1);
    k = 0;
    for (const SymbolList *s = d->symbols; s; s = s->next) {
        const Symbol *sym = &s->sym;
        if (strlen(sym->text) != 1) {
            diag_error(sc->diag, sym->loc,
                       "alphabet symbols are single characters; '%s' has %zu", sym->text,
                       strlen(sym->text));
            continue;
        }
        int prev = symtab_put(&sc->symbols, sym->text, k);
        if (prev >= 0) {
            diag_error(sc->diag, sym->loc, "symbol '%s' is listed twice in the alphabet", sym->text);
            continue;
        }
        symbols[k++] = sym->text[0];
    }
    if (k == 0 && !d->symbols)
        diag_error(sc->diag, d->loc, "the alphabet is empty: list at least one symbol");
    sc->m->symbols = symbols;
    sc->m->K = k;
}

/* Adds a state; reports a name used twice. */
static void declare_state(ModelScope *sc, const Decl *d, StateKind kind)
{
    IrModel *m = sc->m;
    int prev = symtab_put(&sc->states, d->name.name, m->n_states);
    if (prev >= 0) {
        diag_error(sc->diag, d->name.loc, "state '%s' is declared twice", d->name.name);
        diag_note(sc->diag, sc->state_decl[prev]->name.loc, "the first declaration is here");
        return;
    }
    IrState *st = &m->states[m->n_states];
    st->name = d->name.name;
    st->loc = d->name.loc;
    st->kind = kind;
    st->emission = -1;
    st->aux_of = -1;
    sc->state_decl[m->n_states] = d;
    if (kind == STATE_START)
        m->start = m->n_states;
    if (kind == STATE_END)
        m->end = m->n_states;
    m->n_states++;
}

static void declare_emission(ModelScope *sc, const Decl *d)
{
    IrModel *m = sc->m;
    int prev = symtab_put(&sc->emissions, d->name.name, m->n_emissions);
    if (prev >= 0) {
        diag_error(sc->diag, d->name.loc, "emission '%s' is declared twice", d->name.name);
        diag_note(sc->diag, sc->emission_decl[prev]->name.loc, "the first declaration is here");
        return;
    }
    IrEmission *e = &m->emissions[m->n_emissions];
    e->name = d->name.name;
    e->loc = d->name.loc;
    sc->emission_decl[m->n_emissions] = d;
    m->n_emissions++;
}

/* Fills an emission's values once the alphabet is known. */
static void check_emission_values(ModelScope *sc, int index)
{
    const Decl *d = sc->emission_decl[index];
    IrEmission *e = &sc->m->emissions[index];
    int K = sc->m->K;
    e->logp = ARENA_ARRAY(sc->arena, double, K ? K : 1);
    if (!d->is_dict) {
        int n = 0;
        for (const EmissionEntry *x = d->entries; x; x = x->next)
            n++;
        if (n != K) {
            diag_error(sc->diag, d->loc,
                       "emission '%s' has %d value%s but the alphabet has %d symbol%s; give one "
                       "value per symbol, in alphabet order",
                       d->name.name, n, n == 1 ? "" : "s", K, K == 1 ? "" : "s");
            return;
        }
        int k = 0;
        for (const EmissionEntry *x = d->entries; x; x = x->next, k++) {
            double v = 0;
            prob_value(sc, &x->p, &v, "emission value");
            e->logp[k] = log_of(v);
        }
        return;
    }
    for (int k = 0; k < K; k++)
        e->logp[k] = -INFINITY;
    Symtab seen;
    symtab_init(&seen, sc->arena);
    for (const EmissionEntry *x = d->entries; x; x = x->next) {
        int k = symtab_get(&sc->symbols, x->sym.text);
        if (k < 0) {
            diag_error(sc->diag, x->sym.loc, "symbol '%s' is not in the alphabet of model '%s'",
                       x->sym.text, sc->ast->name.name);
            continue;
        }
        if (symtab_put(&seen, x->sym.text, k) >= 0) {
            diag_error(sc->diag, x->sym.loc, "symbol '%s' is given twice in emission '%s'",
                       x->sym.text, d->name.name);
            continue;
        }
        double v = 0;
        if (prob_value(sc, &x->p, &v, "emission value"))
            e->logp[k] = log_of(v);
    }
}

/* The emission named by `emits`, or -1 with an error. */
static int lookup_emission(ModelScope *sc, const Ident *name)
{
    int e = symtab_get(&sc->emissions, name->name);
    if (e < 0)
        diag_error(sc->diag, name->loc, "unknown emission '%s' in model '%s'", name->name,
                   sc->ast->name.name);
    else
        sc->emission_used[e] = 1;
    return e;
}

static int lookup_state(ModelScope *sc, const Ident *name)
{
    int s = symtab_get(&sc->states, name->name);
    if (s < 0)
        diag_error(sc->diag, name->loc, "unknown state '%s' in model '%s'", name->name,
                   sc->ast->name.name);
    return s;
}

static void check_transition(ModelScope *sc, const Decl *d, int index)
{
    IrModel *m = sc->m;
    int from = lookup_state(sc, &d->from);
    int to = lookup_state(sc, &d->to);
    int em = d->emits.name ? lookup_emission(sc, &d->emits) : -1;
    double w = 0;
    int weight_ok = prob_value(sc, &d->weight, &w, "transition weight");
    if (from < 0 || to < 0)
        return;
    const IrState *src = &m->states[from], *dst = &m->states[to];
    if (dst->kind == STATE_START) {
        diag_error(sc->diag, d->to.loc, "nothing may enter the start state '%s'", dst->name);
        return;
    }
    if (src->kind == STATE_END) {
        diag_error(sc->diag, d->from.loc, "nothing may leave the end state '%s'", src->name);
        return;
    }
    int prev = symtab_put_pair(&sc->pairs, from, to, index);
    if (prev >= 0) {
        diag_error(sc->diag, d->loc, "transition %s -> %s is declared twice", src->name, dst->name);
        return;
    }
    if (d->emits.name && dst->kind == STATE_EMITTING) {
        diag_error(sc->diag, d->emits.loc,
                   "transition %s -> %s emits, but '%s' emits on arrival too: a move emits one "
                   "symbol; drop one of the emissions",
                   src->name, dst->name, dst->name);
        return;
    }
    if (!weight_ok || w == 0 || (d->emits.name && em < 0))
        return; /* a weight of 0: the transition does not exist */
    IrMove *mv = &m->moves[m->n_moves++];
    mv->from = from;
    mv->to = to;
    mv->emission = em >= 0 ? em : dst->emission;
    mv->lw_sum = mv->lw_max = log(w);
}

/* Pass one: names of states and emissions, the alphabet, start and end. */
static void declare_names(ModelScope *sc)
{
    for (const Decl *d = sc->ast->decls; d; d = d->next) {
        switch (d->kind) {
        case DECL_ALPHABET: check_alphabet(sc, d); break;
        case DECL_STARTSTATE:
            if (once(sc, &sc->start, d, "start state"))
                declare_state(sc, d, STATE_START);
            break;
        case DECL_ENDSTATE:
            if (once(sc, &sc->end, d, "end state"))
                declare_state(sc, d, STATE_END);
            break;
        case DECL_STATE: declare_state(sc, d, d->emits.name ? STATE_EMITTING : STATE_SILENT); break;
        case DECL_EMISSION: declare_emission(sc, d); break;
        case DECL_TRANSITION: break;
        }
    }
    const Ident *name = &sc->ast->name;
    if (!sc->alphabet)
        diag_error(sc->diag, name->loc, "model '%s' has no alphabet: add `alphabet [...];`",
                   name->name);
    if (!sc->start)
        diag_error(sc->diag, name->loc, "model '%s' has no start state: add `startstate NAME;`",
                   name->name);
    if (!sc->end)
        diag_error(sc->diag, name->loc, "model '%s' has no end state: add `endstate NAME;`",
                   name->name);
}

/* Pass two: what refers to names: state emissions, emission values, transitions. */
static void resolve_references(ModelScope *sc)
{
    IrModel *m = sc->m;
    for (int s = 0; s < m->n_states; s++) {
        const Decl *d = sc->state_decl[s];
        if (d->kind == DECL_STATE && d->emits.name)
            m->states[s].emission = lookup_emission(sc, &d->emits);
    }
    for (int e = 0; e < m->n_emissions; e++)
        check_emission_values(sc, e);
    int index = 0;
    for (const Decl *d = sc->ast->decls; d; d = d->next)
        if (d->kind == DECL_TRANSITION)
            check_transition(sc, d, index++);
    for (int e = 0; e < m->n_emissions; e++)
        if (!sc->emission_used[e])
            diag_warning(sc->diag, m->emissions[e].loc, "emission '%s' is never used",
                         m->emissions[e].name);
}

int sema_model(Arena *a, Diag *d, const Model *ast, IrModel *out)
{
    int errors_before = d->errors;
    int n_decls = 0;
    for (const Decl *x = ast->decls; x; x = x->next)
        n_decls++;
    ModelScope sc = {.arena = a, .diag = d, .ast = ast, .m = out};
    symtab_init(&sc.states, a);
    symtab_init(&sc.emissions, a);
    symtab_init(&sc.symbols, a);
    symtab_init(&sc.pairs, a);
    memset(out, 0, sizeof *out);
    out->name = ast->name.name;
    out->loc = ast->name.loc;
    out->symbols = "";
    out->start = out->end = -1;
    int cap = n_decls ? n_decls : 1;
    out->states = ARENA_ARRAY(a, IrState, cap);
    out->emissions = ARENA_ARRAY(a, IrEmission, cap);
    out->moves = ARENA_ARRAY(a, IrMove, cap);
    sc.state_decl = ARENA_ARRAY(a, const Decl *, cap);
    sc.emission_decl = ARENA_ARRAY(a, const Decl *, cap);
    sc.emission_used = ARENA_ARRAY(a, int, cap);

    declare_names(&sc);
    resolve_references(&sc);
    if (d->errors == errors_before)
        sema_check_graph(a, d, out);
    return d->errors == errors_before;
}
