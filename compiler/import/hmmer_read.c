/* hmmer_read.c: the first of the three parts of `hmmc --import-hmmer`
 * (import_hmmer.c runs them): reads a HMMER2.0 save file, or a HMMER3/a to
 * 3/f file converted to HMMER2's integer scores the way `hmmconvert -2`
 * converts it (and its own probabilities, for hmmer3_local.c), into an H2
 * profile (hmmer_profile.h) with the header lines
 * kept (hmmer_meta.c), and an error naming the line and column of what
 * cannot be read. */
#include "import/hmmer_lines.h"
#include "import/hmmer_meta.h"
#include "import/hmmer_profile.h"
#include "support/arena.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
        return error_tok(r, s, "%s: '%s' is not an integer score or '*'", what, s);
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
        return error_tok(r, s, "%s: '%s' is not a value -ln(p) >= 0 or '*'", what, s);
    return 0;
}

/* The first field of a node's match line must be its number. */
static int check_node_number(const Reader *r, int k)
{
    char want[16];
    snprintf(want, sizeof want, "%d", k);
    if (strcmp(r->tok[0], want) != 0)
        return error_tok(r, r->tok[0], "node %d's match line expected, found '%s' where its "
                         "number should be", k, r->tok[0]);
    return 0;
}

static int parse_int(const Reader *r, const char *s, int lo, int hi, int *v, const char *what)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end || errno || x < lo || x > hi)
        return error_tok(r, s, "%s: '%s' is not a whole number from %d to %d", what, s, lo, hi);
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

void h2_free(H2 *h)
{
    free(h->name);
    free(h->mat);
    free(h->ins);
    free(h->t);
    free(h->bm);
    free(h->me);
    free(h->h3_mat);
    free(h->h3_t);
    hmmer_meta_free(&h->meta);
}

static int set_alphabet(const Reader *r, H2 *h, const char *word)
{
    if (strcasecmp(word, "amino") == 0)
        h->nucleic = 0;
    else if (strcasecmp(word, "nucleic") == 0 || strcasecmp(word, "dna") == 0 ||
             strcasecmp(word, "rna") == 0)
        h->nucleic = 1;
    else
        return error_tok(r, word, "ALPH '%s': only amino and nucleic (DNA, RNA) models can be "
                         "imported", word);
    h->K = (int)strlen(residues(h));
    snprintf(h->meta.alph, sizeof h->meta.alph, "%s", word);
    return 0;
}

static int set_name(const Reader *r, H2 *h)
{
    if (r->ntok < 2)
        return error_after(r, "NAME without a name: write `NAME NAME`");
    free(h->name);
    h->name = xstrdup(r->tok[1]);
    return 0;
}

static int set_length(const Reader *r, H2 *h)
{
    if (r->ntok != 2)
        return r->ntok < 2 ? error_after(r, "LENG: the count of match states is missing")
                           : error_tok(r, r->tok[2], "LENG takes one number, the count of "
                                       "match states");
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
            return error_tok(r, r->tok[x + 1], "the HMM line lists residue '%s' where '%c' was "
                             "expected",
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

/* '2' for HMMER2.0, 'a' to 'f' for HMMER3/a to 3/f. */
static char version_of(const H2 *h)
{
    return h->format[5] == '2' ? '2' : h->format[7];
}

/* Header keys both formats have (all a HMMER3 header needs), and the keys
 * kept for later passes (hmmer_meta.c); other keys are skipped. */
static int common_header_line(Reader *r, H2 *h, int *seen)
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
        if (r->ntok != 2)
            return r->ntok < 2 ? error_after(r, "ALPH: the alphabet is missing (amino, DNA, RNA)")
                               : error_tok(r, r->tok[2], "ALPH takes one word");
        return set_alphabet(r, h, r->tok[1]);
    }
    return hmmer_meta_line(r, h, version_of(h)) < 0 ? -1 : 0;
}

/* One header line of a HMMER2 file; unknown and unused keys are skipped. */
static int h2_header_line(Reader *r, H2 *h, int *seen)
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

/* The header lines up to the HMM line, each given to `line` (HMMER2's or
 * HMMER3's keys); seen collects the keys met. */
