/* hmmer_lines.h: how the import reads a HMMER file: line by line, each
 * split into white-space separated tokens, and errors that name the file,
 * the line and the column of what is wrong (hmmer_lines.c). */
#ifndef HMMC_IMPORT_HMMER_LINES_H
#define HMMC_IMPORT_HMMER_LINES_H

#include <stdio.h>

#include "import/hmmer_profile.h"

typedef struct Reader {
    FILE *f;
    const char *path;
    int line;
    char *buf; /* the line; each token ends with a NUL where a separator was */
    size_t cap;
    char *tok[TOK_MAX];
    int ntok;
    int model;           /* the model being read: 1 for the file's first */
    const H2 *current;   /* it, for its name in messages (NULL: none yet) */
} Reader;

/* The next line that is not blank, split into tokens: 1, 0 at the end of
 * the file, -1 on an error (reported). */
int next_line(Reader *r);
/* Like next_line, but the end of the file is an error saying what was
 * expected. */
int expect_line(Reader *r, const char *what);

/* "hmmc: error: FILE:LINE:COLUMN: " (then, from a file's second model on,
 * "model N ('NAME'): ") and the message, on stderr; each returns
 * -1. error_at points at the line's first field, error_tok at token s (one
 * of r->tok), error_after at the first column past the line's last field
 * (for a value that is missing). */
int error_at(const Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int error_tok(const Reader *r, const char *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int error_after(const Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The text of the line from token i to the end, separators kept (a tab
 * right after a token reads as a space); "" when there is no token i. The
 * tokens after i are then part of it: read them before. */
char *rest_of_line(Reader *r, int i);

#endif
