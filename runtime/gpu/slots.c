/* slots.c: the two buffer pairs that chunks take turns in: device memory
 * and pinned host memory of one layout, each with its stream and events.
 * Their limit comes from the device's free memory (and the host's memory,
 * for the pinned half); they grow to what a batch needs and are kept. */
#include "driver.h"

#include <stdlib.h>
#include <unistd.h>

#define GROWTH_STEP ((size_t)64 << 20)  /* slots grow in steps of this */
#define MIN_RESERVE ((size_t)512 << 20) /* device memory left to kernels and the context */
#define MIN_SLOT ((size_t)64 << 20)

static int create_slot(hmmrt_gpu *g, gpu_slot *s)
{
    int n_calls = g->gp->n_calls;
    size_t per_call = (size_t)(n_calls > 0 ? n_calls : 1) * sizeof(size_t);
    s->layout.bp_offsets = malloc(per_call);
    s->layout.scores = malloc(per_call);
    s->layout.bp = malloc(per_call);
    s->layout.post = malloc(per_call);
    s->layout.work = malloc(per_call);
    s->layout.rec_offsets = malloc(per_call);
    s->events = calloc((size_t)n_calls + EVENT_CALLS + 1, sizeof *s->events);
    if (!s->layout.bp_offsets || !s->layout.scores || !s->layout.bp || !s->layout.post ||
        !s->layout.work || !s->layout.rec_offsets || !s->events)
        return gpu_error(g, "out of memory");
    if (gpu_check(g, cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking),
                  "cudaStreamCreateWithFlags") != 0)
        return -1;
    for (int k = 0; k < n_calls + EVENT_CALLS + 1; k++) {
        if (gpu_check(g, cudaEventCreate(&s->events[k]), "cudaEventCreate") != 0)
            return -1;
        s->n_events++;
    }
    return 0;
}

int gpu_create_slots(hmmrt_gpu *g)
{
    if (gpu_check(g, cudaEventCreate(&g->epoch), "cudaEventCreate") != 0)
        return -1;
    for (int s = 0; s < N_SLOTS; s++)
        if (create_slot(g, &g->slots[s]) != 0)
            return -1;
    return 0;
}

static void free_slot_memory(gpu_slot *s)
{
    if (s->device)
        cudaFree(s->device);
    if (s->host)
        cudaFreeHost(s->host);
    s->device = s->host = NULL;
    s->bytes = s->host_bytes = 0;
}

void gpu_release_slots(hmmrt_gpu *g)
{
    for (int k = 0; k < N_SLOTS; k++)
        free_slot_memory(&g->slots[k]);
}

void gpu_destroy_slots(hmmrt_gpu *g)
{
    if (g->epoch)
        cudaEventDestroy(g->epoch);
    for (int k = 0; k < N_SLOTS; k++) {
        gpu_slot *s = &g->slots[k];
        free_slot_memory(s);
        for (int e = 0; e < s->n_events; e++)
            cudaEventDestroy(s->events[e]);
        if (s->stream)
            cudaStreamDestroy(s->stream);
        free(s->events);
        free(s->layout.bp_offsets);
        free(s->layout.scores);
        free(s->layout.bp);
        free(s->layout.post);
        free(s->layout.work);
        free(s->layout.rec_offsets);
    }
}

static size_t host_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)4 << 30;
}

int gpu_size_slots(hmmrt_gpu *g)
{
    size_t free_bytes = 0, total = 0;
    if (gpu_check(g, cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo") != 0)
        return -1;
    size_t reserve = free_bytes / 10 > MIN_RESERVE ? free_bytes / 10 : MIN_RESERVE;
    size_t device_share = free_bytes > reserve ? (free_bytes - reserve) / N_SLOTS : 0;
    size_t host_share = host_memory() / 4 / N_SLOTS; /* pinned memory cannot be paged out */
    size_t limit = device_share < host_share ? device_share : host_share;
    g->slot_limit = limit > MIN_SLOT ? limit : MIN_SLOT;
    return 0;
}

/* Allocates both halves of slot s: 0, 1 when memory ran out, -1 on another error. */
static int allocate(hmmrt_gpu *g, gpu_slot *s, size_t bytes, size_t host_bytes)
{
    cudaError_t e = gpu_take_fault(g, HMMRT_FAULT_OOM) ? cudaErrorMemoryAllocation
                                                       : cudaMalloc(&s->device, bytes);
    if (e == cudaSuccess) {
        e = cudaHostAlloc(&s->host, host_bytes, cudaHostAllocDefault);
        if (e != cudaSuccess)
            s->host = NULL;
    } else {
        s->device = NULL;
    }
    if (e == cudaSuccess) {
        s->bytes = bytes;
        s->host_bytes = host_bytes;
        return 0;
    }
    free_slot_memory(s);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); /* handled: it must not show up at the next launch */
        return 1;
    }
    char what[128];
    snprintf(what, sizeof what, "cudaMalloc/cudaHostAlloc of %.1f MiB", (double)bytes / (1 << 20));
    return gpu_fail(g, e, what);
}

/* `need` bytes rounded up in steps of GROWTH_STEP up to the slot limit (a
 * single sequence may need more). */
static size_t grown(const hmmrt_gpu *g, size_t need)
{
    size_t bytes = (need + GROWTH_STEP - 1) / GROWTH_STEP * GROWTH_STEP;
    size_t ceiling = need > g->slot_limit ? need : g->slot_limit;
    return bytes > ceiling ? ceiling : bytes;
}

int gpu_reserve_slot(hmmrt_gpu *g, gpu_slot *s, size_t need, size_t host_need)
{
    if (need <= s->bytes && host_need <= s->host_bytes)
        return 0;
    double started = hmmrt_seconds();
    free_slot_memory(s);
    int got = allocate(g, s, grown(g, need), grown(g, host_need));
    g->stats.buffers += hmmrt_seconds() - started;
    return got;
}
