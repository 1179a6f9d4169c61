/* parser.y: the grammar of .hmm files (see the language reference). Syntax
 * only: every action builds a node through one constructor call, with its
 * location; names are resolved and values checked later, by sema.
 * Syntax errors are reported with what was found and what was expected, and
 * the parser resynchronises at the next ';' (declarations, statements) or
 * '}' (blocks), so one run reports several errors. */

%define api.pure full
%define api.location.type {Loc}
%define api.token.prefix {TOK_}
%define parse.error custom
%define parse.lac full
%locations
%expect 0

%param {yyscan_t scanner}
%parse-param {ParseContext *pc}

%code requires {
#include "support/arena.h"
#include "syntax/ast.h"
#include "support/diag.h"
#include "support/loc.h"
#include "syntax/matrix.h"

#ifndef YY_TYPEDEF_YY_SCANNER_T
#define YY_TYPEDEF_YY_SCANNER_T
typedef void *yyscan_t;
#endif

enum { PARSE_MAX_OPEN_BRACES = 64 };

/* What the parser and the scanner share while one file is read: where
 * memory and messages go, the file being built, and the scanner's place. */
typedef struct ParseContext {
    Arena *arena;
    Diag *diag;
    File *file;
    Model *last_model;      /* tails of file->models and file->mains */
    MainBlock *last_main;
    int line, column;       /* position of the next byte the scanner reads */
    Loc last_token;         /* the latest token handed to the parser */
    const char *token_text; /* its text when it is an identifier, number or quoted symbol */
    Loc comment_start;      /* the open block comment */
    int comment_return;     /* the scanner state it was opened in */
    const char *source;     /* the text being read (matrices keep offsets into it) */
    long offset;            /* byte offset of the next byte the scanner reads */
    int matrix_stage;       /* how far `[A] -> [B]` has come (lexer.l) */
    int header_stage;       /* how far `hmm NAME` has come: `scores` is a word there (lexer.l) */
    MatrixBuilder matrix;   /* the transition matrix being read */
    int brace_depth;        /* '{' not yet closed by '}' */
    Loc open_braces[PARSE_MAX_OPEN_BRACES]; /* where the innermost of them were opened */
} ParseContext;

/* Lists under construction keep their tail so that appending is O(1) and
 * the finished list is in source order. */
typedef struct DeclList { Decl *head, *tail; } DeclList;
typedef struct SymbolListBuilder { SymbolList *head, *tail; } SymbolListBuilder;
typedef struct EntryList { EmissionEntry *head, *tail; } EntryList;
typedef struct StmtList { Stmt *head, *tail; } StmtList;
typedef struct IdentListBuilder { IdentList *head, *tail; int n; } IdentListBuilder;
typedef struct NumberListBuilder { NumberList *head, *tail; int n; } NumberListBuilder;
typedef struct VectorListBuilder { Vector *head, *tail; int n; } VectorListBuilder;
typedef struct DensityArgList { DensityArg *head, *tail; } DensityArgList;
}

