/* test_cli.c: unit tests of hmmrt_main, the whole life of a generated
 * program, with a fake program defined here: rows and header, options,
 * invalid symbols, --skip-invalid, malformed and missing input, usage errors,
 * --help and --version, failed writes, batches, threads and progress. Each
 * run happens in a child process whose standard streams are files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <math.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "hmmrt.h"

/* ---- the fake program "toy" ------------------------------------------------ */

static const char *const toy_alphabets[] = {"ACGT", "TGCAN"};

static const hmmrt_column toy_columns[] = {
    {"length(dna).score", HMMRT_FIELD_SCORE, NULL},
    {"sum(dna).score", HMMRT_FIELD_SCORE, NULL},
    {"codes(rev).traceback", HMMRT_FIELD_TEXT, NULL},
    {"index", HMMRT_FIELD_SCORE, NULL},
};

static const char *const dna_states[] = {"start", "a", "end"};
static const hmmrt_model_move dna_moves[] = {
    {0, 1, 0, 1.0}, {1, 1, 0, 0.9}, {1, 2, -1, 0.1}};
static const double dna_emissions[] = {1, 1, 1, 1};

static const char *const rev_states[] = {"start", "b", "end"};
static const hmmrt_model_move rev_moves[] = {
    {0, 1, 0, 2.0}, {1, 1, 0, 1.0}, {1, 2, -1, 1.0}};
static const double rev_emissions[] = {0, 0, 0, 0, 3};

static const hmmrt_model toy_models[] = {
    {"dna", 0, 3, dna_states, 0, 2, 3, dna_moves, 1, dna_emissions},
    {"rev", 1, 3, rev_states, 0, 2, 3, rev_moves, 1, rev_emissions},
};

/* length; minus the sum of the codes in alphabet 0 (-inf when empty); the
 * first 12 codes in alphabet 1; the input index. "oom" fails, "slow" sleeps. */
static int toy_score(const hmmrt_seq *seq, hmmrt_value *values, hmmrt_scratch *scratch)
{
    if (strcmp(seq->name, "oom") == 0)
        return 1;
    if (strcmp(seq->name, "slow") == 0)
        usleep(400 * 1000); /* more than a redraw's 0.25 s */
    if (values[2].text.len != 0) /* the runtime hands over empty texts */
        return 1;
    uint8_t *copy = hmmrt_scratch_get(scratch, (size_t)seq->length + 1);
    if (!copy || (uintptr_t)copy % 64 != 0)
        return 1;
    long sum = 0;
    for (int64_t i = 0; i < seq->length; i++)
        sum += copy[i] = seq->codes[0][i];
    values[0].score = (double)seq->length;
    values[1].score = seq->length ? -(double)sum : -INFINITY;
    for (int64_t i = 0; i < seq->length && i < 12; i++)
        hmmrt_buf_putc(&values[2].text, (char)('0' + seq->codes[1][i]));
    values[3].score = (double)seq->index;
    return 0;
}

static const hmmrt_program toy = {
    .name = "toy",
    .source = "models/toy.hmm",
    .target = "c",
    .n_alphabets = 2,
    .alphabets = toy_alphabets,
    .n_columns = 4,
    .columns = toy_columns,
    .n_models = 2,
    .models = toy_models,
    .score_cpu = toy_score,
};

#define HEADER "#name\tlength(dna).score\tsum(dna).score\tcodes(rev).traceback\tindex\n"

/* ---- running it ------------------------------------------------------------ */

enum { MAX_TEMPS = 64 };
static char temp_paths[MAX_TEMPS][64];
static int n_temps;

