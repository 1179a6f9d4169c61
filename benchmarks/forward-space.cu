// forward-space.cu: measures the two ways of keeping forward's numbers in
// single precision on the GPU that issue 3 asks to compare, on the casino
// (two emitting states), with the layout hmmc's thread-per-sequence kernels
// use (a thread a sequence, residues read 16 at a time):
//   scaled: probabilities, the column multiplied by a power of two when its
//           sum falls low (exact), the exponents counted (what hmmc does);
//   log:    natural logs, every sum a log-add, max + log1p(exp(-|a - b|)),
//           with the accurate library functions and with the fast intrinsics.
// Prints each kernel's time, symbols per second, and its largest difference
// from a double-precision scaled forward of the same sequences.
//   nvcc -O3 -arch=sm_90 benchmarks/forward-space.cu -o /tmp/forward-space
//   /tmp/forward-space [SEQUENCES] [LENGTH]      (default 1,000,000 x 1,000)
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                   \
    do {                                                                              \
        cudaError_t e_ = (call);                                                      \
        if (e_ != cudaSuccess) {                                                      \
            fprintf(stderr, "forward-space: %s: %s\n", #call, cudaGetErrorString(e_)); \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

// the casino: fair -> fair 0.95, fair -> loaded 0.05, loaded -> loaded
// 0.97999, loaded -> fair 0.02, loaded -> end 0.00001; start -> fair 1
__constant__ float c_emit[2][6];  // probabilities
__constant__ float c_lemit[2][6]; // logs

// Random dice throws, one byte each, from a hash of (sequence, position).
__global__ void make_sequences(uint8_t *codes, int64_t n, int stride)
{
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n * stride)
        return;
    uint64_t z = (uint64_t)i * 0x9e3779b97f4a7c15ull + 12345;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    codes[i] = (uint8_t)((z ^ (z >> 31)) % 6);
}

template <typename real>
__global__ void forward_scaled(const uint8_t *codes, int64_t n, int length, double *scores)
{
    int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s >= n)
        return;
    const uint4 *in = (const uint4 *)(codes + s * ((length + 15) / 16 * 16));
    real f = 0, l = 0;
    int exponent = 0;
    bool first = true;
    for (int i = 0; i < length; i += 16) {
        uint4 piece = in[i / 16];
        const uint8_t *x = (const uint8_t *)&piece;
        for (int k = 0; k < 16 && i + k < length; k++) {
            const int c = x[k];
            real nf, nl;
            if (first) {
                nf = c_emit[0][c];
                nl = 0;
                first = false;
            } else {
                nf = (f * (real)0.95 + l * (real)0.02) * (real)c_emit[0][c];
                nl = (f * (real)0.05 + l * (real)0.97999) * (real)c_emit[1][c];
            }
            f = nf;
            l = nl;
            if (f + l < (real)0x1p-64) { // exact: a power of two
                f *= (real)0x1p64;
                l *= (real)0x1p64;
                exponent -= 64;
            }
        }
    }
    scores[s] = log((double)l * 0.00001) + exponent * 0.69314718055994530942;
}

template <bool fast>
__device__ __forceinline__ float log_add(float a, float b)
{
    const float hi = fmaxf(a, b), lo = fminf(a, b);
    if (lo == -INFINITY)
        return hi;
    return fast ? hi + __logf(1.0f + __expf(lo - hi)) : hi + log1pf(expf(lo - hi));
}

template <bool fast>
__global__ void forward_log(const uint8_t *codes, int64_t n, int length, double *scores)
{
    int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s >= n)
        return;
    const uint4 *in = (const uint4 *)(codes + s * ((length + 15) / 16 * 16));
    const float lff = logf(0.95f), lfl = logf(0.05f), lll = logf(0.97999f), llf = logf(0.02f);
    float f = -INFINITY, l = -INFINITY;
    bool first = true;
    for (int i = 0; i < length; i += 16) {
        uint4 piece = in[i / 16];
        const uint8_t *x = (const uint8_t *)&piece;
        for (int k = 0; k < 16 && i + k < length; k++) {
            const int c = x[k];
            float nf, nl;
            if (first) {
                nf = c_lemit[0][c];
                nl = -INFINITY;
                first = false;
            } else {
                nf = log_add<fast>(f + lff, l + llf) + c_lemit[0][c];
                nl = log_add<fast>(f + lfl, l + lll) + c_lemit[1][c];
            }
            f = nf;
            l = nl;
        }
    }
    scores[s] = (double)l + log(0.00001);
}

