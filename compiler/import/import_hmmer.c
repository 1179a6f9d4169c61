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

#include "support/arena.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* HMMER3's search configuration. */
static int import_local(const char *path, FILE *out, const H2 *h, HmmerMode mode)
{
    Local3 l;
    int status = 1;
    if (local3_build(h, &l, mode == HMMER_MODE_UNIGLOCAL) == 0) {
        l.unihit = mode == HMMER_MODE_UNILOCAL || mode == HMMER_MODE_UNIGLOCAL;
        status = local3_write(out, path, h, &l) == 0 ? 0 : 1;
    }
    local3_free(&l);
    return status;
}

/* Whether the model is imported in HMMER3's configuration; -1 after an
 * error (local asked of a HMMER2 model). */
static int is_local(const char *path, const H2 *h, HmmerMode mode, int index)
{
    int hmmer3 = h->h3_mat != NULL;
    int local = mode == HMMER_MODE_LOCAL || mode == HMMER_MODE_UNILOCAL ||
                mode == HMMER_MODE_UNIGLOCAL;
    if (local && !hmmer3) {
        fprintf(stderr, "hmmc: error: %s: ", path);
        if (index > 1)
            fprintf(stderr, "model %d ('%s'): ", index, h->name ? h->name : "");
        fprintf(stderr, "--hmmer-mode=%s is HMMER3's configuration; a %s file is imported "
                "as hmm2search scores it (leave the option out)\n",
                mode == HMMER_MODE_LOCAL      ? "local"
                : mode == HMMER_MODE_UNILOCAL ? "unilocal"
                                              : "uniglocal",
                h->format);
        return -1;
    }
    return local || (mode == HMMER_MODE_DEFAULT && hmmer3);
}

/* A file of one model: its program, as always. */
static int import_one(const char *path, FILE *out, HmmerMode mode, FILE *verbose, const H2 *h)
{
    int local = is_local(path, h, mode, 1);
    if (local < 0)
        return 1;
    if (verbose)
        hmmer_meta_write(verbose, "hmmc: import:", &h->meta);
    if (local)
        return import_local(path, out, h, mode);
    Search s = {0};
    int status = search_scores(h, &s) == 0 && write_program(out, path, h, &s) == 0 ? 0 : 1;
    search_free(&s);
    return status;
}

/* ---- a file of many models (docs/hmmer.md, "Files of many models") ---- */

typedef struct Imported {
    char **id, **forward_id; /* per model: its hmm block, and the block forward takes */
    int n, cap;
} Imported;

static int id_taken(const Imported *im, const char *id)
{
    for (int i = 0; i < im->n; i++)
        if (strcmp(im->id[i], id) == 0 ||
            (im->forward_id[i] && strcmp(im->forward_id[i], id) == 0))
            return 1;
    return 0;
}

/* The model's name as an identifier no model before it has: NAME, else
 * NAME_2, NAME_3 ... (a file may hold one name twice). */
static char *unique_id(const Imported *im, const char *name)
{
    char *base = hmmer_identifier(name), *id = xstrdup(base);
    for (int k = 2; id_taken(im, id); k++) {
        free(id);
        id = xasprintf("%s_%d", base, k);
    }
    free(base);
    return id;
}

/* One model of the file: its blocks to out, its names into im. */
static int import_part(const char *path, FILE *out, HmmerMode mode, FILE *verbose, const H2 *h,
                       Imported *im)
{
    int local = is_local(path, h, mode, im->n + 1);
    if (local < 0)
        return -1;
    if (verbose)
        hmmer_meta_write(verbose, "hmmc: import:", &h->meta);
    char *id = unique_id(im, h->name), *fid = NULL;
    fprintf(out, "\n// model %d: '%s', %d nodes, %s, %s\n", im->n + 1, h->name ? h->name : "",
            h->M, h->nucleic ? "nucleic" : "amino",
            local ? "HMMER3's search configuration" : "as hmm2search scores it");
    int status = 0;
    if (local) {
        Local3 l;
        status = local3_build(h, &l, mode == HMMER_MODE_UNIGLOCAL);
        l.unihit = mode == HMMER_MODE_UNILOCAL || mode == HMMER_MODE_UNIGLOCAL;
        if (status == 0)
            local3_write_model(out, h, &l, id);
        local3_free(&l);
    } else {
        Search s = {0};
        status = search_scores(h, &s);
        if (status == 0)
            fid = write_model_blocks(out, h, &s, id);
        search_free(&s);
    }
    if (im->n == im->cap) {
        im->cap = im->cap ? 2 * im->cap : 64;
        im->id = xrealloc(im->id, im->cap * sizeof *im->id);
        im->forward_id = xrealloc(im->forward_id, im->cap * sizeof *im->forward_id);
    }
    im->id[im->n] = id;
    im->forward_id[im->n++] = fid;
    return status;
}

