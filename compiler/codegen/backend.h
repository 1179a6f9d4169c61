/* backend.h: the code generators (one per target) and the build step that
 * turns generated sources into a program linked against libhmmrt. */
#ifndef HMMC_BACKEND_H
#define HMMC_BACKEND_H

#include <stdio.h>
#include "ir/ir.h"

#define HMMC_VERSION "0.1.0"

/* The folder of the hmmc root holding libhmmrt.a: the Makefile's BUILD, so a
 * sanitizer build of hmmc (bin/hmmc-asan) links against its own runtime. */
#ifndef HMMC_BUILD_DIR
#define HMMC_BUILD_DIR "build"
#endif

/* Writes the whole C program for p; name is the program's name. With gpu, the
 * program also carries the GPU side (hmmrt_gpu.h) whose kernels
 * backend_cuda_write writes. data_prefix: the absolute path, less suffixes,
 * of the data files that dense_write_data (backend_dense.h) writes. Returns 0
 * or -1. */
int backend_c_write(const Program *p, FILE *out, const char *name, int gpu,
                    const char *data_prefix);
/* Writes the CUDA kernels and launchers of p (the .cu beside the .c). */
int backend_cuda_write(const Program *p, FILE *out, const char *name);

typedef struct BuildOptions {
    const char *target;   /* "c" or "cuda" */
    const char *output;   /* the program to build */
    const char *emit_dir; /* keep the generated sources here, or NULL for a temporary folder */
    const char *root;     /* where runtime/hmmrt.h and build/libhmmrt.a are */
    int verbose;
} BuildOptions;

/* The CUDA toolkit's folder ($CUDA_HOME, else above the nvcc on PATH, else
 * /usr/local/cuda), malloc'd, or NULL. */
char *cuda_home(void);

/* Generates the sources of p and builds the program (linked into a
 * temporary file beside o->output, then renamed to it). Returns 0, or -1
 * after printing what went wrong. */
int build_program(const Program *p, const BuildOptions *o);

/* From now on SIGINT, SIGTERM and SIGHUP (unless ignored when hmmc started)
 * stop the tool build_program runs (its process group), remove its
 * temporary folder and program, and exit with 128 + the signal. */
void build_catch_signals(void);

#endif
