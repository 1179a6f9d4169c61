/* scan_driver.c: the GPU scan's driver half (runtime/gpu/scan_gpu.c) on the
 * CPU, the CUDA calls it makes stood in for here (device memory is host
 * memory, the kernel scan_chunk.h's thread run for every thread): the rule,
 * the rows, float and double, a hand-written model and hmmc's casino with
 * its traceback, against one thread. Run by tests/emulate/scan-driver. */
#include "driver.h"
#include "hmmrt_scan.h"
#include "scan_chunk.h"
#include "gpu/scan_gpu.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the CUDA runtime, stood in for ---------------------------------------------- */

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    *value = attr == cudaDevAttrMaxThreadsPerMultiProcessor ? 2048 : 0;
    return cudaSuccess;
}
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = malloc(bytes);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *to, const void *from, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    memcpy(to, from, bytes);
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = NULL;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    *ms = 0;
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { return cudaSuccess; }

int gpu_error(hmmrt_gpu *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    return -1;
}
int gpu_check(hmmrt_gpu *g, cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "%s failed\n", what);
    return -1;
}

static int64_t threads_run;

/* the kernel: every thread, one after another, on the job's (host) memory */
int hmmrt_scan_gpu_launch(const hmmrt_scan_gpu_job *job)
{
    int K = job->n_symbols, nb = job->nb;
    size_t cells = (size_t)K * nb * nb;
    /* the device buffer's layout (scan_gpu.c): the matrices, then me or mo */
    for (int64_t t = 0; t < job->n_chunks * nb; t++) {
        if (job->use_double)
            hmmrt_scan_thread_d(nb, job->m, job->me, job->mo, job->max_plus, job->backward,
                                job->codes, job->len, job->chunk, t, job->out, job->out_scale,
                                job->status);
        else
            hmmrt_scan_thread_f(nb, job->m, job->me, job->mo, job->max_plus, job->backward,
                                job->codes, job->len, job->chunk, t, job->out, job->out_scale,
                                job->status);
    }
    threads_run += job->n_chunks * nb;
    (void)cells;
    return cudaSuccess;
}
size_t hmmrt_scan_gpu_shared(int nb, int n_symbols, int use_double) { return 0; }

/* ---- the model ------------------------------------------------------------------------ */
enum { N = 4, NB = 2 };
static const int boundary[NB] = {1, 2};
static const double hand_emit[2][2] = {{0.7, 0.2}, {0.3, 0.8}};

static double sum_span(const void *xs, int64_t L, int64_t i0, int64_t i1, double *columns,
                       int64_t *scale, int first)
{
    const uint8_t *x = xs;
    double *cur = columns, *prev = columns + N;
    if (first) {
        *scale = -960;
        memset(cur, 0, sizeof(double) * N);
        cur[0] = 0x1p960;
    }
    for (int64_t i = i0; i < i1; i++) {
        double *swap = prev;
        prev = cur;
        cur = swap;
        const double *e = hand_emit[x[i]];
        cur[0] = 0;
        cur[1] = e[0] * (prev[0] + 0.9 * prev[1] + 0.15 * prev[2]);
        cur[2] = e[1] * (0.1 * prev[1] + 0.8 * prev[2]);
        cur[3] = 0.05 * cur[2];
        double sum = cur[0] + cur[1] + cur[2] + cur[3];
        if (!(sum > 0))
            return -INFINITY;
        int ex;
        frexp(sum, &ex);
        for (int s = 0; s < N; s++)
            cur[s] = ldexp(cur[s], 960 - ex);
        *scale += ex - 960;
    }
    if (cur != columns)
        memcpy(columns, cur, sizeof(double) * N);
    return 0;
}

static void max_span(const void *xs, int64_t L, int64_t i0, int64_t i1, double *columns,
                     double *offset, int first)
{
    const uint8_t *x = xs;
    double *cur = columns, *prev = columns + N;
    if (first) {
        for (int s = 0; s < N; s++)
            cur[s] = -INFINITY;
        cur[0] = 0;
        offset[0] = offset[1] = 0;
    }
    for (int64_t i = i0; i < i1; i++) {
        double *swap = prev;
        prev = cur;
        cur = swap;
        /* as generated code does: the previous column's best taken out into
           the offset, summed with its rounding error kept (Neumaier) */
        double top = fmax(fmax(prev[0], prev[1]), fmax(prev[2], prev[3]));
        top = top > -INFINITY ? top : 0;
        double sum = offset[0] + top;
        offset[1] += fabs(offset[0]) >= fabs(top) ? (offset[0] - sum) + top : (top - sum) + offset[0];
        offset[0] = sum;
        const double *e = hand_emit[x[i]];
        cur[0] = -INFINITY;
        cur[1] = fmax(prev[0] - top, fmax(prev[1] - top + log(0.9), prev[2] - top + log(0.15))) +
                 log(e[0]);
        cur[2] = fmax(prev[1] - top + log(0.1), prev[2] - top + log(0.8)) + log(e[1]);
        cur[3] = cur[2] + log(0.05);
    }
    if (cur != columns)
        memcpy(columns, cur, sizeof(double) * N);
}

