/* input.h: the kinds of input the reader (fasta.c) tells apart by their
 * first bytes: gzip-compressed text (gzip_input.c) and packed databases
 * (db.c, written by --make-db: db_make.c); plain text is everything else.
 * Private to the runtime. */
#ifndef HMMRT_INPUT_H
#define HMMRT_INPUT_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* Bytes the reader looks at to tell the kinds apart. */
enum { HMMRT_SNIFF_BYTES = 8 };

/* ---- gzip_input.c ---------------------------------------------------------- */
typedef struct hmmrt_gunzip hmmrt_gunzip;
int hmmrt_is_gzip(const unsigned char *head, size_t n);
/* Inflates what fd holds from its current offset, after the prefix bytes
 * already read from it (a pipe's first bytes). NULL: out of memory. */
hmmrt_gunzip *hmmrt_gunzip_open(int fd, const unsigned char *prefix, size_t n_prefix);
/* Fills into with up to n bytes of text, fewer only at the end of the
 * input: how many (0 at the end), or -1 with why set (zlib's message and
 * what to do). Bytes inflated before a failure are handed out first. */
long hmmrt_gunzip_read(hmmrt_gunzip *g, char *into, size_t n, char *why, size_t whylen);
void hmmrt_gunzip_close(hmmrt_gunzip *g); /* does not close fd */

/* ---- db.c: reading a packed database ---------------------------------------- */
#define HMMRT_DB_MAGIC "\x89HMMCDB\x1a" /* 8 bytes */
enum { HMMRT_DB_VERSION = 2, HMMRT_DB_HEADER_BYTES = 128, HMMRT_DB_RECORD_BYTES = 24 };
/* What a database's records hold (format 2's header, at byte 72; format 1
 * holds residues): */
enum { HMMRT_DB_RESIDUES = 0, HMMRT_DB_CODES = 1 /* of the program's one alphabet */ };

int hmmrt_is_db(const unsigned char *head, size_t n);
/* The fingerprint of a program's alphabets that its databases carry. */
uint64_t hmmrt_db_fingerprint(const hmmrt_program *prog);
/* The program whose fingerprint the reader expects of databases (hmmrt_main
 * sets it); without it every database is refused. */
void hmmrt_db_expect(const hmmrt_program *prog);

typedef struct hmmrt_db hmmrt_db;
/* Maps the database open on fd (a regular file, named path in messages:
 * it must outlive the database) and checks its header:
 * NULL with why set (what is wrong and what to do; why starts after
 * "PATH: "). */
hmmrt_db *hmmrt_db_open(int fd, const char *path, char *why, size_t whylen);
/* The next record, its name and residues (or codes) in the mapping, its
 * path and line those of the FASTA it was made from: 1, 0 at the end, -1
 * with why set (a damaged file). A database of codes hands them out as they
 * are (hmmrt_record.codes) to a reader that maps to their alphabet (codes_of:
 * hmmrt_reader_mapped_alphabet), else as residues in a copy of their own.
 * Each record handed out holds the mapping until it is released
 * (hmmrt_record_release). */
int hmmrt_db_next(hmmrt_db *db, hmmrt_record *rec, const char *codes_of, char *why,
                  size_t whylen);
/* HMMRT_DB_RESIDUES or HMMRT_DB_CODES. */
int hmmrt_db_contents(const hmmrt_db *db);
/* Drops the reader's hold on the mapping; the paths records name stay until
 * hmmrt_db_free. */
void hmmrt_db_finish(hmmrt_db *db);
void hmmrt_db_free(hmmrt_db *db);
/* The records the header counts (ranges.c shares them out by index). */
uint64_t hmmrt_db_record_count(const hmmrt_db *db);

/* ---- fasta.c: pools that hold records' bytes -------------------------------- */
/* A pool over a mapping of `bytes` bytes, unmapped with the last record
 * that holds it; it starts with one hold (its maker's). NULL: out of memory. */
struct hmmrt_pool *hmmrt_pool_of_mapping(void *data, size_t bytes);
void hmmrt_pool_hold(struct hmmrt_pool *pool);
void hmmrt_pool_drop(struct hmmrt_pool *pool);

/* ---- db_make.c: --make-db ------------------------------------------------------ */
/* Writes the records of o->files into the database o->make_db (codes of
 * the alphabet where the program has one, else residues): an exit status. */
int hmmrt_make_db(const hmmrt_program *prog, const hmmrt_options *o);

#endif
