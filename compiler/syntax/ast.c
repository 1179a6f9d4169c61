/* ast.c: the syntax tree's constructors (called from the parser's actions)
 * and ast_dump, which prints a whole tree in a stable indented text form,
 * one node a line with its span as @LINE:COL-LINE:COL, for golden tests and
 * --dump-after=parse. */
#include "syntax/ast.h"

Model *ast_model(Arena *a, Ident name, Decl *decls, Loc loc)
{
    Model *m = ARENA_NEW(a, Model);
    m->name = name;
    m->decls = decls;
    m->loc = loc;
    return m;
}

Decl *ast_decl(Arena *a, DeclKind kind, Loc loc)
{
    Decl *d = ARENA_NEW(a, Decl);
    d->kind = kind;
    d->loc = loc;
    return d;
}

Expr *ast_expr(Arena *a, ExprKind kind, Ident ident, Expr *arg, Loc loc)
{
    Expr *e = ARENA_NEW(a, Expr);
    e->kind = kind;
    e->ident = ident;
    e->arg = arg;
    e->loc = loc;
    return e;
}

Stmt *ast_stmt(Arena *a, StmtKind kind, Ident name, Expr *expr, Loc loc)
{
    Stmt *s = ARENA_NEW(a, Stmt);
    s->kind = kind;
    s->name = name;
    s->expr = expr;
    s->loc = loc;
    return s;
}

MainBlock *ast_main(Arena *a, Stmt *stmts, Loc loc)
{
    MainBlock *b = ARENA_NEW(a, MainBlock);
    b->stmts = stmts;
    b->loc = loc;
    return b;
}

EmissionEntry *ast_entry(Arena *a, Symbol sym, Prob p)
{
    EmissionEntry *e = ARENA_NEW(a, EmissionEntry);
    e->sym = sym;
    e->p = p;
    return e;
}

SymbolList *ast_symbol(Arena *a, Symbol sym)
{
    SymbolList *s = ARENA_NEW(a, SymbolList);
    s->sym = sym;
    return s;
}

IdentList *ast_ident(Arena *a, Ident id)
{
    IdentList *l = ARENA_NEW(a, IdentList);
    l->id = id;
    return l;
}

NumberList *ast_number(Arena *a, Number n)
{
    NumberList *l = ARENA_NEW(a, NumberList);
    l->num = n;
    return l;
}

Vector *ast_vector(Arena *a, NumberList *values, int n, Loc loc)
{
    Vector *v = ARENA_NEW(a, Vector);
    v->values = values;
    v->n = n;
    v->loc = loc;
    return v;
}

DensityArg *ast_density_arg(Arena *a, DensityArgKind kind, Loc loc)
{
    DensityArg *d = ARENA_NEW(a, DensityArg);
    d->kind = kind;
    d->loc = loc;
    return d;
}

/* ---- ast_dump ---- */

static void indent(FILE *out, int depth)
{
    for (int i = 0; i < depth; i++)
        fputs("  ", out);
}

static void print_loc(FILE *out, Loc loc)
{
    fprintf(out, " @%d:%d-%d:%d\n", loc.first_line, loc.first_column, loc.last_line, loc.last_column);
}

static void print_symbol(FILE *out, const Symbol *s)
{
    fprintf(out, s->quoted ? "'%s'" : "%s", s->text);
}

long prob_begin(const Prob *p) { return p->num.begin; }
long prob_end(const Prob *p) { return p->has_den ? p->den.end : p->num.end; }

static void print_prob(FILE *out, const Prob *p)
{
    if (p->length) {
        Arena a;
        arena_init(&a);
        fprintf(out, "(%s)", lexpr_source(&a, p->length));
        arena_free(&a);
        return;
    }
    fputs(p->num.text, out);
    if (p->has_den)
        fprintf(out, "/%s", p->den.text);
}

static void print_emits(FILE *out, const Ident *emits)
{
    if (emits->name)
        fprintf(out, " emits %s", emits->name);
}

static void dump_alphabet(const Decl *d, FILE *out, int depth)
{
    if (d->is_real) {
        fprintf(out, "alphabet %s[%s]", d->kind_word.name, d->real_dim.text);
        print_loc(out, d->loc);
        return;
    }
    fputs("alphabet", out);
    print_loc(out, d->loc);
    for (const SymbolList *s = d->symbols; s; s = s->next) {
        indent(out, depth + 1);
        fputs("symbol ", out);
        print_symbol(out, &s->sym);
        print_loc(out, s->sym.loc);
    }
}

static void dump_vector(const Vector *v, FILE *out)
{
    fputc('[', out);
    for (const NumberList *n = v->values; n; n = n->next)
        fprintf(out, "%s%s", n == v->values ? "" : ", ", n->num.text);
    fputc(']', out);
}

