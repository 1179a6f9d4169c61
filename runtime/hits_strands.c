/* hits_strands.c: the hits of a DNA (or RNA) model, as nhmmer reports them:
 * each strand of a target (the sequence, and its reverse complement) is
 * scored in windows of 2W residues, W = MAXL, each W past the last; every
 * envelope that HMMER's posterior decoding finds in a window is a hit, its
 * alignment the stretch of the window's best path in it, scored as nhmmer
 * scores an envelope; hits found twice in overlapping windows are kept once
 * (docs/hmmer.md, "DNA models: both strands"). */
#include "hits.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SHORTEST_HIT 8 /* nhmmer drops alignments of fewer residues */
#define ENV_EXTRA 20   /* nhmmer's max_env_extra */

typedef struct candidate {
    int64_t from, to; /* 1-based on the strand scored: the alignment */
    int64_t env_from, env_to;
    long hmm_from, hmm_to;
    double bits;
} candidate;

struct hmmrt_strands {
    const hmmrt_program *prog;
    uint8_t comp[256];     /* each code's complement, in the model's alphabet */
    uint8_t *strand;       /* the strand scored now */
    size_t strand_cap;
    hmmrt_value *values;   /* one row of the program's columns */
    hmmrt_scratch scratch; /* the program's score_cpu */
    candidate *c;
    size_t n, cap;
};

/* IUPAC's complement of a nucleotide code (Easel's: U is T, X is N, I is A). */
static int complement_of(int ch)
{
    static const char from[] = "ACGTURYMKSWHBVDNXI*";
    static const char to[] = "TGCAAYRKMSWDVBHNXT*";
    int up = toupper(ch);
    const char *at = strchr(from, up);
    if (!at || !up)
        return -1;
    int c = to[at - from];
    return islower(ch) ? tolower(c) : c;
}

hmmrt_strands *hmmrt_strands_new(const hmmrt_hits *h)
{
    const hmmrt_program *prog = h->prog;
    const hmmrt_hits_info *info = h->info;
    if (!h->paths || info->model < 0 || info->maxl <= 0 || prog->n_alphabets != 1) {
        hmmrt_error("the DNA model %s cannot search both strands here: it needs its viterbi "
                    "traceback, MAXL, and one alphabet (an internal error of hmmc)", info->query);
        return NULL;
    }
    hmmrt_strands *s = calloc(1, sizeof *s);
    if (!s || !(s->values = calloc((size_t)prog->n_columns + 1, sizeof *s->values))) {
        free(s);
        hmmrt_error("out of memory");
        return NULL;
    }
    s->prog = prog;
    const char *alphabet = prog->alphabets[prog->models[info->model].alphabet];
    size_t K = strlen(alphabet);
    for (size_t a = 0; a < K; a++) {
        int c = complement_of((unsigned char)alphabet[a]);
        const char *at = c > 0 ? strchr(alphabet, c) : NULL;
        if (!at) {
            hmmrt_error("the DNA model %s has the symbol '%c', which has no complement in its "
                        "alphabet: a DNA import's alphabet is nhmmer's (IUPAC codes)",
                        info->query, alphabet[a]);
            hmmrt_strands_free(s);
            return NULL;
        }
        s->comp[a] = (uint8_t)(at - alphabet);
    }
    return s;
}

void hmmrt_strands_free(hmmrt_strands *s)
{
    if (!s)
        return;
    for (int c = 0; c < s->prog->n_columns; c++)
        hmmrt_buf_free(&s->values[c].text);
    free(s->values);
    free(s->strand);
    free(s->c);
    hmmrt_scratch_free(&s->scratch);
    free(s);
}

double hmmrt_strands_Z(const hmmrt_hits *h)
{
    int both = h->opt->strands == HMMRT_STRAND_BOTH;
    double residues = h->opt->Z_set ? h->opt->Z * 1e6 : (double)h->residues;
    return residues * (both ? 2.0 : 1.0) / (double)h->info->maxl;
}

