/* backend.h: the code generators, one per target: each writes the whole
 * generated source of a program (driver/build.c compiles what they write). */
#ifndef HMMC_BACKEND_H
#define HMMC_BACKEND_H

#include <stdio.h>
#include "ir/ir.h"

#define HMMC_VERSION "0.1.0"

/* Writes the whole C program for p; name is the program's name. With gpu, the
 * program also carries the GPU side (hmmrt_gpu.h) whose kernels
 * backend_cuda_write writes. data_prefix: the absolute path, less suffixes,
 * of the data files that dense_write_data (backend_dense.h) writes. Returns 0
 * or -1. */
int backend_c_write(const Program *p, FILE *out, const char *name, int gpu,
                    const char *data_prefix);
/* Writes the CUDA kernels and launchers of p (the .cu beside the .c). */
int backend_cuda_write(const Program *p, FILE *out, const char *name);

#endif
