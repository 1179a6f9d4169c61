/* dense_lt.c: dense models' forward and backward products through cublasLt
 * (loaded at run time beside cuBLAS), with each device's algorithm chosen by
 * timing while the GPU opens: cublasGemmEx's own choice for these thin
 * products (a batch's rows by the n x n matrix) can leave multiprocessors
 * idle. The candidates: cublasLt's heuristic ones, and split-K (2, 4, 8,
 * partial sums added in FP32) forced on its first four, which fills the
 * machine and shortens the tensor cores' truncated sums (dense_tf32.h).
 * Every candidate's numbers are checked against GemmEx's, and its bias (the
 * mean relative error against a double product of 8 rows, which adds up
 * over a sequence's positions) may not exceed GemmEx's path's. Off unless
 * HMMRT_DENSE_LT=on: the product it wins alone lost whole steps. */
#include "dense_lt.h"
#include "hmmrt_gpu.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef cublasLtMatrixLayout_t layout_t;
typedef cublasStatus_t (*lt_create_fn)(cublasLtHandle_t *);
typedef cublasStatus_t (*desc_create_fn)(cublasLtMatmulDesc_t *, cublasComputeType_t,
                                         cudaDataType_t);
typedef cublasStatus_t (*desc_destroy_fn)(cublasLtMatmulDesc_t);
typedef cublasStatus_t (*layout_create_fn)(layout_t *, cudaDataType, uint64_t, uint64_t, int64_t);
typedef cublasStatus_t (*layout_destroy_fn)(layout_t);
typedef cublasStatus_t (*pref_create_fn)(cublasLtMatmulPreference_t *);
typedef cublasStatus_t (*pref_set_fn)(cublasLtMatmulPreference_t,
                                      cublasLtMatmulPreferenceAttributes_t, const void *, size_t);
typedef cublasStatus_t (*pref_destroy_fn)(cublasLtMatmulPreference_t);
typedef cublasStatus_t (*heuristic_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, layout_t, layout_t,
                                       layout_t, layout_t, cublasLtMatmulPreference_t, int,
                                       cublasLtMatmulHeuristicResult_t[], int *);
typedef cublasStatus_t (*check_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, layout_t, layout_t,
                                   layout_t, layout_t, const cublasLtMatmulAlgo_t *,
                                   cublasLtMatmulHeuristicResult_t *);
typedef cublasStatus_t (*config_set_fn)(cublasLtMatmulAlgo_t *, cublasLtMatmulAlgoConfigAttributes_t,
                                       const void *, size_t);
typedef cublasStatus_t (*matmul_fn)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                    const void *, layout_t, const void *, layout_t, const void *,
                                    const void *, layout_t, void *, layout_t,
                                    const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);