static int add_candidate(hmmrt_strands *s, const candidate *c)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        candidate *grown = realloc(s->c, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->c = grown;
        s->cap = cap;
    }
    s->c[s->n++] = *c;
    return 0;
}

/* Scores the window x[0 .. Lw-1] (at offset `at` on the strand) and adds its
 * hits: 0, -1 out of memory, -2 a broken traceback. */
static int score_window(hmmrt_hits *h, hmmrt_strands *s, const hmmrt_record *rec, int64_t index,
                        const uint8_t *x, int64_t Lw, int64_t at)
{
    const hmmrt_program *prog = s->prog;
    for (int c = 0; c < prog->n_columns; c++) {
        s->values[c].score = NAN;
        hmmrt_buf_reset(&s->values[c].text);
    }
    const uint8_t *codes[1] = {x};
    hmmrt_seq seq = {.name = rec->name, .codes = codes, .length = Lw, .index = index};
    if (prog->score_cpu(&seq, s->values, &s->scratch) != 0)
        return -1;
    const hmmrt_buf *tb = &s->values[h->info->traceback_column].text;
    if (s->values[h->info->score_column].score == -INFINITY)
        return 0; /* no path: nothing the model can align here */
    hmmrt_domain *doms = NULL;
    hmmrt_envelope *envs = NULL;
    int n = 0, n_envs = 0;
    int status = hmmrt_find_domains(h->paths, tb->len ? tb->data : "", x, Lw, 0, &doms, &n);
    if (status != 0)
        return status;
    /* a window whose best path enters the model nowhere is taken to hold no
     * envelope (the posterior decoding, the costly part, is skipped) */
    if (n > 0 && hmmrt_find_envelopes(h->paths, x, Lw, &envs, &n_envs) != 0) {
        free(doms);
        return -1;
    }
    /* Each envelope is a hit, with its alignment from the posteriors; one
     * with several stretches of the best path in it (where HMMER would
     * cluster sampled paths) gives a hit per stretch, each its own envelope. */
    for (int e = 0; e < n_envs; e++) {
        const hmmrt_envelope *env = &envs[e];
        int first = -1, count = 0;
        for (int d = 0; d < n; d++)
            if (doms[d].ali_from <= env->to && doms[d].ali_to >= env->from) {
                if (first < 0)
                    first = d;
                count++;
            }
        /* d = -1: the envelope with its own alignment (one stretch or none in
         * it); else each stretch d of several */
        int d_first = count > 1 ? first : -1, d_end = count > 1 ? first + count : 0;
        for (int d = d_first; d < d_end; d++) {
            int64_t from = d < 0 ? env->ali_from : doms[d].ali_from;
            int64_t to = d < 0 ? env->ali_to : doms[d].ali_to;
            int64_t env_from = d < 0 ? env->from : from, env_to = d < 0 ? env->to : to;
            if (to - from + 1 < SHORTEST_HIT)
                continue;
            /* nhmmer trims an envelope reaching more than 23 residues past the
             * alignment to 20 past it (rescore_isolated_domain, long targets) */
            if (env_from < from - ENV_EXTRA - 3 || env_to > to + ENV_EXTRA + 3) {
                env_from = env_from > from - ENV_EXTRA ? env_from : from - ENV_EXTRA;
                env_to = env_to < to + ENV_EXTRA ? env_to : to + ENV_EXTRA;
            }
            candidate c = {from + at, to + at, env_from + at, env_to + at,
                           d < 0 ? env->hmm_from : doms[d].hmm_from,
                           d < 0 ? env->hmm_to : doms[d].hmm_to, 0};
            c.bits = hmmrt_nhmmer_bits(h->paths, x, env_from, env_to, to - from + 1,
                                       h->info->maxl);
            if (isnan(c.bits) || add_candidate(s, &c) != 0) {
                free(doms);
                free(envs);
                return -1;
            }
        }
    }
    free(doms);
    free(envs);
    return 0;
}

