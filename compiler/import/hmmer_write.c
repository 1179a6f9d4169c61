/* hmmer_write.c: the third of the three parts of `hmmc --import-hmmer`:
 * writes the .hmm program text for a profile's hmm2search scores: a header
 * comment, the alphabet, the emissions, a model whose weights are
 * 2^(score/1000) (and a Forward one where the folding differs), main. */
#include "import/hmmer_profile.h"
#include "import/hmmer3_local.h"
#include "support/arena.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
 * and a name that does not start with a letter gets "hmm_" in front
 * (hmmer3_write.c uses it too). */
char *hmmer_identifier(const char *name)
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
            "// computes from the file, the null model folded in: odds, not probabilities,\n"
            "// so the model is declared `scores` and its rows may sum to more than 1.\n",
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
    fprintf(out, "hmm %s scores {\n", id); /* odds: rows may sum above 1 */
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

/* The model's `// hmmer:` lines and its hmm block named id, and, in the
 * local modes, the forward one: returns its name (malloc'd), or NULL. */
char *write_model_blocks(FILE *out, const H2 *h, const Search *s, const char *id)
{
    char *fid = forward_differs(s) ? xasprintf("%s_forward", id) : NULL;
    Symbols a;
    symbols(h, &a);
    hmmer_meta_write(out, "// hmmer:", &h->meta);
    put_model(out, id, s, &a, s->bsc, s->esc);
    if (fid) {
        fputc('\n', out);
        put_model(out, fid, s, &a, s->fsc_b, s->fsc_e);
    }
    return fid;
}

int write_program(FILE *out, const char *path, const H2 *h, const Search *s)
{
    char *id = hmmer_identifier(h->name);
    int twice = forward_differs(s);
    char *fid = twice ? xasprintf("%s_forward", id) : NULL;
    put_header(out, path, h, id, fid);
    fputs("// The file's header lines, kept for what reads this program after hmmc (one\n"
          "// `// hmmer: KEY VALUE` line each; docs/hmmer.md says what each holds):\n", out);
    free(write_model_blocks(out, h, s, id));
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
