/* scan_gpu.c: one long sequence over the whole GPU (issue 24, docs/scan.md):
 * the rule that hands a batch's longest sequences to the scan, the symbols'
 * matrices and the kernel's launch (scan_kernel.cu), the transfers combined
 * on the host in double (scan_matrices.c), and viterbi's traceback from the
 * chunks run again on the host's cores. */
#include "driver.h"
#include "hmmrt_scan.h"
#include "scan_chunk.h"
#include "scan_gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* auto: the shortest sequence the scan takes, and the most a batch scans
 * (each is its own launch and host pass; more long sequences fill the GPU's
 * threads on their own). */
enum { AUTO_MIN_LENGTH = 1 << 16, AUTO_MOST = 16 };
#define SHARED_MOST ((size_t)48 << 10)

struct gpu_scan {
    const hmmrt_scan_call **calls; /* per GPU call: its scan, or NULL */
    const char *why_not;           /* NULL, or why this program's sequences never take it */
    char why_batch[256];           /* why the last batch had none (auto) */
    int64_t resident;              /* threads the device keeps resident */
    /* device memory, grown as needed */
    uint8_t *codes;
    size_t codes_cap;
    int codes_alphabet;            /* the sequence and alphabet now in codes */
    int64_t codes_seq;
    void *matrices;                /* the matrices, then me or mo */
    size_t matrices_cap;
    void *out;                     /* transfers, then their scales, then statuses */
    size_t out_cap;
    /* host copies: the transfers, and the matrices on their way in */
    void *host_out, *stage;
    size_t host_cap, stage_cap;
    cudaEvent_t before, after;
    int events;
    /* --timing */
    int64_t sequences, symbols, scores[3]; /* scores: forward, backward, viterbi */
    int64_t in_double, risky, chunks;
    double kernel_ms, host, wall;
};

/* Whether GPU call c can scan: NULL, or why not. */
static const char *call_refusal(const hmmrt_gpu *g, int c, const hmmrt_scan_call *sc)
{
    const hmmrt_gpu_call *call = &g->gp->calls[c];
    if (call->posterior)
        return "a posterior call (scanned on the CPU path only so far: --cpu)";
    if (!sc)
        return "a call the CPU scan does not take either (docs/scan.md)";
    for (int k = 0; k < call->n_outputs; k++)
        if (call->output_kind[k] != HMMRT_OUT_SCORE &&
            (!sc->max_span_bp || !call->paths || call->bp_bytes != sc->bp_bytes ||
             call->n_states != sc->n_states))
            return "a traceback or segments whose back pointers the scan cannot write";
    if (sc->dense)
        return "a dense call (its transfers are matrix products, scanned on the CPU path only "
               "so far)";
    if (sc->n_boundary < 1 || sc->n_boundary > HMMRT_SCAN_NB_MAX)
        return "more than 32 boundary states (a chunk's transfer would need matrix products)";
    int K = (int)strlen(g->prog->alphabets[call->alphabet]);
    if (hmmrt_scan_gpu_shared(hmmrt_scan_pad(sc->n_boundary), K, 1) > SHARED_MOST)
        return "the symbols' matrices do not fit a block's shared memory";
    return NULL;
}

int gpu_scan_open(hmmrt_gpu *g)
{
    gpu_scan *s = calloc(1, sizeof *s);
    int n = g->gp->n_calls;
    if (!s || !(s->calls = calloc((size_t)(n > 0 ? n : 1), sizeof *s->calls))) {
        free(s);
        return -1;
    }
    g->scan = s;
    s->codes_seq = -1;
    int next = 0; /* scan_calls are the calls that can scan, in call order */
    for (int c = 0; c < n; c++) {
        const hmmrt_scan_call *sc = NULL;
        if (next < g->prog->n_scan_calls &&
            strcmp(g->prog->scan_calls[next]->label, g->gp->calls[c].label) == 0)
            sc = g->prog->scan_calls[next++];
        const char *why = call_refusal(g, c, sc);
        if (why && !s->why_not)
            s->why_not = why;
        s->calls[c] = sc;
    }
    int per_sm = 0;
    if (cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, g->device) !=
        cudaSuccess) {
        cudaGetLastError();
        per_sm = 2048;
    }
    s->resident = (int64_t)per_sm * g->multiprocessors;
    return 0;
}

