/* driver.c: the GPU driver's entry points (hmmrt_gpu.h): open picks and
 * checks the device, score runs one batch (sort by length, plan chunks that
 * fit the buffers, keep two chunks in flight on two streams), close gives
 * everything back. Every CUDA call is checked (errors.c); a failure names the
 * call, CUDA's message and the batch, chunk and call it happened in. */
#include "driver.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { TARGET_CHUNKS = 4 };
#define MIN_CHUNK_BYTES ((size_t)16 << 20)

/* ---- open ------------------------------------------------------------------------ */

static void say(char *err, size_t errlen, const char *fmt, ...) HMMRT_PRINTF(3, 4);
static void say(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- page-locked memory for the runtime (pinned.c) ------------------------------ */

static int lending_device = -1; /* the first device opened */

/* Portable: any device of the process copies from it; made on the first
 * device opened, whichever thread asks (a thread's own device is 0 until set). */
static void *pinned_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaSetDevice(__atomic_load_n(&lending_device, __ATOMIC_ACQUIRE)) != cudaSuccess ||
        cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
        cudaGetLastError(); /* handled: the caller takes pageable memory */
        return NULL;
    }
    return p;
}

static void pinned_free(void *p)
{
    cudaFreeHost(p);
}

static void lend_pinned_memory(int device)
{
    int none = -1;
    if (__atomic_compare_exchange_n(&lending_device, &none, device, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        hmmrt_set_pinned_allocator(pinned_alloc, pinned_free);
}

/* ---- fault injection ------------------------------------------------------------ */

/* Reads HMMRT_GPU_FAULT for the first GPU a process opens (not the one that
 * rescores in double): 0, or -1 with the reason in err. */
static int read_fault(hmmrt_gpu *g, char *err, size_t errlen)
{
    static int opened_before; /* several GPUs (--devices) open at once */
    if (__atomic_fetch_add(&opened_before, 1, __ATOMIC_SEQ_CST))
        return 0;
    const char *text = getenv("HMMRT_GPU_FAULT");
    if (hmmrt_parse_gpu_fault(text, &g->fault) == 0)
        return 0;
    say(err, errlen, "HMMRT_GPU_FAULT='%s' is neither oom:BATCH nor error:BATCH", text);
    return -1;
}

/* At the start of a batch: arms the fault meant for it. An out-of-memory
 * fault gives the slots back first, so that the batch must allocate. */
static void arm_fault(hmmrt_gpu *g)
{
    g->fault_armed = HMMRT_FAULT_NONE;
    if (g->fault.kind == HMMRT_FAULT_NONE || g->fault.batch != g->stats.batches)
        return;
    g->fault_armed = g->fault.kind;
    if (g->fault.kind == HMMRT_FAULT_OOM)
        gpu_release_slots(g);
}

static void version_text(int version, char out[16])
{
    snprintf(out, 16, "%d.%d", version / 1000, version % 1000 / 10);
}

/* Why cudaGetDeviceCount found no device, in the user's words. */
static void explain_no_device(cudaError_t e, char *err, size_t errlen)
{
    int driver = 0, runtime = 0;
    char have[16], want[16];
    switch (e) {
    case cudaErrorNoDevice:
        say(err, errlen, "no CUDA device found");
        break;
    case cudaErrorInsufficientDriver:
        cudaDriverGetVersion(&driver);
        cudaRuntimeGetVersion(&runtime);
        version_text(driver, have);
        version_text(runtime, want);
        if (driver == 0)
            say(err, errlen, "no NVIDIA driver found; this program needs one for CUDA %s", want);
        else
            say(err, errlen,
                "the NVIDIA driver is too old: it supports CUDA %s, this program was built "
                "with CUDA %s",
                have, want);
        break;
    default:
        say(err, errlen, "cudaGetDeviceCount failed: %s", cudaGetErrorString(e));
    }
    cudaGetLastError(); /* the error is reported; it must not stick to later calls */
}

/* Picks the device: 0, or -1 with the reason in err. */
static int pick_device(hmmrt_gpu *g, int device, char *err, size_t errlen)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        explain_no_device(e == cudaSuccess ? cudaErrorNoDevice : e, err, errlen);
        return -1;
    }
    if (device < 0) /* -1 - k: under mpirun, the k-th rank of the node (mpi_run.c) */
        device = (-1 - device) % count;
    if (device >= count) {
        if (count == 1)
            say(err, errlen, "--device %d is out of range: there is 1 CUDA device, number 0",
                device);
        else
            say(err, errlen, "--device %d is out of range: there are %d CUDA devices, 0 to %d",
                device, count, count - 1);
        return -1;
    }
    struct cudaDeviceProp prop;
    if ((e = cudaSetDevice(device)) != cudaSuccess ||
        (e = cudaGetDeviceProperties(&prop, device)) != cudaSuccess) {
        say(err, errlen, "device %d cannot be used: %s", device, cudaGetErrorString(e));
        return -1;
    }
    int mode = cudaComputeModeDefault;
    if (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, device) != cudaSuccess)
        cudaGetLastError(); /* unknown mode: let the first allocation tell */
    if (mode == cudaComputeModeProhibited) {
        say(err, errlen, "device %d (%s) is in the prohibited compute mode", device, prop.name);
        return -1;
    }
    /* a run may end while a child gives the context back (gpu_leave.c) */
    hmmrt_gpu_teardown_leavable(mode == cudaComputeModeDefault);
    g->device = device;
    snprintf(g->device_name, sizeof g->device_name, "%s", prop.name);
    g->multiprocessors = prop.multiProcessorCount;
    g->device_memory = prop.totalGlobalMem;
    return 0;
}

