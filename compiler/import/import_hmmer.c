/* import_hmmer.c: `hmmc --import-hmmer FILE` (see import_hmmer.h): reads
 * a HMMER2.0 or HMMER3/f file, computes the scores hmm2search computes, and
 * writes a .hmm program whose weights are 2^(score/1000). */

/* Three steps, each in its own group of functions below:
 *   1. read the file into an H2 model: the integer scores (bits * 1000) of a
 *      HMMER2.0 save file, or a HMMER3/f file converted to those scores the
 *      way `hmmconvert -2` converts it;
 *   2. compute from them, in single precision, the scores that hmm2search
 *      computes: back to probabilities, every distribution renormalized,
 *      moves into emitting states measured against the null model's loop p1
 *      and C->T against 1-p1, the delete wings B->D1->..->Mk and
 *      Mk->..->Dm->E folded into B->Mk and Mk->E by adding integer scores
 *      (the better path for Viterbi, the sum for Forward), degenerate
 *      residues (B, Z, X, N, R, ...) scored by the null-weighted mean of the
 *      residues they stand for, truncated toward zero;
 *   3. write a .hmm program whose weights are 2^(score/1000), so that ln of a
 *      path's product is the path's HMMER score in nats.
 * What each number means is written in README.md, "Profile HMMs from
 * HMMER", and in the header comment of each program written. */
#include "import/import_hmmer.h"
#include "support/arena.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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
    const char *format; /* "HMMER2.0" or "HMMER3/f" */
    int M, K, nucleic;
    int xt[NXT], nult[2], nule[KMAX];
    int tb[3];           /* the line before node 1: B->M1, B->I0, B->D1 */
    int *mat, *ins, *t;  /* match and insert emissions (odds vs null), transitions */
    int *bm, *me;        /* B->Mk, Mk->E */
    int more;            /* models after the first one in the file */
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

static const char *residues(const H2 *h) { return h->nucleic ? NUCLEIC : AMINO; }
static const Degenerate *degenerates(const H2 *h)
{
    return h->nucleic ? NUCLEIC_DEGENERATE : AMINO_DEGENERATE;
}

static int count_degenerates(const Degenerate *d)
{
    int n = 0;
    while (d[n].sym)
        n++;
    return n;
}

/* ------------------------------------------------------------ reading lines */

typedef struct Reader {
    FILE *f;
    const char *path;
    int line;
    char *buf;
    size_t cap;
    char *tok[TOK_MAX];
    int ntok;
} Reader;

static int error_at(const Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int error_at(const Reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hmmc: error: %s:%d: ", r->path, r->line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

/* Splits buf into white-space separated tokens. */
static int tokenize(Reader *r)
{
    r->ntok = 0;
    for (char *s = strtok(r->buf, " \t\r\n"); s; s = strtok(NULL, " \t\r\n")) {
        if (r->ntok == TOK_MAX)
            return error_at(r, "more than %d fields on one line", TOK_MAX);
        r->tok[r->ntok++] = s;
    }
    return 0;
}

/* The next line that is not blank, split into tokens: 1, 0 at the end of the
 * file, -1 on an error (reported). */
static int next_line(Reader *r)
{
    for (;;) {
        errno = 0;
        if (getline(&r->buf, &r->cap, r->f) < 0) {
            if (ferror(r->f))
                return error_at(r, "cannot read: %s", strerror(errno));
            return 0;
        }
        r->line++;
        if (tokenize(r) < 0)
            return -1;
        if (r->ntok > 0)
            return 1;
    }
}

/* Like next_line, but the end of the file is an error that says what was expected. */
static int expect_line(Reader *r, const char *what)
{
    int got = next_line(r);
    if (got == 0) {
        r->line++;
        return error_at(r, "the file ends where %s was expected", what);
    }
    return got > 0 ? 0 : -1;
}

/* ------------------------------------------------------------ numbers */

/* An integer score, or '*' for NONE. */
static int parse_score(const Reader *r, const char *s, int *v, const char *what)
{
    if (strcmp(s, "*") == 0) {
        *v = NONE;
        return 0;
    }
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end || errno || x < -1000000000L || x > 1000000000L)
        return error_at(r, "%s: '%s' is not an integer score or '*'", what, s);
    *v = (int)x;
    return 0;
}

static int parse_scores(const Reader *r, int first, int n, int *v, const char *what)
{
    for (int i = 0; i < n; i++)
        if (parse_score(r, r->tok[first + i], &v[i], what) < 0)
            return -1;
    return 0;
}

/* A HMMER3 value: -ln(probability), or '*' for probability 0 (INFINITY). */
static int parse_nats(const Reader *r, const char *s, double *v, const char *what)
{
    if (strcmp(s, "*") == 0) {
        *v = INFINITY;
        return 0;
    }
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(*v) || *v < 0)
        return error_at(r, "%s: '%s' is not a value -ln(p) >= 0 or '*'", what, s);
    return 0;
}

/* The first field of a node's match line must be its number. */
static int check_node_number(const Reader *r, int k)
{
    char want[16];
    snprintf(want, sizeof want, "%d", k);
    if (strcmp(r->tok[0], want) != 0)
        return error_at(r, "node %d's match line expected, found '%s' where its number "
                        "should be", k, r->tok[0]);
    return 0;
}

static int parse_int(const Reader *r, const char *s, int lo, int hi, int *v, const char *what)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end || errno || x < lo || x > hi)
        return error_at(r, "%s: '%s' is not a whole number from %d to %d", what, s, lo, hi);
    *v = (int)x;
    return 0;
}

/* round(1000 * log2(p)) of HMMER's save files, NONE for p = 0. */
static int bits1000(double p)
{
    return p > 0 ? (int)floor(0.5 + 1000.0 * log2(p)) : NONE;
}

/* ------------------------------------------------------------ the model */

