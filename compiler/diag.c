/* diag.c: prints and counts diagnostics (see diag.h). A message with a place
 * is followed by the source line it points into and a caret line:
 *   casino.hmm:12:5: error: unknown state 'fiar'
 *      12 |     fiar -> loaded 0.05;
 *         |     ^~~~
 * Columns are 1-based byte offsets; tabs in the source line are copied into
 * the caret line so the caret lines up however tabs are displayed. */
#include "diag.h"

#include <stdarg.h>

enum { LINE_NUMBER_WIDTH = 5 };

void diag_init(Diag *d, const char *path, const char *src, size_t len, FILE *out)
{
    d->path = path;
    d->src = src;
    d->len = len;
    d->errors = 0;
    d->warnings = 0;
    d->out = out;
}

/* Finds line number `line` (1-based) of the source; returns 0 when the
 * source has no such line. A line ends before its '\n' (and before a '\r'
 * right before that '\n'). */
static int find_line(const Diag *d, int line, const char **start, size_t *length)
{
    if (!d->src || line < 1)
        return 0;
    size_t pos = 0;
    for (int n = 1; n < line; n++) {
        while (pos < d->len && d->src[pos] != '\n')
            pos++;
        if (pos == d->len)
            return 0;
        pos++; /* past the '\n' */
    }
    size_t end = pos;
    while (end < d->len && d->src[end] != '\n')
        end++;
    if (end < d->len && end > pos && d->src[end - 1] == '\r')
        end--;
    *start = d->src + pos;
    *length = end - pos;
    return 1;
}

/* Where messages go; a Diag that was never given a stream writes to stderr. */
static FILE *output(const Diag *d)
{
    return d->out ? d->out : stderr;
}

static int is_shown_as_is(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c < 0x7f);
}

static int number_width(int n)
{
    int width = 1;
    while (n >= 10) {
        n /= 10;
        width++;
    }
    return width < LINE_NUMBER_WIDTH ? LINE_NUMBER_WIDTH : width;
}

/* Prints the source line of loc and the caret line under it. */
static void print_excerpt(const Diag *d, Loc loc)
{
    const char *text;
    size_t length;
    if (!find_line(d, loc.first_line, &text, &length))
        return;
    FILE *out = output(d);
    int width = number_width(loc.first_line);
    fprintf(out, "%*d | ", width, loc.first_line);
    for (size_t i = 0; i < length; i++)
        fputc(is_shown_as_is((unsigned char)text[i]) ? text[i] : '?', out);
    fprintf(out, "\n%*s | ", width, "");
    size_t column = loc.first_column < 1 ? 1 : (size_t)loc.first_column;
    for (size_t i = 0; i + 1 < column; i++)
        fputc(i < length && text[i] == '\t' ? '\t' : ' ', out);
    fputc('^', out);
    if (loc.last_line == loc.first_line && loc.last_column > loc.first_column) {
        size_t last = (size_t)loc.last_column < length ? (size_t)loc.last_column : length;
        for (size_t i = column; i < last; i++)
            fputc('~', out);
    }
    fputc('\n', out);
}

static void report(Diag *d, Loc loc, const char *kind, const char *fmt, va_list ap)
{
    FILE *out = output(d);
    const char *path = d->path ? d->path : "hmmc";
    if (loc.first_line > 0)
        fprintf(out, "%s:%d:%d: %s: ", path, loc.first_line, loc.first_column, kind);
    else
        fprintf(out, "%s: %s: ", path, kind);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    if (loc.first_line > 0)
        print_excerpt(d, loc);
}

void diag_error(Diag *d, Loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(d, loc, "error", fmt, ap);
    va_end(ap);
    d->errors++;
}

void diag_warning(Diag *d, Loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(d, loc, "warning", fmt, ap);
    va_end(ap);
    d->warnings++;
}

void diag_note(Diag *d, Loc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(d, loc, "note", fmt, ap);
    va_end(ap);
}

void diag_fatal(Diag *d, const char *fmt, ...)
{
    FILE *out = output(d);
    va_list ap;
    va_start(ap, fmt);
    fputs("hmmc: error: ", out);
    vfprintf(out, fmt, ap);
    fputc('\n', out);
    va_end(ap);
    d->errors++;
}
