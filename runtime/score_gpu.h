/* score_gpu.h: the GPU path of a scoring run (score_gpu.c), which score.c
 * hands the batches to when a GPU opens. */
#ifndef HMMRT_SCORE_GPU_H
#define HMMRT_SCORE_GPU_H

#include "score_run.h"

/* score_gpu.c: the scoring run on the GPU, from the first batch (already
 * read) to the last row; 0 or an exit status. */
int hmmrt_score_batches_on_gpu(run *r);
/* Maps and orders the first batch for the GPU while the GPU opens (should it
 * not open, the CPU path maps the batch again). */
void hmmrt_map_first_batch_for_gpu(run *r);

#endif
