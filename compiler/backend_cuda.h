/* backend_cuda.h: the parts of the CUDA backend, one file per kernel shape
 * (backend_cuda.c writes the file and the shape "thread per sequence",
 * backend_cuda_block.c the shape "block per sequence"). */
#ifndef HMMC_BACKEND_CUDA_H
#define HMMC_BACKEND_CUDA_H

#include "backend.h"
#include "emit.h"

/* Writes tables, kernel and launcher of call `index` in the block-per-sequence shape. */
void cuda_write_block_call(Emitter *e, const Program *p, int index);

#endif
