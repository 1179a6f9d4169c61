/* names.c: finds sequence names used twice in a run's input (hmmrt_names_*).
 * Each name is kept as a 64-bit hash with the file and line where it was
 * first seen, in an open-addressing table that grows by doubling: 24 bytes
 * a slot, at most half full. Two different names with the same hash (about
 * one chance in 10^6 at four million names) would be reported as the same.
 * Past HMMRT_NAMES_MAX names the table stops growing, so that a huge input
 * costs bounded memory; later names are no longer checked. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct name_slot {
    uint64_t hash;    /* 0: empty (a hash of 0 is stored as 1) */
    const char *path; /* where the name was first seen */
    long line;
} name_slot;

struct hmmrt_names {
    name_slot *slots;
    size_t n_slots, used;
};

/* FNV-1a, 64 bits. */
uint64_t hmmrt_name_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3u;
    return h ? h : 1;
}

hmmrt_names *hmmrt_names_new(void)
{
    return calloc(1, sizeof(hmmrt_names));
}

void hmmrt_names_free(hmmrt_names *t)
{
    if (t)
        free(t->slots);
    free(t);
}

static name_slot *find_slot(name_slot *slots, size_t n_slots, uint64_t hash)
{
    size_t i = (size_t)hash & (n_slots - 1);
    while (slots[i].hash && slots[i].hash != hash)
        i = (i + 1) & (n_slots - 1);
    return &slots[i];
}

/* Moves the table to n_slots slots (a power of two): 0, or -1. */
static int grow_to(hmmrt_names *t, size_t n_slots)
{
    name_slot *slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->n_slots; i++) {
        if (i + 16 < t->n_slots && t->slots[i + 16].hash) /* the new slots are far apart */
            __builtin_prefetch(&slots[(size_t)t->slots[i + 16].hash & (n_slots - 1)], 1);
        if (t->slots[i].hash)
            *find_slot(slots, n_slots, t->slots[i].hash) = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->n_slots = n_slots;
    return 0;
}

void hmmrt_names_reserve(hmmrt_names *t, size_t more)
{
    size_t want = t->used + more < HMMRT_NAMES_MAX ? t->used + more : HMMRT_NAMES_MAX;
    if (2 * want <= t->n_slots)
        return;
    size_t n_slots = t->n_slots ? 4 * t->n_slots : 1024; /* few moves of a large table */
    while (n_slots < 2 * want)
        n_slots *= 2;
    grow_to(t, n_slots); /* else add grows it as before, or says it cannot */
}

void hmmrt_names_prefetch(const hmmrt_names *t, uint64_t hash)
{
    if (t->n_slots)
        __builtin_prefetch(&t->slots[(size_t)hash & (t->n_slots - 1)]);
}

int hmmrt_names_add(hmmrt_names *t, const char *name, const char *path, long line,
                    const char **first_path, long *first_line)
{
    return hmmrt_names_add_hash(t, hmmrt_name_hash(name), path, line, first_path, first_line);
}

int hmmrt_names_add_hash(hmmrt_names *t, uint64_t hash, const char *path, long line,
                         const char **first_path, long *first_line)
{
    if (t->n_slots) {
        name_slot *s = find_slot(t->slots, t->n_slots, hash);
        if (s->hash) {
            *first_path = s->path;
            *first_line = s->line;
            return 1;
        }
    }
    if (t->used >= HMMRT_NAMES_MAX)
        return -1;
    if (2 * (t->used + 1) > t->n_slots && grow_to(t, t->n_slots ? 2 * t->n_slots : 1024) != 0)
        return -1;
    *find_slot(t->slots, t->n_slots, hash) = (name_slot){hash, path, line};
    t->used++;
    return 0;
}
