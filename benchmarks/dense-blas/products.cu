// products.cu: issue 25's micro-benchmark of one dense position's product
// (rows x n by n x n, row-major floats, as runtime/gpu/cublas_dl.c calls it)
// through each candidate: GemmEx in FP32, TF32 in one product and in chunks
// of states, TF32 x 2 (the matrix as hi + lo), cublasLt's heuristic
// algorithms (tile, split-K, stages printed) and split-K forced on the best,
// two half-batches on two streams, and a strided-batched split-K with its
// partial sums added by a kernel. Each: microseconds a product (the mean of
// REPS after a warm-up) and its error against a double product on the host:
// the mean signed relative error (the bias that accumulates over positions)
// and the worst. Built and run by benchmarks/dense-blas/products-run.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "gpu/dense_tf32.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "products: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum { REPS = 20 };

static int n, rows;
static float *d_in, *d_m, *d_hi, *d_lo, *d_out, *d_parts;
static std::vector<float> h_in, h_m;
static std::vector<double> ref; // the double product of the first ref_rows rows
static int ref_rows;
static cublasHandle_t h;

// out (+)= in[:, k0:k1) x m[k0:k1, :], row-major (cuBLAS: out' = m' x in')
static cublasStatus_t part(cudaStream_t s, int tf32, int r0, int nrows, int k0, int k1,
                           const float *m, float beta)
{
    const float one = 1.0f;
    cublasSetStream(h, s);
    return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, nrows, k1 - k0, &one, m + (size_t)k0 * n,
                        CUDA_R_32F, n, d_in + (size_t)r0 * n + k0, CUDA_R_32F, n, &beta,
                        d_out + (size_t)r0 * n, CUDA_R_32F, n,
                        tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT);
}

static void chunked(cudaStream_t s, int chunks, int passes)
{
    const float *ms[2] = {passes == 2 ? d_lo : d_m, d_hi};
    float beta = 0.0f;
    for (int p = 0; p < passes; p++)
        for (int c = 0; c < chunks; c++) {
            part(s, 1, 0, rows, hmmrt_dense_chunk_first(n, chunks, c),
                 hmmrt_dense_chunk_first(n, chunks, c + 1), ms[p], beta);
            beta = 1.0f;
        }
}

__global__ void add_parts(int64_t cells, int parts, const float *__restrict__ in,
                          float *__restrict__ out)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < cells;
         i += (int64_t)gridDim.x * blockDim.x) {
        float v = in[i];
        for (int p = 1; p < parts; p++)
            v += in[(size_t)p * cells + i];
        out[i] = v;
    }
}

// S equal chunks of k as one strided-batched product into S partial outputs,
// added by add_parts (the runtime would fold that into its row step)
static void strided(cudaStream_t s, int S, int tf32)
{
    const float one = 1.0f, zero = 0.0f;
    const int c = n / S;
    cublasSetStream(h, s);
    cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, rows, c, &one, d_m, CUDA_R_32F, n,
                               (long long)c * n, d_in, CUDA_R_32F, n, c, &zero, d_parts,
                               CUDA_R_32F, n, (long long)rows * n, S,
                               tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT);
    const int64_t cells = (int64_t)rows * n;
    add_parts<<<1024, 256, 0, s>>>(cells, S, d_parts, d_out);
}

// cublasLt
static cublasLtHandle_t lt;
static cublasLtMatmulDesc_t desc_tf32;
static cublasLtMatrixLayout_t la, lb, lc;
static void *d_ws;
static const size_t WS = (size_t)64 << 20;

static void lt_run(cudaStream_t s, const cublasLtMatmulAlgo_t *algo, size_t ws, int *failed)
{
    const float one = 1.0f, zero = 0.0f;
    if (cublasLtMatmul(lt, desc_tf32, &one, d_m, la, d_in, lb, &zero, d_out, lc, d_out, lc, algo,
                       d_ws, ws, s) != CUBLAS_STATUS_SUCCESS)
        *failed = 1;
}

