/* pack.c: the host-side arithmetic of GPU batches, kept apart from CUDA so
 * that it is unit-tested where there is no GPU: the order of a batch by
 * length (longest first), offsets of sequences padded to 16 bytes, offsets
 * of back-pointer tables, the layout of one chunk in a device buffer and
 * the split of a sorted batch into chunks that fit such a buffer. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

enum {
    RADIX_BITS = 11,
    RADIX_SIZE = 1 << RADIX_BITS,
    COUNTING_MAX = 1 << 16, /* lengths up to this are sorted in one counting pass */
    PLAN_STEP = 64          /* a plan tries this many sequences at once */
};

/* ---- order by length -------------------------------------------------------- */

/* One stable counting pass of an LSD radix sort on the digit of keys at `shift`. */
static void radix_pass(const int64_t *keys, const int64_t *from, int64_t *to, int64_t m,
                       int shift)
{
    const int64_t mask = RADIX_SIZE - 1;
    int64_t count[RADIX_SIZE + 1] = {0};
    for (int64_t k = 0; k < m; k++)
        count[((keys[from[k]] >> shift) & mask) + 1]++;
    for (int d = 0; d < RADIX_SIZE; d++)
        count[d + 1] += count[d];
    for (int64_t k = 0; k < m; k++)
        to[count[(keys[from[k]] >> shift) & mask]++] = from[k];
}

/* The indexes of the sequences not skipped, in input order; returns how many
 * and the longest length. */
static int64_t list_scored(const int64_t *lengths, const unsigned char *skip, int64_t n,
                           int64_t *order, int64_t *longest)
{
    int64_t m = 0;
    *longest = 0;
    for (int64_t i = 0; i < n; i++) {
        if (skip && skip[i])
            continue;
        order[m++] = i;
        if (lengths[i] > *longest)
            *longest = lengths[i];
    }
    return m;
}

/* Orders the m sequences listed in order (input order) by length, longest
 * first, in one stable counting pass: lengths are at most longest, which is
 * small. count: longest + 2 zeros; tmp: m. */
static void counting_order(const int64_t *lengths, int64_t m, int64_t longest, int64_t *order,
                           int64_t *count, int64_t *tmp)
{
    for (int64_t k = 0; k < m; k++)
        count[longest - lengths[order[k]] + 1]++;
    for (int64_t d = 0; d <= longest; d++)
        count[d + 1] += count[d];
    for (int64_t k = 0; k < m; k++)
        tmp[count[longest - lengths[order[k]]]++] = order[k];
    memcpy(order, tmp, (size_t)m * sizeof *order);
}

/* The same for any lengths: LSD radix passes of RADIX_BITS. keys: one per
 * input index; tmp: m. */
static void radix_order(const int64_t *lengths, int64_t m, int64_t longest, int64_t *order,
                        int64_t *keys, int64_t *tmp)
{
    /* Key longest - length, ascending, is length descending; the passes are
     * stable, so equal lengths keep their input order. */
    for (int64_t k = 0; k < m; k++)
        keys[order[k]] = longest - lengths[order[k]];
    int64_t *from = order, *to = tmp;
    for (int shift = 0; shift < 63 && (longest >> shift) != 0; shift += RADIX_BITS) {
        radix_pass(keys, from, to, m, shift);
        int64_t *swap = from;
        from = to;
        to = swap;
    }
    if (from != order)
        memcpy(order, from, (size_t)m * sizeof *order);
}

int64_t hmmrt_order_by_length(const int64_t *lengths, const unsigned char *skip, int64_t n,
                              int64_t *order)
{
    int64_t longest;
    int64_t m = list_scored(lengths, skip, n, order, &longest);
    if (m < 2 || longest == 0)
        return m;
    int counting = longest <= COUNTING_MAX;
    int64_t *scratch = counting ? calloc((size_t)longest + 2, sizeof *scratch)
                                : malloc((size_t)n * sizeof *scratch);
    int64_t *tmp = malloc((size_t)m * sizeof *tmp);
    if (scratch && tmp) {
        if (counting)
            counting_order(lengths, m, longest, order, scratch, tmp);
        else
            radix_order(lengths, m, longest, order, scratch, tmp);
    }
    int ok = scratch && tmp;
    free(scratch);
    free(tmp);
    return ok ? m : -1;
}

/* ---- offsets ------------------------------------------------------------------ */

int64_t hmmrt_pad16(int64_t bytes)
{
    return (bytes + 15) / 16 * 16;
}

