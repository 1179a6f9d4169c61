/* cublas_dl.c: cuBLAS for the forward and backward products of dense models
 * (hmmrt_dense.cuh), loaded at run time (dlopen) the first time a dense call
 * asks: a program starts on a machine without cuBLAS, and there keeps
 * libhmmrt's tiled products. HMMRT_DENSE_PRODUCT picks the product: tf32
 * (tensor cores, in chunks of states: dense_tf32.h; the default), tf32x2
 * (the matrix in two TF32 parts: two passes), fp32 (cuBLAS on the CUDA
 * cores) or tiles; unnamed, dense_choice.c picks tf32 or tf32x2 by the
 * model. HMMRT_DENSE_GRAPH: whether its launches are replayed as CUDA graphs. */
#include "hmmrt_gpu.h"
#include "dense_choice.h"
#include "dense_lt.h"
#include "dense_tf32.h"

#include <cublas_v2.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef cublasStatus_t (*create_fn)(cublasHandle_t *);
typedef cublasStatus_t (*set_stream_fn)(cublasHandle_t, cudaStream_t);
typedef cublasStatus_t (*gemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                  int, const void *, const void *, cudaDataType, int, const void *,
                                  cudaDataType, int, const void *, void *, cudaDataType, int,
                                  cublasComputeType_t, cublasGemmAlgo_t);

static struct {
    int mode;   /* HMMRT_DENSE_TILES, _TF32 or _FP32 */
    int forced; /* HMMRT_DENSE_PRODUCT named it */
    create_fn create;
    set_stream_fn set_stream;
    gemm_fn gemm;
    char why[256]; /* why the tiles, when cuBLAS was asked for and not found */
} blas;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

static void load(void)
{
    const char *asked = getenv("HMMRT_DENSE_PRODUCT");
    int mode = HMMRT_DENSE_TF32;
    if (asked && strcmp(asked, "tiles") == 0)
        mode = HMMRT_DENSE_TILES;
    else if (asked && strcmp(asked, "fp32") == 0)
        mode = HMMRT_DENSE_FP32;
    else if (asked && strcmp(asked, "tf32x2") == 0)
        mode = HMMRT_DENSE_TF32X2;
    else if (asked && *asked && strcmp(asked, "tf32") != 0)
        fprintf(stderr, "hmmrt: HMMRT_DENSE_PRODUCT=%s: expected tf32, tf32x2, fp32 or tiles; "
                        "the dense products are chosen as if it were unset\n", asked);
    blas.forced = asked && (strcmp(asked, "tf32") == 0 || mode != HMMRT_DENSE_TF32);
    blas.mode = HMMRT_DENSE_TILES;
    if (mode == HMMRT_DENSE_TILES)
        return;
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    void *lib = NULL;
    for (size_t k = 0; k < sizeof names / sizeof names[0] && !lib; k++)
        lib = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(blas.why, sizeof blas.why, "no libcublas.so.13 or .12 (%s)", dlerror());
        return;
    }
    blas.create = (create_fn)dlsym(lib, "cublasCreate_v2");
    blas.set_stream = (set_stream_fn)dlsym(lib, "cublasSetStream_v2");
    blas.gemm = (gemm_fn)dlsym(lib, "cublasGemmEx");
    if (!blas.create || !blas.set_stream || !blas.gemm) {
        snprintf(blas.why, sizeof blas.why, "libcublas lacks cublasGemmEx");
        return; /* the library stays loaded: unloading buys nothing */
    }
    blas.mode = mode;
}

int hmmrt_dense_product_mode(const char **why)
{
    pthread_once(&loaded, load);
    if (why)
        *why = blas.why[0] ? blas.why : NULL;
    return blas.mode;
}

int hmmrt_dense_product_forced(void)
{
    pthread_once(&loaded, load);
    return blas.forced;
}

/* TF32's error grows with the length of the products' sums: on an H200
 * (2026-11-26, benchmarks/dense-blas/side-by-side, 1,000 x 1,000 DNA) the
 * worst score was 0.29 of the float contract's tolerance at 256 states, 0.58
 * at 1,024 and 2.2 at 4,096 (every sequence over): the tensor cores' sums
 * drop bits (tests/unit/test_dense_tf32.c models it: 0.61 and 1.9). So a
 * TF32 product over more than HMMRT_DENSE_TF32_CHUNK states sums chunks of
 * states, each from zero (dense_tf32.h; emulated: 0.47 at 4,096). */