static void put_many_header(FILE *out, const char *path)
{
    fprintf(out,
            "// The profile HMMs of %s, imported by\n"
            "// `hmmc --import-hmmer %s`: one hmm block a model, in the file's\n"
            "// order, each after its `// hmmer:` header lines; a HMMER3 model in HMMER3's\n"
            "// search configuration (hmmsearch --max --nonull2's scores), a HMMER2 one as\n"
            "// hmm2search --null2 scores it (each model's states and weights are those of\n"
            "// the import of a file of that model alone: docs/hmmer.md). main prints, per\n"
            "// sequence and model, the forward score and the viterbi score in nats (divide\n"
            "// by ln 2 for bits); the line below asks for one row per (sequence, model)\n"
            "// pair (docs/language.md, \"Rows per model\").\n"
            "// hmmc: rows per model\n",
            path, path);
}

static void put_many_main(FILE *out, const Imported *im)
{
    fputs("\nmain {\n", out);
    for (int i = 0; i < im->n; i++) {
        fprintf(out, "    p%d = new %s();\n", i + 1, im->id[i]);
        if (im->forward_id[i])
            fprintf(out, "    print forward(new %s()).score;\n", im->forward_id[i]);
        else
            fprintf(out, "    print forward(p%d).score;\n", i + 1);
        fprintf(out, "    print viterbi(p%d).score;\n", i + 1);
    }
    fputs("}\n", out);
}

static void imported_free(Imported *im)
{
    for (int i = 0; i < im->n; i++) {
        free(im->id[i]);
        free(im->forward_id[i]);
    }
    free(im->id);
    free(im->forward_id);
}

/* Copies the program, written whole to tmp, to out. */
static int copy_out(FILE *tmp, FILE *out)
{
    char buf[65536];
    size_t n;
    rewind(tmp);
    while ((n = fread(buf, 1, sizeof buf, tmp)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            break;
    fflush(out);
    if (ferror(tmp) || ferror(out)) {
        fprintf(stderr, "hmmc: error: cannot write the program: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

/* A file of two models or more (first and second read): the program goes to a temporary file
 * first, so that a damaged model leaves no half-written program. */
static int import_many(const char *path, FILE *out, HmmerMode mode, FILE *verbose, HmmerFile *f,
                       H2 *first, H2 *second)
{
    FILE *tmp = tmpfile();
    if (!tmp) {
        fprintf(stderr, "hmmc: error: cannot make a temporary file: %s\n", strerror(errno));
        return 1;
    }
    Imported im = {0};
    put_many_header(tmp, path);
    int status = import_part(path, tmp, mode, verbose, first, &im) == 0 &&
                 import_part(path, tmp, mode, verbose, second, &im) == 0 ? 0 : 1;
    for (int got = 1; status == 0;) {
        H2 h = {0};
        got = hmmer_next(f, &h);
        if (got > 0 && import_part(path, tmp, mode, verbose, &h, &im) < 0)
            got = -1;
        h2_free(&h);
        if (got <= 0) {
            status = got < 0;
            break;
        }
    }
    if (status == 0) {
        put_many_main(tmp, &im);
        status = copy_out(tmp, out);
        if (verbose)
            fprintf(verbose, "hmmc: import: %d models\n", im.n);
    }
    imported_free(&im);
    fclose(tmp);
    return status;
}

int import_hmmer(const char *path, FILE *out, HmmerMode mode, FILE *verbose)
{
    H2 first = {0}, second = {0};
    int status = 1;
    HmmerFile *f = hmmer_open(path);
    if (f && hmmer_next(f, &first) > 0) {
        int got = hmmer_next(f, &second);
        if (got == 0)
            status = import_one(path, out, mode, verbose, &first);
        else if (got > 0)
            status = import_many(path, out, mode, verbose, f, &first, &second);
    }
    hmmer_close(f);
    h2_free(&second);
    h2_free(&first);
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
