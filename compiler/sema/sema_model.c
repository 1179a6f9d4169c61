/* sema_model.c: checks one `hmm` block and builds its model IR: names,
 * alphabet, emissions, transitions and numbers, with every error of the
 * language contract reported at its place. Whole-model checks (silent
 * cycles, reachability) are in sema_graph.c, sums above 1 in sema_sums.c. */
#include "sema/sema.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sema/sema_density.h"
#include "syntax/matrix.h"
#include "syntax/number.h"
#include "support/symtab.h"

/* Everything known about one model while it is checked. */
typedef struct ModelScope {
    Arena *arena;
    Diag *diag;
    const Model *ast;
    Symtab states;     /* name -> state index */
    Symtab emissions;  /* name -> emission index */
    Symtab symbols;    /* one-character name -> symbol index */
    PairSet pairs;     /* (from, to) of every transition declared so far */
    int *listed;       /* per state, the stamp of the matrix list it was last seen in */
    int stamp;
    const Decl *alphabet, *start, *end;
    int alphabet_broken;  /* an alphabet error (or none, or empty): emissions are not measured against it */
    int real_alphabet;    /* `alphabet real[D];` (m->real_dim is 0 after an error in it) */
    Symtab written;       /* every symbol the alphabet lists, even those in error */
    Symtab length_texts;  /* C text of each length weight -> its index (sema_length.c) */
    IrModel *m;
    const Decl **state_decl;    /* per state, its declaration */
    const Decl **emission_decl; /* per emission, its declaration */
    int *emission_used;
} ModelScope;


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
    if (d->is_real) {
        sc->real_alphabet = 1;
        sc->m->real_dim = sema_real_dim(sc->diag, d);
        sc->alphabet_broken = sc->m->real_dim == 0;
        return;
    }
    int k = 0, errors_before = sc->diag->errors;
    for (const SymbolList *s = d->symbols; s; s = s->next)
        k++;
    char *symbols = arena_alloc(sc->arena, (size_t)k + 1);
    k = 0;
    for (const SymbolList *s = d->symbols; s; s = s->next) {
        const Symbol *sym = &s->sym;
        symtab_put(&sc->written, sym->text, 0);
        if (strlen(sym->text) != 1) {
            diag_error(sc->diag, sym->loc,
                       "alphabet symbols are single characters; '%s' has %zu", sym->text,
                       strlen(sym->text));
            continue;
        }
        /* the lexer refuses white space and control characters */
        if (sym->text[0] == '>') {
            diag_error(sc->diag, sym->loc,
                       "'>' cannot be an alphabet symbol: in FASTA a line that starts with '>' "
                       "begins a new record, so sequences could not hold it; choose another "
                       "character");
            continue;
        }
        int prev = symtab_put(&sc->symbols, sym->text, k);
        if (prev >= 0) {
            diag_error(sc->diag, sym->loc, "symbol '%s' is listed twice in the alphabet", sym->text);
            continue;
        }
        symbols[k++] = sym->text[0];
    }
    sc->alphabet_broken = !d->symbols || sc->diag->errors != errors_before;
    if (!d->symbols)
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

/* Warns of an emission table whose every value is 0: whatever emits from
 * it has no path through it. */
static void warn_all_zero(ModelScope *sc, const IrEmission *e, int errors_before)
{
    if (sc->diag->errors != errors_before)
        return;
    for (int k = 0; k < sc->m->K; k++)
        if (e->logp[k] != -INFINITY)
            return;
    diag_warning(sc->diag, e->loc, "every value of emission '%s' is 0, so no path goes through "
                 "a state or move that emits from it; give a symbol a value above 0", e->name);
}

/* Training's record of value k of emission `index`: the bytes of its text. */
static void record_value(ModelScope *sc, int index, int k, const Prob *p)
{
    IrModel *m = sc->m;
    if (m->emission_span)
        m->emission_span[(size_t)index * (size_t)m->K + (size_t)k] =
            (IrSpan){prob_begin(p), prob_end(p)};
}

