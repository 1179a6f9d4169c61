/* score_gpu.c: the scoring run on the GPU, batch after batch. While a reader
 * thread reads and maps (OpenMP) batch k + 1 and a printer thread formats
 * and prints batch k - 1, the mapped sequences of batch k go to the GPU
 * driver in one call (hmmrt_gpus_score, gpu_multi.c: sorting, transfers, kernels,
 * tracebacks); then batch k goes to the printer, which formats its rows in
 * parallel and prints batches in input order. The main thread, which feeds
 * the GPU, does no more between two batches than it must; the reader's and
 * the printer's threads (and so their OpenMP teams) are kept for the run
 * (worker.c). Skips, stops and
 * exit statuses follow the CPU path's rules: nothing after a sequence that
 * stops the run is printed, and nothing is written to the output while the
 * printer may be writing. */
#include "score_gpu.h"

#include <math.h>
#include <stdlib.h>

#include "hmmrt_gpu.h"

#include <omp.h>
#include <pthread.h>

/* ---- mapping ------------------------------------------------------------------ */

/* Batch b's work: the batches and works are paired. */
static work *work_of(run *r, const batch *b)
{
    return &r->works[b - r->batches];
}

/* Maps sequence i of batch b into w; marks it for the GPU when it maps. */
static void map_one(run *r, const batch *b, work *w, int64_t i)
{
    const hmmrt_record *rec = &b->records[i];
    w->lengths[i] = rec->length;
    if (hmmrt_map_sequence(r, w, rec, i) != 0)
        return;
    hmmrt_clear_values(r, w, i);
    w->results[i].status = SEQ_SCORED;
    w->skip[i] = 0;
}

/* Maps batch b into w in parallel (a team of --threads, whichever thread
 * runs it); returns the index of the sequence that stops the run, or n.
 * Sequences after it are neither scored nor printed. */
static int64_t map_batch(run *r, const batch *b, work *w)
{
    int64_t stop_at = b->n;
#pragma omp parallel for num_threads(r->n_scratches) schedule(dynamic, hmmrt_omp_chunk(b->n))
    for (int64_t i = 0; i < b->n; i++) {
        int64_t limit;
#pragma omp atomic read
        limit = stop_at;
        w->name_hashes[i] = hmmrt_name_hash(b->records[i].name);
        w->results[i].status = SEQ_NOT_RUN;
        w->skip[i] = 1;
        if (i > limit)
            continue;
        map_one(r, b, w, i);
        if (hmmrt_stops_the_run(r, &w->results[i])) {
#pragma omp critical(hmmrt_gpu_stop_at)
            if (i < stop_at) {
#pragma omp atomic write
                stop_at = i;
            }
        }
    }
    for (int64_t i = stop_at + 1; i < b->n; i++) { /* mapped before the stop was known */
        w->skip[i] = 1;
        if (w->results[i].status == SEQ_SCORED)
            w->results[i].status = SEQ_NOT_RUN;
    }
    return stop_at;
}

/* Places and maps batch b's codes in its work, once, and orders the
 * sequences to score for the GPU (longest first), so that the thread that
 * feeds the GPU need not. */
static void map_batch_once(run *r, batch *b)
{
    if (b->mapped)
        return;
    double started = hmmrt_seconds(), placed, mapped;
    work *w = work_of(r, b);
    b->placed = hmmrt_place_codes(r, b, w) == 0;
    placed = hmmrt_seconds();
    b->stop_at = b->placed ? map_batch(r, b, w) : b->n;
    mapped = hmmrt_seconds();
    /* staged, the order is the placing's, unless a sequence is skipped */
    int64_t skipped = 0;
    for (int64_t i = 0; w->staged && i < b->n; i++)
        skipped += w->skip[i];
    if (!b->placed)
        w->n_ordered = -1;
    else if (!w->staged || skipped)
        w->n_ordered = hmmrt_order_by_length(w->lengths, w->skip, b->n, w->order);
    else
        w->n_ordered = b->n;
    b->mapping = hmmrt_seconds() - started;
    b->mapping_parts[0] = placed - started;
    b->mapping_parts[1] = mapped - placed;
    b->mapping_parts[2] = started + b->mapping - mapped;
    b->mapped = 1;
}

void hmmrt_map_first_batch_for_gpu(run *r)
{
    if (r->current->n > 0)
        map_batch_once(r, r->current);
}

