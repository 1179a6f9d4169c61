/* hits_gpu.c: the hits mode on the GPU. The GPU runs only the call that
 * gives the search score (forward); the viterbi tracebacks the domains are
 * read from are worked out on the CPU for the sequences that may still be
 * reported (a few hundred of a million random proteins) rather than for
 * every sequence on the GPU, whose back pointers of every cell cost 30 times
 * the forward kernels. */
#include "score_run.h"

#include "hits.h"
#include "hmmrt_gpu.h"

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

int hmmrt_hits_paths_on_cpu(run *r, const batch *b, work *w, int64_t i, int64_t first_index,
                            int64_t before)
{
    const hmmrt_program *prog = r->prog;
    hmmrt_value *values = w->values + i * prog->n_columns;
    const int score_column = prog->hits->score_column;
    const double score = values[score_column].score;
    if (!r->opening->hits_program || !hmmrt_hits_may_report(r->hits, score, before))
        return 0;
    hmmrt_seq seq = {.name = b->records[i].name,
                     .codes = w->code_ptrs + i * prog->n_alphabets,
                     .length = b->records[i].length,
                     .index = first_index + i};
    int failed = prog->score_cpu(&seq, values, &r->scratches[omp_get_thread_num()]);
    values[score_column].score = score; /* the run's own precision ranks the hits */
#pragma omp atomic
    r->hits_paths++;
    return failed;
}