/* Fills an emission's values once the alphabet is known. After an error in
 * the alphabet (or none), its length is not checked and only symbols that the
 * alphabet does not even list are reported: the rest would be errors of the
 * alphabet's, not the emission's. */
static void check_emission_values(ModelScope *sc, int index)
{
    const Decl *d = sc->emission_decl[index];
    IrEmission *e = &sc->m->emissions[index];
    int K = sc->m->K, errors_before = sc->diag->errors;
    if (sc->real_alphabet) {
        if (sc->m->real_dim > 0)
            sema_density(sc->arena, sc->diag, sc->m, index, sc->emission_decl, &sc->emissions,
                         sc->emission_used);
        else
            e->logp = ARENA_ARRAY(sc->arena, double, 1);
        return;
    }
    e->logp = ARENA_ARRAY(sc->arena, double, K ? K : 1);
    if (d->kind_word.name) {
        e->logp[0] = -INFINITY;
        diag_error(sc->diag, d->kind_word.loc, "emission '%s' is a density (%s), but the "
                   "alphabet of model '%s' is of symbols: densities need `alphabet real[D];`",
                   d->name.name, d->kind_word.name, sc->ast->name.name);
        return;
    }
    if (!d->is_dict) {
        int n = 0;
        for (const EmissionEntry *x = d->entries; x; x = x->next)
            n++;
        if (sc->alphabet_broken) {
            for (const EmissionEntry *x = d->entries; x; x = x->next) {
                double v = 0;
                number_prob(sc->diag, &x->p, &v, "emission value");
            }
            return;
        }
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
            if (number_prob(sc->diag, &x->p, &v, "emission value"))
                e->logp[k] = number_prob_log(&x->p, v);
            else
                e->logp[k] = -INFINITY;
            record_value(sc, index, k, &x->p);
        }
        warn_all_zero(sc, e, errors_before);
        return;
    }
    for (int k = 0; k < K; k++)
        e->logp[k] = -INFINITY;
    Symtab seen;
    symtab_init(&seen, sc->arena);
    for (const EmissionEntry *x = d->entries; x; x = x->next) {
        int k = symtab_get(&sc->symbols, x->sym.text);
        if (k < 0 && sc->alphabet_broken &&
            (!sc->alphabet || !sc->alphabet->symbols || symtab_get(&sc->written, x->sym.text) >= 0))
            continue;
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
        if (number_prob(sc->diag, &x->p, &v, "emission value"))
            e->logp[k] = number_prob_log(&x->p, v);
        record_value(sc, index, k, &x->p);
    }
    if (!sc->alphabet_broken)
        warn_all_zero(sc, e, errors_before);
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

/* The state a name denotes, or -1; no message (for finding places again). */
static int state_of(ModelScope *sc, const Ident *name) { return symtab_get(&sc->states, name->name); }

/* Position of state s in a list of names, or -1. */
static int position_in(ModelScope *sc, const IdentList *names, int s)
{
    int i = 0;
    for (const IdentList *n = names; n; n = n->next, i++)
        if (state_of(sc, &n->id) == s)
            return i;
    return -1;
}

/* Where transition from -> to is first given: an arrow statement, or a
 * non-zero value of a matrix. Read again only for a message. */
static int first_place(ModelScope *sc, int from, int to, Loc *where)
{
    for (const Decl *d = sc->ast->decls; d; d = d->next) {
        if (d->kind == DECL_TRANSITION && state_of(sc, &d->from) == from &&
            state_of(sc, &d->to) == to) {
            *where = d->loc;
            return 1;
        }
        if (d->kind != DECL_MATRIX)
            continue;
        int r = position_in(sc, d->sources, from), c = position_in(sc, d->targets, to);
        const Matrix *m = d->matrix;
        if (r >= 0 && c >= 0 && r < m->n_rows && c < m->rows[r].n_values &&
            m->rows[r].n_values == d->n_targets && m->values[m->rows[r].first + c] != 0) {
            *where = matrix_value_loc(m, r, c);
            return 1;
        }
    }
    return 0;
}

