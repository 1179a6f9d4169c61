/* internal.h: declarations shared by the runtime's own files (and its unit
 * tests). Not part of the contract with generated code: that is hmmrt.h. */
#ifndef HMMRT_INTERNAL_H
#define HMMRT_INTERNAL_H

#include "hmmrt.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>

#define HMMRT_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* ---- buf.c ---------------------------------------------------------------- */
/* Longest text hmmrt_format_score writes, NUL included (DBL_MAX with 17 decimals). */
#define HMMRT_SCORE_MAX 400
/* Writes score as the output table does into out; returns its length. */
size_t hmmrt_format_score(char out[HMMRT_SCORE_MAX], double score);
/* decimal.c: x with `decimals` decimals (0..9) into out (at least 32 bytes),
 * as printf's "%.*f" writes it but without a sign when it reads as zero; its
 * length, or -1 where x is beyond 2^52 / 10^decimals, NaN or infinite. */
int hmmrt_fixed_text(char *out, double x, int decimals);
/* stores.c: memory for the FASTA parser's stores, given back when their
 * records are done with and taken again by the next pieces (malloc's
 * memory: realloc and free also take it); the kept ones freed at the end. */
void *hmmrt_store_take(size_t need);
void hmmrt_store_give_back(void *store);
void hmmrt_stores_free_kept(void);
/* openblas_dl.c: OpenBLAS, loaded at run time: 1 when it is there (else
 * *reason says why not); cblas_dgemm's arguments (101 row-major, 111 no
 * transpose, 112 transpose), only once it is loaded. */
int hmmrt_openblas_loaded(const char **reason);
void hmmrt_openblas_single_threaded(void);
void hmmrt_dgemm(int order, int trans_a, int trans_b, int m, int n, int k, double alpha,
                 const double *a, int lda, const double *b, int ldb, double beta, double *c,
                 int ldc);
void hmmrt_buf_append(hmmrt_buf *b, const char *s, size_t n);
/* 1 if a hmmrt_buf of this thread failed to grow since the last call, then clears it.
 * Until then the failure is sticky: no buffer of this thread grows. */
int hmmrt_buf_take_failure(void);
/* 1 while a failure of this thread is not taken: loops that fill a buffer stop. */
int hmmrt_buf_failed(void);
/* An array of *cap elements of `size` bytes (data, or NULL with *cap 0) with
 * room for `need` of them: data itself when it has, else a realloc to
 * `first` or double *cap until it does (*cap updated). NULL when memory
 * runs out; data and *cap are then unchanged. */
void *hmmrt_grow(void *data, size_t *cap, size_t need, size_t size, size_t first);

/* ---- report.c: messages on standard error ---------------------------------- */
/* The name messages start with: the base name of argv0, else fallback. */
void hmmrt_set_progname(const char *argv0, const char *fallback);
void hmmrt_default_progname(const char *name); /* names it only if still unnamed */
const char *hmmrt_progname(void);
void hmmrt_error(const char *fmt, ...) HMMRT_PRINTF(1, 2);   /* "PROG: error: ..." */
void hmmrt_warning(const char *fmt, ...) HMMRT_PRINTF(1, 2); /* "PROG: warning: ..." */
void hmmrt_note(const char *fmt, ...) HMMRT_PRINTF(1, 2);    /* "PROG: note: ..." */
/* gpu_leave.c: the GPU driver says at open whether its device may be left to
 * a child's teardown; a scoring run then ends in hmmrt_exit_leaving_gpu,
 * which exits with status (and returns only where it cannot leave). */
void hmmrt_gpu_teardown_leavable(int yes);
void hmmrt_exit_leaving_gpu(int status);
/* Under mpirun the run goes on after its table (the merge): never leave. */
void hmmrt_gpu_never_leave(void);

/* ---- alphabet.c ------------------------------------------------------------ */
/* A byte as messages show it: itself when printable, else \xNN. */
void hmmrt_describe_byte(char out[8], unsigned char c);
/* Text from the input (a name) as messages show it: control bytes as \xNN,
 * so that a message is one line and never drives the terminal. */
void hmmrt_describe_text(hmmrt_buf *b, const char *text);
/* A sequence's name as messages show it (hmmrt_describe_text), malloc'd
 * (NULL when memory runs out); score_batch.c. */
char *hmmrt_shown_name(const char *name);
/* An alphabet as messages show it: "[1, 2, 3]". */
void hmmrt_describe_alphabet(hmmrt_buf *b, const char *alphabet);