static int h2_alloc(const Reader *r, H2 *h)
{
    size_t nodes = (size_t)h->M + 1;
    h->mat = xcalloc(nodes * KMAX, sizeof *h->mat);
    h->ins = xcalloc(nodes * KMAX, sizeof *h->ins);
    h->t = xcalloc(nodes * NTRANS, sizeof *h->t);
    h->bm = xcalloc(nodes, sizeof *h->bm);
    h->me = xcalloc(nodes, sizeof *h->me);
    return 0;
}

static void h2_free(H2 *h)
{
    free(h->name);
    free(h->mat);
    free(h->ins);
    free(h->t);
    free(h->bm);
    free(h->me);
}

static int set_alphabet(const Reader *r, H2 *h, const char *word)
{
    if (strcasecmp(word, "amino") == 0)
        h->nucleic = 0;
    else if (strcasecmp(word, "nucleic") == 0 || strcasecmp(word, "dna") == 0 ||
             strcasecmp(word, "rna") == 0)
        h->nucleic = 1;
    else
        return error_at(r, "ALPH '%s': only Amino and Nucleic models can be imported", word);
    h->K = (int)strlen(residues(h));
    return 0;
}

static int set_name(const Reader *r, H2 *h)
{
    if (r->ntok < 2)
        return error_at(r, "NAME without a name");
    free(h->name);
    h->name = xstrdup(r->tok[1]);
    return 0;
}

static int set_length(const Reader *r, H2 *h)
{
    if (r->ntok != 2)
        return error_at(r, "LENG takes one number, the count of match states");
    return parse_int(r, r->tok[1], 1, 100000, &h->M, "LENG");
}

/* The "HMM" line lists the residues in the order of every emission line. */
static int check_residue_line(const Reader *r, const H2 *h)
{
    const char *want = residues(h);
    if (r->ntok != h->K + 1)
        return error_at(r, "the HMM line lists %d residues; an %s model has %d (%s)",
                        r->ntok - 1, h->nucleic ? "nucleic" : "amino", h->K, want);
    for (int x = 0; x < h->K; x++) {
        int c = strlen(r->tok[x + 1]) == 1 ? toupper((unsigned char)r->tok[x + 1][0]) : 0;
        if (h->nucleic && c == 'U') /* RNA models list U where DNA models list T */
            c = 'T';
        if (c != want[x])
            return error_at(r, "the HMM line lists residue '%s' where '%c' was expected",
                            r->tok[x + 1], want[x]);
    }
    return 0;
}

/* ------------------------------------------------------------ HMMER2 */

enum { SEEN_LENG = 1, SEEN_ALPH = 2, SEEN_XT = 4, SEEN_NULT = 8, SEEN_NULE = 16 };

static int need_fields(const Reader *r, int n, const char *what)
{
    if (r->ntok != n)
        return error_at(r, "%s takes %d values, found %d", what, n - 1, r->ntok - 1);
    return 0;
}

/* Header keys both formats have (all a HMMER3 header needs); other keys are
 * skipped. */
static int common_header_line(const Reader *r, H2 *h, int *seen)
{
    const char *key = r->tok[0];
    if (strcmp(key, "NAME") == 0)
        return set_name(r, h);
    if (strcmp(key, "LENG") == 0) {
        *seen |= SEEN_LENG;
        return set_length(r, h);
    }
    if (strcmp(key, "ALPH") == 0) {
        *seen |= SEEN_ALPH;
        return r->ntok == 2 ? set_alphabet(r, h, r->tok[1]) : error_at(r, "ALPH takes one word");
    }
    return 0;
}

/* One header line of a HMMER2 file; unknown and unused keys are skipped. */
static int h2_header_line(const Reader *r, H2 *h, int *seen)
{
    const char *key = r->tok[0];
    if (strcmp(key, "XT") == 0) {
        *seen |= SEEN_XT;
        return need_fields(r, NXT + 1, "XT") ? -1 : parse_scores(r, 1, NXT, h->xt, "XT");
    }
    if (strcmp(key, "NULT") == 0) {
        *seen |= SEEN_NULT;
        return need_fields(r, 3, "NULT") ? -1 : parse_scores(r, 1, 2, h->nult, "NULT");
    }
    if (strcmp(key, "NULE") == 0) {
        if (!(*seen & SEEN_ALPH))
            return error_at(r, "NULE before ALPH: the number of residues is not known");
        *seen |= SEEN_NULE;
        return need_fields(r, h->K + 1, "NULE") ? -1 : parse_scores(r, 1, h->K, h->nule, "NULE");
    }
    return common_header_line(r, h, seen);
}

static int h2_check_header(const Reader *r, const H2 *h, int seen)
{
    static const struct {
        int bit;
        const char *key;
    } required[] = {{SEEN_LENG, "LENG"}, {SEEN_ALPH, "ALPH"}, {SEEN_XT, "XT"},
                    {SEEN_NULT, "NULT"}, {SEEN_NULE, "NULE"}};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!(seen & required[i].bit))
            return error_at(r, "the header has no %s line", required[i].key);
    if (h->nult[0] == NONE || h->nult[0] >= 0)
        return error_at(r, "NULT: the null model's loop score must be below 0");
    return 0;
}

/* Node k's three lines: match emissions (and a map position), RF and insert
 * emissions, CS and transitions with B->Mk and Mk->E. */
