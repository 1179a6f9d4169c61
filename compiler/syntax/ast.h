/* ast.h: the syntax tree the parser builds for one .hmm file: models, their
 * declarations and the main block. Every node carries its source location.
 * The tree holds syntax only; names are resolved and values checked by sema. */
#ifndef HMMC_AST_H
#define HMMC_AST_H

#include "support/arena.h"
#include "support/loc.h"
#include "syntax/length_expr.h"

/* An identifier as written, with where it was written. */
typedef struct Ident {
    const char *name;
    Loc loc;
} Ident;

/* A number as written: its text (for messages) and its value (strtod of the
 * text; may be inf when the text overflows a double, 0 when it underflows). */
typedef struct Number {
    const char *text;
    double value;
    int negative; /* written with a leading '-' (always an error for weights) */
    Loc loc;
    long begin, end; /* bytes [begin, end) of the number in the source ('-' included) */
} Number;

/* A probability or weight: NUMBER, or NUMBER / NUMBER, or (for a
 * transition) `(EXPR)` of the sequence length L (length_expr.h). */
typedef struct Prob {
    Number num;
    Number den;
    int has_den; /* 1 for a fraction */
    Loc loc;     /* the whole expression */
    const LExpr *length; /* `(EXPR)`: num and den are unused; else NULL */
} Prob;

/* Bytes [begin, end) of a weight's or value's whole text in the source
 * (`1/6` as one), for --train, which writes the source with them replaced. */
long prob_begin(const Prob *p);
long prob_end(const Prob *p);

/* An alphabet symbol as written: bare (1, A, x) or quoted ('*'). The text is
 * kept whole so that sema can reject "12" or "ab" with a clear message. */
typedef struct Symbol {
    const char *text; /* without quotes */
    int quoted;
    Loc loc;
} Symbol;

/* One entry of an emission: a value (list form) or symbol: value (dict form). */
typedef struct EmissionEntry {
    Symbol sym; /* dict form only */
    Prob p;
    struct EmissionEntry *next;
} EmissionEntry;

typedef struct SymbolList {
    Symbol sym;
    struct SymbolList *next;
} SymbolList;

/* A list of names as written (the sources and destinations of a matrix). */
typedef struct IdentList {
    Ident id;
    struct IdentList *next;
} IdentList;

/* One row of a transition matrix: where its values start in Matrix.values,
 * how many it has, and where it starts in the source (its first byte after
 * the '[' or ';' before it, and that byte's line and column), so that the
 * place of one value can be found again when a message needs it. */
typedef struct MatrixRow {
    long first;
    int n_values;
    Loc loc;         /* the row's values, first to last (the ';' or ']' when empty) */
    long offset;     /* byte offset of the row's start in the source */
    int line, column;/* line and column of that byte */
} MatrixRow;

/* The values of a transition matrix `[ p11, p12; p21, p22 ]`, read by the
 * lexer straight into one array: no node and no text per value. Each value
 * is already checked as a weight (finite, >= 0; a value with an error is
 * kept as 0, after its message); 0 means no transition. */
typedef struct Matrix {
    double *values; /* the rows one after the other */
    long n_values;
    MatrixRow *rows;
    int n_rows;
    Loc loc;        /* from '[' to ']' */
    const char *source; /* the source text the offsets of rows count into */
} Matrix;

/* Continuous observations (`alphabet real[D];`): an emission may be a density,
 * `gaussian(MEAN, VAR)` or `mixture(w1 E1, ...)`, whose arguments are vectors
 * `[a, b]`, matrices `[[a, b], [c, d]]` or weighted names `0.4 g1`. */
typedef struct NumberList {
    Number num;
    struct NumberList *next;
} NumberList;

/* One vector as written: its numbers and their count. */
typedef struct Vector {
    NumberList *values;
    int n;
    Loc loc; /* from '[' to ']' */
    struct Vector *next; /* the next row of a matrix */
} Vector;

typedef enum DensityArgKind {
    DARG_VECTOR,  /* [a, b, ...] */
    DARG_MATRIX,  /* [[a, b], [c, d]]: rows */
    DARG_WEIGHTED /* WEIGHT NAME (mixture components) */
} DensityArgKind;

typedef struct DensityArg {
    DensityArgKind kind;
    Loc loc;
    Vector *rows;  /* DARG_VECTOR: one; DARG_MATRIX: each row */
    int n_rows;
    Prob weight;   /* DARG_WEIGHTED */
    Ident name;    /* DARG_WEIGHTED */
    struct DensityArg *next;
} DensityArg;

typedef enum DeclKind {
    DECL_ALPHABET,   /* alphabet [a, b, ...]; */
    DECL_STARTSTATE, /* startstate S; */
    DECL_ENDSTATE,   /* endstate E; */
    DECL_STATE,      /* state X; or state X emits EM; */
    DECL_EMISSION,   /* emission EM = [...]; or emission EM = { a: p }; */
    DECL_TRANSITION, /* A -> B P; or A -> B P emits EM; */
    DECL_MATRIX      /* [A, B] -> [C, D] [p, q; r, s]; */
} DeclKind;

