/* import_hmmer.h: `hmmc --import-hmmer FILE`: reads a profile HMM saved by
 * HMMER2.0 or HMMER3/a to 3/f and writes a .hmm program whose viterbi score, divided
 * by ln 2, is hmm2search's per-sequence bit score (with --null2). README.md,
 * "Profile HMMs from HMMER", says how. */
#ifndef HMMC_IMPORT_HMMER_H
#define HMMC_IMPORT_HMMER_H

#include <stdio.h>

/* Writes the program for the first model in the file at path to out, and
 * to verbose (when not NULL) the header lines it keeps, "hmmc: import: KEY
 * VALUE". Returns 0, or 1 after printing "hmmc: error: FILE:LINE:COLUMN: ..."
 * on standard error when the file cannot be read or is not a HMMER model. */
int import_hmmer(const char *path, FILE *out, FILE *verbose);

/* The format named by the first line of a source text of len bytes when it
 * is a HMMER file ("HMMER2.0", "HMMER3/f"...: what --import-hmmer reads),
 * else NULL: for the hint when such a file is given to hmmc as a model. */
const char *hmmer_file_format(const char *text, size_t len);

#endif