/* Records transition from -> to, given at `here` or (here NULL) by value
 * (row, column) of matrix mx; 0 with an error naming both places when it was
 * given before. */
static int declare_pair(ModelScope *sc, int from, int to, const Loc *here, const Matrix *mx,
                        int row, int column)
{
    if (!pairset_add(&sc->pairs, from, to))
        return 1;
    IrModel *m = sc->m;
    diag_error(sc->diag, here ? *here : matrix_value_loc(mx, row, column), "transition %s -> %s is declared twice", m->states[from].name,
               m->states[to].name);
    Loc first;
    if (!sc->diag->stopped && first_place(sc, from, to, &first))
        diag_note(sc->diag, first, "it is first given here; give each transition once");
    return 0;
}

/* lw: ln of the weight (number_prob_log keeps a subnormal's digits). */
static void add_move(IrModel *m, int from, int to, int emission, double lw)
{
    IrMove *mv = &m->moves[m->n_moves++];
    mv->from = from;
    mv->to = to;
    mv->emission = emission;
    mv->lw_sum = mv->lw_max = lw;
}

/* Training's record of the move just added: `fixed`, and its weight's bytes. */
static void record_move(IrModel *m, int fixed, long begin, long end)
{
    if (!m->move_span)
        return;
    m->move_fixed[m->n_moves - 1] = (unsigned char)(fixed != 0);
    m->move_span[m->n_moves - 1] = (IrSpan){begin, end};
}

static void check_transition(ModelScope *sc, const Decl *d)
{
    IrModel *m = sc->m;
    int from = lookup_state(sc, &d->from);
    int to = lookup_state(sc, &d->to);
    int em = d->emits.name ? lookup_emission(sc, &d->emits) : -1;
    double w = 0;
    int length_weight = 0, weight_ok;
    if (d->weight.length) {
        length_weight = sema_length_weight(sc->arena, sc->diag, sc->m, &sc->length_texts,
                                           &d->weight, &w);
        weight_ok = length_weight >= 0;
        w = length_weight > 0 ? 1.0 : w; /* the constant factor */
    } else {
        weight_ok = number_prob(sc->diag, &d->weight, &w, "transition weight");
    }
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
    if (!declare_pair(sc, from, to, &d->loc, NULL, 0, 0))
        return;
    if (d->emits.name && dst->kind == STATE_EMITTING) {
        diag_error(sc->diag, d->emits.loc,
                   "transition %s -> %s emits, but '%s' emits on arrival too: a move emits one "
                   "symbol; drop one of the emissions",
                   src->name, dst->name, dst->name);
        return;
    }
    if (!weight_ok || w == 0 || (d->emits.name && em < 0))
        return; /* a weight of 0: the transition does not exist */
    add_move(m, from, to, em >= 0 ? em : dst->emission,
             d->weight.length ? log(w) : number_prob_log(&d->weight, w));
    m->moves[m->n_moves - 1].length_weight = length_weight > 0 ? length_weight : 0;
    record_move(m, d->fixed, prob_begin(&d->weight), prob_end(&d->weight));
}

/* The states of a matrix's sources or targets (what: "sources" or
 * "destinations"), -1 for a name that is unknown, listed twice, or (is_target)
 * the start state or (sources) the end state, each with its error. */