static const char *temp_file(const char *text)
{
    assert_true(n_temps < MAX_TEMPS);
    char *path = temp_paths[n_temps++];
    snprintf(path, 64, "/tmp/test_cli_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t n = strlen(text);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
    return path;
}

typedef enum stdout_target {
    TO_FILE,
    TO_FULL_DISK,  /* /dev/full: ENOSPC */
    TO_CLOSED_PIPE /* EPIPE */
} stdout_target;

typedef struct result {
    int status;
    char *out, *err;
} result;

static result last;          /* freed by the next run and by teardown */
static stdout_target target; /* reset by teardown */
static const char *stdin_text = "";

static char *slurp(FILE *f)
{
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    return text;
}

static void free_last(void)
{
    free(last.out);
    free(last.err);
    memset(&last, 0, sizeof last);
}

static int clean_up(void **state)
{
    free_last();
    for (int i = 0; i < n_temps; i++)
        unlink(temp_paths[i]);
    n_temps = 0;
    target = TO_FILE;
    stdin_text = "";
    return 0;
}

static void redirect_stdout(FILE *out, int pipe_fds[2])
{
    if (target == TO_FILE)
        dup2(fileno(out), STDOUT_FILENO);
    else if (target == TO_FULL_DISK)
        dup2(open("/dev/full", O_WRONLY), STDOUT_FILENO);
    else
        dup2(pipe_fds[1], STDOUT_FILENO);
}

/* Runs "./bin/toy ARGS..." (NULL-terminated) in a child; stdin holds stdin_text. */
static result *run_toy(const char *arg, ...)
{
    char *argv[32] = {"./bin/toy"};
    int argc = 1;
    va_list ap;
    va_start(ap, arg);
    for (const char *a = arg; a; a = va_arg(ap, const char *)) {
        assert_true(argc < 31);
        argv[argc++] = (char *)a;
    }
    va_end(ap);
    free_last();
    const char *in_path = temp_file(stdin_text);
    FILE *out = tmpfile(), *err = tmpfile();
    assert_true(out && err);
    int pipe_fds[2];
    assert_int_equal(pipe(pipe_fds), 0);
    close(pipe_fds[0]); /* nobody reads: writes fail with EPIPE */
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(open(in_path, O_RDONLY), STDIN_FILENO);
        redirect_stdout(out, pipe_fds);
        dup2(fileno(err), STDERR_FILENO);
        _exit(hmmrt_main(argc, argv, &toy));
    }
    close(pipe_fds[1]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    last.status = WEXITSTATUS(status);
    last.out = slurp(out);
    last.err = slurp(err);
    fclose(out);
    fclose(err);
    return &last;
}

static void expect(const result *r, int status, const char *out, const char *err)
{
    assert_string_equal(r->out, out);
    assert_string_equal(r->err, err);
    assert_int_equal(r->status, status);
}

static int count_lines_with(const char *text, const char *part)
{
    int n = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *copy = strndup(line, len);
        n += strstr(copy, part) != NULL;
        free(copy);
        line += len + (end != NULL);
    }
    return n;
}

/* ---- rows and options ------------------------------------------------------ */

static const char *const three_records = ">a desc\nACGT\n>b\nAC\nG\n>e\n";

static void test_rows_and_header(void **state)
{
    const char *f = temp_file(three_records);
    expect(run_toy(f, NULL), HMMRT_EXIT_OK,
           HEADER "a\t4.000000\t-6.000000\t3210\t0.000000\n"
                  "b\t3.000000\t-3.000000\t321\t1.000000\n"
                  "e\t0.000000\t-inf\t\t2.000000\n",
           "");
}

static void test_no_header_and_decimals(void **state)
{
    const char *f = temp_file(three_records);
    expect(run_toy("--no-header", "--decimals", "2", f, NULL), HMMRT_EXIT_OK,
           "a\t4.00\t-6.00\t3210\t0.00\n"
           "b\t3.00\t-3.00\t321\t1.00\n"
           "e\t0.00\t-inf\t\t2.00\n",
           "");
    expect(run_toy(f, "--decimals=0", NULL), HMMRT_EXIT_OK,
           HEADER "a\t4\t-6\t3210\t0\nb\t3\t-3\t321\t1\ne\t0\t-inf\t\t2\n", "");
}