void gpu_scan_close(hmmrt_gpu *g)
{
    gpu_scan *s = g->scan;
    if (!s)
        return;
    cudaFree(s->codes);
    cudaFree(s->matrices);
    cudaFree(s->out);
    free(s->host_out);
    free(s->stage);
    if (s->events) {
        cudaEventDestroy(s->before);
        cudaEventDestroy(s->after);
    }
    free(s->calls);
    free(s);
    g->scan = NULL;
}

/* ---- the rule ------------------------------------------------------------------------ */

/* How many of the sorted batch's first sequences take the scan (docs/scan.md):
 * --scan on, every one of 3 or more symbols; auto, up to AUTO_MOST of at
 * least AUTO_MIN_LENGTH symbols that are also 4 times longer than the
 * batch's symbols shared over the GPU's resident threads (one thread a
 * sequence would keep the device waiting on it). */
static int64_t scan_count(hmmrt_gpu *g, int64_t m)
{
    gpu_scan *s = g->scan;
    const int64_t *L = g->sorted_lengths;
    int mode = hmmrt_scan_mode();
    s->why_batch[0] = 0;
    if (mode == HMMRT_SCAN_OFF || s->why_not)
        return 0;
    int64_t k = 0;
    if (mode == HMMRT_SCAN_ON) {
        while (k < m && L[k] >= 3)
            k++;
        return k;
    }
    double symbols = 0;
    for (int64_t j = 0; j < m; j++)
        symbols += (double)L[j];
    double share = symbols / (double)s->resident;
    while (k < m && k < AUTO_MOST && L[k] >= AUTO_MIN_LENGTH && (double)L[k] >= 4 * share)
        k++;
    if (k == 0)
        snprintf(s->why_batch, sizeof s->why_batch,
                 m > 0 && L[0] < AUTO_MIN_LENGTH
                     ? "its longest sequence has fewer than 65,536 symbols"
                     : "no sequence is 4 times longer than the batch's symbols over the GPU's "
                       "resident threads: one thread a sequence fills the GPU");
    return k;
}

/* ---- device memory -------------------------------------------------------------------- */

static int grow(hmmrt_gpu *g, void **p, size_t *cap, size_t need, const char *what)
{
    if (need <= *cap)
        return 0;
    cudaFree(*p);
    *p = NULL;
    *cap = 0;
    size_t want = need + need / 4;
    char text[128];
    snprintf(text, sizeof text, "cudaMalloc of the scan's %s (%zu bytes)", what, want);
    if (gpu_check(g, cudaMalloc(p, want), text) != 0)
        return -1;
    *cap = want;
    return 0;
}

/* ---- one call on one sequence --------------------------------------------------------- */

typedef struct scan_run {
    const hmmrt_scan_call *sc;
    const uint8_t *x; /* the whole sequence, on the host */
    int64_t L;
    int K, nbp, use_double;
    int64_t chunk, n_chunks;
    const void *results; /* the last launch's, on the host */
} scan_run;

/* Runs the kernel on the middle [1, L - 1) and brings the transfers to
 * s->host_out: 0, or -1. *risky: a sum's column left the type's range. */