%code {
#include "lexer.h"

static void yyerror(Loc *loc, yyscan_t scanner, ParseContext *pc, const char *message);

static const Ident NO_IDENT = {0};
static const Symbol NO_SYMBOL = {0};

static void file_add_model(ParseContext *pc, Model *m)
{
    if (pc->last_model)
        pc->last_model->next = m;
    else
        pc->file->models = m;
    pc->last_model = m;
}

static void file_add_main(ParseContext *pc, MainBlock *b)
{
    if (pc->last_main)
        pc->last_main->next = b;
    else
        pc->file->mains = b;
    pc->last_main = b;
}

/* A declaration that recovery dropped (NULL) is not added. */
static DeclList decls_add(DeclList list, Decl *d)
{
    if (!d)
        return list;
    if (list.tail)
        list.tail->next = d;
    else
        list.head = d;
    list.tail = d;
    return list;
}

static SymbolListBuilder symbols_add(SymbolListBuilder list, SymbolList *s)
{
    if (list.tail)
        list.tail->next = s;
    else
        list.head = s;
    list.tail = s;
    return list;
}

static EntryList entries_add(EntryList list, EmissionEntry *e)
{
    if (list.tail)
        list.tail->next = e;
    else
        list.head = e;
    list.tail = e;
    return list;
}

static IdentListBuilder idents_add(Arena *a, IdentListBuilder list, Ident id)
{
    IdentList *item = ast_ident(a, id);
    if (list.tail)
        list.tail->next = item;
    else
        list.head = item;
    list.tail = item;
    list.n++;
    return list;
}

static Decl *decl_matrix(Arena *a, IdentListBuilder sources, IdentListBuilder targets,
                         Matrix *matrix, int fixed, Loc loc)
{
    Decl *d = ast_decl(a, DECL_MATRIX, loc);
    d->fixed = fixed;
    d->sources = sources.head;
    d->n_sources = sources.n;
    d->targets = targets.head;
    d->n_targets = targets.n;
    d->matrix = matrix;
    return d;
}

static NumberListBuilder numbers_add(Arena *a, NumberListBuilder list, Number n)
{
    NumberList *item = ast_number(a, n);
    if (list.tail)
        list.tail->next = item;
    else
        list.head = item;
    list.tail = item;
    list.n++;
    return list;
}

static VectorListBuilder vectors_add(VectorListBuilder list, Vector *v)
{
    if (list.tail)
        list.tail->next = v;
    else
        list.head = v;
    list.tail = v;
    list.n++;
    return list;
}

static DensityArgList density_args_add(DensityArgList list, DensityArg *d)
{
    if (list.tail)
        list.tail->next = d;
    else
        list.head = d;
    list.tail = d;
    return list;
}

/* A density's argument: a vector, a matrix (its rows) or a weighted name. */
static DensityArg *density_vector(Arena *a, Vector *v, Loc loc)
{
    DensityArg *d = ast_density_arg(a, DARG_VECTOR, loc);
    d->rows = v;
    d->n_rows = 1;
    return d;
}

static DensityArg *density_matrix(Arena *a, VectorListBuilder rows, Loc loc)
{
    DensityArg *d = ast_density_arg(a, DARG_MATRIX, loc);
    d->rows = rows.head;
    d->n_rows = rows.n;
    return d;
}

static DensityArg *density_weighted(Arena *a, Prob weight, Ident name, Loc loc)
{
    DensityArg *d = ast_density_arg(a, DARG_WEIGHTED, loc);
    d->weight = weight;
    d->name = name;
    return d;
}

/* `alphabet real[D];` (sema checks that the word is `real`). */
static Decl *decl_alphabet_real(Arena *a, Ident word, Number dim, Loc loc)
{
    Decl *d = ast_decl(a, DECL_ALPHABET, loc);
    d->is_real = 1;
    d->kind_word = word;
    d->real_dim = dim;
    return d;
}

/* `emission NAME = KIND(ARGS);` (sema resolves KIND: gaussian, mixture). */
static Decl *decl_density(Arena *a, Ident name, Ident kind, DensityArg *args, int fixed, Loc loc)
{
    Decl *d = ast_decl(a, DECL_EMISSION, loc);
    d->fixed = fixed;
    d->name = name;
    d->kind_word = kind;
    d->args = args;
    return d;
}

static StmtList stmts_add(StmtList list, Stmt *s)
{
    if (!s)
        return list;
    if (list.tail)
        list.tail->next = s;
    else
        list.head = s;
    list.tail = s;
    return list;
}

/* startstate, endstate and state declarations: a name and maybe 'emits'. */
static Decl *decl_named(Arena *a, DeclKind kind, Ident name, Ident emits, Loc loc)
{
    Decl *d = ast_decl(a, kind, loc);
    d->name = name;
    d->emits = emits;
    return d;
}

static Decl *decl_alphabet(Arena *a, SymbolList *symbols, Loc loc)
{
    Decl *d = ast_decl(a, DECL_ALPHABET, loc);
    d->symbols = symbols;
    return d;
}

static Decl *decl_emission(Arena *a, Ident name, int is_dict, EmissionEntry *entries, int fixed,
                           Loc loc)
{
    Decl *d = ast_decl(a, DECL_EMISSION, loc);
    d->fixed = fixed;
    d->name = name;
    d->is_dict = is_dict;
    d->entries = entries;
    return d;
}

static Decl *decl_transition(Arena *a, Ident from, Ident to, Prob weight, Ident emits, int fixed,
                             Loc loc)
{
    Decl *d = ast_decl(a, DECL_TRANSITION, loc);
    d->fixed = fixed;
    d->from = from;
    d->to = to;
    d->weight = weight;
    d->emits = emits;
    return d;
}

/* '-' NUMBER: the text keeps the sign so that messages show what was written,
 * and its bytes begin at the '-' (training writes a fitted mean over them). */
static Number number_negated(Arena *a, const char *source, Number n, Loc loc)
{
    long at = n.begin;
    while (source && at > 0 && (source[at - 1] == ' ' || source[at - 1] == '\t'))
        at--;
    if (source && at > 0 && source[at - 1] == '-')
        n.begin = at - 1;
    n.text = arena_printf(a, "-%s", n.text);
    n.value = -n.value;
    n.negative = 1;
    n.loc = loc;
    return n;
}

static Prob prob_single(Number n, Loc loc)
{
    return (Prob){.num = n, .loc = loc};
}

static Prob prob_fraction(Number num, Number den, Loc loc)
{
    return (Prob){.num = num, .den = den, .has_den = 1, .loc = loc};
}

static Prob prob_length(LExpr *e, Loc loc)
{
    return (Prob){.length = e, .loc = loc};
}

/* A name in a length-dependent weight: sema allows only L. */
static LExpr *lexpr_length(ParseContext *pc, Ident id)
{
    LExpr *e = lexpr_new(pc->arena, LX_LENGTH, NULL, NULL, id.loc);
    e->text = id.name;
    return e;
}

/* `hmm NAME scores { ... }`: the model's numbers are scores (odds). */
static Model *model_of_scores(Model *m)
{
    m->scores = 1;
    return m;
}

static Symbol symbol_bare(Ident id)
{
    return (Symbol){.text = id.name, .quoted = 0, .loc = id.loc};
}

static Symbol symbol_number(Number n)
{
    return (Symbol){.text = n.text, .quoted = 0, .loc = n.loc};
}

static Expr *whole_table(Expr *attr)
{
    attr->whole_table = 1;
    return attr;
}
}

