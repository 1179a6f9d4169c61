/* parse.c: the front door of the grammar (see parse.h): runs the flex
 * scanner and the bison parser over a source buffer, which may hold NUL
 * bytes, and returns the File they built. */
#include "syntax/parse.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "parser.h"
#include "lexer.h"

enum { BINARY_PROBE = 4096, BINARY_CONTROL_BYTES = 8 };

static int is_control_byte(unsigned char c)
{
    return (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') ||
           c == 0x7f;
}

/* A file with BINARY_CONTROL_BYTES control bytes (NUL, ...) among its first
 * BINARY_PROBE is not text: 1 with one error saying so, naming the first,
 * instead of an error per byte; a stray byte or two in text is the lexer's. */
static int reject_binary(Diag *d, const char *path, const char *src, size_t len)
{
    size_t probe = len < BINARY_PROBE ? len : BINARY_PROBE, first = 0;
    int n = 0, line = 1, column = 1;
    for (size_t i = 0; i < probe; i++)
        if (is_control_byte((unsigned char)src[i]) && n++ == 0)
            first = i;
    if (n < BINARY_CONTROL_BYTES)
        return 0;
    for (size_t i = 0; i < first; i++, column++)
        if (src[i] == '\n') {
            line++;
            column = 0;
        }
    diag_fatal(d, "%s is not a text file (byte 0x%02x at line %d, column %d is one of %d control "
                  "bytes near its start): hmmc reads models written as text",
               path ? path : "the source", (unsigned char)src[first], line, column, n);
    return 1;
}

File *parse_source(Arena *a, Diag *d, const char *path, const char *src, size_t len)
{
    return parse_source_range(a, d, path, src, len, 0, len, 1, 1);
}

File *parse_source_range(Arena *a, Diag *d, const char *path, const char *src, size_t len,
                         size_t from, size_t to, int line, int column)
{
    File *file = ARENA_NEW(a, File);
    file->path = path ? arena_strdup(a, path) : NULL;
    if (len > INT_MAX) {
        diag_fatal(d, "%s is too large to compile", path ? path : "the source");
        return file;
    }
    if (src && from == 0 && reject_binary(d, path, src, len))
        return file;
    ParseContext pc = {.arena = a, .diag = d, .file = file, .line = line, .column = column,
                       .source = src ? src : "", .offset = (long)from};
    yyscan_t scanner;
    if (yylex_init_extra(&pc, &scanner) != 0) {
        fputs("hmmc: out of memory\n", stderr);
        abort();
    }
    YY_BUFFER_STATE buffer = yy_scan_bytes(src ? src + from : "", (int)(to - from), scanner);
    int errors_before = d->errors;
    int status = yyparse(scanner, &pc);
    if (status != 0 && d->errors == errors_before)
        diag_error(d, pc.last_token, "syntax error");
    yy_delete_buffer(buffer, scanner);
    yylex_destroy(scanner);
    return file;
}
