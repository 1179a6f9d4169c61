/* hmmer3_local.h: a HMMER3 profile in HMMER3's own search configuration
 * (hmmsearch's default: multihit local, with the length model), as the
 * numbers hmmer3_write.c writes into a program. Not public: import_hmmer.h is. */
#ifndef HMMC_IMPORT_HMMER3_LOCAL_H
#define HMMC_IMPORT_HMMER3_LOCAL_H

#include "import/hmmer_profile.h"

enum { H3_COLUMNS_MAX = 32 };

/* The program's symbols: each letter (both cases) and '*', and the column
 * of the scores it takes: a residue, a degenerate code, or '*'. */
typedef struct H3Symbols {
    int n;
    char sym[2 * H3_COLUMNS_MAX + 8];
    int col[2 * H3_COLUMNS_MAX + 8];
} H3Symbols;

typedef struct Local3 {
    int M, K, nucleic;
    int unihit;        /* p7_UNILOCAL: one domain (E -> C 1, no J), the length model's nj = 0 */
    int glocal;        /* p7_UNIGLOCAL (with unihit): entries by wing retraction, exit at Mm, Dm */
    int ncol;          /* columns: K residues, the degenerate codes, then '*' */
    char col_sym[H3_COLUMNS_MAX];
    double f[KMAX];    /* the null model's residue frequencies */
    double *match;     /* [k * ncol + c]: Mk's odds e^score (residue c over f; a degenerate
                          code: e^ of the f-weighted mean score of its residues; '*' 0) */
    double *t;         /* [k * NTRANS + t]: node k's transitions, 1 <= k < M */
    double *entry;     /* [k]: B->Mk, occupancy-weighted: occ[k] / sum_i occ[i] (M - i + 1);
                          glocal: B->M1 1 - t0(MD), B->Mk the wing B->D1..Dk-1->Mk */
    H3Symbols symbols;
} Local3;

/* From a HMMER3 file as read (h->h3_mat set), with local entries, or glocal
 * ones (p7_UNIGLOCAL's) when glocal is 1. Returns 0, or -1 after a message
 * on stderr when h is not a HMMER3 model. */
int local3_build(const H2 *h, Local3 *l, int glocal);
void local3_free(Local3 *l);

/* hmmer_write.c: a HMMER name as an identifier of the language (malloc'd). */
char *hmmer_identifier(const char *name);

/* hmmer3_write.c: the program for l to out. Returns 0, or -1 after a
 * message when out cannot be written. */
int local3_write(FILE *out, const char *path, const H2 *h, const Local3 *l);
/* Only the model's `// hmmer:` lines and its hmm block, named id (a file of
 * many models: import_hmmer.c writes the rest). */
void local3_write_model(FILE *out, const H2 *h, const Local3 *l, const char *id);

#endif