typedef struct Decl {
    DeclKind kind;
    Loc loc;                  /* the whole declaration */
    Ident name;               /* state, start, end or emission name */
    Ident emits;              /* emission named by 'emits'; name NULL if none */
    SymbolList *symbols;      /* DECL_ALPHABET */
    int is_real;              /* DECL_ALPHABET: `alphabet real[D];` (then `kind_word` is
                                 `real` as written and real_dim is D) */
    Ident kind_word;          /* DECL_ALPHABET: the word before '['; DECL_EMISSION: the
                                 density's kind (`gaussian`, `mixture`), name NULL for a table */
    Number real_dim;          /* DECL_ALPHABET with is_real */
    DensityArg *args;         /* DECL_EMISSION of a density: its arguments in order */
    int is_dict;              /* DECL_EMISSION: 1 for the { a: p } form */
    EmissionEntry *entries;   /* DECL_EMISSION */
    Ident from, to;           /* DECL_TRANSITION */
    Prob weight;              /* DECL_TRANSITION */
    IdentList *sources;       /* DECL_MATRIX: one per row */
    IdentList *targets;       /* DECL_MATRIX: one per column */
    int n_sources, n_targets; /* DECL_MATRIX */
    Matrix *matrix;           /* DECL_MATRIX */
    int fixed;                /* DECL_TRANSITION, DECL_EMISSION, DECL_MATRIX: written with
                                 `fixed` (training keeps its numbers as written; for a
                                 matrix, every one of its weights) */
    struct Decl *next;
} Decl;

typedef struct Model {
    Ident name;
    int scores;   /* declared `hmm NAME scores {`: its numbers are scores (odds), so
                     sums above 1 are not warned of (sema_sums.c) */
    Decl *decls; /* in source order */
    Loc loc;
    struct Model *next;
} Model;

typedef enum ExprKind {
    EXPR_NEW,  /* new H() : an instance of model H */
    EXPR_CALL, /* ALG(arg) : run an algorithm, yields its table */
    EXPR_NAME, /* a name bound by an assignment */
    EXPR_ATTR  /* obj.attr or obj.attr& */
} ExprKind;

typedef struct Expr {
    ExprKind kind;
    Loc loc;
    Ident ident;       /* EXPR_NEW: model; EXPR_CALL: algorithm; EXPR_NAME: name; EXPR_ATTR: attribute */
    struct Expr *arg;  /* EXPR_CALL: argument; EXPR_ATTR: object */
    int whole_table;   /* EXPR_ATTR: written with '&' */
} Expr;

typedef enum StmtKind {
    STMT_ASSIGN, /* NAME = EXPR; */
    STMT_PRINT   /* print EXPR; */
} StmtKind;

typedef struct Stmt {
    StmtKind kind;
    Loc loc;
    Ident name; /* STMT_ASSIGN */
    Expr *expr;
    struct Stmt *next;
} Stmt;

typedef struct MainBlock {
    Stmt *stmts;
    Loc loc;
    struct MainBlock *next;
} MainBlock;

/* A whole parsed file. */
typedef struct File {
    const char *path;
    Model *models;    /* in source order */
    MainBlock *mains; /* normally exactly one; sema reports others */
} File;

/* Constructors called from the parser's actions. All memory comes from the arena. */
Model *ast_model(Arena *a, Ident name, Decl *decls, Loc loc);
Decl *ast_decl(Arena *a, DeclKind kind, Loc loc);
Expr *ast_expr(Arena *a, ExprKind kind, Ident ident, Expr *arg, Loc loc);
Stmt *ast_stmt(Arena *a, StmtKind kind, Ident name, Expr *expr, Loc loc);
MainBlock *ast_main(Arena *a, Stmt *stmts, Loc loc);
EmissionEntry *ast_entry(Arena *a, Symbol sym, Prob p);
SymbolList *ast_symbol(Arena *a, Symbol sym);
IdentList *ast_ident(Arena *a, Ident id);
NumberList *ast_number(Arena *a, Number n);
Vector *ast_vector(Arena *a, NumberList *values, int n, Loc loc);
DensityArg *ast_density_arg(Arena *a, DensityArgKind kind, Loc loc);

/* The place of value `column` of row `row` of a matrix (found by reading
 * the row again), or the row's place when the row is shorter. */
Loc matrix_value_loc(const Matrix *m, int row, int column);
/* Bytes [begin[c], end[c]) of each value c of row `row` in the source (one
 * pass over the row's text; rows[row].n_values of them). */
void matrix_row_spans(const Matrix *m, int row, long *begin, long *end);

/* Print the tree in a stable text form (for --dump-after=parse and golden tests). */
#include <stdio.h>
void ast_dump(const File *f, FILE *out);

#endif