static const hmmrt_scan_call fw = {.label = "forward(m)", .n_states = N, .n_boundary = NB,
                                   .boundary = boundary, .last = 3, .sum_span = sum_span};
static const hmmrt_scan_call vt = {.label = "viterbi(m)", .n_states = N, .n_boundary = NB,
                                   .boundary = boundary, .last = 3, .max_span = max_span};
static const hmmrt_scan_call *const hand_scan_calls[] = {&fw, &vt};
static const int col0[] = {0}, col1[] = {1};
static const unsigned char score_kind[] = {HMMRT_OUT_SCORE};
static const hmmrt_gpu_call hand_calls[] = {
    {.label = "forward(m)", .alphabet = 0, .n_states = N, .n_outputs = 1, .output_column = col0,
     .output_kind = score_kind},
    {.label = "viterbi(m)", .alphabet = 0, .n_states = N, .n_outputs = 1, .output_column = col1,
     .output_kind = score_kind},
};
static const char *const hand_alphabets[] = {"ab"};

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL scan-driver: %s\n", what);
        failures++;
    }
}

/* one batch: sequences of the given lengths (sorted longest first) */
static void batch(int use_double, const char *mode, const int64_t *lengths, int n, int64_t want)
{
    hmmrt_gpu_program gp = {.n_calls = 2, .calls = hand_calls};
    hmmrt_program prog = {.n_alphabets = 1, .alphabets = hand_alphabets, .n_columns = 2,
                          .n_scan_calls = 2, .scan_calls = hand_scan_calls, .gpu = &gp};
    hmmrt_gpu g;
    memset(&g, 0, sizeof g);
    g.prog = &prog;
    g.gp = &gp;
    g.use_double = use_double;
    g.multiprocessors = 132;
    int64_t offsets[8], order[8], sorted[8], total = 0;
    for (int i = 0; i < n; i++) {
        offsets[i] = total;
        total += lengths[i];
        order[i] = i;
        sorted[i] = lengths[i];
    }
    uint8_t *codes = malloc((size_t)total);
    srand(9);
    for (int64_t k = 0; k < total; k++)
        codes[k] = (uint8_t)(rand() % 2);
    const uint8_t *per_alphabet[1] = {codes};
    hmmrt_value values[16];
    memset(values, 0, sizeof values);
    for (int k = 0; k < 2 * n; k++)
        values[k].score = 12345; /* not written: stays */
    hmmrt_gpu_input in = {.n = n, .lengths = lengths, .offsets = offsets, .codes = per_alphabet,
                          .values = values, .order = order, .n_ordered = n};
    g.in = &in;
    g.order = order;
    g.sorted_lengths = sorted;
    hmmrt_scan_set_mode(mode);
    char what[256];
    expect(gpu_scan_open(&g) == 0, "gpu_scan_open");
    int64_t got = gpu_scan_batch(&g, n);
    snprintf(what, sizeof what, "%s, %s: %lld sequences scanned, expected %lld", mode,
             use_double ? "double" : "float", (long long)got, (long long)want);
    expect(got == want, what);
    for (int i = 0; i < n; i++) {
        double columns[2 * N], offset[2];
        int64_t scale;
        const uint8_t *x = codes + offsets[i];
        sum_span(x, lengths[i], 0, lengths[i], columns, &scale, 1);
        double f = log(columns[3]) + (double)scale * log(2.0);
        max_span(x, lengths[i], 0, lengths[i], columns, offset, 1);
        double v = columns[3] + offset[0] + offset[1];
        double tol_f = use_double ? 1e-12 * fabs(f) : 1e-5 * fabs(f) + 1e-8 * (double)lengths[i];
        double tol_v = use_double ? 1e-12 * fabs(v) : 1e-5 * fabs(v) + 1e-8 * (double)lengths[i];
        if (i < want) {
            snprintf(what, sizeof what, "%s, %s: sequence %d (%lld symbols): forward %.9f "
                     "against %.9f, viterbi %.9f against %.9f", mode,
                     use_double ? "double" : "float", i, (long long)lengths[i],
                     values[2 * i].score, f, values[2 * i + 1].score, v);
            expect(fabs(values[2 * i].score - f) <= tol_f &&
                       fabs(values[2 * i + 1].score - v) <= tol_v, what);
        } else {
            snprintf(what, sizeof what, "%s: sequence %d was written though not scanned", mode, i);
            expect(values[2 * i].score == 12345 && values[2 * i + 1].score == 12345, what);
        }
    }
    gpu_scan_report(&g, stdout);
    gpu_scan_close(&g);
    free(codes);
}

