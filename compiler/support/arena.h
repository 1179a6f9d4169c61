/* arena.h: a bump allocator. Everything the compiler allocates for one
 * compilation comes from one arena and is freed at once at the end. */
#ifndef HMMC_ARENA_H
#define HMMC_ARENA_H

#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
    ArenaBlock *head;
} Arena;

/* The one way the compiler fails for want of memory: prints "hmmc: out of
 * memory" and exits with status 3 (HMMC_EXIT_OUT_OF_MEMORY, that of "the
 * build failed"), after the hook set by fatal_out_of_memory_hook (build.c's,
 * which removes the temporary folder and program). */
#define HMMC_EXIT_OUT_OF_MEMORY 3
_Noreturn void fatal_out_of_memory(void);
void fatal_out_of_memory_hook(void (*hook)(void));
/* malloc, calloc, realloc, strdup and asprintf that never return NULL: a
 * failure goes through fatal_out_of_memory. */
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *old, size_t size);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void arena_init(Arena *a);
void arena_free(Arena *a);
/* Zeroed memory, aligned for any type; fatal_out_of_memory when memory runs out. */
void *arena_alloc(Arena *a, size_t size);
/* old (from arena_alloc or arena_grow, old_size bytes, or NULL) grown to
 * new_size bytes, zeroed beyond old_size: a big allocation is resized in
 * place (realloc), others are copied. For arrays that grow while they are
 * filled (a transition matrix as it is read). */
void *arena_grow(Arena *a, void *old, size_t old_size, size_t new_size);
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n)))

#endif
