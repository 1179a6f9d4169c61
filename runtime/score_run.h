/* score_run.h: the state of a scoring run and what both scoring paths do to a
 * batch (score_batch.c), shared by score.c (the run, the CPU path),
 * score_gpu.c (the GPU path) and gpu_opening.c. Private to the runtime. */
#ifndef HMMRT_SCORE_RUN_H
#define HMMRT_SCORE_RUN_H

#include "internal.h"

#include <pthread.h>

/* Records read together; batches take turns: one is scored while the next
 * is read (and, on the GPU path, the one before is printed). */
typedef struct batch {
    hmmrt_record *records; /* run.max_records */
    int64_t n, residues;
    int ended;             /* the read stopped at the end of the input */
    int failed;            /* ... or at an error, described in error */
    char error[1024];
    /* The GPU path maps a batch as soon as it is read (on the reader's
     * thread, but for the first): */
    int mapped;            /* its codes are placed and mapped ... */
    int placed;            /* ... (0: no memory for its codes) ... */
    int64_t stop_at;       /* ... up to the sequence that stops the run, or n */
    double mapping;        /* ... in this many seconds: placing, mapping and staging, */
    double mapping_parts[3]; /* ordering (hmmrt_run_timing.mapping_parts) */
} batch;

typedef enum seq_status {
    SEQ_NOT_RUN,      /* after a sequence that stops the run */
    SEQ_SCORED,       /* scored and formatted (on the GPU path: mapped, to be scored) */
    SEQ_INVALID,      /* a symbol outside an alphabet */
    SEQ_OUT_OF_MEMORY
} seq_status;

typedef struct seq_result {
    seq_status status;
    int alphabet;     /* SEQ_INVALID: the alphabet ... */
    int64_t position; /* ... and the 0-based position of the symbol outside it */
} seq_result;

/* What scoring one batch needs, one entry per sequence of the batch. */
typedef struct work {
    seq_result *results;
    hmmrt_value *values;       /* n_columns per sequence */
    hmmrt_buf *rows;           /* each sequence's output line */
    int64_t *offsets;          /* where each sequence's codes start */
    int64_t *lengths;          /* each sequence's length (the GPU's input) */
    unsigned char *skip;       /* 1: the GPU does not score it */
    uint64_t *name_hashes;     /* hmmrt_name_hash of each name, for the duplicate check ... */
    hmmrt_name_seen *names_seen; /* ... and what it found */
    int64_t *order;            /* the GPU's order of the batch (hmmrt_gpu_input's) ... */
    int64_t n_ordered;         /* ... and its length, or -1 when it was not worked out */
    const uint8_t **code_ptrs; /* n_alphabets per sequence */
    uint8_t **codes;           /* per alphabet, the codes of the whole batch */
    size_t codes_cap;
    int codes_pinned;          /* codes are page-locked (hmmrt_pinned_alloc) ... */
    int staged;                /* ... and laid out as the GPU's chunks (score_batch.c) */
    /* the hits mode: the batch's hits whose domains and null2 were worked
     * out on every thread (hits_gpu.c), in input order, and the printer's
     * place among them (score_batch.c) */
    struct hmmrt_hit *ready;
    int64_t *ready_at, n_ready, next_ready;
    unsigned char *counted_only; /* per sequence, 1: it cannot be reported (only counted) */
} work;

typedef struct run {
    const hmmrt_program *prog;
    const hmmrt_options *o;
    struct gpu_opening *opening; /* the GPU's, while the first batch is read */
    struct hmmrt_gpus *gpu;  /* the open GPUs (gpu_multi.c), or NULL: the CPU scores */
    int in_double;           /* it scores in double (--double, or the program needs it) */
    struct hmmrt_gpus *gpu_double; /* opened on first need: rescores in double what float gave -inf */
    int64_t rescored;        /* sequences rescored so */
    int64_t rescored_on_cpu; /* sequences the double kernels gave -inf or marked, scored
                                again on the CPU */
    int64_t hits_paths;      /* the hits mode: tracebacks made on the CPU for the sequences
                                that may be reported (hits_gpu.c) ... */
    int hits_paths_later;    /* ... because the GPU or the CPU path ran the search score's
                                call alone */
    int64_t *below_range;    /* per column: its -inf scores that can only be a
                                probability below long double's range (possible_from) */
    int64_t max_records;     /* a batch holds at most this many records ... */
    int64_t max_residues;    /* ... and stops growing past this many residues */
    int64_t work_records;    /* the records the works were made for (max_records then) */
    hmmrt_reader *reader;
    hmmrt_out out;
    hmmrt_scratch *scratches; /* one per thread */
    int n_scratches;
    /* The CPU path takes turns with two batches and one work; the GPU path
     * prints a batch on a thread of its own while it scores the next and
     * reads and maps the one after, so it has three batches, each with its
     * own work (works[k] is batches[k]'s). */
    batch batches[3];
    batch *current, *next;
    work works[3];
    work *w;                 /* the current batch's */
    int64_t first_index; /* input index of the current batch's first sequence */
    long skipped;
    hmmrt_names *names;      /* every name printed or skipped so far ... */
    long duplicates;         /* ... and how many were there already */
    int names_unchecked;     /* the table is full: later names are not checked */
    hmmrt_run_timing timing;
    struct hmmrt_hits *hits; /* the hits mode (hits.h): scored sequences go there, not out */
    struct dense_batch_state *dense; /* dense_batch.c's, or NULL: no batched dense calls */
    const double *dense_scores; /* the current batch's batched dense scores, or NULL */
} run;