static int *matrix_states(ModelScope *sc, const IdentList *names, int n, const char *what,
                          int is_target)
{
    int *states = ARENA_ARRAY(sc->arena, int, n ? n : 1);
    Loc *seen = ARENA_ARRAY(sc->arena, Loc, n ? n : 1);
    int stamp = ++sc->stamp, i = 0;
    for (const IdentList *l = names; l; l = l->next, i++) {
        int s = states[i] = lookup_state(sc, &l->id);
        if (s < 0)
            continue;
        const IrState *st = &sc->m->states[s];
        if (sc->listed[s] == stamp) {
            diag_error(sc->diag, l->id.loc, "state '%s' is listed twice among the %s of this "
                       "matrix", st->name, what);
            for (int j = 0; j < i; j++)
                if (states[j] == s)
                    diag_note(sc->diag, seen[j], "it is listed here first");
            states[i] = -1;
            continue;
        }
        sc->listed[s] = stamp;
        seen[i] = l->id.loc;
        if (is_target && st->kind == STATE_START) {
            diag_error(sc->diag, l->id.loc, "nothing may enter the start state '%s': leave it "
                       "out of the matrix's destinations", st->name);
            states[i] = -1;
        } else if (!is_target && st->kind == STATE_END) {
            diag_error(sc->diag, l->id.loc, "nothing may leave the end state '%s': leave it "
                       "out of the matrix's sources", st->name);
            states[i] = -1;
        }
    }
    return states;
}

/* [A, B] -> [C, D] [p, q; r, s]: row i holds the weights of source i to
 * each destination; 0 is no transition. The values were checked as numbers
 * when they were read (matrix.c). */
static void check_matrix(ModelScope *sc, const Decl *d)
{
    IrModel *m = sc->m;
    const Matrix *mx = d->matrix;
    int *from = matrix_states(sc, d->sources, d->n_sources, "sources", 0);
    int *to = matrix_states(sc, d->targets, d->n_targets, "destinations", 1);
    if (mx->n_rows != d->n_sources)
        diag_error(sc->diag, mx->loc, "the matrix has %d row%s but %d source state%s: give one "
                   "row per source, in order, rows separated by ';'", mx->n_rows,
                   mx->n_rows == 1 ? "" : "s", d->n_sources, d->n_sources == 1 ? "" : "s");
    const IdentList *source = d->sources;
    long *begin = NULL, *end = NULL;
    if (m->move_span && d->n_targets > 0) {
        begin = ARENA_ARRAY(sc->arena, long, d->n_targets);
        end = ARENA_ARRAY(sc->arena, long, d->n_targets);
    }
    for (int r = 0; r < mx->n_rows && r < d->n_sources; r++, source = source->next) {
        const MatrixRow *row = &mx->rows[r];
        if (row->n_values != d->n_targets) {
            diag_error(sc->diag, row->loc, "row %d of the matrix (source '%s') has %d value%s "
                       "but there %s %d destination%s: give one value per destination, in "
                       "order (0 for no transition)", r + 1, source->id.name, row->n_values,
                       row->n_values == 1 ? "" : "s", d->n_targets == 1 ? "is" : "are",
                       d->n_targets, d->n_targets == 1 ? "" : "s");
            continue;
        }
        if (from[r] < 0)
            continue;
        const double *w = mx->values + row->first;
        if (begin)
            matrix_row_spans(mx, r, begin, end);
        for (int c = 0; c < d->n_targets; c++) {
            if (w[c] == 0 || to[c] < 0)
                continue;
            if (declare_pair(sc, from[r], to[c], NULL, mx, r, c)) {
                add_move(m, from[r], to[c], m->states[to[c]].emission, log(w[c]));
                if (begin)
                    record_move(m, d->fixed, begin[c], end[c]);
            }
        }
    }
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
        case DECL_TRANSITION:
        case DECL_MATRIX: break;
        }
    }
    const Ident *name = &sc->ast->name;
    if (!sc->alphabet) {
        sc->alphabet_broken = 1;
        diag_error(sc->diag, name->loc, "model '%s' has no alphabet: add `alphabet [...];`",
                   name->name);
    }
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
    /* training's record of every emission value (n_emissions x K places):
     * not for a model with length-dependent weights, which training does
     * not fit (backend_c_train.c), as HMMER3 imports have; a file of
     * thousands of them would hold gigabytes of it */
    int length_dependent = 0;
    for (const Decl *d = sc->ast->decls; d && !length_dependent; d = d->next)
        length_dependent = d->kind == DECL_TRANSITION && d->weight.length &&
                           lexpr_uses_length(d->weight.length);
    if (m->move_span && (m->K > 0 || m->real_dim > 0) && !length_dependent) {
        size_t n = (size_t)m->n_emissions * (size_t)m->K;
        m->emission_span = ARENA_ARRAY(sc->arena, IrSpan, n ? n : 1);
        for (size_t i = 0; i < n; i++)
            m->emission_span[i] = (IrSpan){-1, -1};
        m->emission_fixed = ARENA_ARRAY(sc->arena, unsigned char, m->n_emissions ? m->n_emissions : 1);
        for (int e = 0; e < m->n_emissions; e++)
            m->emission_fixed[e] = (unsigned char)sc->emission_decl[e]->fixed;
    }
    for (int e = 0; e < m->n_emissions; e++)
        check_emission_values(sc, e);
    pairset_init(&sc->pairs, sc->arena, m->n_states);
    sc->listed = ARENA_ARRAY(sc->arena, int, m->n_states ? m->n_states : 1);
    for (const Decl *d = sc->ast->decls; d; d = d->next) {
        if (d->kind == DECL_TRANSITION)
            check_transition(sc, d);
        else if (d->kind == DECL_MATRIX)
            check_matrix(sc, d);
    }
    for (int e = 0; e < m->n_emissions; e++)
        if (!sc->emission_used[e])
            diag_warning(sc->diag, m->emissions[e].loc, "emission '%s' is never used",
                         m->emissions[e].name);
}

