/* test_real.c: unit tests of continuous observations: the grammar of
 * `alphabet real[D];`, gaussian(...) and mixture(...) (tree, places, syntax
 * errors), sema's IR of them (Cholesky factors and normalising constants
 * worked out by hand, mixture weights, tying) and its error counts, the
 * runtime's densities (runtime/gaussian.c) and the text reader
 * (runtime/real_read.c) with its messages. Exact message texts of sema are
 * pinned by tests/golden/sema/real_*.hmm. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixtures.h"

#include "sema/sema.h"
#include "syntax/parse.h"
#include "hmmrt.h"
#include "real_read.h"

typedef TestSource Checked;

/* Parses src (and, with run_sema, checks it), messages kept in memory. */
static void check(Checked *c, const char *src, int run_sema)
{
    test_source_compile(c, src, strlen(src), run_sema);
}

static void checked_free(Checked *c)
{
    test_source_free(c);
}

static const char *messages(const Checked *c)
{
    return c->messages ? c->messages : "";
}

#define WEATHER                                                      \
    "hmm w {\n"                                                      \
    "    alphabet real[2];\n"                                        \
    "    startstate s;\n"                                            \
    "    state calm emits c;\n"                                      \
    "    state storm emits g;\n"                                     \
    "    state still emits c;\n"                                     \
    "    endstate e;\n"                                              \
    "    emission c = gaussian([0, -1], [4, 0.25]);\n"               \
    "    emission g1 = gaussian([3, 1], [[4, 2], [2, 5]]);\n"        \
    "    emission g2 = gaussian([-3, 1], [1, 4]);\n"                 \
    "    emission g = mixture(0.25 g1, 0.75 g2);\n"                  \
    "    s -> calm 1;\n"                                             \
    "    calm -> storm 0.5;\n"                                       \
    "    calm -> still 0.5;\n"                                       \
    "    storm -> e 1;\n"                                            \
    "    still -> e 1;\n"                                            \
    "}\n"                                                            \
    "main { print forward(new w()).score; }\n"

/* The tree: the alphabet's dimension, each argument's kind and place. */
static void test_tree_of_densities(void **state)
{
    (void)state;
    Checked c;
    check(&c, WEATHER, 0);
    assert_string_equal(messages(&c), "");
    const Decl *d = c.file->models->decls;
    assert_int_equal(d->kind, DECL_ALPHABET);
    assert_true(d->is_real);
    assert_string_equal(d->kind_word.name, "real");
    assert_string_equal(d->real_dim.text, "2");
    while (d && !(d->kind == DECL_EMISSION && strcmp(d->name.name, "g1") == 0))
        d = d->next;
    assert_non_null(d);
    assert_string_equal(d->kind_word.name, "gaussian");
    const DensityArg *mean = d->args, *cov = mean->next;
    assert_int_equal(mean->kind, DARG_VECTOR);
    assert_int_equal(mean->rows->n, 2);
    assert_int_equal(cov->kind, DARG_MATRIX);
    assert_int_equal(cov->n_rows, 2);
    assert_int_equal(cov->loc.first_line, 9);
    assert_int_equal(cov->loc.first_column, 36);
    assert_int_equal(cov->rows->next->values->num.value, 2);
    assert_null(cov->next);
    const Decl *mix = d->next->next;
    assert_string_equal(mix->kind_word.name, "mixture");
    assert_int_equal(mix->args->kind, DARG_WEIGHTED);
    assert_string_equal(mix->args->weight.num.text, "0.25");
    assert_string_equal(mix->args->name.name, "g1");
    checked_free(&c);
}

/* Syntax errors inside a density are reported at their place, with what was expected. */
static void test_density_syntax_errors(void **state)
{
    (void)state;
    Checked c;
    check(&c, "hmm m { alphabet real[2]; emission g = gaussian([0, 0] [1, 1]); }\n", 0);
    assert_int_equal(c.diag.errors, 1);
    assert_non_null(strstr(messages(&c), "t.hmm:1:56: error: syntax error: unexpected '['"));
    checked_free(&c);
    check(&c, "hmm m { alphabet real[2 ; }\n", 0);
    assert_int_equal(c.diag.errors, 1);
    assert_non_null(strstr(messages(&c), "t.hmm:1:25: error: syntax error: unexpected ';', "
                                         "expecting ']'"));
    checked_free(&c);
    check(&c, "hmm m { alphabet real[2]; emission g = mixture(0.5); }\n", 0);
    assert_int_equal(c.diag.errors, 1);
    assert_non_null(strstr(messages(&c), "unexpected ')', expecting identifier"));
    checked_free(&c);
}

