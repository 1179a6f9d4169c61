/* openblas_dl.c: OpenBLAS for dense models' batched products on the CPU
 * (dense_blas.c, fb_blas.c), loaded at run time (dlopen) the first time a
 * run asks: a program builds and starts on a machine without OpenBLAS (a GPU
 * node, a cluster's compute node) and there keeps the one-sequence path, as
 * HMMRT_DENSE_BLAS=auto says; HMMRT_DENSE_BLAS=on then stops with a message. */
#include "internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int,
                         const double *, int, double, double *, int);
typedef void (*threads_fn)(int);

static dgemm_fn dgemm;
static threads_fn set_threads;
static char why[512];
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load(void)
{
    /* HMMRT_OPENBLAS: another library file (one outside the linker's path; the tests) */
    const char *asked = getenv("HMMRT_OPENBLAS");
    const char *names[] = {asked && *asked ? asked : "libopenblas.so.0", "libopenblas.so"};
    void *lib = NULL;
    for (size_t k = 0; k < (asked && *asked ? 1 : 2) && !lib; k++)
        lib = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, sizeof why, "no %s (%s)", names[0], dlerror());
        return;
    }
    dgemm = (dgemm_fn)dlsym(lib, "cblas_dgemm");
    set_threads = (threads_fn)dlsym(lib, "openblas_set_num_threads");
    if (!dgemm)
        snprintf(why, sizeof why, "libopenblas.so.0 has no cblas_dgemm");
}

int hmmrt_openblas_loaded(const char **reason)
{
    pthread_once(&loaded, load);
    if (reason)
        *reason = dgemm ? NULL : why;
    return dgemm != NULL;
}

void hmmrt_openblas_single_threaded(void)
{
    if (hmmrt_openblas_loaded(NULL) && set_threads)
        set_threads(1);
}

void hmmrt_dgemm(int order, int trans_a, int trans_b, int m, int n, int k, double alpha,
                 const double *a, int lda, const double *b, int ldb, double beta, double *c,
                 int ldc)
{
    pthread_once(&loaded, load); /* callers asked hmmrt_openblas_loaded; benchmarks may not */
    dgemm(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
