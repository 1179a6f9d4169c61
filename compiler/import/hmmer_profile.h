/* hmmer_profile.h: what the three parts of `hmmc --import-hmmer` share (not
 * public; import_hmmer.h is): the profile as read (H2), the scores
 * hmm2search computes from it (Search), the alphabets, and the functions
 * hmmer_read.c, hmmer_scores.c and hmmer_write.c give import_hmmer.c. */
#ifndef HMMC_IMPORT_HMMER_PROFILE_H
#define HMMC_IMPORT_HMMER_PROFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "import/hmmer_header.h"

enum { NONE = INT_MIN }; /* the score of probability 0 (HMMER writes '*') */
enum { KMAX = 20, NSYM_MAX = 40, TOK_MAX = 64 };
/* NSYM_MAX bounds the residues and degenerate symbols of an alphabet, and
 * twice it the program's symbols (26 letters in two cases and 3 more). */

/* Transitions of a node, in the file's order. */
enum { TMM, TMI, TMD, TIM, TII, TDM, TDD, NTRANS };
/* The XT line's order: N->B N->N E->C E->J C->T C->C J->B J->J. */
enum { XNB, XNN, XEC, XEJ, XCT, XCC, XJB, XJJ, NXT };

/* A profile as a HMMER2 save file holds it: scores are round(1000 * log2 of
 * a probability or of an odds ratio), NONE for zero. Node k's values are at
 * [k * K + x] (emissions) or [k * NTRANS + t]; node 0 is unused. */
typedef struct H2 {
    char *name;
    const char *format; /* "HMMER2.0", or "HMMER3/a" to "HMMER3/f" */
    HmmerMeta meta;
    int M, K, nucleic;
    int xt[NXT], nult[2], nule[KMAX];
    int tb[3];           /* the line before node 1: B->M1, B->I0, B->D1 */
    int *mat, *ins, *t;  /* match and insert emissions (odds vs null), transitions */
    int *bm, *me;        /* B->Mk, Mk->E */
    /* HMMER3 files only (NULL otherwise): the file's probabilities as HMMER3
     * reads them (float), for its own configuration (hmmer3_local.c): match
     * emissions at [k * KMAX + x], transitions at [k * NTRANS + t], node 0's
     * (B's) transitions at [0 .. NTRANS) */
    double *h3_mat, *h3_t;
} H2;

/* The scores hmm2search computes with, per symbol of the extended alphabet
 * (the K residues, then the degenerate symbols). */
typedef struct Search {
    int M, K, nsym;
    int *msc, *isc; /* [k * nsym + x] */
    int *tsc;       /* [k * NTRANS + t] */
    int *bsc, *esc; /* B->Mk, Mk->E, the wings folded in as Viterbi folds them */
    int *fsc_b, *fsc_e; /* the same as Forward folds them (sums, not maxima) */
    int xsc[NXT];
} Search;

/* ------------------------------------------------------------ alphabets */

static const char AMINO[] = "ACDEFGHIKLMNPQRSTVWY";
static const char NUCLEIC[] = "ACGT";

/* The degenerate symbols HMMER2 knows, and the residues each stands for.
 * HMMER2 reads other letters, '*', '-' and '.' as X (see symbols()). */
typedef struct Degenerate {
    char sym;
    const char *means;
} Degenerate;

static const Degenerate AMINO_DEGENERATE[] = {
    {'U', "S"}, {'B', "ND"}, {'Z', "QE"}, {'X', "ACDEFGHIKLMNPQRSTVWY"}, {0, NULL}};
static const Degenerate NUCLEIC_DEGENERATE[] = {
    {'U', "T"},   {'N', "ACGT"}, {'X', "ACGT"}, {'R', "AG"},  {'Y', "CT"},
    {'M', "AC"},  {'K', "GT"},   {'S', "CG"},   {'W', "AT"},  {'H', "ACT"},
    {'B', "CGT"}, {'V', "ACG"},  {'D', "AGT"},  {0, NULL}};

static inline const char *residues(const H2 *h) { return h->nucleic ? NUCLEIC : AMINO; }
static inline const Degenerate *degenerates(const H2 *h)
{
    return h->nucleic ? NUCLEIC_DEGENERATE : AMINO_DEGENERATE;
}

static inline int count_degenerates(const Degenerate *d)
{
    int n = 0;
    while (d[n].sym)
        n++;
    return n;
}

/* hmmer_read.c: the models of the file at path ("-": standard input), one
 * after another. hmmer_open returns NULL after printing "hmmc: error: ..."
 * when the file cannot be opened; hmmer_next reads the next model into h
 * (zeroed by the caller; h2_free frees it even after a failure): 1, or 0 at
 * the end of the file (the first call: an error, as an empty file is not a
 * model), -1 after printing "hmmc: error: FILE:LINE:COLUMN: ..." (from the
 * second model on, naming the model). hmmer_model_line: the line where the
 * model just read ends ('//'). */
typedef struct HmmerFile HmmerFile;
HmmerFile *hmmer_open(const char *path);
int hmmer_next(HmmerFile *f, H2 *h);
int hmmer_model_line(const HmmerFile *f);
void hmmer_close(HmmerFile *f);
void h2_free(H2 *h);

/* hmmer_scores.c: the scores hmm2search computes from h, into s (zeroed by
 * the caller; search_free frees it). Returns 0 or -1. */
int search_scores(const H2 *h, Search *s);
void search_free(Search *s);

/* hmmer_write.c: writes the program for h and s to out. Returns 0, or -1
 * after printing "hmmc: error: ..." when out cannot be written. */
int write_program(FILE *out, const char *path, const H2 *h, const Search *s);
/* Only the model's `// hmmer:` lines and hmm block, named id, and in the
 * local modes the forward one, whose name it returns (malloc'd; else NULL). */
char *write_model_blocks(FILE *out, const H2 *h, const Search *s, const char *id);

#endif
