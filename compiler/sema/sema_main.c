/* sema_main.c: the entry of semantic analysis: checks every model (through
 * sema_model.c), then the main block: bindings, `new`, algorithm calls,
 * attributes and prints. Each distinct algorithm-on-model becomes one call
 * of the program IR; each print becomes one output column. */
#include "sema/sema.h"

#include <string.h>

#include "support/symtab.h"

/* What an expression of main denotes. */
typedef enum ValueKind { VAL_ERROR, VAL_MODEL, VAL_TABLE, VAL_ATTR } ValueKind;
typedef struct Value {
    ValueKind kind;
    int index;     /* VAL_MODEL: model; VAL_TABLE and VAL_ATTR: call */
    unsigned attr; /* VAL_ATTR */
} Value;

typedef struct MainScope {
    Arena *arena;
    Diag *diag;
    Program *p;
    Symtab models;   /* model name -> index */
    Symtab bindings; /* name -> index into values */
    Value *values;
    Loc *binding_loc;
    int n_bindings;
    int cap_calls, cap_prints;
} MainScope;

static const Algorithm algorithms[] = {ALG_FORWARD, ALG_BACKWARD, ALG_VITERBI, ALG_POSTERIOR};

static int find_or_add_call(MainScope *sc, Algorithm alg, int model, Loc loc)
{
    Program *p = sc->p;
    for (int c = 0; c < p->n_calls; c++)
        if (p->calls[c].alg == alg && p->calls[c].model_index == model)
            return c;
    if (p->n_calls == sc->cap_calls) {
        IrCall *bigger = ARENA_ARRAY(sc->arena, IrCall, sc->cap_calls * 2);
        memcpy(bigger, p->calls, sizeof(IrCall) * (size_t)p->n_calls);
        p->calls = bigger;
        sc->cap_calls *= 2;
    }
    IrCall *call = &p->calls[p->n_calls];
    memset(call, 0, sizeof *call);
    call->alg = alg;
    call->model_index = model;
    call->model = ir_model_copy(sc->arena, &p->models[model]);
    call->label = arena_printf(sc->arena, "%s(%s)", algorithm_name(alg), p->models[model].name);
    call->loc = loc;
    return p->n_calls++;
}

static Value eval(MainScope *sc, const Expr *e);

/* What a model observes, for messages: "symbols" or "vectors of D reals". */
static const char *observes(MainScope *sc, const IrModel *m)
{
    return m->real_dim ? arena_printf(sc->arena, "vectors of %d real%s", m->real_dim,
                                      m->real_dim == 1 ? "" : "s")
                       : "symbols";
}

/* Real observations (alphabet real[D]): what this slice of hmmc runs over
 * them, and one kind of input a program. 0 after an error. */
static int real_input_fits(MainScope *sc, Algorithm alg, int model, const Expr *e)
{
    const Program *p = sc->p;
    const IrModel *m = &p->models[model];
    for (int c = 0; c < p->n_calls; c++) {
        const IrModel *other = &p->models[p->calls[c].model_index];
        if (other->real_dim != m->real_dim) {
            diag_error(sc->diag, e->loc, "model '%s' observes %s but model '%s', which main "
                       "runs too, observes %s: a program reads one kind of input", m->name,
                       observes(sc, m), other->name, observes(sc, other));
            diag_note(sc->diag, p->calls[c].loc, "'%s' is run here", other->name);
            return 0;
        }
    }
    return 1;
}

static Value eval_call(MainScope *sc, const Expr *e)
{
    Value err = {VAL_ERROR, 0, 0};
    Value arg = eval(sc, e->arg);
    int alg = -1;
    for (size_t i = 0; i < sizeof algorithms / sizeof algorithms[0]; i++)
        if (strcmp(e->ident.name, algorithm_name(algorithms[i])) == 0)
            alg = (int)algorithms[i];
    if (alg < 0) {
        diag_error(sc->diag, e->ident.loc,
                   "unknown algorithm '%s': use forward, backward, viterbi or posterior", e->ident.name);
        return err;
    }
    if (arg.kind == VAL_ERROR)
        return err;
    if (arg.kind != VAL_MODEL) {
        diag_error(sc->diag, e->arg->loc, "%s() runs on a model: write %s(new MODEL()) or bind "
                   "a model with `m = new MODEL();`", e->ident.name, e->ident.name);
        return err;
    }
    const IrModel *m = &sc->p->models[arg.index];
    if (alg == ALG_POSTERIOR && m->n_length_weights) {
        diag_error(sc->diag, e->ident.loc, "posterior of model '%s' is not implemented yet: its "
                   "weights depend on the sequence length (forward, backward and viterbi take "
                   "them); run forward or viterbi", m->name);
        diag_note(sc->diag, m->length_weights[0].loc, "a length-dependent weight of '%s'",
                  m->name);
        return err;
    }
    if (!real_input_fits(sc, (Algorithm)alg, arg.index, e))
        return err;
    Value v = {VAL_TABLE, find_or_add_call(sc, (Algorithm)alg, arg.index, e->loc), 0};
    return v;
}

