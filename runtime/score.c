/* score.c: the scoring run of a generated program: sets it up, reads the
 * FASTA input in batches of bounded memory and scores each on the CPU in
 * parallel (OpenMP, one scratch per thread) while one thread reads the next,
 * or hands the batches to score_gpu.c when a GPU opens; score_batch.c reads,
 * maps and prints a batch for both paths. */
#include "score_run.h"
#include "dense_batch.h"
#include "score_gpu.h"
#include "hits.h"

#include "hmmrt_gpu.h"
#include "hmmrt_scan.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    CPU_BATCH_RECORDS = 1 << 16,
    GPU_BATCH_RECORDS = 1 << 18, /* a GPU needs hundreds of thousands in flight */
    OUTPUT_BUFFER = 1 << 20,
    READ_PIECE_BYTES = 4 << 20, /* the FASTA a thread parses at once */
    READ_BLOCK_MAX = 256 << 20, /* ... and all threads together */
    BATCH_VALUES_MAX = 1 << 22  /* a batch's output values (columns x records): 128 MB */
};
#define CPU_BATCH_RESIDUES ((int64_t)64 << 20)
/* small enough that reading the next batch overlaps the GPU's work on this
 * one (reading, about 0.4 GB/s, is the slowest stage end to end) */
#define GPU_BATCH_RESIDUES ((int64_t)1 << 28)

/* ---- setting up and taking down ------------------------------------------ */

/* Threads of the probe wait here until every one has started. */
typedef struct thread_probe {
    pthread_mutex_t lock;
    pthread_cond_t go;
    int released;
} thread_probe;

static void *wait_for_release(void *arg)
{
    thread_probe *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->released)
        pthread_cond_wait(&p->go, &p->lock);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* Starts n - 1 threads (as OpenMP's team will, with the same default
 * stacks), all alive at once, and ends them: 0, or the error of the first
 * that would not start. OpenMP exits with status 1 when it cannot start its
 * team (a memory limit, the limit on processes), which a caller would read
 * as a bad command line. */
static int threads_start(int n)
{
    pthread_t *threads = calloc((size_t)(n > 1 ? n : 1), sizeof *threads);
    if (!threads)
        return ENOMEM;
    thread_probe p = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    int started = 0, error = 0;
    while (started < n - 1 && !error) {
        error = pthread_create(&threads[started], NULL, wait_for_release, &p);
        started += !error;
    }
    pthread_mutex_lock(&p.lock);
    p.released = 1;
    pthread_cond_broadcast(&p.go);
    pthread_mutex_unlock(&p.lock);
    for (int k = 0; k < started; k++)
        pthread_join(threads[k], NULL);
    free(threads);
    return error;
}

static size_t at_least_one(int n)
{
    return (size_t)(n > 0 ? n : 1);
}

static int alloc_work(work *w, const hmmrt_program *prog, int64_t max_records)
{
    size_t n = (size_t)max_records;
    w->results = calloc(n, sizeof *w->results);
    w->values = calloc(n * at_least_one(prog->n_columns), sizeof *w->values);
    w->rows = calloc(n, sizeof *w->rows);
    w->offsets = calloc(n, sizeof *w->offsets);
    w->lengths = calloc(n, sizeof *w->lengths);
    w->skip = calloc(n, sizeof *w->skip);
    w->name_hashes = calloc(n, sizeof *w->name_hashes);
    w->names_seen = calloc(n, sizeof *w->names_seen);
    w->order = calloc(n, sizeof *w->order);
    w->code_ptrs = calloc(n * at_least_one(prog->n_alphabets), sizeof *w->code_ptrs);
    w->codes = calloc(at_least_one(prog->n_alphabets), sizeof *w->codes);
    return w->results && w->values && w->rows && w->offsets && w->lengths && w->skip &&
                   w->name_hashes && w->names_seen && w->order && w->code_ptrs && w->codes
               ? 0
               : -1;
}

