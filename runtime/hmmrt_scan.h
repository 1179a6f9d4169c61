/* hmmrt_scan.h: one long sequence over every core (issue 24). A generated
 * program describes each call it can scan (hmmrt_scan_call: forward,
 * backward and viterbi by their span functions, dense and posterior calls
 * by their model); libhmmrt cuts the sequence into chunks, computes each
 * chunk's transfer on its own thread, combines them in order and reruns the
 * chunks that back pointers or posteriors need (docs/scan.md). */
#ifndef HMMRT_SCAN_H
#define HMMRT_SCAN_H

#include <stdint.h>
#include <stdio.h>

/* Forward or backward over positions [i0, i1) on columns[0 .. n) (the
 * other column in columns[n .. 2n)), values times 2^-*scale; first: from
 * the start (end) column. 0, -inf (no path: the column is 0) or NAN (a
 * value left double's range: the caller scores on one thread). */
typedef double (*hmmrt_sum_span)(const void *x, int64_t L, int64_t i0, int64_t i1,
                                 double *columns, int64_t *scale, int first);
/* The same for `width` columns at once: column v in columns[v * 2n ..
 * v * 2n + n) (its other column after it), its exponent in scales[v];
 * 0 or NAN. */
typedef double (*hmmrt_sum_spans)(const void *x, int64_t L, int64_t i0, int64_t i1,
                                  double *columns, int64_t *scales, int width);
/* Viterbi over [i0, i1): ln values less offset[0] + offset[1]. */
typedef void (*hmmrt_max_span)(const void *x, int64_t L, int64_t i0, int64_t i1,
                               double *columns, double *offset, int first);
/* The same for `width` columns at once: column v in columns[v * 2n ..
 * v * 2n + n) (its other column after it), its offset pair in offsets[2v],
 * offsets[2v + 1]. */
typedef void (*hmmrt_max_spans)(const void *x, int64_t L, int64_t i0, int64_t i1,
                                double *columns, double *offsets, int width);
/* ... writing the back pointers of rows i0 + 1 .. i1 (and 0 when first)
 * into the call's whole table bp. */
typedef void (*hmmrt_max_span_bp)(const void *x, int64_t L, int64_t i0, int64_t i1,
                                  double *columns, double *offset, void *bp, int first);

typedef struct hmmrt_scan_call {
    const char *label;      /* "forward(casino)" */
    int n_states;           /* n: a column's length */
    int n_boundary;         /* the states a position reads of the column before it */
    const int *boundary;
    int last;               /* the state whose value is the score: end (start backward) */
    int backward;           /* sum_span runs from i1 down to i0 */
    int bp_bytes;           /* viterbi's back pointers (0: none) */
    hmmrt_sum_span sum_span;      /* forward, backward */
    hmmrt_sum_spans sum_spans;    /* ... a transfer's columns together (NULL: one by one) */
    hmmrt_max_span max_span;      /* viterbi */
    hmmrt_max_span_bp max_span_bp;
    hmmrt_max_spans max_spans;    /* ... a transfer's columns together (NULL: one by one) */
    /* a dense call's forward or backward (runtime/dense.c's model; no spans):
       transfers as matrix products (scan_dense.c) */
    struct hmmrt_dense *dense;
    /* a posterior call (libhmmrt's engine, fb.c; no spans): its forward and
       backward rows in chunks (scan_fb.c) */
    int posterior;
} hmmrt_scan_call;

/* ---- the plan (scan_plan.c) ------------------------------------------------ */
enum { HMMRT_SCAN_AUTO, HMMRT_SCAN_ON, HMMRT_SCAN_OFF };
/* --scan on|off|auto: 0, or -1 for another word. */
int hmmrt_scan_set_mode(const char *word);
int hmmrt_scan_mode(void);
/* What a chunk's transfer costs a position, in runs of the one-thread
 * function over it (the model of docs/scan.md). */
double hmmrt_scan_transfer_cost(const hmmrt_scan_call *c);
/* Whether the call's sequence of length L takes the scan (the rule: docs/scan.md). */
int hmmrt_scan_chosen(const hmmrt_scan_call *c, int64_t L);
/* Whether score.c should score a sequence of length L on its own, after the
 * batch's other sequences, with every thread free for its scan: one of the
 * program's calls would scan it, and the batch holds fewer long sequences
 * (hmmrt_scan_long) than there are threads (more keep every thread busy on
 * their own, with no transfers to compute). */
int hmmrt_scan_defers(const struct hmmrt_scan_call *const *calls, int n_calls, int64_t L,
                      int64_t long_in_batch);
