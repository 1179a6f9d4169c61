/* test_sample.c: unit tests of hmmrt_sample, the sampler behind --sample:
 * determinism for a seed, exact lengths, runs to the end state, paths,
 * proportions of weights that do not sum to 1, and the errors of models that
 * cannot produce what is asked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "hmmrt.h"

/* ---- models ---------------------------------------------------------------- */

static const char *const alphabets[] = {"12", "xyz"};

/* casino-like: start -> fair; fair and loaded emit; end after a while */
static const char *const two_states[] = {"start", "fair", "loaded", "end"};
static const hmmrt_model_move two_moves[] = {
    {0, 1, 0, 1.0},  {1, 1, 0, 0.9}, {1, 2, 1, 0.05},
    {2, 2, 1, 0.9},  {2, 1, 0, 0.05}, {1, 3, -1, 0.05}, {2, 3, -1, 0.05}};
static const double two_emissions[] = {1, 1, 1, 9};

/* start -> s (silent) -> a (emits, weights 2 : 6, not summing to 1) -> end */
static const char *const silent_states[] = {"start", "s", "a", "end"};
static const hmmrt_model_move silent_moves[] = {
    {0, 1, -1, 3.0}, {1, 2, 0, 1.0}, {2, 2, 0, 4.0}, {2, 3, -1, 1.0}};
static const double silent_emissions[] = {2, 6};

/* start -> a -> end: exactly one symbol is all it can do */
static const char *const one_states[] = {"start", "a", "end"};
static const hmmrt_model_move one_moves[] = {{0, 1, 0, 1.0}, {1, 2, -1, 1.0}};
static const double one_emissions[] = {0, 1, 0};

/* start -> a, a -> a forever: the end is never reached */
static const hmmrt_model_move endless_moves[] = {{0, 1, 0, 1.0}, {1, 1, 0, 1.0}};

/* start -> s, s -> s and s -> end, all silent */
static const char *const loop_states[] = {"start", "s", "end"};
static const hmmrt_model_move loop_moves[] = {{0, 1, -1, 1.0}, {1, 1, -1, 0.5}, {1, 2, -1, 0.5}};

/* start -> end */
static const hmmrt_model_move empty_moves[] = {{0, 2, -1, 1.0}};

static const hmmrt_model models[] = {
    {.name = "casino", .alphabet = 0, .n_states = 4, .state_names = two_states, .start = 0, .end = 3,
     .n_moves = 7, .moves = two_moves, .n_emissions = 2, .emissions = two_emissions},
    {.name = "silent", .alphabet = 0, .n_states = 4, .state_names = silent_states, .start = 0, .end = 3,
     .n_moves = 4, .moves = silent_moves, .n_emissions = 1, .emissions = silent_emissions},
    {.name = "one", .alphabet = 1, .n_states = 3, .state_names = one_states, .start = 0, .end = 2,
     .n_moves = 2, .moves = one_moves, .n_emissions = 1, .emissions = one_emissions},
    {.name = "endless", .alphabet = 1, .n_states = 3, .state_names = one_states, .start = 0, .end = 2,
     .n_moves = 2, .moves = endless_moves, .n_emissions = 1, .emissions = one_emissions},
    {.name = "loop", .alphabet = 1, .n_states = 3, .state_names = loop_states, .start = 0, .end = 2,
     .n_moves = 3, .moves = loop_moves, .n_emissions = 0, .emissions = NULL},
    {.name = "empty", .alphabet = 1, .n_states = 3, .state_names = loop_states, .start = 0, .end = 2,
     .n_moves = 1, .moves = empty_moves, .n_emissions = 0, .emissions = NULL},
};
enum { CASINO, SILENT, ONE, ENDLESS, LOOP, EMPTY };

static const hmmrt_program program = {
    .name = "sampler", .source = "s.hmm", .target = "c", .n_alphabets = 2,
    .alphabets = alphabets, .n_models = 6, .models = models};

/* ---- helpers ----------------------------------------------------------------- */

typedef struct drawn {
    int status;
    char *fasta; /* what was written */
    char *err;   /* what was said on standard error */
} drawn;

