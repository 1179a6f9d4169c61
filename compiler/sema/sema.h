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
/* The same in steps, for a file parsed a model at a time (driver/stream.c),
 * so that each model's syntax tree is freed once it is lowered: begin with
 * the number of models; add each in the file's order (own: copy the strings
 * the model's IR takes from its tree into a, so that the tree may be freed);
 * finish with the file's main blocks (f->models is not read). */
typedef struct SemaStream SemaStream;
SemaStream *sema_begin(Arena *a, const char *path, int n_models, Diag *d);
void sema_add_model(SemaStream *s, const Model *m, int own);
/* As sema_add_model, but the model's IR and sema's tables for it go into
 * `ir` (an arena the caller frees once it has copied the IR it keeps:
 * driver/stream.c); returns the program's entry, or NULL (an error said). */
IrModel *sema_add_model_in(SemaStream *s, const Model *m, Arena *ir);
Program *sema_finish(SemaStream *s, const File *f);
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
