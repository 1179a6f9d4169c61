/* hmmer3_local.c: a HMMER3 profile configured as hmmsearch configures it
 * (p7_ProfileConfig in local multihit mode): match odds against HMMER3's
 * null model, degenerate residues as Easel scores them, occupancy-weighted
 * local entries (or p7_UNIGLOCAL's glocal entries, by wing retraction). The
 * length model and the null model's length, which
 * depend on the target, are written as length-dependent weights by
 * hmmer3_write.c. */
#include "import/hmmer3_local.h"
#include "support/arena.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* HMMER3's residue frequencies for proteins (p7_AminoFrequencies; the same
 * numbers as hmmer_read.c's conversion); nucleic: 1/4 each. */
static const float AMINO_F[KMAX] = {
    0.0787945f, 0.0151600f, 0.0535222f, 0.0668298f, 0.0397062f, 0.0695071f, 0.0229198f,
    0.0590092f, 0.0594422f, 0.0963728f, 0.0237718f, 0.0414386f, 0.0482904f, 0.0395639f,
    0.0540978f, 0.0683364f, 0.0540687f, 0.0673417f, 0.0114135f, 0.0304133f};

/* Easel's degenerate codes (esl_alphabet.c): the residues each stands for;
 * the last is the all-residue code. */
typedef struct Code {
    char sym;
    const char *means;
} Code;
static const Code AMINO_CODES[] = {{'B', "ND"}, {'J', "IL"}, {'Z', "QE"}, {'O', "K"},
                                   {'U', "C"},  {'X', "ACDEFGHIKLMNPQRSTVWY"}, {0, NULL}};
static const Code DNA_CODES[] = {{'R', "AG"},  {'Y', "CT"},  {'M', "AC"},  {'K', "GT"},
                                 {'S', "CG"},  {'W', "AT"},  {'H', "ACT"}, {'B', "CGT"},
                                 {'V', "ACG"}, {'D', "AGT"}, {'N', "ACGT"}, {0, NULL}};
/* Easel's synonyms: DNA reads U as T, X as N, I as A. */
static const char DNA_SYNONYMS[][2] = {{'U', 'T'}, {'X', 'N'}, {'I', 'A'}};

static const Code *codes(const Local3 *l) { return l->nucleic ? DNA_CODES : AMINO_CODES; }

static int column_of(const Local3 *l, char c)
{
    const char *p = memchr(l->col_sym, c, (size_t)l->ncol);
    return p ? (int)(p - l->col_sym) : -1;
}

static void add_symbol(H3Symbols *s, char c, int col)
{
    s->sym[s->n] = c;
    s->col[s->n++] = col;
}

/* Columns, then the program's symbols: every column's symbol and synonym in
 * upper case, the same in lower case, '*'. */
static void set_symbols(Local3 *l)
{
    const char *res = l->nucleic ? "ACGT" : "ACDEFGHIKLMNPQRSTVWY";
    l->ncol = 0;
    for (int x = 0; x < l->K; x++)
        l->col_sym[l->ncol++] = res[x];
    for (const Code *c = codes(l); c->sym; c++)
        l->col_sym[l->ncol++] = c->sym;
    l->col_sym[l->ncol++] = '*';
    H3Symbols *s = &l->symbols;
    s->n = 0;
    for (int c = 0; c < l->ncol - 1; c++)
        add_symbol(s, l->col_sym[c], c);
    for (size_t i = 0; l->nucleic && i < sizeof DNA_SYNONYMS / sizeof DNA_SYNONYMS[0]; i++)
        add_symbol(s, DNA_SYNONYMS[i][0], column_of(l, DNA_SYNONYMS[i][1]));
    for (int i = 0, upper = s->n; i < upper; i++)
        add_symbol(s, (char)tolower((unsigned char)s->sym[i]), s->col[i]);
    add_symbol(s, '*', l->ncol - 1);
}

