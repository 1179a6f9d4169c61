/* arena.c: the bump allocator behind arena.h. Memory comes in large zeroed
 * blocks; an allocation takes the next 16-byte-aligned piece of the newest
 * block, and a request larger than a block gets a block of its own. Nothing
 * is freed until arena_free releases every block at once. */
#include "support/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    ARENA_ALIGN = 16,
    ARENA_BLOCK_SIZE = 64 * 1024 /* usable bytes in an ordinary block */
};

struct ArenaBlock {
    ArenaBlock *next;
    size_t used;
    size_t capacity;
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

static void (*out_of_memory_hook)(void);

void fatal_out_of_memory_hook(void (*hook)(void)) { out_of_memory_hook = hook; }

_Noreturn void fatal_out_of_memory(void)
{
    fputs("hmmc: out of memory\n", stderr);
    if (out_of_memory_hook)
        out_of_memory_hook();
    exit(HMMC_EXIT_OUT_OF_MEMORY);
}

void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        fatal_out_of_memory();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        fatal_out_of_memory();
    return p;
}

void *xrealloc(void *old, size_t size)
{
    void *p = realloc(old, size ? size : 1);
    if (!p)
        fatal_out_of_memory();
    return p;
}

char *xstrdup(const char *s)
{
    char *copy = strdup(s);
    if (!copy)
        fatal_out_of_memory();
    return copy;
}

char *xasprintf(const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        fatal_out_of_memory();
    return s;
}

/* Rounds size up to the alignment, out of memory when that overflows. */
static size_t aligned_size(size_t size)
{
    if (size == 0)
        size = 1;
    if (size > SIZE_MAX - sizeof(ArenaBlock) - ARENA_ALIGN)
        fatal_out_of_memory();
    return (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
}

static ArenaBlock *new_block(size_t capacity)
{
    ArenaBlock *b = calloc(1, sizeof(ArenaBlock) + capacity);
    if (!b)
        fatal_out_of_memory();
    b->capacity = capacity;
    return b;
}

void arena_init(Arena *a)
{
    a->head = NULL;
}

void arena_free(Arena *a)
{
    ArenaBlock *b = a->head;
    while (b) {
        ArenaBlock *next = b->next;
        free(b);
        b = next;
    }
    a->head = NULL;
}

void *arena_alloc(Arena *a, size_t size)
{
    size = aligned_size(size);
    ArenaBlock *b = a->head;
    if (b && b->capacity - b->used >= size) {
        void *p = b->data + b->used;
        b->used += size;
        return p;
    }
    if (size > ARENA_BLOCK_SIZE / 4) {
        /* A big request gets its own block, kept behind the current one so
         * that the current block's free space is not wasted. */
        ArenaBlock *own = new_block(size);
        own->used = size;
        if (b) {
            own->next = b->next;
            b->next = own;
        } else {
            a->head = own;
        }
        return own->data;
    }
    b = new_block(ARENA_BLOCK_SIZE);
    b->next = a->head;
    a->head = b;
    b->used = size;
    return b->data;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *copy = arena_alloc(a, n + 1);
    memcpy(copy, s, n);
    copy[n] = '\0';
    return copy;
}

char *arena_strdup(Arena *a, const char *s)
{
    return arena_strndup(a, s, strlen(s));
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) /* an encoding error: give an empty string rather than garbage */
        n = 0;
    char *s = arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void *arena_grow(Arena *a, void *old, size_t old_size, size_t new_size)
{
    if (!old)
        return arena_alloc(a, new_size);
    size_t old_aligned = aligned_size(old_size), size = aligned_size(new_size);
    ArenaBlock **link = &a->head;
    while (*link && (*link)->data != (unsigned char *)old)
        link = &(*link)->next;
    ArenaBlock *own = *link;
    /* a block of its own (not the current block, which others share): resize it */
    if (own && own != a->head && own->used == old_aligned && size > ARENA_BLOCK_SIZE / 4) {
        ArenaBlock *bigger = realloc(own, sizeof(ArenaBlock) + size);
        if (!bigger)
            fatal_out_of_memory();
        if (size > old_aligned)
            memset(bigger->data + old_aligned, 0, size - old_aligned);
        bigger->capacity = bigger->used = size;
        *link = bigger;
        return bigger->data;
    }
    void *p = arena_alloc(a, new_size);
    memcpy(p, old, old_size < new_size ? old_size : new_size);
    return p;
}
