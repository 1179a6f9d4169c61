/* chunks.c: the life of one chunk (a run of the sorted batch) in a slot:
 * packed into pinned memory (OpenMP; codes staged as they lie on the device
 * are copied from there), copied in, one kernel per call (posterior's in
 * posterior_gpu.c), copied back; then waited for, and its scores and
 * tracebacks (followed on the host) put into the input's values in order. */
#include "driver.h"

#include <math.h>
#include <omp.h>
#include <string.h>

void gpu_set_where(hmmrt_gpu *g, int64_t chunk)
{
    if (chunk < 0)
        snprintf(g->where, sizeof g->where, "batch %lld, before its first chunk",
                 (long long)g->stats.batches);
    else
        snprintf(g->where, sizeof g->where, "batch %lld, chunk %lld of %lld",
                 (long long)g->stats.batches, (long long)chunk + 1, (long long)g->n_chunks);
}

/* ---- team sizes ----------------------------------------------------------------------- */

/* Packing and collecting run on the thread that feeds the GPU while the
 * reader's and the printer's teams work too: a team of every core for a
 * copy of a few bytes a sequence spends its time waking threads and taking
 * turns at the loop's counter (on 64 cores, collecting 16 M scores took
 * 1.75 s). These loops are memory-bound: a few threads do them. */
enum { COPY_THREADS = 16, SCORE_THREADS = 8, PER_THREAD = 16384 };

static int team(int most, int64_t items)
{
    int64_t t = items / PER_THREAD + 1, max = omp_get_max_threads();
    if (t > most)
        t = most;
    return (int)(t < max ? t : max);
}

/* ---- packing ------------------------------------------------------------------------ */

static int64_t *host_index(const gpu_slot *s, size_t at)
{
    return (int64_t *)((char *)s->host + at);
}

/* The codes of one alphabet, each sequence at its 16-byte offset, zero-padded. */
static void pack_codes(const hmmrt_gpu *g, const gpu_slot *s, int alphabet, int copy)
{
    const hmmrt_gpu_input *in = g->in;
    const hmmrt_chunk_layout *lay = &s->layout;
    uint8_t *to = (uint8_t *)s->host + lay->codes + (size_t)copy * lay->codes_stride;
    const int64_t *offsets = host_index(s, lay->offsets);
    const int64_t *order = g->order + s->first;
    const int n_alphabets = g->prog->n_alphabets;
    int64_t n = lay->size.sequences;
#pragma omp parallel for num_threads(team(COPY_THREADS, n)) schedule(guided, 256)
    for (int64_t j = 0; j < n; j++) {
        int64_t i = order[j], length = in->lengths[i];
        memcpy(to + offsets[j], hmmrt_gpu_codes_of(in, n_alphabets, alphabet, i), (size_t)length);
        memset(to + offsets[j] + length, 0, (size_t)(hmmrt_pad16(length) - length));
    }
    size_t used = (size_t)lay->size.padded_symbols;
    memset(to + used, 0, lay->codes_stride - used); /* the spare zero piece */
}

static void pack_chunk(const hmmrt_gpu *g, const gpu_slot *s)
{
    const hmmrt_chunk_layout *lay = &s->layout;
    const int64_t *lengths = g->sorted_lengths + s->first;
    int64_t n = lay->size.sequences;
    memcpy(host_index(s, lay->lengths), lengths, (size_t)n * sizeof(int64_t));
    hmmrt_code_offsets(lengths, n, host_index(s, lay->offsets));
    for (int c = 0; c < g->shape.n_calls; c++) {
        if (lay->bp_offsets[c] != HMMRT_NO_SECTION)
            hmmrt_bp_offsets(lengths, n, g->n_states[c], host_index(s, lay->bp_offsets[c]));
        if (lay->rec_offsets[c] != HMMRT_NO_SECTION)
            hmmrt_group_offsets(lengths, n, host_index(s, lay->rec_offsets[c]));
    }
    for (int a = 0; a < g->prog->n_alphabets && !s->staged; a++)
        if (g->copy_of_alphabet[a] >= 0)
            pack_codes(g, s, a, g->copy_of_alphabet[a]);
}