/* The attributes each algorithm has, as a person would list them. */
static const char *attributes_of(Algorithm alg)
{
    switch (alg) {
    case ALG_VITERBI: return "score, traceback or segments";
    case ALG_POSTERIOR: return "score, decode, segments or probability&";
    default: return "score";
    }
}

/* The ATTR_* that `.NAME` or `.NAME&` (e) asks of a call of alg, or 0 with
 * an error at the attribute's name. */
static unsigned attribute_of(MainScope *sc, const Expr *e, Algorithm alg)
{
    const char *name = e->ident.name, *alg_name = algorithm_name(alg);
    int whole = e->whole_table;
    if (strcmp(name, "score") == 0) {
        if (whole && alg == ALG_POSTERIOR) {
            diag_error(sc->diag, e->ident.loc, "posterior has no score&: its whole table is "
                       "probability& (print forward(m).score& for the forward values)");
            return 0;
        }
        return whole ? ATTR_SCORE_TABLE : ATTR_SCORE;
    }
    if (strcmp(name, "traceback") == 0) {
        if (alg != ALG_VITERBI) {
            diag_error(sc->diag, e->ident.loc, "%s has no traceback: only viterbi does%s",
                       alg_name, alg == ALG_POSTERIOR ? "; posterior's path is .decode" : "");
            return 0;
        }
        return whole ? ATTR_TRACEBACK_TABLE : ATTR_TRACEBACK;
    }
    if (strcmp(name, "segments") == 0 || strcmp(name, "decode") == 0) {
        int segments = name[0] == 's';
        if (alg != ALG_POSTERIOR && !(segments && alg == ALG_VITERBI)) {
            diag_error(sc->diag, e->ident.loc, "%s has no %s: only %s does", alg_name, name,
                       segments ? "viterbi or posterior" : "posterior");
            return 0;
        }
        if (whole) {
            diag_error(sc->diag, e->ident.loc, "%s has no whole table: write .%s without '&'",
                       name, name);
            return 0;
        }
        return segments ? ATTR_SEGMENTS : ATTR_DECODE;
    }
    if (strcmp(name, "probability") == 0) {
        if (alg != ALG_POSTERIOR) {
            diag_error(sc->diag, e->ident.loc, "%s has no probability: only posterior does "
                       "(posterior(m).probability&)", alg_name);
            return 0;
        }
        if (!whole) {
            diag_error(sc->diag, e->ident.loc, "probability is printed only as a whole table: "
                       "write .probability&");
            return 0;
        }
        return ATTR_PROBABILITY_TABLE;
    }
    diag_error(sc->diag, e->ident.loc, "unknown attribute '%s': use %s", name,
               attributes_of(alg));
    return 0;
}

static Value eval_attr(MainScope *sc, const Expr *e)
{
    Value err = {VAL_ERROR, 0, 0};
    Value obj = eval(sc, e->arg);
    if (obj.kind == VAL_ERROR)
        return err;
    if (obj.kind == VAL_MODEL) {
        diag_error(sc->diag, e->ident.loc, "a model has no '%s': run an algorithm on it first, "
                   "as in forward(MODEL).%s", e->ident.name, e->ident.name);
        return err;
    }
    if (obj.kind != VAL_TABLE) {
        diag_error(sc->diag, e->ident.loc, "'%s' is an attribute of an algorithm's table: write "
                   "forward(m).%s, viterbi(m).%s, ...", e->ident.name, e->ident.name,
                   e->ident.name);
        return err;
    }
    const IrCall *call = &sc->p->calls[obj.index];
    unsigned attr = attribute_of(sc, e, call->alg);
    if (!attr)
        return err;
    Value v = {VAL_ATTR, obj.index, attr};
    return v;
}

