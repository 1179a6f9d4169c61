/* worker.c: a thread kept for a run's jobs, one at a time (hmmrt_worker_*):
 * the GPU path's reader and printer run a job a batch on one. A thread made
 * anew for each batch made its OpenMP team anew too (15 threads on 16 cores,
 * a few ms a batch, measured); a kept thread keeps its team. Where no
 * thread can be had, a job runs on the caller's. */
#include "internal.h"

#include <stdlib.h>

static void *serve(void *arg)
{
    hmmrt_worker *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->busy && !w->quit)
            pthread_cond_wait(&w->wake, &w->lock);
        if (!w->busy) /* quit, and nothing left to run */
            break;
        pthread_mutex_unlock(&w->lock);
        w->job(w->arg);
        pthread_mutex_lock(&w->lock);
        w->busy = 0;
        pthread_cond_broadcast(&w->done);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

void hmmrt_worker_init(hmmrt_worker *w)
{
    *w = (hmmrt_worker){0};
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->done, NULL);
}

void hmmrt_worker_run(hmmrt_worker *w, void *(*job)(void *), void *arg)
{
    if (!w->started && !w->failed) {
        w->started = pthread_create(&w->thread, NULL, serve, w) == 0;
        w->failed = !w->started;
    }
    if (!w->started) {
        job(arg); /* no thread to be had: run it now */
        return;
    }
    pthread_mutex_lock(&w->lock);
    w->job = job;
    w->arg = arg;
    w->busy = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

void hmmrt_worker_wait(hmmrt_worker *w)
{
    if (!w->started)
        return;
    pthread_mutex_lock(&w->lock);
    while (w->busy)
        pthread_cond_wait(&w->done, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

void hmmrt_worker_stop(hmmrt_worker *w)
{
    if (w->started) {
        pthread_mutex_lock(&w->lock);
        w->quit = 1;
        pthread_cond_signal(&w->wake);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL); /* after the job it may still run */
        w->started = 0;
    }
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    pthread_cond_destroy(&w->done);
}
