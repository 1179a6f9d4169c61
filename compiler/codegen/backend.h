/* backend.h: the code generators, one per target: each writes the whole
 * generated source of a program (driver/build.c compiles what they write)
 * from the IR, the program's layout (layout.h) and its own plan. */
#ifndef HMMC_BACKEND_H
#define HMMC_BACKEND_H

#include <stdio.h>

#include "ir/ir.h"
#include "codegen/emit.h"
#include "codegen/layout.h"

#define HMMC_VERSION "0.1.0"

/* What the backends read besides the IR, made after the shared pipeline for
 * the chosen target (driver/pipeline.c, pipeline_plan_target). */
typedef struct Plans {
    const Layout *layout;      /* the program's layout, for every target */
    const struct CPlan *c;     /* the C plan of every call (c/c_plan.h): every target has a
                                  C path */
    const struct GpuPlan *gpu; /* --target=cuda: the GPU plan of every call
                                  (cuda/cuda_plan.h); else NULL */
} Plans;

/* Writes the whole C program for p; name is the program's name. With
 * plans->gpu, the program also carries the GPU side (hmmrt_gpu.h): the table
 * backend_cuda_write_host writes, whose kernels backend_cuda_write writes.
 * data_prefix: the absolute path, less suffixes, of the data files that
 * dense_write_data (backend_dense.h) writes. Returns 0 or -1. */
int backend_c_write(const Program *p, const Plans *plans, FILE *out, const char *name,
                    const char *data_prefix);
/* Writes the CUDA kernels and launchers of p (the .cu beside the .c). */
int backend_cuda_write(const Program *p, const Plans *plans, FILE *out, const char *name);
/* Writes, into the C program, the GPU side's table of the calls
 * (hmmrt_gpu_program gpu_program): their launchers, output columns and
 * traceback tables. */
void backend_cuda_write_host(Emitter *e, const Program *p, const Plans *plans);

#endif
