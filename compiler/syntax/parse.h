/* parse.h: the front door of the grammar: source text in, AST out. Syntax
 * errors are reported through the Diag (all of them, with recovery at the
 * next ';' or '}'); the returned File is usable only when d->errors is 0. */
#ifndef HMMC_PARSE_H
#define HMMC_PARSE_H

#include "support/arena.h"
#include "syntax/ast.h"
#include "support/diag.h"

File *parse_source(Arena *a, Diag *d, const char *path, const char *src, size_t len);
/* Bytes [from, to) of src (len bytes in all), which start at line and
 * column: the places and offsets in the tree are those of the whole text
 * (driver/stream.c parses a large file a model at a time). */
File *parse_source_range(Arena *a, Diag *d, const char *path, const char *src, size_t len,
                         size_t from, size_t to, int line, int column);

#endif
