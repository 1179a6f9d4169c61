/* import_hmmer.h: `hmmc --import-hmmer FILE`: reads a profile HMM saved by
 * HMMER2.0 or HMMER3/a to 3/f and writes a .hmm program: for a HMMER3 file,
 * by default, one whose forward score is hmmsearch's (HMMER3's local
 * multihit configuration and null model, without null2); for a HMMER2 file,
 * or with the glocal mode, one whose viterbi score, divided by ln 2, is
 * hmm2search's per-sequence bit score (with --null2). docs/hmmer.md says how. */
#ifndef HMMC_IMPORT_HMMER_H
#define HMMC_IMPORT_HMMER_H

#include <stdio.h>

typedef enum HmmerMode {
    HMMER_MODE_DEFAULT, /* local for HMMER3 files, glocal for HMMER2 files */
    HMMER_MODE_LOCAL,   /* HMMER3's search configuration (HMMER3 files only) */
    HMMER_MODE_GLOCAL,  /* hmm2search's (a HMMER3 file converted as hmmconvert -2 does) */
    HMMER_MODE_UNILOCAL, /* HMMER3's p7_UNILOCAL: local, one domain (HMMER3 files only) */
    HMMER_MODE_UNIGLOCAL /* HMMER3's p7_UNIGLOCAL: glocal, one domain (HMMER3 files only) */
} HmmerMode;

/* Writes the program for the model in the file at path to out (for a file
 * of many models, a program holding them all: docs/hmmer.md), in
 * the given mode, and to verbose (when not NULL) the header lines it keeps,
 * "hmmc: import: KEY VALUE". Returns 0, or 1 after printing "hmmc: error:
 * FILE:LINE:COLUMN: ..." on standard error when the file cannot be read or
 * is not a HMMER model. */
int import_hmmer(const char *path, FILE *out, HmmerMode mode, FILE *verbose);

/* The format named by the first line of a source text of len bytes when it
 * is a HMMER file ("HMMER2.0", "HMMER3/f"...: what --import-hmmer reads),
 * else NULL: for the hint when such a file is given to hmmc as a model. */
const char *hmmer_file_format(const char *text, size_t len);

#endif
