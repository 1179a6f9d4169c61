/* order-bench.c: hmmrt_order_by_length on batches of a GPU run's size
 * (262,144 sequences of random protein lengths), ROUNDS rounds, on the
 * threads OpenMP gives (OMP_NUM_THREADS): wall seconds a batch, best and
 * median. Build: cc -O2 -fopenmp -Iruntime benchmarks/order-bench.c
 * build/libhmmrt.a -lz -lm -ldl -lpthread. Figures: benchmarks/history/. */
#include "internal.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atol(argv[1]) : 262144;
    int rounds = argc > 2 ? atoi(argv[2]) : 21;
    int64_t *lengths = malloc((size_t)n * sizeof *lengths), *order = malloc((size_t)n * sizeof *order);
    double *took = malloc((size_t)rounds * sizeof *took);
    uint64_t seed = 1;
    for (int64_t i = 0; i < n; i++) { /* about randprot's: 50 to 600 */
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        lengths[i] = 50 + (int64_t)(seed % 551);
    }
    for (int k = 0; k < rounds; k++) {
        double started = hmmrt_seconds();
        if (hmmrt_order_by_length(lengths, NULL, n, order) != n)
            return 1;
        took[k] = hmmrt_seconds() - started;
    }
    qsort(took, (size_t)rounds, sizeof *took, by_value);
    printf("order-bench: %lld sequences, %d threads: best %.2f ms, median %.2f ms a batch\n",
           (long long)n, omp_get_max_threads(), took[0] * 1e3, took[rounds / 2] * 1e3);
    return 0;
}