static void test_files_in_order_with_standard_input(void **state)
{
    const char *f1 = temp_file(">one\nA\n");
    const char *f2 = temp_file(">three\r\nTT\r\n");
    stdin_text = ">two\nCC\n";
    expect(run_toy("--no-header", "--decimals", "1", f1, "-", f2, NULL), HMMRT_EXIT_OK,
           "one\t1.0\t0.0\t3\t0.0\n" /* -0.0: no sign */
           "two\t2.0\t-2.0\t22\t1.0\n"
           "three\t2.0\t-6.0\t00\t2.0\n",
           "");
}

static void test_empty_input(void **state)
{
    const char *f = temp_file("");
    expect(run_toy(f, NULL), HMMRT_EXIT_OK, HEADER, "");
    expect(run_toy("--no-header", f, "-", NULL), HMMRT_EXIT_OK, "", "");
}

/* 70,000 records: more than one batch; three threads; the order holds. */
static void test_many_sequences_across_batches(void **state)
{
    enum { N = 70000 };
    hmmrt_buf input = {0}, expected = {0};
    for (int i = 0; i < N; i++) {
        char line[128];
        int length = i % 7;
        snprintf(line, sizeof line, ">s%d\n%.*s\n", i, length, "GGGGGGG");
        hmmrt_buf_puts(&input, line);
        snprintf(line, sizeof line, "s%d\t%d\t%d\t%.*s\t%d\n", i, length, -2 * length,
                 length, "1111111", i);
        if (length == 0)
            snprintf(line, sizeof line, "s%d\t0\t-inf\t\t%d\n", i, i);
        hmmrt_buf_puts(&expected, line);
    }
    const char *f = temp_file(input.data);
    expect(run_toy("--threads", "3", "--decimals", "0", "--no-header", f, NULL), HMMRT_EXIT_OK,
           expected.data, "");
    hmmrt_buf_free(&input);
    hmmrt_buf_free(&expected);
}

/* ---- bad input --------------------------------------------------------------- */

/* N records "sI" of one 'A' each, with record `bad` (if >= 0) holding an X;
 * `tail` ends the file. Expected: the rows before the first problem. */
static void many_records(int n, int bad, const char *tail, hmmrt_buf *input, hmmrt_buf *rows)
{
    for (int i = 0; i < n; i++) {
        char line[128];
        snprintf(line, sizeof line, ">s%d\n%s\n", i, i == bad ? "AX" : "A");
        hmmrt_buf_puts(input, line);
        snprintf(line, sizeof line, "s%d\t1\t0\t3\t%d\n", i, i);
        if (bad < 0 || i < bad)
            hmmrt_buf_puts(rows, line);
    }
    hmmrt_buf_puts(input, tail);
}

/* Problems in a later batch, found while the batch before is being scored,
 * still come after every row before them. */
static void test_problems_in_a_later_batch(void **state)
{
    enum { N = 70000 };
    hmmrt_buf input = {0}, expected = {0};
    many_records(N, -1, ">\nA\n", &input, &expected);
    const char *f = temp_file(input.data);
    char line[256];
    snprintf(line, sizeof line, "# incomplete: stopped at %s line %d\n", f, 2 * N + 1);
    hmmrt_buf_puts(&expected, line);
    run_toy("--threads", "4", "--decimals", "0", "--no-header", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_INPUT);
    assert_string_equal(last.out, expected.data);
    hmmrt_buf_reset(&input);
    hmmrt_buf_reset(&expected);
    many_records(N, 66000, "", &input, &expected);
    const char *g = temp_file(input.data);
    snprintf(line, sizeof line, "# incomplete: stopped at sequence s66000 (%s line 132001)\n", g);
    hmmrt_buf_puts(&expected, line);
    run_toy("--threads", "4", "--decimals", "0", "--no-header", g, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_INPUT);
    assert_string_equal(last.out, expected.data);
    hmmrt_buf_free(&input);
    hmmrt_buf_free(&expected);
}

static const char *const bad_second = ">a\nAC\n>b\nAXG\n>c\nA\n";

