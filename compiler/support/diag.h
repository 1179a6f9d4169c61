/* diag.h: the one diagnostics module. Errors and warnings are printed as
 * FILE:LINE:COL: error: MESSAGE with the source line and a caret line under
 * it, and counted; a pass reports everything it finds and the driver stops
 * between passes when the error count is non-zero. */
#ifndef HMMC_DIAG_H
#define HMMC_DIAG_H

#include <stddef.h>
#include <stdio.h>
#include "support/loc.h"

typedef struct Diag {
    const char *path; /* file name shown in messages */
    const char *src;  /* the whole source text (may hold NUL bytes) */
    size_t len;
    int errors;
    int warnings;
    FILE *out;        /* where messages go (stderr normally, a memstream in tests) */
    int stopped;      /* more than DIAG_MAX_ERRORS errors: later ones are counted, not
                         printed, and the lexer ends the file */
    int cached_line;  /* a line whose start is known, so that finding the next is not */
    size_t cached_pos;/* a scan from the top of the file (errors come in order) */
} Diag;

/* Errors printed at most: a binary file or a mangled one would otherwise
 * bury the first, most useful messages under thousands. */
#define DIAG_MAX_ERRORS 50
/* Source lines longer than this are shown as a window around the column. */
#define DIAG_MAX_EXCERPT 160

void diag_init(Diag *d, const char *path, const char *src, size_t len, FILE *out);
void diag_error(Diag *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_warning(Diag *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A note follows an error or warning and points at a related place. */
void diag_note(Diag *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An error not tied to a place in the source (missing file, failed build). */
void diag_fatal(Diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
