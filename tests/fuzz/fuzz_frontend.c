/* fuzz_frontend.c: libFuzzer harness of hmmc's front end and code
 * generators. Each input is a .hmm source: it goes through exactly what
 * hmmc runs (pipeline_run: lexer, parser, sema and every pass up to plan; then the
 * layout and both targets' plans, pipeline_plan_target),
 * and a program that passes is dumped and written by the C and CUDA
 * backends into /dev/null. No compiler is ever invoked. Messages go to
 * /dev/null too: only crashes, sanitizer reports, leaks and timeouts count.
 * Built and run by `make fuzz` (tests/fuzz/run). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "support/arena.h"
#include "codegen/backend.h"
#include "support/diag.h"
#include "driver/pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink && !(sink = fopen("/dev/null", "w")))
        abort();
    const char *src = (const char *)data;
    Arena arena;
    arena_init(&arena);
    Diag diag;
    diag_init(&diag, "fuzz.hmm", src, size, sink);
    PipelineOptions options = {.dump = sink, .verbose = sink, .gpu = 1};
    Program *p;
    Plans plans;
    if (pipeline_run(&arena, &diag, "fuzz.hmm", src, size, &options, &p) == PIPELINE_PLANNED &&
        pipeline_plan_target(p, &options, &plans) == PIPELINE_PLANNED) {
        ir_dump(p, sink);
        if (backend_c_write(p, &plans, sink, "fuzz", "/nonexistent/fuzz") != 0 ||
            backend_cuda_write(p, &plans, sink, "fuzz") != 0)
            abort(); /* a planned program must always be writable */
    }
    arena_free(&arena);
    return 0;
}