/* ---- fasta.c --------------------------------------------------------------- */
/* Where the reader is: the file it reads (or failed to open) and the line. */
void hmmrt_reader_where(const hmmrt_reader *r, const char **path, long *line);
/* The reader's time so far in reading blocks (pread, inflating), parsing
 * them (every thread) and handing their records over (one thread). */
/* The reader's phases (wall seconds), and the CPU seconds its team's threads
 * spent in the first two, summed over the threads (--timing: far below wall
 * x threads, the threads waited for cores or for one another). */
enum {
    HMMRT_READER_BLOCKS,
    HMMRT_READER_PARSING,
    HMMRT_READER_HANDING,
    HMMRT_READER_BLOCKS_CPU,
    HMMRT_READER_PARSING_CPU,
    HMMRT_READER_PHASES
};
/* This thread's CPU seconds so far (timing.c). */
double hmmrt_thread_seconds(void);
void hmmrt_reader_seconds(const hmmrt_reader *r, double seconds[HMMRT_READER_PHASES]);
/* From the next file on, the reader hands out records of text as codes of
 * alphabet (hmmrt_record.codes), mapped while they are parsed (one pass),
 * and databases of that alphabet's codes as they are: call it before the
 * first record is read; alphabet must outlive the reader. 0, or -1 for an
 * alphabet of more than 127 symbols (the reader then keeps residues). */
#define HMMRT_READER_MAPS 1
int hmmrt_reader_map_to(hmmrt_reader *r, const char *alphabet);
/* The alphabet the reader maps to, or NULL. */
const char *hmmrt_reader_mapped_alphabet(const hmmrt_reader *r);
/* 1 when the reader's error was a failed allocation. */
int hmmrt_reader_out_of_memory(const hmmrt_reader *r);
/* Opens every file of the reader now, keeping the descriptors for the
 * reading (each file is opened once: a named FIFO would not give its data
 * to a second open), and checks each opened descriptor (not a directory):
 * -1 when all opened, else the index of the first that did not (err says
 * why; "-" always opens). Without this call each file opens in its turn. */
int hmmrt_reader_open_files(hmmrt_reader *r, char *err, size_t errlen);

/* ---- read_block.c: the FASTA reader's block from a file ---------------------- */
/* The most ranges (the reader's pieces) a block is read and parsed in. */
enum { HMMRT_READ_MAX_RANGES = 256 };
/* Reads n_ranges (at most HMMRT_READ_MAX_RANGES) x range bytes into block,
 * fewer only at the end of the file: with offset (a regular file), one
 * pread a range at *offset, on as many threads, then moves *offset on; with
 * offset NULL, read() in turn. Returns how many bytes, or -1 with errno set. */
long hmmrt_read_block(int fd, off_t *offset, char *block, int n_ranges, size_t range);
/* The same with the ranges shared out to a team of `threads` (at most
 * n_ranges), each thread taking the next range when done with one; adds
 * the CPU seconds the threads spent in them to *cpu_seconds (if not NULL). */
/* ---- worker.c: a thread kept for jobs run one at a time --------------------- */
typedef struct hmmrt_worker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    void *(*job)(void *);
    void *arg;
    int busy, quit, started, failed;
} hmmrt_worker;
void hmmrt_worker_init(hmmrt_worker *w);
/* Runs job(arg) on the worker's thread (started on first use), or on the
 * caller's when no thread can be had; one job at a time: wait first. */
void hmmrt_worker_run(hmmrt_worker *w, void *(*job)(void *), void *arg);
/* Waits until the job run last has returned. */
void hmmrt_worker_wait(hmmrt_worker *w);
/* Waits for the job, ends the thread. */
void hmmrt_worker_stop(hmmrt_worker *w);

long hmmrt_read_ranges(int fd, off_t *offset, char *block, int n_ranges, size_t range, int threads,
                       double *cpu_seconds);

/* ---- names.c: sequence names used twice --------------------------------------- */
/* Names checked at most: the table then holds 8M slots of 24 bytes (192 MB). */
#define HMMRT_NAMES_MAX ((size_t)1 << 22)
typedef struct hmmrt_names hmmrt_names;
/* A table that checks at most max_names names (HMMRT_NAMES_MAX in a run);
 * NULL: out of memory. */
hmmrt_names *hmmrt_names_new(size_t max_names);
void hmmrt_names_free(hmmrt_names *t);
/* Adds name, seen at path:line (path must outlive the table): 0 when it is
 * new, 1 when it was seen before (*first_path and *first_line say where
 * first), -1 when it was not checked (max_names reached, or out of memory). */
