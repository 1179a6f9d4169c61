/* hits_gpu.c: the hits mode's two passes. The GPU (or the CPU path) runs
 * only the call that gives the search score (forward); the viterbi
 * tracebacks the domains are read from are worked out on the CPU for the
 * sequences that may still be reported (a few hundred of a million random
 * proteins) rather than for every sequence (on the GPU, back pointers of
 * every cell cost 30 times the forward kernels). */
#include "score_run.h"

#include "hits.h"
#include "hmmrt_gpu.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* 1 when a call fills the column. */
static int fills(const hmmrt_gpu_call *call, int column)
{
    for (int k = 0; k < call->n_outputs; k++)
        if (call->output_column[k] == column)
            return 1;
    return 0;
}

const hmmrt_program *hmmrt_hits_gpu_program(gpu_opening *op)
{
    const hmmrt_program *prog = op->prog;
    const hmmrt_hits_info *info = prog->hits;
    if (!op->o->hits.first || !info || info->traceback_column < 0 || !prog->gpu)
        return prog;
    const hmmrt_gpu_program *gp = prog->gpu;
    hmmrt_gpu_call *calls = malloc((size_t)(gp->n_calls > 0 ? gp->n_calls : 1) * sizeof *calls);
    hmmrt_gpu_program *gpu = malloc(sizeof *gpu);
    hmmrt_program *reduced = malloc(sizeof *reduced);
    if (!calls || !gpu || !reduced) {
        free(calls), free(gpu), free(reduced);
        return prog; /* every call on the GPU, as without the hits mode */
    }
    int n = 0;
    for (int c = 0; c < gp->n_calls; c++)
        if (fills(&gp->calls[c], info->score_column))
            calls[n++] = gp->calls[c];
    *gpu = *gp;
    gpu->n_calls = n;
    gpu->calls = calls;
    *reduced = *prog;
    reduced->gpu = gpu;
    op->hits_program = reduced;
    return reduced;
}

void hmmrt_hits_gpu_free(gpu_opening *op)
{
    hmmrt_program *reduced = op->hits_program;
    if (!reduced)
        return;
    free((void *)reduced->gpu->calls);
    free((void *)reduced->gpu);
    free(reduced);
    op->hits_program = NULL;
}

/* Sequence i's viterbi traceback (every column but the search score) from
 * the CPU: 0, or non-zero when memory ran out. From many threads at once. */
static int path_on_cpu(run *r, const batch *b, work *w, int64_t i, int64_t first_index)
{
    const hmmrt_program *prog = r->prog;
    hmmrt_value *values = w->values + i * prog->n_columns;
    const int score_column = prog->hits->score_column;
    const double score = values[score_column].score;
    hmmrt_seq seq = {.name = b->records[i].name,
                     .codes = w->code_ptrs + i * prog->n_alphabets,
                     .length = b->records[i].length,
                     .index = first_index + i};
    /* the traceback's call alone where the program names it: the search score
     * is already in values */
    hmmrt_scratch *scratch = &r->scratches[omp_get_thread_num()];
    int failed = prog->hits->paths ? prog->hits->paths(&seq, values, scratch)
                                   : prog->score_cpu(&seq, values, scratch);
    values[score_column].score = score; /* the run's own precision ranks the hits */
    return failed;
}

void hmmrt_hits_paths_for_batch(run *r, const batch *b, work *w, int64_t first_index)
{
    /* a DNA model's hits come from windows of both strands (hits_strands.c),
     * scored there */
    if (!r->hits_paths_later || r->hits->strands)
        return;
    /* The sequences that may be reported, in order. The tables are written
     * only when the run ends well, with every sequence scored here counted in
     * Z (hits.c counts those of a score that is a number): a score that
     * cannot be reported at that Z cannot be at the final one, which is no
     * smaller. The printer only counts the others (w->counted_only). */
    const int score_column = r->prog->hits->score_column;
    int64_t counted = 0;
    for (int64_t i = 0; i < b->n; i++)
        counted += w->results[i].status == SEQ_SCORED &&
                   !isnan(w->values[i * r->prog->n_columns + score_column].score);
    hmmrt_hits_ready_free(w);
    int64_t *may = malloc(((size_t)b->n + 1) * sizeof *may), n_may = 0;
    w->counted_only = may ? calloc((size_t)b->n + 1, 1) : NULL;
    for (int64_t i = 0; i < b->n; i++) {
        if (w->results[i].status != SEQ_SCORED)
            continue;
        if (!w->counted_only) /* printing stops at the first */
            w->results[i].status = SEQ_OUT_OF_MEMORY;
        else if (hmmrt_hits_may_report(
                     r->hits, w->values[i * r->prog->n_columns + score_column].score, counted - 1))
            may[n_may++] = i;
        else
            w->counted_only[i] = 1;
    }
    r->hits_paths += n_may;
    /* each candidate's domains and null2 too (milliseconds each), which the
     * printer would otherwise work out one after another */
    const hmmrt_program *prog = r->prog;
    int model = prog->hits->model;
    int prepare = n_may > 0 && model >= 0 && hmmrt_hits_can_prepare(r->hits, r->n_scratches);
    if (prepare) {
        w->ready = calloc((size_t)n_may, sizeof *w->ready);
        w->ready_at = malloc((size_t)n_may * sizeof *w->ready_at);
        prepare = w->ready && w->ready_at;
    }
#pragma omp parallel for num_threads(r->n_scratches) schedule(dynamic, 1)
    for (int64_t k = 0; k < n_may; k++) {
        int64_t i = may[k];
        hmmrt_buf_take_failure();
        if (path_on_cpu(r, b, w, i, first_index) != 0 || hmmrt_buf_take_failure()) {
            w->results[i].status = SEQ_OUT_OF_MEMORY;
            continue;
        }
        if (!prepare)
            continue;
        const uint8_t *codes = w->code_ptrs[i * prog->n_alphabets + prog->models[model].alphabet];
        int status = hmmrt_hits_prepare(r->hits, omp_get_thread_num(), &b->records[i],
                                        first_index + i, w->values + i * prog->n_columns,
                                        codes, &w->ready[k]);
        /* a failure is left to the printer, which makes the hit again and says why */
        w->ready_at[k] = status == 0 ? i : -1;
    }
    if (prepare)
        w->n_ready = n_may;
    free(may);
}

void hmmrt_hits_ready_free(work *w)
{
    for (int64_t k = w->next_ready; k < w->n_ready; k++)
        free(w->ready[k].domains);
    free(w->ready);
    free(w->ready_at);
    free(w->counted_only);
    w->ready = NULL;
    w->ready_at = NULL;
    w->counted_only = NULL;
    w->n_ready = w->next_ready = 0;
}
