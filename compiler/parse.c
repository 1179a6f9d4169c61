/* parse.c: the front door of the grammar (see parse.h): runs the flex
 * scanner and the bison parser over a source buffer, which may hold NUL
 * bytes, and returns the File they built. */
#include "parse.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "parser.h"
#include "lexer.h"

File *parse_source(Arena *a, Diag *d, const char *path, const char *src, size_t len)
{
    File *file = ARENA_NEW(a, File);
    file->path = path ? arena_strdup(a, path) : NULL;
    if (len > INT_MAX) {
        diag_fatal(d, "%s is too large to compile", path ? path : "the source");
        return file;
    }
    ParseContext pc = {.arena = a, .diag = d, .file = file, .line = 1, .column = 1};
    yyscan_t scanner;
    if (yylex_init_extra(&pc, &scanner) != 0) {
        fputs("hmmc: out of memory\n", stderr);
        abort();
    }
    YY_BUFFER_STATE buffer = yy_scan_bytes(src ? src : "", (int)len, scanner);
    int errors_before = d->errors;
    int status = yyparse(scanner, &pc);
    if (status != 0 && d->errors == errors_before)
        diag_error(d, pc.last_token, "syntax error");
    yy_delete_buffer(buffer, scanner);
    yylex_destroy(scanner);
    return file;
}