int hmmrt_names_add(hmmrt_names *t, const char *name, const char *path, long line,
                    const char **first_path, long *first_line);
uint64_t hmmrt_name_hash(const char *name);
/* What the check found of one name. */
typedef struct hmmrt_name_seen {
    int status;       /* as hmmrt_names_add's: 0 new, 1 seen before, -1 not checked */
    const char *path; /* 1: where it was first seen */
    long line;
} hmmrt_name_seen;
/* Adds the names of a batch of n records, in order, with their hashes
 * (hmmrt_name_hash, which threads can compute beforehand), on n_threads
 * threads: seen[i] is what hmmrt_names_add would have said of record i. */
void hmmrt_names_check(hmmrt_names *t, const hmmrt_record *records, const uint64_t *hashes,
                       int64_t n, hmmrt_name_seen *seen, int n_threads);

/* ---- output.c: the output table on a file descriptor ---------------------- */
typedef struct hmmrt_out {
    int fd;
    char *data;
    size_t len, cap;
    int error; /* errno of the first failed write, 0 while none failed */
} hmmrt_out;

int hmmrt_out_open(hmmrt_out *o, int fd, size_t cap); /* 0, or -1: out of memory */
void hmmrt_out_close(hmmrt_out *o);                   /* frees; does not flush */
void hmmrt_out_write(hmmrt_out *o, const char *bytes, size_t n);
void hmmrt_out_puts(hmmrt_out *o, const char *s);
int hmmrt_out_flush(hmmrt_out *o); /* 0, or -1 with o->error set */
/* The columns' notes ("# LABEL: NOTE"), then "#name<TAB>LABEL...". */
void hmmrt_out_header(hmmrt_out *o, const hmmrt_program *prog);
/* Appends "NAME<TAB>FIELD...\n" to row (any thread). */
void hmmrt_format_row(hmmrt_buf *row, const hmmrt_program *prog, const char *name,
                      const hmmrt_value *values);
/* "# incomplete: stopped at WHERE" (WHERE without the newline). */
void hmmrt_out_incomplete(hmmrt_out *o, const char *where);
/* From now on SIGTERM, SIGINT and SIGHUP (unless ignored) end o's output
 * with "# incomplete: stopped by SIGTERM" after its last whole row and kill
 * the program with the signal (status 128 + signal); one process-wide
 * output. hmmrt_out_release_signals gives the signals back. */
void hmmrt_out_catch_signals(const hmmrt_out *o);
void hmmrt_out_release_signals(void);

/* ---- output_file.c: --output FILE ------------------------------------------ */
/* Makes FILE (created or emptied) the program's standard output: 0, or
 * HMMRT_EXIT_OUTPUT after saying why. */
int hmmrt_output_to(const char *path);

/* ---- cli.c: the command line of generated programs ------------------------ */
enum { HMMRT_PROGRESS_AUTO = -1, HMMRT_PROGRESS_OFF = 0, HMMRT_PROGRESS_ON = 1 };

/* The hits mode's options (hmmsearch's names; runtime/hits.c). Thresholds
 * are on E-values (by_E ...) unless a score threshold or a cutoff is given. */
enum { HMMRT_CUT_NONE = -1, HMMRT_CUT_GA = 0, HMMRT_CUT_TC = 1, HMMRT_CUT_NC = 2 };
typedef struct hmmrt_hits_options {
    const char *first;            /* the first hits option given (NULL: no hits mode) */
    const char *tblout, *domtblout;
    double E, T, domE, domT, incE, incT, incdomE, incdomT;
    int by_E, dom_by_E, inc_by_E, incdom_by_E;
    double Z, domZ;               /* set by -Z, --domZ when Z_set, domZ_set */
    int Z_set, domZ_set;
    int cut;                      /* HMMRT_CUT_*: --cut_ga, --cut_tc, --cut_nc */
    int strands;                  /* nucleic models: HMMRT_STRAND_* (--watson, --crick) */
    int nonull2;                  /* --nonull2: no null2 correction of the hits (protein or DNA) */
    int scan;                     /* --hmmscan: each sequence against every model */
} hmmrt_hits_options;
enum { HMMRT_STRAND_WATSON = 1, HMMRT_STRAND_CRICK = 2, HMMRT_STRAND_BOTH = 3 };

enum { HMMRT_MAX_DEVICES = 64 }; /* --devices: the GPUs one process scores on */

