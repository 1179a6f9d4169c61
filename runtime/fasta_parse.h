/* fasta_parse.h: the FASTA state machine of the reader, run over one piece
 * of a file held in memory (runtime/fasta_parse.c). Pieces of one block are
 * parsed on several threads at once (runtime/fasta.c): each parse keeps its
 * records, their names and residues in a store of its own, as offsets, and
 * counts lines from its piece's start; the reader then turns offsets into
 * pointers and counts into line numbers of the file. */
#ifndef HMMRT_FASTA_PARSE_H
#define HMMRT_FASTA_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "hmmrt.h"

/* Where the parse is inside the current line. */
typedef enum fasta_line_state {
    FASTA_AT_LINE_START,
    FASTA_IN_SEQUENCE_LINE,
    FASTA_BEFORE_NAME,    /* after '>', skipping blanks */
    FASTA_IN_NAME,
    FASTA_IN_DESCRIPTION  /* the rest of a header line, ignored */
} fasta_line_state;

/* A complete record: its name and residues (each NUL-terminated) and the
 * runs of lines its residues lie on, in the store. */
typedef struct fasta_parsed {
    size_t name_at, residues_at;
    size_t runs_at, n_runs; /* its hmmrt_line_runs in the store (8-byte aligned) */
    int64_t length;
    long line; /* of its '>' header, counted as the parse counts lines */
    int64_t first_invalid;      /* with a map: 1 + the first byte outside it, 0 none ... */
    unsigned char invalid_byte; /* ... and that byte */
} fasta_parsed;

/* A map's entries beyond the codes (which are below 0x80): */
enum { FASTA_MAP_BLANK = 0xFD, FASTA_MAP_LINE_END = 0xFE, FASTA_MAP_INVALID = 0xFF };

/* An alphabet's map (fasta_map_table): a code a byte, and the same as
 * 16-entry tables, one for each high half-byte that holds a symbol, for
 * the vector loop (each twice: a 32-byte register's two lanes). */
typedef struct fasta_map {
    uint8_t code[256];
    int n_nibbles;
    uint8_t nibble[8];          /* the high half-bytes of the tables */
    uint8_t table[8][32];
} fasta_map;

typedef struct fasta_parse {
    fasta_line_state state;
    long line;          /* the line of the next byte */
    int after_cr;       /* the last byte ended a line with '\r': a '\n' next is its CRLF */
    int in_record;      /* a header was read: residues belong to it */
    size_t name_at;     /* where the record in progress starts in store */
    size_t residues_at; /* ... and its residues, once its name has ended */
    long name_line;
    size_t line_start;  /* store_len where the current line's residues start */
    hmmrt_line_run *runs; /* the lines of the record in progress */
    size_t n_runs, runs_cap;
    int64_t run_lines; /* the last run's lines, when run_full */
    int run_full;      /* its lines are all its width: the next may join it */

    /* NULL, or the alphabet's table (fasta_map_table): the store then holds
     * each record's codes, mapped as they are parsed, instead of residues */
    const fasta_map *map;
    int64_t first_invalid;      /* of the record in progress (fasta_parsed's) */
    unsigned char invalid_byte;
    int saw_cr;                 /* a '\r' was seen: lines are mapped byte by byte */

    char *store; /* names and residues, records one after the other */
    size_t store_len, store_cap;
    size_t piece_cap; /* the store a piece starts with (the next piece's too) */
    fasta_parsed *records;
    size_t n_records, records_cap;

    /* After an error nothing more is parsed; the message has no place in it:
     * the reader adds the file and error_line. */
    int failed, out_of_memory;
    long error_line;
    const char *error; /* a static message */
} fasta_parse;

/* A parse at the start of a piece that starts a file or a line with '>',
 * with room for a piece of about piece_bytes: 0, or -1 out of memory. */
int fasta_parse_start(fasta_parse *p, long first_line, size_t piece_bytes);
void fasta_parse_free(fasta_parse *p);

/* The map of alphabet (at most 127 symbols): each symbol's index, blanks,
 * line ends and every other byte marked (fasta_map.c). */
void fasta_map_table(fasta_map *map, const char *alphabet);
/* The lines of a record's sequence from at, as fasta_parse.c's
 * sequence_lines takes them (up to a '\r', a '>', a blank line or end),
 * each line's residues mapped into the store as they are copied: blanks
 * left out, the first byte outside the alphabet noted in p (its code
 * FASTA_MAP_INVALID). The store has room for end - at more bytes.
 * (fasta_map.c) */
const char *fasta_map_lines(fasta_parse *p, const char *at, const char *end);
/* A run of lines that starts with a line of n residues (fasta_parse.c):
 * 0, or -1 out of memory. */
int fasta_parse_new_run(fasta_parse *p, int64_t n, long line);

/* The line in progress (of the record in progress) ended at p->line: its
 * residues join the runs of lines. 0, or -1. (Inline: the parse takes this
 * step at every line.) */
static inline int fasta_parse_end_line(fasta_parse *p)
{
    int64_t n = (int64_t)(p->store_len - p->line_start);
    p->line_start = p->store_len;
    if (n <= 0)
        return 0;
    long line = p->line - p->name_line;
    hmmrt_line_run *last = p->n_runs ? &p->runs[p->n_runs - 1] : NULL;
    if (last && p->run_full && last->first_line + p->run_lines == line && n <= last->width) {
        last->residues += n; /* (counted, not divided: a line end is the parser's step) */
        p->run_lines++;
        p->run_full = n == last->width;
        return 0;
    }
    return fasta_parse_new_run(p, n, line);
}

/* Parses n more bytes: 0, or -1 after an error (failed is set). */
int fasta_parse_bytes(fasta_parse *p, const char *bytes, size_t n);

/* The piece ended where a record may end (at a line that starts with '>',
 * or at the end of the file): the record in progress is complete. 0, or -1
 * after an error (a header without a name). */
int fasta_parse_end_piece(fasta_parse *p);

/* Keeps only the record in progress in a new store, moved to its start (the
 * complete records' store goes to *old_store, which the caller then owns):
 * 0, or -1 out of memory. Without complete records the store stays, and
 * *old_store is NULL: a sequence over many blocks grows in place. */
int fasta_parse_keep_partial(fasta_parse *p, char **old_store);

#endif
