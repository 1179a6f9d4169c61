/* hits.h: the hits mode of a program imported from a HMMER3 file (hmmsearch's
 * -E, -T, --tblout ...): the hits kept while the sequences are scored
 * (hits.c), their domains from the viterbi path (hits_domains.c), and the
 * ranked list and the tables written at the end (hits_tables.c); a program
 * of many models searches with each (hits.c) or, with --hmmscan, ranks
 * the models per sequence (hits_scan.c). Private to the runtime;
 * docs/hmmer.md describes the mode. */
#ifndef HMMRT_HITS_H
#define HMMRT_HITS_H

#include "internal.h"

/* One domain: a B .. E stretch of the best path. */
typedef struct hmmrt_domain {
    int64_t ali_from, ali_to; /* 1-based residues of its first and last emitting move */
    int64_t env_from, env_to; /* a DNA model's hit: its envelope (else the ali coordinates) */
    long hmm_from, hmm_to;    /* its first and last match state (k of Mk) */
    double bits;              /* its envelope's score (docs/hmmer.md, "Domains") */
    double bias;              /* the null2 correction taken from it, bits (0 with --nonull2) */
    double lnP;               /* ln of its P-value, from the same tau and lambda */
    int reported, included;
} hmmrt_domain;

typedef struct hmmrt_hit {
    char *name;
    int64_t length, index; /* residues; 0-based position in the input */
    double bits, lnP;      /* the forward score / ln 2 (less bias) and ln of its P-value */
    double bias;           /* the null2 correction taken from bits (0 with --nonull2) */
    int n_domains, best;   /* best: the domain of highest score, or -1 */
    hmmrt_domain *domains;
    int reported, included;
    double sortkey;        /* larger ranks first: -lnP, or the score with score thresholds */
    char strand;           /* a DNA model's hit: '+' or '-' (its one domain); 0 otherwise */
    const hmmrt_hits_info *model; /* --hmmscan: the model hit (name: its NAME); else NULL */
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
 * envelope's score) when score is not 0, the rest of each domain's numbers left to the caller.
 * 0, -1 out of memory, or -2 when the traceback does not follow the model's
 * moves (an internal error). One thread at a time: pm holds scratch. */
int hmmrt_find_domains(hmmrt_path_model *pm, const char *traceback, const uint8_t *codes,
                       int64_t L, int score, hmmrt_domain **out, int *n);
/* nhmmer's score (bits, no null2) of a hit whose envelope is residues
 * [from, to] (1-based) of x holding an alignment of ali_len residues, for
 * the window length W (MAXL); NaN when memory
 * runs out. One thread at a time. */
double hmmrt_nhmmer_bits(hmmrt_path_model *pm, const uint8_t *x, int64_t from, int64_t to,
                         int64_t ali_len, long W);
/* nhmmer's envelopes in x (L codes), as HMMER's domain definition finds its
 * regions from posterior decoding (p7_domaindef_ByPosteriorHeuristics,
 * thresholds rt1 0.25 and rt2 0.10) with the model multihit for length L:
 * *out (malloc'd, *n). 0, or -1 out of memory. One thread at a time. */
typedef struct hmmrt_envelope {
    int64_t from, to;         /* 1-based */
    int64_t ali_from, ali_to; /* its alignment from the posteriors (hits_domains.c) */
    long hmm_from, hmm_to;
} hmmrt_envelope;
int hmmrt_find_envelopes(hmmrt_path_model *pm, const uint8_t *x, int64_t L, hmmrt_envelope **out,
                         int *n);
/* ln of esl_exp_surv: the probability that a score exceeds bits in the
 * exponential tail of tau and lambda (0 at or below tau). */
double hmmrt_hits_lnP(double bits, double tau, double lambda);

/* The posteriors of residues [from, to] (1-based) of x alone, with the
 * model unihit (E -> C 1) and its length model for L (loops L / (L + 2)),
 * as HMMER rescores an envelope: row i - from of *n_states values, each
 * state's probability of emitting residue i; NULL when no path emits them
 * or memory ran out. Valid until pm is used again. */
struct hmmrt_fb;
const double *hmmrt_unihit_posterior(hmmrt_path_model *pm, const uint8_t *x, int64_t L,
                                     int64_t from, int64_t to, size_t *n_states);
const struct hmmrt_fb *hmmrt_path_fb(const hmmrt_path_model *pm);
/* The best path of x (L codes) in the model's own configuration for L, as
 * the program prints a viterbi traceback (state names, single spaces), into
 * tb: 0, 1 when no path emits x, -1 out of memory. For the domains of a
 * program of many models, whose main prints no traceback. */
int hmmrt_path_traceback(hmmrt_path_model *pm, const uint8_t *x, int64_t L, hmmrt_buf *tb);

/* ---- hits_null2.c: HMMER3's null2, the correction of biased composition ---- */
/* The null2 correction (nats) of a domain whose envelope is residues
 * [from, to] of x (L residues), as p7_Null2_ByExpectation and
 * p7_domaindef make it: ln(1 + omega exp(sum of ln null2(x_i))), omega
 * 1/256; *sum gets the sum of ln null2(x_i) (NULL: not wanted). NaN when
 * memory runs out; 0 when no path emits the envelope. */
double hmmrt_null2(hmmrt_path_model *pm, const uint8_t *x, int64_t L, int64_t from, int64_t to,
                   double *sum);
/* The null2 correction (nats) of a whole sequence: its envelopes found as
 * HMMER's domain definition finds them (hmmrt_find_envelopes), each
 * envelope's sum of ln null2 added, ln(1 + omega exp(total)). NaN when
 * memory runs out. */
double hmmrt_null2_sequence(hmmrt_path_model *pm, const uint8_t *x, int64_t L);
/* nhmmer's null2 correction (bits, >= 0) of a DNA hit of nhmmer's score
 * `bits` (hmmrt_nhmmer_bits of the same envelope [from, to] of x, alignment
 * ali_len, W): the envelope scored again with the match states' odds taken
 * against the envelope's own composition mixed with the null model's
 * (p7_domaindef.c, rescore_isolated_domain for long targets; Lw the window's
 * length), and bits less that score, or 0 when it is not lower. alphabet:
 * the model's (IUPAC codes). NaN when memory runs out. pm's emission values
 * are changed while it runs and put back. One thread at a time. */
double hmmrt_nhmmer_null2(hmmrt_path_model *pm, const char *alphabet, const uint8_t *x,
                          int64_t from, int64_t to, int64_t ali_len, long W, int64_t Lw,
                          double bits);

/* ---- hits.c ------------------------------------------------------------------ */
typedef struct hmmrt_hits {
    const hmmrt_program *prog;
    const hmmrt_hits_info *info;
    const hmmrt_hits_options *opt;
    const hmmrt_options *o;
    hmmrt_path_model *paths;  /* NULL when the program prints no traceback */
    struct hmmrt_strands *strands; /* a DNA model's windows (hits_strands.c), or NULL */
    hmmrt_hit *hits;          /* the hits that may still be reported */
    size_t n, cap, prune_at;
    int64_t searched;         /* sequences scored */
    int64_t residues;         /* ... and their residues */
    size_t longest_name;      /* over every sequence scored (the tables' widths) */
    /* -E's test without a logarithm for most sequences: at Z >= sure_Z, a score
     * below sure_bits cannot be reported (hits.c, refresh_sure) */
    double sure_Z, sure_bits;
    FILE *tblout, *domtblout;
    double Z, domZ;           /* set by hmmrt_hits_finish */
    int64_t n_reported, n_included;
    int has_domains;          /* the hits have domains (from the traceback) */
    int own_paths;            /* ... from tracebacks made here (hmmrt_path_traceback): a
                                 program of many models prints none */
    hmmrt_buf traceback;      /* own_paths: the last one */
    int first_query, last_query; /* the list's and tables' opening and closing lines */
    /* A program of many models (hmmrt_hits_info.n_queries > 1): one search per
     * model, each a hmmrt_hits of its own (the tables' files are this one's),
     * written in the models' order as hmmsearch does a file of many queries;
     * or, with --hmmscan, each sequence's hits among the models (hits_scan.c). */
    struct hmmrt_hits *queries;
    int n_queries;
    hmmrt_out *out;           /* where --hmmscan writes each sequence's list (score.c sets it) */
    size_t longest_model, longest_acc; /* --hmmscan: over every model (the tables' widths) */
    int64_t scan_written;     /* --hmmscan: sequences whose list is written */
    hmmrt_path_model **thread_paths; /* a path model a thread, for hmmrt_hits_prepare ... */
    int n_thread_paths;       /* ... made on first need */
    struct hmmrt_scan_ready *scan_ready; /* --hmmscan: a batch's hits made ahead (hits_scan_ready.c) */
} hmmrt_hits;

/* A hit's domains and null2 worked out ahead of its turn, on any thread
 * (the printer takes sequences in input order, one at a time; these take
 * milliseconds each): 1 when h can prepare hits (one model, domains from
 * the program's traceback), after making n_threads path models. */
int hmmrt_hits_can_prepare(hmmrt_hits *h, int n_threads);
/* Thread t's: *hit from the sequence's values and codes, as hmmrt_hits_add
 * would make it. 0, -1 out of memory, -2 a broken traceback; hit->name is
 * left NULL. */
int hmmrt_hits_prepare(const hmmrt_hits *h, int t, const hmmrt_record *rec, int64_t index,
                       const hmmrt_value *values, const uint8_t *codes, hmmrt_hit *hit);

/* p7_tophits_Threshold: which of the n hits and their domains are reported
 * and included, for h->Z set by the caller (each hit's cutoffs are its
 * model's under --hmmscan, else the search's); sets h->domZ and the counts. */
void hmmrt_hits_threshold(hmmrt_hits *h, hmmrt_hit *hits, size_t n);

/* One hit's block of domains in the list ("Domain annotation"), hmmsearch's
 * and hmmscan's alike: NAME and DESC head it, M is the model's length. */
void hmmrt_hits_write_domain_block(const hmmrt_hits *h, const hmmrt_hit *hit, const char *name,
                                   const char *desc, int M, hmmrt_out *out);

/* Opens the tables' files: 0, or an exit status after saying why. */
int hmmrt_hits_open(hmmrt_hits *h, const hmmrt_program *prog, const hmmrt_options *o);
/* Takes one scored sequence (its values; codes of the searched model's
 * alphabet): 0, -1 out of memory, -2 a broken traceback. */
int hmmrt_hits_add(hmmrt_hits *h, const hmmrt_record *rec, int64_t index,
                   const hmmrt_value *values, const uint8_t *codes);
/* The same with the hit hmmrt_hits_prepare made of it (its domains are taken
 * over, or freed). */
int hmmrt_hits_add_prepared(hmmrt_hits *h, const hmmrt_record *rec, hmmrt_hit *ready);
/* 1 when a sequence of this search score (nats) may still be reported, so
 * far as the sequences taken until now, the `before` ones scored ahead of it
 * but not yet taken and the sequence itself tell (Z only grows). */
int hmmrt_hits_may_report(const hmmrt_hits *h, double nats, int64_t before);
/* -E's bound for a database of Z: a score below it (bits) has lnP + ln Z >
 * ln E (lnP = -lambda (bits - tau) above tau, 0 below, where ln Z > ln E is
 * asked too), so that it cannot be reported at Z or any larger Z; a margin
 * is left for rounding. -INFINITY where no score can be ruled out so
 * (a score threshold, a cutoff, ln Z <= ln E). */
double hmmrt_hits_sure_bits(const hmmrt_hits_info *m, const hmmrt_hits_options *opt, double Z);
/* A sequence scored: Z's count, the residues and the tables' name width. */
void hmmrt_hits_count(hmmrt_hits *h, const hmmrt_record *rec);
/* Applies the thresholds, ranks, writes the list to out and the tables:
 * 0, or an exit status after saying why. */
int hmmrt_hits_finish(hmmrt_hits *h, hmmrt_out *out);
void hmmrt_hits_close(hmmrt_hits *h);

/* Keeps hit (taking its name and domains) while it may still be reported:
 * 0, or -1 out of memory (hit's memory is freed either way when not kept). */
int hmmrt_hits_keep(hmmrt_hits *h, hmmrt_hit *hit);

/* The null2 correction of one hit of h's model (hits.c): the sequence's and
 * its domains', taken from their scores. 0, or -1 out of memory. */
int hmmrt_hits_null2(hmmrt_hits *h, hmmrt_hit *hit, const uint8_t *codes);
/* The domains of a hit of h's model (hit->domains, n_domains; their bits
 * set), from the printed traceback or one made here (own_paths): 0, -1 out
 * of memory, -2 a broken traceback. */
int hmmrt_hits_domains(hmmrt_hits *h, hmmrt_hit *hit, const hmmrt_value *values,
                       const uint8_t *codes);
/* The path model of h's model, made on first use: 0, or an exit status. */
int hmmrt_hits_paths(hmmrt_hits *h);

/* ---- hits_scan.c: --hmmscan, each sequence against every model ---------------- */
/* Takes one scored sequence: its hits among the models, ranked and written
 * at once (the list to h->out, the tables' lines). 0, or -1 out of memory. */
int hmmrt_hmmscan_add(hmmrt_hits *h, const hmmrt_record *rec, const hmmrt_value *values,
                   const uint8_t *codes);
/* The closing lines: 0, or an exit status after saying why. */
void hmmrt_hmmscan_finish(hmmrt_hits *h, hmmrt_out *out);
/* Sets each model's bound on bits below which -E cannot report (Z, the
 * number of models or -Z, is fixed): most pairs then cost no logarithm. */
void hmmrt_hmmscan_bounds(hmmrt_hits *h);
/* 1 when model k's score (nats) may be reported: the pairs worth a hit. */
int hmmrt_hmmscan_may_report(const hmmrt_hits *h, int k, double nats);
/* Model k's hit of the sequence (domains, null2, P-values, best domain):
 * 0, or -1 out of memory, -2 a broken traceback (hit->domains may be set:
 * the caller frees them). Uses model k's path model: one thread a model. */
int hmmrt_hmmscan_hit(hmmrt_hits *h, int k, const hmmrt_record *rec, const hmmrt_value *values,
                      const uint8_t *codes, hmmrt_hit *hit);

/* A hit's domains and null2 (hmmrt_hits_add's work for a score that may be
 * reported): 0, -1 out of memory, -2 a broken traceback (hit->domains may
 * be set: the caller frees them). Uses h's path model: one thread a model. */
int hmmrt_hits_make(hmmrt_hits *h, const hmmrt_record *rec, int64_t index,
                    const hmmrt_value *values, const uint8_t *codes, hmmrt_hit *hit);
/* 1 when a score (nats) of the next sequence may still be reported: hits
 * made ahead for a batch are those of a Z no larger than any of its own. */
int hmmrt_hits_may_report_ahead(const hmmrt_hits *h, double nats);

/* ---- hits_scan_ready.c: the hits of many models of a batch, made on every thread */
/* Makes the hits of the n sequences of recs (the first first_index in the
 * input; values: n_columns a sequence; codes: one pointer a sequence;
 * use[i] 0: sequence i is not scored) that may be reported, of every model,
 * --hmmscan or not, on up to n_threads threads, one model at a time a
 * thread, for hmmrt_hmmscan_add and hmmrt_hits_add to take in turn; nothing
 * made when memory runs short (they make them). */
void hmmrt_hmmscan_prepare(hmmrt_hits *h, const hmmrt_record *recs, int64_t n,
                           int64_t first_index, const hmmrt_value *values, int n_columns,
                           const uint8_t *const *codes, const unsigned char *use, int n_threads);
/* The hits made ahead for rec, moved to hits (room for one a model): their
 * count, or -1 when rec's were not made ahead; *status: a failed one's. */
int64_t hmmrt_hmmscan_take(hmmrt_hits *h, const hmmrt_record *rec, hmmrt_hit *hits, int *status);
/* Model k's hit of rec made ahead, moved to *hit: 1, or 0 when there is
 * none; *status: its making's. */
int hmmrt_hits_take_ready(hmmrt_hits *h, const hmmrt_record *rec, int k, hmmrt_hit *hit,
                          int *status);
void hmmrt_hmmscan_release_ready(hmmrt_hits *h, int all);

/* ---- hits_strands.c: a DNA model's hits, as nhmmer's -------------------------- */
typedef struct hmmrt_strands hmmrt_strands;
/* NULL after saying why (out of memory, an alphabet without complements). */
hmmrt_strands *hmmrt_strands_new(const hmmrt_hits *h);
void hmmrt_strands_free(hmmrt_strands *s);
/* Scores the strands of one sequence and keeps its hits: 0, -1 out of
 * memory, -2 a broken traceback. */
int hmmrt_strands_add(hmmrt_hits *h, const hmmrt_record *rec, int64_t index,
                      const uint8_t *codes);
/* nhmmer's E-value factor: residues searched (both strands, or -Z) / W. */
double hmmrt_strands_Z(const hmmrt_hits *h);
/* --timing: the windows scored, on how many threads, and how many in full. */
void hmmrt_strands_report(const hmmrt_hits *h, FILE *f);

/* ---- hits_tables.c ------------------------------------------------------------- */
/* hmmsearch 3.3.2's --tblout and --domtblout layouts, and the ranked list. */
void hmmrt_hits_write_tblout(const hmmrt_hits *h, FILE *f);
void hmmrt_hits_write_domtblout(const hmmrt_hits *h, FILE *f);
void hmmrt_hits_write_list(const hmmrt_hits *h, hmmrt_out *out);
/* The list's opening lines (the program, files, thresholds). */
void hmmrt_hits_write_preamble(const hmmrt_hits *h, hmmrt_out *out);
/* Their shared pieces: the trailer of a table, a line of the list, the
 * list's threshold lines. */
void hmmrt_hits_write_tail(const hmmrt_hits *h, FILE *f);
void hmmrt_hits_outf(hmmrt_out *out, const char *fmt, ...) HMMRT_PRINTF(2, 3);
void hmmrt_hits_write_thresholds(const hmmrt_hits *h, hmmrt_out *out);
/* nhmmer 3.3.2's --tblout layout, and the list, for a DNA model's hits. */
void hmmrt_hits_write_dna_tblout(const hmmrt_hits *h, FILE *f);
void hmmrt_hits_write_dna_list(const hmmrt_hits *h, hmmrt_out *out);

#endif
