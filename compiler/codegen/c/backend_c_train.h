/* backend_c_train.h: what the C backend writes for posterior calls and for
 * training (--train): a posterior call's run function, which hands the model
 * as written to libhmmrt's engine; per model of main, its `fixed` flags and
 * where each number is written in the source; the source's text. */
#ifndef HMMC_BACKEND_C_TRAIN_H
#define HMMC_BACKEND_C_TRAIN_H

#include "codegen/emit.h"
#include "codegen/layout.h"
#include "ir/ir.h"

/* The index of model i among the models of main, in order of first use (the
 * generated program's models[] table), and how many there are (*n_used). */
int c_main_model_slot(const Program *p, int model_index, int *n_used);

/* Posterior call `index`: c<index>_run, a static hmmrt_posterior_call naming
 * the model (models[] of the program, declared ahead) and the output column
 * of each attribute. */
void c_write_posterior_call(Emitter *e, const Program *p, const Layout *layout, int index);

/* Model i of main (slot in models[]): m<slot>_move_fixed, m<slot>_move_span,
 * m<slot>_emission_fixed, m<slot>_emission_span, when the model is trainable
 * (its numbers' places were kept and its moves are written in the program). */
void c_write_training_tables(Emitter *e, const Program *p, int model_index, int slot);
/* The fields of hmmrt_model that name those tables (",\n .move_fixed = ..."),
 * or "" when they were not written. */
const char *c_training_fields(const Program *p, int model_index, int slot);

/* hmmc_source_text: the program's source as a C literal, a line of the
 * source a line of C (or read from PREFIX.source), when the program has it. */
void c_write_source_text(Emitter *e, const Program *p, const char *data_prefix);
/* The fields of hmmrt_program for it: ".source_text = ..., .source_length = N, " or "". */
const char *c_source_fields(const Program *p);

#endif