static void test_invalid_symbol_stops_the_run(void **state)
{
    const char *f = temp_file(bad_second);
    char out[512], err[1024];
    snprintf(out, sizeof out,
             HEADER "a\t2.000000\t-1.000000\t32\t0.000000\n"
                    "# incomplete: stopped at sequence b (%s line 3)\n",
             f);
    snprintf(err, sizeof err,
             "toy: error: %s:3: sequence b: symbol 'X' at position 2 (1-based) is not in the "
             "alphabet of model dna [A, C, G, T]; fix the input or pass --skip-invalid to skip "
             "such sequences\n",
             f);
    expect(run_toy(f, NULL), HMMRT_EXIT_INPUT, out, err);
}

static void test_invalid_byte_shown_in_hex(void **state)
{
    const char *f = temp_file(">z\nA\001\n");
    run_toy("--no-header", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_INPUT);
    assert_non_null(strstr(last.err, "symbol '\\x01' at position 2 (1-based)"));
    assert_non_null(strstr(last.out, "# incomplete: stopped at sequence z ("));
}

static void test_standard_input_in_messages(void **state)
{
    stdin_text = ">x\nAZ\n";
    expect(run_toy("--no-header", "-", NULL), HMMRT_EXIT_INPUT,
           "# incomplete: stopped at sequence x (<stdin> line 1)\n",
           "toy: error: <stdin>:1: sequence x: symbol 'Z' at position 2 (1-based) is not in the "
           "alphabet of model dna [A, C, G, T]; fix the input or pass --skip-invalid to skip "
           "such sequences\n");
}

static void test_skip_invalid(void **state)
{
    const char *f = temp_file(bad_second);
    char err[1024];
    snprintf(err, sizeof err,
             "toy: warning: %s:3: sequence b: symbol 'X' at position 2 (1-based) is not in the "
             "alphabet of model dna [A, C, G, T]; skipped\n"
             "toy: warning: 1 sequence was skipped\n",
             f);
    expect(run_toy("--skip-invalid", f, NULL), HMMRT_EXIT_SKIPPED,
           HEADER "a\t2.000000\t-1.000000\t32\t0.000000\n"
                  "c\t1.000000\t0.000000\t3\t2.000000\n",
           err);
}

static void test_skip_invalid_warns_ten_then_counts(void **state)
{
    hmmrt_buf input = {0};
    for (int i = 0; i < 12; i++)
        hmmrt_buf_puts(&input, ">bad\nAZ\n");
    hmmrt_buf_puts(&input, ">good\nT\n");
    const char *f = temp_file(input.data);
    hmmrt_buf_free(&input);
    run_toy("--skip-invalid", "--no-header", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_SKIPPED);
    assert_string_equal(last.out, "good\t1.000000\t-3.000000\t0\t12.000000\n");
    assert_int_equal(count_lines_with(last.err, "; skipped"), 10);
    assert_int_equal(count_lines_with(last.err, "(later ones are only counted)"), 1);
    assert_int_equal(count_lines_with(last.err, "\n"), 0); /* no empty lines */
    assert_non_null(strstr(last.err, "\ntoy: warning: 12 sequences were skipped\n"));
}

static void test_malformed_fasta(void **state)
{
    const char *f = temp_file("ACGT\n>a\nA\n");
    char out[512], err[1024];
    snprintf(out, sizeof out, HEADER "# incomplete: stopped at %s line 1\n", f);
    snprintf(err, sizeof err,
             "toy: error: %s:1: sequence data before the first '>' header: a FASTA record "
             "starts with a line '>NAME'\n",
             f);
    expect(run_toy(f, NULL), HMMRT_EXIT_INPUT, out, err);

    const char *g = temp_file(">a\nAC\n>\nA\n");
    snprintf(out, sizeof out,
             "a\t2.000000\t-1.000000\t32\t0.000000\n# incomplete: stopped at %s line 3\n", g);
    snprintf(err, sizeof err,
             "toy: error: %s:3: a '>' header without a name: write the sequence's name right "
             "after '>'\n",
             g);
    expect(run_toy("--no-header", g, NULL), HMMRT_EXIT_INPUT, out, err);
}

static void test_missing_file_stops_before_scoring(void **state)
{
    const char *f = temp_file(three_records);
    expect(run_toy(f, "/nonexistent/seqs.fa", NULL), HMMRT_EXIT_INPUT,
           HEADER "# incomplete: stopped at /nonexistent/seqs.fa\n",
           "toy: error: /nonexistent/seqs.fa: cannot open: No such file or directory\n");
}