/* ---- reading and mapping the next batch on a thread of its own ---------------- */

/* The reader's thread is kept for the whole run (worker.c), so that its
 * OpenMP team is too. */
typedef struct read_ahead {
    hmmrt_worker *worker;
    int running;
} read_ahead;

static void *read_next_batch(void *arg)
{
    run *r = arg;
    batch *b = r->next;
    b->mapped = 0;
    hmmrt_read_batch(r, b);
    if (b->n > 0)
        map_batch_once(r, b);
    return NULL;
}

/* The reader, r->next and its work belong to the reader thread until
 * finish_reading. */
static void start_reading(run *r, read_ahead *ra)
{
    ra->running = 0;
    if (hmmrt_is_last_batch(r->current))
        return;
    hmmrt_worker_run(ra->worker, read_next_batch, r); /* or now, without a thread */
    ra->running = 1;
}

static void finish_reading(run *r, read_ahead *ra)
{
    if (!ra->running)
        return;
    double started = hmmrt_seconds();
    hmmrt_worker_wait(ra->worker);
    double waited = hmmrt_seconds() - started;
    r->timing.waiting += waited;
    r->timing.waiting_reader += waited;
    ra->running = 0;
}

/* ---- scoring and formatting ------------------------------------------------------ */

/* The first and last sequences sent to the GPU, or -1 when none is. */
static void sent_range(const run *r, int64_t *first, int64_t *last)
{
    *first = *last = -1;
    for (int64_t i = 0; i < r->current->n; i++)
        if (!r->w->skip[i]) {
            if (*first < 0)
                *first = i;
            *last = i;
        }
}

static int stop_at_gpu_error(run *r, const char *message, int64_t first, int64_t last)
{
    const hmmrt_record *a = &r->current->records[first], *z = &r->current->records[last];
    char *a_name = hmmrt_shown_name(a->name), *z_name = hmmrt_shown_name(z->name);
    hmmrt_error("GPU: %s; in the batch of sequences %s (%s line %ld) to %s (%s line %ld)",
                message[0] ? message : "scoring failed, no reason given", a_name ? a_name : "?",
                a->path, a->line, z_name ? z_name : "?", z->path, z->line);
    free(a_name);
    free(z_name);
    hmmrt_stop_at_sequence(r, &r->current->records[0]);
    return HMMRT_EXIT_INTERNAL;
}

/* 1 when a score column of sequence i is -inf, +inf or NaN (NaN: a kernel's
 * mark for a sequence whose values left its precision's normal range; +inf:
 * a value overflowed, as no score of finite weights is); with
 * sums_only, only forward and backward columns, which the C path sums again
 * in long double where double's range runs out. */
static int has_score_to_redo(const run *r, const work *w, int64_t i, int sums_only)
{
    const hmmrt_program *prog = r->prog;
    const hmmrt_value *values = w->values + i * prog->n_columns;
    /* the hits mode's GPU fills the search score alone (hits_gpu.c) */
    const int only = r->opening->hits_program ? prog->hits->score_column : -1;
    for (int c = 0; c < prog->n_columns; c++)
        if ((only < 0 || c == only) && prog->columns[c].kind == HMMRT_FIELD_SCORE &&
            (!sums_only || prog->columns[c].sum_of_paths) &&
            (isinf(values[c].score) || isnan(values[c].score)))
            return 1;
    return 0;
}

/* In float a column holds values within about 2^-149 of its largest; a state
 * that carries the result but falls further behind underflows, and the score
 * comes out -inf or too low. Float kernels mark a sequence whose states spread
 * past 2^90 with a NaN score, and no float -inf is trusted: every such
 * sequence is scored again in double (range 2^-1074), which also confirms a
 * true -inf. */
static int rescore_impossible_in_double(run *r, hmmrt_gpu_input *in, char *err, size_t errlen)
{
    work *w = r->w;
    int64_t n = 0;
    unsigned char *skip = malloc((size_t)(in->n ? in->n : 1));
    if (!skip) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int64_t i = 0; i < in->n; i++) {
        skip[i] = w->skip[i] || !has_score_to_redo(r, w, i, 0);
        if (skip[i])
            continue;
        n++;
        hmmrt_clear_values(r, w, i); /* handed over cleared, as the first time */
    }
    int status = 0;
    if (n > 0 && !r->gpu_double)
        r->gpu_double = hmmrt_gpus_open(r->opening->hits_program ? r->opening->hits_program
                                                                 : r->prog,
                                        r->o, 1, err, errlen);
    if (n > 0 && !r->gpu_double)
        status = -1;
    if (n > 0 && r->gpu_double) {
        hmmrt_gpu_input again = *in;
        again.skip = skip;
        again.order = NULL; /* fewer sequences: the driver orders them */
        status = hmmrt_gpus_score(r->gpu_double, &again, err, errlen);
        r->rescored += n;
    }
    free(skip);
    return status;
}

