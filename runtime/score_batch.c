/* score_batch.c: what both scoring paths (score.c on the CPU, score_gpu.c on
 * the GPU) do to a batch: read it, map its sequences to codes, print its rows
 * in input order with their warnings, and stop the run with a '# incomplete'
 * line at the first problem. Neither path is called from here. */
#include "score_run.h"

#include "hits.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

enum {
    SKIP_WARNINGS_SHOWN = 10,
    KEPT_TEXT_BYTES = 1 << 20 /* larger text buffers are freed after their row */
};

/* ---- reading a batch ------------------------------------------------------ */

void hmmrt_free_records(batch *b)
{
    for (int64_t i = 0; i < b->n; i++)
        hmmrt_record_release(&b->records[i]);
    b->n = b->residues = 0;
}

/* Reads records into b until it is full, the input ends or fails. */
static void read_records(const run *r, batch *b)
{
    b->n = b->residues = 0;
    b->ended = b->failed = 0;
    int got = 1;
    b->n = hmmrt_reader_take(r->reader, b->records, r->max_records, r->max_residues, &b->residues,
                             &got, b->error, sizeof b->error);
    b->ended = got == 0;
    b->failed = got < 0;
}

/* One thread at a time reads (and so updates these counts). A program of
 * one alphabet has the reader map residues to its codes as it parses them
 * (hmmrt_map_sequence then points at them); the first batch sets it. */
void hmmrt_read_batch(run *r, batch *b)
{
    if (r->prog->n_alphabets == 1 && r->timing.sequences_read == 0 &&
        !hmmrt_reader_mapped_alphabet(r->reader))
        hmmrt_reader_map_to(r->reader, r->prog->alphabets[0]);
    double started = hmmrt_seconds();
    read_records(r, b);
    r->timing.reading += hmmrt_seconds() - started;
    r->timing.sequences_read += b->n;
    r->timing.symbols_read += b->residues;
}

int hmmrt_is_last_batch(const batch *b)
{
    return b->ended || b->failed;
}

void hmmrt_free_code_arrays(work *w, int n_alphabets)
{
    for (int a = 0; a < n_alphabets; a++) {
        if (w->codes_pinned)
            hmmrt_pinned_free(w->codes[a]);
        else
            free(w->codes[a]);
        w->codes[a] = NULL;
    }
    w->codes_cap = 0;
    w->codes_pinned = 0;
}

/* Room in w for `need` bytes of codes in every alphabet, page-locked where
 * `pinned` and it can be had; 0, or -1. Memory that a huge sequence needed
 * is given back once batches are small again. */
static int size_code_arrays(const run *r, size_t need, int pinned, work *w)
{
    size_t usual = need > (size_t)r->max_residues ? need : (size_t)r->max_residues;
    if (need <= w->codes_cap && w->codes_cap <= 4 * usual && (!pinned || w->codes_pinned))
        return 0;
    hmmrt_free_code_arrays(w, r->prog->n_alphabets);
    /* a quarter more than this batch needs, so that the next, a little
     * longer, finds room: new memory costs a page fault every 4 KB (and
     * page-locked memory, a call to the driver) */
    size_t cap = need + need / 4;
    w->codes_pinned = pinned;
    for (int a = 0; a < r->prog->n_alphabets && w->codes_pinned; a++)
        if (!(w->codes[a] = hmmrt_pinned_alloc(cap))) { /* pageable memory will do */
            hmmrt_free_code_arrays(w, a);
            break;
        }
    for (int a = 0; a < r->prog->n_alphabets && !w->codes_pinned; a++)
        if (!(w->codes[a] = malloc(cap))) {
            hmmrt_free_code_arrays(w, a);
            return -1;
        }
    w->codes_cap = cap;
    return 0;
}

/* Where each sequence's codes go in each alphabet's array: in input order,
 * or, staged for the GPU, longest first at 16-byte steps, as the driver's
 * chunks lie on the device (hmmrt_staged_offsets), so that it copies them
 * from here instead of packing them. Returns the bytes they take. */
