/* symtab.c: open-addressing hash maps from names or index pairs to ints. */
#include "support/symtab.h"

#include <string.h>

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static uint64_t hash_key(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

void symtab_init(Symtab *t, Arena *a)
{
    t->arena = a;
    t->cap = 16;
    t->count = 0;
    t->slots = ARENA_ARRAY(a, SymtabSlot, t->cap);
}

/* The slot holding the entry, or the empty slot where it would go. */
static SymtabSlot *find(const Symtab *t, const char *name, uint64_t key)
{
    uint64_t h = name ? hash_name(name) : hash_key(key);
    for (uint64_t i = h & (uint64_t)(t->cap - 1);; i = (i + 1) & (uint64_t)(t->cap - 1)) {
        SymtabSlot *s = &t->slots[i];
        if (name ? (!s->name || strcmp(s->name, name) == 0) : (s->key == 0 || s->key == key))
            return s;
    }
}

static void grow(Symtab *t)
{
    SymtabSlot *old = t->slots;
    int old_cap = t->cap;
    t->cap *= 2;
    t->slots = ARENA_ARRAY(t->arena, SymtabSlot, t->cap);
    for (int i = 0; i < old_cap; i++)
        if (old[i].name || old[i].key)
            *find(t, old[i].name, old[i].key) = old[i];
}

static int put(Symtab *t, const char *name, uint64_t key, int value)
{
    if (2 * (t->count + 1) > t->cap)
        grow(t);
    SymtabSlot *s = find(t, name, key);
    if (s->name || s->key)
        return s->value;
    s->name = name;
    s->key = name ? 0 : key;
    s->value = value;
    t->count++;
    return -1;
}

static int get(const Symtab *t, const char *name, uint64_t key)
{
    const SymtabSlot *s = find(t, name, key);
    return (s->name || s->key) ? s->value : -1;
}

static uint64_t pair_key(int a, int b) { return (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1; }

int symtab_get(const Symtab *t, const char *name) { return get(t, name, 0); }
int symtab_put(Symtab *t, const char *name, int value) { return put(t, name, 0, value); }
int symtab_get_pair(const Symtab *t, int a, int b) { return get(t, NULL, pair_key(a, b)); }
int symtab_put_pair(Symtab *t, int a, int b, int value) { return put(t, NULL, pair_key(a, b), value); }

void pairset_init(PairSet *s, Arena *a, int n)
{
    s->n = n;
    s->bits = NULL;
    symtab_init(&s->hash, a);
    if (n > 0 && (uint64_t)n * (uint64_t)n <= PAIRSET_MAX_BITS)
        s->bits = arena_alloc(a, ((size_t)n * (size_t)n + 7) / 8);
}

int pairset_add(PairSet *s, int a, int b)
{
    if (!s->bits)
        return symtab_put_pair(&s->hash, a, b, 0) >= 0;
    size_t bit = (size_t)a * (size_t)s->n + (size_t)b;
    unsigned char mask = (unsigned char)(1u << (bit & 7));
    int was = (s->bits[bit >> 3] & mask) != 0;
    s->bits[bit >> 3] |= mask;
    return was;
}
