/* stats.c: what the GPU driver measured since open (events around each
 * chunk's copies and kernels, host clocks around packing, waiting and
 * tracebacks) and the table hmmrt_gpu_report prints for --timing. */
#include "driver.h"

#include <stdlib.h>

int gpu_alloc_stats(hmmrt_gpu *g)
{
    int n_calls = g->gp->n_calls;
    g->stats.calls = calloc((size_t)(n_calls > 0 ? n_calls : 1), sizeof *g->stats.calls);
    return g->stats.calls ? 0 : -1;
}

void gpu_free_stats(hmmrt_gpu *g)
{
    free(g->stats.calls);
    g->stats.calls = NULL;
}

/* When event e happened, in ms since the epoch. */
static int since_epoch(hmmrt_gpu *g, cudaEvent_t e, double *ms)
{
    float t = 0;
    if (gpu_check(g, cudaEventElapsedTime(&t, g->epoch, e), "cudaEventElapsedTime") != 0)
        return -1;
    *ms = t;
    return 0;
}

/* Adds the interval between two events of slot s to b, less what b has
 * already; chunks come in about the order they started, so that the sweep
 * over their ends counts each moment once. */
static int add_busy(hmmrt_gpu *g, const gpu_slot *s, int from, int to, busy_time *b)
{
    double start, end;
    if (since_epoch(g, s->events[from], &start) != 0 || since_epoch(g, s->events[to], &end) != 0)
        return -1;
    if (start < b->until)
        start = b->until;
    if (end > start) {
        b->ms += end - start;
        b->until = end;
    }
    return 0;
}

int gpu_add_chunk_times(hmmrt_gpu *g, gpu_slot *s)
{
    gpu_stats *st = &g->stats;
    int n_calls = g->gp->n_calls;
    if (add_busy(g, s, EVENT_START, EVENT_IN, &st->h2d) != 0)
        return -1;
    for (int c = 0; c < n_calls; c++) {
        int from = c ? EVENT_CALLS + c - 1 : EVENT_IN;
        if (add_busy(g, s, from, EVENT_CALLS + c, &st->calls[c]) != 0 ||
            add_busy(g, s, from, EVENT_CALLS + c, &st->all_calls) != 0)
            return -1;
    }
    int before_copy = n_calls ? EVENT_CALLS + n_calls - 1 : EVENT_IN;
    if (add_busy(g, s, before_copy, s->n_events - 1, &st->d2h) != 0)
        return -1;
    st->chunks++;
    st->sequences += s->layout.size.sequences;
    st->symbols += s->layout.size.symbols;
    st->h2d_bytes += (double)s->layout.input_bytes;
    st->d2h_bytes += (double)(s->layout.total_bytes - s->layout.input_bytes);
    return 0;
}

/* ---- the report ------------------------------------------------------------------- */

static void line(FILE *out, const char *phase, double seconds, double symbols, double cells,
                 const char *other)
{
    char rate[32] = "", gcups[32] = "";
    if (seconds > 0 && symbols > 0)
        snprintf(rate, sizeof rate, "%.3g", symbols / seconds);
    if (seconds > 0 && cells > 0)
        snprintf(gcups, sizeof gcups, "%.2f", cells / seconds * 1e-9);
    char text[512];
    int n = snprintf(text, sizeof text, "  %-36s %9.3f %11s %9s  %s", phase, seconds, rate, gcups,
                     other ? other : "");
    while (n > 0 && (size_t)n < sizeof text && text[n - 1] == ' ')
        text[--n] = '\0'; /* no blanks at the ends of lines */
    fprintf(out, "%s\n", text);
}

static void transfer_line(FILE *out, const char *phase, double ms, double bytes)
{
    char other[64] = "";
    if (ms > 0)
        snprintf(other, sizeof other, "%.1f GB/s, %.1f MB", bytes / (ms * 1e-3) * 1e-9,
                 bytes * 1e-6);
    line(out, phase, ms * 1e-3, 0, 0, other);
}

static void print_calls(const hmmrt_gpu *g, FILE *out, double *cells)
{
    const gpu_stats *st = &g->stats;
    for (int c = 0; c < g->gp->n_calls; c++) {
        const hmmrt_gpu_call *call = &g->gp->calls[c];
        double seconds = st->calls[c].ms * 1e-3;
        double call_cells = (double)st->symbols * call->cells_per_symbol;
        char phase[128];
        snprintf(phase, sizeof phase, "kernels of %s", call->label);
        line(out, phase, seconds, (double)st->symbols, call_cells, NULL);
        char plan[512] = "";
        if (call->posterior)
            gpu_describe_posterior(g, c, plan, sizeof plan);
        else if (call->describe)
            call->describe(g->device, g->use_double, plan, sizeof plan);
        if (plan[0])
            fprintf(out, "    plan: %s\n", plan);
        *cells += call_cells;
    }
}

void hmmrt_gpu_report(void *gpu, FILE *out)
{
    hmmrt_gpu *g = gpu;
    const gpu_stats *st = &g->stats;
    cudaSetDevice(g->device);
    fprintf(out, "GPU: %s (device %d: %d multiprocessors, %.1f GiB), %s precision\n",
            g->device_name, g->device, g->multiprocessors,
            (double)g->device_memory / (1 << 30), g->use_double ? "double" : "single");
    fprintf(out, "  %d streams; chunk buffers of up to %.2f GiB each, on the device and pinned "
                 "on the host\n",
            N_SLOTS, (double)g->slot_limit / (1 << 30));
    fprintf(out, "  %lld batches, %lld chunks, %lld sequences, %lld symbols\n",
            (long long)st->batches, (long long)st->chunks, (long long)st->sequences,
            (long long)st->symbols);
    fprintf(out, "  %-36s %9s %11s %9s  %s\n", "phase", "seconds", "symbols/s", "GCUPS", "other");
    double symbols = (double)st->symbols, cells = 0;
    line(out, "sorting, planning, buffers (host)", st->sorting, 0, 0, NULL);
    line(out, "  of which allocating buffers", st->buffers, 0, 0, NULL);
    line(out, "packing (host)", st->packing, symbols, 0, NULL);
    fprintf(out, "    (%lld of %lld chunks copied from the batch's staged codes, unpacked)\n",
            (long long)st->staged_chunks, (long long)st->chunks);
    transfer_line(out, "copies to the device", st->h2d.ms, st->h2d_bytes);
    print_calls(g, out, &cells);
    line(out, "kernels, all calls", st->all_calls.ms * 1e-3, symbols, cells, NULL);
    transfer_line(out, "copies to the host", st->d2h.ms, st->d2h_bytes);
    line(out, "tracebacks and results (host)", st->collecting, symbols, 0, NULL);
    line(out, "waiting for the device (host)", st->waiting, 0, 0, NULL);
    line(out, "GPU scoring, wall", st->wall, symbols, cells, NULL);
    fprintf(out, "  (device phases: the time the device spent on them, counted once where the\n"
                 "   two streams overlap chunks; host phases: the driver thread's clock)\n");
    gpu_scan_report(g, out);
    fflush(out);
}