int hmmrt_gpu_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
}

/* Checks what the generated code filled in: 0, or -1 with the reason. */
static int check_program(const hmmrt_program *prog, char *err, size_t errlen)
{
    const hmmrt_gpu_program *gp = prog->gpu;
    for (int c = 0; c < gp->n_calls; c++) {
        const hmmrt_gpu_call *call = &gp->calls[c];
        int bad_bp = call->bp_bytes != 0 && call->bp_bytes != 1 && call->bp_bytes != 2 &&
                     call->bp_bytes != 4;
        int traces = 0, bad_kind = 0;
        for (int k = 0; k < call->n_outputs; k++) {
            int kind = call->output_kind[k];
            traces |= kind == HMMRT_OUT_TRACEBACK || kind == HMMRT_OUT_SEGMENTS;
            bad_kind |= kind > HMMRT_OUT_TABLE ||
                        (!call->posterior && kind > HMMRT_OUT_SEGMENTS) ||
                        (call->posterior && kind == HMMRT_OUT_TRACEBACK);
        }
        int bad_kernel = !call->posterior && (!call->launch || bad_bp ||
                                              (traces && (!call->bp_bytes || !call->paths)));
        if (bad_kernel || bad_kind || call->alphabet < 0 || call->alphabet >= prog->n_alphabets ||
            call->n_states <= 0 || (call->posterior && !gp->fb_launch)) {
            say(err, errlen, "call %s is described inconsistently (a bug in hmmc)", call->label);
            return -1;
        }
    }
    return 0;
}

