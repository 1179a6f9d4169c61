/* cuda_common.h: what every CUDA kernel shape writes the same way (tables,
 * the float-range guard, the launcher); the shapes include this file and
 * nothing else of the backend's. */
#ifndef HMMC_CUDA_COMMON_H
#define HMMC_CUDA_COMMON_H

#include "codegen/emit.h"
#include "codegen/cuda/cuda_plan.h"

/* A table of ints in device memory; name: its symbol (layout_name: "c0_class"). */
void cuda_write_int_table(Emitter *e, const char *name, const int *v, int n);
/* A table of numbers in both precisions (NAME_f and NAME_d) and an accessor
 * template NAME<real>() that picks one; name: from layout_name ("c0_emit"). */
void cuda_write_real_table(Emitter *e, const char *name, const double *v, int n);

/* The guard that a call's kernel begins with when a weight or emission
 * value is outside float's range (GpuPlan.float_underflow, float_overflow;
 * nothing otherwise):
 * in float, every sequence is marked (NaN) for scoring in double. who: the
 * C condition of the thread that writes. */
void cuda_write_float_guard(Emitter *e, const GpuPlan *plan, const char *who);

/* The per-sequence weights of a model with length-dependent weights
 * (IrModel.length_weights; nothing for others), written after the kernel
 * has its sequence's length L: each expression once, in double as the C
 * path computes it (dp_length_weights), as `lenwK`, which the moves read by
 * name (dp_length_weight_name) or multiply into their table entries. With
 * logs (viterbi) lenwK is its log in the kernel's precision (`real`); in a
 * sum kernel (forward, backward) it stays a double, so that the products
 * with it are formed in double and rounded once: a loop weight near 1 (N ->
 * N, L / (L + 3)) rounded to float would be off by the same part at every
 * position, up to 3e-8 nats a symbol, beyond the float contract of
 * tests/gpu/check on sequences of a few hundred symbols whose scores are
 * near 0 (HMMER3's log-odds). A sum kernel given a weight that its
 * precision cannot hold (hmmc_length_weight_fits) marks the sequence and
 * ends: the thread `who` (a C condition) writes the mark, NaN. Every thread
 * of a sequence computes the same values and leaves together. */
void cuda_write_length_weights(Emitter *e, Arena *a, const IrModel *m, int logs, const char *who);

/* Writes call `index`'s launch shape (cN_shape) and its entry points
 * cN_launch and cN_describe, which hand its kernel (cN_kernel) to the
 * runtime's hmmc_launch and hmmc_describe (hmmrt_kernel.cuh); every name
 * is the layout's (layout_name). */
void cuda_write_launcher(Emitter *e, const Layout *l, int index, const LaunchShape *shape);

/* cuda_write_launcher with call `index`'s own LaunchShape (plan: its GpuPlan). */
void cuda_write_call_launcher(Emitter *e, const Program *p, const Layout *l, const GpuPlan *plan, int index);

#endif
