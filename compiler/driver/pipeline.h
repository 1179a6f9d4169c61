/* pipeline.h: the front end of hmmc, shared by the driver (driver/main.c)
 * and the fuzzing harness (tests/fuzz/): pipeline_run parses, checks and runs
 * the target-independent passes in order; pipeline_plan_target then lays the
 * program out and runs the chosen target's planning (where the shared
 * pipeline ends and the backends begin). Either stops early to dump the IR
 * when asked. The list of passes lives in pipeline.c, once. */
#ifndef HMMC_PIPELINE_H
#define HMMC_PIPELINE_H

#include <stddef.h>
#include <stdio.h>

#include "support/arena.h"
#include "support/diag.h"
#include "ir/ir.h"
#include "codegen/backend.h"
#include "codegen/c/c_plan.h"
#include "codegen/c/backend_c_profile.h"

typedef struct PipelineOptions {
    const char *dump_after; /* "parse", "sema" or a pass name: dump after it and stop; or NULL */
    FILE *dump;             /* where the dump goes */
    FILE *verbose;          /* what each pass decided, or NULL */
    int no_fold;            /* keep every silent state */
    CShape c_shape;         /* the C backend's shape, or C_SHAPE_AUTO: the plan chooses */
    int gpu;                /* the target is cuda: plan the GPU side too (the C side always) */
    ProfileDataMode profile_data; /* which profiles become data for the generic scorer */
} PipelineOptions;

typedef enum PipelineResult {
    PIPELINE_ERRORS,  /* errors were reported through the Diag */
    PIPELINE_DUMPED,  /* the IR after o->dump_after was written: stop */
    PIPELINE_PLANNED  /* pipeline_run: *program has been through every pass, ready for
                         pipeline_plan_target; pipeline_plan_target: ready for the backends */
} PipelineResult;

/* Runs the front end over src (len bytes, NUL bytes allowed); everything is
 * allocated in a. */
PipelineResult pipeline_run(Arena *a, Diag *d, const char *path, const char *src, size_t len,
                            const PipelineOptions *o, Program **program);

/* The layout of p and the plans of the target's backends (the C plan, and
 * with o->gpu the GPU plan), with -v's account of them; with --dump-after=plan
 * it dumps the IR with every plan (PIPELINE_DUMPED). Everything in p's arena. */
PipelineResult pipeline_plan_target(Program *p, const PipelineOptions *o, Plans *plans);

/* 1 when name is a stage --dump-after accepts. */
int pipeline_knows_stage(const char *name);
/* The stages --dump-after accepts, for the help text: "parse, sema, ...". */
void pipeline_list_stages(FILE *out);

#endif
