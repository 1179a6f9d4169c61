/* length_expr.h: a weight that depends on the length L of the sequence being
 * scored, written `(EXPR)` with numbers, L, + - * / ^ and parentheses
 * (docs/language.md, "Length-dependent weights"): its tree, its value at a
 * given L, and its text as a C expression of a double L for the backends. */
#ifndef HMMC_LENGTH_EXPR_H
#define HMMC_LENGTH_EXPR_H

#include "support/arena.h"
#include "support/loc.h"

typedef enum LExprKind {
    LX_NUMBER, /* value */
    LX_LENGTH, /* L (text: the name written, which sema checks is L) */
    LX_ADD, LX_SUB, LX_MUL, LX_DIV, LX_POW, /* a op b */
    LX_NEG     /* -a */
} LExprKind;

typedef struct LExpr {
    LExprKind kind;
    double value;      /* LX_NUMBER */
    const char *text;  /* LX_NUMBER, LX_LENGTH: as written */
    const struct LExpr *a, *b;
    Loc loc;
} LExpr;

LExpr *lexpr_new(Arena *a, LExprKind kind, const LExpr *x, const LExpr *y, Loc loc);
LExpr *lexpr_number(Arena *a, const char *text, double value, Loc loc);

/* The value at length L (IEEE arithmetic: may be inf or NaN). */
double lexpr_eval(const LExpr *e, double L);

/* The expression as C source reading a variable L (an integer or a
 * double: read as (double)L), parenthesised, numbers to every digit. */
const char *lexpr_c(Arena *a, const LExpr *e);

/* The expression as the language writes it, for messages and comments,
 * with the parentheses its grouping needs (none around the whole). */
const char *lexpr_source(Arena *a, const LExpr *e);

/* The first name in it that is not L, or NULL. */
const LExpr *lexpr_unknown_name(const LExpr *e);

/* 1 when L appears in it. */
int lexpr_uses_length(const LExpr *e);

#endif