/* 1 when the chunk's codes lie in the input's staged arrays (page-locked, by
 * length at 16-byte steps: score_batch.c) one after the other, as its codes
 * section holds them: then they are copied from there, not packed. A batch
 * dealt out to several devices, one rescored in double or a sequence skipped
 * leaves gaps, and such a chunk is packed. */
static int staged_chunk(const hmmrt_gpu *g, const gpu_slot *s)
{
    const hmmrt_gpu_input *in = g->in;
    return in->staged &&
           hmmrt_staged_run(in->lengths, in->offsets, g->order + s->first, s->layout.size.sequences);
}

/* ---- issuing ----------------------------------------------------------------------- */

static int launch_call(hmmrt_gpu *g, gpu_slot *s, int c)
{
    const hmmrt_gpu_call *call = &g->gp->calls[c];
    if (call->posterior)
        return gpu_launch_posterior(g, s, c) != 0
                   ? -1
                   : gpu_check(g, cudaEventRecord(s->events[EVENT_CALLS + c], s->stream),
                               "cudaEventRecord");
    const hmmrt_chunk_layout *lay = &s->layout;
    int copy = g->copy_of_alphabet[call->alphabet];
    hmmrt_gpu_batch b = {.n = lay->size.sequences,
                         .codes = gpu_device_at(s, lay->codes + (size_t)copy * lay->codes_stride),
                         .offsets = gpu_device_at(s, lay->offsets),
                         .lengths = gpu_device_at(s, lay->lengths),
                         .scores = gpu_device_at(s, lay->scores[c]),
                         .bp = gpu_device_at(s, lay->bp[c]),
                         .bp_offsets = gpu_device_at(s, lay->bp_offsets[c]),
                         .use_double = g->use_double,
                         .stream = s->stream};
    char what[256];
    snprintf(what, sizeof what, "launching the kernel of %s", call->label);
    cudaError_t launched = gpu_take_fault(g, HMMRT_FAULT_ERROR) ? cudaErrorLaunchFailure
                                                                : (cudaError_t)call->launch(&b);
    if (gpu_check(g, launched, what) != 0)
        return -1;
    snprintf(what, sizeof what, "the launch of %s (cudaGetLastError)", call->label);
    if (gpu_check(g, cudaGetLastError(), what) != 0)
        return -1;
    return gpu_check(g, cudaEventRecord(s->events[EVENT_CALLS + c], s->stream),
                     "cudaEventRecord");
}

/* A staged chunk's codes: each alphabet's straight from the input's staged
 * array, then the section's zero tail (the spare piece) set on the device. */
static int copy_staged_codes(hmmrt_gpu *g, gpu_slot *s)
{
    const hmmrt_chunk_layout *lay = &s->layout;
    const hmmrt_gpu_input *in = g->in;
    size_t used = (size_t)lay->size.padded_symbols, at = (size_t)in->offsets[g->order[s->first]];
    for (int a = 0; a < g->prog->n_alphabets; a++) {
        int copy = g->copy_of_alphabet[a];
        if (copy < 0)
            continue;
        char *to = (char *)s->device + lay->codes + (size_t)copy * lay->codes_stride;
        if (gpu_check(g, cudaMemcpyAsync(to, in->codes[a] + at, used, cudaMemcpyHostToDevice,
                                         s->stream),
                      "cudaMemcpyAsync of the staged sequences to the device") ||
            gpu_check(g, cudaMemsetAsync(to + used, 0, lay->codes_stride - used, s->stream),
                      "cudaMemsetAsync of the codes' spare piece"))
            return -1;
    }
    return 0;
}

