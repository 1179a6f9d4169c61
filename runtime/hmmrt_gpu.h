/* hmmrt_gpu.h: the GPU side of the runtime. libhmmrt_gpu.a (runtime/gpu/)
 * is linked only into programs built for the CUDA target; it owns the device,
 * streams, pinned buffers and transfers, sorts each batch by length, runs
 * the generated kernels through their launchers, follows tracebacks on the
 * host and puts results back in input order. libhmmrt itself never links
 * CUDA: it reaches the GPU side only through the function pointers of
 * hmmrt_gpu_program, which generated code fills with this library's
 * functions. */
#ifndef HMMRT_GPU_H
#define HMMRT_GPU_H

#include "hmmrt.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hmmrt_fb;         /* fb.h: a model as written, ready for forward-backward */
struct hmmrt_fb_gpu_job; /* hmmrt_fb_gpu.h */
typedef struct hmmrt_gpu_trainer hmmrt_gpu_trainer;

/* One batch as a generated launcher sees it: on the device, sorted by
 * length, longest first. */
typedef struct hmmrt_gpu_batch {
    int64_t n;                 /* sequences */
    const uint8_t *codes;      /* device: residues as codes of the call's alphabet; sequence i
                                  starts at codes + offsets[i], a multiple of 16, and may be read
                                  in 16-byte pieces up to its end rounded up to 16 */
    const int64_t *offsets;    /* device */
    const int64_t *lengths;    /* device */
    void *scores;              /* device: n floats, or n doubles with use_double */
    void *bp;                  /* device: back pointers of bp_bytes each, or NULL; sequence i's
                                  table starts at cell bp_offsets[i], cell (pos, state) at
                                  bp_offsets[i] + pos * n_states + state (hmmrt_paths' layout) */
    const int64_t *bp_offsets; /* device, or NULL */
    int use_double;
    void *stream;              /* the cudaStream_t to launch on */
} hmmrt_gpu_batch;

/* One call of main, as the GPU side runs it. */
/* What each output column of a call is (hmmrt_gpu_call.output_kind). */
enum {
    HMMRT_OUT_SCORE = 0,
    HMMRT_OUT_TRACEBACK = 1, /* viterbi: from the back pointers */
    HMMRT_OUT_SEGMENTS = 2,  /* viterbi: from the back pointers; posterior: of decode */
    HMMRT_OUT_DECODE = 3,    /* posterior */
    HMMRT_OUT_TABLE = 4      /* posterior: probability& */
};

/* A column over real observations that libhmmrt_gpu computes: the model's
 * index into hmmrt_program.models, viterbi (0: forward) and the output
 * column; what: a forward or viterbi score (runtime/gpu/real_gpu.c's
 * recursion), or runtime/gpu/real_fb_gpu.c's backward score, posterior
 * column or viterbi path column, out its HMMRT_OUT_* kind. */
enum { HMMRT_RG_SCORE = 0, HMMRT_RG_BACKWARD = 1, HMMRT_RG_POSTERIOR = 2, HMMRT_RG_PATH = 3 };
typedef struct hmmrt_real_gpu_call {
    int model, viterbi, column;
    int what, out;
} hmmrt_real_gpu_call;
struct hmmrt_real_file; /* real_read.h */

typedef struct hmmrt_gpu_call {
    const char *label;         /* "forward(casino)" */
    int alphabet;              /* index into hmmrt_program.alphabets */
    int n_states;
    int bp_bytes;              /* 0 when no traceback is printed */
    const hmmrt_paths *paths;  /* with bp_bytes: followed on the host by hmmrt_traceback */
    int n_outputs;
    const int *output_column;  /* the output columns this call fills ... */
    const unsigned char *output_kind; /* ... each an HMMRT_OUT_* */
    double cells_per_symbol;   /* live states: cells a symbol costs (for --timing) */
    /* Launches the call's kernel on a batch; returns a cudaError_t (0: success). */
    int (*launch)(const hmmrt_gpu_batch *b);
    /* Writes the plan of the call on a device: kernel shape, block size,
     * registers, shared memory, expected occupancy. */
    void (*describe)(int device, int use_double, char *buf, size_t len);
    /* A posterior call (launch and describe NULL): libhmmrt_gpu's
     * forward-backward kernel (the program's fb_launch) on the model as
     * written, or its CPU engine (hmmrt_posterior) for a sequence the float
     * kernel cannot hold and in double. */
    const struct hmmrt_posterior_call *posterior;
} hmmrt_gpu_call;

