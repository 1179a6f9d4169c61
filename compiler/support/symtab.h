/* symtab.h: hash maps for sema: names to indexes, and pairs of indexes to
 * indexes (for duplicate transitions). Open addressing, memory from an arena. */
#ifndef HMMC_SYMTAB_H
#define HMMC_SYMTAB_H

#include <stdint.h>
#include "support/arena.h"

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

/* A set of pairs of states (transitions declared so far): a bitmap of
 * n x n bits when that is at most PAIRSET_MAX_BITS (a 6,000-state model's
 * 36 million transitions take 4.5 MB), else a pair map. */
#define PAIRSET_MAX_BITS ((uint64_t)1 << 29)
typedef struct PairSet {
    int n;
    unsigned char *bits; /* NULL: the pairs are in hash */
    Symtab hash;
} PairSet;

void pairset_init(PairSet *s, Arena *a, int n_states);
/* Adds (a, b), both in 0 .. n_states-1; returns 1 when it was there already. */
int pairset_add(PairSet *s, int a, int b);

#endif
