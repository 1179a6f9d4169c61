/* gendense.c: writes a random dense model (most pairs of its emitting
 * states joined) and random sequences for it, deterministic for a seed: test
 * data for hmmc's dense shape (differential tests, the GPU check) and the
 * dense example of models/. Its main prints what the differential test reads
 * of random models: forward, backward and viterbi scores, viterbi traceback
 * (or, with --scores, forward and viterbi scores only).
 *   gendense SEED OUT.hmm OUT.fa [--states N] [--density D] [--symbols K]
 *            [--seqs M] [--maxlen L] [--length L] [--zeros Z] [--scores] [--matrix]
 * N emitting states (default 150); D: the share of the N x N pairs joined
 * (default 1); K symbols of "acgtnrykmswbdhv..." (default 4); M sequences
 * (default 40) of lengths 0..L (default 60), or all of length L with
 * --length; Z: the share of emission values
 * that are 0 (default 0.05), so that some sequences have fewer paths or none.
 * The transitions are arrow statements `s1 -> s2 w;`, or with --matrix one
 * transition matrix `[start, s0, ...] -> [s0, ..., end] [ ... ];` (0 where a
 * pair is not joined). Both forms describe the same model for a seed: the
 * random numbers are drawn in the same order and printed the same way. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_rng.h"

static Rng rng;

static double uniform(void) { return rng_uniform(&rng); }

static const char SYMBOLS[] = "acgtnrykmswbdhvefilpq";

static int usage(void)
{
    fprintf(stderr, "usage: gendense SEED OUT.hmm OUT.fa [--states N] [--density D] "
                    "[--symbols K] [--seqs M] [--maxlen L] [--length L] [--zeros Z] [--scores] "
                    "[--matrix]\n");
    return 2;
}

static void state_name(char *buf, int i, int n) /* 0..n-1: s0..; n: end; -1: start */
{
    if (i < 0)
        strcpy(buf, "start");
    else if (i == n)
        strcpy(buf, "end");
    else
        sprintf(buf, "s%d", i);
}

/* t: row 0 the start, row k+1 state k; column j state j, column n the end. */
static void write_arrows(FILE *f, const double *t, int n)
{
    size_t width = (size_t)n + 1;
    char from[16], to[16];
    for (int k = -1; k < n; k++)
        for (int j = 0; j <= n; j++)
            if (t[(size_t)(k + 1) * width + j] > 0) {
                state_name(from, k, n);
                state_name(to, j, n);
                fprintf(f, "    %s -> %s %.6g;\n", from, to, t[(size_t)(k + 1) * width + j]);
            }
}

static void write_names(FILE *f, int first, int last, int n)
{
    char name[16];
    fputc('[', f);
    for (int i = first; i <= last; i++) {
        state_name(name, i, n);
        fprintf(f, "%s%s", i > first ? ", " : "", name);
    }
    fputc(']', f);
}

static void write_matrix(FILE *f, const double *t, int n)
{
    size_t width = (size_t)n + 1;
    fputs("    ", f);
    write_names(f, -1, n - 1, n);
    fputs(" -> ", f);
    write_names(f, 0, n, n);
    fputs(" [\n", f);
    for (int k = 0; k <= n; k++) {
        fputs("        ", f);
        for (int j = 0; j <= n; j++) {
            double w = t[(size_t)k * width + j];
            if (w > 0)
                fprintf(f, j ? ", %.6g" : "%.6g", w);
            else
                fputs(j ? ", 0" : "0", f);
        }
        fputs(k < n ? ";\n" : "\n", f);
    }
    fputs("    ];\n", f);
}