static int read_header(Reader *r, H2 *h, int (*line)(Reader *, H2 *, int *), int *seen)
{
    for (;;) {
        if (expect_line(r, "the HMM line (the residues of the emission lines)") < 0)
            return -1;
        if (strcmp(r->tok[0], "HMM") == 0)
            return hmmer_meta_check(r, h);
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

/* Nodes 1..M, each read by `node` (HMMER2's or HMMER3's layout), and the
 * closing '//'. */
static int read_nodes(Reader *r, H2 *h, int (*node)(Reader *, H2 *, int))
{
    for (int k = 1; k <= h->M; k++)
        if (node(r, h, k) < 0)
            return -1;
    if (expect_line(r, "'//' after the last node") < 0)
        return -1;
    if (strcmp(r->tok[0], "//") != 0)
        return error_at(r, "expected '//' after node %d (LENG says %d nodes)", h->M, h->M);
    return 0;
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

/* n values -ln(p) from tokens first.. kept as the probabilities HMMER3
 * reads (float), in h->h3_mat or h->h3_t (H2's comment). */
static int h3_keep(const Reader *r, int first, int n, double *out)
{
    for (int i = 0; i < n; i++) {
        double nats;
        if (parse_nats(r, r->tok[first + i], &nats, "value") < 0)
            return -1;
        out[i] = isinf(nats) ? 0.0 : (double)(float)exp(-nats);
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
    if (h3_values(r, h, 0, NTRANS, t0, 0, "transition") < 0 ||
        h3_keep(r, 0, NTRANS, &h->h3_t[0]) < 0)
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

/* The annotation fields after a match line's values, as HMMER reads them:
 * MAP RF CS up to HMMER3/d, MAP CONS RF CS in 3/e, MAP CONS RF MM CS in 3/f
 * ('-' where the model has none). Fields after them are not read. */
static const char *h3_annotations(char version)
{
    return version == 'f' ? "MAP CONS RF MM CS" : version == 'e' ? "MAP CONS RF CS" : "MAP RF CS";
}

/* Node k: match emissions (then the annotation fields), insert emissions,
 * transitions. The last node's insert and transitions are not kept. */
static int h3_node(Reader *r, H2 *h, int k)
{
    int K = h->K, last = k == h->M;
    const char *annotations = h3_annotations(version_of(h));
    int nann = 1;
    for (const char *a = annotations; *a; a++)
        nann += *a == ' ';
    if (expect_line(r, "a node's match line") < 0)
        return -1;
    if (r->ntok < K + 1 + nann)
        return error_after(r, "node %d: the match line of a %s file needs the node number, %d "
                           "values and %d annotation fields (%s, each at least '-'); found %d "
                           "fields", k, h->format, K, nann, annotations, r->ntok);
    if (check_node_number(r, k) < 0 ||
        h3_values(r, h, 1, K, &h->mat[k * KMAX], 1, "match emission") < 0 ||
        h3_keep(r, 1, K, &h->h3_mat[k * KMAX]) < 0)
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
    if (h3_values(r, h, 0, NTRANS, &h->t[k * NTRANS], 0, "transition") < 0 ||
        h3_keep(r, 0, NTRANS, &h->h3_t[k * NTRANS]) < 0)
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
    if (read_header(r, h, common_header_line, &seen) < 0)
        return -1;
    if (!(seen & SEEN_LENG) || !(seen & SEEN_ALPH))
        return error_at(r, "the header has no %s line", seen & SEEN_LENG ? "ALPH" : "LENG");
    if (check_residue_line(r, h) < 0 || h2_alloc(r, h) < 0)
        return -1;
    h->h3_mat = xcalloc(((size_t)h->M + 1) * KMAX, sizeof *h->h3_mat);
    h->h3_t = xcalloc(((size_t)h->M + 1) * NTRANS, sizeof *h->h3_t);
    h3_specials(h);
    if (expect_transition_names(r) < 0)
        return -1;
    if (h3_node0(r, h) < 0)
        return -1;
    return read_nodes(r, h, h3_node);
}

/* The HMMER3 ASCII formats hmmsearch 3.3 reads. They differ in the header
 * (3/a's STATS lines; MAXL from 3/c) and in the match lines' annotation
 * fields (CONS from 3/e, MM in 3/f): hmmer_meta.c and h3_node read both. */
static const char *const H3_FORMATS[] = {"HMMER3/a", "HMMER3/b", "HMMER3/c",
                                         "HMMER3/d", "HMMER3/e", "HMMER3/f"};

/* The first line, just read, says which format follows. */
static int read_model(Reader *r, H2 *h)
{
    if (strcmp(r->tok[0], "HMMER2.0") == 0)
        return h2_read(r, h);
    for (size_t i = 0; i < sizeof H3_FORMATS / sizeof H3_FORMATS[0]; i++)
        if (strcmp(r->tok[0], H3_FORMATS[i]) == 0) {
            h->format = H3_FORMATS[i];
            return h3_read(r, h);
        }
    if (strncmp(r->tok[0], "HMMER", 5) == 0)
        return error_tok(r, r->tok[0], "%s files are not supported: hmmc reads the ASCII "
                         "formats HMMER2.0 and HMMER3/a to HMMER3/f (convert the model with "
                         "`hmmconvert MODEL > NEW`)", r->tok[0]);
    if (r->model >= 2)
        return error_at(r, "expected the next model's header line (HMMER2.0 or HMMER3/a to "
                        "HMMER3/f) after the '//' that ends model %d", r->model - 1);
    return error_at(r, "not a HMMER save file: the first line should start with HMMER2.0 or "
                    "HMMER3/a to HMMER3/f (binary files: convert with hmm2convert or hmmconvert "
                    "first)");
}

struct HmmerFile {
    Reader r;
};

HmmerFile *hmmer_open(const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f) {
        fprintf(stderr, "hmmc: error: cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    HmmerFile *hf = xcalloc(1, sizeof *hf);
    hf->r.f = f;
    hf->r.path = path;
    return hf;
}

int hmmer_next(HmmerFile *hf, H2 *h)
{
    Reader *r = &hf->r;
    int got = r->model == 0 /* expect_line: 0 when read */
                  ? (expect_line(r, "a HMMER2.0 or HMMER3/a to HMMER3/f header line") == 0 ? 1 : -1)
                  : next_line(r);
    if (got <= 0)
        return got;
    r->model++;
    r->current = h;
    int status = read_model(r, h);
    r->current = NULL;
    if (status < 0)
        return -1;
    /* what the header block names besides the kept lines */
    snprintf(h->meta.format, sizeof h->meta.format, "%s", h->format);
    h->meta.name = h->name ? xstrdup(h->name) : NULL;
    h->meta.leng = h->M;
    return 1;
}

int hmmer_model_line(const HmmerFile *hf)
{
    return hf->r.line;
}

void hmmer_close(HmmerFile *hf)
{
    if (!hf)
        return;
    if (hf->r.f != stdin)
        fclose(hf->r.f);
    free(hf->r.buf);
    free(hf);
}