int hmmrt_dense_product_mode_for(int n, const char **why)
{
    int mode = hmmrt_dense_product_mode(why);
    if ((mode == HMMRT_DENSE_TF32 || mode == HMMRT_DENSE_TF32X2) &&
        hmmrt_dense_product_chunks(n) > 1 &&
        why && !*why)
        *why = "TF32 sums chunks of states: the tensor cores' sums drop bits "
               "as they grow (docs/program.md)";
    return mode;
}

/* One handle per device (a handle belongs to the device current when it was
 * made): a process scoring on several GPUs (--devices) has one for each. */
enum { MAX_HANDLES = 64 };
static cublasHandle_t handles[MAX_HANDLES];
static pthread_mutex_t making = PTHREAD_MUTEX_INITIALIZER;

void *hmmrt_cublas_handle(void)
{
    int device = 0;
    if (hmmrt_dense_product_mode(NULL) == HMMRT_DENSE_TILES ||
        cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= MAX_HANDLES)
        return NULL;
    pthread_mutex_lock(&making);
    if (!handles[device] && blas.create(&handles[device]) != CUBLAS_STATUS_SUCCESS) {
        handles[device] = NULL;
        blas.mode = HMMRT_DENSE_TILES;
        snprintf(blas.why, sizeof blas.why, "cublasCreate failed");
    }
    cublasHandle_t h = handles[device];
    pthread_mutex_unlock(&making);
    return h;
}

static int chunk_states = -1; /* HMMRT_DENSE_CHUNK: -1 unset, 0 one product */
static pthread_once_t chunk_read = PTHREAD_ONCE_INIT;

static void read_chunk(void)
{
    const char *asked = getenv("HMMRT_DENSE_CHUNK");
    char *end = NULL;
    if (!asked || !*asked)
        return;
    const long v = strtol(asked, &end, 10);
    if (*end || v < 0 || v > 1 << 30)
        fprintf(stderr, "hmmrt: HMMRT_DENSE_CHUNK=%s: expected a count of states (0: one "
                        "product); chunks of at most %d states are summed\n",
                asked, (int)HMMRT_DENSE_TF32_CHUNK);
    else
        chunk_states = (int)v;
}

int hmmrt_dense_product_chunks(int n)
{
    pthread_once(&chunk_read, read_chunk);
    if (chunk_states < 0)
        return hmmrt_dense_chunks(n);
    if (chunk_states == 0 || chunk_states >= n)
        return 1;
    return (n + chunk_states - 1) / chunk_states;
}

/* out (+)= in[:, k0:k1) x matrix[k0:k1, :] through cublasGemmEx (cuBLAS's
 * own choice of algorithm), row-major as hmmrt_cublas_rows_product; beta 0
 * or 1 (add to out). */
static cublasStatus_t gemm_part(cublasHandle_t h, int tf32, int rows, int n, int k0, int k1,
                                const float *in, const float *matrix, float *out, float beta)
{
    const float one = 1.0f;
    return blas.gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, rows, k1 - k0, &one, matrix + (size_t)k0 * n,
                     CUDA_R_32F, n, in + k0, CUDA_R_32F, n, &beta, out, CUDA_R_32F, n,
                     tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT);
}

/* The product in a mode through GemmEx: FP32 in one call; TF32 in chunks of
 * states (dense_tf32.h), each summed from zero and added by the epilogue
 * (rounded to nearest); TF32X2 the same over lo, then hi (small parts
 * first). */
static int gemm_mode(void *handle, void *stream, int mode, int rows, int n, const float *in,
                     const float *matrix, const float *hi, const float *lo, float *out)
{
    cublasHandle_t h = (cublasHandle_t)handle;
    cublasStatus_t s = blas.set_stream(h, (cudaStream_t)stream);
    if (s != CUBLAS_STATUS_SUCCESS)
        return (int)s;
    if (mode != HMMRT_DENSE_TF32 && mode != HMMRT_DENSE_TF32X2)
        return (int)gemm_part(h, 0, rows, n, 0, n, in, matrix, out, 0.0f);
    const float *passes[2] = {matrix, NULL};
    if (mode == HMMRT_DENSE_TF32X2 && hi && lo)
        passes[0] = lo, passes[1] = hi;
    const int chunks = hmmrt_dense_product_chunks(n);
    float beta = 0.0f;
    for (int p = 0; p < 2 && passes[p] && s == CUBLAS_STATUS_SUCCESS; p++)
        for (int c = 0; c < chunks && s == CUBLAS_STATUS_SUCCESS; c++) {
            s = gemm_part(h, 1, rows, n, hmmrt_dense_chunk_first(n, chunks, c),
                          hmmrt_dense_chunk_first(n, chunks, c + 1), in, passes[p], out, beta);
            beta = 1.0f;
        }
    return (int)s;
}

