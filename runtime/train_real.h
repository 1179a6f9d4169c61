/* train_real.h: what --train (train.c) does differently for a model over
 * real observations (train_real.c): the corpus of observation vectors, the
 * E-step's sufficient statistics of every gaussian and mixture, the M-step
 * of means, variances or covariances and mixture weights, and the numbers
 * written into the fitted source. */
#ifndef HMMRT_TRAIN_REAL_H
#define HMMRT_TRAIN_REAL_H

#include <stddef.h>
#include <stdint.h>

#include "fb.h"
#include "internal.h"

typedef struct real_trainer real_trainer;

/* Prepares model m's densities as parameters that training changes: NULL
 * after a message, with *status the exit status (out of memory, or a
 * program without the places of the densities' numbers). */
real_trainer *real_trainer_new(const hmmrt_model *m, int *status);
void real_trainer_free(real_trainer *r);

/* Reads every file of o into r: 0, or an exit status after a message. Sets
 * *n to the number of sequences, names[i] (owned by r), and the longest. */
int real_read_corpus(real_trainer *r, const hmmrt_options *o, int64_t *n, char ***names,
                     int64_t *longest);

/* The length of sequence i (observations). */
int64_t real_length(const real_trainer *r, int64_t i);
/* Doubles of the E-step's statistics (summed like counts over threads). */
size_t real_stats_size(const real_trainer *r);
/* Doubles of scratch a sequence of L observations needs beyond fb's. */
size_t real_scratch(const real_trainer *r, int64_t L);
/* One sequence's E-step: ln P (or the best path's score with viterbi set),
 * -inf when no path; adds the moves' counts to move_counts and the
 * densities' statistics to stats. */
double real_expect(const real_trainer *r, const hmmrt_fb *fb, int64_t i, int viterbi,
                   double *scratch, double *move_counts, double *stats);
/* The densities with their current numbers, and the corpus (for the GPU's
 * E-step, runtime/gpu/real_train_gpu.c). */
const hmmrt_densities *real_densities(const real_trainer *r);
const double *const *real_observations(const real_trainer *r);
const int64_t *real_lengths(const real_trainer *r);
/* Adds the GPU's E-step statistics to stats (real_stats_size doubles): per
 * distinct gaussian, in the order of the emissions that are gaussians
 * (runtime/real_gpu_model.c's), W, the sums of z and of z_i z_k (k <= i, row
 * by row; a diagonal one z_i^2) at gauss + gauss_at[j]; the counts of every
 * density's parts of weight above 0 at parts[part_start[em] ..]. */
void real_add_gpu_stats(const real_trainer *r, const double *gauss, const int64_t *gauss_at,
                        const double *parts, const int *part_start, double *stats);
/* Whether some density has a number to fit (a free gaussian, or a free
 * mixture of two or more weights above 0). */
int real_has_free_parameter(const real_trainer *r);
/* The M-step of the densities from stats: 0, or -1 with why (the gaussian
 * whose covariance is no longer positive definite) in err. */
int real_maximise(real_trainer *r, const double *stats, double min_variance, double c,
                  char *err, size_t errlen);
/* Keeps the current numbers (the model an interrupted run writes). */
void real_keep(real_trainer *r);
/* Adds the replacements of every number an update set, of the kept
 * numbers (kept 1) or the current ones, through add(context, begin, end,
 * value). */
void real_replacements(const real_trainer *r, int kept,
                       void (*add)(void *context, int64_t begin, int64_t end, double value),
                       void *context);

#endif
