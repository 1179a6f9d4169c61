/* read_long.h: one long record's sequence lines mapped on every thread
 * (runtime/read_long.c), for the FASTA reader's blocks that hold no header
 * (runtime/fasta.c): a chromosome is one record, and its block one piece. */
#ifndef HMMRT_READ_LONG_H
#define HMMRT_READ_LONG_H

#include <stddef.h>

#include "fasta_parse.h"

/* Parses the n bytes of block into p as fasta_parse_bytes does (the same
 * codes, line runs that give the same line of every position, the same
 * first byte outside and errors), the lines between the block's first and
 * last line end cut into parts mapped on `threads` threads at once where
 * they are plain sequence lines of a mapped record (else one thread, as
 * fasta_parse_bytes). 0, or -1 after an error (p->failed is set). */
int hmmrt_parse_long(fasta_parse *p, const char *block, size_t n, int threads);

/* Bytes of lines a thread takes at least, else the block is parsed on one
 * thread (tests lower it; 0: the default, 256 KB). */
void hmmrt_parse_long_min_part(size_t bytes);
/* The parts mapped on several threads so far (tests: the path was taken). */
long long hmmrt_parse_long_parts(void);

#endif