typedef struct hmmrt_options {
    int help, version;
    int threads;           /* --threads, else OMP_NUM_THREADS (checked), else every core;
                              0 only for --help, --version and --sample */
    int skip_invalid;
    int decimals;          /* 0..17 */
    int header;            /* print the '#name ...' line */
    int progress;          /* HMMRT_PROGRESS_* */
    long sample;           /* 0: score the files; n > 0: draw n sequences */
    int64_t length;        /* --length: 0 runs each draw until the end state */
    uint64_t seed;
    int with_path;
    int model;             /* index of --model into prog->models */
    int cpu;               /* --cpu: score on the CPU even when a GPU is there */
    int device;            /* --device N: the GPU to open (default 0) */
    int device_given;      /* ... given: under mpirun every rank opens it (else rank's
                              local number mod the devices) */
    int n_devices;         /* --devices: 0 not given (one GPU, --device's); -1 all;
                              else how many of devices[] */
    int devices[HMMRT_MAX_DEVICES]; /* --devices LIST, each once, as given */
    const char *output;    /* --output FILE: the table goes there (else stdout) */
    int use_double;        /* --double: double precision on the GPU */
    int timing;            /* --timing: a breakdown of the time on stderr at the end */
    int train;             /* --train: fit a model to the files instead of scoring them */
    long iterations;       /* --iterations (default 100) */
    double tolerance;      /* --tolerance (default 1e-9) */
    double pseudocount;    /* --pseudocount (default 0) */
    double min_variance;   /* --min-variance (default 1e-3): added to fitted variances */
    int viterbi_training;  /* --viterbi-training */
    const char *make_db;   /* --make-db DB: pack the files into the database DB instead */
    const char **files;    /* malloc'd array of pointers into argv */
    int n_files;
    hmmrt_hits_options hits; /* the hits mode: -E, --tblout ... (hits.first != NULL) */
    int argc;              /* the command line, for the tables' trailers */
    char **argv;
} hmmrt_options;

/* Fills o from argv: 0, or HMMRT_EXIT_USAGE after printing why. */
int hmmrt_parse_options(int argc, char **argv, const hmmrt_program *prog, hmmrt_options *o);
void hmmrt_free_options(hmmrt_options *o);
void hmmrt_print_help(FILE *f, const hmmrt_program *prog);
void hmmrt_print_version(FILE *f, const hmmrt_program *prog);

/* ---- posterior.c ----------------------------------------------------------- */
/* The runs of equal states in state[0 .. L-1] (each state_bytes: 1, 2 or
 * 4, unsigned for 1 and 2) as the contract writes segments:
 * "NAME:FIRST-LAST" (1-based; "NAME:I" for one), space-separated. */
void hmmrt_write_segments(hmmrt_buf *out, const char *const *names, const void *state,
                          int state_bytes, int64_t L);
/* state[i] of such an array. */
int hmmrt_state_at(const void *state, int state_bytes, int64_t i);
/* One segment: "NAME:FIRST-LAST", or "NAME:FIRST" when last == first
 * (viterbi's segments, traceback.c, write theirs with it too). */
void hmmrt_buf_segment(hmmrt_buf *out, const char *name, int64_t first, int64_t last);

/* ---- train.c: --train ------------------------------------------------------ */
int hmmrt_train(const hmmrt_program *prog, const hmmrt_options *o);

/* ---- score.c: reading, scoring and printing every sequence ----------------- */
int hmmrt_score_files(const hmmrt_program *prog, const hmmrt_options *o);
/* ---- real_score.c: the same for real observations (prog->real_dim > 0) ------- */
int hmmrt_score_real_files(const hmmrt_program *prog, const hmmrt_options *o);

/* ---- timing.c: where the time of a scoring run went (--timing) ------------ */
double hmmrt_seconds(void); /* a monotonic clock, in seconds */

typedef struct hmmrt_run_timing {
    const char *scorer;       /* "CPU, 16 threads" or "GPU" */
    int fused;                /* the CPU maps, scores and formats in one pass */
    double opening;           /* opening the GPU (its context; overlaps the first read) */
    double reading;           /* in read_batch, on whichever thread read */
    double reader[HMMRT_READER_PHASES]; /* the reader's own phases, within reading */
    double mapping, scoring, formatting, writing;
    double mapping_parts[3];  /* of mapping (the GPU path): placing the codes (their order
                                 and buffers), mapping and staging them, ordering by length */
    int64_t staged_batches;   /* batches staged for the GPU (score_batch.c), of ... */
    int64_t mapped_batches;   /* ... the batches mapped for it */
    double writing_parts[3];  /* of writing: checking names for duplicates, rows into the
                                 output's buffer, writing the buffer out */
    double waiting;           /* the main thread waiting: the GPU to open, a batch, the printer */
    double waiting_reader, waiting_printer; /* of waiting (the GPU path): for the next batch's
                                               reading and mapping, for the printer */
    double total;
    int64_t sequences_read, symbols_read;
    int64_t sequences_scored, symbols_scored;
} hmmrt_run_timing;

