/* driver.h: the state of the GPU driver (libhmmrt_gpu), shared by its files:
 * driver.c (open, close, one batch), errors.c (messages, injected faults),
 * slots.c (device and pinned buffers), chunks.c (one chunk's packing,
 * transfers, kernels, results) and stats.c (the --timing report); occupancy.c
 * picks block sizes for the generated launchers. Private to runtime/gpu/. */
#ifndef HMMRT_GPU_DRIVER_H
#define HMMRT_GPU_DRIVER_H

#include "hmmrt_gpu.h"
#include "internal.h"

#include <cuda_runtime_api.h>

enum {
    N_SLOTS = 2,     /* chunks in flight, one per stream, taking turns */
    EVENT_START = 0, /* before the copy to the device */
    EVENT_IN = 1,    /* after it */
    EVENT_CALLS = 2  /* after each call's kernel; then one after the copy back */
};

/* A buffer pair for one chunk in flight: device memory and pinned host
 * memory of the same size and layout (hmmrt_chunk_layout), and its stream. */
typedef struct gpu_slot {
    void *device, *host;
    size_t bytes, host_bytes;       /* capacity of each (the device's holds a posterior
                                       call's forward tables too) */
    cudaStream_t stream;
    cudaEvent_t *events;            /* EVENT_START, EVENT_IN, one per call, the copy back */
    int n_events;
    hmmrt_chunk_layout layout;      /* of the chunk in it; per-call arrays owned here */
    int64_t first;                  /* the chunk: sorted positions [first, first + sequences) */
    int64_t chunk;                  /* its number in the batch */
    int staged;                     /* its codes go to the device from the input's staged
                                       arrays as they lie, not packed (chunks.c) */
} gpu_slot;

/* The time a device phase kept the device busy: the union of its intervals
 * (in ms since the driver's first event). The two streams overlap chunks, so
 * the sum of their intervals would count time twice. */
typedef struct busy_time {
    double until; /* the end of the intervals so far */
    double ms;
} busy_time;

/* Totals since open, for the report. */
typedef struct gpu_stats {
    int64_t batches, chunks, sequences, symbols;
    int64_t staged_chunks;          /* of chunks: codes copied from the staged arrays */
    double h2d_bytes, d2h_bytes;
    busy_time h2d, d2h;
    busy_time *calls;               /* per call: its kernels */
    busy_time all_calls;            /* any kernel */
    double sorting, packing, collecting, waiting, wall; /* host seconds */
    double buffers;                 /* of sorting: allocating the slots' memory */
} gpu_stats;

typedef struct gpu_scan gpu_scan; /* scan_gpu.c */

typedef struct hmmrt_gpu {
    const hmmrt_program *prog;
    const hmmrt_gpu_program *gp;
    int device, use_double;
    char device_name[256];
    int multiprocessors;
    size_t device_memory;
    size_t slot_limit;        /* the most a slot may take: device and pinned memory */
    int target_chunks;        /* a batch is split into about this many chunks ... */
    size_t min_chunk_bytes;   /* ... of at least this size */
    int64_t min_chunk_sequences; /* ... and this many sequences (a posterior call in the
                                    kernel's HMM form: a thread a sequence), or 0 */
    int *copy_of_alphabet;    /* per alphabet: its copy in a chunk's buffer, or -1 */
    int *n_states, *bp_bytes; /* per call, behind shape */
    int *fb_states, *fb_table, *fb_grouped; /* per call, behind shape (posterior calls) */
    struct gpu_posterior *posteriors; /* per call (posterior_gpu.c); NULL when the program has none */
    hmmrt_scratch *scratches; /* the CPU engine's, one per OpenMP thread */
    int n_scratches;
    hmmrt_chunk_shape shape;
    gpu_scan *scan;           /* one long sequence over the whole GPU (scan_gpu.c) */
    gpu_slot slots[N_SLOTS];
    cudaEvent_t epoch;        /* recorded before the first chunk: device times count from it */
    int epoch_recorded;
    /* the batch being scored */
    const hmmrt_gpu_input *in;
    const int64_t *order;     /* sorted position -> input index: the batch's own order, or own_order */
    int64_t *own_order;       /* the driver's sort, for a batch that came without an order */
    int64_t *sorted_lengths;
    int64_t *starts;          /* chunk c: sorted positions [starts[c], starts[c + 1]) */
    int64_t capacity;         /* of own_order, sorted_lengths and starts */
    int64_t n_chunks;
    /* messages */
    char *err;
    size_t errlen;
    char where[256];          /* "batch 3, chunk 2 of 8": what the driver was doing */
    gpu_stats stats;
    /* fault injection (HMMRT_GPU_FAULT, for tests/gpu/faults) */
    hmmrt_gpu_fault fault;
    hmmrt_fault_kind fault_armed; /* the fault of this batch, until it has happened */
} hmmrt_gpu;