int64_t hmmrt_code_offsets(const int64_t *lengths, int64_t n, int64_t *offsets)
{
    int64_t at = 0;
    for (int64_t k = 0; k < n; k++) {
        offsets[k] = at;
        at += hmmrt_pad16(lengths[k]);
    }
    return at;
}

int64_t hmmrt_bp_offsets(const int64_t *lengths, int64_t n, int n_states, int64_t *offsets)
{
    int64_t at = 0;
    for (int64_t k = 0; k < n; k++) {
        offsets[k] = at;
        at += (lengths[k] + 1) * (int64_t)n_states;
    }
    return at;
}

int64_t hmmrt_staged_offsets(const int64_t *lengths, int64_t n, const int64_t *order, int64_t m,
                             int64_t *offsets)
{
    for (int64_t i = 0; i < n; i++)
        offsets[i] = -1;
    int64_t at = 0;
    for (int64_t k = 0; k < m; k++) {
        offsets[order[k]] = at;
        at += hmmrt_pad16(lengths[order[k]]);
    }
    return at;
}

int hmmrt_staged_run(const int64_t *lengths, const int64_t *offsets, const int64_t *order,
                     int64_t m)
{
    if (m == 0)
        return 1;
    int64_t at = offsets[order[0]];
    if (at < 0 || at % 16 != 0)
        return 0;
    for (int64_t k = 0; k < m; k++) {
        if (offsets[order[k]] != at)
            return 0;
        at += hmmrt_pad16(lengths[order[k]]);
    }
    return 1;
}

/* ---- the layout of a chunk ------------------------------------------------------ */

static size_t align_section(size_t at)
{
    return (at + HMMRT_SECTION_ALIGN - 1) / HMMRT_SECTION_ALIGN * HMMRT_SECTION_ALIGN;
}

/* Reserves `bytes` at *at, aligned; returns where they start. */
static size_t take(size_t *at, size_t bytes)
{
    size_t start = align_section(*at);
    *at = start + bytes;
    return start;
}

static int fb_states(const hmmrt_chunk_shape *shape, int c)
{
    return shape->fb_states ? shape->fb_states[c] : 0;
}

static int grouped(const hmmrt_chunk_shape *shape, int c)
{
    return shape->fb_grouped ? shape->fb_grouped[c] : 0;
}

/* Sets a per-call entry of the layout (out and its array may be NULL). */
static void put(size_t *array, int c, size_t at)
{
    if (array)
        array[c] = at;
}

/* Lays out a chunk; with out NULL only measures it. The one walk serves both,
 * so that the size a plan counts on is the size the driver lays out.
 * Returns the device's bytes; *host_bytes gets the host's. */
static size_t lay_out(const hmmrt_chunk_shape *shape, const hmmrt_chunk_size *size,
                      hmmrt_chunk_layout *out, size_t *host_bytes)
{
    size_t n = (size_t)size->sequences, at = 0;
    size_t index_bytes = n * sizeof(int64_t);
    size_t cells = (size_t)(size->symbols + size->sequences); /* columns of all sequences */
    size_t lengths = take(&at, index_bytes);
    size_t offsets = take(&at, index_bytes);
    for (int c = 0; c < shape->n_calls; c++) {
        int with = shape->bp_bytes[c] || fb_states(shape, c);
        put(out ? out->bp_offsets : NULL, c, with ? take(&at, index_bytes) : HMMRT_NO_SECTION);
        put(out ? out->rec_offsets : NULL, c,
            grouped(shape, c) ? take(&at, index_bytes) : HMMRT_NO_SECTION);
    }
    /* the codes of each alphabet, with one spare zero piece of 16 bytes */
    size_t codes_stride = align_section((size_t)size->padded_symbols + 16);
    size_t codes = take(&at, codes_stride * (size_t)shape->n_copies);
    size_t input_bytes = align_section(at);
    for (int c = 0; c < shape->n_calls; c++) {
        size_t bytes = fb_states(shape, c) ? sizeof(double) : (size_t)shape->score_bytes;
        put(out ? out->scores : NULL, c, take(&at, n * bytes));
    }
    for (int c = 0; c < shape->n_calls; c++) {
        size_t bytes = cells * (size_t)shape->n_states[c] * (size_t)shape->bp_bytes[c];
        put(out ? out->bp : NULL, c, shape->bp_bytes[c] ? take(&at, bytes) : HMMRT_NO_SECTION);
    }
    for (int c = 0; c < shape->n_calls; c++) {
        int table = shape->fb_table && shape->fb_table[c];
        size_t bytes = cells * (size_t)fb_states(shape, c) * sizeof(float);
        put(out ? out->post : NULL, c, table ? take(&at, bytes) : HMMRT_NO_SECTION);
    }
    size_t total = align_section(at);
    for (int c = 0; c < shape->n_calls; c++) {
        size_t bytes = grouped(shape, c)
                           ? (size_t)size->grouped_columns * (size_t)fb_states(shape, c) * sizeof(float)
                           : cells * ((size_t)fb_states(shape, c) * sizeof(float) + sizeof(int));
        put(out ? out->work : NULL, c, fb_states(shape, c) ? take(&at, bytes) : HMMRT_NO_SECTION);
    }
    size_t device = align_section(at);
    if (out) {
        out->size = *size;
        out->lengths = lengths;
        out->offsets = offsets;
        out->codes = codes;
        out->codes_stride = codes_stride;
        out->input_bytes = input_bytes;
        out->total_bytes = total;
        out->device_bytes = device;
    }
    if (host_bytes)
        *host_bytes = total;
    return device;
}