static struct {
    int ok; /* every function found */
    char why[160];
    lt_create_fn create;
    desc_create_fn desc_create;
    desc_destroy_fn desc_destroy;
    layout_create_fn layout_create;
    layout_destroy_fn layout_destroy;
    pref_create_fn pref_create;
    pref_set_fn pref_set;
    pref_destroy_fn pref_destroy;
    heuristic_fn heuristic;
    check_fn check;
    matmul_fn matmul;
    config_set_fn config_set; /* may be NULL: no split-K candidates */
} lt;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load(void)
{
    /* Off unless asked: its algorithm, faster alone in the tuning's timing
       (13.8 against 16.4 us on an H200), made whole forward and backward
       slower there (0.048 against 0.042 s, 0.030 against 0.023 s), and the
       tuning times the product alone, not a position's step. */
    const char *asked = getenv("HMMRT_DENSE_LT");
    if (!asked || !*asked || strcmp(asked, "off") == 0) {
        snprintf(lt.why, sizeof lt.why, "off%s; HMMRT_DENSE_LT=on tries it",
                 asked && *asked ? "" : " by default");
        return;
    }
    if (strcmp(asked, "on") != 0) {
        fprintf(stderr, "hmmrt: HMMRT_DENSE_LT=%s: expected on or off; cublasLt is left off "
                        "(GemmEx's algorithm)\n", asked);
        snprintf(lt.why, sizeof lt.why, "off: HMMRT_DENSE_LT=%.40s is neither on nor off",
                 asked);
        return;
    }
    static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so.12",
                                        "libcublasLt.so"};
    void *lib = NULL;
    for (size_t k = 0; k < sizeof names / sizeof names[0] && !lib; k++)
        lib = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(lt.why, sizeof lt.why, "no libcublasLt.so.13 or .12");
        return;
    }
    lt.create = (lt_create_fn)dlsym(lib, "cublasLtCreate");
    lt.desc_create = (desc_create_fn)dlsym(lib, "cublasLtMatmulDescCreate");
    lt.desc_destroy = (desc_destroy_fn)dlsym(lib, "cublasLtMatmulDescDestroy");
    lt.layout_create = (layout_create_fn)dlsym(lib, "cublasLtMatrixLayoutCreate");
    lt.layout_destroy = (layout_destroy_fn)dlsym(lib, "cublasLtMatrixLayoutDestroy");
    lt.pref_create = (pref_create_fn)dlsym(lib, "cublasLtMatmulPreferenceCreate");
    lt.pref_set = (pref_set_fn)dlsym(lib, "cublasLtMatmulPreferenceSetAttribute");
    lt.pref_destroy = (pref_destroy_fn)dlsym(lib, "cublasLtMatmulPreferenceDestroy");
    lt.heuristic = (heuristic_fn)dlsym(lib, "cublasLtMatmulAlgoGetHeuristic");
    lt.check = (check_fn)dlsym(lib, "cublasLtMatmulAlgoCheck");
    lt.matmul = (matmul_fn)dlsym(lib, "cublasLtMatmul");
    lt.config_set = (config_set_fn)dlsym(lib, "cublasLtMatmulAlgoConfigSetAttribute");
    lt.ok = lt.create && lt.desc_create && lt.desc_destroy && lt.layout_create &&
            lt.layout_destroy && lt.pref_create && lt.pref_set && lt.pref_destroy &&
            lt.heuristic && lt.check && lt.matmul;
    if (!lt.ok)
        snprintf(lt.why, sizeof lt.why, "libcublasLt lacks a function of cublasLtMatmul's");
}

enum { DEVICES = 64, CANDIDATES = 16, TUNE_ROWS = 1024, REPEATS = 5, BIAS_ROWS = 8,
       SPLIT_ON = 4 /* heuristic candidates split-K is forced on */ };
#define WORKSPACE_MAX ((size_t)32 << 20) /* what cuBLAS asks for on Hopper */

/* A device's tuned product (n, mode), and the layouts of the last row count
 * it ran with. */
typedef struct {
    int tuned, n, mode;
    int use; /* the algorithm beat GemmEx */
    cublasLtHandle_t handle;
    cublasLtMatmulDesc_t desc;
    layout_t a;
    cublasLtMatmulAlgo_t algo;
    size_t workspace;
    int rows, rows_ok;
    layout_t b, c;
    char said[256];
} lt_device;
static lt_device devices[DEVICES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static lt_device *this_device(void)
{
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= DEVICES) {
        cudaGetLastError();
        return NULL;
    }
    return &devices[device];
}

/* The layouts of `rows` rows (row-major rows x n: n x rows column-major), and
 * whether the algorithm takes them. Under the lock. */
static int set_rows(lt_device *d, int rows)
{
    if (d->rows == rows)
        return d->rows_ok;
    if (d->b)
        lt.layout_destroy(d->b);
    if (d->c)
        lt.layout_destroy(d->c);
    d->b = d->c = NULL;
    d->rows = rows;
    d->rows_ok = 0;
    cublasLtMatmulHeuristicResult_t result;
    if (lt.layout_create(&d->b, CUDA_R_32F, (uint64_t)d->n, (uint64_t)rows, d->n) ==
            CUBLAS_STATUS_SUCCESS &&
        lt.layout_create(&d->c, CUDA_R_32F, (uint64_t)d->n, (uint64_t)rows, d->n) ==
            CUBLAS_STATUS_SUCCESS &&
        lt.check(d->handle, d->desc, d->a, d->b, d->c, d->c, &d->algo, &result) ==
            CUBLAS_STATUS_SUCCESS &&
        result.workspaceSize <= d->workspace)
        d->rows_ok = 1;
    return d->rows_ok;
}

