/* diag.c: prints and counts diagnostics (see diag.h). */

/* A message with a place
 * is followed by the source line it points into and a caret line:
 *   casino.hmm:12:5: error: unknown state 'fiar'
 *      12 |     fiar -> loaded 0.05;
 *         |     ^~~~
 * Columns are 1-based byte offsets; tabs in the source line are copied into
 * the caret line so the caret lines up however tabs are displayed. A long
 * line is shown as a window around the column, and after DIAG_MAX_ERRORS
 * errors the rest are only counted. */
#include "support/diag.h"

#include <stdarg.h>
#include <string.h>

enum { LINE_NUMBER_WIDTH = 5 };

void diag_init(Diag *d, const char *path, const char *src, size_t len, FILE *out)
{
    d->path = path;
    d->src = src;
    d->len = len;
    d->errors = 0;
    d->warnings = 0;
    d->out = out;
    d->stopped = 0;
    d->cached_line = 0;
    d->cached_pos = 0;
}

/* Finds line number `line` (1-based) of the source; returns 0 when the
 * source has no such line. A line ends before its '\n' (and before a '\r'
 * right before that '\n'). */
static int find_line(Diag *d, int line, const char **start, size_t *length)
{
    if (!d->src || line < 1)
        return 0;
    size_t pos = 0;
    int n = 1;
    if (d->cached_line >= 1 && d->cached_line <= line) {
        n = d->cached_line;
        pos = d->cached_pos;
    }
    for (; n < line; n++) {
        while (pos < d->len && d->src[pos] != '\n')
            pos++;
        if (pos == d->len)
            return 0;
        pos++; /* past the '\n' */
    }
    d->cached_line = line;
    d->cached_pos = pos;
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

/* Prints the source line of loc and the caret line under it. A line longer
 * than DIAG_MAX_EXCERPT shows that many bytes around the column, with "..."
 * where it was cut. */
static void print_excerpt(Diag *d, Loc loc)
{
    const char *text;
    size_t length;
    if (!find_line(d, loc.first_line, &text, &length))
        return;
    FILE *out = output(d);
    size_t column = loc.first_column < 1 ? 1 : (size_t)loc.first_column;
    size_t from = 0, to = length;
    if (length > DIAG_MAX_EXCERPT) {
        from = column > DIAG_MAX_EXCERPT / 2 ? column - 1 - DIAG_MAX_EXCERPT / 2 : 0;
        if (from > length - DIAG_MAX_EXCERPT)
            from = length - DIAG_MAX_EXCERPT;
        to = from + DIAG_MAX_EXCERPT;
    }
    const char *cut_before = from > 0 ? "..." : "";
    int width = number_width(loc.first_line);
    fprintf(out, "%*d | %s", width, loc.first_line, cut_before);
    for (size_t i = from; i < to; i++)
        fputc(is_shown_as_is((unsigned char)text[i]) ? text[i] : '?', out);
    fprintf(out, "%s\n%*s | %*s", to < length ? "..." : "", width, "", (int)strlen(cut_before),
            "");
    for (size_t i = from; i + 1 < column; i++)
        fputc(i < length && text[i] == '\t' ? '\t' : ' ', out);
    fputc('^', out);
    if (loc.last_line == loc.first_line && loc.last_column > loc.first_column) {
        size_t last = (size_t)loc.last_column < to ? (size_t)loc.last_column : to;
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

/* Counts an error; 1 when it is to be printed. The first one past the limit
 * says that the rest are not. */
static int count_error(Diag *d)
{
    d->errors++;
    if (d->stopped)
        return 0;
    if (d->errors <= DIAG_MAX_ERRORS)
        return 1;
    d->stopped = 1;
    fprintf(output(d), "%s: error: more than %d errors; stopping here: fix these and run hmmc "
                       "again\n", d->path ? d->path : "hmmc", DIAG_MAX_ERRORS);
    return 0;
}

void diag_error(Diag *d, Loc loc, const char *fmt, ...)
{
    if (!count_error(d))
        return;
    va_list ap;
    va_start(ap, fmt);
    report(d, loc, "error", fmt, ap);
    va_end(ap);
}

void diag_warning(Diag *d, Loc loc, const char *fmt, ...)
{
    if (d->stopped)
        return;
    va_list ap;
    va_start(ap, fmt);
    report(d, loc, "warning", fmt, ap);
    va_end(ap);
    d->warnings++;
}

void diag_note(Diag *d, Loc loc, const char *fmt, ...)
{
    if (d->stopped)
        return;
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
