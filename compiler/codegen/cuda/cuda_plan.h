/* cuda_plan.h: the CUDA backend's plan of each call (GpuPlan: the kernel's
 * shape, unrolling, silent levels, profile lanes, precision), made after the
 * shared pipeline for --target=cuda only; each call's launch (LaunchShape,
 * which the kernel writers and hmmc -v both read), the ptxas level of the
 * program's kernels, and hmmc -v's report of the kernels nvcc built. */
#ifndef HMMC_CUDA_PLAN_H
#define HMMC_CUDA_PLAN_H

#include <stdio.h>

#include "ir/ir.h"
#include "analysis/profile.h"
#include "codegen/layout.h"

/* Kernel shapes of the CUDA backend (gpu_plan chooses). */
typedef enum GpuShape {
    GPU_THREAD_PER_SEQUENCE, /* small models: each thread one sequence, columns in registers */
    GPU_BLOCK_PER_SEQUENCE,  /* larger models: a block per sequence, a thread per state (or
                                several), columns in shared memory, moves in tables */
    GPU_DENSE,               /* dense models (dense.h): each position of a batch of
                                sequences is a tiled matrix product */
    GPU_PROFILE              /* profiles (profile.h), forward and viterbi: a warp per
                                sequence, each lane a run of nodes in registers, the
                                delete chain a parallel prefix across the warp */
} GpuShape;

/* The GPU plan of one call. */
typedef struct GpuPlan {
    GpuShape shape;    /* how threads share the work */
    int unroll;        /* positions per 16-byte load of residues whose bodies are written
                          out (16 for small models; 1: one body, byte loads) */
    int silent_levels; /* GPU_BLOCK_PER_SEQUENCE: levels of silent states (a level
                          depends only on earlier ones: one barrier each) */
    const ProfileView *profile; /* GPU_PROFILE: the node view (profile.h) */
    int profile_lanes; /* GPU_PROFILE: lanes of a warp a sequence (profile_lanes) */
    int profile_lane_scales; /* GPU_PROFILE, forward: each lane keeps its values times a
                                power of two of its own (profile_lane_scales) */
    double float_underflow; /* the least weight below float's range that the kernel holds
                               (IrPlan.float_underflow, less what the profile's lanes hold
                               scaled), or 0: the call is scored in double */
    double float_overflow;  /* IrPlan.float_overflow: above float's range, scored in double */
    /* A posterior call: no kernel of its own; libhmmrt_gpu's forward-backward
     * kernel runs it (fb_kernel), or, for a model that kernel cannot hold,
     * libhmmrt's CPU engine (fb_kernel 0, fb_why says why). */
    int posterior, fb_kernel;
    const char *fb_why;
    int real;               /* a call over real observations (alphabet real[D]): no kernel,
                               the program scores on its CPU path for now */
    int profile_data;       /* profiles as data: no kernel of its own; libhmmrt_gpu's
                               generic profile kernel (runtime/profile_data_gpu.h) reads the
                               model's tables (backend_cuda_profile_data.c) */
} GpuPlan;

/* The GPU plans of p's calls (p->n_calls of them, in p's arena). With
 * verbose, says what it chose and why. generic (NULL: none) marks the calls
 * that take the generic profile scorer (CPlan.profile_data). */
GpuPlan *gpu_plan(const Program *p, FILE *verbose, const unsigned char *generic);
/* The plan's line of --dump-after=plan. */
void gpu_plan_dump(const GpuPlan *plan, FILE *out);
const char *gpu_shape_name(GpuShape shape); /* "thread-per-sequence", ... */
/* Why the GPU scores the program in double only (a call with weights outside
 * float's range: GpuPlan.float_underflow, float_overflow), or NULL. */
const char *gpu_double_only_reason(const Program *p, const GpuPlan *plans);

/* How a call's kernel is launched; every shape shares one launcher writer
 * (cuda_common.h). */
typedef struct LaunchShape {
    const char *name;       /* for --timing's plan line: "thread per sequence", ... */
    int shared_values;      /* dynamic shared memory, in values of the kernel's precision */
    int states;             /* the state count the occupancy rule is given */
    int block_per_sequence; /* a block a sequence, at most `states` threads rounded up to a
                               warp; else a thread a sequence */
    int lanes_per_sequence; /* > 0: this many lanes of a warp a sequence (8, 16, 32),
                               blocks of whole warps */
} LaunchShape;

/* How call `index`'s kernel is launched (plan: the call's GpuPlan). */
void cuda_launch_shape(const Program *p, const GpuPlan *plan, int index, LaunchShape *shape);
/* ptxas's optimisation level for the program's kernels: 1 when every call
 * is forward in the profile shape with at most PROFILE_PTXAS_O1_MAX_NODES
 * nodes a lane (profile_tuning.h says why), else 3; *why says which and why. */
int cuda_ptxas_level(const Program *p, const GpuPlan *plans, const char **why);
/* hmmc -v: per kernel, its registers and shared memory as ptxas reported them
 * (ptxas_log: nvcc's output with -Xptxas=-v) and the block size and occupancy
 * the runtime's occupancy rules give on an H100. */
void cuda_report_plan(const Program *p, const Layout *layout, const GpuPlan *plans,
                      const char *ptxas_log, FILE *out);

#endif