static int hmmrt_cublas_rows_product_ex(void *handle, void *stream, int rows, int n,
                                        const float *in, const float *matrix, float *out)
{
    return gemm_mode(handle, stream, hmmrt_dense_product_mode_for(n, NULL), rows, n, in, matrix,
                     NULL, NULL, out);
}

/* out = in x matrix, rows x n by n x n, all row-major floats on the device:
 * in cuBLAS's column-major terms out' = matrix' x in'. In one product,
 * through cublasLt's algorithm where the GPU's opening tuned one
 * (dense_lt.c; FP32 and TF32), else through GemmEx, in chunks or passes
 * (TF32 over more than HMMRT_DENSE_TF32_CHUNK states, TF32X2). 0, or
 * cuBLAS's status. */
int hmmrt_cublas_dense_product(void *handle, void *stream, int mode, int rows, int n,
                               const float *in, const float *matrix, const float *hi,
                               const float *lo, float *out, void *workspace,
                               size_t workspace_bytes)
{
    /* cublasLt's tuned algorithm stands for the chunks too: the tuning took it
       only where its bias is no larger than theirs (dense_lt.c) */
    if (mode == HMMRT_DENSE_FP32 || mode == HMMRT_DENSE_TF32) {
        const int through_lt = hmmrt_dense_lt_product(mode, stream, rows, n, in, matrix, out,
                                                      workspace, workspace_bytes);
        if (through_lt >= 0)
            return through_lt;
    }
    return gemm_mode(handle, stream, mode, rows, n, in, matrix, hi, lo, out);
}

int hmmrt_cublas_rows_product(void *handle, void *stream, int rows, int n, const float *in,
                              const float *matrix, float *out, void *workspace,
                              size_t workspace_bytes)
{
    return hmmrt_cublas_dense_product(handle, stream, hmmrt_dense_product_mode_for(n, NULL), rows,
                                      n, in, matrix, NULL, NULL, out, workspace, workspace_bytes);
}

/* CUDA graphs for the products through cuBLAS (hmmrt_dense.cuh's
 * hmmc_dense_graph_positions): HMMRT_DENSE_GRAPH=on (the default) or off;
 * off also for the rest of the process after a capture fails. cuBLAS (12.2
 * and later) allocates a captured GemmEx's workspace in the graph itself;
 * cublasLt's is the chunk's (hmmrt_cublas_workspace), allocated in the
 * stream's order, since the streams of a device run at once. */
static struct {
    int on;
    char why[160]; /* why not */
} graphs;
static pthread_once_t graphs_read = PTHREAD_ONCE_INIT;
static pthread_mutex_t graphs_lock = PTHREAD_MUTEX_INITIALIZER;

static void read_graphs(void)
{
    const char *asked = getenv("HMMRT_DENSE_GRAPH");
    graphs.on = 1;
    if (asked && strcmp(asked, "off") == 0) {
        graphs.on = 0;
        snprintf(graphs.why, sizeof graphs.why, "HMMRT_DENSE_GRAPH=off");
    } else if (asked && *asked && strcmp(asked, "on") != 0) {
        fprintf(stderr, "hmmrt: HMMRT_DENSE_GRAPH=%s: expected on or off; the dense products "
                        "run as CUDA graphs (on)\n", asked);
    }
}

int hmmrt_dense_graphs(const char **why)
{
    pthread_once(&graphs_read, read_graphs);
    pthread_mutex_lock(&graphs_lock);
    const int on = graphs.on;
    if (why)
        *why = graphs.why;
    pthread_mutex_unlock(&graphs_lock);
    return on;
}

void hmmrt_dense_graphs_failed(const char *what)
{
    pthread_once(&graphs_read, read_graphs);
    pthread_mutex_lock(&graphs_lock);
    if (graphs.on)
        snprintf(graphs.why, sizeof graphs.why, "a capture failed: %s", what);
    graphs.on = 0;
    pthread_mutex_unlock(&graphs_lock);
}

/* GemmEx's product on the current device's handle (dense_lt.c times it). */
static int gemm_ex(void *stream, int rows, int n, const float *in, const float *matrix,
                   float *out)
{
    void *h = hmmrt_cublas_handle();
    return h ? hmmrt_cublas_rows_product_ex(h, stream, rows, n, in, matrix, out) : -1;
}