/* What the GPU side is given for one batch (host memory, input order). */
typedef struct hmmrt_gpu_input {
    int64_t n;
    const int64_t *lengths;
    const int64_t *offsets;       /* where sequence i starts in each codes[a] */
    const uint8_t *const *codes;  /* per alphabet: the batch's residues as codes */
    const unsigned char *skip;    /* 1: do not score sequence i (a symbol outside an alphabet) */
    hmmrt_value *values;          /* n rows of n_columns: filled for every scored sequence */
    /* NULL, or the n_ordered sequences not skipped, longest first, equal
     * lengths in input order (hmmrt_order_by_length): worked out where the
     * batch was mapped, off the thread that feeds the GPU; NULL: the driver
     * sorts the batch itself */
    const int64_t *order;
    int64_t n_ordered;
    /* NULL, or where each sequence's codes lie, n_alphabets pointers a
     * sequence (sequence i, alphabet a: [i * n_alphabets + a]): the reader's
     * own codes or a mapped database's, so that nothing copies them into
     * codes[a] first; codes and offsets are then not read */
    const uint8_t *const *sequence_codes;
    /* 1: codes[a] and offsets are also valid, page-locked (hmmrt_pinned_alloc)
     * and laid out longest first at 16-byte steps, zero-padded
     * (hmmrt_staged_offsets): a chunk whose sequences lie there one after
     * the other is copied to the device from there, not packed */
    int staged;
} hmmrt_gpu_input;

/* The codes of sequence i in alphabet a (of n_alphabets), wherever they lie. */
static inline const uint8_t *hmmrt_gpu_codes_of(const hmmrt_gpu_input *in, int n_alphabets,
                                                int a, int64_t i)
{
    return in->sequence_codes ? in->sequence_codes[i * n_alphabets + a]
                              : in->codes[a] + in->offsets[i];
}

typedef struct hmmrt_gpu_program {
    int n_calls;
    const hmmrt_gpu_call *calls;
    /* NULL, or why this program runs on the CPU even with a GPU (e.g. it
     * prints whole tables, which are computed on the CPU) */
    const char *cpu_only;
    /* NULL, or why the GPU scores this program in double only: a forward or
     * backward call whose weights are below float's range (2^-126) */
    const char *needs_double;
    /* The driver (libhmmrt_gpu: hmmrt_gpu_open, hmmrt_gpu_score, ...). open
     * returns NULL with a message in err when no usable GPU is there. */
    void *(*open)(const struct hmmrt_program *prog, int device, int use_double, char *err,
                  size_t errlen);
    /* 0, or -1 with a message naming the failed CUDA call and the batch in err. */
    int (*score)(void *gpu, const hmmrt_gpu_input *in, char *err, size_t errlen);
    /* --timing: the breakdown so far (transfers, kernels, tracebacks, cells/s). */
    void (*report)(void *gpu, FILE *out);
    void (*close)(void *gpu);
    /* The CUDA devices there are (0 when none can be used): --devices all. */
    int (*device_count)(void);
    /* --train's E-step on the GPU (runtime/gpu/fb_gpu.c), with the program's
     * kernel (runtime/gpu/fb_kernel.cu); NULL: training runs on the CPU. */
    struct hmmrt_gpu_trainer *(*fb_open)(const struct hmmrt_fb *fb, int64_t n_seqs,
                                         const int64_t *start, const uint8_t *codes, int device,
                                         int (*launch)(const struct hmmrt_fb_gpu_job *job),
                                         char *err, size_t errlen);
    int (*fb_expect)(struct hmmrt_gpu_trainer *g, const struct hmmrt_fb *fb, double *lnp,
                     double *move_counts, double *emission_counts, char *err, size_t errlen);
    void (*fb_close)(struct hmmrt_gpu_trainer *g);
    /* the kernel's shape in words (NULL: not said) */
    void (*fb_describe)(const struct hmmrt_gpu_trainer *g, char *buf, size_t len);
    int (*fb_launch)(const struct hmmrt_fb_gpu_job *job);
    /* > 0: a dense call sums (forward, backward) over this many states (the
     * most of such calls): while the GPU opens, the driver loads cuBLAS, makes
     * its handle and runs a product of that size once (runtime/gpu/cublas_dl.c) */
    int dense_sums;
    /* A program over real observations whose every column is one of these
     * scores: the GPU path of runtime/gpu/real_gpu.c (real_score.c calls it
     * file by file; done[i] says which sequences it scored). */
    int n_real_calls;
    const hmmrt_real_gpu_call *real_calls;
    void *(*real_open)(const struct hmmrt_program *prog, int device, int use_double, char *err,
                       size_t errlen);
    int (*real_score)(void *g, const struct hmmrt_real_file *f, hmmrt_value *values,
                      unsigned char *done, char *err, size_t errlen);
    void (*real_report)(void *g, FILE *out);
    void (*real_close)(void *g);
    /* --train's E-step over real observations (runtime/gpu/real_train_gpu.c,
     * real_train_gpu.h says what each does); NULL: on the CPU */
    void *(*real_train_open)(const struct hmmrt_model *m, int64_t n_seqs, const double *const *obs,
                             const int64_t *length, int device, char *err, size_t errlen);
    int (*real_train_expect)(void *g, const struct hmmrt_model *m, double *lnp,
                             double *move_counts, double **gauss, int64_t **gauss_at,
                             double **parts, int **part_start, char *err, size_t errlen);
    void (*real_train_describe)(void *g, char *buf, size_t len);
    void (*real_train_close)(void *g);
} hmmrt_gpu_program;