static int64_t place_codes(const batch *b, work *w, int staged)
{
    for (int64_t i = 0; i < b->n; i++)
        w->lengths[i] = b->records[i].length;
    int64_t at = 0;
    if (staged) {
        int64_t m = hmmrt_order_by_length(w->lengths, NULL, b->n, w->order);
        if (m < 0)
            return -1;
        at = hmmrt_staged_offsets(w->lengths, b->n, w->order, m, w->offsets) + 16;
    } else {
        for (int64_t i = 0; i < b->n; i++) {
            w->offsets[i] = at;
            at += b->records[i].length;
        }
        at++;
    }
    return at;
}

static void point_at_codes(const run *r, const batch *b, work *w)
{
    int n_alphabets = r->prog->n_alphabets;
    for (int64_t i = 0; i < b->n; i++)
        for (int a = 0; a < n_alphabets; a++)
            w->code_ptrs[i * n_alphabets + a] = w->codes[a] + w->offsets[i];
}

int hmmrt_place_codes(run *r, const batch *b, work *w)
{
    /* staged where a GPU may score and has lent page-locked memory */
    int staged = r->opening && r->opening->wanted && hmmrt_pinned_available();
    int64_t need = place_codes(b, w, staged);
    if (need < 0 || size_code_arrays(r, (size_t)need, staged, w) != 0)
        return -1;
    w->staged = staged && w->codes_pinned;
    if (staged && !w->staged) /* no page-locked memory after all */
        place_codes(b, w, 0);
    point_at_codes(r, b, w);
    return 0;
}

/* ---- mapping and counting ------------------------------------------------ */

/* Sequence i's codes into alphabet a's staged array (from `from`, or
 * written there already), zero-padded to 16 bytes as the kernels read them. */
static void stage(work *w, int a, int64_t i, const uint8_t *from, int64_t length)
{
    uint8_t *to = w->codes[a] + w->offsets[i];
    if (from)
        memcpy(to, from, (size_t)length);
    memset(to + length, 0, (size_t)(hmmrt_pad16(length) - length));
}

int hmmrt_map_sequence(run *r, work *w, const hmmrt_record *rec, int64_t i)
{
    const hmmrt_program *prog = r->prog;
    if (rec->codes) { /* mapped by the reader, to the one alphabet */
        if (rec->first_invalid) {
            w->results[i] = (seq_result){SEQ_INVALID, 0, rec->first_invalid - 1};
            return -1;
        }
        /* the CPU and the GPU driver (hmmrt_gpu_input's sequence_codes,
         * which packs them into its pinned memory) read them where they
         * are; staged, they are copied once, into the page-locked array
         * the driver copies to the device as it lies */
        w->code_ptrs[i] = rec->codes;
        if (w->staged)
            stage(w, 0, i, rec->codes, rec->length);
        return 0;
    }
    for (int a = 0; a < prog->n_alphabets; a++) {
        int64_t bad = hmmrt_map(prog->alphabets[a], rec->residues, rec->length,
                                w->codes[a] + w->offsets[i]);
        if (bad >= 0) {
            w->results[i] = (seq_result){SEQ_INVALID, a, bad};
            return -1;
        }
        if (w->staged)
            stage(w, a, i, NULL, rec->length);
    }
    return 0;
}

void hmmrt_clear_values(run *r, work *w, int64_t i)
{
    hmmrt_value *values = w->values + i * r->prog->n_columns;
    for (int c = 0; c < r->prog->n_columns; c++) {
        values[c].score = NAN;
        hmmrt_buf_reset(&values[c].text);
    }
}

void hmmrt_count_below_range(run *r, const hmmrt_record *rec, const hmmrt_value *values)
{
    for (int c = 0; c < r->prog->n_columns; c++) {
        long from = r->prog->columns[c].possible_from;
        if (from > 0 && rec->length >= from && values[c].score == -INFINITY) {
#pragma omp atomic
            r->below_range[c]++;
        }
    }
}

int hmmrt_stops_the_run(const run *r, const seq_result *res)
{
    return res->status == SEQ_OUT_OF_MEMORY || (res->status == SEQ_INVALID && !r->o->skip_invalid);
}

