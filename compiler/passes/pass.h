/* pass.h: the passes over the program IR, in the order the driver runs them
 * (driver/pipeline.c lists them once). Each returns 1 on success and reports
 * problems through the Diag. */
#ifndef HMMC_PASS_H
#define HMMC_PASS_H

#include <stdio.h>

#include "support/diag.h"
#include "ir/ir.h"

/* What the driver tells the passes (from the command line). */
typedef struct PassOptions {
    FILE *verbose;   /* where passes explain their decisions (-v), or NULL */
    int fold_silent; /* fold silent states where it pays (off with --no-fold) */
} PassOptions;

/* Used attributes: what each call must store (two columns, back pointers, whole tables). */
int pass_attributes(Program *p, const PassOptions *o, Diag *d);
/* Trim: removes states that no complete path visits (unreachable from the
 * start, or unable to reach the end), except for calls printing whole tables. */
int pass_trim(Program *p, const PassOptions *o, Diag *d);
/* Silent cycles: every strongly connected set of silent moves is replaced by
 * its exact closure, so that the silent moves left form no cycle. */
int pass_close_cycles(Program *p, const PassOptions *o, Diag *d);
/* Silent states: folds a silent state into its neighbours when that makes
 * fewer moves, remembering the path each new move stands for. */
int pass_fold_silent(Program *p, const PassOptions *o, Diag *d);
/* Evaluation order of silent moves within a position. */
int pass_order(Program *p, const PassOptions *o, Diag *d);
/* Plan: the target-independent facts of every call (IrPlan): live states,
 * back-pointer width, dense or not, values outside float's or double's range. */
int pass_plan(Program *p, const PassOptions *o, Diag *d);

#endif
