/* test_cli.c: unit tests of hmmrt_main, the whole life of a generated
 * program, with a fake program defined here: rows and header, options,
 * invalid symbols, --skip-invalid, malformed and missing input, usage errors,
 * --help and --version, failed writes, batches, threads and progress; and
 * the GPU integration through a fake GPU side (no GPU needed): the CPU
 * fallback and its notes, --cpu, --device, --double, --timing, rows in input
 * order, skips and stops, a GPU error. Each run happens in a child process
 * whose standard streams are files. */
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
#include "hmmrt_gpu.h"
#include "internal.h"

/* ---- the fake program "toy" ------------------------------------------------ */

static const char *const toy_alphabets[] = {"ACGT", "TGCAN"};

static const hmmrt_column toy_columns[] = {
    {"length(dna).score", HMMRT_FIELD_SCORE, NULL, 0, 0},
    {"sum(dna).score", HMMRT_FIELD_SCORE, NULL, 0, 0},
    {"codes(rev).traceback", HMMRT_FIELD_TEXT, NULL, 0, 0},
    {"index", HMMRT_FIELD_SCORE, NULL, 0, 0},
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
    {.name = "dna", .alphabet = 0, .n_states = 3, .state_names = dna_states, .start = 0,
     .end = 2, .n_moves = 3, .moves = dna_moves, .n_emissions = 1, .emissions = dna_emissions},
    {.name = "rev", .alphabet = 1, .n_states = 3, .state_names = rev_states, .start = 0,
     .end = 2, .n_moves = 3, .moves = rev_moves, .n_emissions = 1, .emissions = rev_emissions},
};

/* The alphabet of column 2: 1 (rev), or 0 in "toy1", toy of one alphabet
 * (dna), whose reader maps as it parses (one pass). */
static int rev_alphabet = 1;

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
        hmmrt_buf_putc(&values[2].text, (char)('0' + seq->codes[rev_alphabet][i]));
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

/* ---- a fake GPU side for "toy" ---------------------------------------------------
 * It scores like toy_score, from what the runtime hands a GPU driver, but
 * marks column 2 with "g" ("gd" with --double) and counts the index itself.
 * Each batch it says on stderr how many sequences it got and scored. A
 * sequence of 13 symbols makes it fail like a device error. */

typedef struct fake_gpu {
    int use_double;
    int64_t seen; /* sequences of the batches before */
} fake_gpu;

static fake_gpu fake_gpu_state[2]; /* float, double: the runtime may open both */

static void *fake_open(const hmmrt_program *prog, int device, int use_double, char *err,
                       size_t errlen)
{
    if (device != 0) {
        snprintf(err, errlen, "--device %d is out of range: there is 1 CUDA device, number 0",
                 device);
        return NULL;
    }
    fake_gpu_state[use_double != 0] = (fake_gpu){use_double, 0};
    return &fake_gpu_state[use_double != 0];
}

static void *fake_open_no_device(const hmmrt_program *prog, int device, int use_double,
                                 char *err, size_t errlen)
{
    snprintf(err, errlen, "no CUDA device found");
    return NULL;
}

/* One sequence into its row; -1 when the runtime handed over a row not cleared. */
static int fake_score_one(const fake_gpu *g, const hmmrt_gpu_input *in, int64_t i)
{
    const uint8_t *dna = hmmrt_gpu_codes_of(in, rev_alphabet + 1, 0, i),
                  *rev = hmmrt_gpu_codes_of(in, rev_alphabet + 1, rev_alphabet, i);
    hmmrt_value *v = in->values + i * 4;
    if (v[2].text.len != 0 || !isnan(v[0].score))
        return -1;
    long sum = 0;
    for (int64_t k = 0; k < in->lengths[i]; k++)
        sum += dna[k];
    v[0].score = (double)in->lengths[i];
    v[1].score = in->lengths[i] ? -(double)sum : -INFINITY;
    hmmrt_buf_puts(&v[2].text, g->use_double ? "gd" : "g");
    for (int64_t k = 0; k < in->lengths[i] && k < 12; k++)
        hmmrt_buf_putc(&v[2].text, (char)('0' + rev[k]));
    v[3].score = (double)(g->seen + i);
    return 0;
}

/* 0 when the order the batch came with, if any, is hmmrt_order_by_length's
 * of the sequences it says are scored (a batch that came ordered says
 * ", ordered" in the fake's line). */
static int check_order(const hmmrt_gpu_input *in)
{
    if (!in->order)
        return 0;
    int64_t *want = malloc((size_t)(in->n > 0 ? in->n : 1) * sizeof *want);
    int64_t m = want ? hmmrt_order_by_length(in->lengths, in->skip, in->n, want) : -1;
    int same = m == in->n_ordered && m >= 0 &&
               memcmp(want, in->order, (size_t)m * sizeof *want) == 0;
    free(want);
    return same ? 0 : -1;
}

/* 0 when a staged batch's arrays hold every scored sequence's codes at a
 * 16-byte offset, zero-padded, and, where none is skipped, its order is a
 * staged run (the driver copies its chunks as they lie). */
