/* chunk_driver.c: the GPU driver's chunks (runtime/gpu/chunks.c) on the CPU,
 * the CUDA calls stood in for (device memory is host memory): a batch staged
 * as score_batch.c stages it is copied to the "device" as it lies, else
 * packed; either way a kernel must find each chunk's codes at its offsets,
 * zero-padded, and the zero piece after them. Run by tests/emulate/chunk-driver. */
#include "driver.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL chunk-driver: %s\n", what);
        failures++;
    }
}

/* ---- the CUDA runtime and the driver's other files, stood in for ------------------- */

cudaError_t cudaMemcpyAsync(void *to, const void *from, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    memcpy(to, from, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *to, int value, size_t bytes, cudaStream_t stream)
{
    memset(to, value, bytes);
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { return cudaSuccess; }
cudaError_t cudaGetLastError(void) { return cudaSuccess; }

int gpu_error(hmmrt_gpu *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    return -1;
}
int gpu_fail(hmmrt_gpu *g, cudaError_t e, const char *what) { return gpu_error(g, "%s", what); }
int gpu_check(hmmrt_gpu *g, cudaError_t e, const char *what)
{
    return e == cudaSuccess ? 0 : gpu_fail(g, e, what);
}
int gpu_take_fault(hmmrt_gpu *g, hmmrt_fault_kind kind) { return 0; }
int gpu_add_chunk_times(hmmrt_gpu *g, gpu_slot *s) { return 0; }
int gpu_launch_posterior(hmmrt_gpu *g, gpu_slot *s, int c) { return -1; }
int gpu_fill_posterior(const hmmrt_gpu *g, const gpu_slot *s, int c, int64_t j, hmmrt_value *row)
{
    return 1;
}

/* the kernel: each sequence's score is the sum of (its codes + 1) times
 * their position; -1 when a pad byte or the zero piece is not zero */
static int fake_launch(const hmmrt_gpu_batch *b)
{
    float *scores = b->scores;
    int64_t end = 0;
    for (int64_t j = 0; j < b->n; j++) {
        const uint8_t *x = b->codes + b->offsets[j];
        double sum = 0;
        int padded = b->offsets[j] % 16 == 0;
        for (int64_t k = 0; k < b->lengths[j]; k++)
            sum += (double)(x[k] + 1) * (double)(k + 1);
        for (int64_t k = b->lengths[j]; k < hmmrt_pad16(b->lengths[j]); k++)
            padded &= x[k] == 0;
        scores[j] = padded ? (float)sum : -1.0f;
        if (b->offsets[j] + hmmrt_pad16(b->lengths[j]) > end)
            end = b->offsets[j] + hmmrt_pad16(b->lengths[j]);
    }
    for (int k = 0; k < 16; k++) /* the spare zero piece */
        if (b->codes[end + k] != 0)
            scores[0] = -2.0f;
    return cudaSuccess;
}

/* ---- one batch ------------------------------------------------------------------------ */

enum { N = 300 };

/* Scores a batch of N sequences of random lengths (0 to 70) through chunks
 * of about target bytes: staged (the batch's order by length is a staged
 * run), staged with sequence `gap` skipped (its place left empty), or
 * unstaged (codes only where each record lies); each score against the
 * sum worked out here. */
static void batch(const char *what, int staged, int gap, size_t target)
{
    static const int c0_col[] = {0};
    static const unsigned char c0_kind[] = {HMMRT_OUT_SCORE};
    const hmmrt_gpu_call calls[] = {{.label = "fake", .alphabet = 0, .n_states = 1,
                                     .n_outputs = 1, .output_column = c0_col,
                                     .output_kind = c0_kind, .launch = fake_launch}};
    hmmrt_gpu_program gp = {.n_calls = 1, .calls = calls};
    hmmrt_program prog = {.n_alphabets = 1, .n_columns = 1, .gpu = &gp};
    int copy_of_alphabet[1] = {0}, n_states[1] = {1}, bp_bytes[1] = {0};
    hmmrt_gpu g;
    memset(&g, 0, sizeof g);
    g.prog = &prog;
    g.gp = &gp;
    g.copy_of_alphabet = copy_of_alphabet;
    g.n_states = n_states;
    g.bp_bytes = bp_bytes;
    g.shape = (hmmrt_chunk_shape){.n_copies = 1, .n_calls = 1, .score_bytes = 4,
                                  .n_states = n_states, .bp_bytes = bp_bytes};
    /* the records, each in memory of its own */
    int64_t lengths[N], offsets[N], order[N], sorted[N], starts[N + 1];
    uint8_t *records[N];
    unsigned char skip[N];
    double want[N];
    for (int i = 0; i < N; i++) {
        lengths[i] = rand() % 71;
        records[i] = malloc((size_t)lengths[i] + 1);
        want[i] = 0;
        for (int64_t k = 0; k < lengths[i]; k++) {
            records[i][k] = (uint8_t)(rand() % 20);
            want[i] += (double)(records[i][k] + 1) * (double)(k + 1);
        }
        skip[i] = i == gap;
    }
    /* staged as score_batch.c stages it: every sequence placed, the gap's
     * codes never written */
    int64_t m = hmmrt_order_by_length(lengths, NULL, N, order);
    int64_t total = hmmrt_staged_offsets(lengths, N, order, m, offsets) + 16;
    uint8_t *stage = malloc((size_t)total);
    memset(stage, 0xEE, (size_t)total);
    for (int i = 0; i < N; i++)
        if (!skip[i]) {
            memcpy(stage + offsets[i], records[i], (size_t)lengths[i]);
            memset(stage + offsets[i] + lengths[i], 0,
                   (size_t)(hmmrt_pad16(lengths[i]) - lengths[i]));
        }
    m = hmmrt_order_by_length(lengths, skip, N, order);
    for (int64_t k = 0; k < m; k++)
        sorted[k] = lengths[order[k]];
    const uint8_t *per_alphabet[1] = {stage};
    hmmrt_value values[N];
    memset(values, 0, sizeof values);
    hmmrt_gpu_input in = {.n = N, .lengths = lengths, .offsets = offsets,
                          .codes = per_alphabet, .skip = skip, .values = values,
                          .order = order, .n_ordered = m,
                          .sequence_codes = (const uint8_t *const *)records,
                          .staged = staged};
    g.in = &in;
    g.order = order;
    g.sorted_lengths = sorted;
    g.n_chunks = hmmrt_plan_chunks(&g.shape, sorted, m, target, starts);
    g.starts = starts;
    /* one slot, its buffers full of garbage before each chunk */
    gpu_slot *s = &g.slots[0];
    size_t per_call = sizeof(size_t);
    s->layout.bp_offsets = malloc(per_call), s->layout.scores = malloc(per_call);
    s->layout.bp = malloc(per_call), s->layout.post = malloc(per_call);
    s->layout.work = malloc(per_call), s->layout.rec_offsets = malloc(per_call);
    s->events = calloc(EVENT_CALLS + 2, sizeof *s->events);
    s->n_events = EVENT_CALLS + 2;
    s->bytes = s->host_bytes = (size_t)1 << 20;
    s->device = malloc(s->bytes);
    s->host = malloc(s->host_bytes);
    int ok = 1;
    for (int64_t c = 0; c < g.n_chunks && ok; c++) {
        memset(s->device, 0xAB, s->bytes);
        memset(s->host, 0xCD, s->host_bytes);
        ok = gpu_issue_chunk(&g, s, c) == 0 && gpu_finish_chunk(&g, s) == 0;
    }
    char line[256];
    snprintf(line, sizeof line, "%s: the chunks did not run", what);
    expect(ok, line);
    for (int i = 0; i < N && ok; i++) {
        snprintf(line, sizeof line, "%s: sequence %d (%lld symbols) scored %g, not %g", what, i,
                 (long long)lengths[i], values[i].score, skip[i] ? 0.0 : want[i]);
        expect(values[i].score == (skip[i] ? 0.0 : (double)(float)want[i]), line);
    }
    int64_t want_staged = staged && gap < 0 ? g.n_chunks : -1;
    snprintf(line, sizeof line, "%s: %lld of %lld chunks staged", what,
             (long long)g.stats.staged_chunks, (long long)g.n_chunks);
    if (want_staged >= 0)
        expect(g.stats.staged_chunks == want_staged, line);
    else if (!staged)
        expect(g.stats.staged_chunks == 0, line);
    else /* the chunk with the gap, if it falls inside one, is packed; the others not */
        expect(g.stats.staged_chunks >= g.n_chunks - 1 && g.n_chunks > 1, line);
    printf("  %s: %lld chunks, %lld staged\n", what, (long long)g.n_chunks,
           (long long)g.stats.staged_chunks);
    for (int i = 0; i < N; i++)
        free(records[i]);
    free(stage);
    free(s->device), free(s->host), free(s->events);
    free(s->layout.bp_offsets), free(s->layout.scores), free(s->layout.bp);
    free(s->layout.post), free(s->layout.work), free(s->layout.rec_offsets);
}

int main(void)
{
    srand(7);
    batch("staged", 1, -1, 4096);
    batch("staged, one chunk", 1, -1, (size_t)1 << 20);
    batch("packed from the records", 0, -1, 4096);
    batch("staged with a gap", 1, 150, 4096);
    printf("chunk-driver: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