static int run_kernel(hmmrt_gpu *g, scan_run *r, const double *mant, const int *me,
                      const double *mo, int *risky)
{
    gpu_scan *s = g->scan;
    cudaStream_t stream = g->slots[0].stream;
    int nbp = r->nbp, K = r->K, max_plus = r->sc->max_span != NULL;
    size_t rb = r->use_double ? 8 : 4, cells = (size_t)K * nbp * nbp;
    size_t mat_bytes = (cells * rb + 7) / 8 * 8 + (size_t)K * 8;
    size_t scales_at, status_at;
    size_t all_out = hmmrt_scan_results(nbp, r->n_chunks, r->use_double, &scales_at, &status_at);
    if (grow(g, &s->matrices, &s->matrices_cap, mat_bytes, "matrices") ||
        grow(g, &s->out, &s->out_cap, all_out, "transfers"))
        return -1;
    if (all_out > s->host_cap) {
        free(s->host_out);
        s->host_out = malloc(all_out);
        s->host_cap = s->host_out ? all_out : 0;
        if (!s->host_out)
            return gpu_error(g, "out of memory for the scan's transfers (%s)", g->where);
    }
    if (mat_bytes > s->stage_cap) {
        free(s->stage);
        s->stage = malloc(mat_bytes);
        s->stage_cap = s->stage ? mat_bytes : 0;
        if (!s->stage)
            return gpu_error(g, "out of memory for the scan's matrices (%s)", g->where);
    }
    /* the matrices in the kernel's type, then me or mo */
    char *stage = s->stage;
    for (size_t k = 0; k < cells; k++) {
        if (r->use_double)
            ((double *)stage)[k] = mant[k];
        else
            ((float *)stage)[k] = (float)mant[k];
    }
    size_t tail_at = (cells * rb + 7) / 8 * 8;
    if (max_plus)
        memcpy(stage + tail_at, mo, (size_t)K * sizeof(double));
    else
        memcpy(stage + tail_at, me, (size_t)K * sizeof(int));
    if (gpu_check(g, cudaMemcpyAsync(s->matrices, stage, mat_bytes, cudaMemcpyHostToDevice, stream),
                  "cudaMemcpyAsync of the scan's matrices"))
        return -1;
    hmmrt_scan_gpu_job job = {.nb = nbp,
                              .n_symbols = K,
                              .max_plus = max_plus,
                              .backward = r->sc->backward,
                              .use_double = r->use_double,
                              .len = r->L - 2,
                              .chunk = r->chunk,
                              .n_chunks = r->n_chunks,
                              .codes = s->codes,
                              .m = s->matrices,
                              .me = max_plus ? NULL : (const int *)((char *)s->matrices + tail_at),
                              .mo = max_plus ? (const double *)((char *)s->matrices + tail_at) : NULL,
                              .out = s->out,
                              .out_scale = (char *)s->out + scales_at,
                              .status = (int *)((char *)s->out + status_at),
                              .stream = stream};
    char what[256];
    snprintf(what, sizeof what, "launching the scan kernel of %s", r->sc->label);
    if (gpu_check(g, cudaEventRecord(s->before, stream), "cudaEventRecord") ||
        gpu_check(g, (cudaError_t)hmmrt_scan_gpu_launch(&job), what) ||
        gpu_check(g, cudaEventRecord(s->after, stream), "cudaEventRecord") ||
        gpu_check(g, cudaMemcpyAsync(s->host_out, s->out, all_out, cudaMemcpyDeviceToHost, stream),
                  "cudaMemcpyAsync of the scan's transfers to the host"))
        return -1;
    snprintf(what, sizeof what, "the scan kernel of %s (cudaStreamSynchronize)", r->sc->label);
    if (gpu_check(g, cudaStreamSynchronize(stream), what))
        return -1;
    float ms = 0;
    if (cudaEventElapsedTime(&ms, s->before, s->after) == cudaSuccess)
        s->kernel_ms += ms;
    cudaGetLastError();
    *risky = hmmrt_scan_results_risky(nbp, r->n_chunks, r->use_double, s->host_out);
    r->results = s->host_out;
    s->chunks += r->n_chunks;
    return 0;
}

/* Chunk k's transfer, from host_out (hmmrt_scan_transfer_fn). */
static void transfer_of(const void *ctx, int64_t k, double *t, int64_t *e)
{
    const scan_run *r = ctx;
    hmmrt_scan_read_transfer(r->nbp, r->use_double, r->sc->max_span != NULL, r->n_chunks,
                             r->results, k, t, e);
}

static double scan_score(hmmrt_gpu *g, int c, int64_t i, void *bp, int *failed);

/* Call c's outputs for input sequence i into row: the score (NAN where
 * double cannot hold it: the caller's rescoring takes over) and, viterbi,
 * the traceback or segments from the back pointers that the chunks' reruns
 * write on the host (hmmrt_scan_finish_bp). 0, or -1. */