static void write_model(FILE *f, int n, double density, int K, double zeros, int scores_only,
                        int matrix)
{
    fprintf(f, "// a random dense model: %d emitting states, %.0f%% of pairs joined\n", n,
            100 * density);
    fprintf(f, "hmm dense scores {\n    alphabet [");
    for (int c = 0; c < K; c++)
        fprintf(f, "%s%c", c ? ", " : "", SYMBOLS[c]);
    fprintf(f, "];\n    startstate start;\n    endstate end;\n");
    for (int j = 0; j < n; j++)
        fprintf(f, "    state s%d emits e%d;\n", j, j);
    double *w = malloc(sizeof(double) * (size_t)(n > K ? n : K));
    for (int j = 0; j < n; j++) {
        double sum = 0;
        int c0 = (int)(uniform() * K); /* never all zero */
        for (int c = 0; c < K; c++)
            sum += w[c] = c != c0 && uniform() < zeros ? 0.0 : 0.05 + uniform();
        fprintf(f, "    emission e%d = [", j);
        for (int c = 0; c < K; c++)
            fprintf(f, "%s%.6g", c ? ", " : "", w[c] / sum);
        fprintf(f, "];\n");
    }
    /* The weights, drawn row by row (start, then each state), are kept in
     * an (n + 1) x (n + 1) table, row 0 the start, column n the end. */
    size_t width = (size_t)n + 1;
    double *t = calloc(width * width, sizeof(double));
    if (!t) {
        perror("gendense");
        exit(1);
    }
    int j0 = (int)(uniform() * n);
    for (int j = 0; j < n; j++)
        if (j == j0 || uniform() < 0.5)
            t[j] = (0.1 + uniform()) / n;
    for (int k = 0; k < n; k++) {
        double sum = 0, *row = t + (size_t)(k + 1) * width;
        for (int j = 0; j < n; j++)
            sum += row[j] = uniform() < density ? 0.01 + uniform() : 0.0;
        for (int j = 0; j < n; j++)
            row[j] = 0.98 * row[j] / sum;
        if (uniform() < 0.3)
            row[n] = 0.02 * uniform();
    }
    if (uniform() < 0.5)
        t[n] = 0.01;
    if (matrix)
        write_matrix(f, t, n);
    else
        write_arrows(f, t, n);
    free(t);
    free(w);
    fprintf(f, "}\n\nmain {\n    m = new dense();\n");
    if (scores_only)
        fprintf(f, "    print forward(m).score;\n    print viterbi(m).score;\n}\n");
    else
        fprintf(f, "    print forward(m).score;\n    print backward(m).score;\n"
                   "    v = viterbi(m);\n    print v.score;\n    print v.traceback;\n}\n");
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return usage();
    int n = 150, K = 4, seqs = 40, maxlen = 60, length = -1, scores_only = 0, matrix = 0;
    double density = 1.0, zeros = 0.05;
    for (int i = 4; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--scores") == 0) { scores_only = 1; continue; }
        if (strcmp(o, "--matrix") == 0) { matrix = 1; continue; }
        if (!v)
            return usage();
        if (strcmp(o, "--states") == 0) n = atoi(v);
        else if (strcmp(o, "--density") == 0) density = atof(v);
        else if (strcmp(o, "--symbols") == 0) K = atoi(v);
        else if (strcmp(o, "--seqs") == 0) seqs = atoi(v);
        else if (strcmp(o, "--maxlen") == 0) maxlen = atoi(v);
        else if (strcmp(o, "--length") == 0) length = atoi(v);
        else if (strcmp(o, "--zeros") == 0) zeros = atof(v);
        else return usage();
        i++;
    }
    if (n < 1 || K < 1 || K > (int)strlen(SYMBOLS) || seqs < 0 || maxlen < 0 || density <= 0 ||
        density > 1)
        return usage();
    rng.state = strtoull(argv[1], NULL, 10) * 7919 + 17;
    FILE *model = fopen(argv[2], "w"), *fasta = fopen(argv[3], "w");
    if (!model || !fasta) {
        perror("gendense");
        return 1;
    }
    write_model(model, n, density, K, zeros, scores_only, matrix);
    for (int s = 0; s < seqs; s++) {
        int len = length >= 0 ? length : (int)(uniform() * (maxlen + 1));
        fprintf(fasta, ">seq%d\n", s + 1);
        for (int i = 0; i < len; i++)
            fputc(SYMBOLS[(int)(uniform() * K)], fasta);
        fputc('\n', fasta);
    }
    if (fclose(model) != 0 || fclose(fasta) != 0) {
        perror("gendense");
        return 1;
    }
    return 0;
}
