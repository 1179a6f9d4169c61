/* dense_batch.h: the CPU path's batched dense forward, backward and
 * posterior (dense_batch.c), called by score.c around each batch, and the
 * rule both it and train.c follow (HMMRT_DENSE_BLAS). Private to the
 * runtime. */
#ifndef HMMRT_DENSE_BATCH_H
#define HMMRT_DENSE_BATCH_H

#include "score_run.h"

#include <stdio.h>

/* HMMRT_DENSE_BLAS=auto (the default) batches a dense call's forward,
 * backward or posterior (and training's E-step) from this many states
 * (every dense model) and this many sequences of a batch a thread on
 * (measured on 2 cores: benchmarks/history/2026-11-26-blas.md); on batches
 * every one, off none. */
enum { DENSE_BLAS_MIN_STATES = 128, DENSE_BLAS_SEQUENCES_A_THREAD = 4 };

/* Rows of a tile for a batch of n sequences to score. */
int hmmrt_dense_tile_rows(int64_t n);

/* HMMRT_DENSE_BLAS: DENSE_AUTO (unset, empty or auto), DENSE_ON, DENSE_OFF,
 * or -1 after a message saying what it may be. */
enum { DENSE_AUTO, DENSE_ON, DENSE_OFF };
int hmmrt_dense_blas_mode(void);

/* Reads HMMRT_DENSE_BLAS and sets up r->dense for a program with batched
 * dense calls: 0, or after a message -1 (a bad value) or -2 (out of memory). */
int hmmrt_dense_batch_open(run *r);
void hmmrt_dense_batch_close(run *r);
/* Maps the current batch and scores its dense sums over the whole batch
 * (its own OpenMP regions), setting r->dense_scores (n_sums per sequence)
 * or NULL: 0, or -1 when memory ran out. */
int hmmrt_dense_batch_score(run *r);
/* The batched scores of a sequence: its dense sums', then its posterior
 * calls' (hmmrt_seq.dense_scores). */
int hmmrt_dense_batch_width(const hmmrt_program *prog);
/* One line for --timing: how many sequences went which way. */
void hmmrt_dense_batch_report(const run *r, FILE *out);

#endif