static int h2_node(Reader *r, H2 *h, int k)
{
    int K = h->K;
    if (expect_line(r, "a node's match line") < 0)
        return -1;
    if (r->ntok != K + 1 && r->ntok != K + 2)
        return error_at(r, "node %d: the match line needs the node number and %d scores "
                        "(and a map position), found %d fields", k, K, r->ntok);
    if (check_node_number(r, k) < 0 ||
        parse_scores(r, 1, K, &h->mat[k * KMAX], "match emission") < 0)
        return -1;
    if (expect_line(r, "a node's insert line") < 0)
        return -1;
    if (r->ntok != K + 1)
        return error_at(r, "node %d: the insert line needs an RF mark and %d scores, found %d "
                        "fields", k, K, r->ntok);
    if (parse_scores(r, 1, K, &h->ins[k * KMAX], "insert emission") < 0)
        return -1;
    if (expect_line(r, "a node's transition line") < 0)
        return -1;
    if (r->ntok != NTRANS + 3)
        return error_at(r, "node %d: the transition line needs a CS mark, 7 transitions, "
                        "b->m and m->e, found %d fields", k, r->ntok);
    if (parse_scores(r, 1, NTRANS, &h->t[k * NTRANS], "transition") < 0)
        return -1;
    return parse_score(r, r->tok[NTRANS + 1], &h->bm[k], "b->m") < 0 ? -1
           : parse_score(r, r->tok[NTRANS + 2], &h->me[k], "m->e");
}

/* Counts the models that follow the first one (each starts with HMMER). */
static int count_more(Reader *r, H2 *h)
{
    int got;
    while ((got = next_line(r)) > 0)
        h->more += strncmp(r->tok[0], "HMMER", 5) == 0;
    return got;
}

/* The header lines up to the HMM line, each given to `line` (HMMER2's or
 * HMMER3's keys); seen collects the keys met. */
static int read_header(Reader *r, H2 *h, int (*line)(const Reader *, H2 *, int *), int *seen)
{
    for (;;) {
        if (expect_line(r, "the HMM line (the residues of the emission lines)") < 0)
            return -1;
        if (strcmp(r->tok[0], "HMM") == 0)
            return 0;
        if (line(r, h, seen) < 0)
            return -1;
    }
}

/* The line after the HMM line: the names of the transitions. */
static int expect_transition_names(Reader *r)
{
    if (expect_line(r, "the transition names (m->m m->i ...)") < 0)
        return -1;
    if (strcmp(r->tok[0], "m->m") != 0)
        return error_at(r, "expected the transition names (m->m m->i ...) after the HMM line");
    return 0;
}

/* Nodes 1..M, each read by `node` (HMMER2's or HMMER3's layout), the closing
 * '//', and a count of the models that follow. */
static int read_nodes(Reader *r, H2 *h, int (*node)(Reader *, H2 *, int))
{
    for (int k = 1; k <= h->M; k++)
        if (node(r, h, k) < 0)
            return -1;
    if (expect_line(r, "'//' after the last node") < 0)
        return -1;
    if (strcmp(r->tok[0], "//") != 0)
        return error_at(r, "expected '//' after node %d (LENG says %d nodes)", h->M, h->M);
    return count_more(r, h) < 0 ? -1 : 0;
}

static int h2_read(Reader *r, H2 *h)
{
    int seen = 0;
    h->format = "HMMER2.0";
    if (read_header(r, h, h2_header_line, &seen) < 0)
        return -1;
    if (h2_check_header(r, h, seen) < 0 || check_residue_line(r, h) < 0 || h2_alloc(r, h) < 0)
        return -1;
    if (expect_transition_names(r) < 0)
        return -1;
    if (expect_line(r, "the B->M1, B->I0 and B->D1 line") < 0)
        return -1;
    if (r->ntok != 3)
        return error_at(r, "the line after the transition names needs 3 values (B->M1, B->I0, "
                        "B->D1), found %d", r->ntok);
    if (parse_scores(r, 0, 3, h->tb, "B->M1, B->I0 and B->D1") < 0)
        return -1;
    return read_nodes(r, h, h2_node);
}

/* ------------------------------------------------------------ HMMER3 */

/* HMMER3's background frequencies for proteins (hmmconvert -2 writes its
 * NULE line from them); nucleic models have 1/4 each. */
static const double H3_AMINO_BACKGROUND[KMAX] = {
    0.0787945, 0.0151600, 0.0535222, 0.0668298, 0.0397062, 0.0695071, 0.0229198,
    0.0590092, 0.0594422, 0.0963728, 0.0237718, 0.0414386, 0.0482904, 0.0395639,
    0.0540978, 0.0683364, 0.0540687, 0.0673417, 0.0114135, 0.0304133};

static double h3_background(const H2 *h, int x)
{
    return h->nucleic ? 0.25 : H3_AMINO_BACKGROUND[x];
}

/* The special states and the null model of a converted model: hmm2build's
 * default configuration (multi-hit, global in the model), with the null
 * model's mean length 350 for proteins and 1000 for nucleic acids. */
static void h3_specials(H2 *h)
{
    double len = h->nucleic ? 1000.0 : 350.0;
    double p1 = len / (len + 1.0);
    int xt[NXT] = {bits1000(1 - p1), bits1000(p1), bits1000(0.5), bits1000(0.5),
                   bits1000(1 - p1), bits1000(p1), bits1000(1 - p1), bits1000(p1)};
    memcpy(h->xt, xt, sizeof xt);
    h->nult[0] = bits1000(p1);
    h->nult[1] = bits1000(1 - p1);
    for (int x = 0; x < h->K; x++)
        h->nule[x] = bits1000(h3_background(h, x) * h->K);
}


/* hmmconvert -2's integer score of p against base, in single precision:
 * this recipe gives its integers (rounding -4490.5001, in double precision,
 * to -4490) for all but 6 of 434743 values tried, each of those off by 1 at
 * a tie. */
static int h3_score(float p, float base)
{
    if (p <= 0.0f)
        return NONE;
    float bits = logf(p / base) * 1.44269504f;
    return (int)floor(0.5 + (double)(1000.0f * bits));
}

/* n values -ln(p) from tokens first.. as HMMER2 scores against the
 * background (emissions) or against 1 (transitions). */
static int h3_values(const Reader *r, const H2 *h, int first, int n, int *out, int emissions,
                     const char *what)
{
    for (int i = 0; i < n; i++) {
        double nats;
        if (parse_nats(r, r->tok[first + i], &nats, what) < 0)
            return -1;
        float p = isinf(nats) ? 0.0f : expf(-(float)nats);
        out[i] = h3_score(p, emissions ? (float)h3_background(h, i) : 1.0f);
    }
    return 0;
}