%union {
    Ident ident;
    Number number;
    Symbol symbol;
    Prob prob;
    Decl *decl;
    DeclList decls;
    SymbolListBuilder symbols;
    EmissionEntry *entry;
    EntryList entries;
    Model *model;
    MainBlock *main_block;
    Stmt *stmt;
    StmtList stmts;
    Expr *expr;
    IdentListBuilder idents;
    Matrix *matrix;
    LExpr *lexpr;
    int flag;
    NumberListBuilder numbers;
    Vector *vector;
    VectorListBuilder vectors;
    DensityArg *density_arg;
    DensityArgList density_args;
}

/* The aliases are the names the error messages use. */
%token <ident> IDENT "identifier"
%token <number> NUMBER "number"
%token <symbol> QUOTED "quoted symbol"
%token HMM "'hmm'" ALPHABET "'alphabet'" STARTSTATE "'startstate'"
%token STATE "'state'" ENDSTATE "'endstate'" EMITS "'emits'"
%token EMISSION "'emission'" MAIN "'main'" NEW "'new'" PRINT "'print'" FIXED "'fixed'"
%token SCORES "'scores'" /* only right after `hmm NAME` (lexer.l): not reserved */
%token ARROW "'->'"
%token <matrix> MATRIX "a matrix of weights '[p11, p12; p21, p22]'"

%type <model> model
%type <decls> decls
%type <decl> decl
%type <symbols> symbols symbol_list
%type <symbol> symbol
%type <entries> list_entries dict_entries entry_list dict_entry_list
%type <entry> dict_entry
%type <number> number
%type <prob> prob weight
%type <main_block> main_block
%type <stmts> stmts
%type <stmt> stmt
%type <expr> expr
%type <idents> state_list
%type <flag> fixed
%type <numbers> numbers number_list
%type <vector> vector
%type <vectors> vector_list
%type <density_arg> density_arg
%type <density_args> density_args density_arg_list
%type <lexpr> lexpr lterm lunary lpower latom

%initial-action { @$ = (Loc){1, 1, 1, 1}; }

%%