/* The shape of every chunk's buffer: the alphabets to copy, calls, precision. */
static int describe_shape(hmmrt_gpu *g)
{
    const hmmrt_gpu_program *gp = g->gp;
    int n_alphabets = g->prog->n_alphabets, n_calls = gp->n_calls;
    g->copy_of_alphabet = malloc((size_t)(n_alphabets > 0 ? n_alphabets : 1) * sizeof(int));
    g->n_states = calloc((size_t)(n_calls > 0 ? n_calls : 1), sizeof(int));
    g->bp_bytes = calloc((size_t)(n_calls > 0 ? n_calls : 1), sizeof(int));
    g->fb_states = calloc((size_t)(n_calls > 0 ? n_calls : 1), sizeof(int));
    g->fb_table = calloc((size_t)(n_calls > 0 ? n_calls : 1), sizeof(int));
    g->fb_grouped = calloc((size_t)(n_calls > 0 ? n_calls : 1), sizeof(int));
    if (!g->copy_of_alphabet || !g->n_states || !g->bp_bytes || !g->fb_states || !g->fb_table ||
        !g->fb_grouped)
        return -1;
    int copies = 0;
    for (int a = 0; a < n_alphabets; a++) {
        g->copy_of_alphabet[a] = -1;
        for (int c = 0; c < n_calls; c++)
            if (gp->calls[c].alphabet == a && g->copy_of_alphabet[a] < 0)
                g->copy_of_alphabet[a] = copies++;
    }
    for (int c = 0; c < n_calls; c++) {
        g->n_states[c] = gp->calls[c].n_states;
        g->bp_bytes[c] = gp->calls[c].bp_bytes;
    }
    gpu_posterior_shapes(g);
    g->shape = (hmmrt_chunk_shape){.n_copies = copies,
                                   .n_calls = n_calls,
                                   .score_bytes = g->use_double ? 8 : 4,
                                   .n_states = g->n_states,
                                   .bp_bytes = g->bp_bytes,
                                   .fb_states = g->fb_states,
                                   .fb_table = g->fb_table,
                                   .fb_grouped = g->fb_grouped};
    return 0;
}

static void free_driver(hmmrt_gpu *g)
{
    gpu_scan_close(g);
    gpu_close_posteriors(g);
    gpu_destroy_slots(g);
    gpu_free_stats(g);
    free(g->copy_of_alphabet);
    free(g->n_states);
    free(g->bp_bytes);
    free(g->fb_states);
    free(g->fb_table);
    free(g->fb_grouped);
    free(g->own_order);
    free(g->sorted_lengths);
    free(g->starts);
    free(g);
}

void *hmmrt_gpu_open(const hmmrt_program *prog, int device, int use_double, char *err,
                     size_t errlen)
{
    if (!prog->gpu || check_program(prog, err, errlen) != 0)
        return NULL;
    hmmrt_gpu *g = calloc(1, sizeof *g);
    if (!g) {
        say(err, errlen, "out of memory");
        return NULL;
    }
    g->prog = prog;
    g->gp = prog->gpu;
    g->use_double = use_double;
    g->target_chunks = TARGET_CHUNKS;
    g->min_chunk_bytes = MIN_CHUNK_BYTES;
    g->err = err;
    g->errlen = errlen;
    if (device >= 0)
        snprintf(g->where, sizeof g->where, "opening device %d", device);
    else /* under mpirun: the rank's (pick_device) */
        snprintf(g->where, sizeof g->where, "opening this MPI rank's device");
    if (read_fault(g, err, errlen) != 0 || pick_device(g, device, err, errlen) != 0) {
        free_driver(g);
        return NULL;
    }
    if (g->gp->dense_sums > 0 && !use_double) /* cuBLAS's first product takes 0.1 s: now */
        hmmrt_cublas_warm(g->gp->dense_sums);
    if (gpu_open_posteriors(g) != 0) {
        free_driver(g);
        return NULL;
    }
    if (describe_shape(g) != 0 || gpu_alloc_stats(g) != 0) {
        say(err, errlen, "out of memory");
        free_driver(g);
        return NULL;
    }
    if (gpu_create_slots(g) != 0 || gpu_size_slots(g) != 0) {
        free_driver(g);
        return NULL;
    }
    if (gpu_scan_open(g) != 0) {
        say(err, errlen, "out of memory");
        free_driver(g);
        return NULL;
    }
    g->err = NULL; /* err is the caller's; score brings its own */
    g->errlen = 0;
    lend_pinned_memory(g->device);
    return g;
}