/* A density emission: its kind, then one line per argument. */
static void dump_density(const Decl *d, FILE *out, int depth)
{
    fprintf(out, "emission %s %s%s", d->name.name, d->kind_word.name, d->fixed ? " fixed" : "");
    print_loc(out, d->loc);
    for (const DensityArg *a = d->args; a; a = a->next) {
        indent(out, depth + 1);
        if (a->kind == DARG_WEIGHTED) {
            fputs("component ", out);
            print_prob(out, &a->weight);
            fprintf(out, " %s", a->name.name);
        } else {
            fputs(a->kind == DARG_VECTOR ? "vector " : "matrix ", out);
            for (const Vector *v = a->rows; v; v = v->next)
                dump_vector(v, out);
        }
        print_loc(out, a->loc);
    }
}

static void dump_emission(const Decl *d, FILE *out, int depth)
{
    if (d->kind_word.name) {
        dump_density(d, out, depth);
        return;
    }
    fprintf(out, "emission %s %s%s", d->name.name, d->is_dict ? "dict" : "list",
            d->fixed ? " fixed" : "");
    print_loc(out, d->loc);
    for (const EmissionEntry *e = d->entries; e; e = e->next) {
        indent(out, depth + 1);
        if (d->is_dict) {
            fputs("entry ", out);
            print_symbol(out, &e->sym);
            fputs(": ", out);
        } else {
            fputs("value ", out);
        }
        print_prob(out, &e->p);
        print_loc(out, e->p.loc);
    }
}

static void dump_transition(const Decl *d, FILE *out)
{
    fprintf(out, "transition %s -> %s ", d->from.name, d->to.name);
    print_prob(out, &d->weight);
    print_emits(out, &d->emits);
    if (d->fixed)
        fputs(" fixed", out);
    print_loc(out, d->loc);
}

static void dump_names(const char *what, const IdentList *names, FILE *out, int depth)
{
    for (const IdentList *n = names; n; n = n->next) {
        indent(out, depth);
        fprintf(out, "%s %s", what, n->id.name);
        print_loc(out, n->id.loc);
    }
}

/* A matrix: its names, then each row's values (%.17g: the values are
 * numbers by now, their text is not kept). */
static void dump_matrix(const Decl *d, FILE *out, int depth)
{
    const Matrix *m = d->matrix;
    fprintf(out, "matrix %d x %d%s", d->n_sources, d->n_targets, d->fixed ? " fixed" : "");
    print_loc(out, d->loc);
    dump_names("source", d->sources, out, depth + 1);
    dump_names("target", d->targets, out, depth + 1);
    for (int r = 0; r < m->n_rows; r++) {
        indent(out, depth + 1);
        fputs("row", out);
        for (int c = 0; c < m->rows[r].n_values; c++)
            fprintf(out, " %.17g", m->values[m->rows[r].first + c]);
        print_loc(out, m->rows[r].loc);
    }
}

static void dump_decl(const Decl *d, FILE *out, int depth)
{
    indent(out, depth);
    switch (d->kind) {
    case DECL_ALPHABET:
        dump_alphabet(d, out, depth);
        break;
    case DECL_STARTSTATE:
        fprintf(out, "startstate %s", d->name.name);
        print_loc(out, d->loc);
        break;
    case DECL_ENDSTATE:
        fprintf(out, "endstate %s", d->name.name);
        print_loc(out, d->loc);
        break;
    case DECL_STATE:
        fprintf(out, "state %s", d->name.name);
        print_emits(out, &d->emits);
        print_loc(out, d->loc);
        break;
    case DECL_EMISSION:
        dump_emission(d, out, depth);
        break;
    case DECL_TRANSITION:
        dump_transition(d, out);
        break;
    case DECL_MATRIX:
        dump_matrix(d, out, depth);
        break;
    }
}

static void dump_expr(const Expr *e, FILE *out, int depth)
{
    indent(out, depth);
    switch (e->kind) {
    case EXPR_NEW:
        fprintf(out, "new %s", e->ident.name);
        break;
    case EXPR_CALL:
        fprintf(out, "call %s", e->ident.name);
        break;
    case EXPR_NAME:
        fprintf(out, "name %s", e->ident.name);
        break;
    case EXPR_ATTR:
        fprintf(out, "attr %s%s", e->ident.name, e->whole_table ? "&" : "");
        break;
    }
    print_loc(out, e->loc);
    if (e->arg)
        dump_expr(e->arg, out, depth + 1);
}

static void dump_stmt(const Stmt *s, FILE *out, int depth)
{
    indent(out, depth);
    if (s->kind == STMT_ASSIGN)
        fprintf(out, "assign %s", s->name.name);
    else
        fputs("print", out);
    print_loc(out, s->loc);
    if (s->expr)
        dump_expr(s->expr, out, depth + 1);
}

void ast_dump(const File *f, FILE *out)
{
    fprintf(out, "file %s\n", f->path ? f->path : "");
    for (const Model *m = f->models; m; m = m->next) {
        indent(out, 1);
        fprintf(out, "model %s", m->name.name);
        if (m->scores)
            fputs(" scores", out);
        print_loc(out, m->loc);
        for (const Decl *d = m->decls; d; d = d->next)
            dump_decl(d, out, 2);
    }
    for (const MainBlock *b = f->mains; b; b = b->next) {
        indent(out, 1);
        fputs("main", out);
        print_loc(out, b->loc);
        for (const Stmt *s = b->stmts; s; s = s->next)
            dump_stmt(s, out, 2);
    }
}
