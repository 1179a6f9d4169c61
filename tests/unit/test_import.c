/* test_import.c: unit tests of `hmmc --import-hmmer`'s input side
 * (compiler/import/): the HMMER3/a to 3/f formats, small models written
 * here, import to one program; the header lines kept (the `// hmmer:`
 * block and -v) and read back from a program (hmmer_meta_read); errors at
 * FILE:LINE:COLUMN; hmmer_file_format. The files
 * made by hmmbuild are tested by tests/hmmer/run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "import/hmmer_header.h"
#include "import/import_hmmer.h"

/* ---- writing small HMMER3 files ---------------------------------------- */

typedef struct Text {
    char *s;
    size_t len;
    FILE *f;
} Text;

static void text_open(Text *t)
{
    t->s = NULL;
    t->len = 0;
    t->f = open_memstream(&t->s, &t->len);
    assert_non_null(t->f);
}

static char *text_close(Text *t)
{
    fclose(t->f);
    return t->s;
}

/* n values -ln(p): a different one for each x, so that a field read in the
 * wrong place changes the program. */
static void values(FILE *f, int n, double base)
{
    for (int x = 0; x < n; x++)
        fprintf(f, " %.5f", base + 0.01 * x);
    fputc('\n', f);
}

/* A two-node model in HMMER3/version (amino, or DNA when nucleic), with
 * the header lines given (each ending in a newline) before HMM. */
static char *h3_model(char version, int nucleic, const char *header)
{
    int K = nucleic ? 4 : 20;
    Text t;
    text_open(&t);
    fprintf(t.f, "HMMER3/%c [made by test_import.c]\nNAME  two\nLENG  2\nALPH  %s\n%s", version,
            nucleic ? "DNA" : "amino", header);
    fprintf(t.f, "HMM  %s\n  m->m m->i m->d i->m i->i d->m d->d\n",
            nucleic ? "A C G T" : "A C D E F G H I K L M N P Q R S T V W Y");
    fputs("  COMPO", t.f);
    values(t.f, K, 2.5);
    values(t.f, K, 3.0);
    fputs("  0.10 3.00 2.60 0.60 0.80 0.00 *\n", t.f);
    const char *ann = version == 'f' ? "- - - -" : version == 'e' ? "- - -" : "- -";
    for (int k = 1; k <= 2; k++) {
        fprintf(t.f, "  %d", k);
        for (int x = 0; x < K; x++)
            fprintf(t.f, " %.5f", (x == k ? 0.5 : 4.0) + 0.01 * x);
        fprintf(t.f, " %d %s\n", k, ann);
        values(t.f, K, 3.0);
        fputs(k == 1 ? "  0.05 3.50 4.00 0.60 0.80 0.30 1.40\n"
                     : "  0.02 3.90 * 0.60 0.80 0.00 *\n",
              t.f);
    }
    fputs("//\n", t.f);
    return text_close(&t);
}

static char *write_file(const char *text)
{
    char *path = strdup("/tmp/test_import.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

typedef struct Import {
    int status;
    char *program, *verbose, *errors;
} Import;

/* Imports text (written to a file), with what goes to stdout, -v and
 * stderr. */
static Import import_text(const char *text, char **path_out)
{
    char *path = write_file(text), errors_path[] = "/tmp/test_import_err.XXXXXX";
    int efd = mkstemp(errors_path);
    assert_true(efd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(efd, 2);
    Text out, verbose;
    text_open(&out);
    text_open(&verbose);
    Import r;
    r.status = import_hmmer(path, out.f, HMMER_MODE_DEFAULT, verbose.f);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    r.program = text_close(&out);
    r.verbose = text_close(&verbose);
    FILE *e = fdopen(efd, "r");
    rewind(e);
    size_t cap = 0;
    r.errors = NULL;
    ssize_t n = getdelim(&r.errors, &cap, 0, e);
    if (n < 0) {
        free(r.errors);
        r.errors = strdup("");
    }
    fclose(e);
    unlink(errors_path);
    if (path_out)
        *path_out = path;
    else {
        unlink(path);
        free(path);
    }
    return r;
}

static void import_free(Import *r)
{
    free(r->program);
    free(r->verbose);
    free(r->errors);
}

/* The lines of a program that are not comments. */
static char *code_of(const char *program)
{
    Text t;
    text_open(&t);
    for (const char *p = program; *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p + 1) : strlen(p);
        if (strncmp(p, "//", 2) != 0)
            fwrite(p, 1, n, t.f);
        p += n;
    }
    return text_close(&t);
}

/* The `// hmmer:` lines of a program, or -v's lines with their prefix
 * made the same. */
static char *block_of(const char *text, const char *prefix)
{
    Text t;
    text_open(&t);
    size_t n = strlen(prefix);
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p + 1) : strlen(p);
        if (strncmp(p, prefix, n) == 0) {
            fputs("// hmmer:", t.f);
            fwrite(p + n, 1, len - n, t.f);
        }
        p += len;
    }
    return text_close(&t);
}