static void free_work(work *w, const hmmrt_program *prog, int64_t max_records)
{
    if (w->values)
        for (size_t i = 0; i < (size_t)max_records * (size_t)prog->n_columns; i++)
            hmmrt_buf_free(&w->values[i].text);
    if (w->rows)
        for (size_t i = 0; i < (size_t)max_records; i++)
            hmmrt_buf_free(&w->rows[i]);
    if (w->codes)
        hmmrt_free_code_arrays(w, prog->n_alphabets);
    free(w->results);
    free(w->values);
    free(w->rows);
    free(w->offsets);
    free(w->lengths);
    free(w->skip);
    free(w->name_hashes);
    free(w->names_seen);
    free(w->order);
    free(w->code_ptrs);
    free(w->codes);
}

/* The batch limits of the scorer: the GPU's are larger. HMMRT_GPU_BATCH
 * sets the GPU's records a batch, for measuring (docs/internals.md). */
static void set_batch_limits(run *r, int for_gpu)
{
    r->max_records = for_gpu ? GPU_BATCH_RECORDS : CPU_BATCH_RECORDS;
    r->max_residues = for_gpu ? GPU_BATCH_RESIDUES : CPU_BATCH_RESIDUES;
    const char *records = for_gpu ? getenv("HMMRT_GPU_BATCH") : NULL;
    long n = records ? atol(records) : 0;
    if (n >= 1024 && n <= (1L << 24)) {
        r->max_records = n;
        r->max_residues = (int64_t)n * 1024 > r->max_residues ? (int64_t)n * 1024 : r->max_residues;
    }
    /* a program of many models (2,000 columns for 1,000 profiles) keeps its
     * batch's values within BATCH_VALUES_MAX (32 bytes each) */
    long columns = r->prog && r->prog->n_columns > 0 ? r->prog->n_columns : 1;
    if ((long)r->max_records * columns > BATCH_VALUES_MAX)
        r->max_records = BATCH_VALUES_MAX / columns > 64 ? BATCH_VALUES_MAX / columns : 64;
}

/* Sets up the run for the GPU (the larger batches, a third batch, and a
 * work for each batch) when one is being opened, for the CPU otherwise. */
static int open_run(run *r, const hmmrt_program *prog, const hmmrt_options *o,
                    gpu_opening *opening)
{
    memset(r, 0, sizeof *r);
    r->prog = prog;
    r->o = o;
    r->opening = opening;
    int gpu = opening->wanted;
    set_batch_limits(r, gpu);
    if (o->threads > 0)
        omp_set_num_threads(o->threads);
    r->n_scratches = omp_get_max_threads();
    r->scratches = calloc((size_t)r->n_scratches, sizeof *r->scratches);
    r->reader = hmmrt_reader_open(o->files, o->n_files);
    if (r->reader) /* a block of 4 MB a thread, at most 256 MB */
        hmmrt_reader_set_pieces(r->reader, r->n_scratches,
                                r->n_scratches * (size_t)READ_PIECE_BYTES > READ_BLOCK_MAX
                                    ? READ_BLOCK_MAX / (size_t)r->n_scratches
                                    : READ_PIECE_BYTES);
    r->names = hmmrt_names_new(HMMRT_NAMES_MAX);
    r->below_range = calloc((size_t)(prog->n_columns > 0 ? prog->n_columns : 1),
                            sizeof *r->below_range);
    r->current = &r->batches[0];
    r->next = &r->batches[1];
    int n_batches = gpu ? 3 : 2, n_works = gpu ? 3 : 1, ok = 1;
    r->work_records = r->max_records;
    for (int k = 0; k < n_batches; k++) {
        r->batches[k].records = calloc((size_t)r->max_records, sizeof(hmmrt_record));
        ok = ok && r->batches[k].records;
    }
    for (int k = 0; k < n_works; k++)
        ok = ok && alloc_work(&r->works[k], prog, r->max_records) == 0;
    r->w = &r->works[0];
    int out_ok = hmmrt_out_open(&r->out, STDOUT_FILENO, OUTPUT_BUFFER) == 0;
    return ok && r->scratches && r->reader && r->names && r->below_range && out_ok ? 0 : -1;
}

