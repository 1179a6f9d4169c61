/* scratch.c: per-thread scratch memory for generated code (dynamic
 * programming columns), 64-byte aligned, reused from sequence to sequence. */
#include "internal.h"

#include <stdlib.h>

enum { SCRATCH_ALIGN = 64 };

static size_t round_up_to_alignment(size_t bytes)
{
    return (bytes + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN;
}

static void *aligned_block(size_t bytes)
{
    void *mem = NULL;
    if (posix_memalign(&mem, SCRATCH_ALIGN, bytes) != 0)
        return NULL;
    return mem;
}

void *hmmrt_scratch_get(hmmrt_scratch *s, size_t bytes)
{
    if (s->mem && bytes <= s->size)
        return s->mem;
    if (bytes > SIZE_MAX - SCRATCH_ALIGN)
        return NULL;
    size_t wanted = round_up_to_alignment(bytes ? bytes : 1);
    size_t doubled = s->size <= SIZE_MAX / 2 ? s->size * 2 : 0;
    /* Contents need not survive: free first, so the peak stays low. */
    hmmrt_scratch_free(s);
    void *mem = doubled > wanted ? aligned_block(doubled) : NULL;
    size_t size = doubled;
    if (!mem) {
        mem = aligned_block(wanted);
        size = wanted;
    }
    if (!mem)
        return NULL;
    s->mem = mem;
    s->size = size;
    return mem;
}

void hmmrt_scratch_free(hmmrt_scratch *s)
{
    free(s->mem);
    s->mem = NULL;
    s->size = 0;
}
