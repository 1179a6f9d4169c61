/* cuda_shapes.h: the CUDA backend's four kernel shapes, one file each, which
 * the dispatcher (backend_cuda.c) calls by the call's GpuPlan.shape. Each
 * writes the tables, kernel and launcher of call `index`, whose GpuPlan is plan,
 * under the names the layout gives its symbols (layout_name). */
#ifndef HMMC_CUDA_SHAPES_H
#define HMMC_CUDA_SHAPES_H

#include "codegen/cuda/cuda_common.h"

/* A thread per sequence, small models (backend_cuda_thread.c). */
void cuda_write_thread_call(Emitter *e, const Program *p, const Layout *l, const GpuPlan *plan, int index);
/* A block per sequence, larger models (backend_cuda_block.c). */
void cuda_write_block_call(Emitter *e, const Program *p, const Layout *l, const GpuPlan *plan, int index);
/* Lanes of a warp per sequence, profile-shaped models (backend_cuda_profile.c). */
void cuda_write_profile_call(Emitter *e, const Program *p, const Layout *l, const GpuPlan *plan, int index);
/* Dense models: the launcher of libhmmrt's dense kernels (backend_cuda_dense.c). */
void cuda_write_dense_call(Emitter *e, const Program *p, const Layout *l, int index);

#endif