static void test_out_of_memory_in_scoring(void **state)
{
    const char *f = temp_file(">a\nA\n>oom\nC\n>c\nG\n");
    char out[512], err[512];
    snprintf(out, sizeof out,
             "a\t1.000000\t0.000000\t3\t0.000000\n"
             "# incomplete: stopped at sequence oom (%s line 3)\n",
             f);
    snprintf(err, sizeof err,
             "toy: error: %s:3: out of memory while scoring sequence oom (1 symbols)\n", f);
    expect(run_toy("--no-header", f, NULL), HMMRT_EXIT_INTERNAL, out, err);
}

/* ---- the command line -------------------------------------------------------- */

static void expect_usage_error(const char *err)
{
    assert_string_equal(last.err, err);
    assert_string_equal(last.out, "");
    assert_int_equal(last.status, HMMRT_EXIT_USAGE);
}

static void test_usage_errors(void **state)
{
    const char *f = temp_file(three_records);
    run_toy(NULL);
    expect_usage_error("toy: error: no sequence file given: name one, or - for standard input "
                       "(toy --help lists the options)\n");
    run_toy("--bogus", f, NULL);
    expect_usage_error("toy: error: unknown option '--bogus': toy --help lists the options\n");
    run_toy("-x", f, NULL);
    expect_usage_error("toy: error: unknown option '-x': toy --help lists the options\n");
    run_toy("--decimals", "18", f, NULL);
    expect_usage_error("toy: error: --decimals takes a whole number from 0 to 17, not '18'\n");
    run_toy("--decimals=abc", f, NULL);
    expect_usage_error("toy: error: --decimals takes a whole number from 0 to 17, not 'abc'\n");
    run_toy(f, "--decimals", NULL);
    expect_usage_error("toy: error: --decimals needs a value: --decimals N or --decimals=N\n");
    run_toy("--threads", "0", f, NULL);
    expect_usage_error("toy: error: --threads takes a number of threads from 1 to 4096, not '0'\n");
    run_toy("--length", "5", f, NULL);
    expect_usage_error("toy: error: --length applies only with --sample N: add --sample N, or "
                       "drop --length\n");
    run_toy("--sample", "2", f, NULL);
    char err[256];
    snprintf(err, sizeof err, "toy: error: --sample draws sequences and reads no file: drop '%s'\n", f);
    expect_usage_error(err);
    run_toy("--sample", "-1", NULL);
    expect_usage_error("toy: error: --sample takes a number of sequences, 1 or more, not '-1'\n");
    run_toy("--help=yes", NULL);
    expect_usage_error("toy: error: --help takes no value\n");
    run_toy("--sample", "1", "--model", "nope", NULL);
    expect_usage_error("toy: error: no model is named 'nope': the models are dna, rev\n");
}

static void test_double_dash_ends_options(void **state)
{
    const char *f = temp_file(">a\nA\n");
    expect(run_toy("--no-header", "--", f, NULL), HMMRT_EXIT_OK,
           "a\t1.000000\t0.000000\t3\t0.000000\n", "");
    run_toy("--", "--no-header", NULL);
    assert_int_equal(last.status, HMMRT_EXIT_INPUT); /* a file named --no-header */
}

static void test_help(void **state)
{
    run_toy("--help", NULL);
    assert_int_equal(last.status, HMMRT_EXIT_OK);
    assert_string_equal(last.err, "");
    const char *wanted[] = {"Usage: toy [options] SEQFILE...", "models/toy.hmm",
                            "length(dna).score", "codes(rev).traceback", "--skip-invalid",
                            "--decimals N", "--sample N", "path=start", "dna, rev",
                            "Exit status", "  3  the run finished, but --skip-invalid"};
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if (!strstr(last.out, wanted[i]))
            fail_msg("--help does not mention '%s'", wanted[i]);
    char *help = strdup(last.out);
    run_toy("-h", NULL);
    assert_string_equal(last.out, help);
    free(help);
}