/* Scores the mapped sequences of the current batch: 0 (also when none is
 * mapped), or -1 with a message in err and the first and last sequences sent. */
static int score_on_gpu(run *r, char *err, size_t errlen, int64_t *first, int64_t *last)
{
    sent_range(r, first, last);
    if (*first < 0)
        return 0;
    work *w = r->w;
    hmmrt_gpu_input in = {.n = r->current->n,
                          .lengths = w->lengths,
                          .offsets = w->offsets,
                          .codes = (const uint8_t *const *)w->codes,
                          .skip = w->skip,
                          .values = w->values,
                          .order = w->n_ordered >= 0 ? w->order : NULL,
                          .n_ordered = w->n_ordered,
                          /* the reader's codes where it mapped them (no copy
                           * into codes[a]), else codes[a]'s, through code_ptrs */
                          .sequence_codes = (const uint8_t *const *)w->code_ptrs,
                          .staged = w->staged};
    if (hmmrt_gpus_score(r->gpu, &in, err, errlen) != 0 ||
        (!r->in_double && rescore_impossible_in_double(r, &in, err, errlen) != 0))
        return -1;
    return 0;
}

/* The GPU's double kernels keep one scale per position, as the C path's
 * first try does, but cannot redo a sum in long double: a sequence they
 * score -inf in forward or backward (a true -inf, or paths below double's
 * range) or mark (a value below double's normal range) is scored again by
 * the C path, which confirms the -inf or gives the score. 0, or 1 when out
 * of memory. */
static int rescore_on_cpu(run *r, const batch *b, work *w, int64_t i, int64_t first_index)
{
    const hmmrt_program *prog = r->prog;
    hmmrt_clear_values(r, w, i);
    hmmrt_seq seq = {.name = b->records[i].name,
                     .codes = w->code_ptrs + i * prog->n_alphabets,
                     .length = b->records[i].length,
                     .index = first_index + i};
#pragma omp atomic
    r->rescored_on_cpu++;
    return prog->score_cpu(&seq, w->values + i * prog->n_columns,
                           &r->scratches[omp_get_thread_num()]);
}

/* Formats the rows of batch b, scored in w (sequences the double kernels
 * could not score are scored here on the CPU first). It runs on the
 * printer's thread, which omp_set_num_threads (--threads) does not reach:
 * the team's size is given here, one scratch a thread. */
static void format_batch(run *r, const batch *b, work *w, int64_t first_index)
{
    double started = hmmrt_seconds();
#pragma omp parallel for num_threads(r->n_scratches) schedule(dynamic, hmmrt_omp_chunk(b->n))
    for (int64_t i = 0; i < b->n; i++) {
        if (w->results[i].status != SEQ_SCORED)
            continue;
        const hmmrt_record *rec = &b->records[i];
        hmmrt_buf_take_failure();
        if (has_score_to_redo(r, w, i, 1) &&
            rescore_on_cpu(r, b, w, i, first_index) != 0) {
            w->results[i].status = SEQ_OUT_OF_MEMORY;
            continue;
        }
        if (!r->hits) { /* the hits mode prints no rows */
            hmmrt_buf_reset(&w->rows[i]);
            hmmrt_format_row(&w->rows[i], r->prog, rec->name, w->values + i * r->prog->n_columns);
        }
        hmmrt_count_below_range(r, rec, w->values + i * r->prog->n_columns);
        if (hmmrt_buf_take_failure())
            w->results[i].status = SEQ_OUT_OF_MEMORY;
        hmmrt_progress_add(1, rec->length);
    }
    if (r->hits) /* a traceback for each sequence that may be a hit */
        hmmrt_hits_paths_for_batch(r, b, w, first_index);
    hmmrt_progress_poll();
    r->timing.formatting += hmmrt_seconds() - started;
}

/* ---- printing on a thread of its own ------------------------------------------- */

