/* scan_plan.c: when one sequence takes the time-parallel scan (the rule of
 * docs/scan.md; --scan on|off|auto overrides it), how it is cut into chunks
 * (HMMRT_SCAN_CHUNK=N for tests), and what --timing says of the scans run. */
#include "hmmrt_scan.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* auto: shorter sequences stay on one thread (measured on 2 cores: the scan
 * of a casino sequence breaks even near 10^5 symbols; docs/scan.md) */
enum { SCAN_MIN_LENGTH = 1 << 18 };
/* auto: the least gain, estimated from the threads and the transfers' cost */
static const double SCAN_MIN_GAIN = 1.25;

static int mode = HMMRT_SCAN_AUTO;

int hmmrt_scan_set_mode(const char *word)
{
    static const char *const words[] = {"auto", "on", "off"};
    for (int k = 0; k < 3; k++)
        if (strcmp(word, words[k]) == 0) {
            mode = k;
            return 0;
        }
    return -1;
}

int hmmrt_scan_mode(void) { return mode; }

/* The threads a scan started here gets: none beside this one inside the
 * batch's parallel loop (a nested region runs on one thread). */
static int scan_threads(void)
{
    return omp_in_parallel() ? 1 : omp_get_max_threads();
}

/* A transfer runs its chunk once from each boundary state: nb runs of the
 * one-thread function's cost, or, where the nb columns run together
 * (sum_spans, max_spans), less for small models, whose one run is a chain of
 * dependent operations that the other columns' overlap. Measured on the
 * 2-core machine (docs/scan.md): forward 0.64 of a run per column at nb = 2
 * (the casino), 0.69 at 4, 0.95 at 8 and about 1 from 16 on (each run
 * already keeps the core busy); viterbi 0.69 at nb = 2. */
static const double TOGETHER_SMALL = 0.65;
enum { SMALL_BOUNDARY = 4 };

double hmmrt_scan_transfer_cost(const hmmrt_scan_call *c)
{
    double nb = c->n_boundary;
    if (c->dense)
        return hmmrt_scan_dense_cost(c->n_boundary);
    if ((!c->sum_spans && !c->max_spans) || c->n_boundary > SMALL_BOUNDARY)
        return nb;
    return nb * TOGETHER_SMALL > 1.0 ? nb * TOGETHER_SMALL : 1.0;
}

/* The estimated speed-up on `threads` threads: chunk 0 runs from the start
 * (one run a position), every other chunk's transfer costs r runs a
 * position, chunk 0 being r times longer than the others; back pointers
 * then need each other chunk run once more, and so do posteriors (forward,
 * then backward, each so). */
static double scan_gain(const hmmrt_scan_call *c, int threads)
{
    double r = hmmrt_scan_transfer_cost(c), positions = r + threads - 1; /* in chunks */
    /* back pointers and posteriors run every chunk but the first once more */
    return c->bp_bytes || c->posterior ? positions / (r + 1) : positions / r;
}

/* The rule with the given team: auto scans from SCAN_MIN_LENGTH symbols
 * on 2 threads or more, where the estimated gain is at least SCAN_MIN_GAIN. */
static int chosen_with(const hmmrt_scan_call *c, int64_t L, int threads)
{
    if (mode == HMMRT_SCAN_OFF || c->n_boundary == 0 || L < 2)
        return 0;
    if (mode == HMMRT_SCAN_ON)
        return 1;
    return threads >= 2 && L >= SCAN_MIN_LENGTH && scan_gain(c, threads) >= SCAN_MIN_GAIN;
}

int hmmrt_scan_chosen(const hmmrt_scan_call *c, int64_t L)
{
    return chosen_with(c, L, scan_threads());
}

int hmmrt_scan_long(int64_t L)
{
    return L >= (mode == HMMRT_SCAN_ON ? 2 : SCAN_MIN_LENGTH);
}

int hmmrt_scan_defers(const struct hmmrt_scan_call *const *calls, int n_calls, int64_t L,
                      int64_t long_in_batch)
{
    int threads = omp_get_max_threads();
    if (threads < 2 || !hmmrt_scan_long(L) || (mode != HMMRT_SCAN_ON && long_in_batch >= threads))
        return 0;
    for (int k = 0; k < n_calls; k++)
        if (chosen_with(calls[k], L, threads))
            return 1;
    return 0;
}

/* HMMRT_SCAN_CHUNK, or 0 */
static int64_t chunk_from_environment(void)
{
    const char *v = getenv("HMMRT_SCAN_CHUNK");
    if (!v || !*v)
        return 0;
    char *end;
    long long n = strtoll(v, &end, 10);
    return *end == '\0' && n > 0 ? (int64_t)n : 0;
}