/* Sema's IR: standard deviations, the Cholesky factor of [[4, 2], [2, 5]]
 * (L = [[2, 0], [1, 2]]), the normalising constants and the mixture. */
static void test_ir_of_densities(void **state)
{
    (void)state;
    Checked c;
    check(&c, WEATHER, 1);
    assert_string_equal(messages(&c), "");
    assert_non_null(c.program);
    const IrModel *m = &c.program->models[0];
    assert_int_equal(m->real_dim, 2);
    assert_int_equal(m->K, 0);
    const IrEmission *e = m->emissions;
    assert_int_equal(e[0].kind, EMISSION_GAUSSIAN);
    assert_true(e[0].diagonal);
    assert_true(e[0].factor[0] == 2 && e[0].factor[1] == 0.5);
    /* -ln(2 pi) - ln 2 - ln 0.5 = -ln(2 pi) = -1.837877066409345 */
    assert_float_equal(e[0].log_norm, -1.837877066409345, 1e-15);
    assert_false(e[1].diagonal);
    assert_true(e[1].factor[0] == 2 && e[1].factor[1] == 0 && e[1].factor[2] == 1 &&
                e[1].factor[3] == 2);
    /* -ln(2 pi) - ln 2 - ln 2 = -1.837877066409345 - 1.386294361119891 */
    assert_float_equal(e[1].log_norm, -3.224171427529236, 1e-15);
    assert_int_equal(e[3].kind, EMISSION_MIXTURE);
    assert_int_equal(e[3].n_parts, 2);
    assert_int_equal(e[3].parts[0], 1);
    assert_int_equal(e[3].parts[1], 2);
    assert_float_equal(e[3].log_weights[0], -1.386294361119891, 1e-15); /* ln 0.25 */
    assert_float_equal(e[3].log_weights[1], -0.2876820724517809, 1e-15); /* ln 0.75 */
    /* one gaussian written once, used by two states: one parameter set */
    assert_int_equal(m->states[1].emission, 0);
    assert_int_equal(m->states[3].emission, 0);
    checked_free(&c);
}

/* Each error of the contract is one error (the golden tests pin the texts). */
static void expect_sema_errors(const char *emission, int errors, const char *phrase)
{
    char src[1024];
    snprintf(src, sizeof src, "hmm m { alphabet real[2]; startstate s; state a emits x; "
             "endstate e; emission g = gaussian([0, 0], [1, 1]); %s s -> a 1; a -> e 1; }\n"
             "main { print forward(new m()).score; }\n", emission);
    Checked c;
    check(&c, src, 1);
    assert_null(c.program);
    assert_int_equal(c.diag.errors, errors);
    if (!strstr(messages(&c), phrase))
        fail_msg("no '%s' in:\n%s", phrase, messages(&c));
    checked_free(&c);
}

static void test_density_errors(void **state)
{
    (void)state;
    expect_sema_errors("emission x = gaussian([0], [1, 1]);", 1, "1 mean value but");
    expect_sema_errors("emission x = gaussian([0, 0], [1, 0]);", 1, "variance '0'");
    expect_sema_errors("emission x = gaussian([0, 0], [1, -1e-300]);", 1, "not above 0");
    expect_sema_errors("emission x = gaussian([0, 0], [[1, 0.5], [0.5000001, 1]]);", 1,
                       "not symmetric");
    expect_sema_errors("emission x = gaussian([0, 0], [[1, 2], [2, 1]]);", 1,
                       "not positive definite (its leading 2 x 2 block");
    expect_sema_errors("emission x = gaussian([0, 0], [[1, 0], [0, 1], [0, 0]]);", 1,
                       "3 rows");
    expect_sema_errors("emission x = mixture(0.5 g, 0.5 y); emission y = [0.5, 0.5];", 2,
                       "'y' is a table of values");
    expect_sema_errors("emission x = mixture(0.5 g, 0.5 y); emission y = mixture(1 g);", 1,
                       "'y' is a mixture");
    expect_sema_errors("emission x = mixture(-1 g);", 1, "must be >= 0");
    expect_sema_errors("emission x = mixture(1e999 g);", 1, "too large");
}