static void close_run(run *r)
{
    hmmrt_progress_finish();
    if (r->scratches)
        for (int t = 0; t < r->n_scratches; t++)
            hmmrt_scratch_free(&r->scratches[t]);
    free(r->scratches);
    for (int k = 0; k < 3; k++) {
        if (r->batches[k].records)
            hmmrt_free_records(&r->batches[k]);
        free(r->batches[k].records);
    }
    hmmrt_reader_close(r->reader);
    hmmrt_stores_free_kept();
    hmmrt_names_free(r->names);
    free(r->below_range);
    hmmrt_out_close(&r->out);
    for (int k = 0; k < 3; k++) {
        hmmrt_hits_ready_free(&r->works[k]);
        free_work(&r->works[k], r->prog, r->work_records);
    }
    hmmrt_dense_batch_close(r);
}

/* ---- scoring a batch ------------------------------------------------------ */

static void score_one(run *r, const batch *b, int64_t i, hmmrt_scratch *scratch)
{
    const hmmrt_program *prog = r->prog;
    const hmmrt_record *rec = &b->records[i];
    if (hmmrt_map_sequence(r, r->w, rec, i) != 0)
        return;
    if (!r->dense_scores) /* else cleared, and some filled, for the whole batch (dense_batch.c) */
        hmmrt_clear_values(r, r->w, i);
    hmmrt_value *values = r->w->values + i * prog->n_columns;
    hmmrt_seq seq = {.name = rec->name,
                     .codes = r->w->code_ptrs + i * prog->n_alphabets,
                     .length = rec->length,
                     .index = r->first_index + i,
                     .dense_scores = r->dense_scores
                                         ? r->dense_scores + i * hmmrt_dense_batch_width(prog)
                                         : NULL};
    hmmrt_buf_take_failure();
    /* the hits mode: the search score alone, the rest for the sequences that
     * may be hits (hmmrt_hits_paths_for_batch); a DNA model's hits come from
     * its windows (hits_strands.c), which need no score of the whole sequence */
    int failed = 0;
    if (r->hits && r->hits->strands)
        values[prog->hits->score_column].score = 0; /* read by no one */
    else
        failed = r->hits_paths_later ? prog->hits->search(&seq, values, scratch)
                                     : prog->score_cpu(&seq, values, scratch);
    if (!failed && !r->hits) { /* the hits mode prints no rows */
        hmmrt_buf_reset(&r->w->rows[i]);
        hmmrt_format_row(&r->w->rows[i], prog, rec->name, values);
    }
    if (!failed)
        hmmrt_count_below_range(r, rec, values);
    failed |= hmmrt_buf_take_failure();
    r->w->results[i].status = failed ? SEQ_OUT_OF_MEMORY : SEQ_SCORED;
    hmmrt_progress_add(1, rec->length);
}

/* Scores the current batch on every thread; the main thread first reads the
 * next batch (unless the current one is the last; the reader's pieces then
 * take turns on that thread, as every other thread is scoring), then joins in. */