int main(int argc, char **argv)
{
    const int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
    const int length = argc > 2 ? atoi(argv[2]) : 1000;
    if (n < 1 || length < 1) {
        fprintf(stderr, "usage: forward-space [SEQUENCES] [LENGTH]\n");
        return 2;
    }
    const int stride = (length + 15) / 16 * 16; /* each sequence starts 16-byte aligned */
    float emit[2][6], lemit[2][6];
    for (int c = 0; c < 6; c++) {
        emit[0][c] = 1.0f / 6;
        emit[1][c] = c == 5 ? 0.5f : 0.1f;
        lemit[0][c] = logf(emit[0][c]);
        lemit[1][c] = logf(emit[1][c]);
    }
    CHECK(cudaMemcpyToSymbol(c_emit, emit, sizeof emit));
    CHECK(cudaMemcpyToSymbol(c_lemit, lemit, sizeof lemit));
    uint8_t *codes;
    double *ref, *got;
    CHECK(cudaMalloc(&codes, (size_t)n * stride));
    CHECK(cudaMalloc(&ref, sizeof(double) * n));
    CHECK(cudaMalloc(&got, sizeof(double) * n));
    make_sequences<<<(unsigned)((n * stride + 255) / 256), 256>>>(codes, n, stride);
    const unsigned grid = (unsigned)((n + 63) / 64);
    forward_scaled<double><<<grid, 64>>>(codes, n, length, ref);
    CHECK(cudaDeviceSynchronize());
    double *h_ref = (double *)malloc(sizeof(double) * n), *h_got = (double *)malloc(sizeof(double) * n);
    CHECK(cudaMemcpy(h_ref, ref, sizeof(double) * n, cudaMemcpyDeviceToHost));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    const char *names[] = {"scaled probabilities, float (hmmc)", "log space, float, logf/expf",
                           "log space, float, __logf/__expf", "scaled probabilities, double"};
    printf("casino forward, %lld sequences of %d symbols, thread per sequence, block 64\n",
           (long long)n, length);
    for (int k = 0; k < 4; k++) {
        float best = 1e30f;
        for (int rep = 0; rep < 3; rep++) {
            CHECK(cudaEventRecord(a));
            switch (k) {
            case 0: forward_scaled<float><<<grid, 64>>>(codes, n, length, got); break;
            case 1: forward_log<false><<<grid, 64>>>(codes, n, length, got); break;
            case 2: forward_log<true><<<grid, 64>>>(codes, n, length, got); break;
            case 3: forward_scaled<double><<<grid, 64>>>(codes, n, length, got); break;
            }
            CHECK(cudaEventRecord(b));
            CHECK(cudaEventSynchronize(b));
            float ms;
            CHECK(cudaEventElapsedTime(&ms, a, b));
            best = ms < best ? ms : best;
        }
        CHECK(cudaMemcpy(h_got, got, sizeof(double) * n, cudaMemcpyDeviceToHost));
        double worst = 0;
        for (int64_t s = 0; s < n; s++) {
            double d = fabs(h_got[s] - h_ref[s]) / fmax(1.0, fabs(h_ref[s]));
            worst = d > worst ? d : worst;
        }
        printf("  %-36s %8.3f ms  %.3g symbols/s  worst relative difference from double %.2g\n",
               names[k], best, (double)n * length / (best / 1e3), worst);
    }
    return 0;
}