/* errors.c: "WHAT failed: CUDA's message (WHERE)" into g->err; returns -1. */
int gpu_fail(hmmrt_gpu *g, cudaError_t e, const char *what);
/* 0 when e is cudaSuccess, else gpu_fail. */
int gpu_check(hmmrt_gpu *g, cudaError_t e, const char *what);
/* A message of the driver's own into g->err; returns -1. */
int gpu_error(hmmrt_gpu *g, const char *fmt, ...) HMMRT_PRINTF(2, 3);

/* errors.c: 1 once when the fault of this batch is `kind` (the fault is then
 * used up), else 0. */
int gpu_take_fault(hmmrt_gpu *g, hmmrt_fault_kind kind);

/* slots.c */
int gpu_create_slots(hmmrt_gpu *g);  /* streams, events, layout arrays; 0 or -1 */
void gpu_destroy_slots(hmmrt_gpu *g);
void gpu_release_slots(hmmrt_gpu *g); /* frees the slots' memory (none may be in flight) */
/* Sets g->slot_limit from the device's free memory and the host's memory. */
int gpu_size_slots(hmmrt_gpu *g);
/* Makes slot s hold at least `need` bytes on the device and `host_need` on
 * the host: 0, 1 when memory ran out (the error is cleared, nothing is left
 * half-allocated), or -1 on another error. */
int gpu_reserve_slot(hmmrt_gpu *g, gpu_slot *s, size_t need, size_t host_need);

/* Where a section of slot s's layout is on the device (NULL for none). */
static inline void *gpu_device_at(const gpu_slot *s, size_t at)
{
    return at == HMMRT_NO_SECTION ? NULL : (char *)s->device + at;
}

/* chunks.c */
/* Packs chunk `chunk` into slot s and queues its copy in, kernels and copy back. */
int gpu_issue_chunk(hmmrt_gpu *g, gpu_slot *s, int64_t chunk);
/* Waits for slot s's chunk, then puts its scores and tracebacks into the
 * input's values. */
int gpu_finish_chunk(hmmrt_gpu *g, gpu_slot *s);
void gpu_set_where(hmmrt_gpu *g, int64_t chunk);

/* posterior_gpu.c: posterior calls, on the forward-backward kernel (fb_kernel.cu)
 * or, in double and for a sequence the float kernel cannot hold, on the CPU
 * engine (runtime/posterior.c). */
int gpu_open_posteriors(hmmrt_gpu *g);   /* before describe_shape; 0 or -1 */
void gpu_close_posteriors(hmmrt_gpu *g);
void gpu_posterior_shapes(hmmrt_gpu *g); /* fills n_states, bp_bytes and the fb_ arrays */
int gpu_launch_posterior(hmmrt_gpu *g, gpu_slot *s, int c); /* 0 or -1 */
/* Fills call c's outputs for sequence j of slot s's chunk (input index i):
 * 0, or 1 when memory ran out. Runs in collect's OpenMP team. */
int gpu_fill_posterior(const hmmrt_gpu *g, const gpu_slot *s, int c, int64_t j, hmmrt_value *row);
/* For --timing: where call c runs, and its kernel's shape. */
void gpu_describe_posterior(const hmmrt_gpu *g, int c, char *buf, size_t len);

/* scan_gpu.c: the batch's longest sequences over the whole GPU (docs/scan.md) */
int gpu_scan_open(hmmrt_gpu *g);  /* after the slots; 0 or -1 (memory) */
void gpu_scan_close(hmmrt_gpu *g);
/* Scores the first sequences of the sorted batch (m of them) that the rule
 * gives the scan, every call: how many (a prefix), or -1. */
int64_t gpu_scan_batch(hmmrt_gpu *g, int64_t m);
void gpu_scan_report(const hmmrt_gpu *g, FILE *out); /* --timing's lines */

/* stats.c */
int gpu_alloc_stats(hmmrt_gpu *g);
void gpu_free_stats(hmmrt_gpu *g);
/* Adds the event times of slot s's finished chunk. */
int gpu_add_chunk_times(hmmrt_gpu *g, gpu_slot *s);

#endif