/* Block size for a kernel (a __global__ function's address) on the current
 * device, from the occupancy rules: among the multiples of the warp size up to
 * the device's limit, and the state count rounded up to a warp, the one with
 * the most resident threads per multiprocessor (the smaller on a tie).
 * shared_per_block: dynamic shared memory. occupancy (may be NULL) receives
 * resident threads over the multiprocessor's maximum. (runtime/gpu/occupancy.c) */
int hmmrt_gpu_block_size(const void *kernel, int n_states, size_t shared_per_block,
                         double *occupancy);
/* "SHAPE, block B, R registers, S bytes shared, L bytes local (spilled),
 * occupancy O%" for a kernel on the current device. */
void hmmrt_gpu_describe_kernel(const void *kernel, const char *shape, int n_states,
                               size_t shared_per_block, char *buf, size_t len);

/* The E-step on the GPU (runtime/gpu/fb_gpu.c): open uploads the
 * sequences (sequence s: codes[start[s] .. start[s+1]-1]) and the model's
 * structure, NULL with a message when the GPU or the model does not allow
 * it; expect runs forward-backward with fb's current numbers, giving each
 * sequence's ln P (-inf: no path) and the summed expected counts. */
hmmrt_gpu_trainer *hmmrt_gpu_fb_open(const struct hmmrt_fb *fb, int64_t n_seqs,
                                     const int64_t *start, const uint8_t *codes, int device,
                                     int (*launch)(const struct hmmrt_fb_gpu_job *job), char *err,
                                     size_t errlen);
int hmmrt_gpu_fb_expect(hmmrt_gpu_trainer *g, const struct hmmrt_fb *fb, double *lnp,
                        double *move_counts, double *emission_counts, char *err, size_t errlen);
void hmmrt_gpu_fb_close(hmmrt_gpu_trainer *g);
void hmmrt_gpu_fb_describe(const hmmrt_gpu_trainer *g, char *buf, size_t len);

/* Dense models' forward and backward products (runtime/gpu/cublas_dl.c):
 * through cuBLAS, loaded at run time, on the tensor cores (TF32, in chunks
 * of states; TF32X2: the matrix split in two TF32 parts) or the CUDA cores
 * (FP32), or libhmmrt's tiles (HMMRT_DENSE_PRODUCT=tf32|tf32x2|fp32|tiles;
 * tiles also where no cuBLAS is found: *why then says so). The product is 0
 * or cuBLAS's status. Which a model gets: runtime/gpu/dense_choice.h. */
