/* cuda_plan.h: the CUDA backend's plan of each call's launch (LaunchShape,
 * which the kernel writers and hmmc -v both read), the ptxas level of the
 * program's kernels, and hmmc -v's report of the kernels nvcc built. */
#ifndef HMMC_CUDA_PLAN_H
#define HMMC_CUDA_PLAN_H

#include <stdio.h>

#include "ir/ir.h"

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

/* How call `index`'s kernel is launched. */
void cuda_launch_shape(const Program *p, int index, LaunchShape *shape);
/* ptxas's optimisation level for the program's kernels: 1 when every call
 * is forward in the profile shape with at most PROFILE_PTXAS_O1_MAX_NODES
 * nodes a lane (profile_tuning.h says why), else 3; *why says which and why. */
int cuda_ptxas_level(const Program *p, const char **why);
/* hmmc -v: per kernel, its registers and shared memory as ptxas reported them
 * (ptxas_log: nvcc's output with -Xptxas=-v) and the block size and occupancy
 * the runtime's occupancy rules give on an H100. */
void cuda_report_plan(const Program *p, const char *ptxas_log, FILE *out);

#endif