int hmmrt_dense_lt_product(int mode, void *stream, int rows, int n, const float *in,
                           const float *matrix, float *out, void *workspace,
                           size_t workspace_bytes)
{
    lt_device *d = this_device();
    if (!d)
        return -1;
    int status = -1;
    pthread_mutex_lock(&lock);
    if (d->use && d->n == n && d->mode == mode && d->workspace <= workspace_bytes &&
        (d->workspace == 0 || workspace) && set_rows(d, rows)) {
        const float one = 1.0f, zero = 0.0f;
        /* out' = matrix' x in' in cuBLAS's column-major terms, as cublas_dl.c's GemmEx */
        status = (int)lt.matmul(d->handle, d->desc, &one, matrix, d->a, in, d->b, &zero, out, d->c,
                                out, d->c, &d->algo, workspace, d->workspace,
                                (cudaStream_t)stream);
    }
    pthread_mutex_unlock(&lock);
    return status;
}

size_t hmmrt_dense_lt_workspace(int n)
{
    lt_device *d = this_device();
    size_t bytes = 0;
    pthread_mutex_lock(&lock);
    if (d && d->use && d->n == n)
        bytes = d->workspace;
    pthread_mutex_unlock(&lock);
    return bytes;
}

void hmmrt_dense_lt_describe(char *buf, size_t len)
{
    pthread_once(&loaded, load);
    lt_device *d = this_device();
    pthread_mutex_lock(&lock);
    if (d && d->tuned)
        snprintf(buf, len, "%s", d->said);
    else
        snprintf(buf, len, "cublasGemmEx's choice (cublasLt: %s)",
                 lt.why[0] ? lt.why : "not tuned");
    pthread_mutex_unlock(&lock);
}

/* The worst difference of got from want, each row's against its largest
 * value (the row kernel brings a row's largest value to 1): NaN on a NaN. */
static double worst_difference(const float *want, const float *got, int rows, int n)
{
    double worst = 0;
    for (int r = 0; r < rows; r++) {
        double top = 0;
        for (int j = 0; j < n; j++)
            top = fmax(top, fabs((double)want[(size_t)r * n + j]));
        for (int j = 0; j < n; j++) {
            const double e = fabs((double)got[(size_t)r * n + j] - want[(size_t)r * n + j]) /
                             (top > 0 ? top : 1);
            if (!(e <= worst))
                worst = e; /* a NaN stays */
        }
    }
    return worst;
}

/* The mean of (got - want) / want over the first BIAS_ROWS rows, want the
 * double product of the tuning's rows and matrix (row-major, n x n). */
static double bias_of(const float *got, const double *want, int n)
{
    double sum = 0;
    const size_t cells = (size_t)BIAS_ROWS * n;
    for (size_t i = 0; i < cells; i++)
        sum += ((double)got[i] - want[i]) / want[i];
    return sum / (double)cells;
}

/* Microseconds a product, the mean of REPEATS after one unmeasured; a
 * negative value where one failed. */
typedef struct {
    lt_device *d;
    const cublasLtMatmulAlgo_t *algo; /* NULL: GemmEx */
    hmmrt_dense_gemm_fn gemm;
    const float *in, *matrix;
    float *out;
    void *workspace;
    size_t workspace_bytes;
    cudaStream_t stream;
} product_run;

static int run_once(const product_run *p)
{
    if (!p->algo)
        return p->gemm(p->stream, TUNE_ROWS, p->d->n, p->in, p->matrix, p->out);
    const float one = 1.0f, zero = 0.0f;
    return (int)lt.matmul(p->d->handle, p->d->desc, &one, p->matrix, p->d->a, p->in, p->d->b,
                          &zero, p->out, p->d->c, p->out, p->d->c, p->algo, p->workspace,
                          p->workspace_bytes, p->stream);
}

static double time_product(const product_run *p, cudaEvent_t e0, cudaEvent_t e1)
{
    if (run_once(p) != 0 || cudaEventRecord(e0, p->stream) != cudaSuccess)
        return -1;
    for (int k = 0; k < REPEATS; k++)
        if (run_once(p) != 0)
            return -1;
    float ms = 0;
    if (cudaEventRecord(e1, p->stream) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ||
        cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess)
        return -1;
    return ms * 1e3 / REPEATS;
}