static int check_staged(const hmmrt_gpu_input *in)
{
    if (!in->staged)
        return 0;
    int n_alphabets = rev_alphabet + 1, skips = 0;
    for (int64_t i = 0; i < in->n; i++) {
        skips += in->skip[i];
        if (in->skip[i])
            continue;
        if (in->offsets[i] % 16 != 0)
            return -1;
        for (int a = 0; a < n_alphabets; a++) {
            const uint8_t *staged = in->codes[a] + in->offsets[i];
            if (memcmp(staged, hmmrt_gpu_codes_of(in, n_alphabets, a, i),
                       (size_t)in->lengths[i]) != 0)
                return -1;
            for (int64_t k = in->lengths[i]; k < hmmrt_pad16(in->lengths[i]); k++)
                if (staged[k] != 0)
                    return -1;
        }
    }
    return in->order && !skips &&
                   !hmmrt_staged_run(in->lengths, in->offsets, in->order, in->n_ordered)
               ? -1
               : 0;
}

static int fake_score(void *gpu, const hmmrt_gpu_input *in, char *err, size_t errlen)
{
    fake_gpu *g = gpu;
    int64_t scored = 0;
    if (check_order(in) != 0) {
        snprintf(err, errlen, "the order handed over is not the batch's");
        return -1;
    }
    if (check_staged(in) != 0) {
        snprintf(err, errlen, "the staged codes are not the sequences'");
        return -1;
    }
    for (int64_t i = 0; i < in->n; i++) {
        if (in->skip[i])
            continue;
        if (in->lengths[i] == 13) {
            snprintf(err, errlen, "cudaMemcpyAsync failed: an illegal memory access was "
                                  "encountered (batch 1, chunk 1 of 1)");
            return -1;
        }
        if (fake_score_one(g, in, i) != 0) {
            snprintf(err, errlen, "row %lld was not cleared", (long long)i);
            return -1;
        }
        scored++;
    }
    fprintf(stderr, "fake gpu: %lld sequences, %lld scored%s%s\n", (long long)in->n,
            (long long)scored, in->order ? ", ordered" : "", in->staged ? ", staged" : "");
    g->seen += in->n;
    return 0;
}

static void fake_report(void *gpu, FILE *out)
{
    fprintf(out, "fake gpu report\n");
}

static void fake_close(void *gpu)
{
}

static const hmmrt_gpu_program fake_gpu_program = {
    .open = fake_open, .score = fake_score, .report = fake_report, .close = fake_close};
static const hmmrt_gpu_program fake_gpu_no_device = {
    .open = fake_open_no_device, .score = fake_score, .report = fake_report, .close = fake_close};
static const hmmrt_gpu_program fake_gpu_cpu_only = {.cpu_only = "it prints whole tables",
                                                     .open = fake_open,
                                                     .score = fake_score,
                                                     .report = fake_report,
                                                     .close = fake_close};

static const hmmrt_gpu_program fake_gpu_needs_double = {
    .needs_double = "sum(dna) has weights down to e^-200, below float's range (2^-126)",
    .open = fake_open,
    .score = fake_score,
    .report = fake_report,
    .close = fake_close};

/* Three fake GPUs for --devices: each scores as fake_score does (without its
 * line on stderr, whose order across devices' threads is not fixed) and
 * counts what it scored. */
enum { FAKE_DEVICES = 3 };
typedef struct fake_device {
    fake_gpu g;
    int device;
    int64_t scored, residues, batches;
} fake_device;
static fake_device fake_devices[2][FAKE_DEVICES];

static int fake_device_count(void) { return FAKE_DEVICES; }

static void *fake_multi_open(const hmmrt_program *prog, int device, int use_double, char *err,
                             size_t errlen)
{
    if (device < 0 || device >= FAKE_DEVICES) {
        snprintf(err, errlen, "--device %d is out of range: there are 3 CUDA devices, 0 to 2",
                 device);
        return NULL;
    }
    fake_devices[use_double != 0][device] = (fake_device){.g = {use_double, 0}, .device = device};
    return &fake_devices[use_double != 0][device];
}

static int fake_multi_score(void *gpu, const hmmrt_gpu_input *in, char *err, size_t errlen)
{
    fake_device *d = gpu;
    if (check_order(in) != 0) {
        snprintf(err, errlen, "the order handed over is not the part's");
        return -1;
    }
    for (int64_t i = 0; i < in->n; i++) {
        if (in->skip[i])
            continue;
        if (in->lengths[i] == 13) {
            snprintf(err, errlen, "an illegal memory access was encountered");
            return -1;
        }
        if (fake_score_one(&d->g, in, i) != 0) {
            snprintf(err, errlen, "row %lld was not cleared", (long long)i);
            return -1;
        }
        d->scored++;
        d->residues += in->lengths[i];
    }
    d->g.seen += in->n;
    d->batches++;
    return 0;
}

/* --timing: what each device scored (the run is a child: its counts come back so) */
static void fake_multi_report(void *gpu, FILE *out)
{
    const fake_device *d = gpu;
    fprintf(out, "fake device %d%s: %lld scored, %lld residues, %lld batches\n", d->device,
            d->g.use_double ? " in double" : "", (long long)d->scored, (long long)d->residues,
            (long long)d->batches);
}

static const hmmrt_gpu_program fake_gpus_program = {.open = fake_multi_open,
                                                     .score = fake_multi_score,
                                                     .report = fake_multi_report,
                                                     .close = fake_close,
                                                     .device_count = fake_device_count};

static hmmrt_program program_under_test; /* toy, with the gpu a test gives it */