/* "PROG: timing ..." and a table of phases, seconds and symbols/s. */
void hmmrt_print_timing(FILE *out, const hmmrt_run_timing *t);

/* ---- gpu_fault.c: the GPU driver's fault injection (tests/gpu/faults) --------- */
typedef enum hmmrt_fault_kind {
    HMMRT_FAULT_NONE,
    HMMRT_FAULT_OOM,  /* the first buffer allocation of the batch fails: out of memory */
    HMMRT_FAULT_ERROR /* the first kernel launch of the batch fails */
} hmmrt_fault_kind;
typedef struct hmmrt_gpu_fault {
    hmmrt_fault_kind kind;
    int64_t batch; /* 1-based, as the driver counts batches */
} hmmrt_gpu_fault;
/* Parses HMMRT_GPU_FAULT's value ("oom:B" or "error:B", B >= 1; NULL or ""
 * for none): 0, or -1 when it is neither. */
int hmmrt_parse_gpu_fault(const char *text, hmmrt_gpu_fault *f);

/* ---- pack.c: host-side arithmetic of GPU batches ---------------------------- */
/* Sections of a chunk's buffer start at multiples of this (cudaMalloc's own). */
#define HMMRT_SECTION_ALIGN 256
#define HMMRT_NO_SECTION ((size_t)-1)

/* Fills order with the indexes of the sequences whose skip is 0 (skip may be
 * NULL), longest first, equal lengths in input order; returns how many, or
 * -1 when memory runs out. order has room for n. */
int64_t hmmrt_order_by_length(const int64_t *lengths, const unsigned char *skip, int64_t n,
                              int64_t *order);
int64_t hmmrt_pad16(int64_t bytes); /* bytes rounded up to a multiple of 16 */
/* offsets[k]: where sequence k starts when each is padded to 16 bytes; returns
 * the padded total. */
int64_t hmmrt_code_offsets(const int64_t *lengths, int64_t n, int64_t *offsets);
/* offsets[k]: the first back-pointer cell of sequence k, which has
 * (lengths[k] + 1) * n_states cells; returns the total of cells. */
int64_t hmmrt_bp_offsets(const int64_t *lengths, int64_t n, int n_states, int64_t *offsets);
/* The staged layout of a batch for the GPU (score_batch.c): sequence
 * order[k] at offsets[order[k]], each padded to 16 bytes, one after the
 * other in the given order (the batch's order by length), as a chunk's codes
 * lie on the device; returns the padded total. Sequences not in order get
 * offset -1. */
int64_t hmmrt_staged_offsets(const int64_t *lengths, int64_t n, const int64_t *order, int64_t m,
                             int64_t *offsets);
/* 1 when the m sequences order[0..m) lie one after the other from
 * offsets[order[0]] at 16-byte steps (a run of a staged layout: the chunk's
 * codes can be copied to the device as they lie), else 0. */
int hmmrt_staged_run(const int64_t *lengths, const int64_t *offsets, const int64_t *order,
                     int64_t m);

/* ---- pinned.c: page-locked host memory ------------------------------------- */
/* The GPU driver, once a device is open, lends the runtime its allocator of
 * page-locked memory, which the device copies from without a copy of its
 * own; the batch's codes are staged there (score_batch.c). */
void hmmrt_set_pinned_allocator(void *(*alloc)(size_t bytes), void (*release)(void *p));
int hmmrt_pinned_available(void);
void *hmmrt_pinned_alloc(size_t bytes); /* NULL: none lent, too large, or out of memory */
void hmmrt_pinned_free(void *p);