/* Whether a sequence of length L counts as long for the rule above. */
int hmmrt_scan_long(int64_t L);
/* The chunks of [0, L): their count, and begin[0..count] (begin[count] = L).
 * work_first: what a transfer's position costs in positions of chunk 0
 * (which needs no transfer); chunk_bytes: the memory a chunk keeps (its
 * transfer), which bounds the count. On T >= 2 threads, 4 T chunks (fewer
 * where they would keep more than 64 MB, never fewer than T): chunk 0 on
 * one thread as long as the others' transfers take on the other T - 1.
 * HMMRT_SCAN_CHUNK=N (tests) cuts every chunk N long. begin is malloc'd;
 * NULL without memory. */
int64_t *hmmrt_scan_chunks(int64_t L, int threads, double work_first, size_t chunk_bytes,
                           int64_t *count);
/* Each thread's working memory for a scan: `doubles` a thread, at *stride
 * doubles from one thread's to the next, each on 128-byte lines of its own
 * (the span functions write their columns at every position: threads that
 * shared a line would take it from each other at every one). free() it. */
double *hmmrt_scan_thread_memory(size_t doubles, int threads, size_t *stride);
/* --timing: the sequences scanned and their symbols, per kind of call; the
 * seconds they took, and the CPU time of each phase's busiest thread summed
 * (what they would take with a core for each thread). */
void hmmrt_scan_count(int viterbi, int64_t L, double seconds, double critical);
void hmmrt_scan_report(FILE *f, int on_gpu); /* on_gpu: the GPU said its own */
/* A call scored by HMMRT_SCAN_GPU_EMULATE (tests): counted for the report. */
void hmmrt_scan_count_emulated(void);

/* ---- the engine (scan.c) ----------------------------------------------------- */
/* The score of a forward or backward call, or NAN: score on one thread
 * (a value left double's range, or no memory). */
double hmmrt_scan_sum(const hmmrt_scan_call *c, const void *x, int64_t L);
/* The viterbi score, and when bp is not NULL the whole back-pointer table
 * ((L + 1) x n cells of c->bp_bytes) as the one-thread function writes it;
 * NAN without memory. */
double hmmrt_scan_max(const hmmrt_scan_call *c, const void *x, int64_t L, void *bp);

/* ---- dense calls (scan_dense.c) -----------------------------------------------
 * The score of a dense call's forward or backward (c->dense), or NAN: score
 * on one thread (fewer than 3 symbols, no memory, a value left double's
 * range). */
double hmmrt_scan_dense_sum(const hmmrt_scan_call *c, const void *x, int64_t L);
/* What a transfer's position costs, in positions of the one-thread function,
 * for n emitting states (OpenBLAS's products or the blocked loop). */
double hmmrt_scan_dense_cost(int n);

/* ---- posterior calls and training (scan_fb.c) --------------------------------
 * fb.c's hmmrt_fb_run over one long sequence on every thread, where the rule
 * takes it (a descriptor of n_boundary = the larger of fb's forward and
 * backward boundary states, .posterior): ln P, the forward table's rows,
 * the posteriors over them when posterior is not NULL (*posterior =
 * scratch + n), the counts added when move_counts is not NULL, as
 * hmmrt_fb_run leaves them; NAN when not scanned (not chosen, fb's dense
 * form, another scan running, no memory, a row past double): then
 * hmmrt_fb_run's own one-thread run. scratch: hmmrt_fb_scratch(fb, L). */
struct hmmrt_fb;
double hmmrt_scan_fb_run(const struct hmmrt_fb *fb, const uint8_t *x, int64_t L,
                         double *scratch, double *move_counts, double *emission_counts,
                         double **posterior);

/* ---- combining transfers (scan_combine.c) ------------------------------------
 * A sum-product transfer over a chunk: n x nb values t[j * n + i] (column j:
 * the column after the chunk from the boundary state boundary[j] alone, with
 * exponent e[j]: the value is t * 2^e[j]). A vector is n values times 2^*ve.
 * Everything is plain arrays, for a GPU kernel to reuse. */
/* out = T v (out may not be v): only v's boundary states are read. 0; -1
 * when no path goes through (out is 0); -2 when a value of out fell below
 * double's normal range (digits lost: score on one thread instead). */
int hmmrt_scan_apply_sum(int n, int nb, const int *boundary, const double *t, const int64_t *e,
                         const double *v, int64_t ve, double *out, int64_t *oute);
/* C = A after B (first B's chunk, then A's): the transfer of both chunks.
 * 0, or -2 as hmmrt_scan_apply_sum. */
int hmmrt_scan_compose_sum(int n, int nb, const int *boundary, const double *a,
                            const int64_t *ae, const double *b, const int64_t *be, double *c,
                            int64_t *ce);