static void use_gpu(const hmmrt_gpu_program *gpu)
{
    rev_alphabet = 1;
    program_under_test = toy;
    program_under_test.target = "cuda";
    program_under_test.gpu = gpu;
}

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
    program_under_test = toy;
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
        _exit(hmmrt_main(argc, argv, &program_under_test));
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
             "toy: error: %s:4: sequence b: symbol 'X' at position 2 (1-based) is not in the "
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
           "toy: error: <stdin>:2: sequence x: symbol 'Z' at position 2 (1-based) is not in the "
           "alphabet of model dna [A, C, G, T]; fix the input or pass --skip-invalid to skip "
           "such sequences\n");
}

static void test_skip_invalid(void **state)
{
    const char *f = temp_file(bad_second);
    char err[1024];
    snprintf(err, sizeof err,
             "toy: warning: %s:4: sequence b: symbol 'X' at position 2 (1-based) is not in the "
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
    for (int i = 0; i < 12; i++) {
        char record[32];
        snprintf(record, sizeof record, ">bad%d\nAZ\n", i); /* distinct: no duplicate warnings */
        hmmrt_buf_puts(&input, record);
    }
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

/* A name used twice: both rows printed, a warning naming both places, exit 0;
 * the eleventh duplicate and later ones are only counted. */
static void test_duplicate_names(void **state)
{
    const char *f = temp_file(">x\nA\n>y first\nC\n>x again\nG\n");
    char err[1024];
    snprintf(err, sizeof err,
             "toy: warning: %s:5: sequence x has the same name as the sequence at %s:1; both "
             "are printed\n",
             f, f);
    run_toy("--no-header", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_OK);
    assert_string_equal(last.err, err);
    assert_int_equal(count_lines_with(last.out, "x\t"), 2);
    assert_int_equal(count_lines_with(last.out, "\t"), 3); /* every row, nothing else */

    hmmrt_buf input = {0};
    for (int i = 0; i < 13; i++)
        hmmrt_buf_puts(&input, ">same\nT\n");
    f = temp_file(input.data);
    hmmrt_buf_free(&input);
    run_toy("--no-header", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_OK);
    assert_int_equal(count_lines_with(last.out, "same\t"), 13);
    assert_int_equal(count_lines_with(last.err, "has the same name as the sequence at"), 10);
    assert_int_equal(count_lines_with(last.err, "(later ones are only counted)"), 1);
    assert_non_null(strstr(last.err, "\ntoy: warning: 12 sequences have the name of an earlier "
                                     "sequence\n"));
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
    /* the environment's count is checked as --threads is; --threads wins */
    const char *bad_counts[] = {"100000", "0", "x\x1b[2J", " ", "-3"};
    for (size_t k = 0; k < sizeof bad_counts / sizeof bad_counts[0]; k++) {
        setenv("OMP_NUM_THREADS", bad_counts[k], 1);
        run_toy(f, NULL);
        char want[512];
        hmmrt_buf shown = {0};
        hmmrt_describe_text(&shown, bad_counts[k]);
        snprintf(want, sizeof want,
                 "toy: error: the environment's OMP_NUM_THREADS='%s' is not a number of threads "
                 "from 1 to 4096: set it to one, or unset it (every core), or pass --threads N, "
                 "which takes precedence\n", shown.data);
        hmmrt_buf_free(&shown);
        expect_usage_error(want);
        run_toy("--threads", "2", "--no-header", f, NULL);
        assert_int_equal(last.status, HMMRT_EXIT_OK);
    }
    setenv("OMP_NUM_THREADS", " 3,2 ", 1); /* OpenMP's list for nested levels */
    run_toy("--no-header", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_OK);
    unsetenv("OMP_NUM_THREADS");
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

/* --train's command line: its own options only with it, files needed, and a
 * program that does not carry its source refuses (the toy does not). */
static void test_train_usage_errors(void **state)
{
    const char *f = temp_file(three_records);
    run_toy("--iterations", "3", f, NULL);
    expect_usage_error("toy: error: --iterations applies only with --train: add --train, or drop "
                       "--iterations\n");
    run_toy("--train", NULL);
    expect_usage_error("toy: error: --train needs sequence files to fit the model to: name one, "
                       "or - for standard input\n");
    run_toy("--train", "--sample", "3", NULL);
    expect_usage_error("toy: error: --sample and --train do not go together: one draws "
                       "sequences, the other fits a model to them\n");
    run_toy("--train", "--pseudocount", "-1", f, NULL);
    expect_usage_error("toy: error: --pseudocount takes a number 0 or more (e.g. 1), not '-1'\n");
    run_toy("--train", "--tolerance", "nan", f, NULL);
    expect_usage_error("toy: error: --tolerance takes a number 0 or more (e.g. 1e-9), not 'nan'\n");
    run_toy("--train", "--length", "5", f, NULL);
    expect_usage_error("toy: error: --length applies only with --sample N, not with --train: drop "
                       "--length\n");
    run_toy("--model", "rev", f, NULL);
    expect_usage_error("toy: error: --model applies only with --sample N or --train: add one, or "
                       "drop --model\n");
    run_toy("--train", "--model", "rev", f, NULL);
    expect_usage_error("toy: error: model rev cannot be trained: this program does not carry its "
                       "source's numbers (compile it again with this hmmc)\n");
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

/* ---- the GPU side ----------------------------------------------------------------- */

/* e scores -inf in float, so it is scored again in double ("gd") */
#define GPU_ROWS "a\t4.000000\t-6.000000\tg3210\t0.000000\n" \
                 "b\t3.000000\t-3.000000\tg321\t1.000000\n" \
                 "e\t0.000000\t-inf\tgd\t2.000000\n"
#define CPU_ROWS "a\t4.000000\t-6.000000\t3210\t0.000000\n" \
                 "b\t3.000000\t-3.000000\t321\t1.000000\n" \
                 "e\t0.000000\t-inf\t\t2.000000\n"

static void test_gpu_scores_rows_in_input_order(void **state)
{
    const char *f = temp_file(three_records);
    use_gpu(&fake_gpu_program);
    expect(run_toy(f, NULL), HMMRT_EXIT_OK, HEADER GPU_ROWS,
           "fake gpu: 3 sequences, 3 scored, ordered\n"
           "fake gpu: 3 sequences, 1 scored\n");
}

static void test_gpu_double(void **state)
{
    const char *f = temp_file(">a\nAC\n");
    use_gpu(&fake_gpu_program);
    expect(run_toy("--double", "--no-header", f, NULL), HMMRT_EXIT_OK,
           "a\t2.000000\t-1.000000\tgd32\t0.000000\n", "fake gpu: 1 sequences, 1 scored, ordered\n");
}

/* A program whose weights float cannot hold is scored in double from the
 * start: one pass ("gd" everywhere, e too), and --help and --timing say why. */
static void test_gpu_program_that_needs_double(void **state)
{
    const char *f = temp_file(three_records);
    use_gpu(&fake_gpu_needs_double);
    expect(run_toy("--no-header", f, NULL), HMMRT_EXIT_OK,
           "a\t4.000000\t-6.000000\tgd3210\t0.000000\n"
           "b\t3.000000\t-3.000000\tgd321\t1.000000\n"
           "e\t0.000000\t-inf\tgd\t2.000000\n",
           "fake gpu: 3 sequences, 3 scored, ordered\n");
    assert_non_null(strstr(run_toy("--help", NULL)->out,
                           "scored in double on the GPU anyway:\n"
                           "                   sum(dna) has weights down to e^-200"));
    assert_non_null(strstr(run_toy("--timing", f, NULL)->err,
                           "  in double precision: sum(dna) has weights down to e^-200, below "
                           "float's range (2^-126)\n"));
}

/* A forward or backward column (sum_of_paths) that the double kernels score
 * -inf is settled by the CPU path, which can sum in long double: e's row is
 * toy_score's (no "g"), a and b stay the GPU's, and --timing counts it. */
static void test_gpu_sum_beyond_double_goes_to_the_cpu(void **state)
{
    static hmmrt_column sum_columns[4];
    memcpy(sum_columns, toy_columns, sizeof sum_columns);
    sum_columns[1].sum_of_paths = 1;
    const char *f = temp_file(three_records);
    use_gpu(&fake_gpu_program);
    program_under_test.columns = sum_columns;
    expect(run_toy("--double", "--no-header", f, NULL), HMMRT_EXIT_OK,
           "a\t4.000000\t-6.000000\tgd3210\t0.000000\n"
           "b\t3.000000\t-3.000000\tgd321\t1.000000\n"
           "e\t0.000000\t-inf\t\t2.000000\n",
           "fake gpu: 3 sequences, 3 scored, ordered\n");
    assert_non_null(strstr(run_toy("--double", "--timing", f, NULL)->err,
                           "  1 sequence scored -inf or beyond double's range on the GPU, "
                           "scored again on the CPU\n"));
}

static void test_no_gpu_falls_back_to_the_cpu(void **state)
{
    const char *f = temp_file(three_records);
    use_gpu(&fake_gpu_no_device);
    expect(run_toy(f, NULL), HMMRT_EXIT_OK, HEADER CPU_ROWS,
           "toy: note: no usable GPU (no CUDA device found); scoring on the CPU\n");
    use_gpu(&fake_gpu_program);
    expect(run_toy("--device", "2", f, NULL), HMMRT_EXIT_OK, HEADER CPU_ROWS,
           "toy: note: no usable GPU (--device 2 is out of range: there is 1 CUDA device, "
           "number 0); scoring on the CPU\n");
}

/* --devices: every sequence scored once, by one of the devices, the rows
 * those of one GPU in input order; the parts balanced by residues; a device
 * that does not open or fails is named. */
static void test_several_gpus(void **state)
{
    hmmrt_buf input = {0};
    for (int i = 0; i < 40; i++) {
        char line[128];
        snprintf(line, sizeof line, ">s%d\n%.*s\n", i, 14 + (i * 7) % 15, /* not 13 */
                 "ACGTTGCAACGTACGATCGATTTAGCACG");
        hmmrt_buf_puts(&input, line);
    }
    const char *f = temp_file(input.data);
    hmmrt_buf_free(&input);
    use_gpu(&fake_gpus_program);
    setenv("HMMRT_DEVICES_WAIT", "1", 1); /* every device in every batch: counts that do not race */
    run_toy("--device", "1", "--timing", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_OK);
    char *one = strdup(last.out);
    assert_non_null(strstr(last.err, "fake device 1: 40 scored, 845 residues, 1 batches\n"));
    for (int k = 0; k < 2; k++) {
        run_toy("--devices", k ? "all" : "2,0,1", "--timing", f, NULL);
        assert_int_equal(last.status, HMMRT_EXIT_OK);
        assert_string_equal(last.out, one);
        int64_t scored = 0, residues = 0, most = 0, least = INT64_MAX;
        for (int d = 0; d < FAKE_DEVICES; d++) {
            char head[32];
            snprintf(head, sizeof head, "fake device %d: ", d);
            const char *line = strstr(last.err, head);
            long long sc, re, ba;
            assert_non_null(line);
            assert_int_equal(sscanf(line + strlen(head), "%lld scored, %lld residues, %lld batches",
                                    &sc, &re, &ba), 3);
            assert_int_equal(ba, 1);
            scored += sc;
            residues += re;
            most = re > most ? re : most;
            least = re < least ? re : least;
        }
        assert_int_equal(scored, 40);
        assert_int_equal(residues, 845);
        assert_true(most - least <= 28 + 32); /* the longest, and a row's cost */
    }
    assert_non_null(strstr(run_toy("--devices", "all", "--timing", f, NULL)->err,
                           "  --devices: 3 GPUs, each batch dealt out by residues\n"));
    /* the first device listed must open; a later one that does not is named */
    expect(run_toy("--devices", "7,0", "--no-header", temp_file(">a\nAC\n"), NULL),
           HMMRT_EXIT_OK, "a\t2.000000\t-1.000000\t32\t0.000000\n",
           "toy: note: no usable GPU (GPU 7 of --devices: --device 7 is out of range: there "
           "are 3 CUDA devices, 0 to 2); scoring on the CPU\n");
    expect(run_toy("--devices", "0,7", "--no-header", temp_file(">a\nAC\n"), NULL),
           HMMRT_EXIT_OK, "a\t2.000000\t-1.000000\tg32\t0.000000\n",
           "toy: warning: GPU 7 of --devices did not open (--device 7 is out of range: there "
           "are 3 CUDA devices, 0 to 2): the run goes on without it\n");
    /* without the wait the devices join when they have opened: the same rows */
    unsetenv("HMMRT_DEVICES_WAIT");
    run_toy("--devices", "all", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_OK);
    assert_string_equal(last.out, one);
    run_toy("--devices", "all", temp_file(">a\nAC\n>b\nACGTACGTACGTA\n>c\nA\n"), NULL);
    assert_int_equal(last.status, HMMRT_EXIT_INTERNAL);
    assert_non_null(strstr(last.err, "toy: error: GPU: on device "));
    assert_non_null(strstr(last.err, ": an illegal memory access was encountered; in the batch"));
    free(one);
}

/* The GPU opens while the first batch is read: its note still comes before
 * any error, and the first batch, read at the GPU's size, is scored whole on
 * the CPU when the GPU does not open. */
static void test_gpu_that_does_not_open_while_reading(void **state)
{
    const char *f = temp_file(three_records);
    use_gpu(&fake_gpu_no_device);
    expect(run_toy(f, "/nonexistent/seqs.fa", NULL), HMMRT_EXIT_INPUT,
           HEADER "# incomplete: stopped at /nonexistent/seqs.fa\n",
           "toy: note: no usable GPU (no CUDA device found); scoring on the CPU\n"
           "toy: error: /nonexistent/seqs.fa: cannot open: No such file or directory\n");
    enum { N = 3 * (1 << 16) + 5 }; /* more than one CPU batch, less than a GPU batch */
    hmmrt_buf input = {0};
    for (int i = 0; i < N; i++) {
        char line[64];
        snprintf(line, sizeof line, ">s%d\n%.*s\n", i, 1 + i % 3, "ACG");
        hmmrt_buf_puts(&input, line);
    }
    const char *g = temp_file(input.data);
    hmmrt_buf_free(&input);
    program_under_test = toy; /* the C target: the CPU path's own batches */
    run_toy("--no-header", g, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_OK);
    char *cpu_rows = strdup(last.out);
    assert_int_equal(count_lines_with(cpu_rows, "\t"), N);
    use_gpu(&fake_gpu_no_device);
    expect(run_toy("--no-header", g, NULL), HMMRT_EXIT_OK, cpu_rows,
           "toy: note: no usable GPU (no CUDA device found); scoring on the CPU\n");
    free(cpu_rows);
}

static void test_cpu_option_and_cpu_only_programs(void **state)
{
    const char *f = temp_file(three_records);
    use_gpu(&fake_gpu_program);
    expect(run_toy("--cpu", f, NULL), HMMRT_EXIT_OK, HEADER CPU_ROWS, "");
    use_gpu(&fake_gpu_cpu_only);
    expect(run_toy(f, NULL), HMMRT_EXIT_OK, HEADER CPU_ROWS,
           "toy: note: scoring on the CPU: it prints whole tables\n");
    expect(run_toy("--cpu", f, NULL), HMMRT_EXIT_OK, HEADER CPU_ROWS, "");
    program_under_test = toy; /* the C target: --cpu changes nothing */
    expect(run_toy("--cpu", f, NULL), HMMRT_EXIT_OK, HEADER CPU_ROWS, "");
}

static void test_gpu_skip_invalid(void **state)
{
    const char *f = temp_file(bad_second);
    char err[1024];
    snprintf(err, sizeof err,
             "fake gpu: 3 sequences, 2 scored, ordered\n"
             "toy: warning: %s:4: sequence b: symbol 'X' at position 2 (1-based) is not in the "
             "alphabet of model dna [A, C, G, T]; skipped\n"
             "toy: warning: 1 sequence was skipped\n",
             f);
    use_gpu(&fake_gpu_program);
    expect(run_toy("--skip-invalid", "--no-header", f, NULL), HMMRT_EXIT_SKIPPED,
           "a\t2.000000\t-1.000000\tg32\t0.000000\n"
           "c\t1.000000\t0.000000\tg3\t2.000000\n",
           err);
}

/* The sequence after the invalid one is neither scored nor printed. */
static void test_gpu_invalid_symbol_stops_the_run(void **state)
{
    const char *f = temp_file(bad_second);
    char out[512], err[1024];
    snprintf(out, sizeof out,
             "a\t2.000000\t-1.000000\tg32\t0.000000\n"
             "# incomplete: stopped at sequence b (%s line 3)\n",
             f);
    snprintf(err, sizeof err,
             "fake gpu: 3 sequences, 1 scored, ordered\n"
             "toy: error: %s:4: sequence b: symbol 'X' at position 2 (1-based) is not in the "
             "alphabet of model dna [A, C, G, T]; fix the input or pass --skip-invalid to skip "
             "such sequences\n",
             f);
    use_gpu(&fake_gpu_program);
    expect(run_toy("--no-header", f, NULL), HMMRT_EXIT_INPUT, out, err);
}

/* A device error loses its whole batch: here a, b and c (d is skipped, so
 * the batch sent ends at c); the rows before the batch stay complete. */
/* The input of two GPU batches: 2^18 + 3 records, each "ACG" but for the
 * record at `bad` ("AXG") and the record at `long13` (13 symbols: the fake
 * GPU fails on it); -1 for neither. Rows expected before record `until`. */
static void two_batches(hmmrt_buf *input, hmmrt_buf *rows, int bad, int long13, int until)
{
    for (int i = 0; i < (1 << 18) + 3; i++) {
        char line[128];
        snprintf(line, sizeof line, ">s%d\n%s\n", i,
                 i == bad ? "AXG" : i == long13 ? "ACGTACGTACGTA" : "ACG");
        hmmrt_buf_puts(input, line);
        snprintf(line, sizeof line, "s%d\t3\t-3\tg321\t%d\n", i, i);
        if (i < until)
            hmmrt_buf_puts(rows, line);
    }
}

/* The printer prints batch 1 while batch 2 is scored: a stop in batch 1
 * ends the run there, and batch 2 is neither printed nor scored. */
static void test_gpu_stop_in_the_first_of_two_batches(void **state)
{
    hmmrt_buf input = {0}, rows = {0};
    two_batches(&input, &rows, 1000, -1, 1000);
    const char *f = temp_file(input.data);
    char incomplete[256];
    snprintf(incomplete, sizeof incomplete, "# incomplete: stopped at sequence s1000 (%s line 2001)\n",
             f);
    hmmrt_buf_puts(&rows, incomplete);
    use_gpu(&fake_gpu_program);
    run_toy("--decimals", "0", "--no-header", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_INPUT);
    assert_string_equal(last.out, rows.data);
    assert_int_equal(count_lines_with(last.err, "fake gpu:"), 1);
    assert_non_null(strstr(last.err, ":2002: sequence s1000: symbol 'X' at position 2"));
    hmmrt_buf_free(&input);
    hmmrt_buf_free(&rows);
}

/* A GPU error in batch 2 is reported after batch 1 is printed whole, and
 * the output then says where it stopped. */
static void test_gpu_error_in_the_second_batch(void **state)
{
    hmmrt_buf input = {0}, rows = {0};
    two_batches(&input, &rows, -1, (1 << 18) + 1, 1 << 18);
    const char *f = temp_file(input.data);
    char incomplete[256];
    snprintf(incomplete, sizeof incomplete,
             "# incomplete: stopped at sequence s262144 (%s line 524289)\n", f);
    hmmrt_buf_puts(&rows, incomplete);
    use_gpu(&fake_gpu_program);
    run_toy("--decimals", "0", "--no-header", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_INTERNAL);
    assert_string_equal(last.out, rows.data);
    assert_non_null(strstr(last.err, "toy: error: GPU: cudaMemcpyAsync failed"));
    hmmrt_buf_free(&input);
    hmmrt_buf_free(&rows);
}

static void test_gpu_error_stops_the_run(void **state)
{
    const char *f = temp_file(">a\nA\n");
    const char *g = temp_file(">b\nACGTACGTACGTA\n>c\nA\n>d\nAX\n");
    char out[512], err[1024];
    snprintf(out, sizeof out, "# incomplete: stopped at sequence a (%s line 1)\n", f);
    snprintf(err, sizeof err,
             "toy: error: GPU: cudaMemcpyAsync failed: an illegal memory access was encountered "
             "(batch 1, chunk 1 of 1); in the batch of sequences a (%s line 1) to c (%s line 3)\n",
             f, g);
    use_gpu(&fake_gpu_program);
    expect(run_toy("--no-header", "--skip-invalid", f, g, NULL), HMMRT_EXIT_INTERNAL, out, err);
}

/* More records than a GPU batch holds (2^18): the second batch, read while
 * the first is scored, keeps the order. */
static void test_gpu_batches(void **state)
{
    enum { N = (1 << 18) + 3 };
    hmmrt_buf input = {0}, expected = {0};
    for (int i = 0; i < N; i++) {
        char line[128];
        int length = i % 3;
        snprintf(line, sizeof line, ">s%d\n%.*s\n", i, length, "CC");
        hmmrt_buf_puts(&input, line);
        if (length == 0) /* -inf in float: scored again in double */
            snprintf(line, sizeof line, "s%d\t0\t-inf\tgd\t%d\n", i, i);
        else
            snprintf(line, sizeof line, "s%d\t%d\t%d\tg%.*s\t%d\n", i, length, -length,
                     length, "22", i);
        hmmrt_buf_puts(&expected, line);
    }
    const char *f = temp_file(input.data);
    use_gpu(&fake_gpu_program);
    expect(run_toy("--decimals", "0", "--no-header", f, NULL), HMMRT_EXIT_OK, expected.data,
           "fake gpu: 262144 sequences, 262144 scored, ordered\n"
           "fake gpu: 262144 sequences, 87382 scored\n"
           "fake gpu: 3 sequences, 3 scored, ordered\n"
           "fake gpu: 3 sequences, 1 scored\n");
    hmmrt_buf_free(&input);
    hmmrt_buf_free(&expected);
}

/* ---- staging for the GPU ---------------------------------------------------------- */

/* toy of one alphabet: column 2 shows the dna codes */
static const hmmrt_column toy1_columns[] = {
    {"length(dna).score", HMMRT_FIELD_SCORE, NULL, 0, 0},
    {"sum(dna).score", HMMRT_FIELD_SCORE, NULL, 0, 0},
    {"codes(dna).traceback", HMMRT_FIELD_TEXT, NULL, 0, 0},
    {"index", HMMRT_FIELD_SCORE, NULL, 0, 0},
};

static void use_toy1_on_gpu(void)
{
    use_gpu(&fake_gpu_program);
    rev_alphabet = 0;
    program_under_test.n_alphabets = 1;
    program_under_test.n_models = 1;
    program_under_test.columns = toy1_columns;
}

/* page-locked memory as a GPU driver lends it (pinned.c), here malloc's */
static void *lent_alloc(size_t bytes) { return malloc(bytes); }
static void lent_free(void *p) { free(p); }

/* Where the GPU lends page-locked memory, the batch's codes are staged in
 * the layout of its chunks (check_staged), in both the one-pass reader's
 * way (toy1: copied from the records) and the two passes' (toy: mapped
 * there), and the rows do not change; without it, nothing is staged and the
 * one-pass reader's codes are handed over where they are. */
static void test_gpu_staged_codes(void **state)
{
    const char *f = temp_file(three_records);
    const char *rows1 = "a\t4.000000\t-6.000000\tg0123\t0.000000\n"
                        "b\t3.000000\t-3.000000\tg012\t1.000000\n"
                        "e\t0.000000\t-inf\tgd\t2.000000\n";
    use_toy1_on_gpu();
    expect(run_toy("--no-header", f, NULL), HMMRT_EXIT_OK, rows1,
           "fake gpu: 3 sequences, 3 scored, ordered\n"
           "fake gpu: 3 sequences, 1 scored\n");
    hmmrt_set_pinned_allocator(lent_alloc, lent_free);
    /* by default the driver packs (pinned.c says why) */
    expect(run_toy("--no-header", f, NULL), HMMRT_EXIT_OK, rows1,
           "fake gpu: 3 sequences, 3 scored, ordered\n"
           "fake gpu: 3 sequences, 1 scored\n");
    setenv("HMMRT_GPU_STAGE", "on", 1);
    expect(run_toy("--no-header", f, NULL), HMMRT_EXIT_OK, rows1,
           "fake gpu: 3 sequences, 3 scored, ordered, staged\n"
           "fake gpu: 3 sequences, 1 scored, staged\n");
    use_gpu(&fake_gpu_program);
    expect(run_toy(f, NULL), HMMRT_EXIT_OK, HEADER GPU_ROWS,
           "fake gpu: 3 sequences, 3 scored, ordered, staged\n"
           "fake gpu: 3 sequences, 1 scored, staged\n");
    /* a skipped sequence leaves a gap in the layout: still its codes there */
    const char *g = temp_file(bad_second);
    char err[1024];
    snprintf(err, sizeof err,
             "fake gpu: 3 sequences, 2 scored, ordered, staged\n"
             "toy: warning: %s:4: sequence b: symbol 'X' at position 2 (1-based) is not in the "
             "alphabet of model dna [A, C, G, T]; skipped\n"
             "toy: warning: 1 sequence was skipped\n",
             g);
    use_toy1_on_gpu();
    expect(run_toy("--skip-invalid", "--no-header", g, NULL), HMMRT_EXIT_SKIPPED,
           "a\t2.000000\t-1.000000\tg01\t0.000000\n"
           "c\t1.000000\t0.000000\tg0\t2.000000\n",
           err);
    hmmrt_set_pinned_allocator(NULL, NULL);
    unsetenv("HMMRT_GPU_STAGE");
    use_gpu(&fake_gpu_program);
}

/* Batches read on the reader's thread while the one before is scored are
 * staged there, longest first, in the buffers of the work they take turns in. */
static void test_gpu_staged_batches(void **state)
{
    enum { N = (1 << 18) + 3 };
    hmmrt_buf input = {0}, expected = {0};
    for (int i = 0; i < N; i++) {
        char line[128];
        int length = (i * 7) % 40;
        if (length == 13) /* the fake's device error */
            length = 14;
        snprintf(line, sizeof line, ">s%d\n%.*s\n", i, length,
                 "ACGTTGCAACGTTGCAACGTTGCAACGTTGCAACGTTGCA");
        hmmrt_buf_puts(&input, line);
        long sum = 0;
        for (int k = 0; k < length; k++)
            sum += "\0\1\2\3\3\2\1\0"[k % 8];
        if (length == 0)
            snprintf(line, sizeof line, "s%d\t0\t-inf\tgd\t%d\n", i, i);
        else
            snprintf(line, sizeof line, "s%d\t%d\t%ld\tg%.*s\t%d\n", i, length, -sum,
                     length < 12 ? length : 12, "012332100123", i);
        hmmrt_buf_puts(&expected, line);
    }
    const char *f = temp_file(input.data);
    use_toy1_on_gpu();
    hmmrt_set_pinned_allocator(lent_alloc, lent_free);
    setenv("HMMRT_GPU_STAGE", "on", 1);
    expect(run_toy("--decimals", "0", "--no-header", f, NULL), HMMRT_EXIT_OK, expected.data,
           "fake gpu: 262144 sequences, 262144 scored, ordered, staged\n"
           "fake gpu: 262144 sequences, 6554 scored, staged\n"
           "fake gpu: 3 sequences, 3 scored, ordered, staged\n");
    hmmrt_set_pinned_allocator(NULL, NULL);
    unsetenv("HMMRT_GPU_STAGE");
    use_gpu(&fake_gpu_program);
    hmmrt_buf_free(&input);
    hmmrt_buf_free(&expected);
}

static void test_timing(void **state)
{
    const char *f = temp_file(three_records);
    run_toy("--timing", "--threads", "1", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_OK);
    assert_string_equal(last.out, HEADER CPU_ROWS);
    const char *cpu_lines[] = {"toy: timing: 3 sequences read (7 symbols), 3 scored (7 symbols)\n",
                               "  phase ", "\n  reading (overlaps the rest) ",
                               "\n  map+score+format (CPU, 1 thread) ", "\n  writing ",
                               "\n  total, end to end "};
    for (size_t i = 0; i < sizeof cpu_lines / sizeof cpu_lines[0]; i++)
        if (!strstr(last.err, cpu_lines[i]))
            fail_msg("--timing on the CPU does not print '%s': %s", cpu_lines[i], last.err);
    use_gpu(&fake_gpu_program);
    run_toy("--timing", f, NULL);
    assert_int_equal(last.status, HMMRT_EXIT_OK);
    assert_string_equal(last.out, HEADER GPU_ROWS);
    const char *gpu_lines[] = {"\n  mapping, ordering by length ",
                               "\n    of which placing (page-locked) ",
                               "\n    of which mapping ", "\n    of which ordering by length ",
                               "\n  scoring (GPU) ", "\n  formatting ",
                               "\n  waiting (GPU, reader, printer) ",
                               "\n  opening the GPU (overlaps reading) ",
                               "\nfake gpu report\n",
                               "\n  1 sequence scored -inf or beyond float's range, rescored in double\n"};
    for (size_t i = 0; i < sizeof gpu_lines / sizeof gpu_lines[0]; i++)
        if (!strstr(last.err, gpu_lines[i]))
            fail_msg("--timing on the GPU does not print '%s': %s", gpu_lines[i], last.err);
}

static void test_gpu_options_on_the_c_target(void **state)
{
    const char *f = temp_file(three_records);
    run_toy("--device", "1", f, NULL);
    expect_usage_error("toy: error: --device applies only to programs built for the GPU; this "
                       "one was built for the C target (rebuild with hmmc --target=cuda)\n");
    run_toy("--double", f, NULL);
    expect_usage_error("toy: error: --double applies only to programs built for the GPU; this "
                       "one was built for the C target (rebuild with hmmc --target=cuda)\n");
    use_gpu(&fake_gpu_program);
    run_toy("--device", "first", f, NULL);
    expect_usage_error("toy: error: --device takes a GPU number from 0 to 1023, not 'first'\n");
    run_toy("--double=yes", f, NULL);
    expect_usage_error("toy: error: --double takes no value\n");
}

static void test_help_documents_gpu_options(void **state)
{
    const char *wanted[] = {"--cpu ", "--device N ", "--double ", "--timing ",
                            "hmmc --target=cuda"};
    run_toy("--help", NULL);
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++)
        if (!strstr(last.out, wanted[i]))
            fail_msg("--help does not mention '%s'", wanted[i]);
    use_gpu(&fake_gpu_program);
    run_toy("--help", NULL);
    assert_non_null(strstr(last.out, "Without a usable GPU it says why and scores on the CPU."));
    assert_null(strstr(last.out, "hmmc --target=cuda"));
}

int main(void)
{
    program_under_test = toy;
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
        T(test_duplicate_names),
        T(test_malformed_fasta),
        T(test_missing_file_stops_before_scoring),
        T(test_gpu_that_does_not_open_while_reading),
        T(test_out_of_memory_in_scoring),
        T(test_usage_errors),
        T(test_train_usage_errors),
        T(test_double_dash_ends_options),
        T(test_help),
        T(test_version),
        T(test_full_disk),
        T(test_closed_pipe),
        T(test_progress_line),
        T(test_sample_through_main),
        T(test_gpu_scores_rows_in_input_order),
        T(test_gpu_double),
        T(test_gpu_sum_beyond_double_goes_to_the_cpu),
        T(test_gpu_program_that_needs_double),
        T(test_gpu_stop_in_the_first_of_two_batches),
        T(test_gpu_error_in_the_second_batch),
        T(test_no_gpu_falls_back_to_the_cpu),
        T(test_several_gpus),
        T(test_cpu_option_and_cpu_only_programs),
        T(test_gpu_skip_invalid),
        T(test_gpu_invalid_symbol_stops_the_run),
        T(test_gpu_error_stops_the_run),
        T(test_gpu_batches),
        T(test_gpu_staged_codes),
        T(test_gpu_staged_batches),
        T(test_timing),
        T(test_gpu_options_on_the_c_target),
        T(test_help_documents_gpu_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
