/* backend_c_dense.h: the C backend's batched dense sums: which dense calls'
 * forward and backward the CPU path may score over a whole batch as matrix
 * products (libhmmrt's runtime/dense_blas.c, OpenBLAS), and their table. */
#ifndef HMMC_BACKEND_C_DENSE_H
#define HMMC_BACKEND_C_DENSE_H

#include "codegen/emit.h"
#include "codegen/layout.h"
#include "ir/ir.h"

/* Call c's index among the program's batched calls: its dense sums (dense
 * forward and backward calls, in call order), then its posterior calls of
 * models in the dense form; -1 for the others. */
int c_dense_sum_index(const Program *p, int c);
/* Whether the program has any (it then links OpenBLAS: compiler/driver/build.c). */
int c_dense_uses_blas(const Program *p);
/* hmmc_dense_sums, hmmc_dense_posteriors and hmmc_dense_batching, for
 * hmmrt_program.dense_batching;
 * nothing when there are none. Written after the calls. */
void c_write_dense_batching(Emitter *e, const Program *p, const Layout *layout);

#endif
