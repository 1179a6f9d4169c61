/* pinned.c: page-locked host memory, lent by the GPU driver once a device is
 * open (runtime/gpu/driver.c), so that libhmmrt, which does not link CUDA,
 * can stage a batch's codes where the device copies them from directly
 * (score_batch.c). Before that, or without a GPU, none is lent. */
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *(*_Atomic lent_alloc)(size_t bytes);
static void (*_Atomic lent_release)(void *p);

void hmmrt_set_pinned_allocator(void *(*alloc)(size_t bytes), void (*release)(void *p))
{
    atomic_store(&lent_release, release);
    atomic_store(&lent_alloc, alloc);
}

/* Staging is asked for with HMMRT_GPU_STAGE=on; off by default, since on an
 * H200 host (2026-11-26, globin at 4,000,000 proteins) page-locking the
 * batches' arrays on the reader's thread cost more (0.27 s) than the
 * packing it saves (0.10 s): 1.13-1.21 s a run against 0.98-1.02 s
 * (docs/internals.md). */
int hmmrt_pinned_available(void)
{
    static int on = -1;
    if (on < 0) {
        const char *stage = getenv("HMMRT_GPU_STAGE");
        on = stage && (strcmp(stage, "on") == 0 || strcmp(stage, "1") == 0);
    }
    return on && atomic_load(&lent_alloc) != NULL;
}

/* Page-locked memory cannot be paged out: a buffer takes at most a
 * sixteenth of the host's memory (the batches keep three). */
static size_t most_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t memory = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)4 << 30;
    return memory / 16;
}

void *hmmrt_pinned_alloc(size_t bytes)
{
    void *(*alloc)(size_t) = atomic_load(&lent_alloc);
    return alloc && bytes <= most_bytes() ? alloc(bytes) : NULL;
}

void hmmrt_pinned_free(void *p)
{
    void (*release)(void *) = atomic_load(&lent_release);
    if (p && release)
        release(p);
}