void hmmrt_gpu_close(void *gpu)
{
    hmmrt_gpu *g = gpu;
    if (!g)
        return;
    cudaSetDevice(g->device);
    cudaDeviceSynchronize();
    free_driver(g);
}

/* ---- one batch ----------------------------------------------------------------------- */

static int grow_batch_arrays(hmmrt_gpu *g, int64_t n)
{
    if (n <= g->capacity)
        return 0;
    free(g->own_order);
    free(g->sorted_lengths);
    free(g->starts);
    g->own_order = malloc((size_t)n * sizeof *g->own_order);
    g->sorted_lengths = malloc((size_t)n * sizeof *g->sorted_lengths);
    g->starts = malloc((size_t)(n + 1) * sizeof *g->starts);
    g->capacity = g->own_order && g->sorted_lengths && g->starts ? n : 0;
    return g->capacity ? 0 : gpu_error(g, "out of memory sorting %lld sequences (%s)",
                                       (long long)n, g->where);
}

/* Sorts the batch longest first (or takes the order it came with, which
 * outlives the batch's scoring); returns how many are scored, or -1. */
static int64_t sort_batch(hmmrt_gpu *g)
{
    const hmmrt_gpu_input *in = g->in;
    if (grow_batch_arrays(g, in->n) != 0)
        return -1;
    int64_t m = in->n_ordered;
    g->order = in->order;
    if (!in->order) {
        m = hmmrt_order_by_length(in->lengths, in->skip, in->n, g->own_order);
        g->order = g->own_order;
    }
    if (m < 0)
        return gpu_error(g, "out of memory sorting %lld sequences (%s)", (long long)in->n,
                         g->where);
    for (int64_t k = 0; k < m; k++)
        g->sorted_lengths[k] = in->lengths[g->order[k]];
    return m;
}

static size_t chunk_target(const hmmrt_gpu *g, int64_t m)
{
    hmmrt_chunk_size all = hmmrt_measure(g->sorted_lengths, m);
    size_t bytes = hmmrt_chunk_bytes(&g->shape, &all);
    size_t target = bytes / (size_t)g->target_chunks;
    if (target < g->min_chunk_bytes)
        target = g->min_chunk_bytes;
    /* a kernel that gives each sequence one thread fills the device only
     * with as many sequences as it keeps threads resident; but a batch
     * smaller than target_chunks such fillings still goes in target_chunks
     * chunks, whose copies and host work overlap the kernels (the casino's
     * posterior kernels take 2 ms of 10^8 symbols, the pinned buffers of one
     * chunk 0.14 s) */
    int64_t fill = m / g->target_chunks;
    if (g->min_chunk_sequences < fill)
        fill = g->min_chunk_sequences;
    if (m > 0 && (size_t)((double)bytes / (double)m * (double)fill) > target)
        target = (size_t)((double)bytes / (double)m * (double)fill);
    return target < g->slot_limit ? target : g->slot_limit;
}

/* The largest buffer the chunks that slot s takes (every N_SLOTS-th) need
 * on the device; *host gets the host's. */
static size_t largest_chunk(const hmmrt_gpu *g, int s, size_t *host)
{
    size_t largest = 0;
    *host = 0;
    for (int64_t c = s; c < g->n_chunks; c += N_SLOTS) {
        hmmrt_chunk_size size =
            hmmrt_measure(g->sorted_lengths + g->starts[c], g->starts[c + 1] - g->starts[c]);
        size_t bytes = hmmrt_chunk_bytes(&g->shape, &size);
        size_t host_bytes = hmmrt_chunk_host_bytes(&g->shape, &size);
        if (bytes > largest)
            largest = bytes;
        if (host_bytes > *host)
            *host = host_bytes;
    }
    return largest;
}