/* Sequences a thread takes at once: enough chunks for every thread to
 * balance uneven lengths, few enough that taking them costs little. */
int hmmrt_omp_chunk(int64_t n_sequences)
{
    int64_t chunk = n_sequences / ((int64_t)omp_get_max_threads() * 64);
    return chunk < 1 ? 1 : chunk > 64 ? 64 : (int)chunk;
}

/* ---- printing a batch ----------------------------------------------------- */

static const char *model_of_alphabet(const hmmrt_program *prog, int alphabet)
{
    for (int m = 0; m < prog->n_models; m++)
        if (prog->models[m].alphabet == alphabet)
            return prog->models[m].name;
    return NULL;
}

/* "FILE:LINE: sequence NAME: symbol 'c' at position P (1-based) is not in the
 * alphabet of model M [symbols]" into msg; LINE is the symbol's. */
static void describe_invalid(const run *r, const hmmrt_record *rec, const seq_result *res,
                             hmmrt_buf *msg)
{
    const char *model = model_of_alphabet(r->prog, res->alphabet);
    char symbol[8], part[1024];
    hmmrt_describe_byte(symbol, rec->codes ? rec->invalid_byte
                                           : (unsigned char)rec->residues[res->position]);
    snprintf(part, sizeof part, "%s:%ld: sequence ", rec->path,
             hmmrt_record_line_of(rec, res->position));
    hmmrt_buf_puts(msg, part);
    hmmrt_describe_text(msg, rec->name);
    snprintf(part, sizeof part, ": symbol '%s' at position %lld (1-based) is not in the alphabet of ",
             symbol, (long long)res->position + 1);
    hmmrt_buf_puts(msg, part);
    if (model) {
        hmmrt_buf_puts(msg, "model ");
        hmmrt_buf_puts(msg, model);
    } else {
        snprintf(part, sizeof part, "alphabet %d", res->alphabet + 1);
        hmmrt_buf_puts(msg, part);
    }
    hmmrt_buf_putc(msg, ' ');
    hmmrt_describe_alphabet(msg, r->prog->alphabets[res->alphabet]);
}

static void warn_skipped(run *r, const hmmrt_record *rec, const seq_result *res)
{
    r->skipped++;
    if (r->skipped > SKIP_WARNINGS_SHOWN)
        return;
    hmmrt_buf msg = {0};
    describe_invalid(r, rec, res, &msg);
    hmmrt_warning("%s; skipped%s", msg.len ? msg.data : "",
                  r->skipped == SKIP_WARNINGS_SHOWN ? " (later ones are only counted)" : "");
    hmmrt_buf_free(&msg);
}

void hmmrt_stop_at_sequence(run *r, const hmmrt_record *rec)
{
    hmmrt_buf where = {0};
    char place[1024];
    snprintf(place, sizeof place, " (%s line %ld)", rec->path, rec->line);
    hmmrt_buf_puts(&where, "sequence ");
    hmmrt_describe_text(&where, rec->name);
    hmmrt_buf_puts(&where, place);
    hmmrt_out_incomplete(&r->out, where.len ? where.data : "a sequence");
    hmmrt_buf_free(&where);
}

static int stop_invalid(run *r, const hmmrt_record *rec, const seq_result *res)
{
    hmmrt_buf msg = {0};
    describe_invalid(r, rec, res, &msg);
    hmmrt_error("%s; fix the input or pass --skip-invalid to skip such sequences",
                msg.len ? msg.data : "");
    hmmrt_buf_free(&msg);
    hmmrt_stop_at_sequence(r, rec);
    return HMMRT_EXIT_INPUT;
}

char *hmmrt_shown_name(const char *name)
{
    hmmrt_buf shown = {0};
    hmmrt_describe_text(&shown, name);
    return shown.data ? shown.data : strdup(name);
}