/* The tuning proper, on buffers made by hmmrt_dense_lt_tune. Under the lock. */
static void tune(lt_device *d, hmmrt_dense_gemm_fn gemm, const float *in, const float *matrix,
                 float *want_dev, float *got_dev, float *want, float *got, const double *exact,
                 void *workspace, cudaStream_t stream, cudaEvent_t e0, cudaEvent_t e1)
{
    const int n = d->n;
    const size_t cells = (size_t)TUNE_ROWS * n;
    product_run p = {d, NULL, gemm, in, matrix, want_dev, workspace, 0, stream};
    const double gemm_us = time_product(&p, e0, e1);
    if (gemm_us < 0 || cudaMemcpy(want, want_dev, cells * sizeof(float),
                                  cudaMemcpyDeviceToHost) != cudaSuccess) {
        snprintf(d->said, sizeof d->said, "cublasGemmEx (the tuning's GemmEx failed)");
        return;
    }
    cublasLtMatmulPreference_t pref = NULL;
    const size_t most = WORKSPACE_MAX;
    cublasLtMatmulHeuristicResult_t found[CANDIDATES + 3 * SPLIT_ON];
    int32_t forced[CANDIDATES + 3 * SPLIT_ON] = {0}; /* split-K forced on it, or 0 */
    int count = 0;
    if (lt.pref_create(&pref) != CUBLAS_STATUS_SUCCESS ||
        lt.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &most, sizeof most) !=
            CUBLAS_STATUS_SUCCESS ||
        lt.heuristic(d->handle, d->desc, d->a, d->b, d->c, d->c, pref, CANDIDATES, found,
                     &count) != CUBLAS_STATUS_SUCCESS)
        count = 0;
    if (pref)
        lt.pref_destroy(pref);
    /* split-K forced on the first candidates, its partial sums added in FP32 */
    const int heuristic = count;
    for (int i = 0; i < heuristic && i < SPLIT_ON && lt.config_set; i++)
        for (int32_t split = 2; split <= 8 && count < CANDIDATES + 3 * SPLIT_ON; split *= 2) {
            cublasLtMatmulHeuristicResult_t r = found[i];
            const uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
            if (r.state != CUBLAS_STATUS_SUCCESS ||
                lt.config_set(&r.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof split) !=
                    CUBLAS_STATUS_SUCCESS ||
                lt.config_set(&r.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme,
                              sizeof scheme) != CUBLAS_STATUS_SUCCESS ||
                lt.check(d->handle, d->desc, d->a, d->b, d->c, d->c, &r.algo, &r) !=
                    CUBLAS_STATUS_SUCCESS)
                continue;
            r.state = CUBLAS_STATUS_SUCCESS;
            forced[count] = split;
            found[count++] = r;
        }
    const double tolerance = d->mode == HMMRT_DENSE_TF32 ? 1e-2 : 1e-4;
    /* no candidate may add up to more than GemmEx's path does */
    const double gemm_bias = bias_of(want, exact, n);
    const double bias_most = fabs(gemm_bias) * 1.25 + 2e-7;
    int best = -1, wrong = 0, biased = 0, tried = 0;
    double best_us = gemm_us * 0.97; /* Lt only where it gains something */
    double fastest = -1, best_bias = 0;
    for (int i = 0; i < count; i++) {
        if (found[i].state != CUBLAS_STATUS_SUCCESS || found[i].workspaceSize > WORKSPACE_MAX)
            continue;
        tried++;
        p.algo = &found[i].algo;
        p.out = got_dev;
        p.workspace_bytes = found[i].workspaceSize;
        if (cudaMemsetAsync(got_dev, 0, cells * sizeof(float), stream) != cudaSuccess ||
            run_once(&p) != 0 || cudaStreamSynchronize(stream) != cudaSuccess ||
            cudaMemcpy(got, got_dev, cells * sizeof(float), cudaMemcpyDeviceToHost) !=
                cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        if (!(worst_difference(want, got, TUNE_ROWS, n) <= tolerance)) {
            wrong++;
            continue;
        }
        const double bias = bias_of(got, exact, n);
        if (!(fabs(bias) <= bias_most)) {
            biased++;
            continue;
        }
        const double us = time_product(&p, e0, e1);
        cudaGetLastError();
        if (us < 0)
            continue;
        if (fastest < 0 || us < fastest)
            fastest = us;
        if (us < best_us) {
            best_us = us;
            best = i;
            best_bias = bias;
        }
    }
    if (best >= 0) {
        char split[32] = "";
        if (forced[best])
            snprintf(split, sizeof split, ", split-K %d", (int)forced[best]);
        d->use = 1;
        d->algo = found[best].algo;
        d->workspace = found[best].workspaceSize;
        snprintf(d->said, sizeof d->said,
                 "cublasLt's algorithm %d of %d%s: %.1f us a product of %d rows, bias %.2g; "
                 "GemmEx's path %.1f us, bias %.2g%s%s",
                 best + 1, tried, split, best_us, TUNE_ROWS, best_bias, gemm_us, gemm_bias,
                 wrong ? " (some disagreed with GemmEx: left out)" : "",
                 biased ? " (some more biased: left out)" : "");
    } else {
        snprintf(d->said, sizeof d->said,
                 "cublasGemmEx's path: %.1f us a product of %d rows, bias %.2g (cublasLt's best "
                 "of %d: %.1f us%s%s)",
                 gemm_us, TUNE_ROWS, gemm_bias, tried, fastest, wrong ? "; some disagreed" : "",
                 biased ? "; some more biased" : "");
    }
}