typedef struct printer {
    hmmrt_worker worker; /* kept for the run, as the reader's */
    int running;
    run *r;
    batch *b; /* the batch it prints, or NULL */
    work *w;
    int64_t first_index; /* of b's first sequence in the input */
    int status;
} printer;

/* Formats and prints a batch and writes it out: 0, or the exit status of
 * the sequence that stopped the run, or HMMRT_EXIT_OUTPUT when the output
 * cannot be written (the run's last flush says why). */
static void *print_and_write(void *arg)
{
    printer *p = arg;
    format_batch(p->r, p->b, p->w, p->first_index);
    p->status = hmmrt_print_batch(p->r, p->b, p->w);
    if (!p->status && hmmrt_flush_output(p->r) != 0)
        p->status = HMMRT_EXIT_OUTPUT;
    return NULL;
}

/* The output and the names belong to the printer until finish_printing. */
static void start_printing(printer *p, batch *b, work *w, int64_t first_index)
{
    p->b = b;
    p->w = w;
    p->first_index = first_index;
    p->running = 1;
    hmmrt_worker_run(&p->worker, print_and_write, p); /* or now, without a thread */
}

/* Waits for the batch being printed, frees its records: its status. */
static int finish_printing(printer *p)
{
    if (!p->b)
        return 0;
    if (p->running) {
        double started = hmmrt_seconds();
        hmmrt_worker_wait(&p->worker);
        double waited = hmmrt_seconds() - started;
        p->r->timing.waiting += waited;
        p->r->timing.waiting_printer += waited;
        p->running = 0;
    }
    hmmrt_free_records(p->b);
    p->b = NULL;
    return p->status;
}

/* ---- the run ------------------------------------------------------------------------ */

/* Scores the current batch (mapped by the reader, but the first) while the
 * next one is read and mapped and the one before is printed; then hands it
 * to the printer. 0, or an exit status (the printer has finished then, and
 * the reader too). *stops: a sequence of this batch stops the run (an
 * invalid symbol), so that no batch after it needs scoring. */
static int process_batch(run *r, printer *p, hmmrt_worker *reader, int *stops)
{
    batch *b = r->current;
    read_ahead ra = {.worker = reader};
    start_reading(r, &ra);
    map_batch_once(r, b); /* the first batch; the reader maps the others */
    r->timing.mapping += b->mapping;
    for (int k = 0; k < 3; k++)
        r->timing.mapping_parts[k] += b->mapping_parts[k];
    r->timing.mapped_batches++;
    r->timing.staged_batches += r->w->staged;
    char err[2048] = "";
    int64_t first = -1, last = -1;
    int placed = b->placed, scored = 0;
    if (placed) {
        *stops = b->stop_at < b->n;
        double started = hmmrt_seconds();
        scored = score_on_gpu(r, err, sizeof err, &first, &last) == 0;
        r->timing.scoring += hmmrt_seconds() - started;
    }
    int status = finish_printing(p);
    if (!status && !placed)
        status = hmmrt_stop_out_of_memory_for_batch(r);
    else if (!status && !scored)
        status = stop_at_gpu_error(r, err, first, last);
    if (!status)
        start_printing(p, b, r->w, r->first_index);
    finish_reading(r, &ra);
    return status;
}

/* The batches in turn; when it returns, neither the reader nor the printer
 * is running. */
static int score_batches(run *r, printer *p, hmmrt_worker *reader)
{
    batch *printed = &r->batches[2]; /* the slot of the batch before the current */
    for (;;) {
        batch *b = r->current;
        int stops = 0;
        int status = b->n > 0 ? process_batch(r, p, reader, &stops) : 0;
        if (status)
            return status;
        if (stops || hmmrt_is_last_batch(b)) {
            status = finish_printing(p);
            if (!status && b->failed)
                status = hmmrt_stop_at_input_error(r, b);
            return status;
        }
        /* the batch before is printed and freed: the batch after it goes there */
        batch *free_slot = printed;
        printed = b;
        r->current = r->next;
        r->next = free_slot;
        r->w = work_of(r, r->current);
        r->first_index += b->n;
    }
}

int hmmrt_score_batches_on_gpu(run *r)
{
    printer p = {.r = r};
    hmmrt_worker reader;
    hmmrt_worker_init(&p.worker);
    hmmrt_worker_init(&reader);
    int status = score_batches(r, &p, &reader);
    hmmrt_worker_stop(&reader);
    hmmrt_worker_stop(&p.worker);
    return status;
}
