/* build.h: the build step: generates the sources of a program (codegen/)
 * and compiles them with the C compiler, and nvcc for --target=cuda, into a
 * program linked against libhmmrt. */
#ifndef HMMC_BUILD_H
#define HMMC_BUILD_H

#include "ir/ir.h"
#include "codegen/backend.h"

/* The folder of the hmmc root holding libhmmrt.a: the Makefile's BUILD, so a
 * sanitizer build of hmmc (bin/hmmc-asan) links against its own runtime. */
#ifndef HMMC_BUILD_DIR
#define HMMC_BUILD_DIR "build"
#endif

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

/* Generates the sources of p by its plans (made for o->target) and builds
 * the program (linked into a temporary file beside o->output, then renamed
 * to it). Returns 0, or -1 after printing what went wrong. */
int build_program(const Program *p, const Plans *plans, const BuildOptions *o);

/* From now on SIGINT, SIGTERM and SIGHUP (unless ignored when hmmc started)
 * stop the tool build_program runs (its process group), remove its
 * temporary folder and program, and exit with 128 + the signal. */
void build_catch_signals(void);

#endif