file
    : %empty
    | file model                { file_add_model(pc, $2); }
    | file main_block           { file_add_main(pc, $2); }
    | file error model          { file_add_model(pc, $3); }
    | file error main_block     { file_add_main(pc, $3); }
    | file error '}'
    ;

model
    : HMM IDENT '{' decls '}'           { $$ = ast_model(pc->arena, $2, $4.head, @$); }
    | HMM IDENT '{' decls error '}'     { $$ = ast_model(pc->arena, $2, $4.head, @$); }
    | HMM IDENT SCORES '{' decls '}'    { $$ = model_of_scores(ast_model(pc->arena, $2, $5.head, @$)); }
    | HMM IDENT SCORES '{' decls error '}' { $$ = model_of_scores(ast_model(pc->arena, $2, $5.head, @$)); }
    ;

decls
    : %empty                    { $$ = (DeclList){0}; }
    | decls decl                { $$ = decls_add($1, $2); }
    ;

decl
    : ALPHABET '[' symbols ']' ';'                  { $$ = decl_alphabet(pc->arena, $3.head, @$); }
    | ALPHABET IDENT '[' NUMBER ']' ';'             { $$ = decl_alphabet_real(pc->arena, $2, $4, @$); }
    | STARTSTATE IDENT ';'                          { $$ = decl_named(pc->arena, DECL_STARTSTATE, $2, NO_IDENT, @$); }
    | ENDSTATE IDENT ';'                            { $$ = decl_named(pc->arena, DECL_ENDSTATE, $2, NO_IDENT, @$); }
    | STATE IDENT ';'                               { $$ = decl_named(pc->arena, DECL_STATE, $2, NO_IDENT, @$); }
    | STATE IDENT EMITS IDENT ';'                   { $$ = decl_named(pc->arena, DECL_STATE, $2, $4, @$); }
    | EMISSION IDENT '=' '[' list_entries ']' fixed ';'   { $$ = decl_emission(pc->arena, $2, 0, $5.head, $7, @$); }
    | EMISSION IDENT '=' '{' dict_entries '}' fixed ';'   { $$ = decl_emission(pc->arena, $2, 1, $5.head, $7, @$); }
    | EMISSION IDENT '=' '{' error '}' ';'          { $$ = NULL; yyerrok; }
    | EMISSION IDENT '=' IDENT '(' density_args ')' fixed ';'
                                                    { $$ = decl_density(pc->arena, $2, $4, $6.head, $8, @$); }
    | IDENT ARROW IDENT weight fixed ';'              { $$ = decl_transition(pc->arena, $1, $3, $4, NO_IDENT, $5, @$); }
    | IDENT ARROW IDENT weight fixed EMITS IDENT fixed ';'
                                                    { $$ = decl_transition(pc->arena, $1, $3, $4, $7, $5 || $8, @$); }
    | '[' state_list ']' ARROW '[' state_list ']' MATRIX fixed ';'
                                                    { $$ = decl_matrix(pc->arena, $2, $6, $8, $9, @$); }
    | error ';'                                     { $$ = NULL; yyerrok; }
    ;

/* `fixed` after a weight or an emission's values: training keeps them as written. */
fixed
    : %empty                    { $$ = 0; }
    | FIXED                     { $$ = 1; }
    ;

state_list
    : IDENT                     { $$ = idents_add(pc->arena, (IdentListBuilder){0}, $1); }
    | state_list ',' IDENT      { $$ = idents_add(pc->arena, $1, $3); }
    ;

symbols
    : %empty                    { $$ = (SymbolListBuilder){0}; }
    | symbol_list
    ;

symbol_list
    : symbol                    { $$ = symbols_add((SymbolListBuilder){0}, ast_symbol(pc->arena, $1)); }
    | symbol_list ',' symbol    { $$ = symbols_add($1, ast_symbol(pc->arena, $3)); }
    ;

symbol
    : IDENT                     { $$ = symbol_bare($1); }
    | NUMBER                    { $$ = symbol_number($1); }
    | QUOTED
    ;

list_entries
    : %empty                    { $$ = (EntryList){0}; }
    | entry_list
    ;