int sema_model(Arena *a, Diag *d, const Model *ast, IrModel *out)
{
    int errors_before = d->errors;
    int n_decls = 0;
    long n_matrix_values = 0;
    for (const Decl *x = ast->decls; x; x = x->next) {
        n_decls++;
        if (x->kind == DECL_MATRIX)
            n_matrix_values += x->matrix->n_values;
    }
    ModelScope sc = {.arena = a, .diag = d, .ast = ast, .m = out};
    symtab_init(&sc.states, a);
    symtab_init(&sc.emissions, a);
    symtab_init(&sc.symbols, a);
    symtab_init(&sc.written, a);
    symtab_init(&sc.length_texts, a);
    memset(out, 0, sizeof *out);
    out->name = ast->name.name;
    out->loc = ast->name.loc;
    out->symbols = "";
    out->start = out->end = -1;
    int cap = n_decls ? n_decls : 1;
    out->states = ARENA_ARRAY(a, IrState, cap);
    out->emissions = ARENA_ARRAY(a, IrEmission, cap);
    if (n_decls + n_matrix_values > INT_MAX) {
        diag_error(d, ast->name.loc, "model '%s' has more than %d transitions, more than hmmc "
                   "can hold", ast->name.name, INT_MAX);
        return 0;
    }
    /* a matrix's zeros make no move: pages never written cost no memory */
    out->moves = ARENA_ARRAY(a, IrMove, cap + n_matrix_values);
    if (cap + n_matrix_values <= IR_TRAIN_MOVES_MAX) { /* training's record (ir.h) */
        out->move_fixed = ARENA_ARRAY(a, unsigned char, cap + n_matrix_values);
        out->move_span = ARENA_ARRAY(a, IrSpan, cap + n_matrix_values);
    }
    sc.state_decl = ARENA_ARRAY(a, const Decl *, cap);
    sc.emission_decl = ARENA_ARRAY(a, const Decl *, cap);
    sc.emission_used = ARENA_ARRAY(a, int, cap);

    declare_names(&sc);
    resolve_references(&sc);
    if (d->errors == errors_before) {
        sema_check_graph(a, d, out);
        if (d->errors == errors_before) /* a diverging cycle says it already */
            sema_check_sums(a, d, ast, out);
    }
    return d->errors == errors_before;
}
