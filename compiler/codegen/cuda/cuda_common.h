/* cuda_common.h: what every CUDA kernel shape writes the same way (tables,
 * the float-range guard, the launcher); the shapes include this file and
 * nothing else of the backend's. */
#ifndef HMMC_CUDA_COMMON_H
#define HMMC_CUDA_COMMON_H

#include "codegen/emit.h"
#include "codegen/cuda/cuda_plan.h"

/* A table of ints, c<index>_NAME, in device memory. */
void cuda_write_int_table(Emitter *e, int index, const char *name, const int *v, int n);
/* A table of numbers in both precisions (c<index>_NAME_f and _d) and an
 * accessor template c<index>_NAME<real>() that picks one. */
void cuda_write_real_table(Emitter *e, int index, const char *name, const double *v, int n);

/* The guard that a call's kernel begins with when a weight or emission
 * value is outside float's range (GpuPlan.float_underflow, float_overflow;
 * nothing otherwise):
 * in float, every sequence is marked (NaN) for scoring in double. who: the
 * C condition of the thread that writes. */
void cuda_write_float_guard(Emitter *e, const GpuPlan *plan, const char *who);

/* Writes the call's launch shape (c<index>_shape) and its entry points
 * c<index>_launch and c<index>_describe, which hand the kernels to the
 * runtime's hmmc_launch and hmmc_describe (hmmrt_kernel.cuh). */
void cuda_write_launcher(Emitter *e, int index, const LaunchShape *shape);

/* cuda_write_launcher with call `index`'s own LaunchShape (plan: its GpuPlan). */
void cuda_write_call_launcher(Emitter *e, const Program *p, const GpuPlan *plan, int index);

#endif
