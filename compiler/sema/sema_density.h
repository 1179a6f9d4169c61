/* sema_density.h: the checks of continuous observations (sema_density.c):
 * `alphabet real[D];` and the density emissions gaussian and mixture. */
#ifndef HMMC_SEMA_DENSITY_H
#define HMMC_SEMA_DENSITY_H

#include "ir/ir.h"
#include "support/diag.h"
#include "support/symtab.h"
#include "syntax/ast.h"

/* The largest D of `alphabet real[D];`. */
enum { SEMA_REAL_DIM_MAX = 4096 };

/* D of `alphabet real[D];` (d->is_real), or 0 after an error. */
int sema_real_dim(Diag *diag, const Decl *d);

/* Fills emission `index` of m (whose real_dim is set) from its declaration
 * decls[index]: a gaussian's mean and Cholesky factor, a mixture's parts and
 * weights (names: emission name -> index; used[j] is set for each part).
 * Every error at its place; a table of values is an error here. */
void sema_density(Arena *a, Diag *diag, IrModel *m, int index, const Decl *const *decls,
                  const Symtab *names, int *used);

#endif