static char *slurp(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    rewind(f);
    char *text = calloc((size_t)n + 1, 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    return text;
}

static drawn draw(int model, long n, int64_t length, uint64_t seed, int with_path)
{
    FILE *out = tmpfile(), *err = tmpfile();
    assert_true(out && err);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fileno(err), STDERR_FILENO);
    drawn d;
    d.status = hmmrt_sample(&program, model, n, length, seed, with_path, out);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    fseek(err, 0, SEEK_END);
    d.fasta = slurp(out);
    d.err = slurp(err);
    fclose(out);
    fclose(err);
    return d;
}

static void free_drawn(drawn *d)
{
    free(d->fasta);
    free(d->err);
}

/* Reads the FASTA back with the runtime's reader. */
typedef struct records {
    int n;
    hmmrt_record rec[64];
} records;

static void read_back(const char *fasta, records *rs)
{
    char path[] = "/tmp/test_sample_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(fasta);
    assert_int_equal(write(fd, fasta, len), (ssize_t)len);
    close(fd);
    const char *paths[1] = {path};
    hmmrt_reader *r = hmmrt_reader_open(paths, 1);
    char err[256];
    rs->n = 0;
    int got;
    while ((got = hmmrt_reader_next(r, &rs->rec[rs->n], err, sizeof err)) == 1)
        assert_true(++rs->n < 64);
    assert_int_equal(got, 0);
    hmmrt_reader_close(r);
    unlink(path);
}

static void free_records(records *rs)
{
    for (int i = 0; i < rs->n; i++)
        hmmrt_record_release(&rs->rec[i]);
}

/* Every line of fasta that is not a header is at most 60 long, and all but
 * the last of each record exactly 60. */
static void expect_lines_of_60(const char *fasta)
{
    const char *line = fasta;
    while (*line) {
        const char *end = strchr(line, '\n');
        assert_non_null(end);
        size_t len = (size_t)(end - line);
        if (line[0] != '>') {
            assert_true(len >= 1 && len <= 60);
            if (end[1] && end[1] != '>')
                assert_int_equal(len, 60);
        }
        line = end + 1;
    }
}

/* ---- tests ------------------------------------------------------------------- */

static void test_same_seed_same_sequences(void **state)
{
    drawn a = draw(CASINO, 5, 100, 42, 1);
    drawn b = draw(CASINO, 5, 100, 42, 1);
    drawn c = draw(CASINO, 5, 100, 43, 1);
    assert_int_equal(a.status, 0);
    assert_string_equal(a.err, "");
    assert_string_equal(a.fasta, b.fasta);
    assert_string_not_equal(a.fasta, c.fasta);
    free_drawn(&a);
    free_drawn(&b);
    free_drawn(&c);
}

static void test_exact_lengths(void **state)
{
    const int64_t lengths[] = {1, 59, 60, 61, 137, 1000};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        drawn d = draw(CASINO, 4, lengths[k], 7, 0);
        assert_int_equal(d.status, 0);
        expect_lines_of_60(d.fasta);
        records rs;
        read_back(d.fasta, &rs);
        assert_int_equal(rs.n, 4);
        for (int i = 0; i < rs.n; i++) {
            char name[32];
            snprintf(name, sizeof name, "sample%d", i + 1);
            assert_string_equal(rs.rec[i].name, name);
            assert_int_equal(rs.rec[i].length, lengths[k]);
            assert_int_equal(strspn(rs.rec[i].residues, "12"), (size_t)lengths[k]);
        }
        free_records(&rs);
        free_drawn(&d);
    }
}

/* Counts the states of a path that emit (here: every state but start, s, end). */
static int64_t emitting_states(const char *path)
{
    int64_t n = 0;
    char *copy = strdup(path);
    for (char *word = strtok(copy, " \n"); word; word = strtok(NULL, " \n"))
        n += strcmp(word, "start") != 0 && strcmp(word, "s") != 0 && strcmp(word, "end") != 0;
    free(copy);
    return n;
}

