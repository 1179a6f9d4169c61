/* hmmer_lines.c: reading a HMMER file line by line and token by token, and
 * errors at a line and column (see hmmer_lines.h). */
#include "import/hmmer_lines.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

static int report(const Reader *r, int column, const char *fmt, va_list ap)
{
    fprintf(stderr, "hmmc: error: %s:%d:%d: ", r->path, r->line, column);
    if (r->model >= 2) /* the first model's lines are at the top of the file */
        fprintf(stderr, "model %d%s%s%s: ", r->model, r->current && r->current->name ? " ('" : "",
                r->current && r->current->name ? r->current->name : "",
                r->current && r->current->name ? "')" : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    return -1;
}

/* The column (from 1, in bytes) where s begins in the line. */
static int column_of(const Reader *r, const char *s)
{
    return r->buf && s >= r->buf ? (int)(s - r->buf) + 1 : 1;
}

int error_at(const Reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(r, r->ntok > 0 ? column_of(r, r->tok[0]) : 1, fmt, ap);
    va_end(ap);
    return -1;
}

int error_tok(const Reader *r, const char *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(r, column_of(r, s), fmt, ap);
    va_end(ap);
    return -1;
}

int error_after(const Reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *last = r->ntok > 0 ? r->tok[r->ntok - 1] : NULL;
    report(r, last ? column_of(r, last) + (int)strlen(last) : 1, fmt, ap);
    va_end(ap);
    return -1;
}

/* Splits buf into white-space separated tokens. */
static int tokenize(Reader *r)
{
    r->ntok = 0;
    for (char *s = strtok(r->buf, " \t\r\n"); s; s = strtok(NULL, " \t\r\n")) {
        if (r->ntok == TOK_MAX)
            return error_tok(r, s, "more than %d fields on one line", TOK_MAX);
        r->tok[r->ntok++] = s;
    }
    return 0;
}

int next_line(Reader *r)
{
    for (;;) {
        errno = 0;
        r->ntok = 0;
        if (getline(&r->buf, &r->cap, r->f) < 0) {
            if (ferror(r->f))
                return error_at(r, "cannot read: %s", strerror(errno));
            return 0;
        }
        r->line++;
        if (tokenize(r) < 0)
            return -1;
        if (r->ntok > 0)
            return 1;
    }
}

int expect_line(Reader *r, const char *what)
{
    int got = next_line(r);
    if (got == 0) {
        r->line++;
        r->ntok = 0;
        return error_at(r, "the file ends where %s was expected", what);
    }
    return got > 0 ? 0 : -1;
}

char *rest_of_line(Reader *r, int i)
{
    if (i >= r->ntok)
        return r->buf + strlen(r->buf); /* "" */
    char *end = r->tok[r->ntok - 1] + strlen(r->tok[r->ntok - 1]);
    for (char *p = r->tok[i]; p < end; p++)
        if (*p == 0)
            *p = ' ';
    return r->tok[i];
}
