/* hits_strands.c: the hits of a DNA (or RNA) model, as nhmmer reports them:
 * each strand of a target (the sequence, and its reverse complement) is
 * scored in windows of 2W residues, W = MAXL, each W past the last, on every
 * thread; a window whose forward score leaves no hit that can be reported
 * stops there; in the others every envelope that HMMER's posterior decoding
 * finds is a hit, its alignment the stretch of the window's best path in it,
 * scored as nhmmer scores an envelope (null2 included); hits found twice in overlapping
 * windows are kept once (docs/hmmer.md, "DNA models: both strands"). */
#include "hits.h"

#include <ctype.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define SHORTEST_HIT 8 /* nhmmer drops alignments of fewer residues */
#define ENV_EXTRA 20   /* nhmmer's max_env_extra */
#define WINDOW_BLOCK 4096 /* windows shared out to the threads at a time */
#define PROBE_BLOCK 32    /* ... while the run's first windows choose hmmrt_strands.direct */

typedef struct candidate {
    int64_t from, to; /* 1-based on the strand scored: the alignment */
    int64_t env_from, env_to;
    long hmm_from, hmm_to;
    double bits;
    double bias; /* nhmmer's null2 correction taken from bits (0 with --nonull2) */
} candidate;

typedef struct candidates {
    candidate *c;
    size_t n, cap;
} candidates;

/* What one thread needs to score a window. */
typedef struct worker {
    hmmrt_path_model *paths; /* its own: the posteriors' weights and scratch */
    hmmrt_value *values;     /* one row of the program's columns */
    hmmrt_scratch scratch;   /* the program's score_cpu */
    int64_t bound_Lw;        /* the window length bound_gap was worked out for */
    double bound_gap;
} worker;

/* A window and what scoring it found. */
typedef struct window {
    int strand;       /* 0: the sequence as given; 1: its reverse complement */
    int64_t at, Lw;   /* offset on that strand, and residues */
    candidates found; /* its hits, on the strand's coordinates */
    int status;       /* 0, -1 out of memory, -2 a broken traceback */
    int full;         /* 1: scored past its forward score */
} window;

