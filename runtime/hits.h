/* hits.h: the hits mode of a program imported from a HMMER3 file (hmmsearch's
 * -E, -T, --tblout ...): the hits kept while the sequences are scored
 * (hits.c), their domains from the viterbi path (hits_domains.c), and the
 * ranked list and the tables written at the end (hits_tables.c). Private to
 * the runtime; docs/hmmer.md describes the mode. */
#ifndef HMMRT_HITS_H
#define HMMRT_HITS_H

#include "internal.h"

/* One domain: a B .. E stretch of the best path. */
typedef struct hmmrt_domain {
    int64_t ali_from, ali_to; /* 1-based residues of its first and last emitting move */
    long hmm_from, hmm_to;    /* its first and last match state (k of Mk) */
    double bits;              /* its envelope's score (docs/hmmer.md, "Domains") */
    double lnP;               /* ln of its P-value, from the same tau and lambda */
    int reported, included;
} hmmrt_domain;

typedef struct hmmrt_hit {
    char *name;
    int64_t length, index; /* residues; 0-based position in the input */
    double bits, lnP;      /* the forward score / ln 2 and ln of its P-value */
    int n_domains, best;   /* best: the domain of highest score, or -1 */
    hmmrt_domain *domains;
    int reported, included;
    double sortkey;        /* larger ranks first: -lnP, or the score with score thresholds */
} hmmrt_hit;

/* ---- hits_domains.c -------------------------------------------------------- */
/* What finding domains needs of the searched model: its states by name and
 * its moves by their ends, made once. */
typedef struct hmmrt_path_model hmmrt_path_model;
hmmrt_path_model *hmmrt_path_model_new(const hmmrt_model *m, const char *alphabet);
void hmmrt_path_model_free(hmmrt_path_model *pm);
/* The domains of a sequence (codes of the model's alphabet, L residues) from
 * its viterbi traceback (state names separated by single spaces): *out
 * (malloc'd, *n of them; NULL and 0 when there are none), bits set (the
 * envelope's score), the rest of each domain's numbers left to the caller.
 * 0, -1 out of memory, or -2 when the traceback does not follow the model's
 * moves (an internal error). One thread at a time: pm holds scratch. */
int hmmrt_find_domains(hmmrt_path_model *pm, const char *traceback, const uint8_t *codes,
                       int64_t L, hmmrt_domain **out, int *n);
/* ln of esl_exp_surv: the probability that a score exceeds bits in the
 * exponential tail of tau and lambda (0 at or below tau). */
double hmmrt_hits_lnP(double bits, double tau, double lambda);

/* ---- hits.c ------------------------------------------------------------------ */
typedef struct hmmrt_hits {
    const hmmrt_program *prog;
    const hmmrt_hits_info *info;
    const hmmrt_hits_options *opt;
    const hmmrt_options *o;
    hmmrt_path_model *paths;  /* NULL when the program prints no traceback */
    hmmrt_hit *hits;          /* the hits that may still be reported */
    size_t n, cap, prune_at;
    int64_t searched;         /* sequences scored */
    int64_t residues;         /* ... and their residues */
    size_t longest_name;      /* over every sequence scored (the tables' widths) */
    FILE *tblout, *domtblout;
    double Z, domZ;           /* set by hmmrt_hits_finish */
    int64_t n_reported, n_included;
} hmmrt_hits;

/* Opens the tables' files: 0, or an exit status after saying why. */
int hmmrt_hits_open(hmmrt_hits *h, const hmmrt_program *prog, const hmmrt_options *o);
/* Takes one scored sequence (its values; codes of the searched model's
 * alphabet): 0, -1 out of memory, -2 a broken traceback. */
int hmmrt_hits_add(hmmrt_hits *h, const hmmrt_record *rec, int64_t index,
                   const hmmrt_value *values, const uint8_t *codes);
/* 1 when a sequence of this search score (nats) may still be reported, so
 * far as the sequences taken until now, the `before` ones scored ahead of it
 * but not yet taken and the sequence itself tell (Z only grows). */
int hmmrt_hits_may_report(const hmmrt_hits *h, double nats, int64_t before);
/* Applies the thresholds, ranks, writes the list to out and the tables:
 * 0, or an exit status after saying why. */
int hmmrt_hits_finish(hmmrt_hits *h, hmmrt_out *out);
void hmmrt_hits_close(hmmrt_hits *h);

/* ---- hits_tables.c ------------------------------------------------------------- */
/* hmmsearch 3.3.2's --tblout and --domtblout layouts, and the ranked list. */
void hmmrt_hits_write_tblout(const hmmrt_hits *h, FILE *f);
void hmmrt_hits_write_domtblout(const hmmrt_hits *h, FILE *f);
void hmmrt_hits_write_list(const hmmrt_hits *h, hmmrt_out *out);

#endif
