/* pipeline.c: the front end of hmmc (see pipeline.h): parse, sema, the
 * target-independent passes in order, then the layout and the chosen
 * target's plans. This is the one place their order is written; main.c, the
 * unit tests and the fuzzing harness call it. */
#include "driver/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syntax/ast.h"
#include "syntax/parse.h"
#include "ir/ir_verify.h"
#include "passes/pass.h"
#include "codegen/cuda/cuda_plan.h"
#include "driver/stream.h"
#include "sema/sema.h"

/* The passes, in order; --dump-after=NAME prints the IR after one of them. */
static const struct {
    const char *name;
    int (*run)(Program *, const PassOptions *, Diag *);
} passes[] = {
    {"attributes", pass_attributes}, /* what each call must compute and store */
    {"trim", pass_trim},             /* states no complete path visits removed */
    {"cycles", pass_close_cycles},   /* silent cycles replaced by their exact closure */
    {"fold", pass_fold_silent},      /* silent states folded where that makes fewer moves */
    {"order", pass_order},           /* evaluation order of silent moves within a position */
    {"plan", pass_plan},             /* the target-independent facts of every call; its dump
                                        waits for the target's plans (pipeline_plan_target) */
};
enum { N_PASSES = sizeof passes / sizeof passes[0] };

/* With HMMC_VERIFY_IR set (make's test targets), the IR verifier runs after
 * sema and after every pass; a broken invariant is a bug in hmmc: it says
 * where, and the build fails (status 3). */
static void verify(Arena *a, const Program *p, const char *after, const uint64_t *sums)
{
    char why[512];
    if (!ir_verify(a, p, after, sums, why, sizeof why)) {
        fprintf(stderr, "hmmc: internal error: the IR is inconsistent %s; this is a bug in hmmc\n",
                why);
        exit(3);
    }
}

static int is_stage(const PipelineOptions *o, const char *name)
{
    return o->dump_after && strcmp(o->dump_after, name) == 0;
}

PipelineResult pipeline_run(Arena *a, Diag *d, const char *path, const char *src, size_t len,
                            const PipelineOptions *o, Program **program)
{
    *program = NULL;
    Program *p = NULL;
    /* a file of many models: a model at a time, each syntax tree freed once
     * lowered (stream.c); else, or when that way finds anything to say, whole */
    const char *whole = getenv("HMMC_WHOLE_FILE"); /* tests compare the two ways */
    if (!is_stage(o, "parse") && !(whole && *whole) &&
        stream_front_end(a, d, path, src, len, &p)) {
        if (o->verbose)
            fprintf(o->verbose, "hmmc: front end: %d models parsed and lowered one at a time\n",
                    p->n_models);
    } else {
        File *file = parse_source(a, d, path, src, len);
        if (d->errors)
            return PIPELINE_ERRORS;
        if (is_stage(o, "parse")) {
            ast_dump(file, o->dump);
            return PIPELINE_DUMPED;
        }
        p = sema(a, file, d);
        if (d->errors || !p)
            return PIPELINE_ERRORS;
    }
    PassOptions po = {.verbose = o->verbose, .fold_silent = !o->no_fold};
    p->source_text = src; /* --train writes it again with the fitted numbers */
    p->source_length = (long)len;
    const char *env = getenv("HMMC_VERIFY_IR");
    uint64_t *sums = NULL;
    if (env && *env) {
        sums = ARENA_ARRAY(a, uint64_t, p->n_models ? p->n_models : 1);
        for (int i = 0; i < p->n_models; i++)
            sums[i] = ir_model_checksum(&p->models[i]);
        verify(a, p, "sema", sums);
    }
    if (is_stage(o, "sema")) {
        ir_dump(p, o->dump);
        return PIPELINE_DUMPED;
    }
    for (int i = 0; i < N_PASSES; i++) {
        if (!passes[i].run(p, &po, d) || d->errors)
            return PIPELINE_ERRORS;
        if (sums)
            verify(a, p, passes[i].name, sums);
        if (is_stage(o, passes[i].name) && strcmp(passes[i].name, "plan") != 0) {
            ir_dump(p, o->dump);
            return PIPELINE_DUMPED;
        }
    }
    *program = p;
    return PIPELINE_PLANNED;
}

/* --dump-after=plan: each call's plans, after its shared plan line. */
static void dump_plans(const void *ctx, int call, FILE *out)
{
    const Plans *plans = ctx;
    layout_dump_call(plans->layout, call, out);
    c_plan_dump(&plans->c[call], out);
    if (plans->gpu)
        gpu_plan_dump(&plans->gpu[call], out);
}

PipelineResult pipeline_plan_target(Program *p, const PipelineOptions *o, Plans *plans)
{
    plans->layout = layout_build(p);
    CPlan *c = c_plan(p, o->c_shape, o->verbose);
    c_profile_plan(p, c, o->profile_data, o->gpu, o->verbose);
    plans->c = c;
    unsigned char *generic = ARENA_ARRAY(p->arena, unsigned char, p->n_calls + 1);
    for (int i = 0; i < p->n_calls; i++)
        generic[i] = (unsigned char)c[i].profile_data;
    plans->gpu = o->gpu ? gpu_plan(p, o->verbose, generic) : NULL;
    if (is_stage(o, "plan")) {
        ir_dump_with(p, o->dump, dump_plans, plans);
        layout_dump(plans->layout, o->dump);
        return PIPELINE_DUMPED;
    }
    return PIPELINE_PLANNED;
}

int pipeline_knows_stage(const char *name)
{
    if (strcmp(name, "parse") == 0 || strcmp(name, "sema") == 0)
        return 1;
    for (int i = 0; i < N_PASSES; i++)
        if (strcmp(name, passes[i].name) == 0)
            return 1;
    return 0;
}

void pipeline_list_stages(FILE *out)
{
    fputs("parse, sema", out);
    for (int i = 0; i < N_PASSES; i++)
        fprintf(out, ", %s", passes[i].name);
}