/* c = a' x b in cuBLAS's column-major terms (a: k x m, b: k x n, c: m x n;
 * in row-major terms c[n][m] = b[n][k] x a[m][k]'), FP32 on the CUDA cores
 * whatever HMMRT_DENSE_PRODUCT says: the emission pass over real
 * observations (runtime/gpu/real_gpu.c). 0, or cuBLAS's status. */
int hmmrt_cublas_sgemm_tn(void *handle, void *stream, int m, int n, int k, const float *a,
                          const float *b, float *c)
{
    cublasHandle_t h = (cublasHandle_t)handle;
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t s = blas.set_stream(h, (cudaStream_t)stream);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = blas.gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a, CUDA_R_32F, k, b, CUDA_R_32F,
                      k, &zero, c, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return (int)s;
}

/* The same product on the tensor cores (TF32 inputs, FP32 accumulation):
 * the emission pass's split products (runtime/gpu/real_gpu.c), whose
 * operands are already rounded to TF32 so that nothing more is lost in
 * the tensor cores. 0, or cuBLAS's status. */
/* HMMRT_REAL_TF32_KCHUNK=S: the TF32 product of real observations sums its k
 * features in pieces of at most S, each from zero, added by the epilogue
 * (rounded to nearest), as dense models' chunks of states do (the tensor
 * cores' own sums drop bits as they grow). Default 1,024: gmm-bench's 2,112
 * features (TF32 x 3) as three products of 704 put its 8 checked utterances
 * at 0.18 of the float contract's tolerance, one product at up to 0.83 (H200,
 * 2026-11-26); 0: one product. */
static int real_chunk = 1024;
static pthread_once_t real_chunk_read = PTHREAD_ONCE_INIT;

static void read_real_chunk(void)
{
    const char *asked = getenv("HMMRT_REAL_TF32_KCHUNK");
    char *end = NULL;
    if (!asked || !*asked)
        return;
    const long v = strtol(asked, &end, 10);
    if (*end || v < 0 || v > 1 << 30)
        fprintf(stderr, "hmmrt: HMMRT_REAL_TF32_KCHUNK=%s: expected a count of features (0: one "
                        "product); pieces of at most %d are summed\n",
                asked, real_chunk);
    else
        real_chunk = (int)v;
}

static int real_kchunk(void)
{
    pthread_once(&real_chunk_read, read_real_chunk);
    return real_chunk;
}

int hmmrt_cublas_tf32_tn(void *handle, void *stream, int m, int n, int k, const float *a,
                         const float *b, float *c)
{
    cublasHandle_t h = (cublasHandle_t)handle;
    const float one = 1.0f, zero = 0.0f;
    const int chunk = real_kchunk();
    const int pieces = chunk > 0 && k > chunk ? (k + chunk - 1) / chunk : 1;
    cublasStatus_t s = blas.set_stream(h, (cudaStream_t)stream);
    for (int i = 0; i < pieces && s == CUBLAS_STATUS_SUCCESS; i++) {
        const int k0 = (int)((int64_t)k * i / pieces), k1 = (int)((int64_t)k * (i + 1) / pieces);
        s = blas.gemm(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k1 - k0, &one, a + k0, CUDA_R_32F, k,
                      b + k0, CUDA_R_32F, k, i ? &one : &zero, c, CUDA_R_32F, m,
                      CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
    }
    return (int)s;
}

void hmmrt_cublas_warm(int n)
{
    enum { ROWS = 1024 }; /* the product of a batch's first positions */
    void *h = hmmrt_cublas_handle();
    float *scratch = NULL;
    size_t floats = (size_t)n * n + 2 * (size_t)ROWS * n;
    if (!h || cudaMalloc((void **)&scratch, floats * sizeof(float)) != cudaSuccess) {
        cudaGetLastError();
        return; /* the first product pays it instead */
    }
    cudaMemset(scratch, 0, floats * sizeof(float));
    gemm_ex(NULL, ROWS, n, scratch + (size_t)n * n, scratch,
            scratch + (size_t)n * n + (size_t)ROWS * n);
    cudaDeviceSynchronize();
    cudaFree(scratch);
    cudaGetLastError();
    /* and cublasLt's algorithms, timed */
    hmmrt_dense_lt_tune(n, hmmrt_dense_product_mode_for(n, NULL), gemm_ex);
}

size_t hmmrt_cublas_workspace(int n)
{
    return hmmrt_dense_lt_workspace(n);
}

void hmmrt_cublas_describe(char *buf, size_t len)
{
    hmmrt_dense_lt_describe(buf, len);
}
