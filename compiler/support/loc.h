/* loc.h: a source location (a span of lines and columns, 1-based), shared by
 * the lexer, the parser (it is bison's YYLTYPE), the AST and diagnostics. */
#ifndef HMMC_LOC_H
#define HMMC_LOC_H

typedef struct Loc {
    int first_line, first_column;
    int last_line, last_column; /* last_column is the column of the last character */
} Loc;

#endif
