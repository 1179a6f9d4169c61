/* symtab.h: hash maps for sema: names to indexes, and pairs of indexes to
 * indexes (for duplicate transitions). Open addressing, memory from an arena. */
#ifndef HMMC_SYMTAB_H
#define HMMC_SYMTAB_H

#include <stdint.h>
#include "arena.h"

typedef struct SymtabSlot {
    const char *name; /* NULL when the slot is empty (name maps only) */
    uint64_t key;     /* pair maps: the key + 1, 0 when empty */
    int value;
} SymtabSlot;

typedef struct Symtab {
    Arena *arena;
    SymtabSlot *slots;
    int cap, count;
} Symtab;

void symtab_init(Symtab *t, Arena *a);
/* The value stored under name, or -1. */
int symtab_get(const Symtab *t, const char *name);
/* Stores name -> value unless name is there; returns the value already stored, or -1. */
int symtab_put(Symtab *t, const char *name, int value);
/* The same for a pair of non-negative ints. */
int symtab_get_pair(const Symtab *t, int a, int b);
int symtab_put_pair(Symtab *t, int a, int b, int value);

#endif
