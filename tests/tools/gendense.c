/* gendense.c: writes a random dense model (most pairs of its emitting
 * states joined) and random sequences for it, deterministic for a seed: test
 * data for hmmc's dense shape (differential tests, the GPU check) and the
 * dense example of models/. Its main prints what the differential test reads
 * of random models: forward, backward and viterbi scores, viterbi traceback
 * (or, with --scores, forward and viterbi scores only).
 *   gendense SEED OUT.hmm OUT.fa [--states N] [--density D] [--symbols K]
 *            [--seqs M] [--maxlen L] [--length L] [--zeros Z] [--scores]
 * N emitting states (default 150); D: the share of the N x N pairs joined
 * (default 1); K symbols of "acgtnrykmswbdhv..." (default 4); M sequences
 * (default 40) of lengths 0..L (default 60), or all of length L with
 * --length; Z: the share of emission values
 * that are 0 (default 0.05), so that some sequences have fewer paths or none. */
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
                    "[--symbols K] [--seqs M] [--maxlen L] [--length L] [--zeros Z] [--scores]\n");
    return 2;
}

static void write_model(FILE *f, int n, double density, int K, double zeros, int scores_only)
{
    fprintf(f, "// a random dense model: %d emitting states, %.0f%% of pairs joined\n", n,
            100 * density);
    fprintf(f, "hmm dense {\n    alphabet [");
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
    int j0 = (int)(uniform() * n);
    for (int j = 0; j < n; j++)
        if (j == j0 || uniform() < 0.5)
            fprintf(f, "    start -> s%d %.6g;\n", j, (0.1 + uniform()) / n);
    for (int k = 0; k < n; k++) {
        double sum = 0;
        for (int j = 0; j < n; j++)
            sum += w[j] = uniform() < density ? 0.01 + uniform() : 0.0;
        for (int j = 0; j < n; j++)
            if (w[j] > 0)
                fprintf(f, "    s%d -> s%d %.6g;\n", k, j, 0.98 * w[j] / sum);
        if (uniform() < 0.3)
            fprintf(f, "    s%d -> end %.6g;\n", k, 0.02 * uniform());
    }
    if (uniform() < 0.5)
        fprintf(f, "    start -> end 0.01;\n");
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
    int n = 150, K = 4, seqs = 40, maxlen = 60, length = -1, scores_only = 0;
    double density = 1.0, zeros = 0.05;
    for (int i = 4; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--scores") == 0) { scores_only = 1; continue; }
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
    write_model(model, n, density, K, zeros, scores_only);
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