static void score_and_read_ahead(run *r)
{
    const batch *b = r->current;
    seq_result *results = r->w->results;
    int64_t stop_at = b->n; /* sequences after this one are not scored */
    int chunk = hmmrt_omp_chunk(b->n);
    /* a long sequence in a batch of few: scored after the others, with every
       thread for its calls' scans (runtime/scan.c) */
    const hmmrt_program *prog = r->prog;
    int64_t n_long = 0;
    for (int64_t i = 0; i < b->n; i++)
        n_long += hmmrt_scan_long(b->records[i].length);
    unsigned char *deferred = n_long ? calloc((size_t)b->n, 1) : NULL;
    for (int64_t i = 0; deferred && i < b->n; i++)
        deferred[i] = hmmrt_scan_defers(prog->scan_calls, prog->n_scan_calls,
                                        b->records[i].length, n_long);
#pragma omp parallel
    {
        hmmrt_scratch *scratch = &r->scratches[omp_get_thread_num()];
        int draws_progress = omp_get_thread_num() == 0;
#pragma omp master
        if (!hmmrt_is_last_batch(b))
            hmmrt_read_batch(r, r->next);
#pragma omp for schedule(dynamic, chunk)
        for (int64_t i = 0; i < b->n; i++) {
            int64_t limit;
#pragma omp atomic read
            limit = stop_at;
            r->w->name_hashes[i] = hmmrt_name_hash(b->records[i].name);
            results[i].status = SEQ_NOT_RUN;
            if (i > limit || (deferred && deferred[i]))
                continue;
            score_one(r, b, i, scratch);
            if (hmmrt_stops_the_run(r, &results[i])) {
#pragma omp critical(hmmrt_stop_at)
                if (i < stop_at) {
#pragma omp atomic write
                    stop_at = i;
                }
            }
            if (draws_progress)
                hmmrt_progress_poll();
        }
    }
    for (int64_t i = 0; deferred && i < b->n && i <= stop_at; i++) {
        if (!deferred[i])
            continue;
        score_one(r, b, i, &r->scratches[0]);
        if (hmmrt_stops_the_run(r, &results[i]))
            stop_at = i;
        hmmrt_progress_poll();
    }
    free(deferred);
}

static void warn_duplicates_total(const run *r)
{
    if (r->duplicates > DUPLICATE_WARNINGS_SHOWN)
        hmmrt_warning("%ld sequences have the name of an earlier sequence", r->duplicates);
}

/* ---- the run -------------------------------------------------------------- */

/* Every file must open before anything is scored: a typo in the last name
 * should not cost a long run. The reader keeps what it opened. The first
 * file that does not open (err says why), or -1. */
static int first_unreadable(const run *r, char *err, size_t errlen)
{
    return hmmrt_reader_open_files(r->reader, err, errlen);
}

static int stop_at_unreadable(run *r, int file, const char *err)
{
    hmmrt_error("%s", err);
    hmmrt_out_incomplete(&r->out, r->o->files[file]);
    return HMMRT_EXIT_INPUT;
}

/* Scores and prints the current batch on the CPU while the next one is read. */
static int process_current_batch(run *r)
{
    batch *b = r->current;
    int status = hmmrt_place_codes(r, b, r->w) != 0 ? hmmrt_stop_out_of_memory_for_batch(r) : 0;
    double started = hmmrt_seconds();
    if (!status && hmmrt_dense_batch_score(r) != 0) /* dense sums over the whole batch first */
        status = hmmrt_stop_out_of_memory_for_batch(r);
    if (!status) {
        score_and_read_ahead(r);
        if (r->hits)
            hmmrt_hits_paths_for_batch(r, b, r->w, r->first_index);
        r->timing.scoring += hmmrt_seconds() - started;
        status = hmmrt_print_batch(r, b, r->w);
    }
    r->first_index += b->n;
    hmmrt_free_records(b);
    return status;
}

static void describe_scorer(run *r)
{
    static char cpu[64];
    snprintf(cpu, sizeof cpu, "CPU, %d thread%s", r->n_scratches, r->n_scratches == 1 ? "" : "s");
    r->timing.scorer = r->gpu ? "GPU" : cpu;
    r->timing.fused = !r->gpu;
}

/* Waits for the GPU's opening; without a GPU, the batches after the first
 * are the CPU's size. */
static void settle_scorer(run *r)
{
    r->gpu = hmmrt_finish_opening_gpu(r->opening);
    /* the hits mode in two passes (hits_gpu.c): the GPU was opened with the
     * search score's call alone, or the CPU path runs it alone */
    const hmmrt_hits_info *info = r->prog->hits;
    if (r->hits && info && info->traceback_column >= 0)
        r->hits_paths_later = r->gpu ? r->opening->hits_program != NULL : info->search != NULL;
    r->in_double = r->opening->in_double;
    r->timing.opening = r->opening->seconds;
    r->timing.waiting += r->opening->waited;
    if (!r->gpu)
        set_batch_limits(r, 0);
    describe_scorer(r);
}