/* Node 0: optional COMPO, then B's insert emissions and B's transitions
 * (B->M1 and B->D1 are kept; B->I0 has no HMMER2 counterpart). */
static int h3_node0(Reader *r, H2 *h)
{
    int ins0[KMAX], t0[NTRANS];
    if (expect_line(r, "the COMPO line or node 0's insert emissions") < 0)
        return -1;
    if (strcmp(r->tok[0], "COMPO") == 0 && expect_line(r, "node 0's insert emissions") < 0)
        return -1;
    if (r->ntok != h->K)
        return error_at(r, "node 0: expected %d insert emissions, found %d fields", h->K, r->ntok);
    if (h3_values(r, h, 0, h->K, ins0, 1, "insert emission") < 0)
        return -1;
    if (expect_line(r, "node 0's transitions") < 0)
        return -1;
    if (r->ntok != NTRANS)
        return error_at(r, "node 0: expected 7 transitions, found %d fields", r->ntok);
    if (h3_values(r, h, 0, NTRANS, t0, 0, "transition") < 0)
        return -1;
    /* B->M1 of node 1's line; on the line before, hmmconvert writes B->M1
     * as 1 - (B->D1), and no B->I0 */
    h->bm[1] = t0[TMM];
    h->tb[2] = t0[TMD];
    h->tb[1] = NONE;
    double md;
    parse_nats(r, r->tok[TMD], &md, "transition");
    float tbd1 = isinf(md) ? 0.0f : expf(-(float)md);
    h->tb[0] = h3_score((float)(1.0 - tbd1), 1.0f);
    return 0;
}

/* Node k: match emissions (then 5 annotation fields), insert emissions,
 * transitions. The last node's insert and transitions are not kept. */
static int h3_node(Reader *r, H2 *h, int k)
{
    int K = h->K, last = k == h->M;
    if (expect_line(r, "a node's match line") < 0)
        return -1;
    if (r->ntok < K + 1)
        return error_at(r, "node %d: the match line needs the node number and %d values, "
                        "found %d fields", k, K, r->ntok);
    if (check_node_number(r, k) < 0 ||
        h3_values(r, h, 1, K, &h->mat[k * KMAX], 1, "match emission") < 0)
        return -1;
    if (expect_line(r, "a node's insert line") < 0)
        return -1;
    if (r->ntok != K)
        return error_at(r, "node %d: expected %d insert emissions, found %d fields", k, K, r->ntok);
    if (h3_values(r, h, 0, K, &h->ins[k * KMAX], 1, "insert emission") < 0)
        return -1;
    if (expect_line(r, "a node's transition line") < 0)
        return -1;
    if (r->ntok != NTRANS)
        return error_at(r, "node %d: expected 7 transitions, found %d fields", k, r->ntok);
    if (h3_values(r, h, 0, NTRANS, &h->t[k * NTRANS], 0, "transition") < 0)
        return -1;
    if (last)
        for (int x = 0; x < K; x++)
            h->ins[k * KMAX + x] = NONE;
    for (int t = 0; last && t < NTRANS; t++)
        h->t[k * NTRANS + t] = NONE;
    h->bm[k] = k == 1 ? h->bm[1] : NONE;
    h->me[k] = last ? 0 : NONE;
    return 0;
}

static int h3_read(Reader *r, H2 *h)
{
    int seen = 0;
    h->format = "HMMER3/f";
    if (read_header(r, h, common_header_line, &seen) < 0)
        return -1;
    if (!(seen & SEEN_LENG) || !(seen & SEEN_ALPH))
        return error_at(r, "the header has no %s line", seen & SEEN_LENG ? "ALPH" : "LENG");
    if (check_residue_line(r, h) < 0 || h2_alloc(r, h) < 0)
        return -1;
    h3_specials(h);
    if (expect_transition_names(r) < 0)
        return -1;
    if (h3_node0(r, h) < 0)
        return -1;
    return read_nodes(r, h, h3_node);
}

/* The first line says which format follows. */
static int read_model(Reader *r, H2 *h)
{
    if (expect_line(r, "a HMMER2.0 or HMMER3/f header line") < 0)
        return -1;
    if (strcmp(r->tok[0], "HMMER2.0") == 0)
        return h2_read(r, h);
    if (strcmp(r->tok[0], "HMMER3/f") == 0)
        return h3_read(r, h);
    if (strncmp(r->tok[0], "HMMER3", 6) == 0)
        return error_at(r, "%s files are not supported: convert the model with "
                        "`hmmconvert MODEL > NEW` (HMMER3/f) or `hmmconvert -2`", r->tok[0]);
    return error_at(r, "not a HMMER save file: the first line should start with HMMER2.0 or "
                    "HMMER3/f (binary files: convert with hmm2convert or hmmconvert first)");
}

/* ------------------------------------------------------------ probabilities */

/* The model as hmm2search holds it after reading: single-precision
 * probabilities, each distribution renormalized (the file's rounded scores
 * do not sum to exactly 1). Node k's values are at [k * K + x] or
 * [k * NTRANS + t]. */
typedef struct Plan7 {
    int M, K;
    float p1, null[KMAX], xt[NXT], tbd1;
    float *mat, *ins, *t, *begin, *end;
} Plan7;

/* A file score back to a probability: base * 2^(s/1000), 0 for '*'. */
static float score_prob(int s, double base)
{
    return s == NONE ? 0.0f : (float)(base * exp2(s / 1000.0));
}

static void scale(float *v, int n, float by)
{
    for (int i = 0; i < n; i++)
        v[i] *= by;
}