static int scan_call(hmmrt_gpu *g, int c, int64_t i, hmmrt_value *row)
{
    const hmmrt_gpu_call *call = &g->gp->calls[c];
    int paths = 0;
    for (int k = 0; k < call->n_outputs; k++)
        paths |= call->output_kind[k] != HMMRT_OUT_SCORE;
    void *bp = NULL;
    int failed = 0;
    hmmrt_buf_take_failure(); /* a failure of this call's texts only */
    if (paths) { /* the one-thread function's whole table, (L + 1) x n cells */
        size_t cells = (size_t)(g->in->lengths[i] + 1) * (size_t)call->n_states;
        bp = malloc(cells * (size_t)call->bp_bytes);
        if (!bp)
            return gpu_error(g, "out of memory for the back pointers of a sequence of %lld "
                                "symbols (%.1f GiB; %s)",
                             (long long)g->in->lengths[i],
                             (double)cells * call->bp_bytes / (1 << 30), g->where);
    }
    double score = scan_score(g, c, i, bp, &failed);
    for (int k = 0; k < call->n_outputs && !failed; k++) {
        hmmrt_value *v = &row[call->output_column[k]];
        if (call->output_kind[k] == HMMRT_OUT_SCORE) {
            v->score = score;
            continue;
        }
        hmmrt_buf_reset(&v->text);
        if (!(score > -INFINITY)) { /* -inf, or NAN: rescored, then written again */
            hmmrt_buf_puts(&v->text, "-");
            continue;
        }
        int broken = call->output_kind[k] == HMMRT_OUT_SEGMENTS
                         ? hmmrt_segments(call->paths, bp, call->bp_bytes, g->in->lengths[i],
                                          &v->text)
                         : hmmrt_traceback(call->paths, bp, call->bp_bytes, g->in->lengths[i],
                                           &v->text);
        if (broken)
            failed = gpu_error(g, "the back pointers of a scanned traceback lead nowhere: an "
                                  "internal error (%s)", g->where);
    }
    free(bp);
    if (!failed && hmmrt_buf_take_failure())
        failed = gpu_error(g, "out of memory writing a traceback (%s)", g->where);
    return failed ? -1 : 0;
}

/* Call c's score on input sequence i by the scan, and viterbi's back
 * pointers into bp where not NULL; NAN where double cannot hold it, or -1
 * through *failed. */
static double scan_score(hmmrt_gpu *g, int c, int64_t i, void *bp, int *failed)
{
    gpu_scan *s = g->scan;
    const hmmrt_gpu_input *in = g->in;
    const hmmrt_gpu_call *call = &g->gp->calls[c];
    scan_run r = {.sc = s->calls[c],
                  .x = hmmrt_gpu_codes_of(in, g->prog->n_alphabets, call->alphabet, i),
                  .L = in->lengths[i],
                  .K = (int)strlen(g->prog->alphabets[call->alphabet])};
    r.nbp = hmmrt_scan_pad(r.sc->n_boundary);
    size_t cells = (size_t)r.K * r.nbp * r.nbp;
    double *mant = malloc(sizeof(double) * (cells + (size_t)r.K) + sizeof(int) * (size_t)r.K);
    if (!mant) {
        *failed = gpu_error(g, "out of memory for the scan's matrices (%s)", g->where);
        return NAN;
    }
    double *mo = mant + cells, least = 1;
    int *me = (int *)(mo + r.K);
    /* the chunks in double: at 10^8 casino symbols float's rounding came to
     * 2.8e-9 of the forward score (0.45 nats), past the 1e-9 the scan must
     * hold, and double's kernels took 2.6 ms against float's 2.3 (H200); the
     * float kernel stays for the emulated tests (HMMRT_SCAN_GPU_EMULATE) */
    if (hmmrt_scan_matrices(r.sc, r.K, r.L, r.nbp, mant, me, mo, &least) != 0 ||
        (r.use_double = hmmrt_scan_type(r.sc, least, 1)) < 0) {
        free(mant);
        return NAN;
    }
    /* chunks for about twice the GPU's resident threads, nbp threads a chunk */
    hmmrt_scan_cut(r.L, 2 * s->resident / r.nbp, &r.chunk, &r.n_chunks);
    /* the middle's codes, once per sequence and alphabet */
    if (s->codes_seq != i || s->codes_alphabet != call->alphabet) {
        size_t bytes = (size_t)(r.L - 2);
        if (grow(g, (void **)&s->codes, &s->codes_cap, bytes + 16, "sequence") ||
            gpu_check(g, cudaMemcpyAsync(s->codes, r.x + 1, bytes, cudaMemcpyHostToDevice,
                                         g->slots[0].stream),
                      "cudaMemcpyAsync of a sequence to the device")) {
            free(mant);
            *failed = -1;
            return NAN;
        }
        s->codes_seq = i;
        s->codes_alphabet = call->alphabet;
    }
    int risky = 0;
    if (run_kernel(g, &r, mant, me, mo, &risky) != 0) {
        free(mant);
        *failed = -1;
        return NAN;
    }
    if (risky && !r.use_double) { /* digits left float's range: again in double */
        s->risky++;
        r.use_double = 1;
        if (run_kernel(g, &r, mant, me, mo, &risky) != 0) {
            free(mant);
            *failed = -1;
            return NAN;
        }
    }
    free(mant);
    s->in_double += r.use_double;
    double started = hmmrt_seconds();
    double score = risky ? NAN
                   : bp  ? hmmrt_scan_finish_bp(r.sc, r.x, r.L, r.nbp, r.n_chunks, r.chunk,
                                                transfer_of, &r, bp)
                         : hmmrt_scan_finish(r.sc, r.x, r.L, r.nbp, r.n_chunks, transfer_of, &r);
    s->host += hmmrt_seconds() - started;
    s->scores[r.sc->max_span ? 2 : r.sc->backward ? 1 : 0]++;
    return score;
}

