/* dense-blas-engine.c: times libhmmrt's two CPU engines for a dense model's
 * forward on the same random model and sequences: one sequence at a time
 * per thread (runtime/dense.c, as the program runs it without batching) and
 * tiles of sequences as matrix products (runtime/dense_blas.c, as
 * runtime/dense_batch.c runs them), and checks that their scores agree.
 *   dense-blas-engine N SEQUENCES LENGTH [TILE_ROWS]    (benchmarks/dense-blas-cpu builds it)
 *   dense-blas-engine --peak SIZE                       (the machine's dgemm rate)
 * Prints one line: seconds and transitions/s (N^2 a symbol) of each, the
 * worst relative difference of the scores. */
#include "hmmrt.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t state = 88172645463325252ull;
static double uniform(void) /* xorshift64, in (0, 1] */
{
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return ((double)(state >> 11) + 1.0) / 9007199254740992.0;
}

/* Each row of n + 1 weights (n moves and one to the end) as logs summing to 1. */
static void random_rows(double *w, int rows, int n, double *end)
{
    for (int k = 0; k < rows; k++) {
        double sum = 0, *row = w + (size_t)k * n, last = uniform();
        for (int j = 0; j < n; j++)
            sum += row[j] = uniform();
        sum += last;
        for (int j = 0; j < n; j++)
            row[j] = log(row[j] / sum);
        if (end)
            end[k] = log(last / sum);
    }
}

/* The machine's dgemm rate: a square product of n x n, on 1 thread and on
 * every thread OpenBLAS would take. */
void cblas_dgemm(int order, int trans_a, int trans_b, int m, int n, int k, double alpha,
                 const double *a, int lda, const double *b, int ldb, double beta, double *c,
                 int ldc);
void openblas_set_num_threads(int threads);
static int peak(int n)
{
    double *a = malloc(sizeof(double) * (size_t)n * n), *b = malloc(sizeof(double) * (size_t)n * n);
    double *c = malloc(sizeof(double) * (size_t)n * n);
    for (size_t i = 0; i < (size_t)n * n; i++)
        a[i] = b[i] = uniform();
    for (int threads = 1; threads <= omp_get_num_procs(); threads *= 2) {
        openblas_set_num_threads(threads);
        cblas_dgemm(101, 111, 111, n, n, n, 1, a, n, b, n, 0, c, n);
        double t0 = now();
        for (int r = 0; r < 5; r++)
            cblas_dgemm(101, 111, 111, n, n, n, 1, a, n, b, n, 0, c, n);
        printf("dgemm %d x %d, %d thread%s: %.1f GFLOP/s\n", n, n, threads,
               threads == 1 ? "" : "s", 2.0 * n * n * n * 5 / (now() - t0) / 1e9);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--peak") == 0)
        return peak(atoi(argv[2]));
    if (argc < 4) {
        fprintf(stderr, "usage: dense-blas-engine N SEQUENCES LENGTH [TILE_ROWS]\n");
        return 2;
    }
    int n = atoi(argv[1]), B = atoi(argv[2]), K = 4;
    int64_t L = atoll(argv[3]);
    int rows = argc > 4 ? atoi(argv[4]) : 0;
    if (n < 1 || B < 1 || L < 1) {
        fprintf(stderr, "dense-blas-engine: N, SEQUENCES and LENGTH must be >= 1\n");
        return 2;
    }
    if (rows <= 0) /* runtime/dense_batch.c's rule (hmmrt_dense_tile_rows) */
        rows = (B + 15) / 16 < 32 ? 32 : (B + 15) / 16 > 128 ? 128 : (B + 15) / 16;
    double *matrix = malloc(sizeof(double) * (size_t)n * n), *start = malloc(sizeof(double) * n);
    double *end = malloc(sizeof(double) * n), *emission = malloc(sizeof(double) * (size_t)K * n);
    int *state_of = malloc(sizeof(int) * n);
    random_rows(matrix, n, n, end);
    random_rows(start, 1, n, NULL);
    double *e_rows = malloc(sizeof(double) * (size_t)K * n);
    random_rows(e_rows, n, K, NULL); /* n rows of K: transposed below */
    for (int j = 0; j < n; j++) {
        state_of[j] = j + 1;
        for (int c = 0; c < K; c++)
            emission[(size_t)c * n + j] = e_rows[(size_t)j * K + c];
    }
    hmmrt_dense d = {.n = n, .K = K, .n_states = n + 2, .start = 0, .end = n + 1,
                     .state_of = state_of, .matrix = matrix, .start_w = start, .end_w = end,
                     .start_end = -INFINITY, .emission = emission};
    uint8_t *codes = malloc((size_t)B * (size_t)L);
    const uint8_t **x = malloc(sizeof *x * B);
    int64_t *lengths = malloc(sizeof *lengths * B);
    for (int64_t i = 0; i < (int64_t)B * L; i++)
        codes[i] = (uint8_t)(uniform() * K) % K;
    for (int b = 0; b < B; b++)
        x[b] = codes + (size_t)b * L, lengths[b] = L;
    double *one = malloc(sizeof(double) * B), *tiled = malloc(sizeof(double) * B);
    hmmrt_dense_prepare(&d);

    double t0 = now();
#pragma omp parallel
    {
        double *columns = malloc(sizeof(double) * 3 * n);
#pragma omp for schedule(dynamic, 1)
        for (int b = 0; b < B; b++)
            one[b] = hmmrt_dense_forward(&d, x[b], L, columns);
        free(columns);
    }
    double t1 = now();
    hmmrt_dense_blas_single_threaded();
    hmmrt_dense_sum s = {&d, 0, 0};
#pragma omp parallel for schedule(dynamic, 1)
    for (int first = 0; first < B; first += rows)
        hmmrt_dense_blas_tile(&s, x + first, lengths + first, B - first < rows ? B - first : rows,
                              tiled + first);
    double t2 = now();
    double worst = 0;
    for (int b = 0; b < B; b++) {
        double diff = fabs(one[b] - tiled[b]) / (fabs(one[b]) > 1 ? fabs(one[b]) : 1);
        worst = diff > worst ? diff : worst;
    }
    double transitions = (double)n * n * B * L;
    printf("N=%d B=%d L=%lld threads=%d tile=%d: per-sequence %.3f s %.3g trans/s, tiles %.3f s "
           "%.3g trans/s (%.1f GFLOP/s), %.1fx, worst relative difference %.2g\n",
           n, B, (long long)L, omp_get_max_threads(), rows, t1 - t0, transitions / (t1 - t0),
           t2 - t1, transitions / (t2 - t1), 2 * transitions / (t2 - t1) / 1e9,
           (t1 - t0) / (t2 - t1), worst);
    return 0;
}
