/* errors.c: the GPU driver's messages, which every file of runtime/gpu/ uses:
 * a failed CUDA call named with CUDA's message and where the driver was
 * (g->where), and the driver's own errors, all into g->err; and taking the
 * fault that HMMRT_GPU_FAULT injects into a batch (tests/gpu/faults). */
#include "driver.h"

#include <stdarg.h>
#include <stdio.h>

int gpu_error(hmmrt_gpu *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->err, g->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int gpu_fail(hmmrt_gpu *g, cudaError_t e, const char *what)
{
    return gpu_error(g, "%s failed: %s (%s)", what, cudaGetErrorString(e), g->where);
}

int gpu_check(hmmrt_gpu *g, cudaError_t e, const char *what)
{
    return e == cudaSuccess ? 0 : gpu_fail(g, e, what);
}

/* 1 once when the fault armed for this batch is `kind` (driver.c arms it). */
int gpu_take_fault(hmmrt_gpu *g, hmmrt_fault_kind kind)
{
    if (g->fault_armed != kind || kind == HMMRT_FAULT_NONE)
        return 0;
    g->fault_armed = HMMRT_FAULT_NONE;
    return 1;
}