static int stop_out_of_memory(run *r, const hmmrt_record *rec)
{
    char *name = hmmrt_shown_name(rec->name);
    hmmrt_error("%s:%ld: out of memory while scoring sequence %s (%lld symbols)", rec->path,
                rec->line, name ? name : "?", (long long)rec->length);
    free(name);
    hmmrt_stop_at_sequence(r, rec);
    return HMMRT_EXIT_INTERNAL;
}

/* A name seen before is warned about (the first ten, then counted); both
 * sequences are printed: the name is the user's, the row order tells them
 * apart. After a name that was not checked, no later one is reported. */
static void report_name(run *r, const hmmrt_record *rec, const hmmrt_name_seen *seen)
{
    if (r->names_unchecked)
        return;
    if (seen->status < 0) {
        r->names_unchecked = 1;
        hmmrt_note("%s:%ld: sequence names from here on are not checked for duplicates "
                   "(the table of names is full or out of memory)", rec->path, rec->line);
        return;
    }
    if (seen->status == 0 || ++r->duplicates > DUPLICATE_WARNINGS_SHOWN)
        return;
    int file_again = seen->path != rec->path && strcmp(seen->path, rec->path) == 0;
    char *name = hmmrt_shown_name(rec->name);
    hmmrt_warning("%s:%ld: sequence %s has the same name as the sequence at %s:%ld%s; both are "
                  "printed%s", rec->path, rec->line, name ? name : "?", seen->path, seen->line,
                  file_again ? " (the file is read twice)" : "",
                  r->duplicates == DUPLICATE_WARNINGS_SHOWN ? " (later ones are only counted)" : "");
    free(name);
}

/* Large buffers of a row are given back: the next batch may not need them. */
static void release_large_buffers(hmmrt_value *values, int n_columns, hmmrt_buf *row)
{
    for (int c = 0; c < n_columns; c++)
        if (values[c].text.cap > KEPT_TEXT_BYTES)
            hmmrt_buf_free(&values[c].text);
    if (row->cap > KEPT_TEXT_BYTES)
        hmmrt_buf_free(row);
}

/* The hits mode takes sequence i of w's batch instead of its row (hits.h):
 * 0, or the exit status after saying what went wrong. */
static int add_hit(run *r, work *w, const hmmrt_record *rec, int64_t i)
{
    const hmmrt_program *prog = r->prog;
    int model = prog->hits->model;
    const uint8_t *codes =
        model >= 0 ? w->code_ptrs[i * prog->n_alphabets + prog->models[model].alphabet] : NULL;
    if (w->counted_only && w->counted_only[i]) { /* it cannot be reported (hits_gpu.c) */
        hmmrt_hits_count(r->hits, rec);
        return 0;
    }
    /* its domains and null2 may have been worked out already (hits_gpu.c) */
    while (w->next_ready < w->n_ready && w->ready_at[w->next_ready] < i) /* or failed: -1 */
        free(w->ready[w->next_ready++].domains);
    int status = w->next_ready < w->n_ready && w->ready_at[w->next_ready] == i
                     ? hmmrt_hits_add_prepared(r->hits, rec, &w->ready[w->next_ready++])
                     : hmmrt_hits_add(r->hits, rec, r->first_index + i,
                                      w->values + i * prog->n_columns, codes);
    if (status == -1)
        return stop_out_of_memory(r, rec);
    if (status != 0) {
        hmmrt_error("%s:%ld: the viterbi traceback of sequence %s does not follow the model's "
                    "moves (an internal error of hmmc)", rec->path, rec->line, rec->name);
        hmmrt_stop_at_sequence(r, rec);
        return HMMRT_EXIT_INTERNAL;
    }
    return 0;
}

/* Many models: the hits of the batch's scored sequences made on every thread
 * before the printer takes them in order (hits_scan_ready.c). */
