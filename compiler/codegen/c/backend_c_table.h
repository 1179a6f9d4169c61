/* backend_c_table.h: the two code shapes of the C backend's positions,
 * straight-line (emit_dp.c) and table (backend_c_table.c), behind one
 * PositionWriter; c_plan.c chooses the shape of every call. */

/* backend_c.c writes each call's function (columns, rescaling, the loop over
 * positions) once; what one position does is written by a PositionWriter:
 *   straight-line (emit_dp.c): every move a statement, weights as literals;
 *   table (backend_c_table.c): the moves in static const tables, one generic
 *     loop per phase, the same operations in the same order, so both shapes
 *     print the same numbers to the last bit.
 * c_plan.c chooses the shape of every call (CPlan.shape). */
#ifndef HMMC_BACKEND_C_TABLE_H
#define HMMC_BACKEND_C_TABLE_H

#include "codegen/emit_dp.h"
#include "codegen/layout.h"
#include "ir/ir.h"

/* The statements of one position, for both shapes (see emit_dp.h for what
 * each computes). The table shape finds its tables by DpWriter.tables. */
typedef struct PositionWriter {
    void (*forward_emitting)(DpWriter *w);
    void (*forward_silent)(DpWriter *w);
    void (*backward_emitting)(DpWriter *w);
    void (*backward_silent)(DpWriter *w);
    void (*viterbi_emitting)(DpWriter *w);
    void (*viterbi_silent)(DpWriter *w);
    /* "TYPE NAME = the sum of the live states' values;" */
    void (*column_sum)(DpWriter *w, const char *target);
    /* one position of viterbi: the emitting states, then the silent ones (the
       straight-line code interleaves them, each as soon as its inputs are final) */
    void (*viterbi_position)(DpWriter *w);
} PositionWriter;

/* The table shape's writers (the straight-line ones are emit_dp.c's dp_*). */
extern const PositionWriter position_table;

/* Writes the static const tables of call `index` in the table shape: the
 * emission values (symbol-major), the live states, and the moves of each
 * phase in evaluation order; sets w->tables to their name prefix (and
 * w->weights, and the entries with length-dependent weights). */
void c_table_write_tables(DpWriter *w, const IrCall *call, const Layout *layout, int index);

/* At the top of a DP function of a model with length-dependent weights
 * (after dp_length_weights): the function's own copies em_w and sl_w of the
 * weight tables, with this sequence's length weights multiplied (logs:
 * added) in. Nothing for a model without them. */
void c_table_length_weights(DpWriter *w, int logs);

#endif
