/* backend_dense.h: what the backends share for the dense shape and for other
 * data too large to be written as C text: binary files written beside the
 * generated sources and assembled into the program with .incbin. */
#ifndef HMMC_BACKEND_DENSE_H
#define HMMC_BACKEND_DENSE_H

#include "codegen/emit.h"
#include "codegen/layout.h"
#include "ir/ir.h"

/* Above this many moves a model's source moves (for --sample) go into a
 * data file rather than a C initializer, which compilers read slowly. */
enum { SOURCE_MOVES_INLINE_MAX = 65536 };

/* A source move's weight for the sampler (--sample, which cannot know the
 * length it will draw): a length-dependent weight taken at L = 400. */
enum { SAMPLE_LENGTH = 400 };
double sample_move_weight(const IrModel *m, const IrMove *mv);

/* Writes the data files of p beside the sources: PREFIX.source when
 * source_in_file, PREFIX.cN.dense for every
 * dense call N (its matrix view, dense.h: matrix, start, end, emissions, as
 * doubles), PREFIX.mI.moves for every model I of main with more than
 * SOURCE_MOVES_INLINE_MAX moves (hmmrt_model_move records) but those whose
 * moves a dense call holds (dense_sample_call). PREFIX is an
 * absolute path. Returns 0, or -1 after a message. */
int dense_write_data(const Program *p, const char *prefix);

/* The dense call whose data file dense call c reads: the first call whose
 * matrix view holds the same numbers (dense_same_view), c itself when none
 * before it does. Only that call's file PREFIX.cN.dense is written. */
int dense_data_owner(const Program *p, int c);

/* A dense call of model i whose matrix holds model i as written (its moves
 * unchanged by the passes, sums of weights), or -1. The program's sampler
 * then makes the model's moves from that matrix instead of carrying a list
 * of them (runtime: hmmrt_model.dense). */
int dense_sample_call(const Program *p, int i);

/* Above this many bytes the program's source text (for --train) goes into a
 * data file, PREFIX.source, rather than a C literal. */
enum { SOURCE_TEXT_INLINE_MAX = 1 << 20 };
/* The source text the program carries for --train: Program.source_text, but
 * NULL for a HMMER import (hmmc --import-hmmer: scores, not parameters to fit;
 * its header says so). */
const char *source_text_of(const Program *p);
/* Whether that text goes into PREFIX.source (written by dense_write_data). */
int source_in_file(const Program *p);

/* Removes the files dense_write_data wrote. */
void dense_remove_data(const Program *p, const char *prefix);

/* Whether p needs data files (and the generated C the HMMC_INCBIN macro). */
int dense_needs_data(const Program *p);

/* The generated C's HMMC_INCBIN macro: a read-only array assembled from a file. */
void dense_write_incbin_macro(Emitter *e);

/* The declarations of dense call `index`: its data file as hmmc_cN_data, its
 * states, and hmmc_cN_dense (hmmrt_dense), which the C run function and the
 * CUDA launcher both use (its data: hmmc_cK_data of K = dense_data_owner). */
void dense_write_c_call(Emitter *e, const Program *p, const Layout *layout, int index,
                        const char *prefix);

#endif
