/* real_score.c: the scoring run of a program over real observations
 * (hmmrt_program.real_dim > 0): each file is read whole in the text form
 * (real_read.c), its sequences scored on the GPU where the program has a
 * GPU path for them (runtime/gpu/real_gpu.c) or else on every core, and the
 * rows printed in input order; a malformed observation stops the run after
 * the rows of the sequences before it, as the FASTA path stops. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hmmrt_gpu.h"
#include "real_read.h"

enum { OUTPUT_BUFFER = 1 << 20 };

/* Per column, the sequences whose forward or backward score came out -inf
 * though the model gives them a path (possible_from): the sum lies beyond
 * what the columns' scaling holds (a density e^-11355 and more below the
 * position's largest, on every path), not 0. */
static long long *below_range;

static void count_below_range(const hmmrt_program *prog, const hmmrt_real_file *f,
                              const hmmrt_value *values)
{
    for (int64_t i = 0; i < f->n; i++)
        for (int c = 0; c < prog->n_columns; c++) {
            long from = prog->columns[c].possible_from;
            if (from > 0 && f->seqs[i].length >= from &&
                values[i * prog->n_columns + c].score == -INFINITY)
                below_range[c]++;
        }
}

static void warn_below_range(const hmmrt_program *prog)
{
    for (int c = 0; c < prog->n_columns; c++) {
        long long n = below_range[c];
        if (n > 0)
            hmmrt_warning("%lld sequence%s scored -inf in %s, but its model gives every sequence "
                          "of %ld or more observations a path: %s probabilit%s not 0 but beyond "
                          "what a long double holds in one scale per position (a density about "
                          "e^-11355 or more below the likeliest at some position, on every "
                          "path); read such a -inf as far below any threshold",
                          n, n == 1 ? "" : "s", prog->columns[c].label,
                          prog->columns[c].possible_from, n == 1 ? "its" : "their",
                          n == 1 ? "y is" : "ies are");
    }
}

/* The GPU path of the run (NULL: every sequence on the CPU). */
static void *real_gpu;

/* Scores the n sequences of f into values (n rows of n_columns); failed[i]
 * is score_cpu's result for sequence i. Those the GPU scored (done[i]) are
 * left as they are. */
static void score_file(const hmmrt_program *prog, const hmmrt_real_file *f, int64_t first_index,
                       hmmrt_value *values, int *failed, const unsigned char *done, int threads)
{
    const int n_columns = prog->n_columns;
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
    {
        hmmrt_scratch scratch = {0};
#pragma omp for schedule(dynamic, 1)
        for (int64_t i = 0; i < f->n; i++) {
            if (done[i])
                continue;
            const hmmrt_real_seq *s = &f->seqs[i];
            hmmrt_seq seq = {.name = s->name, .codes = NULL, .length = s->length,
                             .index = first_index + i, .obs = s->obs};
            failed[i] = prog->score_cpu(&seq, values + i * n_columns, &scratch);
        }
        hmmrt_scratch_free(&scratch);
    }
}

/* Prints the rows of f's sequences in order; stops at the first that failed
 * (status 5). Returns 0 or the exit status. */
static int print_file(const hmmrt_program *prog, const hmmrt_real_file *f, const char *path,
                      hmmrt_value *values, const int *failed, hmmrt_out *out)
{
    hmmrt_buf row = {0};
    int status = 0;
    for (int64_t i = 0; i < f->n && status == 0; i++) {
        const hmmrt_real_seq *s = &f->seqs[i];
        if (failed[i]) {
            hmmrt_error("%s:%ld: %s while scoring sequence %s (%lld observations)", path,
                        s->line, failed[i] == 1 ? "out of memory" : "an internal error",
                        s->name, (long long)s->length);
            char where[1024];
            snprintf(where, sizeof where, "sequence %s (%s line %ld)", s->name, path, s->line);
            hmmrt_out_incomplete(out, where);
            status = HMMRT_EXIT_INTERNAL;
            break;
        }
        hmmrt_buf_reset(&row);
        hmmrt_format_row(&row, prog, s->name, values + i * prog->n_columns);
        if (hmmrt_buf_take_failure()) {
            hmmrt_error("out of memory while writing the row of sequence %s", s->name);
            status = HMMRT_EXIT_INTERNAL;
            break;
        }
        hmmrt_out_write(out, row.data, row.len);
    }
    hmmrt_buf_free(&row);
    return status;
}

