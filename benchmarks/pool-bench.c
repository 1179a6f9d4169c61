/* pool-bench.c: what a thread made anew a batch costs a run whose thread
 * then starts an OpenMP team (as the GPU path's reader and printer did),
 * against one thread kept for every batch (runtime/worker.c): ms a batch,
 * two team regions of TEAM threads each. Build and run:
 *   cc -O2 -fopenmp benchmarks/pool-bench.c -o build/tools/pool-bench -lpthread
 *   build/tools/pool-bench [TEAM]        (default 16)
 * Figures: benchmarks/history/2026-11-26-host3.md. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int team = 16;
static volatile long sink;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *batch_job(void *arg)
{
    (void)arg;
    for (int k = 0; k < 2; k++) {
#pragma omp parallel num_threads(team)
        sink += omp_get_thread_num();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    team = argc > 1 ? atoi(argv[1]) : 16;
    enum { BATCHES = 50 };
    for (int round = 0; round < 3; round++) {
        double t0 = now();
        for (int i = 0; i < BATCHES; i++) {
            pthread_t t;
            if (pthread_create(&t, NULL, batch_job, NULL) != 0)
                return 1;
            pthread_join(t, NULL);
        }
        double t1 = now();
        for (int i = 0; i < BATCHES; i++) /* one thread: its team is kept */
            batch_job(NULL);
        double t2 = now();
        printf("pool-bench: team of %d: a thread anew a batch %.2f ms, one thread kept %.2f ms\n",
               team, (t1 - t0) / BATCHES * 1e3, (t2 - t1) / BATCHES * 1e3);
    }
    return 0;
}