static void report(const char *name, double us)
{
    std::vector<float> got((size_t)ref_rows * n);
    CHECK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
    double mean = 0, worst = 0;
    for (size_t i = 0; i < got.size(); i++) {
        const double e = ((double)got[i] - ref[i]) / ref[i];
        mean += e;
        worst = fmax(worst, fabs(e));
    }
    mean /= (double)got.size();
    printf("%-44s %9.2f us  %7.2f TFLOPS  bias %+9.2e  worst %8.2e\n", name, us,
           2.0 * rows * (double)n * n / (us * 1e-6) / 1e12, mean, worst);
    fflush(stdout);
}

template <typename F> static double time_it(F f)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    f();
    CHECK(cudaDeviceSynchronize());
    cudaEventRecord(a, 0);
    for (int r = 0; r < REPS; r++)
        f();
    cudaEventRecord(b, 0);
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms * 1e3 / REPS;
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atoi(argv[1]) : 1024;
    rows = argc > 2 ? atoi(argv[2]) : 1000;
    if (n < 16 || rows < 2) {
        fprintf(stderr, "usage: products [N [ROWS]] (N >= 16 states, ROWS >= 2)\n");
        return 2;
    }
    // a dense random model's matrix (rows summing to about 1) and rows in (0, 1]
    uint64_t x = 0x9e3779b97f4a7c15ull;
    h_in.resize((size_t)rows * n);
    h_m.resize((size_t)n * n);
    for (auto *v : {&h_m, &h_in})
        for (size_t i = 0; i < v->size(); i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            const double u = ((double)(x >> 11) + 0.5) / 9007199254740992.0;
            (*v)[i] = v == &h_m ? (float)(-log(u) / n) : (float)u;
        }
    ref_rows = rows < 100 ? rows : 100; // the host's double product is slow at 6,000 states
    ref.assign((size_t)ref_rows * n, 0.0);
    {
        std::vector<double> acc(n);
        for (int r = 0; r < ref_rows; r++) {
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int k = 0; k < n; k++) {
                const double a = h_in[(size_t)r * n + k];
                const float *m = &h_m[(size_t)k * n];
                for (int j = 0; j < n; j++)
                    acc[j] += a * m[j];
            }
            std::copy(acc.begin(), acc.end(), ref.begin() + (size_t)r * n);
        }
    }
    std::vector<float> hi(h_m.size()), lo(h_m.size());
    for (size_t i = 0; i < h_m.size(); i++)
        hmmrt_tf32_split(h_m[i], &hi[i], &lo[i]);
    const int S_MOST = 8;
    CHECK(cudaMalloc(&d_in, h_in.size() * 4));
    CHECK(cudaMalloc(&d_m, h_m.size() * 4));
    CHECK(cudaMalloc(&d_hi, h_m.size() * 4));
    CHECK(cudaMalloc(&d_lo, h_m.size() * 4));
    CHECK(cudaMalloc(&d_out, h_in.size() * 4));
    CHECK(cudaMalloc(&d_parts, h_in.size() * 4 * S_MOST));
    CHECK(cudaMalloc(&d_ws, WS));
    CHECK(cudaMemcpy(d_in, h_in.data(), h_in.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_m, h_m.data(), h_m.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_hi, hi.data(), h_m.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_lo, lo.data(), h_m.size() * 4, cudaMemcpyHostToDevice));
    cublasCreate(&h);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    printf("# products: %s, %d SMs; %d rows x %d states by %d x %d; %.2f GFLOP a product; "
           "mean of %d; errors over the first %d rows\n",
           prop.name, prop.multiProcessorCount, rows, n, n, n, 2.0 * rows * n * (double)n / 1e9,
           REPS, ref_rows);
    cudaStream_t s0 = 0, s1, s2;
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    char name[128];

    report("gemmex fp32", time_it([&] { part(s0, 0, 0, rows, 0, n, d_m, 0.0f); }));
    report("gemmex tf32, one product", time_it([&] { part(s0, 1, 0, rows, 0, n, d_m, 0.0f); }));
    for (int c : {2, 4, 8}) {
        if (n / c < 64)
            continue;
        snprintf(name, sizeof name, "gemmex tf32, %d chunks of %d", c, n / c);
        report(name, time_it([&] { chunked(s0, c, 1); }));
    }
    snprintf(name, sizeof name, "runtime's tf32 (%d chunks)", hmmrt_dense_chunks(n));
    report(name, time_it([&] { chunked(s0, hmmrt_dense_chunks(n), 1); }));
    snprintf(name, sizeof name, "runtime's tf32x2 (hi + lo, %d chunks)", hmmrt_dense_chunks(n));
    report(name, time_it([&] { chunked(s0, hmmrt_dense_chunks(n), 2); }));
    report("tf32, two half-batches on two streams", time_it([&] {
               cudaEvent_t go;
               cudaEventCreateWithFlags(&go, cudaEventDisableTiming);
               cudaEventRecord(go, 0);
               cudaStreamWaitEvent(s1, go, 0);
               cudaStreamWaitEvent(s2, go, 0);
               part(s1, 1, 0, rows / 2, 0, n, d_m, 0.0f);
               part(s2, 1, rows / 2, rows - rows / 2, 0, n, d_m, 0.0f);
               cudaEvent_t d1, d2;
               cudaEventCreateWithFlags(&d1, cudaEventDisableTiming);
               cudaEventCreateWithFlags(&d2, cudaEventDisableTiming);
               cudaEventRecord(d1, s1);
               cudaEventRecord(d2, s2);
               cudaStreamWaitEvent(0, d1, 0);
               cudaStreamWaitEvent(0, d2, 0);
               cudaEventDestroy(go);
               cudaEventDestroy(d1);
               cudaEventDestroy(d2);
           }));
    for (int S : {2, 4, 8}) {
        if (n % S || n / S < 64)
            continue;
        snprintf(name, sizeof name, "tf32 strided split-K %d + add kernel", S);
        report(name, time_it([&] { strided(s0, S, 1); }));
    }

    // cublasLt: every heuristic candidate, then split-K forced on the first
    cublasLtCreate(&lt);
    cublasLtMatmulDescCreate(&desc_tf32, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F);
    cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, n, n, n);
    cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, n, rows, n);
    cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, n, rows, n);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    size_t ws = WS;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                         sizeof ws);
    cublasLtMatmulHeuristicResult_t found[32];
    int count = 0;
    cublasLtMatmulAlgoGetHeuristic(lt, desc_tf32, la, lb, lc, lc, pref, 32, found, &count);
    for (int i = 0; i < count; i++) {
        if (found[i].state != CUBLAS_STATUS_SUCCESS)
            continue;
        int tile = -1, splitk = -1, stages = -1;
        size_t got = 0;
        cublasLtMatmulAlgoConfigGetAttribute(&found[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                             sizeof tile, &got);
        cublasLtMatmulAlgoConfigGetAttribute(&found[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM,
                                             &splitk, sizeof splitk, &got);
        cublasLtMatmulAlgoConfigGetAttribute(&found[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID,
                                             &stages, sizeof stages, &got);
        int failed = 0;
        const double us =
            time_it([&] { lt_run(s0, &found[i].algo, found[i].workspaceSize, &failed); });
        snprintf(name, sizeof name, "lt tf32 #%d (tile %d, split-K %d, stages %d)%s", i + 1, tile,
                 splitk, stages, failed ? " FAILED" : "");
        report(name, us);
    }
    if (count > 0) {
        for (int S : {2, 3, 4, 8}) {
            cublasLtMatmulAlgo_t algo = found[0].algo;
            uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
            cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &S,
                                                 sizeof S);
            cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                                 &scheme, sizeof scheme);
            cublasLtMatmulHeuristicResult_t checked;
            if (cublasLtMatmulAlgoCheck(lt, desc_tf32, la, lb, lc, lc, &algo, &checked) !=
                    CUBLAS_STATUS_SUCCESS ||
                checked.workspaceSize > WS) {
                printf("lt tf32 #1 with split-K %d: not taken\n", S);
                continue;
            }
            int failed = 0;
            const double us =
                time_it([&] { lt_run(s0, &algo, checked.workspaceSize, &failed); });
            snprintf(name, sizeof name, "lt tf32 #1, split-K %d forced%s", S,
                     failed ? " FAILED" : "");
            report(name, us);
        }
    }
    printf("# bias: the mean of (got - double) / double over every output: it adds up over a "
           "sequence's positions (1,000 positions x 1.4e-5 is the float contract's budget for "
           "1,000 DNA symbols)\n");
    return 0;
}
