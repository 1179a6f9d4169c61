/* internal.h: declarations shared by the runtime's own files (and its unit
 * tests). Not part of the contract with generated code: that is hmmrt.h. */
#ifndef HMMRT_INTERNAL_H
#define HMMRT_INTERNAL_H

#include "hmmrt.h"

#include <stdarg.h>
#include <stdint.h>

#define HMMRT_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* ---- buf.c ---------------------------------------------------------------- */
/* Longest text hmmrt_format_score writes, NUL included (DBL_MAX with 17 decimals). */
#define HMMRT_SCORE_MAX 400
/* Writes score as the output table does into out; returns its length. */
size_t hmmrt_format_score(char out[HMMRT_SCORE_MAX], double score);
void hmmrt_buf_append(hmmrt_buf *b, const char *s, size_t n);
/* 1 if a hmmrt_buf of this thread failed to grow since the last call, then clears it. */
int hmmrt_buf_take_failure(void);

/* ---- report.c: messages on standard error ---------------------------------- */
/* The name messages start with: the base name of argv0, else fallback. */
void hmmrt_set_progname(const char *argv0, const char *fallback);
void hmmrt_default_progname(const char *name); /* names it only if still unnamed */
const char *hmmrt_progname(void);
void hmmrt_error(const char *fmt, ...) HMMRT_PRINTF(1, 2);   /* "PROG: error: ..." */
void hmmrt_warning(const char *fmt, ...) HMMRT_PRINTF(1, 2); /* "PROG: warning: ..." */

/* ---- alphabet.c ------------------------------------------------------------ */
/* A byte as messages show it: itself when printable, else \xNN. */
void hmmrt_describe_byte(char out[8], unsigned char c);
/* An alphabet as messages show it: "[1, 2, 3]". */
void hmmrt_describe_alphabet(hmmrt_buf *b, const char *alphabet);

/* ---- fasta.c --------------------------------------------------------------- */
/* Where the reader is: the file it reads (or failed to open) and the line. */
void hmmrt_reader_where(const hmmrt_reader *r, const char **path, long *line);
/* 1 when the reader's error was a failed allocation. */
int hmmrt_reader_out_of_memory(const hmmrt_reader *r);
/* Checks that the file opens for reading and is not a directory ("-" always
 * does); 0, or -1 with a message in err. */
int hmmrt_check_readable(const char *path, char *err, size_t errlen);

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

/* ---- cli.c: the command line of generated programs ------------------------ */
enum { HMMRT_PROGRESS_AUTO = -1, HMMRT_PROGRESS_OFF = 0, HMMRT_PROGRESS_ON = 1 };

typedef struct hmmrt_options {
    int help, version;
    int threads;           /* 0: OpenMP's default (OMP_NUM_THREADS, else every core) */
    int skip_invalid;
    int decimals;          /* 0..17 */
    int header;            /* print the '#name ...' line */
    int progress;          /* HMMRT_PROGRESS_* */
    long sample;           /* 0: score the files; n > 0: draw n sequences */
    int64_t length;        /* --length: 0 runs each draw until the end state */
    uint64_t seed;
    int with_path;
    int model;             /* index of --model into prog->models */
    const char **files;    /* malloc'd array of pointers into argv */
    int n_files;
} hmmrt_options;

/* Fills o from argv: 0, or HMMRT_EXIT_USAGE after printing why. */
int hmmrt_parse_options(int argc, char **argv, const hmmrt_program *prog, hmmrt_options *o);
void hmmrt_free_options(hmmrt_options *o);
void hmmrt_print_help(FILE *f, const hmmrt_program *prog);
void hmmrt_print_version(FILE *f, const hmmrt_program *prog);

/* ---- score.c: reading, scoring and printing every sequence ----------------- */
int hmmrt_score_files(const hmmrt_program *prog, const hmmrt_options *o);

/* ---- progress.c: the progress line on standard error ----------------------- */
void hmmrt_progress_start(int enabled);
void hmmrt_progress_add(int64_t sequences, int64_t residues); /* any thread */
void hmmrt_progress_poll(void);   /* redraws if due; one thread at a time */
void hmmrt_progress_clear(void);  /* erases the line (before other messages) */
void hmmrt_progress_finish(void); /* erases it and stops */

#endif
