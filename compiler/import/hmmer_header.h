/* hmmer_header.h: the header lines of a HMMER file that `hmmc --import-hmmer`
 * keeps (HmmerMeta) for what comes after it (E-values, thresholds, hit
 * tables), the `// hmmer: KEY VALUE` lines that carry them into the program
 * it writes, and reading those lines back from a program's text
 * (docs/hmmer.md, "The file's header lines"). */
#ifndef HMMC_IMPORT_HMMER_HEADER_H
#define HMMC_IMPORT_HMMER_HEADER_H

#include <stddef.h>
#include <stdio.h>

/* has[KEY] says the file had the line; FORMAT, NAME, LENG and ALPH are
 * always there in an import. */
enum { META_ACC, META_DESC, META_GA, META_TC, META_NC, META_STATS_MSV, META_STATS_VITERBI,
       META_STATS_FORWARD, META_NSEQ, META_EFFN, META_CKSUM, META_MAXL, META_EVD, NMETA };
enum { CUT_GA, CUT_TC, CUT_NC };
enum { STATS_MSV, STATS_VITERBI, STATS_FORWARD };

typedef struct HmmerMeta {
    char format[16];    /* HMMER2.0, HMMER3/a ... HMMER3/f */
    char *name;         /* as in the file (the program's model name is made an identifier) */
    long leng;          /* match states */
    char alph[16];      /* ALPH's word as written: amino, DNA, RNA, Nucleic... */
    char has[NMETA];
    char *acc, *desc;   /* desc: the rest of the DESC line, white space kept */
    double cut[3][2];   /* GA, TC, NC: per-sequence and per-domain bits */
    double stats[3][2]; /* STATS LOCAL MSV mu lambda, VITERBI mu lambda, FORWARD tau lambda */
    double evd[2];      /* HMMER2's EVD: mu lambda */
    double effn;
    long nseq, maxl;
    unsigned long cksum;
    int seen_3a; /* while reading: HMMER3/a's STATS lines met, 1 VLAMBDA, 2 VMU, 4 FTAU */
} HmmerMeta;

/* Writes m, one "PREFIX KEY VALUE" line per key (prefix "// hmmer:" in the
 * program, "hmmc: import:" for -v). */
void hmmer_meta_write(FILE *out, const char *prefix, const HmmerMeta *m);

/* Reads the `// hmmer: KEY VALUE` lines of a program's text (len bytes)
 * into m (zeroed by the caller; hmmer_meta_free frees it), up to the first
 * line that is neither a comment nor blank. Returns the number of lines
 * read (0: the text has none, not an import), or minus the number of the
 * first line whose value cannot be read. */
int hmmer_meta_read(const char *text, size_t len, HmmerMeta *m);

void hmmer_meta_free(HmmerMeta *m);

#endif
