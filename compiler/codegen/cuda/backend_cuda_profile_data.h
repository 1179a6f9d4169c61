/* backend_cuda_profile_data.h: profiles as data in a CUDA program (GpuPlan.
 * profile_data): no kernel per call; the .cu gets a small kernel per set of
 * length-dependent weights, the .c the calls' entries for libhmmrt_gpu's
 * generic profile kernel (runtime/profile_data_gpu.h). */
#ifndef HMMC_BACKEND_CUDA_PROFILE_DATA_H
#define HMMC_BACKEND_CUDA_PROFILE_DATA_H

#include "codegen/backend.h"
#include "codegen/emit.h"

/* The .cu part: each distinct set of length-dependent weights' kernel and
 * its launcher hmmc_pd_lwN (nothing when no call is on the generic kernel). */
void cuda_write_profile_data(Emitter *e, const Program *p, const Plans *plans);

/* The .c part, before the table of GPU calls: each such call's
 * hmmrt_gpu_profile_call and its launch and describe functions. */
void cuda_write_profile_data_host(Emitter *e, const Program *p, const Plans *plans);

/* hmmc -v's words for the GPU side of such a call: the float kernel's
 * shape for the model's M (match states M1..Mm), or why the double kernel. */
const char *cuda_profile_data_plan_text(Arena *a, const IrCall *call);

#endif