/* What a chunk's buffer holds besides its sequences: the same for every chunk. */
typedef struct hmmrt_chunk_shape {
    int n_copies;         /* alphabets whose codes go to the device */
    int n_calls;
    int score_bytes;      /* 4 (float) or 8 (double) */
    const int *n_states;  /* per call */
    const int *bp_bytes;  /* per call: bytes of a back pointer, 0 for none */
    /* per call, NULL for none: a posterior call's states (0 for the others);
     * its score is a double, its back pointers (n_states 1) the state of
     * highest posterior at each position, and its forward tables and scales
     * (n floats and an int a column) are on the device only */
    const int *fb_states;
    const int *fb_table;  /* per call, NULL for none: 1 when a posterior call's
                             probability& comes back (n floats a column) */
    const int *fb_grouped; /* per call, NULL for none: 1 when a posterior call's forward
                              records interleave by groups (the kernel's HMM form:
                              fb_states floats a record, no scales; rec_offsets) */
} hmmrt_chunk_shape;

/* The sequences of a chunk, as far as sizes go. */
typedef struct hmmrt_chunk_size {
    int64_t sequences, symbols;
    int64_t padded_symbols; /* each sequence rounded up to 16 */
    int64_t grouped_columns; /* HMMRT_GROUP sequences at a time, each as many columns as
                                the group's longest needs (the interleaved records) */
    int64_t group_longest;   /* the last group's longest sequence so far */
} hmmrt_chunk_size;
/* Sequences whose forward records interleave (a warp's). */
#define HMMRT_GROUP 32
/* rec_at[k]: sequence k's first interleaved record (position i's at rec_at[k]
 * + HMMRT_GROUP * i), k's group counted from the first of the n; returns the
 * total (hmmrt_chunk_size.grouped_columns). */
int64_t hmmrt_group_offsets(const int64_t *lengths, int64_t n, int64_t *rec_at);

/* Where things are in a chunk's buffer, in bytes from its start. The host's
 * pinned buffer and the device's have the same layout: [0, input_bytes) is
 * copied to the device, [input_bytes, total_bytes) back. */
typedef struct hmmrt_chunk_layout {
    hmmrt_chunk_size size;
    size_t lengths, offsets;    /* int64_t[sequences] each; offsets into a copy's codes */
    size_t codes, codes_stride; /* copy k's codes at codes + k * codes_stride: the padded
                                   sequences, then at least 16 zero bytes */
    size_t *bp_offsets;         /* per call (caller's array): int64_t[sequences], cells, or
                                   HMMRT_NO_SECTION for a call without back pointers */
    size_t *scores;             /* per call (caller's array): sequences floats or doubles */
    size_t *bp;                 /* per call (caller's array): the back pointers, or
                                   HMMRT_NO_SECTION */
    size_t *post;               /* per call (caller's array, may be NULL when the shape has
                                   no posterior call): probability&, or HMMRT_NO_SECTION */
    size_t *work;               /* per call (likewise): a posterior call's forward tables,
                                   then its scales, or HMMRT_NO_SECTION */
    size_t *rec_offsets;        /* per call (likewise): int64_t[sequences], the grouped
                                   records' hmmrt_group_offsets, or HMMRT_NO_SECTION */
    size_t input_bytes, total_bytes;
    size_t device_bytes;        /* [total_bytes, device_bytes): on the device only */
} hmmrt_chunk_layout;

hmmrt_chunk_size hmmrt_measure(const int64_t *lengths, int64_t n);
/* The device's bytes of a chunk (its device_bytes); the host's are its
 * total_bytes (hmmrt_chunk_host_bytes). */
size_t hmmrt_chunk_bytes(const hmmrt_chunk_shape *shape, const hmmrt_chunk_size *size);
size_t hmmrt_chunk_host_bytes(const hmmrt_chunk_shape *shape, const hmmrt_chunk_size *size);
/* Fills layout; its bp_offsets, scores and bp must point at n_calls entries. */
void hmmrt_chunk_lay_out(const hmmrt_chunk_shape *shape, const hmmrt_chunk_size *size,
                         hmmrt_chunk_layout *layout);
/* Splits n sequences (in the order given) into runs whose buffers take at
 * most target_bytes, but never less than one sequence a chunk: chunk c is
 * [starts[c], starts[c + 1]). Returns the number of chunks; starts has room
 * for n + 1. */
int64_t hmmrt_plan_chunks(const hmmrt_chunk_shape *shape, const int64_t *lengths, int64_t n,
                          size_t target_bytes, int64_t *starts);

/* ---- progress.c: the progress line on standard error ----------------------- */
void hmmrt_progress_start(int enabled);
void hmmrt_progress_add(int64_t sequences, int64_t residues); /* any thread */
void hmmrt_progress_poll(void);   /* redraws if due; one thread at a time */
void hmmrt_progress_clear(void);  /* erases the line (before other messages) */
void hmmrt_progress_finish(void); /* erases it and stops */

#endif
