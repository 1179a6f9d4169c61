/* randprot.c: writes N random protein sequences as FASTA, the database of the
 * profile benchmarks (benchmarks/gpu-suite). The same N, seed and options
 * always give the same file, and the first K sequences of a run with N > K
 * are the file of a run with N = K (one stream of random numbers, drawn in
 * order), so smaller databases are prefixes of larger ones.
 *
 *   randprot N SEED [--mean L] [--sigma S] [--min A] [--max B] > OUT.fa
 *
 * Lengths are log-normal with mean L (default 300) and shape S (the standard
 * deviation of the log, default 0.6: median about 250, a long right tail like
 * real protein databases), drawn again when outside A..B (default 20..10000).
 * Residues are drawn independently from HMMER2's null model (the 20 amino
 * acid frequencies hmm2build assumes), through a table of 65,536 entries.
 * Sequences are named rand1, rand2, ...; lines hold 60 residues. A summary
 * (sequences, residues, mean length) goes to standard error. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_rng.h"

enum { TABLE_BITS = 16, TABLE_SIZE = 1 << TABLE_BITS, LINE = 60 };

static const char residues[] = "ACDEFGHIKLMNPQRSTVWY";
static const double null_model[20] = { /* HMMER2's amino acid background, in the order above */
    0.0755, 0.0170, 0.0530, 0.0632, 0.0408, 0.0685, 0.0224, 0.0573, 0.0594, 0.0934,
    0.0236, 0.0453, 0.0493, 0.0403, 0.0515, 0.0722, 0.0574, 0.0651, 0.0125, 0.0319,
};

static double rng_open_uniform(Rng *r) /* (0, 1) */
{
    return ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(Rng *r) /* Box-Muller, one value per call */
{
    double u = rng_open_uniform(r), v = rng_open_uniform(r);
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

typedef struct {
    long long n;
    unsigned long long seed;
    double mean, sigma;
    long min, max;
} Options;

static void usage(void)
{
    fputs("usage: randprot N SEED [--mean L] [--sigma S] [--min A] [--max B] > OUT.fa\n"
          "  N random proteins, lengths log-normal with mean L (default 300) and shape S\n"
          "  (default 0.6), kept within A..B (default 20..10000), residues from HMMER2's\n"
          "  null model; the same arguments always give the same file\n",
          stderr);
}

/* A number from argument WHAT, within lo..hi, or exits with a message. */
static double parse_number(const char *text, const char *what, double lo, double hi)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "randprot: %s must be a number from %g to %g, not '%s'\n", what, lo, hi,
                text);
        exit(2);
    }
    return v;
}

static Options parse_options(int argc, char **argv)
{
    Options o = { -1, 0, 300.0, 0.6, 20, 10000 };
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(a, "--mean") == 0 && has_value)
            o.mean = parse_number(argv[++i], "--mean", 1, 1e6);
        else if (strcmp(a, "--sigma") == 0 && has_value)
            o.sigma = parse_number(argv[++i], "--sigma", 0, 3);
        else if (strcmp(a, "--min") == 0 && has_value)
            o.min = (long)parse_number(argv[++i], "--min", 1, 1e8);
        else if (strcmp(a, "--max") == 0 && has_value)
            o.max = (long)parse_number(argv[++i], "--max", 1, 1e8);
        else if (a[0] != '-' && positional == 0) {
            o.n = (long long)parse_number(a, "N", 0, 1e10);
            positional++;
        } else if (a[0] != '-' && positional == 1) {
            o.seed = (unsigned long long)parse_number(a, "SEED", 0, 1.8e19);
            positional++;
        } else {
            fprintf(stderr, "randprot: unexpected argument '%s'\n", a);
            usage();
            exit(2);
        }
    }
    if (positional != 2) {
        usage();
        exit(2);
    }
    if (o.min > o.max || o.mean < (double)o.min || o.mean > (double)o.max) {
        fprintf(stderr, "randprot: need --min <= --mean <= --max (got %ld, %g, %ld)\n", o.min,
                o.mean, o.max);
        exit(2);
    }
    return o;
}

/* table[k] is the residue whose cumulative frequency interval holds k / TABLE_SIZE. */
static void build_residue_table(char *table)
{
    double total = 0, cumulative = 0;
    for (int a = 0; a < 20; a++)
        total += null_model[a];
    int k = 0;
    for (int a = 0; a < 20; a++) {
        cumulative += null_model[a] / total;
        int upto = a == 19 ? TABLE_SIZE : (int)lround(cumulative * TABLE_SIZE);
        for (; k < upto; k++)
            table[k] = residues[a];
    }
}

static long draw_length(Rng *r, const Options *o)
{
    double mu = log(o->mean) - 0.5 * o->sigma * o->sigma; /* so that the mean is o->mean */
    for (;;) {
        long len = lround(exp(mu + o->sigma * rng_normal(r)));
        if (len >= o->min && len <= o->max)
            return len;
    }
}

int main(int argc, char **argv)
{
    Options o = parse_options(argc, argv);
    static char table[TABLE_SIZE];
    build_residue_table(table);
    static char outbuf[1 << 20];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    Rng rng = { o.seed * 0x2545F4914F6CDD1DULL + 0x5EED };
    char line[LINE + 1];
    long long total = 0;
    for (long long s = 1; s <= o.n; s++) {
        long len = draw_length(&rng, &o);
        total += len;
        printf(">rand%lld\n", s);
        uint64_t bits = 0;
        int left = 0; /* 16-bit draws left in bits */
        int filled = 0;
        for (long i = 0; i < len; i++) {
            if (left == 0) {
                bits = rng_next(&rng);
                left = 4;
            }
            line[filled++] = table[bits & (TABLE_SIZE - 1)];
            bits >>= TABLE_BITS;
            left--;
            if (filled == LINE || i == len - 1) {
                line[filled++] = '\n';
                fwrite(line, 1, (size_t)filled, stdout);
                filled = 0;
            }
        }
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "randprot: cannot write the output: %s\n", strerror(errno));
        return 1;
    }
    fprintf(stderr, "randprot: %lld sequences, %lld residues, mean length %.1f\n", o.n, total,
            o.n ? (double)total / (double)o.n : 0.0);
    return 0;
}
