/* layout.h: the program's layout, built once after the shared pipeline and
 * read by both backends: the alphabets (one per distinct symbol string), the
 * alphabet and output columns of every call, the models main uses, the
 * names of every call's symbols, and why a CUDA program scores on the CPU. */
#ifndef HMMC_LAYOUT_H
#define HMMC_LAYOUT_H

#include <stdio.h>

#include "ir/ir.h"

/* One output column: one print of main. */
typedef struct LayoutColumn {
    int possible_from; /* a score that sums paths: a length from which every sequence has a
                          path (ir_every_sequence_from; 0 when none is known) */
} LayoutColumn;

/* One call of main. */
typedef struct LayoutCall {
    const char *prefix; /* of its symbols' names: "c0" */
    int alphabet;       /* index into Layout.alphabets */
    int n_columns;
    int *columns;       /* the output columns (print indexes) it fills, in order */
} LayoutCall;

typedef struct Layout {
    Arena *arena;
    int n_alphabets;
    const char **alphabets; /* the symbol strings, in order of first use */
    int *model_alphabet;    /* of every model: index into alphabets, -1 when no call uses it */
    int n_used;
    int *used_models;       /* the models of main, in order of first use */
    LayoutCall *calls;      /* of every call of p */
    int n_columns;
    LayoutColumn *columns;  /* of every print of p */
    const char *cpu_only;   /* why a CUDA program scores on the CPU (whole tables, values
                               outside double's range), or NULL */
} Layout;

/* The layout of p (in p's arena). */
const Layout *layout_build(const Program *p);

/* The name of a symbol of call `call`: layout_name(l, 0, "forward") is
 * "c0_forward" (in the layout's arena). */
const char *layout_name(const Layout *l, int call, const char *what);

/* The layout's lines of --dump-after=plan: one per call (after its plans),
 * and the program's (after the prints). */
void layout_dump_call(const Layout *l, int call, FILE *out);
void layout_dump(const Layout *l, FILE *out);

#endif