/* Opening the GPU while the run reads its first batch (gpu_opening.c). */
typedef struct gpu_opening {
    const hmmrt_program *prog;
    const hmmrt_options *o;
    int wanted;      /* the program has a GPU driver and the options allow it */
    int in_double;   /* ... in double: --double, or the weights need it */
    int running;     /* a thread is opening it */
    int finished;    /* hmmrt_finish_opening_gpu was called */
    pthread_t thread;
    struct hmmrt_gpus *gpu; /* the open GPUs, or NULL ... */
    char why[1024];  /* ... and why */
    double seconds;  /* the opening's own time */
    double waited;   /* the time the run waited for it */
    struct hmmrt_program *hits_program; /* the hits mode's: the GPU runs the search
                                           score's call alone (hits_gpu.c), or NULL */
} gpu_opening;
/* Starts opening the GPU when the program and options want one; a program
 * that must score on the CPU gets its note now. */
void hmmrt_start_opening_gpu(gpu_opening *op, const hmmrt_program *prog, const hmmrt_options *o);
/* Waits for the opening: the open GPU, or NULL after a note saying why
 * (where one was wanted). Called again, returns the same. */
struct hmmrt_gpus *hmmrt_finish_opening_gpu(gpu_opening *op);

/* The GPUs of a run (gpu_multi.c): --device's one, or --devices' several,
 * each batch dealt out among them. The same calls as the driver's. */
typedef struct hmmrt_gpus hmmrt_gpus;
hmmrt_gpus *hmmrt_gpus_open(const hmmrt_program *prog, const hmmrt_options *o, int use_double,
                            char *err, size_t errlen);
struct hmmrt_gpu_input;
int hmmrt_gpus_score(hmmrt_gpus *g, const struct hmmrt_gpu_input *in, char *err, size_t errlen);
void hmmrt_gpus_report(const hmmrt_gpus *g, FILE *out);
void hmmrt_gpus_close(hmmrt_gpus *g);
int hmmrt_gpus_count(const hmmrt_gpus *g);

/* The hits mode on the GPU (hits_gpu.c): the program the GPU is opened
 * with (prog, or a copy whose GPU side runs only the search score's call,
 * kept in op->hits_program until hmmrt_hits_gpu_free) ... */
const hmmrt_program *hmmrt_hits_gpu_program(gpu_opening *op);
void hmmrt_hits_gpu_free(gpu_opening *op);
/* ... and, where the search score's call ran alone (run.hits_paths_later),
 * the viterbi tracebacks (every column but the search score) of the
 * sequences of batch b that may still be reported, from the CPU on every
 * thread, after the batch is scored (first_index: its first sequence's);
 * a sequence that ran out of memory is marked so. */
void hmmrt_hits_paths_for_batch(run *r, const batch *b, work *w, int64_t first_index);
/* Frees what of w's prepared hits the printer did not take. */
void hmmrt_hits_ready_free(work *w);

enum { DUPLICATE_WARNINGS_SHOWN = 10 }; /* then duplicate names are only counted */

/* score_batch.c, for both paths */
void hmmrt_read_batch(run *r, batch *b); /* fills b from the reader; timed */
int hmmrt_is_last_batch(const batch *b);
/* Maps record rec, sequence i of w's batch, to every alphabet: 0, or -1
 * with the first bad symbol noted in its result. */
int hmmrt_map_sequence(run *r, work *w, const hmmrt_record *rec, int64_t i);
void hmmrt_clear_values(run *r, work *w, int64_t i); /* NAN scores, empty texts */
int hmmrt_stops_the_run(const run *r, const seq_result *res);
/* Counts the scores of sequence rec that are -inf where its length is at least
 * the column's possible_from (run.below_range); from many threads at once. */
void hmmrt_count_below_range(run *r, const hmmrt_record *rec, const hmmrt_value *values);
int hmmrt_omp_chunk(int64_t n_sequences); /* for schedule(dynamic, ...) */
/* Prints the rows of batch b, scored in w; 0, or the status of the sequence
 * that stopped the run. Timed as writing. */
int hmmrt_print_batch(run *r, const batch *b, work *w);
/* Writes out what the output holds: 0, or -1 (r->out.error says why). Timed. */
int hmmrt_flush_output(run *r);
void hmmrt_free_records(batch *b);
/* Ends the output at an input error of batch b (its message, "# incomplete"). */
int hmmrt_stop_at_input_error(run *r, const batch *b);
/* Room in w for batch b's codes, and where each goes: 0, or -1 out of
 * memory, which hmmrt_stop_out_of_memory_for_batch then reports. */
int hmmrt_place_codes(run *r, const batch *b, work *w);
void hmmrt_free_code_arrays(work *w, int n_alphabets); /* w->codes[a] for every a */
int hmmrt_stop_out_of_memory_for_batch(run *r);
/* Ends the output with "# incomplete: stopped at sequence NAME (FILE line N)". */
void hmmrt_stop_at_sequence(run *r, const hmmrt_record *rec);

#endif
