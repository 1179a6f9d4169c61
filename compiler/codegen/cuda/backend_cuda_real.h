/* backend_cuda_real.h: which programs over real observations libhmmrt_gpu's
 * path for them scores (runtime/gpu/real_gpu.c: forward and viterbi scores),
 * and the table of those calls the program carries. */
#ifndef HMMC_BACKEND_CUDA_REAL_H
#define HMMC_BACKEND_CUDA_REAL_H

#include "codegen/emit.h"
#include "codegen/layout.h"

/* NULL when every column of p is a forward or viterbi score over real
 * observations (the GPU path takes p); else why not, in words. */
const char *cuda_real_refusal(const Program *p);
/* The table of p's real calls (real_calls[]) and the fields of gpu_program
 * that name it and the path's entries. */
const char *cuda_write_real_calls(Emitter *e, const Program *p, const Layout *l);

#endif