entry_list
    : prob                      { $$ = entries_add((EntryList){0}, ast_entry(pc->arena, NO_SYMBOL, $1)); }
    | entry_list ',' prob       { $$ = entries_add($1, ast_entry(pc->arena, NO_SYMBOL, $3)); }
    ;

dict_entries
    : %empty                    { $$ = (EntryList){0}; }
    | dict_entry_list
    ;

dict_entry_list
    : dict_entry                        { $$ = entries_add((EntryList){0}, $1); }
    | dict_entry_list ',' dict_entry    { $$ = entries_add($1, $3); }
    ;

dict_entry
    : symbol ':' prob           { $$ = ast_entry(pc->arena, $1, $3); }
    ;

prob
    : number                    { $$ = prob_single($1, @$); }
    | number '/' number         { $$ = prob_fraction($1, $3, @$); }
    ;

/* a transition's weight: a number, a fraction, or `(EXPR)` of L */
weight
    : prob
    | '(' lexpr ')'             { $$ = prob_length($2, @$); }
    ;

/* a weight as a function of the sequence length L: sums of products of
 * powers (^ binds tightest and to the right; -L^2 is -(L^2)) */
lexpr
    : lterm
    | lexpr '+' lterm           { $$ = lexpr_new(pc->arena, LX_ADD, $1, $3, @$); }
    | lexpr '-' lterm           { $$ = lexpr_new(pc->arena, LX_SUB, $1, $3, @$); }
    ;

lterm
    : lunary
    | lterm '*' lunary          { $$ = lexpr_new(pc->arena, LX_MUL, $1, $3, @$); }
    | lterm '/' lunary          { $$ = lexpr_new(pc->arena, LX_DIV, $1, $3, @$); }
    ;

lunary
    : lpower
    | '-' lunary                { $$ = lexpr_new(pc->arena, LX_NEG, $2, NULL, @$); }
    ;

lpower
    : latom
    | latom '^' lunary          { $$ = lexpr_new(pc->arena, LX_POW, $1, $3, @$); }
    ;

latom
    : NUMBER                    { $$ = lexpr_number(pc->arena, $1.text, $1.value, @$); }
    | IDENT                     { $$ = lexpr_length(pc, $1); }
    | '(' lexpr ')'             { $$ = $2; }
    ;

number
    : NUMBER
    | '-' NUMBER                { $$ = number_negated(pc->arena, pc->source, $2, @$); }
    ;

/* The arguments of a density: gaussian([m1, m2], [v1, v2]) or
 * gaussian([m1, m2], [[c11, c12], [c21, c22]]), mixture(0.4 g1, 0.6 g2). */
density_args
    : %empty                    { $$ = (DensityArgList){0}; }
    | density_arg_list
    ;

density_arg_list
    : density_arg                       { $$ = density_args_add((DensityArgList){0}, $1); }
    | density_arg_list ',' density_arg  { $$ = density_args_add($1, $3); }
    ;

density_arg
    : vector                    { $$ = density_vector(pc->arena, $1, @$); }
    | '[' vector_list ']'       { $$ = density_matrix(pc->arena, $2, @$); }
    | prob IDENT                { $$ = density_weighted(pc->arena, $1, $2, @$); }
    ;

vector_list
    : vector                    { $$ = vectors_add((VectorListBuilder){0}, $1); }
    | vector_list ',' vector    { $$ = vectors_add($1, $3); }
    ;

vector
    : '[' numbers ']'           { $$ = ast_vector(pc->arena, $2.head, $2.n, @$); }
    ;

numbers
    : %empty                    { $$ = (NumberListBuilder){0}; }
    | number_list
    ;

number_list
    : number                    { $$ = numbers_add(pc->arena, (NumberListBuilder){0}, $1); }
    | number_list ',' number    { $$ = numbers_add(pc->arena, $1, $3); }
    ;

main_block
    : MAIN '{' stmts '}'            { $$ = ast_main(pc->arena, $3.head, @$); }
    | MAIN '{' stmts error '}'      { $$ = ast_main(pc->arena, $3.head, @$); }
    ;

stmts
    : %empty                    { $$ = (StmtList){0}; }
    | stmts stmt                { $$ = stmts_add($1, $2); }
    ;

