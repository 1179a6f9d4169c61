/* backend_cuda.h: the parts of the CUDA backend, one file per kernel shape
 * (backend_cuda.c writes the file and the shape "thread per sequence",
 * backend_cuda_block.c the shape "block per sequence"). */
#ifndef HMMC_BACKEND_CUDA_H
#define HMMC_BACKEND_CUDA_H

#include "codegen/backend.h"
#include "codegen/emit.h"

/* How a call's kernel is launched; both shapes share one launcher writer. */
typedef struct LaunchShape {
    const char *name;       /* for --timing's plan line: "thread per sequence", ... */
    int shared_values;      /* dynamic shared memory, in values of the kernel's precision */
    int states;             /* the state count the occupancy rule is given */
    int block_per_sequence; /* a block a sequence, at most `states` threads rounded up to a
                               warp; else a thread a sequence */
    int lanes_per_sequence; /* > 0: this many lanes of a warp a sequence (8, 16, 32),
                               blocks of whole warps */
} LaunchShape;

/* A table of ints, c<index>_NAME, in device memory. */
void cuda_write_int_table(Emitter *e, int index, const char *name, const int *v, int n);
/* A table of numbers in both precisions (c<index>_NAME_f and _d) and an
 * accessor template c<index>_NAME<real>() that picks one. */
void cuda_write_real_table(Emitter *e, int index, const char *name, const double *v, int n);

/* The guard that a call's kernel begins with when a weight or emission
 * value is outside float's range (IrPlan.float_underflow, float_overflow;
 * nothing otherwise):
 * in float, every sequence is marked (NaN) for scoring in double. who: the
 * C condition of the thread that writes. */
void cuda_write_float_guard(Emitter *e, const IrCall *call, const char *who);

/* Writes c<index>_launch (the kernel in the batch's precision, its block size
 * from the occupancy rules, chosen once per precision) and c<index>_describe. */
void cuda_write_launcher(Emitter *e, int index, const LaunchShape *shape);

/* cuda_write_launcher with call `index`'s own LaunchShape. */
void cuda_write_call_launcher(Emitter *e, const Program *p, int index);

/* Writes the launcher of call `index` in the dense shape (backend_cuda_dense.c). */
void cuda_write_dense_call(Emitter *e, const Program *p, int index);
/* How call `index`'s kernel is launched (compiler/cuda_plan.c). */
void cuda_launch_shape(const Program *p, int index, LaunchShape *shape);
/* ptxas's optimisation level for the program's kernels: 1 when every call
 * is forward in the profile shape with at most PROFILE_PTXAS_O1_MAX_NODES
 * nodes a lane (profile.h says why), else 3; *why says which and why
 * (compiler/cuda_plan.c). */
int cuda_ptxas_level(const Program *p, const char **why);
/* hmmc -v: per kernel, its registers and shared memory as ptxas reported them
 * (ptxas_log: nvcc's output with -Xptxas=-v) and the block size and occupancy
 * the runtime's occupancy rules give on an H100 (compiler/cuda_plan.c). */
void cuda_report_plan(const Program *p, const char *ptxas_log, FILE *out);

/* Writes tables, kernel and launcher of call `index` in the profile shape
 * (backend_cuda_profile.c). */
void cuda_write_profile_call(Emitter *e, const Program *p, int index);

/* Writes tables, kernel and launcher of call `index` in the block-per-sequence shape. */
void cuda_write_block_call(Emitter *e, const Program *p, int index);

#endif