/* ---- the tests ------------------------------------------------------------- */

static const char STATS[] = "STATS LOCAL MSV      -9.1000  0.71000\n"
                            "STATS LOCAL VITERBI  -9.8000  0.71000\n"
                            "STATS LOCAL FORWARD  -3.9000  0.71000\n";

/* Every version reads its own match-line layout into the same numbers. */
static void test_every_version_imports_the_same_program(void **state)
{
    char *want = NULL;
    for (char v = 'a'; v <= 'f'; v++) {
        char *text = h3_model(v, 0, v == 'a' ? "" : STATS);
        Import r = import_text(text, NULL);
        assert_int_equal(r.status, 0);
        assert_string_equal(r.errors, "");
        char format[40];
        snprintf(format, sizeof format, "// hmmer: FORMAT HMMER3/%c\n", v);
        assert_non_null(strstr(r.program, format));
        char *code = code_of(r.program);
        if (!want)
            want = code;
        else {
            assert_string_equal(code, want);
            free(code);
        }
        import_free(&r);
        free(text);
    }
    free(want);
}

/* A 3/c match line in a 3/f file is short of CONS and MM; a 3/f match line
 * in a 3/e file has a field more, which HMMER does not read either. */
static void test_annotation_fields_by_version(void **state)
{
    char *longer = h3_model('f', 0, STATS);
    longer[7] = 'e';
    Import ok = import_text(longer, NULL);
    assert_int_equal(ok.status, 0);
    import_free(&ok);
    free(longer);
    char *text = h3_model('d', 0, STATS);
    text[7] = 'f';
    char *path;
    Import r = import_text(text, &path);
    assert_int_equal(r.status, 1);
    char want[200];
    /* node 1's match line is line 13: 4 header lines, STATS, HMM, names,
     * COMPO, node 0's two lines */
    snprintf(want, sizeof want, "hmmc: error: %s:13:", path);
    assert_non_null(strstr(r.errors, want));
    assert_non_null(strstr(r.errors, "5 annotation fields (MAP CONS RF MM CS"));
    import_free(&r);
    unlink(path);
    free(path);
    free(text);
}

static void test_header_lines_are_kept(void **state)
{
    char *text = h3_model('c', 0,
                          "ACC   PF00042.22\nDESC  Globin  (two\tspaces and a tab)\nMAXL  300\n"
                          "NSEQ  45\nEFFN  3.250000\nCKSUM 4294967295\nGA    25.00 24.50;\n"
                          "TC    26.00 26.00;\nNC    -3.10 -4.00;\n"
                          "STATS LOCAL MSV      -9.1000  0.71000\n"
                          "STATS LOCAL VITERBI  -9.8000  0.72000\n"
                          "STATS LOCAL FORWARD  -3.9000  0.73000\n");
    Import r = import_text(text, NULL);
    assert_int_equal(r.status, 0);
    char *block = block_of(r.program, "// hmmer:");
    assert_string_equal(block, "// hmmer: FORMAT HMMER3/c\n"
                               "// hmmer: NAME two\n"
                               "// hmmer: ACC PF00042.22\n"
                               "// hmmer: DESC Globin  (two spaces and a tab)\n"
                               "// hmmer: LENG 2\n"
                               "// hmmer: MAXL 300\n"
                               "// hmmer: ALPH amino\n"
                               "// hmmer: NSEQ 45\n"
                               "// hmmer: EFFN 3.25\n"
                               "// hmmer: CKSUM 4294967295\n"
                               "// hmmer: GA 25 24.5\n"
                               "// hmmer: TC 26 26\n"
                               "// hmmer: NC -3.1 -4\n"
                               "// hmmer: STATS LOCAL MSV -9.1 0.71\n"
                               "// hmmer: STATS LOCAL VITERBI -9.8 0.72\n"
                               "// hmmer: STATS LOCAL FORWARD -3.9 0.73\n");
    char *shown = block_of(r.verbose, "hmmc: import:");
    assert_string_equal(shown, block);
    free(block);
    free(shown);
    import_free(&r);
    free(text);
}