static float sum(const float *v, int n)
{
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

/* Scales v to sum 1 (a uniform distribution when it sums to 0). */
static void normalize(float *v, int n)
{
    float s = sum(v, n);
    if (s > 0.0f)
        scale(v, n, (float)(1.0 / s));
    else
        for (int i = 0; i < n; i++)
            v[i] = (float)(1.0 / n);
}

static void plan7_free(Plan7 *p)
{
    free(p->mat);
    free(p->ins);
    free(p->t);
    free(p->begin);
    free(p->end);
}

static int plan7_alloc(Plan7 *p, int M, int K)
{
    size_t nodes = (size_t)M + 1;
    p->M = M;
    p->K = K;
    p->mat = xcalloc(nodes * KMAX, sizeof *p->mat);
    p->ins = xcalloc(nodes * KMAX, sizeof *p->ins);
    p->t = xcalloc(nodes * NTRANS, sizeof *p->t);
    p->begin = xcalloc(nodes, sizeof *p->begin);
    p->end = xcalloc(nodes, sizeof *p->end);
    return 0;
}

/* The null model, the special states and B->D1 as probabilities (the null
 * model's emissions against 1/K, the rest against 1). */
static void plan7_specials(const H2 *h, Plan7 *p)
{
    for (int x = 0; x < h->K; x++)
        p->null[x] = score_prob(h->nule[x], 1.0 / h->K);
    for (int i = 0; i < NXT; i++)
        p->xt[i] = score_prob(h->xt[i], 1.0);
    float p2 = score_prob(h->nult[1], 1.0);
    p->p1 = score_prob(h->nult[0], 1.0);
    p->p1 = p->p1 + p2 > 0.0f ? p->p1 / (p->p1 + p2) : 0.0f;
    /* HMMER2 reads the line before node 1 as B's moves and scales them to
     * sum 1; B->D1 then shares B's entries with node 1's B->M1 and the
     * others (plan7_renormalize) */
    float tb[3];
    for (int i = 0; i < 3; i++)
        tb[i] = score_prob(h->tb[i], 1.0);
    normalize(tb, 3);
    p->tbd1 = tb[2];
}

/* The nodes' scores as probabilities: emissions against the null model,
 * transitions, entries and exits against 1. */
static void plan7_nodes(const H2 *h, Plan7 *p)
{
    int K = h->K;
    for (int k = 1; k <= h->M; k++) {
        for (int x = 0; x < K; x++) {
            p->mat[k * KMAX + x] = score_prob(h->mat[k * KMAX + x], p->null[x]);
            p->ins[k * KMAX + x] = score_prob(h->ins[k * KMAX + x], p->null[x]);
        }
        for (int t = 0; t < NTRANS; t++)
            p->t[k * NTRANS + t] = score_prob(h->t[k * NTRANS + t], 1.0);
        p->begin[k] = score_prob(h->bm[k], 1.0);
        p->end[k] = score_prob(h->me[k], 1.0);
    }
}

/* Every distribution scaled to sum 1, as HMMER2 does after reading: the
 * emissions, B's entries with B->D1, each Mk's moves with its exit, each
 * Ik's and Dk's moves, the null model and each special state's pair. */
static void plan7_renormalize(Plan7 *p)
{
    int M = p->M;
    for (int k = 1; k <= M; k++) {
        normalize(&p->mat[k * KMAX], p->K);
        if (k < M)
            normalize(&p->ins[k * KMAX], p->K);
    }
    float d = sum(&p->begin[1], M) + p->tbd1;
    if (d > 0.0f) {
        scale(&p->begin[1], M, (float)(1.0 / d));
        p->tbd1 /= d;
    }
    for (int k = 1; k < M; k++) {
        float *t = &p->t[k * NTRANS];
        d = sum(t, 3) + p->end[k];
        if (d > 0.0f) {
            scale(t, 3, (float)(1.0 / d));
            p->end[k] /= d;
        }
        normalize(t + TIM, 2);
        normalize(t + TDM, 2);
    }
    normalize(p->null, p->K);
    for (int i = 0; i < NXT; i += 2)
        normalize(&p->xt[i], 2);
}

/* ------------------------------------------------------------ search scores */

/* a + b for scores, NONE (probability 0) absorbing. */
static int add(int a, int b)
{
    return a == NONE || b == NONE ? NONE : a + b;
}

/* hmm2search's integer score of probability p against base: round(1000 *
 * log2(p / base)), the ratio taken in single precision. */
static int prob_score(float p, float base)
{
    if (p <= 0.0f)
        return NONE;
    float ratio = p / base;
    return (int)floor(0.5 + 1000.0 * log2(ratio));
}

/* Transitions into emitting states are measured against the null model's
 * loop p1 (the null model emits a residue there too); into silent states
 * against 1. */
static void search_transitions(const Plan7 *p, Search *s)
{
    static const int into_emitting[NTRANS] = {1, 1, 0, 1, 1, 1, 0};
    for (int k = 1; k < p->M; k++)
        for (int t = 0; t < NTRANS; t++)
            s->tsc[k * NTRANS + t] =
                prob_score(p->t[k * NTRANS + t], into_emitting[t] ? p->p1 : 1.0f);
}

/* The better of two scores (Viterbi's folding, sum 0) or the score of the
 * sum of their probabilities (Forward's, sum 1). */
static int fold(int a, int b, int sum)
{
    if (a == NONE || b == NONE)
        return a == NONE ? b : a;
    if (!sum)
        return a > b ? a : b;
    double p = exp2(a / 1000.0) + exp2(b / 1000.0);
    return (int)floor(0.5 + 1000.0 * log2(p));
}

/* B->Mk: the entry itself and the path B->D1->...->D(k-1)->Mk folded
 * together, as hmm2search folds D1 out, adding the integer scores of the
 * path's moves (long paths do not underflow): the better of the two for
 * Viterbi (sum 0), their sum for Forward (sum 1). */
static void search_entries(const Plan7 *p, const Search *s, int *bsc, int sum)
{
    int wing = prob_score(p->tbd1, 1.0f);
    bsc[1] = prob_score(p->begin[1], p->p1);
    for (int k = 2; k <= p->M; k++) {
        const int *t = &s->tsc[(k - 1) * NTRANS];
        bsc[k] = fold(prob_score(p->begin[k], p->p1), add(wing, t[TDM]), sum);
        wing = add(wing, t[TDD]);
    }
}

/* Mk->E: the exit itself and the path Mk->D(k+1)->...->Dm->E folded
 * together likewise; Mm->E is 1. */
static void search_exits(const Plan7 *p, const Search *s, int *esc, int sum)
{
    int wing = 0;
    esc[p->M] = 0;
    for (int k = p->M - 1; k >= 1; k--) {
        const int *t = &s->tsc[k * NTRANS];
        esc[k] = fold(prob_score(p->end[k], 1.0f), add(wing, t[TMD]), sum);
        wing = add(wing, t[TDD]);
    }
}

/* N, C and J emit from the null model (odds 1), so their loops are
 * measured against p1; C->T is measured against the null model's end, 1-p1. */
static void search_specials(const Plan7 *p, Search *s)
{
    for (int i = 0; i < NXT; i++)
        s->xsc[i] = prob_score(p->xt[i], 1.0f);
    s->xsc[XNN] = prob_score(p->xt[XNN], p->p1);
    s->xsc[XCC] = prob_score(p->xt[XCC], p->p1);
    s->xsc[XJJ] = prob_score(p->xt[XJJ], p->p1);
    s->xsc[XCT] = prob_score(p->xt[XCT], (float)(1.0 - p->p1));
}

/* A degenerate symbol's score: the mean of the log-odds of the residues it
 * stands for, weighted by their null probabilities, truncated toward zero
 * (in single precision, a residue of probability 0 counting -9999 bits). */
static int degenerate_score(const Plan7 *p, const float *prob, const char *means,
                            const char *alphabet)
{
    float numer = 0.0f, denom = 0.0f;
    for (const char *c = means; *c; c++) {
        int x = (int)(strchr(alphabet, *c) - alphabet);
        float ratio = prob[x] / p->null[x];
        numer += p->null[x] * (prob[x] > 0.0f ? log2(ratio) : -9999.0);
        denom += p->null[x];
    }
    return (int)(1000.0 * numer / denom);
}

/* One state's scores for the whole extended alphabet. */
static void search_emission(const Plan7 *p, const H2 *h, const float *prob, int *out)
{
    const Degenerate *d = degenerates(h);
    for (int x = 0; x < p->K; x++)
        out[x] = prob_score(prob[x], p->null[x]);
    for (int i = 0; d[i].sym; i++)
        out[p->K + i] = degenerate_score(p, prob, d[i].means, residues(h));
}

static void search_emissions(const Plan7 *p, const H2 *h, Search *s)
{
    for (int k = 1; k <= p->M; k++) {
        search_emission(p, h, &p->mat[k * KMAX], &s->msc[k * s->nsym]);
        if (k < p->M)
            search_emission(p, h, &p->ins[k * KMAX], &s->isc[k * s->nsym]);
    }
}

static void search_free(Search *s)
{
    free(s->msc);
    free(s->isc);
    free(s->tsc);
    free(s->bsc);
    free(s->esc);
    free(s->fsc_b);
    free(s->fsc_e);
}

static int search_alloc(Search *s, const H2 *h)
{
    size_t nodes = (size_t)h->M + 1;
    s->M = h->M;
    s->K = h->K;
    s->nsym = h->K + count_degenerates(degenerates(h));
    s->msc = xcalloc(nodes * NSYM_MAX, sizeof *s->msc);
    s->isc = xcalloc(nodes * NSYM_MAX, sizeof *s->isc);
    s->tsc = xcalloc(nodes * NTRANS, sizeof *s->tsc);
    s->bsc = xcalloc(nodes, sizeof *s->bsc);
    s->esc = xcalloc(nodes, sizeof *s->esc);
    s->fsc_b = xcalloc(nodes, sizeof *s->fsc_b);
    s->fsc_e = xcalloc(nodes, sizeof *s->fsc_e);
    return 0;
}

/* The file's scores -> probabilities, renormalized -> hmm2search's scores. */
static int search_scores(const H2 *h, Search *s)
{
    Plan7 p = {0};
    if (search_alloc(s, h) < 0 || plan7_alloc(&p, h->M, h->K) < 0) {
        plan7_free(&p);
        return -1;
    }
    plan7_specials(h, &p);
    plan7_nodes(h, &p);
    plan7_renormalize(&p);
    search_transitions(&p, s);
    search_entries(&p, s, s->bsc, 0);
    search_exits(&p, s, s->esc, 0);
    search_entries(&p, s, s->fsc_b, 1);
    search_exits(&p, s, s->fsc_e, 1);
    search_specials(&p, s);
    search_emissions(&p, h, s);
    plan7_free(&p);
    return 0;
}

/* ------------------------------------------------------------ writing */

/* The weight of a score: 2^(score/1000), 0 for NONE. */
static void put_weight(FILE *out, int sc)
{
    if (sc == NONE)
        fputs("0", out);
    else
        fprintf(out, "%.10g", exp2(sc / 1000.0));
}

/* A transition; none is written for a score of NONE (probability 0). */
static void put_move(FILE *out, const char *from, int i, const char *to, int j, int sc,
                     const char *emits)
{
    if (sc == NONE)
        return;
    char a[24], b[24];
    snprintf(a, sizeof a, i > 0 ? "%s%d" : "%s", from, i);
    snprintf(b, sizeof b, j > 0 ? "%s%d" : "%s", to, j);
    fprintf(out, "    %s -> %s ", a, b);
    put_weight(out, sc);
    if (emits)
        fprintf(out, " emits %s", emits);
    fputs(";\n", out);
}

/* The program's alphabet and, for each symbol, the column of the search
 * scores it takes: the residues, the degenerate symbols, the other letters
 * (HMMER2 reads them as X), the same in lower case, then '*', '-' and '.'
 * (also X to HMMER2). */
typedef struct Symbols {
    int n;
    char sym[NSYM_MAX * 2];
    int col[NSYM_MAX * 2];
} Symbols;

static void add_symbol(Symbols *a, char c, int col)
{
    a->sym[a->n] = c;
    a->col[a->n++] = col;
}

static void symbols(const H2 *h, Symbols *a)
{
    const Degenerate *d = degenerates(h);
    int K = h->K, x_col = K;
    a->n = 0;
    for (int x = 0; x < K; x++)
        add_symbol(a, residues(h)[x], x);
    for (int i = 0; d[i].sym; i++) {
        add_symbol(a, d[i].sym, K + i);
        if (d[i].sym == 'X')
            x_col = K + i;
    }
    for (char c = 'A'; c <= 'Z'; c++)
        if (!memchr(a->sym, c, (size_t)a->n))
            add_symbol(a, c, x_col);
    for (int i = 0, upper = a->n; i < upper; i++)
        add_symbol(a, (char)tolower((unsigned char)a->sym[i]), a->col[i]);
    add_symbol(a, '*', x_col);
    add_symbol(a, '-', x_col);
    add_symbol(a, '.', x_col);
}

static void put_alphabet(FILE *out, const Symbols *a)
{
    fputs("    alphabet [", out);
    for (int i = 0; i < a->n; i++)
        fprintf(out, isalpha((unsigned char)a->sym[i]) ? "%s%c" : "%s'%c'", i ? ", " : "",
                a->sym[i]);
    fputs("];\n", out);
}

/* emission NAMEk = [...]: the odds of every symbol of the alphabet. */
static void put_emission(FILE *out, const char *name, int k, const int *sc, const Symbols *a)
{
    fprintf(out, "    emission %s%d = [", name, k);
    for (int i = 0; i < a->n; i++) {
        if (i)
            fputs(", ", out);
        put_weight(out, sc[a->col[i]]);
    }
    fputs("];\n", out);
}

static void put_null_emission(FILE *out, const Symbols *a)
{
    fputs("    emission null = [", out);
    for (int x = 0; x < a->n; x++)
        fputs(x ? ", 1" : "1", out);
    fputs("];\n", out);
}

/* HMMER names become identifiers: other characters are replaced by '_',
 * and a name that does not start with a letter gets "hmm_" in front. */
static char *identifier(const char *name)
{
    const char *n = name && *name ? name : "profile";
    size_t len = strlen(n);
    char *id = xmalloc(len + 5);
    int prefix = !isalpha((unsigned char)n[0]);
    strcpy(id, prefix ? "hmm_" : "");
    char *p = id + strlen(id);
    for (size_t i = 0; i < len; i++)
        *p++ = isalnum((unsigned char)n[i]) ? n[i] : '_';
    *p = 0;
    static const char *keywords[] = {"hmm", "alphabet", "startstate", "state", "endstate",
                                     "emits", "emission", "main", "new", "print"};
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (strcmp(id, keywords[i]) == 0) {
            memmove(id + 4, id, strlen(id) + 1);
            memcpy(id, "hmm_", 4);
        }
    return id;
}

/* "P1..Pn", "P1" or "none": a range of state names for the header. */
static void put_range(FILE *out, const char *prefix, int first, int last)
{
    if (last < first)
        fprintf(out, "no %s states", prefix);
    else if (last == first)
        fprintf(out, "%s%d", prefix, first);
    else
        fprintf(out, "%s%d..%s%d", prefix, first, prefix, last);
}

static void put_header(FILE *out, const char *path, const H2 *h, const char *id,
                       const char *forward_id)
{
    int M = h->M;
    fprintf(out,
            "// %s: the profile HMM '%s' (%d nodes, %s), imported by\n"
            "// `hmmc --import-hmmer %s` from a %s file.\n"
            "// main prints, per sequence, the forward score, the viterbi score and the\n"
            "// viterbi traceback. Scores are HMMER log-odds scores in nats (divide by ln 2\n"
            "// for bits): viterbi is hmm2search --null2's per-sequence score, forward\n"
            "// hmm2search --null2 --forward's (HMMER2 sums approximately, this exactly).\n"
            "// Weights are 2^(s/1000) for the integer scores s (bits * 1000) that hmm2search\n"
            "// computes from the file, the null model folded in.\n",
            id, h->name ? h->name : "", M, h->nucleic ? "nucleic" : "amino", path, h->format);
    fputs("// States: S start, N (residues before the first domain), B begin, ", out);
    put_range(out, "M", 1, M);
    fputs(" match,\n// ", out);
    put_range(out, "I", 1, M - 1);
    fputs(" insert, ", out);
    put_range(out, "D", 2, M - 1);
    fputs(" delete, E end of a domain, J (residues between domains),\n"
          "// C (residues after the last domain), T end. As in hmm2search, the first and\n"
          "// last delete states are folded into the B->Mk entries and Mk->E exits (the\n"
          "// more probable path). N, J and C emit on their loops from the null model.\n",
          out);
    fprintf(out,
            "// Symbols: lower case scores as upper case; degenerate symbols (%s) score\n"
            "// the null-weighted mean of the residues they stand for, truncated to 0.001\n"
            "// bits; other letters and '*', '-', '.' score as X: all as hmm2search does.\n",
            h->nucleic ? "U N X R Y M K S W H B V D" : "U B Z X");
    if (forward_id)
        fprintf(out,
                "// The model is local (hmm2build -f or -s): hmm2search folds the delete wings\n"
                "// into B->Mk and Mk->E with the best path for Viterbi but with the sum for\n"
                "// Forward, so %s, which differs only in those moves, gives the\n"
                "// forward score.\n",
                forward_id);
}

/* J exists only where the file's mode allows more than one domain. */
static int has_j(const Search *s)
{
    return s->xsc[XEJ] != NONE && s->xsc[XJB] != NONE;
}

static void put_states(FILE *out, const Search *s)
{
    int M = s->M;
    fputs("    startstate S;\n    state N;\n    state B;\n", out);
    for (int k = 1; k <= M; k++)
        fprintf(out, "    state M%d emits m%d;\n", k, k);
    for (int k = 1; k < M; k++)
        fprintf(out, "    state I%d emits i%d;\n", k, k);
    for (int k = 2; k < M; k++)
        fprintf(out, "    state D%d;\n", k);
    fputs(has_j(s) ? "    state E;\n    state J;\n" : "    state E;\n", out);
    fputs("    state C;\n    endstate T;\n", out);
}

static void put_emissions(FILE *out, const Search *s, const Symbols *a)
{
    put_null_emission(out, a);
    for (int k = 1; k <= s->M; k++)
        put_emission(out, "m", k, &s->msc[k * s->nsym], a);
    for (int k = 1; k < s->M; k++)
        put_emission(out, "i", k, &s->isc[k * s->nsym], a);
}

static void put_specials(FILE *out, const Search *s)
{
    fputs("    S -> N 1;\n", out);
    put_move(out, "N", 0, "N", 0, s->xsc[XNN], "null");
    put_move(out, "N", 0, "B", 0, s->xsc[XNB], NULL);
    put_move(out, "E", 0, "C", 0, s->xsc[XEC], NULL);
    if (has_j(s)) {
        put_move(out, "E", 0, "J", 0, s->xsc[XEJ], NULL);
        put_move(out, "J", 0, "J", 0, s->xsc[XJJ], "null");
        put_move(out, "J", 0, "B", 0, s->xsc[XJB], NULL);
    }
    put_move(out, "C", 0, "C", 0, s->xsc[XCC], "null");
    put_move(out, "C", 0, "T", 0, s->xsc[XCT], NULL);
}

/* Node k's moves out of Mk, Ik and Dk, then its entry and exit. */
static void put_node(FILE *out, const Search *s, int k, const int *bsc, const int *esc)
{
    const int *t = &s->tsc[k * NTRANS];
    int M = s->M;
    if (k < M) {
        put_move(out, "M", k, "M", k + 1, t[TMM], NULL);
        put_move(out, "M", k, "I", k, t[TMI], NULL);
        if (k + 1 < M)
            put_move(out, "M", k, "D", k + 1, t[TMD], NULL);
        put_move(out, "I", k, "M", k + 1, t[TIM], NULL);
        put_move(out, "I", k, "I", k, t[TII], NULL);
    }
    if (k >= 2 && k < M) {
        put_move(out, "D", k, "M", k + 1, t[TDM], NULL);
        if (k + 1 < M)
            put_move(out, "D", k, "D", k + 1, t[TDD], NULL);
    }
    put_move(out, "B", 0, "M", k, bsc[k], NULL);
    put_move(out, "M", k, "E", 0, esc[k], NULL);
}

/* One hmm block, with the entries and exits given. */
static void put_model(FILE *out, const char *id, const Search *s, const Symbols *a,
                      const int *bsc, const int *esc)
{
    fprintf(out, "hmm %s {\n", id);
    put_alphabet(out, a);
    put_states(out, s);
    put_emissions(out, s, a);
    put_specials(out, s);
    for (int k = 1; k <= s->M; k++)
        put_node(out, s, k, bsc, esc);
    fputs("}\n", out);
}

/* forward_id: the model for forward scores, when not the same (local modes). */
static void put_main(FILE *out, const char *id, const char *forward_id)
{
    fprintf(out, "\nmain {\n    profile = new %s();\n", id);
    if (forward_id)
        fprintf(out, "    print forward(new %s()).score;\n", forward_id);
    else
        fputs("    print forward(profile).score;\n", out);
    fputs("    v = viterbi(profile);\n"
          "    print v.score;\n"
          "    print v.traceback;\n"
          "}\n",
          out);
}

/* Whether Forward's folding of the wings differs from Viterbi's: in the
 * local modes (hmm2build -f, -s), where B->Mk and Mk->E exist for every k. */
static int forward_differs(const Search *s)
{
    for (int k = 1; k <= s->M; k++)
        if (s->bsc[k] != s->fsc_b[k] || s->esc[k] != s->fsc_e[k])
            return 1;
    return 0;
}

static int write_program(FILE *out, const char *path, const H2 *h, const Search *s)
{
    char *id = identifier(h->name);
    int twice = forward_differs(s);
    char *fid = twice ? xasprintf("%s_forward", id) : NULL;
    Symbols a;
    symbols(h, &a);
    put_header(out, path, h, id, fid);
    put_model(out, id, s, &a, s->bsc, s->esc);
    if (twice) {
        fputc('\n', out);
        put_model(out, fid, s, &a, s->fsc_b, s->fsc_e);
    }
    put_main(out, id, fid);
    free(id);
    free(fid);
    fflush(out);
    if (ferror(out)) {
        fprintf(stderr, "hmmc: error: cannot write the program: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ the entry point */

int import_hmmer(const char *path, FILE *out)
{
    Reader r = {.path = path};
    H2 h = {0};
    Search s = {0};
    int status = 1;
    r.f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!r.f) {
        fprintf(stderr, "hmmc: error: cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (read_model(&r, &h) == 0 && search_scores(&h, &s) == 0) {
        if (h.more)
            fprintf(stderr, "hmmc: warning: %s holds %d more model%s; only the first, '%s', "
                    "is imported (hmm2fetch or hmmfetch takes one out)\n",
                    path, h.more, h.more > 1 ? "s" : "", h.name ? h.name : "");
        status = write_program(out, path, &h, &s) == 0 ? 0 : 1;
    }
    if (r.f != stdin)
        fclose(r.f);
    free(r.buf);
    search_free(&s);
    h2_free(&h);
    return status;
}