/* The first batch is read (and for the GPU mapped) while the GPU opens. */
static int score_everything(run *r)
{
    char err[1024];
    int unreadable = first_unreadable(r, err, sizeof err);
    if (unreadable < 0)
        hmmrt_read_batch(r, r->current);
    if (unreadable < 0 && r->opening->wanted)
        hmmrt_map_first_batch_for_gpu(r);
    settle_scorer(r);
    if (unreadable >= 0)
        return stop_at_unreadable(r, unreadable, err);
    int status = 0;
    if (r->gpu)
        return hmmrt_score_batches_on_gpu(r);
    for (;;) {
        batch *b = r->current;
        if (b->n > 0)
            status = process_current_batch(r);
        if (!status && b->failed)
            status = hmmrt_stop_at_input_error(r, b);
        if (status || b->ended || b->failed || hmmrt_flush_output(r) != 0)
            return status;
        r->current = r->next;
        r->next = b;
    }
}

static void warn_skipped_total(const run *r)
{
    if (r->skipped == 1)
        hmmrt_warning("1 sequence was skipped");
    else if (r->skipped > 1)
        hmmrt_warning("%ld sequences were skipped", r->skipped);
}

/* A forward or backward score of -inf for a sequence that its model surely
 * gives a path (possible_from) is a probability below long double's range
 * (forward and backward sums that leave double's are done again in long
 * double): said once a column. */
static void warn_below_range(const run *r)
{
    for (int c = 0; c < r->prog->n_columns; c++) {
        long long n = r->below_range[c];
        if (n > 0)
            hmmrt_warning("%lld sequence%s scored -inf in %s, but its model gives every sequence "
                          "of %ld or more symbols a path: %s probabilit%s below what a long "
                          "double holds in one scale per position (about e^-11355 under the "
                          "likeliest state), not 0; read such a -inf as far below any threshold",
                          n, n == 1 ? "" : "s", r->prog->columns[c].label,
                          r->prog->columns[c].possible_from, n == 1 ? "its" : "their",
                          n == 1 ? "y is" : "ies are");
    }
}

static void report_timing(run *r, double started)
{
    r->timing.total = hmmrt_seconds() - started;
    hmmrt_reader_seconds(r->reader, r->timing.reader);
    hmmrt_print_timing(stderr, &r->timing);
    hmmrt_dense_batch_report(r, stderr);
    hmmrt_scan_report(stderr, r->gpu != NULL);
    if (r->gpu)
        hmmrt_gpus_report(r->gpu, stderr);
    if (r->gpu && r->in_double && !r->o->use_double)
        fprintf(stderr, "  in double precision: %s\n", r->prog->gpu->needs_double);
    if (r->rescored)
        fprintf(stderr, "  %lld sequence%s scored -inf or beyond float's range, rescored in double\n",
                (long long)r->rescored, r->rescored == 1 ? "" : "s");
    if (r->rescored_on_cpu)
        fprintf(stderr, "  %lld sequence%s scored -inf or beyond double's range on the GPU, "
                        "scored again on the CPU\n", (long long)r->rescored_on_cpu,
                r->rescored_on_cpu == 1 ? "" : "s");
    if (r->hits && r->hits->strands)
        hmmrt_strands_report(r->hits, stderr);
    else if (r->hits_paths_later)
        fprintf(stderr, "  hits mode: the %s ran the search score's call alone; the viterbi "
                        "tracebacks of the %lld sequence%s that could be reported were made on "
                        "the CPU\n", r->gpu ? "GPU" : "CPU", (long long)r->hits_paths,
                r->hits_paths == 1 ? "" : "s");
    long long wide = hmmrt_long_double_sums();
    if (wide)
        fprintf(stderr, "  %lld forward or backward sum%s fell below double's range, done again "
                        "in long double on the CPU\n", wide, wide == 1 ? "" : "s");
    if (r->gpu_double) {
        fprintf(stderr, "rescoring in double (its kernels add to the float run's):\n");
        hmmrt_gpus_report(r->gpu_double, stderr);
    }
}

