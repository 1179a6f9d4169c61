/* emit_dp.h: the statements of one position of a dynamic programme, written
 * out move by move for a call's model: the heart of every backend's code.
 * The C backend and the CUDA backend write the same statements; they differ
 * only in how emission tables and number literals are spelled. */
#ifndef HMMC_EMIT_DP_H
#define HMMC_EMIT_DP_H

#include "support/arena.h"
#include "codegen/emit.h"
#include "ir/ir.h"

typedef struct DpWriter {
    Emitter *e;
    Arena *arena;
    const IrModel *m;
    int *in_start, *in_order;   /* moves into each state (ir_incoming) */
    int *out_start, *out_order; /* moves out of each state */
    const char *prob_table;     /* emission tables as probabilities: PREFIX<index>[c] */
    const char *log_table;      /* ... and as logs (viterbi) */
    const char *emission_row;   /* when set, emissions are read as ROW[t] instead, t the
                                   table's number (dp_emission_tables): a row per symbol */
    int *table_of;              /* emission -> table number (dp_emission_tables) */
    const char *literal;        /* printf format around a number literal: "%s" or "(real)%s" */
    const char *value_type;     /* the type of a column value: "double", or "real" in kernels */
    int wide_tables;            /* C forward, backward with IrPlan.long_double_only (summed in
                                   long double only): tables, weights and values outside
                                   double's normal range are long double (1e-400L) */
    int back_pointers;          /* viterbi: record the best move into bp[state] */
    const char *tables;         /* the C table shape: prefix of the call's move tables */
    const char *weights;        /* the table shape: prefix of the weight tables (_w) its loops
                                   read: `tables`, or "" for the DP function's own copies,
                                   which hold the length-dependent weights of the sequence */
    int n_length_entries[2];    /* the table shape: the entries of the emitting [0] and silent
                                   [1] weight tables that have a length-dependent weight */
    int *length_entry[2], *length_entry_weight[2]; /* their indexes, and IrMove.length_weight */
    int phase_entries[2];       /* the size of those two tables */
} DpWriter;

void dp_writer_init(DpWriter *w, Emitter *e, Arena *a, const IrModel *m);
int dp_live(const IrModel *m, int s);

/* Forward: cur[q] = sum over emitting moves into q of E[c] * w * prev[from]. */
void dp_forward_emitting(DpWriter *w);
/* Forward: silent moves in order, cur[s] += w * cur[from]. */
void dp_forward_silent(DpWriter *w);
/* Backward: cur[p] = sum over emitting moves out of p of E[c] * w * prev[to]
 * (prev holds the next position). */
void dp_backward_emitting(DpWriter *w);
/* Backward: silent moves in reverse order, cur[from] += w * cur[s]. */
void dp_backward_silent(DpWriter *w);
/* Viterbi (logs): cur[q] = best over emitting moves of prev[from] + w + E[c]. */
void dp_viterbi_emitting(DpWriter *w);
/* Viterbi: silent moves in order. */
void dp_viterbi_silent(DpWriter *w);
/* Viterbi: both of the above for one position, each silent state written as
 * soon as what it reads is final (the same values, in an order that lets a
 * chain of silent states overlap the emitting states' work). */
void dp_viterbi_position(DpWriter *w);
/* The emission tables the model's moves use, numbered in order of first use:
 * table_of[emission] is its number or -1 (unused); emission_of[number] is the
 * emission. Returns how many are used. Arrays from the arena. */
int dp_emission_tables(Arena *a, const IrModel *m, int **table_of, int **emission_of);
/* The C type of a back pointer of `bytes` bytes: uint8_t, uint16_t, uint32_t. */
const char *dp_bp_type(int bytes);
/* The literal of a probability given by its log lw: a double, or with
 * `wide` a long double (1e-400L) where double cannot hold it (buf: 64 bytes). */
const char *dp_probability(char buf[64], double lw, int wide);
/* "cur[0] + cur[1] + ...": the sum of the live states' values. */
void dp_column_sum(DpWriter *w, const char *target);
/* The variable that holds length weight k (IrMove.length_weight) in the
 * code of one sequence: lenw<k-1>. */
const char *dp_length_weight_name(Arena *a, int length_weight);
/* Declares every length weight of the model, computed from L (in scope), as
 * a value or (logs) its natural log: at the top of a DP function. */
void dp_length_weights(DpWriter *w, int logs);

#endif