static int copy_in(hmmrt_gpu *g, gpu_slot *s)
{
    if (!g->epoch_recorded &&
        gpu_check(g, cudaEventRecord(g->epoch, s->stream), "cudaEventRecord") != 0)
        return -1;
    g->epoch_recorded = 1;
    /* packed: the whole input section; staged: the indexes before the codes */
    size_t from_slot = s->staged ? s->layout.codes : s->layout.input_bytes;
    if (gpu_check(g, cudaEventRecord(s->events[EVENT_START], s->stream), "cudaEventRecord") ||
        gpu_check(g,
                  cudaMemcpyAsync(s->device, s->host, from_slot, cudaMemcpyHostToDevice,
                                  s->stream),
                  "cudaMemcpyAsync of the sequences to the device") ||
        (s->staged && copy_staged_codes(g, s) != 0))
        return -1;
    return gpu_check(g, cudaEventRecord(s->events[EVENT_IN], s->stream), "cudaEventRecord");
}

static int copy_out(hmmrt_gpu *g, gpu_slot *s)
{
    size_t from = s->layout.input_bytes, bytes = s->layout.total_bytes - from;
    if (gpu_check(g,
                  cudaMemcpyAsync((char *)s->host + from, (char *)s->device + from, bytes,
                                  cudaMemcpyDeviceToHost, s->stream),
                  "cudaMemcpyAsync of the results to the host"))
        return -1;
    return gpu_check(g, cudaEventRecord(s->events[s->n_events - 1], s->stream),
                     "cudaEventRecord");
}

int gpu_issue_chunk(hmmrt_gpu *g, gpu_slot *s, int64_t chunk)
{
    gpu_set_where(g, chunk);
    s->chunk = chunk;
    s->first = g->starts[chunk];
    int64_t n = g->starts[chunk + 1] - s->first;
    hmmrt_chunk_size size = hmmrt_measure(g->sorted_lengths + s->first, n);
    hmmrt_chunk_lay_out(&g->shape, &size, &s->layout);
    if (s->layout.device_bytes > s->bytes || s->layout.total_bytes > s->host_bytes)
        return gpu_error(g, "a chunk needs %zu bytes, its slot has %zu (%s)", /* cannot happen: */
                         s->layout.device_bytes, s->bytes, g->where); /* the plan reserved it */
    double started = hmmrt_seconds();
    s->staged = staged_chunk(g, s);
    g->stats.staged_chunks += s->staged;
    pack_chunk(g, s);
    g->stats.packing += hmmrt_seconds() - started;
    if (copy_in(g, s) != 0)
        return -1;
    for (int c = 0; c < g->gp->n_calls; c++)
        if (launch_call(g, s, c) != 0)
            return -1;
    return copy_out(g, s);
}

/* ---- collecting ---------------------------------------------------------------------- */

enum { COLLECTED = 0, BROKEN_BACK_POINTERS = 1, OUT_OF_MEMORY = 2 };

static double score_at(const gpu_slot *s, size_t at, int64_t j, int use_double)
{
    const char *scores = (const char *)s->host + at;
    return use_double ? ((const double *)scores)[j] : (double)((const float *)scores)[j];
}

/* One output of call c for sequence j of the chunk. */
static int fill_output(const hmmrt_gpu *g, const gpu_slot *s, int c, int k, int64_t j,
                       hmmrt_value *row)
{
    const hmmrt_gpu_call *call = &g->gp->calls[c];
    const hmmrt_chunk_layout *lay = &s->layout;
    hmmrt_value *v = &row[call->output_column[k]];
    double score = score_at(s, lay->scores[c], j, g->use_double);
    if (call->output_kind[k] == HMMRT_OUT_SCORE) {
        v->score = score;
        return COLLECTED;
    }
    hmmrt_buf_reset(&v->text);
    if (score == -INFINITY) {
        hmmrt_buf_puts(&v->text, "-");
        return COLLECTED;
    }
    const int64_t *bp_offsets = host_index(s, lay->bp_offsets[c]);
    const char *bp = (const char *)s->host + lay->bp[c] + (size_t)bp_offsets[j] * (size_t)call->bp_bytes;
    int64_t length = host_index(s, lay->lengths)[j];
    int broken = call->output_kind[k] == HMMRT_OUT_SEGMENTS
                     ? hmmrt_segments(call->paths, bp, call->bp_bytes, length, &v->text)
                     : hmmrt_traceback(call->paths, bp, call->bp_bytes, length, &v->text);
    return broken == 0 ? COLLECTED : BROKEN_BACK_POINTERS;
}

