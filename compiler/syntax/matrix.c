/* matrix.c: the builder that reads a transition matrix value by value for
 * the lexer, and finding a value's place again for sema's messages
 * (matrix.h). */
#include "syntax/matrix.h"

#include <string.h>

#include "syntax/number.h"

static const char *const WHAT = "transition weight";

static void new_row(MatrixBuilder *b, long offset, int line, int column)
{
    Matrix *m = b->m;
    if (m->n_rows == b->cap_rows) {
        int cap = b->cap_rows ? 2 * b->cap_rows : 16;
        m->rows = arena_grow(b->arena, m->rows, sizeof(MatrixRow) * (size_t)b->cap_rows,
                             sizeof(MatrixRow) * (size_t)cap);
        b->cap_rows = cap;
    }
    MatrixRow *r = &m->rows[m->n_rows++];
    r->first = m->n_values;
    r->n_values = 0;
    r->loc = (Loc){line, column, line, column};
    r->offset = offset;
    r->line = line;
    r->column = column;
}

void matrix_begin(MatrixBuilder *b, Arena *a, Diag *d, const char *source, Loc open,
                  long offset, int line, int column)
{
    memset(b, 0, sizeof *b);
    b->arena = a;
    b->diag = d;
    b->m = ARENA_NEW(a, Matrix);
    b->m->source = source;
    b->m->loc = open;
    b->expect = MATRIX_VALUE;
    new_row(b, offset, line, column);
}

/* Appends the value just read to the current row. */
static void finish_value(MatrixBuilder *b)
{
    Matrix *m = b->m;
    if (m->n_values == b->cap_values) {
        long cap = b->cap_values ? b->cap_values + b->cap_values / 2 : 1024;
        m->values = arena_grow(b->arena, m->values, sizeof(double) * (size_t)b->cap_values,
                               sizeof(double) * (size_t)cap);
        b->cap_values = cap;
    }
    m->values[m->n_values++] = b->value;
    MatrixRow *r = &m->rows[m->n_rows - 1];
    if (r->n_values++ == 0) {
        r->loc.first_line = b->value_loc.first_line;
        r->loc.first_column = b->value_loc.first_column;
    }
    r->loc.last_line = b->value_loc.last_line;
    r->loc.last_column = b->value_loc.last_column;
    b->expect = MATRIX_AFTER_VALUE;
}

static Loc span(Loc first, Loc last)
{
    return (Loc){first.first_line, first.first_column, last.last_line, last.last_column};
}

/* The number as sema's checks see it: its text (with the sign written
 * before it) NUL-terminated in the arena only when a message may need it. */
static Number number_of(MatrixBuilder *b, const char *text, size_t length, int negative, Loc loc)
{
    Number n = {.value = number_parse(text, length), .negative = negative, .loc = loc};
    n.text = negative ? arena_printf(b->arena, "-%.*s", (int)length, text) : text;
    return n;
}

void matrix_number(MatrixBuilder *b, const char *text, size_t length, int malformed, Loc loc)
{
    if (b->expect == MATRIX_AFTER_VALUE) {
        diag_error(b->diag, loc, "a ',' is missing before this value of the transition matrix");
        finish_value(b);
        b->expect = MATRIX_VALUE;
    }
    if (b->expect == MATRIX_DENOMINATOR) {
        double den = 0;
        Number n = number_of(b, text, length, 0, loc);
        int ok = !malformed && number_value(b->diag, &n, &den, WHAT);
        b->value_loc = span(b->value_loc, loc);
        b->value = 0;
        if (ok && b->num_ok && !number_fraction(b->diag, &b->num, b->num_value, &n, den,
                                                b->value_loc, &b->value, WHAT))
            b->value = 0;
        b->expect = MATRIX_AFTER_VALUE;
        return;
    }
    b->value_loc = b->negative ? span(b->minus, loc) : loc;
    b->num = number_of(b, text, length, b->negative, b->value_loc);
    b->num_ok = !malformed && number_value(b->diag, &b->num, &b->num_value, WHAT);
    b->value = b->num_ok ? b->num_value : 0;
    b->negative = 0;
    b->is_fraction = 0;
    b->after_comma = 0;
    b->expect = MATRIX_AFTER_VALUE;
}

void matrix_unexpected(MatrixBuilder *b, Loc loc, const char *text, size_t length)
{
    diag_error(b->diag, loc, "unexpected '%.*s' in a transition matrix: write numbers separated "
               "by ',' and rows separated by ';'", (int)length, text);
    if (b->expect == MATRIX_VALUE) { /* it stands for a value: the row keeps its length */
        b->value_loc = loc;
        b->value = 0;
        b->num_ok = 0;
        b->negative = 0;
        b->after_comma = 0;
        b->expect = MATRIX_AFTER_VALUE;
    }
}

void matrix_minus(MatrixBuilder *b, Loc loc)
{
    if (b->expect != MATRIX_VALUE || b->negative) {
        matrix_unexpected(b, loc, "-", 1);
        return;
    }
    b->negative = 1;
    b->minus = loc;
}

