/* hmmer3_write.c: writes the .hmm program of a HMMER3 profile in HMMER3's
 * search configuration (Local3): a header comment, the alphabet, the
 * emissions, the model with the length model and the null model's length
 * as length-dependent weights of L, and main. */
#include "import/hmmer3_local.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The length model (p7_ReconfigLength, multihit: nj = 1): N, J and C loop
 * with L / (L + 3) and move on with 3 / (L + 3). The null model emits the
 * sequence with p1 = L / (L + 1) (p7_bg_SetLength, p7_bg_NullOne): its
 * probability p1^L (1 - p1) divides every path's, on S -> N. */
static const char LOOP[] = "(L / (L + 3))";
static const char MOVE[] = "(3 / (L + 3))";
/* unihit (p7_UNILOCAL, nj = 0): N and C loop with L / (L + 2), move on with
 * 2 / (L + 2); E -> C 1, no J. */
static const char UNI_LOOP[] = "(L / (L + 2))";
static const char UNI_MOVE[] = "(2 / (L + 2))";
static const char NULL_LENGTH[] = "(((L + 1) / L) ^ L * (L + 1))";

static void put_move(FILE *out, const char *from, int i, const char *to, int j, double p)
{
    if (p <= 0)
        return; /* '*' in the file: no such move */
    char a[24], b[24];
    snprintf(a, sizeof a, i > 0 ? "%s%d" : "%s", from, i);
    snprintf(b, sizeof b, j > 0 ? "%s%d" : "%s", to, j);
    fprintf(out, "    %s -> %s %.12g;\n", a, b, p);
}

static void put_alphabet(FILE *out, const H3Symbols *s)
{
    fputs("    alphabet [", out);
    for (int i = 0; i < s->n; i++)
        fprintf(out, isalpha((unsigned char)s->sym[i]) ? "%s%c" : "%s'%c'", i ? ", " : "",
                s->sym[i]);
    fputs("];\n", out);
}

/* emission NAME = [...]: the value of each column, for every symbol. */
static void put_emission(FILE *out, const char *name, const double *col, const H3Symbols *s)
{
    fprintf(out, "    emission %s = [", name);
    for (int i = 0; i < s->n; i++)
        fprintf(out, "%s%.12g", i ? ", " : "", col[s->col[i]]);
    fputs("];\n", out);
}

static void put_header(FILE *out, const char *path, const H2 *h, const char *id, int unihit,
                       int glocal)
{
    fprintf(out,
            "// %s: the profile HMM '%s' (%d nodes, %s), imported by\n"
            "// `hmmc --import-hmmer %s%s` from a %s file, in HMMER3's%s\n",
            id, h->name ? h->name : "", h->M, h->nucleic ? "nucleic" : "amino", path,
            glocal ? " --hmmer-mode=uniglocal" : unihit ? " --hmmer-mode=unilocal" : "",
            h->format, unihit ? "" : " search");
    if (glocal)
        fputs("// uniglocal configuration (p7_UNIGLOCAL: glocal, the whole model aligned to\n"
              "// one stretch of the sequence: hmmsim --s's), with its length model.\n"
              "// main prints, per sequence, the forward score, the viterbi score and the\n"
              "// viterbi traceback, in nats (divide by ln 2 for bits), against HMMER3's null\n"
              "// model, without the null2 correction of biased composition.\n", out);
    else if (unihit)
        fputs("// unilocal configuration (p7_UNILOCAL: local, one domain a sequence, as\n"
              "// hmmsearch rescores a domain's envelope), with its length model.\n"
              "// main prints, per sequence, the forward score, the viterbi score and the\n"
              "// viterbi traceback, in nats (divide by ln 2 for bits), against HMMER3's null\n"
              "// model, without the null2 correction of biased composition.\n", out);
    else
        fputs("// configuration: hmmsearch's default, local and multihit, with its length model.\n"
              "// main prints, per sequence, the forward score, the viterbi score and the\n"
              "// viterbi traceback, in nats (divide by ln 2 for bits), against HMMER3's null\n"
              "// model: forward is hmmsearch's full-sequence score without the null2\n"
              "// correction of biased composition (hmmsearch --max --nonull2).\n", out);
    fputs("// Weights are HMMER3's probabilities, the match emissions as odds against the\n"
          "// null model's frequencies (inserts, N, J and C emit odds 1), so the model is\n"
          "// declared `scores`. Written (EXPR) of L, the length of the sequence scored,\n", out);
    if (unihit)
        fputs("// are the length model, N, C -> loop L/(L+2) and move on 2/(L+2) (nj = 0), and\n"
              "// the null model's length on S -> N: 1 / (p1^L (1 - p1)) with p1 = L/(L+1).\n",
              out);
    if (glocal)
        fputs("// B -> M1: 1 - t(B -> D1); B -> Mk: the path B -> D1 -> ... -> Dk-1 -> Mk (wing\n"
              "// retraction); only Mm -> E and Dm -> E: 1 (glocal exit); E -> C 1 (no J).\n", out);
    else if (unihit)
        fputs("// B -> Mk: local entry, occupancy-weighted; Mk -> E and Dk -> E: 1 (local exit);\n"
              "// E -> C 1 (no J: one domain).\n", out);
    else
        fputs("// are the length model, N, J, C -> loop L/(L+3) and move on 3/(L+3), and the\n"
              "// null model's length on S -> N: 1 / (p1^L (1 - p1)) with p1 = L/(L+1).\n"
              "// B -> Mk: local entry, occupancy-weighted; Mk -> E and Dk -> E: 1 (local exit).\n",
              out);
    fprintf(out,
            "// States: S start, N (residues before the first domain), B begin, M1..M%d match,\n"
            "// I1..I%d insert, D2..D%d delete (no D1: %sentries go to match states),\n"
            "// E end of a domain, %sC (after the last), T end.\n"
            "// Symbols as Easel reads them: lower case as upper case; degenerate codes score\n"
            "// the null-weighted mean score of their residues; '*' is no residue (0 in match\n"
            "// and insert states); gaps ('-', '.') are not symbols.\n",
            h->M, h->M - 1, h->M, glocal ? "" : "local ", unihit ? "" : "J (between domains), ");
}

