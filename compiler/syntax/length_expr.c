/* length_expr.c: length-dependent weights (length_expr.h): building the
 * tree, evaluating it at one length, writing it as C. */
#include "syntax/length_expr.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

LExpr *lexpr_new(Arena *a, LExprKind kind, const LExpr *x, const LExpr *y, Loc loc)
{
    LExpr *e = ARENA_NEW(a, LExpr);
    e->kind = kind;
    e->a = x;
    e->b = y;
    e->loc = loc;
    return e;
}

LExpr *lexpr_number(Arena *a, const char *text, double value, Loc loc)
{
    LExpr *e = lexpr_new(a, LX_NUMBER, NULL, NULL, loc);
    e->text = text;
    e->value = value;
    return e;
}

double lexpr_eval(const LExpr *e, double L)
{
    switch (e->kind) {
    case LX_NUMBER: return e->value;
    case LX_LENGTH: return L;
    case LX_ADD: return lexpr_eval(e->a, L) + lexpr_eval(e->b, L);
    case LX_SUB: return lexpr_eval(e->a, L) - lexpr_eval(e->b, L);
    case LX_MUL: return lexpr_eval(e->a, L) * lexpr_eval(e->b, L);
    case LX_DIV: return lexpr_eval(e->a, L) / lexpr_eval(e->b, L);
    case LX_POW: return pow(lexpr_eval(e->a, L), lexpr_eval(e->b, L));
    case LX_NEG: return -lexpr_eval(e->a, L);
    }
    return NAN;
}

const LExpr *lexpr_unknown_name(const LExpr *e)
{
    if (!e)
        return NULL;
    if (e->kind == LX_LENGTH && e->text && strcmp(e->text, "L") != 0)
        return e;
    const LExpr *a = lexpr_unknown_name(e->a);
    return a ? a : lexpr_unknown_name(e->b);
}

int lexpr_uses_length(const LExpr *e)
{
    if (!e)
        return 0;
    return e->kind == LX_LENGTH || lexpr_uses_length(e->a) || lexpr_uses_length(e->b);
}

const char *lexpr_c(Arena *a, const LExpr *e)
{
    static const char op[] = {[LX_ADD] = '+', [LX_SUB] = '-', [LX_MUL] = '*', [LX_DIV] = '/'};
    switch (e->kind) {
    case LX_NUMBER: {
        char buf[40];
        snprintf(buf, sizeof buf, "%.17g", e->value);
        /* a double literal, never an int one (1/3 must not be 0) */
        int plain = 1;
        for (const char *c = buf; *c; c++)
            plain &= (*c >= '0' && *c <= '9') || *c == '-';
        return arena_printf(a, "%s%s", buf, plain ? ".0" : "");
    }
    case LX_LENGTH: return "(double)L"; /* the code's L may be an integer */
    case LX_POW: return arena_printf(a, "pow(%s, %s)", lexpr_c(a, e->a), lexpr_c(a, e->b));
    case LX_NEG: return arena_printf(a, "(-%s)", lexpr_c(a, e->a));
    default:
        return arena_printf(a, "(%s %c %s)", lexpr_c(a, e->a), op[e->kind], lexpr_c(a, e->b));
    }
}

/* Binding strength: sums, products, negation, powers. */
static int precedence(const LExpr *e)
{
    switch (e->kind) {
    case LX_ADD: case LX_SUB: return 1;
    case LX_MUL: case LX_DIV: return 2;
    case LX_NEG: return 3;
    case LX_POW: return 4;
    default: return 5;
    }
}

static const char *operand(Arena *a, const LExpr *e, int parens)
{
    const char *text = lexpr_source(a, e);
    return parens ? arena_printf(a, "(%s)", text) : text;
}

const char *lexpr_source(Arena *a, const LExpr *e)
{
    static const char op[] = {[LX_ADD] = '+', [LX_SUB] = '-', [LX_MUL] = '*', [LX_DIV] = '/',
                              [LX_POW] = '^'};
    int p = precedence(e);
    switch (e->kind) {
    case LX_NUMBER: return e->text;
    case LX_LENGTH: return "L";
    case LX_NEG: return arena_printf(a, "-%s", operand(a, e->a, precedence(e->a) < p));
    default: break;
    }
    /* + - * / group to the left, ^ to the right: the other side needs
       parentheses at the same strength */
    int right_assoc = e->kind == LX_POW;
    const char *x = operand(a, e->a, precedence(e->a) < p + right_assoc);
    const char *y = operand(a, e->b, precedence(e->b) < p + !right_assoc);
    return arena_printf(a, "%s %c %s", x, op[e->kind], y);
}