stmt
    : IDENT '=' expr ';'        { $$ = ast_stmt(pc->arena, STMT_ASSIGN, $1, $3, @$); }
    | PRINT expr ';'            { $$ = ast_stmt(pc->arena, STMT_PRINT, NO_IDENT, $2, @$); }
    | error ';'                 { $$ = NULL; yyerrok; }
    ;

expr
    : NEW IDENT '(' ')'         { $$ = ast_expr(pc->arena, EXPR_NEW, $2, NULL, @$); }
    | IDENT '(' expr ')'        { $$ = ast_expr(pc->arena, EXPR_CALL, $1, $3, @$); }
    | IDENT                     { $$ = ast_expr(pc->arena, EXPR_NAME, $1, NULL, @$); }
    | expr '.' IDENT            { $$ = ast_expr(pc->arena, EXPR_ATTR, $3, $1, @$); }
    | expr '.' IDENT '&'        { $$ = whole_table(ast_expr(pc->arena, EXPR_ATTR, $3, $1, @$)); }
    ;

%%

/* Bison's own failures: with custom syntax error reports, the only one left
 * is the parser's stack outgrowing its limit. */
static void yyerror(Loc *loc, yyscan_t scanner, ParseContext *pc, const char *message)
{
    diag_error(pc->diag, *loc, "nested too deeply for the parser (%s)", message);
}

/* The token the parser stumbled on, as a person would name it. */
static void describe_unexpected(const ParseContext *pc, yysymbol_kind_t token, FILE *out)
{
    switch (token) {
    case YYSYMBOL_IDENT:
        fprintf(out, "identifier '%s'", pc->token_text);
        break;
    case YYSYMBOL_NUMBER:
        fprintf(out, "number '%s'", pc->token_text);
        break;
    case YYSYMBOL_QUOTED:
        fprintf(out, "quoted symbol '%s'", pc->token_text);
        break;
    default:
        fputs(yysymbol_name(token), out);
        break;
    }
}

/* ", expecting A", ", expecting A or B", ", expecting A, B or C". */
static void describe_expected(const yypcontext_t *ctx, FILE *out)
{
    yysymbol_kind_t expected[YYNTOKENS];
    int n = yypcontext_expected_tokens(ctx, expected, YYNTOKENS);
    int shown = 0;
    for (int i = 0; i < n; i++)
        if (expected[i] != YYSYMBOL_YYEOF)
            expected[shown++] = expected[i];
    for (int i = 0; i < shown; i++) {
        const char *separator = i == 0 ? ", expecting " : i + 1 == shown ? " or " : ", ";
        fprintf(out, "%s%s", separator, yysymbol_name(expected[i]));
    }
}

/* 1 when the parser could take `token` here. */
static int expects(const yypcontext_t *ctx, yysymbol_kind_t token)
{
    yysymbol_kind_t expected[YYNTOKENS];
    int n = yypcontext_expected_tokens(ctx, expected, YYNTOKENS);
    for (int i = 0; i < n; i++)
        if (expected[i] == token)
            return 1;
    return 0;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, yyscan_t scanner, ParseContext *pc)
{
    yysymbol_kind_t token = yypcontext_token(ctx);
    Loc loc = *yypcontext_location(ctx);
    if (token == YYSYMBOL_YYEOF && pc->brace_depth > 0) {
        int innermost = pc->brace_depth < PARSE_MAX_OPEN_BRACES ? pc->brace_depth : PARSE_MAX_OPEN_BRACES;
        diag_error(pc->diag, loc, "unexpected end of file: a '}' is missing");
        diag_note(pc->diag, pc->open_braces[innermost - 1], "this '{' is not closed");
        return 0;
    }
    if (token == YYSYMBOL_FIXED && expects(ctx, YYSYMBOL_IDENT)) {
        diag_error(pc->diag, loc, "'fixed' is a reserved word (it marks a weight or an emission "
                   "that training keeps as written) and cannot be a name: choose another name");
        return 0;
    }
    char *message = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&message, &size);
    if (!out) {
        diag_error(pc->diag, loc, "syntax error");
        return 0;
    }
    fputs("syntax error: unexpected ", out);
    describe_unexpected(pc, token, out);
    describe_expected(ctx, out);
    fclose(out);
    diag_error(pc->diag, loc, "%s", message);
    free(message);
    return 0;
}