/* 3/a's three STATS lines, read as HMMER reads them. */
static void test_3a_stats(void **state)
{
    char *text = h3_model('a', 0, "STATS LOCAL VLAMBDA 0.69000\nSTATS LOCAL VMU  -8.5000\n"
                                  "STATS LOCAL FTAU -4.2500\n");
    Import r = import_text(text, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.program, "// hmmer: STATS LOCAL MSV -8.5 0.69\n"
                                      "// hmmer: STATS LOCAL VITERBI -8.5 0.69\n"
                                      "// hmmer: STATS LOCAL FORWARD -4.25 0.69\n"));
    import_free(&r);
    free(text);
}

/* A DNA model's cutoff lines may give one value, which counts for both. */
static void test_nucleic_cutoffs(void **state)
{
    char *text = h3_model('f', 1, "GA    12.00;\nTC    13.50 14.00;\n");
    Import r = import_text(text, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.program, "// hmmer: ALPH DNA\n"));
    assert_non_null(strstr(r.program, "// hmmer: GA 12 12\n// hmmer: TC 13.5 14\n"));
    import_free(&r);
    free(text);
}

/* Malformed kept lines: the error names the line and the column of the bad
 * or missing value. The header line is line 5. */
static void expect_error(const char *header, char version, int column, const char *words)
{
    char *text = h3_model(version, 0, header);
    char *path;
    Import r = import_text(text, &path);
    assert_int_equal(r.status, 1);
    char want[300];
    snprintf(want, sizeof want, "hmmc: error: %s:5:%d: ", path, column);
    if (strncmp(r.errors, want, strlen(want)) != 0 || !strstr(r.errors, words))
        fail_msg("for '%s' expected '%s...%s', got '%s'", header, want, words, r.errors);
    int lines = 0;
    for (const char *p = r.errors; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 1); /* one error, nothing more */
    import_free(&r);
    unlink(path);
    free(path);
    free(text);
}

static void test_errors_at_columns(void **state)
{
    expect_error("GA abc 25.0\n", 'f', 4, "GA: 'abc' is not a number");
    expect_error("GA 25.0\n", 'f', 8, "GA needs a second threshold");
    expect_error("GA 25.0; 24.0\n", 'f', 4, "'25.0;' is not a number");
    expect_error("TC 1 2 3\n", 'f', 8, "this is a third");
    expect_error("STATS LOCAL MSV -9.1\n", 'b', 21, "needs two numbers, mu and lambda; found 1");
    expect_error("STATS LOCAL FORWARD -3.9 0\n", 'b', 26, "lambda must be above 0");
    expect_error("STATS LOCAL MSV -9.1 0.7 8\n", 'b', 26, "this is a third");
    expect_error("STATS GLOBAL MSV -9.1 0.7\n", 'b', 7, "expected LOCAL");
    expect_error("STATS LOCAL VMU nan\n", 'a', 17, "VMU: 'nan' is not a number");
    expect_error("STATS LOCAL MSV -9.1 0.7\n", 'a', 13, "not VLAMBDA, VMU or FTAU");
    expect_error("NSEQ 4.5\n", 'f', 6, "NSEQ: '4.5' is not a whole number");
    expect_error("EFFN\n", 'f', 5, "EFFN: the value is missing");
    expect_error("CKSUM 4294967296\n", 'f', 7, "not a whole number from 0 to 4294967295");
    expect_error("MAXL -3\n", 'e', 6, "MAXL: '-3'");
    expect_error("ACC a b\n", 'f', 7, "ACC takes one value");
    /* one STATS line of three: the error is at the HMM line, which follows */
    char *text = h3_model('f', 0, "STATS LOCAL MSV -9.1 0.7\n");
    char *path;
    Import r = import_text(text, &path);
    assert_int_equal(r.status, 1);
    char want[300];
    snprintf(want, sizeof want, "hmmc: error: %s:6:1: the header has a STATS LOCAL MSV line "
             "but no STATS LOCAL VITERBI or FORWARD", path);
    assert_non_null(strstr(r.errors, want));
    import_free(&r);
    unlink(path);
    free(path);
    free(text);
}

/* A later pass reads the block back from the program's text: the same
 * values, written again the same. */
