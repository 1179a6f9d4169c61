/* hmmer_scores.c: the second of the three parts of `hmmc --import-hmmer`:
 * from a profile as read (H2), the scores hmm2search computes in single
 * precision: probabilities renormalized, the null model, the mode's
 * entries and exits with the delete wings folded in (Viterbi's maxima and
 * Forward's sums), degenerate residues. See import_hmmer.c. */
#include "import/hmmer_profile.h"
#include "support/arena.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

void search_free(Search *s)
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
int search_scores(const H2 *h, Search *s)
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