static Value eval(MainScope *sc, const Expr *e)
{
    Value err = {VAL_ERROR, 0, 0};
    switch (e->kind) {
    case EXPR_NEW: {
        int m = symtab_get(&sc->models, e->ident.name);
        if (m < 0) {
            diag_error(sc->diag, e->ident.loc, "unknown model '%s'", e->ident.name);
            return err;
        }
        Value v = {VAL_MODEL, m, 0};
        return v;
    }
    case EXPR_CALL: return eval_call(sc, e);
    case EXPR_ATTR: return eval_attr(sc, e);
    case EXPR_NAME: {
        int b = symtab_get(&sc->bindings, e->ident.name);
        if (b < 0) {
            diag_error(sc->diag, e->ident.loc, "unknown name '%s': bind it first with `%s = ...;`",
                       e->ident.name, e->ident.name);
            return err;
        }
        return sc->values[b];
    }
    }
    return err;
}

static void add_print(MainScope *sc, Value v, Loc loc)
{
    Program *p = sc->p;
    if (p->n_prints == sc->cap_prints) {
        IrPrint *bigger = ARENA_ARRAY(sc->arena, IrPrint, sc->cap_prints * 2);
        memcpy(bigger, p->prints, sizeof(IrPrint) * (size_t)p->n_prints);
        p->prints = bigger;
        sc->cap_prints *= 2;
    }
    IrPrint *pr = &p->prints[p->n_prints++];
    pr->call = v.index;
    pr->attr = v.attr;
    pr->loc = loc;
    pr->label = arena_printf(sc->arena, "%s.%s", p->calls[v.index].label, attr_name(v.attr));
    p->calls[v.index].attrs |= v.attr;
}

static void check_stmt(MainScope *sc, const Stmt *s, int n_stmts)
{
    Value v = eval(sc, s->expr);
    if (s->kind == STMT_ASSIGN) {
        int prev = symtab_get(&sc->bindings, s->name.name);
        if (prev >= 0) {
            diag_error(sc->diag, s->name.loc, "'%s' is already bound; choose another name",
                       s->name.name);
            diag_note(sc->diag, sc->binding_loc[prev], "'%s' is bound here", s->name.name);
            return;
        }
        sc->values = sc->values ? sc->values : ARENA_ARRAY(sc->arena, Value, n_stmts);
        sc->binding_loc = sc->binding_loc ? sc->binding_loc : ARENA_ARRAY(sc->arena, Loc, n_stmts);
        sc->values[sc->n_bindings] = v;
        sc->binding_loc[sc->n_bindings] = s->name.loc;
        symtab_put(&sc->bindings, s->name.name, sc->n_bindings++);
        return;
    }
    if (v.kind == VAL_ERROR)
        return;
    if (v.kind != VAL_ATTR) {
        diag_error(sc->diag, s->expr->loc, "print takes an attribute of a table: write "
                   "`print %s.score;`%s", v.kind == VAL_TABLE ? "TABLE" : "ALGORITHM(MODEL)",
                   v.kind == VAL_TABLE && sc->p->calls[v.index].alg == ALG_VITERBI
                       ? " or `.traceback`"
                   : v.kind == VAL_TABLE && sc->p->calls[v.index].alg == ALG_POSTERIOR
                       ? " or `.decode`" : "");
        return;
    }
    add_print(sc, v, s->loc);
}

static void check_main(MainScope *sc, const File *f)
{
    if (!f->mains) {
        Loc nowhere = {0, 0, 0, 0};
        diag_error(sc->diag, nowhere, "%s has no main block: add `main { print "
                   "forward(new MODEL()).score; }`", f->path);
        return;
    }
    for (const MainBlock *extra = f->mains->next; extra; extra = extra->next) {
        diag_error(sc->diag, extra->loc, "a file has one main block; this is a second one");
        diag_note(sc->diag, f->mains->loc, "the first main block is here");
    }
    int n_stmts = 0;
    for (const Stmt *s = f->mains->stmts; s; s = s->next)
        n_stmts++;
    for (const Stmt *s = f->mains->stmts; s; s = s->next)
        check_stmt(sc, s, n_stmts);
    if (sc->p->n_prints == 0 && sc->diag->errors == 0)
        diag_warning(sc->diag, f->mains->loc, "main prints nothing: the program will print only "
                     "sequence names");
}