void matrix_slash(MatrixBuilder *b, Loc loc)
{
    if (b->expect != MATRIX_AFTER_VALUE || b->is_fraction) {
        matrix_unexpected(b, loc, "/", 1);
        return;
    }
    /* the numerator's text is in the source, not NUL-terminated any more; a
     * value that was not a number (already reported) has none to keep */
    if (b->num_ok && b->num.text)
        b->num.text = arena_strndup(b->arena, b->num.text, strcspn(b->num.text, " \t\r\n\f\v/,;]"));
    b->is_fraction = 1;
    b->expect = MATRIX_DENOMINATOR;
}

/* What ends a value: ',', ';' or ']' (named by mark). */
static void end_value(MatrixBuilder *b, Loc loc, const char *mark)
{
    if (b->expect == MATRIX_DENOMINATOR) {
        diag_error(b->diag, loc, "a number is missing after '/' in the transition matrix");
        b->value = 0;
        finish_value(b);
    } else if (b->expect == MATRIX_AFTER_VALUE) {
        finish_value(b);
    } else if (b->negative) {
        diag_error(b->diag, b->minus, "a number is missing after '-' in the transition matrix");
        b->negative = 0;
        b->value_loc = b->minus;
        b->value = 0;
        finish_value(b);
    } else if (b->after_comma || mark[0] == ',') {
        diag_error(b->diag, loc, "a value is missing before '%s' in the transition matrix: write "
                   "0 for no transition", mark);
        b->value_loc = loc;
        b->value = 0;
        finish_value(b);
    }
    b->after_comma = 0;
    b->expect = MATRIX_VALUE;
}

void matrix_comma(MatrixBuilder *b, Loc loc)
{
    end_value(b, loc, ",");
    b->after_comma = 1;
}

void matrix_semicolon(MatrixBuilder *b, Loc loc, long offset, int line, int column)
{
    end_value(b, loc, ";");
    new_row(b, offset, line, column);
}

Matrix *matrix_end(MatrixBuilder *b, Loc close)
{
    Matrix *m = b->m;
    end_value(b, close, "]");
    if (m->rows[m->n_rows - 1].n_values == 0)
        m->n_rows--; /* `[ ]`, or a ';' after the last row */
    m->loc.last_line = close.last_line;
    m->loc.last_column = close.last_column;
    if (b->cap_values > m->n_values) /* give back what the last growth took */
        m->values = arena_grow(b->arena, m->values, sizeof(double) * (size_t)b->cap_values,
                               sizeof(double) * (size_t)(m->n_values ? m->n_values : 1));
    return m;
}

/* ---- finding a value's place again ---- */

Loc matrix_value_loc(const Matrix *m, int row, int column)
{
    const MatrixRow *r = &m->rows[row];
    if (column >= r->n_values)
        return r->loc;
    const char *p = m->source + r->offset;
    int line = r->line, col = r->column, index = 0, in_value = 0;
    Loc value = r->loc;
    while (*p && *p != ';' && *p != ']') {
        if (p[0] == '/' && (p[1] == '/' || p[1] == '*')) { /* a comment */
            int block = p[1] == '*';
            p += 2, col += 2;
            while (*p && (block ? !(p[0] == '*' && p[1] == '/') : *p != '\n')) {
                if (*p == '\n')
                    line++, col = 0;
                p++, col++;
            }
            if (block && *p)
                p += 2, col += 2;
            continue;
        }
        if (*p == ',') {
            if (index == column && in_value)
                return value;
            index++;
            in_value = 0;
        } else if (*p == '\n') {
            line++, col = 0;
        } else if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\f' && *p != '\v' &&
                   index == column) {
            if (!in_value)
                value.first_line = line, value.first_column = col;
            value.last_line = line, value.last_column = col;
            in_value = 1;
        }
        p++, col++;
    }
    return value;
}

void matrix_row_spans(const Matrix *m, const int row, long *begin, long *end)
{
    const MatrixRow *r = &m->rows[row];
    const char *base = m->source, *p = base + r->offset;
    int index = 0, in_value = 0;
    for (int c = 0; c < r->n_values; c++)
        begin[c] = end[c] = -1;
    while (*p && *p != ';' && *p != ']' && index < r->n_values) {
        if (p[0] == '/' && (p[1] == '/' || p[1] == '*')) { /* a comment */
            int block = p[1] == '*';
            p += 2;
            while (*p && (block ? !(p[0] == '*' && p[1] == '/') : *p != '\n'))
                p++;
            if (block && *p)
                p += 2;
            continue;
        }
        if (*p == ',') {
            index++;
            in_value = 0;
        } else if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '\n' && *p != '\f' &&
                   *p != '\v') {
            if (!in_value)
                begin[index] = p - base;
            end[index] = p - base + 1;
            in_value = 1;
        }
        p++;
    }
}