/* The runtime's densities against values worked out by hand. */
static void test_gaussian_log_densities(void **state)
{
    (void)state;
    static const double mean[] = {3, 1}, l[] = {2, 0, 1, 2}, sd[] = {2, 0.5}, zero[] = {0, -1};
    const hmmrt_gaussian full = {.diagonal = 0, .mean = mean, .factor = l,
                                 .log_norm = -3.224171427529236};
    const hmmrt_gaussian diag = {.diagonal = 1, .mean = zero, .factor = sd,
                                 .log_norm = -1.837877066409345};
    /* x - mean = (2, 4): L z = (2, 4) gives z = (1, 1.5), |z|^2 = 3.25 */
    const double x[] = {5, 5};
    assert_float_equal(hmmrt_gaussian_log(&full, 2, x), -3.224171427529236 - 1.625, 1e-15);
    /* (5/2)^2 + (6/0.5)^2 = 6.25 + 144 */
    assert_float_equal(hmmrt_gaussian_log(&diag, 2, x), -1.837877066409345 - 75.125, 1e-13);
    const hmmrt_gaussian *parts[] = {&full, &diag};
    const double log_w[] = {log(0.25), log(0.75)};
    const hmmrt_density d[] = {{1, parts, NULL}, {2, parts, log_w}};
    const hmmrt_densities s = {.D = 2, .n = 2, .d = d};
    double row[2];
    hmmrt_density_logs(&s, x, row);
    double a = log(0.25) - 4.849171427529236, b = log(0.75) - 76.962877066409345;
    assert_float_equal(row[1], a + log1p(exp(b - a)), 1e-13);
    /* probabilities times 2^-k: k is the nearest whole number of ln 2 to the largest */
    int64_t k = hmmrt_density_probs(&s, x, row);
    assert_int_equal(k, lround(-4.849171427529236 / log(2)));
    assert_float_equal(log(row[0]) + (double)k * log(2), -4.849171427529236, 1e-13);
}

/* Writes text to a temporary file and reads it with D = 2. */
static int read_text(const char *text, hmmrt_real_file *f, char *err, size_t errlen)
{
    char path[] = "/tmp/test_real_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    int status = hmmrt_real_read(path, 2, f, err, errlen);
    unlink(path);
    /* messages start with the file's name: take it off for the comparisons */
    size_t n = strlen(path);
    if (status != 0 && strncmp(err, path, n) == 0)
        memmove(err, err + n, strlen(err + n) + 1);
    return status;
}

static void test_text_reader(void **state)
{
    (void)state;
    hmmrt_real_file f;
    char err[512];
    assert_int_equal(read_text(">a first\n1 2\n3,4\r\n\n 5 ,\t-6e-1 \n>b\n>c\n7 8", &f, err,
                               sizeof err), 0);
    assert_int_equal(f.n, 3);
    assert_string_equal(f.seqs[0].name, "a");
    assert_int_equal(f.seqs[0].length, 3);
    assert_true(f.seqs[0].obs[2] == 3 && f.seqs[0].obs[3] == 4 && f.seqs[0].obs[5] == -0.6);
    assert_int_equal(f.seqs[1].length, 0);
    assert_int_equal(f.seqs[2].length, 1);
    assert_int_equal(f.seqs[2].line, 7);
    hmmrt_real_free(&f);
    struct {
        const char *text, *message;
        int64_t whole;
    } bad[] = {
        {">a\n1 2\n>b\n1 2 3\n", ":4: sequence b, observation 1: 3 numbers, but the program's "
                                 "observations are vectors of 2 reals", 1},
        {">a\n1 2\n1\n", ":3: sequence a, observation 2: 1 number, but", 0},
        {">a\n1 x2\n", ":2: sequence a, observation 1: 'x2' is not a number", 0},
        {">a\n1 nan\n", ":2: sequence a, observation 1: 'nan' is not a finite number", 0},
        {">a\n1e999 1\n", ":2: sequence a, observation 1: '1e999' is not a finite number", 0},
        {">a\n1,,2\n", ":2: sequence a, observation 1: a value is missing", 0},
        {">a\n1, 2,\n", ":2: sequence a, observation 1: a value is missing", 0},
        {">a\n,1 2\n", ":2: sequence a, observation 1: a value is missing before", 0},
        {"1 2\n>a\n", ":1: an observation before the first '>NAME' line", 0},
        {">\n1 2\n", ":1: a '>' line without a name", 0},
        {">#a\n1 2\n", ":1: sequence names may not start with '#'", 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(read_text(bad[i].text, &f, err, sizeof err), -1);
        if (strncmp(err, bad[i].message, strlen(bad[i].message)) != 0)
            fail_msg("case %zu: '%s', expected it to start '%s'", i, err, bad[i].message);
        assert_int_equal(f.n, bad[i].whole);
        hmmrt_real_free(&f);
    }
}

/* A .npy file of version 1.0: 10 bytes, the header padded with spaces to
 * 118 bytes ending in a newline (the data at 128, aligned), then the data. */
static size_t npy_bytes(unsigned char *out, const char *descr, const char *shape, int fortran,
                        const void *data, size_t data_len)
{
    enum { HEADER = 118 };
    char header[HEADER + 1];
    int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }",
                     descr, fortran ? "True" : "False", shape);
    assert_true(n > 0 && n < HEADER);
    memset(header + n, ' ', (size_t)(HEADER - n));
    header[HEADER - 1] = '\n';
    memcpy(out, "\x93NUMPY\1\0", 8);
    out[8] = HEADER;
    out[9] = 0;
    memcpy(out + 10, header, HEADER);
    memcpy(out + 10 + HEADER, data, data_len);
    return 10 + HEADER + data_len;
}