struct SemaStream {
    MainScope sc;
    int cap_models;
};

SemaStream *sema_begin(Arena *a, const char *path, int n_models, Diag *d)
{
    SemaStream *s = ARENA_NEW(a, SemaStream);
    Program *p = ARENA_NEW(a, Program);
    p->arena = a;
    p->path = path;
    s->sc = (MainScope){.arena = a, .diag = d, .p = p, .cap_calls = 4, .cap_prints = 4};
    symtab_init(&s->sc.models, a);
    symtab_init(&s->sc.bindings, a);
    s->cap_models = n_models;
    p->models = ARENA_ARRAY(a, IrModel, n_models ? n_models : 1);
    return s;
}

/* The strings of a model's IR that point into its syntax tree, copied into
 * the program's arena (copy_lexpr: a length weight's expression). */
static const LExpr *copy_lexpr(Arena *a, const LExpr *e)
{
    if (!e)
        return NULL;
    LExpr *c = ARENA_NEW(a, LExpr);
    *c = *e;
    c->text = e->text ? arena_strdup(a, e->text) : NULL;
    c->a = copy_lexpr(a, e->a);
    c->b = copy_lexpr(a, e->b);
    return c;
}

static void own_strings(Arena *a, IrModel *m)
{
    m->name = arena_strdup(a, m->name);
    for (int i = 0; i < m->n_states; i++)
        m->states[i].name = arena_strdup(a, m->states[i].name);
    for (int i = 0; i < m->n_emissions; i++)
        m->emissions[i].name = arena_strdup(a, m->emissions[i].name);
    for (int i = 0; i < m->n_length_weights; i++)
        m->length_weights[i].expr = copy_lexpr(a, m->length_weights[i].expr);
}

void sema_add_model(SemaStream *s, const Model *m, int own)
{
    MainScope *sc = &s->sc;
    Program *p = sc->p;
    const char *name = own ? arena_strdup(sc->arena, m->name.name) : m->name.name;
    int prev = symtab_put(&sc->models, name, p->n_models);
    if (prev >= 0) {
        diag_error(sc->diag, m->name.loc, "model '%s' is declared twice", m->name.name);
        diag_note(sc->diag, p->models[prev].loc, "the first declaration is here");
        return;
    }
    if (p->n_models >= s->cap_models) { /* cannot happen: the caller counted them */
        diag_fatal(sc->diag, "internal error: more models than counted");
        return;
    }
    IrModel *out = &p->models[p->n_models++];
    sema_model(sc->arena, sc->diag, m, out);
    if (own)
        own_strings(sc->arena, out);
}

IrModel *sema_add_model_in(SemaStream *s, const Model *m, Arena *ir)
{
    MainScope *sc = &s->sc;
    Program *p = sc->p;
    const char *name = arena_strdup(sc->arena, m->name.name);
    int prev = symtab_put(&sc->models, name, p->n_models);
    if (prev >= 0) {
        diag_error(sc->diag, m->name.loc, "model '%s' is declared twice", m->name.name);
        diag_note(sc->diag, p->models[prev].loc, "the first declaration is here");
        return NULL;
    }
    if (p->n_models >= s->cap_models) { /* cannot happen: the caller counted them */
        diag_fatal(sc->diag, "internal error: more models than counted");
        return NULL;
    }
    IrModel *out = &p->models[p->n_models++];
    sema_model(ir, sc->diag, m, out);
    return out;
}

Program *sema_finish(SemaStream *s, const File *f)
{
    MainScope *sc = &s->sc;
    Program *p = sc->p;
    p->calls = ARENA_ARRAY(sc->arena, IrCall, sc->cap_calls);
    p->prints = ARENA_ARRAY(sc->arena, IrPrint, sc->cap_prints);
    check_main(sc, f);
    return sc->diag->errors ? NULL : p;
}

Program *sema(Arena *a, const File *f, Diag *d)
{
    int n_models = 0;
    for (const Model *m = f->models; m; m = m->next)
        n_models++;
    SemaStream *s = sema_begin(a, f->path, n_models, d);
    for (const Model *m = f->models; m; m = m->next)
        sema_add_model(s, m, 0);
    return sema_finish(s, f);
}