static int by_from(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return (x->to > y->to) - (x->to < y->to);
}

/* Hits found in two overlapping windows: two candidates overlapping by half
 * the shorter or more are one hit, the one of higher score kept. */
static void remove_duplicates(hmmrt_strands *s, int64_t span)
{
    if (s->n > 1) /* none: c may be NULL, which qsort must not get */
        qsort(s->c, s->n, sizeof *s->c, by_from);
    size_t kept = 0;
    for (size_t i = 0; i < s->n; i++) {
        candidate *c = &s->c[i];
        int dropped = 0;
        for (size_t j = kept; j-- > 0 && !dropped;) {
            candidate *k = &s->c[j];
            if (c->from - k->from > span)
                break; /* no hit is longer than a window: earlier ones end before c */
            int64_t lo = k->from > c->from ? k->from : c->from;
            int64_t hi = k->to < c->to ? k->to : c->to;
            int64_t shorter = k->to - k->from < c->to - c->from ? k->to - k->from + 1
                                                                : c->to - c->from + 1;
            if (2 * (hi - lo + 1) < shorter)
                continue;
            if (c->bits > k->bits)
                *k = *c;
            dropped = 1;
        }
        if (!dropped)
            s->c[kept++] = *c;
    }
    s->n = kept;
}

/* Scores one strand of L codes in windows, its hits into h. */
static int score_strand(hmmrt_hits *h, hmmrt_strands *s, const hmmrt_record *rec, int64_t index,
                        const uint8_t *x, int64_t L, char strand)
{
    int64_t W = h->info->maxl, span = 2 * W;
    s->n = 0;
    for (int64_t at = 0;; at += W) {
        int64_t Lw = L - at < span ? L - at : span;
        int status = score_window(h, s, rec, index, x + at, Lw, at);
        if (status != 0)
            return status;
        if (at + Lw >= L)
            break;
    }
    remove_duplicates(s, span);
    for (size_t i = 0; i < s->n; i++) {
        const candidate *c = &s->c[i];
        hmmrt_domain *dom = malloc(sizeof *dom);
        if (!dom)
            return -1;
        *dom = (hmmrt_domain){.ali_from = strand == '+' ? c->from : L - c->from + 1,
                              .ali_to = strand == '+' ? c->to : L - c->to + 1,
                              .env_from = strand == '+' ? c->env_from : L - c->env_from + 1,
                              .env_to = strand == '+' ? c->env_to : L - c->env_to + 1,
                              .hmm_from = c->hmm_from, .hmm_to = c->hmm_to, .bits = c->bits,
                              .lnP = hmmrt_hits_lnP(c->bits, h->info->tau, h->info->lambda)};
        hmmrt_hit hit = {.name = strdup(rec->name), .length = L, .index = index,
                         .bits = dom->bits, .lnP = dom->lnP, .n_domains = 1, .best = 0,
                         .domains = dom, .strand = strand};
        if (hmmrt_hits_keep(h, &hit) != 0)
            return -1;
    }
    return 0;
}

int hmmrt_strands_add(hmmrt_hits *h, const hmmrt_record *rec, int64_t index,
                      const uint8_t *codes)
{
    hmmrt_strands *s = h->strands;
    int64_t L = rec->length;
    if (L == 0)
        return 0;
    if (h->opt->strands & HMMRT_STRAND_WATSON) {
        int status = score_strand(h, s, rec, index, codes, L, '+');
        if (status != 0)
            return status;
    }
    if (h->opt->strands & HMMRT_STRAND_CRICK) {
        if ((size_t)L > s->strand_cap) {
            uint8_t *grown = realloc(s->strand, (size_t)L);
            if (!grown)
                return -1;
            s->strand = grown;
            s->strand_cap = (size_t)L;
        }
        for (int64_t i = 0; i < L; i++)
            s->strand[i] = s->comp[codes[L - 1 - i]];
        return score_strand(h, s, rec, index, s->strand, L, '-');
    }
    return 0;
}