/* Splits the sorted batch into chunks and makes the slots hold them; when
 * memory runs out, smaller chunks. 0, or -1. */
static int plan_batch(hmmrt_gpu *g, int64_t m)
{
    hmmrt_chunk_size longest = hmmrt_measure(g->sorted_lengths, 1);
    size_t single = hmmrt_chunk_bytes(&g->shape, &longest);
    for (;;) {
        g->n_chunks = hmmrt_plan_chunks(&g->shape, g->sorted_lengths, m, chunk_target(g, m),
                                        g->starts);
        size_t failed = 0;
        for (int s = 0; s < N_SLOTS && !failed; s++) {
            size_t host_need = 0, need = largest_chunk(g, s, &host_need);
            int got = gpu_reserve_slot(g, &g->slots[s], need, host_need);
            if (got < 0)
                return -1;
            if (got > 0)
                failed = need;
        }
        if (!failed)
            return 0;
        gpu_release_slots(g); /* try again with smaller chunks, from scratch */
        if (failed <= single)
            return gpu_error(g,
                             "out of memory: a sequence of %lld symbols needs %.1f MiB of "
                             "device and pinned host memory, and they could not be had (%s)",
                             (long long)g->sorted_lengths[0], (double)single / (1 << 20),
                             g->where);
        g->slot_limit = failed / 2 > single ? failed / 2 : single;
        hmmrt_note("GPU: out of memory for a chunk of %.1f MiB (%s); going on with chunks of "
                   "at most %.1f MiB", (double)failed / (1 << 20), g->where,
                   (double)g->slot_limit / (1 << 20));
    }
}

/* Keeps two chunks in flight: while the host collects one, the device works
 * on the other; each slot takes every other chunk. */
static int run_chunks(hmmrt_gpu *g)
{
    for (int64_t c = 0; c < g->n_chunks && c < N_SLOTS; c++)
        if (gpu_issue_chunk(g, &g->slots[c % N_SLOTS], c) != 0)
            return -1;
    for (int64_t c = 0; c < g->n_chunks; c++) {
        gpu_slot *s = &g->slots[c % N_SLOTS];
        if (gpu_finish_chunk(g, s) != 0)
            return -1;
        if (c + N_SLOTS < g->n_chunks && gpu_issue_chunk(g, s, c + N_SLOTS) != 0)
            return -1;
    }
    return 0;
}

static int score_batch(hmmrt_gpu *g)
{
    gpu_set_where(g, -1);
    if (gpu_check(g, cudaSetDevice(g->device), "cudaSetDevice") != 0)
        return -1;
    arm_fault(g);
    double started = hmmrt_seconds();
    int64_t m = sort_batch(g);
    if (m <= 0)
        return (int)m;
    /* the longest sequences, where the rule says so, over the whole GPU;
       the others as before */
    int64_t scanned = gpu_scan_batch(g, m);
    if (scanned < 0)
        return -1;
    g->order += scanned;
    memmove(g->sorted_lengths, g->sorted_lengths + scanned,
            (size_t)(m - scanned) * sizeof *g->sorted_lengths);
    m -= scanned;
    if (m == 0) {
        g->stats.sorting += hmmrt_seconds() - started;
        return 0;
    }
    if (plan_batch(g, m) != 0)
        return -1;
    g->stats.sorting += hmmrt_seconds() - started;
    return run_chunks(g);
}

int hmmrt_gpu_score(void *gpu, const hmmrt_gpu_input *in, char *err, size_t errlen)
{
    hmmrt_gpu *g = gpu;
    double started = hmmrt_seconds();
    g->in = in;
    g->err = err;
    g->errlen = errlen;
    g->stats.batches++;
    int status = score_batch(g);
    if (status != 0) {
        cudaDeviceSynchronize(); /* nothing may still run on the buffers */
        cudaGetLastError();
    }
    g->stats.wall += hmmrt_seconds() - started;
    g->in = NULL;
    return status;
}