/* ---- a batch ------------------------------------------------------------------------------ */

int64_t gpu_scan_batch(hmmrt_gpu *g, int64_t m)
{
    gpu_scan *s = g->scan;
    int64_t count = scan_count(g, m);
    if (count == 0)
        return 0;
    double started = hmmrt_seconds();
    if (!s->events) {
        if (gpu_check(g, cudaEventCreate(&s->before), "cudaEventCreate") ||
            gpu_check(g, cudaEventCreate(&s->after), "cudaEventCreate"))
            return -1;
        s->events = 1;
    }
    s->codes_seq = -1; /* a new batch's codes */
    for (int64_t k = 0; k < count; k++) {
        int64_t i = g->order[k];
        hmmrt_value *row = g->in->values + i * g->prog->n_columns;
        snprintf(g->where, sizeof g->where, "batch %lld, the scan of its sequence %lld",
                 (long long)g->stats.batches, (long long)i + 1);
        for (int c = 0; c < g->gp->n_calls; c++)
            if (scan_call(g, c, i, row) != 0)
                return -1;
        s->sequences++;
        s->symbols += g->sorted_lengths[k];
    }
    s->wall += hmmrt_seconds() - started;
    return count;
}

void gpu_scan_report(const hmmrt_gpu *g, FILE *out)
{
    const gpu_scan *s = g->scan;
    if (!s)
        return;
    const char *mode = hmmrt_scan_mode() == HMMRT_SCAN_ON    ? "on"
                       : hmmrt_scan_mode() == HMMRT_SCAN_OFF ? "off"
                                                             : "auto";
    if (s->sequences == 0) {
        fprintf(out, "  scan (--scan %s): none on the GPU: %s\n", mode,
                hmmrt_scan_mode() == HMMRT_SCAN_OFF ? "--scan off"
                : s->why_not                        ? s->why_not
                : s->why_batch[0]                   ? s->why_batch
                                                    : "no batch held a sequence for it");
        return;
    }
    fprintf(out,
            "  scan (--scan %s): %lld sequences, %lld symbols, over the whole GPU (%lld forward, "
            "%lld backward, %lld viterbi scores; %lld chunks; %lld in double, %lld of them "
            "again after float)\n",
            mode, (long long)s->sequences, (long long)s->symbols, (long long)s->scores[0],
            (long long)s->scores[1], (long long)s->scores[2], (long long)s->chunks,
            (long long)s->in_double, (long long)s->risky);
    fprintf(out, "    scan kernels %.4f s, combining on the host %.4f s, wall %.4f s\n",
            s->kernel_ms * 1e-3, s->host, s->wall);
}
