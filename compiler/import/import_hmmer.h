/* import_hmmer.h: `hmmc --import-hmmer FILE`: reads a profile HMM saved by
 * HMMER2.0 or HMMER3/f and writes a .hmm program whose viterbi score, divided
 * by ln 2, is hmm2search's per-sequence bit score (with --null2). README.md,
 * "Profile HMMs from HMMER", says how. */
#ifndef HMMC_IMPORT_HMMER_H
#define HMMC_IMPORT_HMMER_H

#include <stdio.h>

/* Writes the program for the first model in the file at path to out.
 * Returns 0, or 1 after printing "hmmc: error: FILE:LINE: ..." messages on
 * standard error when the file cannot be read or is not a HMMER model. */
int import_hmmer(const char *path, FILE *out);

#endif