static void put_states(FILE *out, int M, int unihit)
{
    fputs("    startstate S;\n    state N;\n    state B;\n", out);
    for (int k = 1; k <= M; k++)
        fprintf(out, "    state M%d emits m%d;\n", k, k);
    for (int k = 1; k < M; k++)
        fprintf(out, "    state I%d emits ins;\n", k);
    for (int k = 2; k <= M; k++)
        fprintf(out, "    state D%d;\n", k);
    fputs(unihit ? "    state E;\n    state C;\n    endstate T;\n"
                 : "    state E;\n    state J;\n    state C;\n    endstate T;\n", out);
}

static void put_emissions(FILE *out, const Local3 *l)
{
    double *ones = malloc(sizeof(double) * (size_t)l->ncol);
    for (int c = 0; c < l->ncol; c++)
        ones[c] = 1;
    put_emission(out, "null", ones, &l->symbols);
    ones[l->ncol - 1] = 0; /* '*' */
    if (l->M > 1) /* one node: no insert state */
        put_emission(out, "ins", ones, &l->symbols);
    free(ones);
    for (int k = 1; k <= l->M; k++) {
        char name[24];
        snprintf(name, sizeof name, "m%d", k);
        put_emission(out, name, &l->match[k * l->ncol], &l->symbols);
    }
}

static void put_specials(FILE *out, int unihit)
{
    const char *loop = unihit ? UNI_LOOP : LOOP, *move = unihit ? UNI_MOVE : MOVE;
    fprintf(out, "    S -> N %s;\n", NULL_LENGTH);
    fprintf(out, "    N -> N %s emits null;\n", loop);
    fprintf(out, "    N -> B %s;\n", move);
    if (unihit) {
        fputs("    E -> C 1;\n", out);
        fprintf(out, "    C -> C %s emits null;\n", loop);
        fprintf(out, "    C -> T %s;\n", move);
        return;
    }
    fputs("    E -> C 0.5;\n    E -> J 0.5;\n", out);
    fprintf(out, "    J -> J %s emits null;\n", LOOP);
    fprintf(out, "    J -> B %s;\n", MOVE);
    fprintf(out, "    C -> C %s emits null;\n", LOOP);
    fprintf(out, "    C -> T %s;\n", MOVE);
}

/* Node k: its entry, its moves out of Mk, Ik and Dk, and its exits. */
static void put_node(FILE *out, const Local3 *l, int k)
{
    const double *t = &l->t[k * NTRANS];
    put_move(out, "B", 0, "M", k, l->entry[k]);
    if (k < l->M) {
        put_move(out, "M", k, "M", k + 1, t[TMM]);
        put_move(out, "M", k, "I", k, t[TMI]);
        put_move(out, "M", k, "D", k + 1, t[TMD]);
        put_move(out, "I", k, "M", k + 1, t[TIM]);
        put_move(out, "I", k, "I", k, t[TII]);
        if (k >= 2) {
            put_move(out, "D", k, "M", k + 1, t[TDM]);
            put_move(out, "D", k, "D", k + 1, t[TDD]);
        }
    }
    if (l->glocal && k < l->M)
        return; /* glocal: the model is left at its last node only */
    put_move(out, "M", k, "E", 0, 1.0);
    if (k >= 2)
        put_move(out, "D", k, "E", 0, 1.0);
}

/* The model's `// hmmer:` header lines and its hmm block, named id. */
void local3_write_model(FILE *out, const H2 *h, const Local3 *l, const char *id)
{
    hmmer_meta_write(out, "// hmmer:", &h->meta);
    fprintf(out, "hmm %s scores {\n", id); /* odds: rows may sum above 1 */
    put_alphabet(out, &l->symbols);
    put_states(out, l->M, l->unihit);
    put_emissions(out, l);
    put_specials(out, l->unihit);
    for (int k = 1; k <= l->M; k++)
        put_node(out, l, k);
    fputs("}\n", out);
}

int local3_write(FILE *out, const char *path, const H2 *h, const Local3 *l)
{
    char *id = hmmer_identifier(h->name);
    put_header(out, path, h, id, l->unihit, l->glocal);
    fputs("// The file's header lines, kept for what reads this program after hmmc (one\n"
          "// `// hmmer: KEY VALUE` line each; docs/hmmer.md says what each holds):\n", out);
    local3_write_model(out, h, l, id);
    fprintf(out, "\nmain {\n    profile = new %s();\n"
                 "    print forward(profile).score;\n"
                 "    v = viterbi(profile);\n"
                 "    print v.score;\n"
                 "    print v.traceback;\n"
                 "}\n", id);
    free(id);
    fflush(out);
    if (ferror(out)) {
        fprintf(stderr, "hmmc: error: cannot write the program: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}