size_t hmmrt_chunk_bytes(const hmmrt_chunk_shape *shape, const hmmrt_chunk_size *size)
{
    return lay_out(shape, size, NULL, NULL);
}

size_t hmmrt_chunk_host_bytes(const hmmrt_chunk_shape *shape, const hmmrt_chunk_size *size)
{
    size_t host = 0;
    lay_out(shape, size, NULL, &host);
    return host;
}

void hmmrt_chunk_lay_out(const hmmrt_chunk_shape *shape, const hmmrt_chunk_size *size,
                         hmmrt_chunk_layout *layout)
{
    lay_out(shape, size, layout, NULL);
}

/* ---- chunks ------------------------------------------------------------------------ */

int64_t hmmrt_group_offsets(const int64_t *lengths, int64_t n, int64_t *rec_at)
{
    int64_t at = 0;
    for (int64_t g = 0; g < n; g += HMMRT_GROUP) {
        int64_t longest = 0;
        for (int64_t k = g; k < n && k < g + HMMRT_GROUP; k++) {
            rec_at[k] = at + (k - g);
            longest = lengths[k] > longest ? lengths[k] : longest;
        }
        at += (longest + 1) * HMMRT_GROUP;
    }
    return at;
}

static void add_sequence(hmmrt_chunk_size *size, int64_t length)
{
    if (size->sequences % HMMRT_GROUP == 0) { /* a group starts */
        size->group_longest = length;
        size->grouped_columns += (length + 1) * HMMRT_GROUP;
    } else if (length > size->group_longest) {
        size->grouped_columns += (length - size->group_longest) * HMMRT_GROUP;
        size->group_longest = length;
    }
    size->sequences++;
    size->symbols += length;
    size->padded_symbols += hmmrt_pad16(length);
}

hmmrt_chunk_size hmmrt_measure(const int64_t *lengths, int64_t n)
{
    hmmrt_chunk_size size = {0};
    for (int64_t k = 0; k < n; k++)
        add_sequence(&size, lengths[k]);
    return size;
}

/* A chunk takes sequences while its buffer stays within target_bytes (the
 * first one always); the bytes grow with every sequence added, so a block
 * of PLAN_STEP that fits is taken at once, and only the block where a chunk
 * ends is gone through one by one. */
int64_t hmmrt_plan_chunks(const hmmrt_chunk_shape *shape, const int64_t *lengths, int64_t n,
                          size_t target_bytes, int64_t *starts)
{
    int64_t chunks = 0;
    hmmrt_chunk_size size = {0};
    for (int64_t k = 0; k < n;) {
        hmmrt_chunk_size grown = size;
        int64_t end = k + PLAN_STEP < n ? k + PLAN_STEP : n;
        for (int64_t j = k; j < end; j++)
            add_sequence(&grown, lengths[j]);
        if (hmmrt_chunk_bytes(shape, &grown) <= target_bytes) {
            size = grown;
            k = end;
            continue;
        }
        grown = size;
        add_sequence(&grown, lengths[k]);
        if (size.sequences > 0 && hmmrt_chunk_bytes(shape, &grown) > target_bytes) {
            starts[chunks++] = k - size.sequences;
            size = (hmmrt_chunk_size){0};
            add_sequence(&size, lengths[k]);
        } else {
            size = grown;
        }
        k++;
    }
    if (size.sequences > 0)
        starts[chunks++] = n - size.sequences;
    starts[chunks] = n;
    return chunks;
}