static int collect_sequence(const hmmrt_gpu *g, const gpu_slot *s, int64_t j)
{
    int64_t i = g->order[s->first + j];
    hmmrt_value *row = g->in->values + i * g->prog->n_columns;
    hmmrt_buf_take_failure();
    for (int c = 0; c < g->gp->n_calls; c++) {
        if (g->gp->calls[c].posterior) {
            if (gpu_fill_posterior(g, s, c, j, row) != 0)
                return OUT_OF_MEMORY;
            continue;
        }
        for (int k = 0; k < g->gp->calls[c].n_outputs; k++) {
            int status = fill_output(g, s, c, k, j, row);
            if (status != COLLECTED)
                return status;
        }
    }
    return hmmrt_buf_take_failure() ? OUT_OF_MEMORY : COLLECTED;
}

/* 1 when every output of the program's calls is a score: nothing to trace back. */
static int scores_only(const hmmrt_gpu *g)
{
    for (int c = 0; c < g->gp->n_calls; c++) {
        const hmmrt_gpu_call *call = &g->gp->calls[c];
        if (call->posterior)
            return 0;
        for (int k = 0; k < call->n_outputs; k++)
            if (call->output_kind[k] != HMMRT_OUT_SCORE)
                return 0;
    }
    return 1;
}

static int collect_chunk(hmmrt_gpu *g, const gpu_slot *s)
{
    int64_t n = s->layout.size.sequences;
    int worst = COLLECTED;
    /* tracebacks, segments and posteriors: work worth every core; scores: a copy */
    const int light = scores_only(g);
    const int threads = light ? team(SCORE_THREADS, n) : omp_get_max_threads();
    const int grab = light ? 4096 : 64;
#pragma omp parallel for num_threads(threads) schedule(dynamic, grab) reduction(max : worst)
    for (int64_t j = 0; j < n; j++) {
        int status = collect_sequence(g, s, j);
        if (status > worst)
            worst = status;
    }
    if (worst == OUT_OF_MEMORY)
        return gpu_error(g, "out of memory writing tracebacks or posteriors (%s)", g->where);
    if (worst == BROKEN_BACK_POINTERS)
        return gpu_error(g, "the back pointers of a traceback lead nowhere: an internal error "
                            "(%s)", g->where);
    return 0;
}

int gpu_finish_chunk(hmmrt_gpu *g, gpu_slot *s)
{
    gpu_set_where(g, s->chunk);
    double started = hmmrt_seconds();
    cudaError_t e = cudaStreamSynchronize(s->stream);
    g->stats.waiting += hmmrt_seconds() - started;
    if (e != cudaSuccess) {
        char what[512] = "the copies and kernels of calls";
        for (int c = 0; c < g->gp->n_calls; c++)
            snprintf(what + strlen(what), sizeof what - strlen(what), "%s %s", c ? "," : "",
                     g->gp->calls[c].label);
        snprintf(what + strlen(what), sizeof what - strlen(what), " (cudaStreamSynchronize)");
        return gpu_fail(g, e, what);
    }
    if (gpu_add_chunk_times(g, s) != 0)
        return -1;
    started = hmmrt_seconds();
    int status = collect_chunk(g, s);
    g->stats.collecting += hmmrt_seconds() - started;
    return status;
}