int hmmrt_score_files(const hmmrt_program *prog, const hmmrt_options *o)
{
    if (!prog->score_cpu) {
        hmmrt_error("this program was built without a CPU scorer");
        return HMMRT_EXIT_INTERNAL;
    }
    hmmrt_set_decimals(o->decimals);
    int threads_error = o->threads > 1 ? threads_start(o->threads) : 0;
    if (threads_error) {
        hmmrt_error("cannot start %d threads: %s (out of memory, or a limit on processes); "
                    "pass --threads with fewer", o->threads, strerror(threads_error));
        return HMMRT_EXIT_INTERNAL;
    }
    double started = hmmrt_seconds();
    gpu_opening opening;
    hmmrt_start_opening_gpu(&opening, prog, o);
    run r;
    if (open_run(&r, prog, o, &opening) != 0) {
        close_run(&r);
        hmmrt_gpus_close(hmmrt_finish_opening_gpu(&opening));
        hmmrt_error("out of memory");
        return HMMRT_EXIT_INTERNAL;
    }
    hmmrt_hits hits;
    if (o->hits.first) {
        int hits_status = hmmrt_hits_open(&hits, prog, o);
        if (hits_status) {
            hmmrt_hits_close(&hits);
            close_run(&r);
            hmmrt_gpus_close(hmmrt_finish_opening_gpu(&opening));
            return hits_status;
        }
        r.hits = &hits;
        hits.out = &r.out; /* --hmmscan writes each sequence's list as it comes */
    }
    int dense_status = hmmrt_dense_batch_open(&r);
    if (dense_status != 0) {
        if (r.hits)
            hmmrt_hits_close(r.hits);
        close_run(&r);
        hmmrt_gpus_close(hmmrt_finish_opening_gpu(&opening));
        return dense_status < -1 ? HMMRT_EXIT_INTERNAL : HMMRT_EXIT_USAGE;
    }
    hmmrt_out_catch_signals(&r.out);
    int show = o->progress == HMMRT_PROGRESS_AUTO ? isatty(STDERR_FILENO) : o->progress;
    hmmrt_progress_start(show);
    if (o->header && !r.hits) /* out at once: a run stopped by a signal keeps it */
        hmmrt_out_header(&r.out, prog);
    hmmrt_flush_output(&r);
    int status = score_everything(&r);
    hmmrt_progress_finish();
    warn_skipped_total(&r);
    warn_duplicates_total(&r);
    warn_below_range(&r);
    if (r.hits && (status == 0 || status == HMMRT_EXIT_SKIPPED)) /* the list, the tables */
        status = hmmrt_hits_finish(r.hits, &r.out);
    int flushed = hmmrt_flush_output(&r);
    hmmrt_out_release_signals(); /* every row is out, or cannot be */
    if (flushed != 0) {
        hmmrt_error("cannot write the output: %s", strerror(r.out.error));
        status = HMMRT_EXIT_OUTPUT;
    } else if (!status && r.skipped > 0) {
        status = HMMRT_EXIT_SKIPPED;
    }
    if (o->timing)
        report_timing(&r, started);
    if (r.gpu || r.gpu_double)
        hmmrt_exit_leaving_gpu(status); /* every row is out: no waiting for the driver */
    hmmrt_gpus_close(r.gpu_double);
    close_run(&r);
    if (r.hits)
        hmmrt_hits_close(r.hits);
    hmmrt_gpus_close(r.gpu);
    hmmrt_hits_gpu_free(&opening);
    return status;
}
