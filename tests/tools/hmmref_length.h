/* hmmref_length.h: length-dependent weights for hmmref (included by
 * hmmref.c): a weight written `(EXPR)` of L, the sequence's length, is kept
 * as its text and evaluated here, with code of its own (recursive descent
 * over the characters: numbers, L, + - * / ^, unary -, parentheses; ^ binds
 * tightest, to the right), in long double, for each sequence. */

typedef struct {
    const char *s;
    long double L;
    int bad;
} LengthExpr;

static long double length_sum(LengthExpr *e);

static void length_space(LengthExpr *e)
{
    while (isspace((unsigned char)*e->s))
        e->s++;
}

static long double length_atom(LengthExpr *e)
{
    length_space(e);
    if (*e->s == '(') {
        e->s++;
        long double v = length_sum(e);
        length_space(e);
        if (*e->s != ')')
            e->bad = 1;
        else
            e->s++;
        return v;
    }
    if (*e->s == 'L' && !isalnum((unsigned char)e->s[1]) && e->s[1] != '_') {
        e->s++;
        return e->L;
    }
    char *end;
    long double v = strtold(e->s, &end);
    if (end == e->s || *e->s == '-' || *e->s == '+')
        e->bad = 1;
    e->s = end == e->s ? e->s + 1 : end;
    return v;
}

/* unary: '-' unary | atom ['^' unary] */
static long double length_unary(LengthExpr *e)
{
    length_space(e);
    if (*e->s == '-') {
        e->s++;
        return -length_unary(e);
    }
    long double v = length_atom(e);
    length_space(e);
    if (*e->s == '^') {
        e->s++;
        return powl(v, length_unary(e));
    }
    return v;
}

static long double length_product(LengthExpr *e)
{
    long double v = length_unary(e);
    for (;;) {
        length_space(e);
        if (*e->s == '*')
            e->s++, v *= length_unary(e);
        else if (*e->s == '/')
            e->s++, v /= length_unary(e);
        else
            return v;
    }
}

static long double length_sum(LengthExpr *e)
{
    long double v = length_product(e);
    for (;;) {
        length_space(e);
        if (*e->s == '+')
            e->s++, v += length_product(e);
        else if (*e->s == '-')
            e->s++, v -= length_product(e);
        else
            return v;
    }
}

/* The value of text (the whole `(EXPR)`) at length L; dies on malformed text. */
static long double length_value(const char *text, long double L)
{
    LengthExpr e = {text, L, 0};
    long double v = length_sum(&e);
    length_space(&e);
    if (e.bad || *e.s)
        die("malformed length-dependent weight %s", text);
    return v;
}