/* Mk's scores for every column (esl_abc_FExpectScVec for the codes), as odds. */
static void match_odds(Local3 *l, const double *mat, double *out)
{
    double sc[KMAX];
    for (int x = 0; x < l->K; x++) {
        sc[x] = log(mat[x] / l->f[x]);
        out[x] = exp(sc[x]);
    }
    int c = l->K;
    for (const Code *d = codes(l); d->sym; d++, c++) {
        double sum = 0, denom = 0;
        for (const char *r = d->means; *r; r++) {
            int x = column_of(l, *r);
            sum += l->f[x] * sc[x];
            denom += l->f[x];
        }
        out[c] = exp(sum / denom);
    }
    out[l->ncol - 1] = 0; /* '*', a nonresidue: no match emits it */
}

/* p7_hmm_CalculateOccupancy, then the local entries of p7_ProfileConfig. */
static void local_entries(Local3 *l, const H2 *h)
{
    int M = l->M;
    double *occ = xcalloc((size_t)M + 1, sizeof *occ), Z = 0;
    const double *t = h->h3_t;
    occ[1] = t[TMI] + t[TMM];
    for (int k = 2; k <= M; k++) {
        const double *tk = &t[(k - 1) * NTRANS];
        occ[k] = occ[k - 1] * (tk[TMM] + tk[TMI]) + (1.0 - occ[k - 1]) * tk[TDM];
    }
    for (int k = 1; k <= M; k++)
        Z += occ[k] * (double)(M - k + 1);
    for (int k = 1; k <= M; k++)
        l->entry[k] = Z > 0 ? occ[k] / Z : 0;
    free(occ);
}

/* p7_ProfileConfig's glocal entries (left wing retraction): B -> M1 is
 * 1 - t0(MD) (B -> I0 goes to M1 too), B -> Mk+1 the path B -> D1 -> ... ->
 * Dk -> Mk+1, t0(MD) t1(DD) ... tk-1(DD) tk(DM), summed in logs as HMMER does. */
static void glocal_entries(Local3 *l, const H2 *h)
{
    const double *t = h->h3_t;
    double Z = log(t[TMD]);
    l->entry[1] = 1.0 - t[TMD];
    for (int k = 1; k < l->M; k++) {
        const double *tk = &t[k * NTRANS];
        l->entry[k + 1] = exp(Z + log(tk[TDM]));
        Z += log(tk[TDD]);
    }
}

int local3_build(const H2 *h, Local3 *l, int glocal)
{
    memset(l, 0, sizeof *l);
    if (!h->h3_mat || !h->h3_t) {
        fprintf(stderr, "hmmc: error: HMMER3's local configuration needs a HMMER3 file; "
                        "this is %s (use --hmmer-mode glocal)\n", h->format);
        return -1;
    }
    l->M = h->M;
    l->K = h->K;
    l->nucleic = h->nucleic;
    for (int x = 0; x < l->K; x++)
        l->f[x] = l->nucleic ? 0.25 : (double)AMINO_F[x];
    set_symbols(l);
    size_t nodes = (size_t)l->M + 1;
    l->match = xcalloc(nodes * (size_t)l->ncol, sizeof *l->match);
    l->t = xcalloc(nodes * NTRANS, sizeof *l->t);
    l->entry = xcalloc(nodes, sizeof *l->entry);
    for (int k = 1; k <= l->M; k++) {
        match_odds(l, &h->h3_mat[k * KMAX], &l->match[k * l->ncol]);
        if (k < l->M)
            memcpy(&l->t[k * NTRANS], &h->h3_t[k * NTRANS], sizeof(double) * NTRANS);
    }
    l->glocal = glocal;
    if (glocal)
        glocal_entries(l, h);
    else
        local_entries(l, h);
    return 0;
}

void local3_free(Local3 *l)
{
    free(l->match);
    free(l->t);
    free(l->entry);
}