struct hmmrt_strands {
    const hmmrt_program *prog;
    const char *alphabet;  /* the model's symbols */
    uint8_t comp[256];     /* each code's complement, in the model's alphabet */
    uint8_t *strand;       /* the reverse complement of the sequence scored now */
    size_t strand_cap;
    int n_workers;
    worker *workers;
    window *windows;       /* WINDOW_BLOCK */
    candidates kept[2];    /* each strand's hits */
    double nj, ec;         /* the model's own configuration: J (1) or none (0), E -> C */
    /* 1: the windows go straight to the whole program (forward and viterbi),
     * without the forward score alone first: when most windows so far went
     * on past it (a lax threshold, -E 10), it would only be computed twice */
    int direct;
    /* HMMRT_DNA_WINDOWS=all: every window scored past its forward score (the
     * bound off), for the tests that compare the output with and without it */
    int all_windows;
    long long n_windows, n_full; /* --timing */
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

/* The weight of the move from the state called `from` to the one called
 * `to` in m, or -1 when there is none. */
static double move_weight(const hmmrt_model *m, const char *from, const char *to)
{
    for (int k = 0; k < m->n_moves; k++)
        if (!strcmp(m->state_names[m->moves[k].from], from) &&
            !strcmp(m->state_names[m->moves[k].to], to))
            return m->moves[k].weight;
    return -1;
}

static int open_workers(hmmrt_strands *s, const hmmrt_hits *h)
{
    const hmmrt_model *m = &s->prog->models[h->info->model];
    s->n_workers = omp_get_max_threads();
    s->workers = calloc((size_t)s->n_workers, sizeof *s->workers);
    s->windows = calloc(WINDOW_BLOCK, sizeof *s->windows);
    if (!s->workers || !s->windows)
        return -1;
    for (int t = 0; t < s->n_workers; t++) {
        worker *w = &s->workers[t];
        w->paths = hmmrt_path_model_new(m, s->prog->alphabets[m->alphabet]);
        w->values = calloc((size_t)s->prog->n_columns + 1, sizeof *w->values);
        if (!w->paths || !w->values)
            return -1;
    }
    return 0;
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
    if (!s) {
        hmmrt_error("out of memory");
        return NULL;
    }
    s->prog = prog;
    const char *windows = getenv("HMMRT_DNA_WINDOWS");
    s->all_windows = windows && !strcmp(windows, "all");
    const hmmrt_model *m = &prog->models[info->model];
    s->nj = move_weight(m, "E", "J") > 0 ? 1.0 : 0.0;
    s->ec = move_weight(m, "E", "C");
    if (open_workers(s, h) != 0 || !(s->ec > 0)) {
        hmmrt_error(s->ec > 0 ? "out of memory"
                              : "the DNA model %s has no move E -> C (an internal error of hmmc)",
                    info->query);
        hmmrt_strands_free(s);
        return NULL;
    }
    const char *alphabet = s->alphabet = prog->alphabets[m->alphabet];
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
    for (int t = 0; s->workers && t < s->n_workers; t++) {
        worker *w = &s->workers[t];
        for (int c = 0; w->values && c < s->prog->n_columns; c++)
            hmmrt_buf_free(&w->values[c].text);
        free(w->values);
        hmmrt_scratch_free(&w->scratch);
        hmmrt_path_model_free(w->paths);
    }
    free(s->workers);
    for (int k = 0; s->windows && k < WINDOW_BLOCK; k++)
        free(s->windows[k].found.c);
    free(s->windows);
    free(s->kept[0].c);
    free(s->kept[1].c);
    free(s->strand);
    free(s);
}

double hmmrt_strands_Z(const hmmrt_hits *h)
{
    int both = h->opt->strands == HMMRT_STRAND_BOTH;
    double residues = h->opt->Z_set ? h->opt->Z * 1e6 : (double)h->residues;
    return residues * (both ? 2.0 : 1.0) / (double)h->info->maxl;
}

void hmmrt_strands_report(const hmmrt_hits *h, FILE *f)
{
    const hmmrt_strands *s = h->strands;
    fprintf(f, "  hits mode (DNA): %lld windows of up to 2 x MAXL = %ld residues, on %d thread%s; "
               "%lld of them (%.1f%%) scored past their forward score (the others' leaves no "
               "hit that can be reported)\n",
            s->n_windows, 2 * h->info->maxl, s->n_workers, s->n_workers == 1 ? "" : "s",
            s->n_full, s->n_windows ? 100.0 * (double)s->n_full / (double)s->n_windows : 0.0);
}

static int add_candidate(candidates *list, const candidate *c)
{
    if (list->n == list->cap) {
        size_t cap = list->cap ? 2 * list->cap : 8;
        candidate *grown = realloc(list->c, cap * sizeof *grown);
        if (!grown)
            return -1;
        list->c = grown;
        list->cap = cap;
    }
    list->c[list->n++] = *c;
    return 0;
}

/* ln of the null model's probability of a sequence of L residues. */
static double null_model(double L) { return -L * log1p(1.0 / L) - log(L + 1.0); }

/* The most (nats) by which nhmmer's score of a hit found in a window of Lw
 * residues can exceed the window's forward score F, so that a window whose
 * F plus this gap cannot be reported holds no hit that can. F sums, among
 * others, every path with one domain: for a domain's core path (B .. E)
 * emitting s residues, loop_w^(Lw - s) move_w^2 ec / null(Lw) times the
 * core path's weight. The hit's score (hmmrt_nhmmer_bits) sums over the
 * same core paths inside its envelope (Ld residues, its alignment ali):
 * loop_ld^(ali - s) (W / (W + 2))^(n - ali) (2 / (W + 2))^2 / null(n),
 * n = max(W, Ld). Each core path's ratio of the two is at most the maximum
 * over 1 <= s <= Ld, 8 <= ali <= Ld <= Lw, linear in s and ali, so taken
 * at their ends; so the hit's sum is at most F times that maximum. */
static double bound_gap(const hmmrt_strands *s, int64_t Lw, long W)
{
    double lw = (double)Lw, w = (double)W, q = 2.0 + s->nj;
    double c = log1p(q / lw);        /* -ln loop_w: the window's N and C loops */
    double b = log1p(2.0 / w);       /* -ln (W / (W + 2)) */
    double fixed = lw * c + 2.0 * log(2.0 / (w + 2.0)) - 2.0 * log(q / (lw + q)) - log(s->ec) +
                   null_model(lw);
    double best = -INFINITY;
    for (int64_t Ld = SHORTEST_HIT; Ld <= Lw; Ld++) {
        double ld = (double)Ld, n = ld > w ? ld : w;
        double a = log1p(2.0 / ld); /* -ln loop_ld */
        double sz = a > c ? ld : 1.0, ali = b > a ? ld : SHORTEST_HIT;
        double r = sz * (a - c) + ali * (b - a) - n * b - null_model(n);
        if (r > best)
            best = r;
    }
    return best + fixed;
}

/* Scores the window x[0 .. Lw-1] (codes of one strand) with worker wk,
 * first its forward score alone, and when that leaves a hit that can be
 * reported, the program's viterbi path, the envelopes and their scores,
 * into win->found (positions on the window). 0, -1 out of memory, -2 a
 * broken traceback. */
static int score_window(const hmmrt_hits *h, hmmrt_strands *s, worker *wk,
                        const hmmrt_record *rec, int64_t index, const uint8_t *x, window *win)
{
    const hmmrt_program *prog = s->prog;
    const hmmrt_hits_info *info = h->info;
    int64_t Lw = win->Lw;
    if (Lw < SHORTEST_HIT)
        return 0; /* no alignment of nhmmer's shortest fits */
    for (int c = 0; c < prog->n_columns; c++) {
        wk->values[c].score = NAN;
        hmmrt_buf_reset(&wk->values[c].text);
    }
    const uint8_t *codes[1] = {x};
    hmmrt_seq seq = {.name = rec->name, .codes = codes, .length = Lw, .index = index};
    if (wk->bound_Lw != Lw) {
        wk->bound_gap = bound_gap(s, Lw, info->maxl);
        wk->bound_Lw = Lw;
    }
    const double margin = 1e-6; /* nats: rounding of the two forward sums */
    double gap = s->all_windows ? INFINITY : wk->bound_gap + margin;
    if (info->search && !s->direct && !s->all_windows) {
        if (info->search(&seq, wk->values, &wk->scratch) != 0)
            return -1;
        if (!hmmrt_hits_may_report(h, wk->values[info->score_column].score + gap, 0))
            return 0;
    }
    if (prog->score_cpu(&seq, wk->values, &wk->scratch) != 0 || hmmrt_buf_take_failure())
        return -1;
    double F = wk->values[info->score_column].score;
    if (F == -INFINITY || !hmmrt_hits_may_report(h, F + gap, 0))
        return 0; /* no path, or too weak for any hit */
    win->full = 1;
    const hmmrt_buf *tb = &wk->values[info->traceback_column].text;
    hmmrt_domain *doms = NULL;
    hmmrt_envelope *envs = NULL;
    int n = 0, n_envs = 0;
    int status = hmmrt_find_domains(wk->paths, tb->len ? tb->data : "", x, Lw, 0, &doms, &n);
    if (status != 0)
        return status;
    /* a window whose best path enters the model nowhere is taken to hold no
     * envelope (the posterior decoding, the costly part, is skipped) */
    if (n > 0 && hmmrt_find_envelopes(wk->paths, x, Lw, &envs, &n_envs) != 0) {
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
            candidate c = {from, to, env_from, env_to,
                           d < 0 ? env->hmm_from : doms[d].hmm_from,
                           d < 0 ? env->hmm_to : doms[d].hmm_to, 0, 0};
            c.bits = hmmrt_nhmmer_bits(wk->paths, x, env_from, env_to, to - from + 1,
                                       info->maxl);
            if (!isnan(c.bits) && !h->opt->nonull2) { /* nhmmer's default */
                c.bias = hmmrt_nhmmer_null2(wk->paths, s->alphabet, x, env_from, env_to,
                                            to - from + 1, info->maxl, Lw, c.bits);
                c.bits -= c.bias;
            }
            if (isnan(c.bits) || add_candidate(&win->found, &c) != 0) {
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
static void remove_duplicates(candidates *list, int64_t span)
{
    if (list->n > 1) /* none: c may be NULL, which qsort must not get */
        qsort(list->c, list->n, sizeof *list->c, by_from);
    size_t kept = 0;
    for (size_t i = 0; i < list->n; i++) {
        candidate *c = &list->c[i];
        int dropped = 0;
        for (size_t j = kept; j-- > 0 && !dropped;) {
            candidate *k = &list->c[j];
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
            list->c[kept++] = *c;
    }
    list->n = kept;
}

/* Windows of a strand of L residues: one when L <= 2W, else one every W
 * until one reaches the end. */
static int64_t windows_of(int64_t L, int64_t W)
{
    return L <= 2 * W ? 1 : 1 + (L - 2 * W + W - 1) / W;
}

/* Scores the windows of the strands (x[0], x[1]: NULL when not searched, L
 * residues each), WINDOW_BLOCK at a time on every thread, and gathers their
 * hits in window order into s->kept (the same for any number of threads). */
static int score_windows(const hmmrt_hits *h, hmmrt_strands *s, const hmmrt_record *rec,
                         int64_t index, const uint8_t *const x[2], int64_t L)
{
    int64_t W = h->info->maxl, per_strand = windows_of(L, W);
    int64_t total = (x[0] ? per_strand : 0) + (x[1] ? per_strand : 0);
    s->kept[0].n = s->kept[1].n = 0;
    for (int64_t first = 0, n; first < total; first += n) {
        /* the run's first windows in a small block, to choose s->direct early */
        int64_t block = s->n_windows < 4 * PROBE_BLOCK ? PROBE_BLOCK : WINDOW_BLOCK;
        n = total - first < block ? total - first : block;
        for (int64_t k = 0; k < n; k++) {
            int64_t g = first + k; /* the windows of the first strand searched, then the other's */
            window *win = &s->windows[k];
            win->strand = x[0] && g < per_strand ? 0 : 1;
            win->at = (x[0] && g >= per_strand ? g - per_strand : g) * W;
            win->Lw = L - win->at < 2 * W ? L - win->at : 2 * W;
            win->found.n = 0;
            win->status = win->full = 0;
        }
#pragma omp parallel for num_threads(s->n_workers) schedule(dynamic, 1)
        for (int64_t k = 0; k < n; k++) {
            window *win = &s->windows[k];
            hmmrt_buf_take_failure();
            win->status = score_window(h, s, &s->workers[omp_get_thread_num()], rec, index,
                                       x[win->strand] + win->at, win);
        }
        int status = 0;
        for (int64_t k = 0; k < n; k++) {
            window *win = &s->windows[k];
            status = status ? status : win->status;
            s->n_windows++;
            s->n_full += win->full;
            for (size_t i = 0; !status && i < win->found.n; i++) {
                candidate c = win->found.c[i];
                c.from += win->at;
                c.to += win->at;
                c.env_from += win->at;
                c.env_to += win->at;
                if (add_candidate(&s->kept[win->strand], &c) != 0)
                    status = -1;
            }
        }
        if (status != 0)
            return status;
        s->direct = 2 * s->n_full > s->n_windows;
    }
    return 0;
}

/* Keeps the hits of one strand (L residues), its duplicates removed. */
static int keep_strand(hmmrt_hits *h, candidates *list, const hmmrt_record *rec, int64_t index,
                       int64_t L, char strand)
{
    remove_duplicates(list, 2 * h->info->maxl);
    for (size_t i = 0; i < list->n; i++) {
        const candidate *c = &list->c[i];
        hmmrt_domain *dom = malloc(sizeof *dom);
        if (!dom)
            return -1;
        *dom = (hmmrt_domain){.ali_from = strand == '+' ? c->from : L - c->from + 1,
                              .ali_to = strand == '+' ? c->to : L - c->to + 1,
                              .env_from = strand == '+' ? c->env_from : L - c->env_from + 1,
                              .env_to = strand == '+' ? c->env_to : L - c->env_to + 1,
                              .hmm_from = c->hmm_from, .hmm_to = c->hmm_to, .bits = c->bits,
                              .bias = c->bias,
                              .lnP = hmmrt_hits_lnP(c->bits, h->info->tau, h->info->lambda)};
        hmmrt_hit hit = {.name = strdup(rec->name), .length = L, .index = index,
                         .bits = dom->bits, .lnP = dom->lnP, .bias = dom->bias, .n_domains = 1,
                         .best = 0, .domains = dom, .strand = strand};
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
    const uint8_t *x[2] = {h->opt->strands & HMMRT_STRAND_WATSON ? codes : NULL, NULL};
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
        x[1] = s->strand;
    }
    int status = score_windows(h, s, rec, index, x, L);
    if (status == 0 && x[0])
        status = keep_strand(h, &s->kept[0], rec, index, L, '+');
    if (status == 0 && x[1])
        status = keep_strand(h, &s->kept[1], rec, index, L, '-');
    return status;
}
