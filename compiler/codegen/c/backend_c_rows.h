/* backend_c_rows.h: rows per model (docs/language.md, "Rows per model"): a
 * program whose source says `// hmmc: rows per model` in its opening
 * comments prints one row per (sequence, model) pair; the check of its
 * prints, and the fields of hmmrt_program that ask libhmmrt for such rows. */
#ifndef HMMC_BACKEND_C_ROWS_H
#define HMMC_BACKEND_C_ROWS_H

#include "codegen/emit.h"
#include "ir/ir.h"
#include "support/diag.h"

/* 1 when the source's opening comments hold the line `// hmmc: rows per model`. */
int c_rows_asked(const Program *p);

/* Checks that main's prints form one group per model, each the same
 * attributes of the same algorithms in the same order as the first;
 * reports what is wrong through d. Returns 1 when the rows can be made. */
int c_rows_check(const Program *p, Diag *d);

/* Writes the row tables and returns the program's fields for them ("" when
 * the program prints one row per sequence). */
const char *c_write_rows(Emitter *e, const Program *p);

#endif