static void test_block_read_back(void **state)
{
    char *text = h3_model('f', 0,
                          "ACC   PF00042.22\nDESC  Globin family\nMAXL  300\nNSEQ  45\n"
                          "EFFN  3.250000\nCKSUM 12345\nGA    25.00 24.50;\nNC    -3.10 -4.00;\n"
                          "STATS LOCAL MSV      -9.1000  0.71000\n"
                          "STATS LOCAL VITERBI  -9.8000  0.72000\n"
                          "STATS LOCAL FORWARD  -3.9000  0.73000\n");
    Import r = import_text(text, NULL);
    assert_int_equal(r.status, 0);
    HmmerMeta m = {0};
    assert_int_equal(hmmer_meta_read(r.program, strlen(r.program), &m), 15);
    assert_string_equal(m.format, "HMMER3/f");
    assert_string_equal(m.name, "two");
    assert_int_equal(m.leng, 2);
    assert_string_equal(m.desc, "Globin family");
    assert_true(m.has[META_GA] && !m.has[META_TC] && m.has[META_NC]);
    assert_true(m.cut[CUT_GA][0] == 25.0 && m.cut[CUT_GA][1] == 24.5);
    assert_true(m.stats[STATS_FORWARD][0] == -3.9 && m.stats[STATS_FORWARD][1] == 0.73);
    assert_true(m.has[META_CKSUM] && m.cksum == 12345 && m.maxl == 300 && m.effn == 3.25);
    Text again;
    text_open(&again);
    hmmer_meta_write(again.f, "// hmmer:", &m);
    char *written = text_close(&again), *block = block_of(r.program, "// hmmer:");
    assert_string_equal(written, block);
    free(written);
    free(block);
    hmmer_meta_free(&m);
    import_free(&r);
    free(text);

    /* HMMER2's EVD, a bare DESC, CR LF line ends; other comments and blank
     * lines pass; the block ends at the first line of code */
    const char *h2 = "// a program\r\n\r\n// hmmer: FORMAT HMMER2.0\r\n// hmmer: DESC\r\n"
                     "// hmmer: EVD -40.5 0.25\r\nhmm x {\n// hmmer: NSEQ 3\n";
    HmmerMeta m2 = {0};
    assert_int_equal(hmmer_meta_read(h2, strlen(h2), &m2), 3);
    assert_string_equal(m2.format, "HMMER2.0");
    assert_true(m2.has[META_DESC] && m2.desc[0] == 0);
    assert_true(m2.has[META_EVD] && m2.evd[0] == -40.5 && m2.evd[1] == 0.25);
    assert_false(m2.has[META_NSEQ]);
    hmmer_meta_free(&m2);

    /* a value that cannot be read: minus its line */
    const char *bad = "// hmmer: FORMAT HMMER3/f\n// hmmer: GA 25\n";
    HmmerMeta m3 = {0};
    assert_int_equal(hmmer_meta_read(bad, strlen(bad), &m3), -2);
    hmmer_meta_free(&m3);
    /* no block: not an import */
    HmmerMeta m4 = {0};
    assert_int_equal(hmmer_meta_read("hmm x { }\n", 10, &m4), 0);
    hmmer_meta_free(&m4);
}

static void test_hmmer_file_format(void **state)
{
    static const char *const yes[][2] = {
        {"HMMER2.0  [2.3.2]\n", "HMMER2.0"}, {"HMMER3/a [3.0a2]\n", "HMMER3/a"},
        {"HMMER3/b\n", "HMMER3/b"},          {"HMMER3/e\r\n", "HMMER3/e"},
        {"HMMER3/f", "HMMER3/f"},            {"HMMER3/c\tx", "HMMER3/c"}};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        const char *got = hmmer_file_format(yes[i][0], strlen(yes[i][0]));
        assert_non_null(got);
        assert_string_equal(got, yes[i][1]);
    }
    static const char *const no[] = {"", "HMMER", "HMMER3/g\n", "HMMER3/fx\n", " HMMER3/f\n",
                                     "hmm HMMER3 { }", "// HMMER3/f\n", "HMMER2.00\n"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_null(hmmer_file_format(no[i], strlen(no[i])));
    /* the length counts, not a NUL */
    assert_null(hmmer_file_format("HMMER3/f", 7));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_version_imports_the_same_program),
        cmocka_unit_test(test_annotation_fields_by_version),
        cmocka_unit_test(test_header_lines_are_kept),
        cmocka_unit_test(test_3a_stats),
        cmocka_unit_test(test_nucleic_cutoffs),
        cmocka_unit_test(test_errors_at_columns),
        cmocka_unit_test(test_block_read_back),
        cmocka_unit_test(test_hmmer_file_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