static void test_version(void **state)
{
    expect(run_toy("--version", NULL), HMMRT_EXIT_OK,
           "toy (hmmc " HMMRT_VERSION ", target c, from models/toy.hmm)\n", "");
}

/* ---- failed writes and progress ---------------------------------------------- */

static void test_full_disk(void **state)
{
    const char *f = temp_file(three_records);
    target = TO_FULL_DISK;
    expect(run_toy(f, NULL), HMMRT_EXIT_OUTPUT, "",
           "toy: error: cannot write the output: No space left on device\n");
    expect(run_toy("--help", NULL), HMMRT_EXIT_OUTPUT, "",
           "toy: error: cannot write the output: No space left on device\n");
    expect(run_toy("--sample", "2", NULL), HMMRT_EXIT_OUTPUT, "",
           "toy: error: cannot write the output: No space left on device\n");
}

static void test_closed_pipe(void **state)
{
    const char *f = temp_file(three_records);
    target = TO_CLOSED_PIPE;
    expect(run_toy(f, NULL), HMMRT_EXIT_OUTPUT, "",
           "toy: error: cannot write the output: Broken pipe\n");
}

static void test_progress_line(void **state)
{
    const char *f = temp_file(">slow\nA\n>b\nC\n");
    run_toy("--progress", "--threads", "1", "--no-header", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_OK);
    assert_string_equal(last.out, "slow\t1.000000\t0.000000\t3\t0.000000\n"
                                  "b\t1.000000\t-1.000000\t2\t1.000000\n");
    assert_int_equal(last.err[0], '\r');
    assert_non_null(strstr(last.err, "1 sequences, 1 residues, 0."));
    assert_non_null(strstr(last.err, " sequences/s"));
    assert_null(strchr(last.err, '\n'));
    assert_int_equal(last.err[strlen(last.err) - 1], '\r'); /* erased at the end */
    run_toy("--no-progress", "--threads", "1", f, NULL);
    assert_string_equal(last.err, "");
    run_toy("--threads", "1", f, NULL); /* standard error is a file: no progress */
    assert_string_equal(last.err, "");
}

/* ---- --sample ------------------------------------------------------------------ */

static void test_sample_through_main(void **state)
{
    expect(run_toy("--sample", "2", "--model", "rev", "--length=3", "--with-path", NULL),
           HMMRT_EXIT_OK,
           ">sample1 path=start b b b\nNNN\n>sample2 path=start b b b\nNNN\n", "");
    run_toy("--sample", "3", "--length", "70", "--seed", "7", NULL);
    assert_int_equal(last.status, HMMRT_EXIT_OK);
    char *first = strdup(last.out);
    assert_int_equal(count_lines_with(first, ">sample"), 3);
    assert_int_equal(strlen(first), 3 * (9 + 61 + 11));
    run_toy("--sample", "3", "--length", "70", "--seed", "7", NULL);
    assert_string_equal(last.out, first);
    run_toy("--sample", "3", "--length", "70", "--seed", "8", NULL);
    assert_string_not_equal(last.out, first);
    free(first);
}

int main(void)
{
#define T(name) cmocka_unit_test_teardown(name, clean_up)
    const struct CMUnitTest tests[] = {
        T(test_rows_and_header),
        T(test_no_header_and_decimals),
        T(test_files_in_order_with_standard_input),
        T(test_empty_input),
        T(test_many_sequences_across_batches),
        T(test_problems_in_a_later_batch),
        T(test_invalid_symbol_stops_the_run),
        T(test_invalid_byte_shown_in_hex),
        T(test_standard_input_in_messages),
        T(test_skip_invalid),
        T(test_skip_invalid_warns_ten_then_counts),
        T(test_malformed_fasta),
        T(test_missing_file_stops_before_scoring),
        T(test_out_of_memory_in_scoring),
        T(test_usage_errors),
        T(test_double_dash_ends_options),
        T(test_help),
        T(test_version),
        T(test_full_disk),
        T(test_closed_pipe),
        T(test_progress_line),
        T(test_sample_through_main),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
