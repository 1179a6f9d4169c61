/* import_hmmer.c: `hmmc --import-hmmer FILE` (see import_hmmer.h): reads
 * a HMMER2.0 or HMMER3/a to 3/f file and writes a .hmm program: HMMER3's
 * search configuration (hmmer3_local.c, hmmer3_write.c), or the scores
 * hmm2search computes, as weights 2^(score/1000) (the three steps below);
 * and the test that tells a HMMER file from a model (hmmer_file_format). */

/* Three steps, each in its own file, which import_hmmer() below runs:
 *   1. hmmer_read.c: read the file into an H2 model: the integer scores
 *      (bits * 1000) of a HMMER2.0 save file, or a HMMER3/a to 3/f file
 *      converted to those scores the way `hmmconvert -2` converts it, and
 *      the header lines kept for later passes (hmmer_meta.c; hmmer_lines.c
 *      reads the lines and reports errors at their line and column);
 *   2. hmmer_scores.c: compute from them, in single precision, the scores
 *      that hmm2search computes: back to probabilities, every distribution renormalized,
 *      moves into emitting states measured against the null model's loop p1
 *      and C->T against 1-p1, the delete wings B->D1->..->Mk and
 *      Mk->..->Dm->E folded into B->Mk and Mk->E by adding integer scores
 *      (the better path for Viterbi, the sum for Forward), degenerate
 *      residues (B, Z, X, N, R, ...) scored by the null-weighted mean of the
 *      residues they stand for, truncated toward zero;
 *   3. hmmer_write.c: write a .hmm program whose weights are
 *      2^(score/1000), so that ln of a path's product is the path's HMMER
 *      score in nats.
 * What each number means is written in README.md, "Profile HMMs from
 * HMMER", and in the header comment of each program written. */
#include "import/import_hmmer.h"
#include "import/hmmer3_local.h"
#include "import/hmmer_profile.h"

#include <stdio.h>
#include <string.h>

static void warn_more(const char *path, const H2 *h)
{
    if (h->more)
        fprintf(stderr, "hmmc: warning: %s holds %d more model%s; only the first, '%s', "
                "is imported (hmm2fetch or hmmfetch takes one out)\n",
                path, h->more, h->more > 1 ? "s" : "", h->name ? h->name : "");
}

/* HMMER3's search configuration. */
static int import_local(const char *path, FILE *out, const H2 *h, int unihit)
{
    Local3 l;
    int status = 1;
    if (local3_build(h, &l) == 0) {
        l.unihit = unihit;
        status = local3_write(out, path, h, &l) == 0 ? 0 : 1;
    }
    local3_free(&l);
    return status;
}

int import_hmmer(const char *path, FILE *out, HmmerMode mode, FILE *verbose)
{
    H2 h = {0};
    Search s = {0};
    int status = 1;
    if (hmmer_read(path, &h) == 0) {
        int hmmer3 = h.h3_mat != NULL;
        int local = mode == HMMER_MODE_LOCAL || mode == HMMER_MODE_UNILOCAL;
        if (local && !hmmer3) {
            fprintf(stderr, "hmmc: error: %s: --hmmer-mode=%s is HMMER3's configuration; a "
                    "%s file is imported as hmm2search scores it (leave the option out)\n",
                    path, mode == HMMER_MODE_LOCAL ? "local" : "unilocal", h.format);
        } else if (local || (mode == HMMER_MODE_DEFAULT && hmmer3)) {
            warn_more(path, &h);
            if (verbose)
                hmmer_meta_write(verbose, "hmmc: import:", &h.meta);
            status = import_local(path, out, &h, mode == HMMER_MODE_UNILOCAL);
        } else if (search_scores(&h, &s) == 0) {
            warn_more(path, &h);
            if (verbose)
                hmmer_meta_write(verbose, "hmmc: import:", &h.meta);
            status = write_program(out, path, &h, &s) == 0 ? 0 : 1;
        }
    }
    search_free(&s);
    h2_free(&h);
    return status;
}

const char *hmmer_file_format(const char *text, size_t len)
{
    static const char *const formats[] = {"HMMER2.0", "HMMER3/a", "HMMER3/b", "HMMER3/c",
                                           "HMMER3/d", "HMMER3/e", "HMMER3/f"};
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        size_t n = strlen(formats[i]);
        if (len >= n && memcmp(text, formats[i], n) == 0 &&
            (len == n || text[n] == ' ' || text[n] == '\t' || text[n] == '\r' ||
             text[n] == '\n'))
            return formats[i];
    }
    return NULL;
}
