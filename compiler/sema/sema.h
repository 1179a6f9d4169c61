/* sema.h: semantic analysis: from the syntax tree to the program IR, with
 * every error and warning of the language contract. */
#ifndef HMMC_SEMA_H
#define HMMC_SEMA_H

#include "support/arena.h"
#include "syntax/ast.h"
#include "support/diag.h"
#include "ir/ir.h"
#include "support/symtab.h"

/* The whole file: every model, then main. Returns NULL when errors were reported. */
Program *sema(Arena *a, const File *f, Diag *d);
/* One model (sema_model.c). Returns 1 when it had no errors. */
int sema_model(Arena *a, Diag *d, const Model *ast, IrModel *out);
/* A transition weight written `(EXPR)` of L (sema_length.c), p->length set:
 * checked finite and >= 0 at lengths 0 to 1e13; returns k > 0 after adding
 * it to m's length weights (IrMove.length_weight = k; texts maps the C text
 * of each to its index, so that an expression written twice is computed
 * once), 0 with *constant set when L does not appear in it, -1 after an
 * error. */
int sema_length_weight(Arena *a, Diag *d, IrModel *m, Symtab *texts, const Prob *p,
                       double *constant);
/* Silent cycles that diverge (errors) and unreachable states (warnings). */
void sema_check_graph(Arena *a, Diag *d, const IrModel *m);
/* Warnings for a state's outgoing weights or an emission table summing to
 * more than 1 beyond rounding (sema_sums.c); nothing for a model declared
 * `hmm NAME scores { ... }`. */
void sema_check_sums(Arena *a, Diag *d, const Model *ast, const IrModel *m);

#endif