static void prepare_scan_hits(run *r, const batch *b, work *w)
{
    const hmmrt_program *prog = r->prog;
    int model = prog->hits->model;
    const uint8_t **codes = malloc((size_t)(b->n > 0 ? b->n : 1) * sizeof *codes);
    unsigned char *use = malloc((size_t)(b->n > 0 ? b->n : 1));
    if (codes && use) { /* else hmmrt_hmmscan_add makes them one at a time */
        for (int64_t i = 0; i < b->n; i++) {
            use[i] = w->results[i].status == SEQ_SCORED;
            codes[i] = model >= 0 ? w->code_ptrs[i * prog->n_alphabets +
                                                 prog->models[model].alphabet]
                                  : NULL;
        }
        hmmrt_hmmscan_prepare(r->hits, b->records, b->n, r->first_index, w->values,
                              prog->n_columns,
                              (const uint8_t *const *)codes, use, r->n_scratches);
    }
    free(codes);
    free(use);
}

/* Prints batch b's rows in order: 0, or the exit status of the sequence
 * that stopped the run (after its '# incomplete' line). */
static int print_rows(run *r, const batch *b, work *w)
{
    int n_columns = r->prog->n_columns;
    double started = hmmrt_seconds();
    if (!r->names_unchecked)
        hmmrt_names_check(r->names, b->records, w->name_hashes, b->n, w->names_seen,
                          r->n_scratches);
    r->timing.writing_parts[0] += hmmrt_seconds() - started;
    if (r->hits && r->hits->queries)
        prepare_scan_hits(r, b, w);
    int status = 0;
    for (int64_t i = 0; i < b->n && !status; i++) {
        const hmmrt_record *rec = &b->records[i];
        report_name(r, rec, &w->names_seen[i]);
        switch (w->results[i].status) {
        case SEQ_SCORED:
            r->timing.sequences_scored++;
            r->timing.symbols_scored += rec->length;
            if (r->hits) {
                status = add_hit(r, w, rec, i);
                break;
            }
            hmmrt_out_write(&r->out, w->rows[i].data, w->rows[i].len);
            release_large_buffers(w->values + i * n_columns, n_columns, &w->rows[i]);
            break;
        case SEQ_INVALID:
            if (!r->o->skip_invalid)
                status = stop_invalid(r, rec, &w->results[i]);
            else
                warn_skipped(r, rec, &w->results[i]);
            break;
        case SEQ_OUT_OF_MEMORY:
            status = stop_out_of_memory(r, rec);
            break;
        case SEQ_NOT_RUN:
            status = HMMRT_EXIT_INTERNAL; /* cannot happen: a stop comes first */
            break;
        }
    }
    if (r->hits)
        hmmrt_hmmscan_release_ready(r->hits, 0); /* what a stop left */
    return status;
}

int hmmrt_print_batch(run *r, const batch *b, work *w)
{
    double started = hmmrt_seconds(), names = r->timing.writing_parts[0];
    int status = print_rows(r, b, w);
    double took = hmmrt_seconds() - started;
    r->timing.writing += took;
    r->timing.writing_parts[1] += took - (r->timing.writing_parts[0] - names);
    return status;
}

/* ---- stopping the run and flushing -------------------------------------- */

int hmmrt_stop_at_input_error(run *r, const batch *b)
{
    const char *path;
    long line;
    hmmrt_reader_where(r->reader, &path, &line);
    char where[1024];
    if (line > 0)
        snprintf(where, sizeof where, "%s line %ld", path, line);
    else
        snprintf(where, sizeof where, "%s", path ? path : "the input");
    hmmrt_error("%s", b->error);
    hmmrt_out_incomplete(&r->out, where);
    return hmmrt_reader_out_of_memory(r->reader) ? HMMRT_EXIT_INTERNAL : HMMRT_EXIT_INPUT;
}

int hmmrt_stop_out_of_memory_for_batch(run *r)
{
    const batch *b = r->current;
    hmmrt_error("out of memory for a batch of %lld sequences (%lld symbols)", (long long)b->n,
                (long long)b->residues);
    hmmrt_stop_at_sequence(r, &b->records[0]);
    return HMMRT_EXIT_INTERNAL;
}

int hmmrt_flush_output(run *r)
{
    double started = hmmrt_seconds();
    int status = hmmrt_out_flush(&r->out);
    double took = hmmrt_seconds() - started;
    r->timing.writing += took;
    r->timing.writing_parts[2] += took;
    return status;
}