/* Max-plus: a transfer holds ln values (-inf: no path); out = T v. */
void hmmrt_scan_apply_max(int n, int nb, const int *boundary, const double *t, const double *v,
                          double *out);
void hmmrt_scan_compose_max(int n, int nb, const int *boundary, const double *a, const double *b,
                            double *c);

/* ---- the GPU scan's host half (scan_matrices.c; docs/scan.md) ---------------------
 * The GPU scan runs the first and last positions here with the call's span
 * functions and the middle [1, L - 1) in chunks, each a thread per boundary
 * state (runtime/gpu/scan_kernel.cu, arithmetic in scan_chunk.h) through the
 * symbols' matrices over the boundary states, padded to nbp states. */
enum {
    HMMRT_SCAN_GPU_MIN_CHUNK = 256,     /* positions a chunk, at least */
    HMMRT_SCAN_GPU_MAX_CHUNK = 1 << 20, /* ... at most (a chunk's exponents fit an int) */
    HMMRT_SCAN_GPU_MAX_CHUNKS = 1 << 16 /* chunks a sequence, at most (the host combines them) */
};
/* The boundary-state count a launch takes for nb: 1 to 4 as they are, else
 * 8, 16 or 32 (padded with states that no path reaches). */
int hmmrt_scan_pad(int nb);
/* Per symbol c < K, the nbp x nbp matrix of one position over the boundary
 * states: m[(c * nbp + s) * nbp + j] from boundary state j to s. Sums: the
 * entries are below 1, times 2^me[c]; *least is the smallest nonzero one.
 * Max-plus: ln values less mo[c]. 0, or -1 when a span left double's range. */
int hmmrt_scan_matrices(const hmmrt_scan_call *c, int K, int64_t L, int nbp, double *m, int *me,
                        double *mo, double *least);
/* The type a sum's chunks run in, from the matrices' least entry: 0 float
 * (asked, and every entry at least 2^-40 of its symbol's largest, which
 * scan_chunk.h's bands keep in float's normal range), 1 double (down to
 * 2^-300), -1 neither (score another way). Max-plus: as asked. */
int hmmrt_scan_type(const hmmrt_scan_call *c, double least, int want_double);
/* The middle of a sequence of L symbols in chunks of *chunk positions (a
 * multiple of 16), about `want` of them. */
void hmmrt_scan_cut(int64_t L, int64_t want, int64_t *chunk, int64_t *n_chunks);
/* Chunk k's transfer: nbp columns of nbp doubles t[j * nbp + s], and
 * exponents e[j] (sums) or ln values with their offsets in (max-plus). */
typedef void (*hmmrt_scan_transfer_fn)(const void *ctx, int64_t k, double *t, int64_t *e);
/* The score from the middle's n_chunks transfers: the first position, the
 * transfers in order (the last first, backward) in double, the last
 * position. NAN: a value left double's range (score another way). */
double hmmrt_scan_finish(const hmmrt_scan_call *c, const void *x, int64_t L, int nbp,
                         int64_t n_chunks, hmmrt_scan_transfer_fn transfer, const void *ctx);
/* Viterbi with back pointers: the score as hmmrt_scan_finish gives it, and
 * the whole table bp ((L + 1) x n cells of c->bp_bytes, as the one-thread
 * function writes it) from the first position, each chunk of `chunk`
 * positions run again from its exact entry (on every thread) and the last
 * position. NAN without memory. */
double hmmrt_scan_finish_bp(const hmmrt_scan_call *c, const void *x, int64_t L, int nbp,
                            int64_t n_chunks, int64_t chunk, hmmrt_scan_transfer_fn transfer,
                            const void *ctx, void *bp);
/* Chunk k's transfer from a launch's results (scan_chunk.h's
 * hmmrt_scan_results layout), as hmmrt_scan_transfer_fn gives it. */
void hmmrt_scan_read_transfer(int nbp, int use_double, int max_plus, int64_t n_chunks,
                              const void *results, int64_t k, double *t, int64_t *e);
/* 1 when a column of the results left float's range (HMMRT_SCAN_RISKY). */
int hmmrt_scan_results_risky(int nbp, int64_t n_chunks, int use_double, const void *results);
/* The whole GPU scan on the CPU with the kernel's arithmetic, in float or
 * double, chunks of `chunk` positions (tests); viterbi's back pointers too
 * where bp is not NULL (hmmrt_scan_finish_bp). *status: HMMRT_SCAN_RISKY
 * (scan_chunk.h) when a float column left float's range (the score is NAN). */
double hmmrt_scan_emulate(const hmmrt_scan_call *c, const uint8_t *x, int64_t L, int K,
                          int use_double, int64_t chunk, void *bp, int *status);

#endif