/* Chunks a thread: enough that a thread slowed down (a core shared with
 * another program, or its hyperthread's twin) leaves its share to the
 * others; the transfers they keep at most CHUNK_MEMORY bytes. */
enum { CHUNKS_A_THREAD = 4 };
static const double CHUNK_MEMORY = 64.0 * 1024 * 1024;

int64_t *hmmrt_scan_chunks(int64_t L, int threads, double work_first, size_t chunk_bytes,
                           int64_t *count)
{
    int64_t fixed = chunk_from_environment(), n;
    double first_ratio = work_first;
    if (fixed)
        n = (L + fixed - 1) / fixed;
    else if (threads < 2) {
        n = mode == HMMRT_SCAN_ON ? 2 : 1;
    } else {
        n = (int64_t)CHUNKS_A_THREAD * threads;
        double most = CHUNK_MEMORY / (double)(chunk_bytes ? chunk_bytes : 1);
        n = (double)n > most ? (int64_t)most : n;
        n = n < threads ? threads : n;
        /* chunk 0's thread runs it alone while the other threads share the
           n - 1 transfers: it is as long as n - 1 of them over T - 1 threads */
        first_ratio = work_first * (double)(n - 1) / (double)(threads - 1);
    }
    if (!fixed)
        n = n > L ? L : n < 1 ? 1 : n;
    int64_t *begin = malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!begin)
        return NULL;
    if (fixed) {
        for (int64_t k = 0; k < n; k++)
            begin[k] = k * fixed;
    } else {
        /* chunk 0 first_ratio times as long as the others, each at least 1 */
        int64_t other = (int64_t)((double)L / (first_ratio + (double)(n - 1)));
        other = other < 1 ? 1 : other;
        begin[0] = 0;
        for (int64_t k = 1; k < n; k++)
            begin[k] = L - (n - k) * other;
    }
    begin[n] = L;
    *count = n;
    return begin;
}

double *hmmrt_scan_thread_memory(size_t doubles, int threads, size_t *stride)
{
    enum { LINE_DOUBLES = 16 }; /* 128 bytes: a line and the one fetched with it */
    *stride = (doubles + LINE_DOUBLES - 1) / LINE_DOUBLES * LINE_DOUBLES;
    if (*stride == 0)
        *stride = LINE_DOUBLES;
    return aligned_alloc(LINE_DOUBLES * sizeof(double),
                         *stride * sizeof(double) * (size_t)(threads > 0 ? threads : 1));
}

/* ---- what --timing says ------------------------------------------------------ */

static atomic_llong scanned[2], scanned_symbols[2], scanned_usec[2], critical_usec[2];

void hmmrt_scan_count(int viterbi, int64_t L, double seconds, double critical)
{
    atomic_fetch_add(&scanned[viterbi], 1);
    atomic_fetch_add(&scanned_symbols[viterbi], L);
    atomic_fetch_add(&scanned_usec[viterbi], (long long)(seconds * 1e6));
    atomic_fetch_add(&critical_usec[viterbi], (long long)(critical * 1e6));
}

static atomic_llong emulated;

void hmmrt_scan_count_emulated(void) { atomic_fetch_add(&emulated, 1); }

void hmmrt_scan_report(FILE *f, int on_gpu)
{
    static const char *const what[2] = {"forward/backward", "viterbi"};
    int threads = omp_get_max_threads();
    for (int v = 0; v < 2; v++)
        if (atomic_load(&scanned[v]))
            fprintf(f, "  scan (--scan %s): %lld %s calls on one sequence each over %d thread%s, "
                       "%lld symbols, %.3f s (busiest thread's CPU time: %.3f s)\n",
                    mode == HMMRT_SCAN_ON ? "on" : "auto", atomic_load(&scanned[v]), what[v],
                    threads, threads == 1 ? "" : "s", atomic_load(&scanned_symbols[v]),
                    (double)atomic_load(&scanned_usec[v]) * 1e-6,
                    (double)atomic_load(&critical_usec[v]) * 1e-6);
    if (atomic_load(&emulated))
        fprintf(f, "  scan: %lld of those calls by the GPU scan's arithmetic on the CPU "
                   "(HMMRT_SCAN_GPU_EMULATE)\n", atomic_load(&emulated));
    /* a GPU run's own line says what the GPU scanned (scan_gpu.c) */
    if (mode == HMMRT_SCAN_AUTO && !on_gpu && !atomic_load(&scanned[0]) && !atomic_load(&scanned[1]))
        fprintf(f, "  scan: none (auto: a sequence of %d or more symbols, on 2 or more threads, "
                   "where the model's transfers leave a gain; docs/scan.md)\n", SCAN_MIN_LENGTH);
}