void hmmrt_dense_lt_tune(int n, int mode, hmmrt_dense_gemm_fn gemm)
{
    pthread_once(&loaded, load);
    lt_device *d = this_device();
    if (!lt.ok || !d || n <= 0)
        return;
    pthread_mutex_lock(&lock);
    if (d->tuned && d->n == n && d->mode == mode) {
        pthread_mutex_unlock(&lock);
        return;
    }
    if (d->b)
        lt.layout_destroy(d->b);
    if (d->c)
        lt.layout_destroy(d->c);
    if (d->a)
        lt.layout_destroy(d->a);
    if (d->desc)
        lt.desc_destroy(d->desc);
    d->a = d->b = d->c = NULL;
    d->desc = NULL;
    d->tuned = 1;
    d->use = 0;
    d->n = n;
    d->mode = mode;
    d->rows = -1;
    d->workspace = 0;
    snprintf(d->said, sizeof d->said, "cublasGemmEx (cublasLt could not be set up)");
    const size_t nn = (size_t)n * n, cells = (size_t)TUNE_ROWS * n;
    float *host = malloc(sizeof(float) * (nn + 3 * cells));
    float *dev = NULL;
    void *workspace = NULL;
    cudaStream_t stream = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    int ready = host && (d->handle || lt.create(&d->handle) == CUBLAS_STATUS_SUCCESS) &&
                lt.desc_create(&d->desc,
                               mode == HMMRT_DENSE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                        : CUBLAS_COMPUTE_32F,
                               CUDA_R_32F) == CUBLAS_STATUS_SUCCESS &&
                lt.layout_create(&d->a, CUDA_R_32F, (uint64_t)n, (uint64_t)n, n) ==
                    CUBLAS_STATUS_SUCCESS &&
                lt.layout_create(&d->b, CUDA_R_32F, (uint64_t)n, TUNE_ROWS, n) ==
                    CUBLAS_STATUS_SUCCESS &&
                lt.layout_create(&d->c, CUDA_R_32F, (uint64_t)n, TUNE_ROWS, n) ==
                    CUBLAS_STATUS_SUCCESS &&
                cudaMalloc((void **)&dev, sizeof(float) * (nn + 3 * cells)) == cudaSuccess &&
                cudaMalloc(&workspace, WORKSPACE_MAX) == cudaSuccess &&
                cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess &&
                cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess;
    if (ready) {
        /* a random row-stochastic-like matrix and rows in (0, 1], as a dense
           model's (the check must see every entry matter) */
        uint64_t x = 0x9e3779b97f4a7c15ull;
        for (size_t i = 0; i < nn + cells; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            const float u = (float)((x >> 40) + 1) / (float)(1 << 24);
            host[i] = i < nn ? 2.0f * u / (float)n : u;
        }
        ready = cudaMemcpy(dev, host, sizeof(float) * (nn + cells), cudaMemcpyHostToDevice) ==
                cudaSuccess;
    }
    double *exact = ready ? calloc((size_t)BIAS_ROWS * n, sizeof(double)) : NULL;
    if (exact) { /* the first rows' product in double, for the candidates' bias */
        for (int r = 0; r < BIAS_ROWS; r++)
            for (int k = 0; k < n; k++) {
                const double x = host[nn + (size_t)r * n + k];
                for (int j = 0; j < n; j++)
                    exact[(size_t)r * n + j] += x * host[(size_t)k * n + j];
            }
        tune(d, gemm, dev + nn, dev, dev + nn + cells, dev + nn + 2 * cells, host + nn + cells,
             host + nn + 2 * cells, exact, workspace, stream, e0, e1);
    }
    free(exact);
    d->rows = TUNE_ROWS;
    d->rows_ok = d->use;
    cudaGetLastError();
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    if (stream)
        cudaStreamDestroy(stream);
    cudaFree(workspace);
    cudaFree(dev);
    cudaGetLastError();
    free(host);
    pthread_mutex_unlock(&lock);
}
