/* gpu_opening.c: opens the GPU on a thread of its own. Starting the driver
 * and making its context take 0.2 s or more, about as long as setting up the
 * run and reading the first batch of a large input, so the two overlap: the
 * run starts the opening, reads, then finishes the opening before it prints
 * anything (so the note saying there is no GPU still comes first). */
#include "score_run.h"

#include "hmmrt_gpu.h"

/* Opens the GPU in the opening's precision; the note says why not. */
static void open_now(gpu_opening *op)
{
    double started = hmmrt_seconds();
    op->why[0] = '\0';
    const hmmrt_gpu_program *gpu = op->prog->gpu;
    op->gpu = gpu->open ? hmmrt_gpus_open(hmmrt_hits_gpu_program(op), op->o, op->in_double,
                                          op->why, sizeof op->why)
                        : NULL;
    if (!gpu->open)
        snprintf(op->why, sizeof op->why, "this program has no GPU driver");
    op->seconds = hmmrt_seconds() - started;
}

static void *open_on_thread(void *arg)
{
    open_now(arg);
    return NULL;
}

void hmmrt_start_opening_gpu(gpu_opening *op, const hmmrt_program *prog, const hmmrt_options *o)
{
    *op = (gpu_opening){.prog = prog, .o = o};
    const hmmrt_gpu_program *gpu = prog->gpu;
    if (!gpu || o->cpu)
        return;
    if (gpu->cpu_only) {
        hmmrt_note("scoring on the CPU: %s", gpu->cpu_only);
        return;
    }
    op->wanted = 1;
    /* double when asked for, or when float cannot hold the program's weights
     * (rather than scoring every sequence in float in vain, then again) */
    op->in_double = o->use_double || gpu->needs_double != NULL;
    if (pthread_create(&op->thread, NULL, open_on_thread, op) == 0)
        op->running = 1;
    else
        open_now(op); /* no thread to be had: open it now */
}

hmmrt_gpus *hmmrt_finish_opening_gpu(gpu_opening *op)
{
    if (!op->wanted || op->finished)
        return op->gpu;
    op->finished = 1;
    if (op->running) {
        double started = hmmrt_seconds();
        pthread_join(op->thread, NULL);
        op->waited = hmmrt_seconds() - started;
        op->running = 0;
    }
    if (!op->gpu)
        hmmrt_note("no usable GPU (%s); scoring on the CPU",
                   op->why[0] ? op->why : "no reason given");
    return op->gpu;
}
