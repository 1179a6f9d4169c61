/* parse.h: the front door of the grammar: source text in, AST out. Syntax
 * errors are reported through the Diag (all of them, with recovery at the
 * next ';' or '}'); the returned File is usable only when d->errors is 0. */
#ifndef HMMC_PARSE_H
#define HMMC_PARSE_H

#include "support/arena.h"
#include "syntax/ast.h"
#include "support/diag.h"

File *parse_source(Arena *a, Diag *d, const char *path, const char *src, size_t len);

#endif