/* Reads, scores and prints one file: 0 or the exit status. */
static int run_file(const hmmrt_program *prog, const hmmrt_options *o, const char *path,
                    int64_t *index, hmmrt_out *out)
{
    hmmrt_real_file f;
    char err[2048];
    int read_status = hmmrt_real_read(path, prog->real_dim, &f, err, sizeof err);
    size_t cells = (size_t)(f.n > 0 ? f.n : 1) * (size_t)prog->n_columns;
    hmmrt_value *values = calloc(cells ? cells : 1, sizeof *values);
    int *failed = calloc((size_t)(f.n > 0 ? f.n : 1), sizeof *failed);
    unsigned char *done = calloc((size_t)(f.n > 0 ? f.n : 1), 1);
    int status = 0;
    if (!values || !failed || !done) {
        hmmrt_error("%s: out of memory for the scores of %lld sequences", path, (long long)f.n);
        hmmrt_out_incomplete(out, path);
        status = HMMRT_EXIT_INTERNAL;
    } else {
        for (size_t c = 0; c < cells; c++)
            values[c].score = NAN;
        if (real_gpu && prog->gpu->real_score(real_gpu, &f, values, done, err, sizeof err) != 0) {
            /* what the GPU scored stands; the rest, on the CPU */
            hmmrt_note("%s; the rest of %s on the CPU", err, path);
            prog->gpu->real_close(real_gpu);
            real_gpu = NULL;
        }
        score_file(prog, &f, *index, values, failed, done, o->threads);
        count_below_range(prog, &f, values);
        status = print_file(prog, &f, path, values, failed, out);
        for (size_t c = 0; c < cells; c++)
            hmmrt_buf_free(&values[c].text);
    }
    *index += f.n;
    if (status == 0 && read_status != 0) {
        hmmrt_error("%s", err);
        char where[1024];
        if (f.error_line > 0)
            snprintf(where, sizeof where, "%s line %ld", path, f.error_line);
        else
            snprintf(where, sizeof where, "%s", path);
        hmmrt_out_incomplete(out, where);
        status = f.out_of_memory ? HMMRT_EXIT_INTERNAL : HMMRT_EXIT_INPUT;
    }
    free(values);
    free(failed);
    free(done);
    hmmrt_real_free(&f);
    return status;
}

int hmmrt_score_real_files(const hmmrt_program *prog, const hmmrt_options *o)
{
    hmmrt_set_decimals(o->decimals);
    const hmmrt_gpu_program *gpu = prog->gpu;
    real_gpu = NULL;
    if (gpu && gpu->n_real_calls > 0 && !o->cpu) {
        char why[1024];
        real_gpu = gpu->real_open(prog, o->device, o->use_double, why, sizeof why);
        if (!real_gpu && strncmp(why, "model ", 6) == 0) /* real_gpu_model.c's refusal */
            hmmrt_note("scoring on the CPU: the GPU path over real observations does not take "
                       "%s", why);
        else if (!real_gpu)
            hmmrt_note("no usable GPU (%s); scoring on the CPU", why);
    } else if (gpu && gpu->cpu_only && !o->cpu) {
        hmmrt_note("scoring on the CPU: %s", gpu->cpu_only);
    }
    hmmrt_out out;
    if (hmmrt_out_open(&out, STDOUT_FILENO, OUTPUT_BUFFER) != 0) {
        hmmrt_error("out of memory for the output buffer");
        return HMMRT_EXIT_INTERNAL;
    }
    hmmrt_out_catch_signals(&out);
    if (o->header)
        hmmrt_out_header(&out, prog);
    int status = 0;
    int64_t index = 0;
    below_range = calloc((size_t)(prog->n_columns > 0 ? prog->n_columns : 1), sizeof *below_range);
    if (!below_range) {
        hmmrt_out_close(&out);
        hmmrt_error("out of memory");
        return HMMRT_EXIT_INTERNAL;
    }
    for (int i = 0; i < o->n_files && status == 0; i++)
        status = run_file(prog, o, o->files[i], &index, &out);
    warn_below_range(prog);
    free(below_range);
    if (real_gpu) {
        if (o->timing)
            gpu->real_report(real_gpu, stderr);
        gpu->real_close(real_gpu);
        real_gpu = NULL;
    }
    if (hmmrt_out_flush(&out) != 0 && status == 0)
        status = HMMRT_EXIT_OUTPUT;
    hmmrt_out_release_signals();
    hmmrt_out_close(&out);
    return status;
}