#ifdef HMMC_PROGRAM
/* ---- the casino as hmmc writes it (--target=c), with a traceback --------------------- */
#define main generated_main
#include HMMC_PROGRAM
#undef main

static void casino(int use_double)
{
    enum { L = 200000 };
    static uint8_t x[L];
    srand(21);
    int loaded = 0;
    for (int i = 0; i < L; i++) { /* stretches of a loaded die */
        if (rand() % 100 == 0)
            loaded = !loaded;
        x[i] = (uint8_t)(loaded && rand() % 2 ? 5 : rand() % 6);
    }
    const uint8_t *per_alphabet[1] = {x};
    hmmrt_value want[3], got[3];
    memset(want, 0, sizeof want);
    memset(got, 0, sizeof got);
    hmmrt_scratch scratch = {0};
    hmmrt_seq seq = {.name = "long", .codes = per_alphabet, .length = L};
    hmmrt_scan_set_mode("off");
    program.score_cpu(&seq, want, &scratch);
    static const int c0_col[] = {0}, c1_cols[] = {1, 2};
    static const unsigned char c0_kind[] = {HMMRT_OUT_SCORE},
                               c1_kind[] = {HMMRT_OUT_SCORE, HMMRT_OUT_TRACEBACK};
    const hmmrt_gpu_call gcalls[] = {
        {.label = "forward(casino)", .alphabet = 0, .n_states = 4, .n_outputs = 1,
         .output_column = c0_col, .output_kind = c0_kind},
        {.label = "viterbi(casino)", .alphabet = 0, .n_states = 4, .bp_bytes = 1,
         .paths = &c1_paths, .n_outputs = 2, .output_column = c1_cols, .output_kind = c1_kind},
    };
    hmmrt_gpu_program gp = {.n_calls = 2, .calls = gcalls};
    hmmrt_program prog = program;
    prog.gpu = &gp;
    hmmrt_gpu g;
    memset(&g, 0, sizeof g);
    g.prog = &prog;
    g.gp = &gp;
    g.use_double = use_double;
    g.multiprocessors = 132;
    int64_t lengths[1] = {L}, offsets[1] = {0}, order[1] = {0}, sorted[1] = {L};
    hmmrt_gpu_input in = {.n = 1, .lengths = lengths, .offsets = offsets, .codes = per_alphabet,
                          .values = got, .order = order, .n_ordered = 1};
    g.in = &in;
    g.order = order;
    g.sorted_lengths = sorted;
    hmmrt_scan_set_mode("auto");
    expect(gpu_scan_open(&g) == 0, "gpu_scan_open (casino)");
    expect(gpu_scan_batch(&g, 1) == 1, "the casino's long sequence takes the scan");
    char what[512];
    double tol = use_double ? 1e-12 : 1e-5;
    for (int c = 0; c < 2; c++) {
        snprintf(what, sizeof what, "casino, %s: score %d: %.9f against %.9f",
                 use_double ? "double" : "float", c, got[c].score, want[c].score);
        expect(fabs(got[c].score - want[c].score) <= tol * fabs(want[c].score) + 1e-8 * L, what);
    }
    snprintf(what, sizeof what, "casino, %s: the traceback (%zu bytes) differs from one "
             "thread's (%zu bytes)", use_double ? "double" : "float", got[2].text.len,
             want[2].text.len);
    expect(got[2].text.len == want[2].text.len && got[2].text.len > 0 &&
               memcmp(got[2].text.data, want[2].text.data, want[2].text.len) == 0, what);
    gpu_scan_report(&g, stdout);
    gpu_scan_close(&g);
    for (int c = 0; c < 3; c++) {
        hmmrt_buf_free(&want[c].text);
        hmmrt_buf_free(&got[c].text);
    }
    hmmrt_scratch_free(&scratch);
}
#endif

int main(void)
{
#ifdef HMMC_PROGRAM
    casino(0);
    casino(1);
#endif
    int64_t mixed[3] = {300000, 1000, 50};
    batch(0, "auto", mixed, 3, 1);
    batch(1, "auto", mixed, 3, 1);
    batch(0, "on", mixed, 3, 3);
    batch(1, "on", mixed, 3, 3);
    batch(0, "off", mixed, 3, 0);
    int64_t tiny[2] = {3, 2};
    batch(0, "on", tiny, 2, 1);
    /* 8 sequences of 70,000 symbols: auto scans each (4 x 560,000 / 270,336 < 70,000) */
    int64_t many[8] = {70000, 70000, 70000, 70000, 70000, 70000, 70000, 70000};
    batch(0, "auto", many, 8, 8);
    printf("scan-driver: %s (%lld kernel threads run)\n", failures ? "FAILED" : "ok",
           (long long)threads_run);
    return failures ? 1 : 0;
}
