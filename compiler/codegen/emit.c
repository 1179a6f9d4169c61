/* emit.c: indentation, comments and literals for generated code. */
#include "codegen/emit.h"
#include "support/arena.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void indent(Emitter *e)
{
    for (int i = 0; i < e->indent; i++)
        fputs("    ", e->out);
}

void emit_line(Emitter *e, const char *fmt, ...)
{
    va_list ap;
    indent(e);
    va_start(ap, fmt);
    vfprintf(e->out, fmt, ap);
    va_end(ap);
    fputc('\n', e->out);
}

void emit_open(Emitter *e, const char *fmt, ...)
{
    va_list ap;
    indent(e);
    va_start(ap, fmt);
    vfprintf(e->out, fmt, ap);
    va_end(ap);
    fputs(" {\n", e->out);
    e->indent++;
}

void emit_close(Emitter *e, const char *tail)
{
    e->indent--;
    indent(e);
    fprintf(e->out, "}%s\n", tail);
}

void emit_blank(Emitter *e) { fputc('\n', e->out); }

void emit_comment(Emitter *e, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0)
        fatal_out_of_memory();
    va_end(ap);
    /* the text must not end the comment early: a star followed by a slash
     * gets a space between them */
    for (char *end; (end = strstr(text, "*/"));) {
        size_t at = (size_t)(end - text), len = strlen(text);
        text = xrealloc(text, len + 2);
        memmove(text + at + 2, text + at + 1, len - at);
        text[at + 1] = ' ';
    }
    const int width = 96 - 4 * e->indent;
    const char *p = text;
    int first = 1;
    while (*p) {
        int len = (int)strlen(p);
        int take = len;
        if (len > width) {
            take = width;
            while (take > 0 && p[take] != ' ')
                take--;
            if (take == 0)
                take = width;
        }
        indent(e);
        fprintf(e->out, "%s%.*s%s\n", first ? "/* " : " * ", take, p,
                take == len ? " */" : "");
        first = 0;
        p += take;
        while (*p == ' ')
            p++;
    }
    free(text);
}

const char *emit_double(char buf[32], double v)
{
    if (isinf(v))
        return v < 0 ? "-INFINITY" : "INFINITY";
    if (v == 0)
        return "0.0";
    /* the shortest %g that reads back as v itself: 0.95 for 0.95,
     * 0.9499999999999998 for the double just below it. 17 digits always do,
     * and more digits never stop doing so: a binary search */
    int lo = 1, hi = 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(buf, 32, "%.*g", mid, v);
        if (strtod(buf, NULL) == v)
            hi = mid;
        else
            lo = mid + 1;
    }
    snprintf(buf, 32, "%.*g", lo, v);
    if (!strpbrk(buf, ".eEn"))
        strcat(buf, ".0");
    return buf;
}

const char *emit_string(const char *s)
{
    /* grown to the longest literal yet (at most 4 bytes a byte of s, 2 quotes, NUL) */
    static char *buf;
    static size_t cap;
    size_t need = 4 * strlen(s) + 3;
    if (need > cap) {
        buf = xrealloc(buf, need);
        cap = need;
    }
    size_t n = 0;
    buf[n++] = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\' || c == '?') { /* '?': no trigraph like ??= can form */
            buf[n++] = '\\';
            buf[n++] = (char)c;
        } else if (c < 32 || c >= 127) {
            n += (size_t)snprintf(buf + n, cap - n, "\\%03o", c);
        } else {
            buf[n++] = (char)c;
        }
    }
    buf[n++] = '"';
    buf[n] = 0;
    return buf;
}

int emit_wrap(FILE *out, const char *text, size_t len)
{
    /* carried from line to line: in a block comment; in a preprocessor line
     * that goes on (a backslash at its end) */
    int comment = 0, directive = 0;
    const char *end = text + len;
    for (const char *line = text; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        size_t n = eol ? (size_t)(eol - line) : (size_t)(end - line); /* less the newline */
        size_t lead = strspn(line, " \t");
        if (!comment && lead < n && line[lead] == '#')
            directive = 1;
        int wrap = n > EMIT_WRAP_WIDTH && !directive;
        int parens = 0, commas = 0, plus = 0;
        size_t from = 0;
        for (size_t i = 0; i < n; i++) {
            char c = line[i];
            if (comment) {
                if (c == '*' && i + 1 < n && line[i + 1] == '/')
                    comment = 0, i++;
            } else if (c == '/' && i + 1 < n && line[i + 1] == '*') {
                comment = 1, i++;
            } else if (c == '/' && i + 1 < n && line[i + 1] == '/') {
                break; /* a line comment: the rest of the line is its */
            } else if (c == '"' || c == '\'') {
                for (i++; i < n && line[i] != c; i++)
                    i += line[i] == '\\';
            } else if (c == '(' || c == ')') {
                parens += c == '(' ? 1 : -1;
            } else if (wrap && i + 2 < n && line[i + 1] == ' ' && line[i + 2] != ' ' &&
                       ((c == ',' && parens == 0 && ++commas % EMIT_WRAP_VALUES == 0) ||
                        (c == '+' && i > 0 && line[i - 1] == ' ' &&
                         ++plus % EMIT_WRAP_VALUES == 0))) {
                /* the space after the comma or plus becomes the break */
                fwrite(line + from, 1, i + 1 - from, out);
                fprintf(out, "\n%.*s    ", (int)lead, line);
                from = i + 2;
                i++;
            }
        }
        if (directive && !(n > 0 && line[n - 1] == '\\' && !comment))
            directive = 0;
        size_t rest = n - from + (eol ? 1 : 0);
        fwrite(line + from, 1, rest, out);
        line += n + (eol ? 1 : 0);
    }
    return ferror(out) ? -1 : 0;
}
