/* names.c: finds sequence names used twice in a run's input (hmmrt_names_*).
 * Each name is kept as a 64-bit hash with the file and line where it was
 * first seen. The table is split by the hash's top bits into NAME_PARTS
 * open-addressing tables (24 bytes a slot, at most 5/8 full, growing by
 * doubling), so that a batch's names can be checked on several threads at
 * once: each thread owns some parts and goes through the batch in input
 * order, so that the place reported as a name's first is the one a single
 * thread would report. A slot of a large table is a miss in every cache
 * (about 100 ns); one thread took about half a second for four million
 * names, more than it took to write their rows.
 * Two different names with the same hash (about one chance in 10^6 at four
 * million names) would be reported as the same. Past max_names names the
 * table stops taking more, so that a huge input costs bounded memory; later
 * names are no longer checked. */
#include "internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

enum {
    PART_BITS = 6,
    NAME_PARTS = 1 << PART_BITS,
    FIRST_SLOTS = 256,
    GATHER = 256,      /* a thread picks its names out of this many at a time ... */
    FETCH_AHEAD = 8    /* ... and asks for the slot of the name this far ahead */
};

typedef struct name_slot {
    uint64_t hash;    /* 0: empty (a hash of 0 is stored as 1) */
    const char *path; /* where the name was first seen */
    long line;
} name_slot;

typedef struct name_part {
    name_slot *slots;
    size_t n_slots, used;
} name_part;

struct hmmrt_names {
    name_part parts[NAME_PARTS];
    size_t max_names, offered; /* names checked so far, at most max_names */
};

/* FNV-1a, 64 bits. */
uint64_t hmmrt_name_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3u;
    return h ? h : 1;
}

hmmrt_names *hmmrt_names_new(size_t max_names)
{
    hmmrt_names *t = calloc(1, sizeof(hmmrt_names));
    if (t)
        t->max_names = max_names;
    return t;
}

void hmmrt_names_free(hmmrt_names *t)
{
    if (t)
        for (int p = 0; p < NAME_PARTS; p++)
            free(t->parts[p].slots);
    free(t);
}

/* ---- one part ------------------------------------------------------------------- */

/* The part a hash belongs to: its top bits (a slot comes from its low bits). */
static int part_of(uint64_t hash)
{
    return (int)(hash >> (64 - PART_BITS));
}

static name_slot *find_slot(name_slot *slots, size_t n_slots, uint64_t hash)
{
    size_t i = (size_t)hash & (n_slots - 1);
    while (slots[i].hash && slots[i].hash != hash)
        i = (i + 1) & (n_slots - 1);
    return &slots[i];
}

static int fits(size_t names, size_t n_slots)
{
    return 8 * names <= 5 * n_slots;
}

/* Moves part p to n_slots slots (a power of two): 0, or -1. */
static int grow_to(name_part *p, size_t n_slots)
{
    name_slot *slots = calloc(n_slots, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < p->n_slots; i++)
        if (p->slots[i].hash)
            *find_slot(slots, n_slots, p->slots[i].hash) = p->slots[i];
    free(p->slots);
    p->slots = slots;
    p->n_slots = n_slots;
    return 0;
}

/* Makes room in p for `more` names at once, so that it moves seldom; without
 * memory for it, nothing changes (an add grows it, or says it cannot). */
static void reserve(name_part *p, size_t more)
{
    size_t n_slots = p->n_slots ? p->n_slots : FIRST_SLOTS;
    while (!fits(p->used + more, n_slots))
        n_slots *= 2;
    if (n_slots != p->n_slots)
        grow_to(p, n_slots);
}

/* Adds hash, seen at path:line, to p: 0 when new, 1 when seen before
 * (where: *seen), -1 when out of memory. */
static int part_add(name_part *p, uint64_t hash, const char *path, long line,
                    hmmrt_name_seen *seen)
{
    if (p->n_slots) {
        name_slot *s = find_slot(p->slots, p->n_slots, hash);
        if (s->hash) {
            seen->path = s->path;
            seen->line = s->line;
            return 1;
        }
    }
    if (!fits(p->used + 1, p->n_slots) && grow_to(p, p->n_slots ? 2 * p->n_slots : FIRST_SLOTS) != 0)
        return -1;
    *find_slot(p->slots, p->n_slots, hash) = (name_slot){hash, path, line};
    p->used++;
    return 0;
}

/* ---- the table ----------------------------------------------------------------- */

/* How many of n names offered now are checked (the rest: max_names is reached). */
static size_t take_room(hmmrt_names *t, size_t n)
{
    size_t room = t->max_names > t->offered ? t->max_names - t->offered : 0;
    size_t taken = n < room ? n : room;
    t->offered += taken;
    return taken;
}

int hmmrt_names_add(hmmrt_names *t, const char *name, const char *path, long line,
                    const char **first_path, long *first_line)
{
    if (take_room(t, 1) == 0)
        return -1;
    uint64_t hash = hmmrt_name_hash(name);
    hmmrt_name_seen seen = {0};
    int status = part_add(&t->parts[part_of(hash)], hash, path, line, &seen);
    *first_path = seen.path;
    *first_line = seen.line;
    return status;
}

/* The names of parts p with p % n_threads == me, in input order. */
static void check_own_parts(hmmrt_names *t, const hmmrt_record *records, const uint64_t *hashes,
                            int64_t n, hmmrt_name_seen *seen, int me, int n_threads)
{
    size_t share = (size_t)n / NAME_PARTS;
    for (int p = me; p < NAME_PARTS; p += n_threads)
        reserve(&t->parts[p], share + share / 8 + 64);
    int64_t own[GATHER];
    for (int64_t start = 0; start < n; start += GATHER) {
        int64_t end = start + GATHER < n ? start + GATHER : n;
        int k = 0;
        for (int64_t i = start; i < end; i++)
            if (part_of(hashes[i]) % n_threads == me)
                own[k++] = i;
        for (int j = 0; j < k; j++) {
            for (int a = j == 0 ? 0 : j + FETCH_AHEAD; a <= j + FETCH_AHEAD && a < k; a++) {
                const name_part *q = &t->parts[part_of(hashes[own[a]])];
                if (q->n_slots)
                    __builtin_prefetch(&q->slots[(size_t)hashes[own[a]] & (q->n_slots - 1)]);
            }
            int64_t i = own[j];
            seen[i].status = part_add(&t->parts[part_of(hashes[i])], hashes[i], records[i].path,
                                      records[i].line, &seen[i]);
        }
    }
}

void hmmrt_names_check(hmmrt_names *t, const hmmrt_record *records, const uint64_t *hashes,
                       int64_t n, hmmrt_name_seen *seen, int n_threads)
{
    int64_t checked = (int64_t)take_room(t, (size_t)n);
    for (int64_t i = checked; i < n; i++)
        seen[i].status = -1;
#pragma omp parallel num_threads(n_threads > 0 ? n_threads : 1)
    check_own_parts(t, records, hashes, checked, seen, omp_get_thread_num(), omp_get_num_threads());
}