static void test_until_the_end_state_with_path(void **state)
{
    drawn d = draw(SILENT, 20, 0, 3, 1);
    assert_int_equal(d.status, 0);
    assert_string_equal(d.err, "");
    records rs;
    read_back(d.fasta, &rs);
    assert_int_equal(rs.n, 20);
    const char *header = d.fasta;
    int lengths_differ = 0;
    for (int i = 0; i < rs.n; i++) {
        assert_true(rs.rec[i].length >= 1);
        lengths_differ |= rs.rec[i].length != rs.rec[0].length;
        /* ">sampleN path=start s a ... a end" */
        const char *path = strstr(header, " path=") + 6;
        const char *eol = strchr(path, '\n');
        char *p = strndup(path, (size_t)(eol - path));
        assert_memory_equal(p, "start s a", 9);
        assert_string_equal(p + strlen(p) - 4, " end");
        assert_null(strstr(p, "  "));
        assert_int_equal(emitting_states(p), rs.rec[i].length);
        free(p);
        header = strchr(eol, '>');
        assert_true(header || i == rs.n - 1);
    }
    assert_true(lengths_differ);
    free_records(&rs);
    free_drawn(&d);
}

static void test_path_with_length_stops_at_last_symbol(void **state)
{
    drawn d = draw(CASINO, 1, 5, 11, 1);
    assert_int_equal(d.status, 0);
    const char *path = strstr(d.fasta, " path=");
    assert_non_null(path);
    char *p = strndup(path + 6, (size_t)(strchr(path, '\n') - path - 6));
    assert_memory_equal(p, "start ", 6);
    assert_null(strstr(p, "end"));
    assert_int_equal(emitting_states(p), 5);
    free(p);
    free_drawn(&d);
}

/* Weights 2 : 6 draw '1' about a quarter of the time. */
static void test_weights_need_not_sum_to_one(void **state)
{
    drawn d = draw(SILENT, 1, 40000, 5, 0);
    assert_int_equal(d.status, 0);
    long ones = 0, twos = 0;
    for (const char *p = d.fasta; *p; p++) {
        ones += *p == '1';
        twos += *p == '2';
    }
    ones -= 1; /* the '1' of "sample1" */
    assert_int_equal(ones + twos, 40000);
    double share = (double)ones / 40000;
    assert_true(share > 0.24 && share < 0.26);
    free_drawn(&d);
}

static void test_empty_sequences(void **state)
{
    drawn d = draw(EMPTY, 2, 0, 1, 1);
    assert_int_equal(d.status, 0);
    assert_string_equal(d.fasta, ">sample1 path=start end\n>sample2 path=start end\n");
    free_drawn(&d);
}

static void test_no_move_before_the_length(void **state)
{
    drawn d = draw(ONE, 2, 3, 1, 0);
    assert_int_equal(d.status, HMMRT_EXIT_INPUT);
    assert_string_equal(d.fasta, "");
    assert_string_equal(d.err,
                        "sampler: error: sampling model one: state a has no move to take after 1 "
                        "of the 3 symbols asked (moves into end wait for the last symbol): try "
                        "another --length\n");
    free_drawn(&d);
    d = draw(ONE, 2, 1, 1, 1);
    assert_int_equal(d.status, 0);
    assert_string_equal(d.fasta, ">sample1 path=start a\ny\n>sample2 path=start a\ny\n");
    free_drawn(&d);
}

static void test_end_never_reached(void **state)
{
    drawn d = draw(ENDLESS, 1, 0, 1, 0);
    assert_int_equal(d.status, HMMRT_EXIT_INPUT);
    assert_string_equal(d.fasta, "");
    assert_string_equal(d.err, "sampler: error: sampling model endless: the end state was not "
                               "reached after 10000000 symbols: pass --length L to draw "
                               "sequences of L symbols\n");
    free_drawn(&d);
}

static void test_silent_moves_going_round(void **state)
{
    drawn d = draw(LOOP, 1, 2, 1, 0);
    assert_int_equal(d.status, HMMRT_EXIT_INPUT);
    assert_non_null(strstr(d.err, "sampling model loop: 1000000 silent moves in a row at state s"));
    free_drawn(&d);
    d = draw(LOOP, 3, 0, 1, 1); /* without a length it ends */
    assert_int_equal(d.status, 0);
    assert_memory_equal(d.fasta, ">sample1 path=start s ", 22);
    free_drawn(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_sequences),
        cmocka_unit_test(test_exact_lengths),
        cmocka_unit_test(test_until_the_end_state_with_path),
        cmocka_unit_test(test_path_with_length_stops_at_last_symbol),
        cmocka_unit_test(test_weights_need_not_sum_to_one),
        cmocka_unit_test(test_empty_sequences),
        cmocka_unit_test(test_no_move_before_the_length),
        cmocka_unit_test(test_end_never_reached),
        cmocka_unit_test(test_silent_moves_going_round),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