enum { HMMRT_DENSE_TILES, HMMRT_DENSE_TF32, HMMRT_DENSE_FP32, HMMRT_DENSE_TF32X2 };
int hmmrt_dense_product_mode(const char **why);
int hmmrt_dense_product_forced(void); /* HMMRT_DENSE_PRODUCT named the mode */
/* ... for a model of n states (TF32 in chunks of states above 1,024) */
int hmmrt_dense_product_mode_for(int n, const char **why);
void *hmmrt_cublas_handle(void); /* the current device's, made once; NULL: the tiles */
/* Loads the kernel of a product of n states (0.07 s) and picks cublasLt's
 * fastest algorithm for it, by timing (runtime/gpu/dense_lt.c). */
void hmmrt_cublas_warm(int n);
/* The product; workspace: hmmrt_cublas_workspace(n) bytes of the device's
 * memory for cublasLt's algorithm (without it, cublasGemmEx runs it). */
int hmmrt_cublas_sgemm_tn(void *handle, void *stream, int m, int n, int k, const float *a,
                          const float *b, float *c); /* FP32: real observations' emission pass */
int hmmrt_cublas_tf32_tn(void *handle, void *stream, int m, int n, int k, const float *a,
                         const float *b, float *c); /* the same on the tensor cores (TF32) */
int hmmrt_cublas_rows_product(void *handle, void *stream, int rows, int n, const float *in,
                              const float *matrix, float *out, void *workspace,
                              size_t workspace_bytes);
/* ... in a given mode; TF32X2 takes the matrix's TF32 parts hi and lo too */
int hmmrt_cublas_dense_product(void *handle, void *stream, int mode, int rows, int n,
                               const float *in, const float *matrix, const float *hi,
                               const float *lo, float *out, void *workspace,
                               size_t workspace_bytes);
size_t hmmrt_cublas_workspace(int n);
void hmmrt_cublas_describe(char *buf, size_t len); /* which algorithm, and its timing */
/* Whether those products run as CUDA graphs (HMMRT_DENSE_GRAPH=on|off, on by
 * default; *why: why not), and, after a capture failed, no longer. */
int hmmrt_dense_graphs(const char **why);
void hmmrt_dense_graphs_failed(const char *what);

/* The driver's functions, for generated code to put into hmmrt_gpu_program. */
void *hmmrt_gpu_open(const struct hmmrt_program *prog, int device, int use_double, char *err,
                     size_t errlen);
/* The GPU path over real observations (runtime/gpu/real_gpu.c). */
void *hmmrt_real_gpu_open(const struct hmmrt_program *prog, int device, int use_double, char *err,
                          size_t errlen);
int hmmrt_real_gpu_score(void *g, const struct hmmrt_real_file *f, hmmrt_value *values,
                         unsigned char *done, char *err, size_t errlen);
void hmmrt_real_gpu_report(void *g, FILE *out);
void hmmrt_real_gpu_close(void *g);
/* --train's E-step over real observations (runtime/gpu/real_train_gpu.c). */
void *hmmrt_real_train_open(const struct hmmrt_model *m, int64_t n_seqs, const double *const *obs,
                            const int64_t *length, int device, char *err, size_t errlen);
int hmmrt_real_train_expect(void *g, const struct hmmrt_model *m, double *lnp,
                            double *move_counts, double **gauss, int64_t **gauss_at,
                            double **parts, int **part_start, char *err, size_t errlen);
void hmmrt_real_train_describe(void *g, char *buf, size_t len);
void hmmrt_real_train_close(void *g);
int hmmrt_gpu_score(void *gpu, const hmmrt_gpu_input *in, char *err, size_t errlen);
void hmmrt_gpu_report(void *gpu, FILE *out);
void hmmrt_gpu_close(void *gpu);
int hmmrt_gpu_device_count(void);

#ifdef __cplusplus
}
#endif
#endif