static void test_npy_reader(void **state)
{
    (void)state;
    unsigned char file[512];
    const double values[] = {1, 2, 3, 4, 5, 6};
    const float floats[] = {1.5f, -2, 0.25f, 8};
    hmmrt_real_file f = {0};
    char err[256];
    size_t n = npy_bytes(file, "<f8", "(3, 2)", 0, values, sizeof values);
    assert_int_equal(hmmrt_npy_read("a.npy", "a", file, n, 2, &f, err, sizeof err), 0);
    assert_int_equal(f.n, 1);
    assert_int_equal(f.seqs[0].length, 3);
    assert_true(f.seqs[0].obs[2] == 3 && f.seqs[0].obs[5] == 6);
    n = npy_bytes(file, "<f8", "(3, 2)", 1, values, sizeof values); /* columns first */
    assert_int_equal(hmmrt_npy_read("b.npy", "b", file, n, 2, &f, err, sizeof err), 0);
    assert_true(f.seqs[1].obs[1] == 4 && f.seqs[1].obs[2] == 2);
    n = npy_bytes(file, "<f4", "(2, 2)", 0, floats, sizeof floats);
    assert_int_equal(hmmrt_npy_read("c.npy", "c", file, n, 2, &f, err, sizeof err), 0);
    assert_true(f.seqs[2].obs[0] == 1.5 && f.seqs[2].obs[3] == 8);
    struct {
        const char *descr, *shape;
        size_t data_len;
        const char *message;
    } bad[] = {
        {"<i8", "(3, 2)", sizeof values, "x.npy: sequence x: dtype '<i8' is neither"},
        {"<f8", "(2, 3)", sizeof values, "x.npy: sequence x: observations of 3 values"},
        {"<f8", "(6,)", sizeof values, "x.npy: sequence x: the array has 1 dimension"},
        {"<f8", "(3, 2)", 40, "x.npy: sequence x: the array's shape needs 3 x 16 bytes"},
        {"<f8", "(1152921504606846977, 2)", 48, "x.npy: sequence x: the array's shape needs "
                                                "1152921504606846977 x 16 bytes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = npy_bytes(file, bad[i].descr, bad[i].shape, 0, values, bad[i].data_len);
        assert_int_equal(hmmrt_npy_read("x.npy", "x", file, n, 2, &f, err, sizeof err), -1);
        if (strncmp(err, bad[i].message, strlen(bad[i].message)) != 0)
            fail_msg("case %zu: '%s'", i, err);
    }
    const double with_nan[] = {1, 2, 3, NAN};
    n = npy_bytes(file, "<f8", "(2, 2)", 0, with_nan, sizeof with_nan);
    assert_int_equal(hmmrt_npy_read("x.npy", "x", file, n, 2, &f, err, sizeof err), -1);
    assert_string_equal(err, "x.npy: sequence x, observation 2: value 2 is not a finite number "
                             "(nan)");
    /* names that would break the rows: empty, a comment, control characters */
    n = npy_bytes(file, "<f8", "(3, 2)", 0, values, sizeof values);
    const char *names[] = {"", "#x", "a\tb"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(hmmrt_npy_read("x.npz", names[i], file, n, 2, &f, err, sizeof err), -1);
        assert_non_null(strstr(err, "cannot name a sequence"));
    }
    assert_int_equal(f.n, 3); /* the sequences in error are not added */
    hmmrt_real_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_of_densities),
        cmocka_unit_test(test_density_syntax_errors),
        cmocka_unit_test(test_ir_of_densities),
        cmocka_unit_test(test_density_errors),
        cmocka_unit_test(test_gaussian_log_densities),
        cmocka_unit_test(test_text_reader),
        cmocka_unit_test(test_npy_reader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
