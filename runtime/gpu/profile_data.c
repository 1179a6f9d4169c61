/* profile_data.c: the launcher of the GPU's generic profile scorer
 * (profile_data_gpu.h): uploads a profile's tables to a device the first
 * time a call of it runs there (kept until the process ends: a thousand
 * profiles of 200 nodes are about 100 MB), makes the sequences'
 * length-dependent weights, and launches on the batch the driver already put
 * on the device (so that every model of a program scores the same batch
 * without copying it again) the float kernel (profile_data_regs.h: the
 * specialised kernels' shape) in float, then profile_data_kernel.cu's double
 * kernel on the sequences it marked; or the double kernel alone, in double
 * and for profiles the float kernel does not take. */
#include "profile_data_gpu.h"
#include "profile_data_regs.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

enum { GROUP_THREADS = 32, BLOCK_THREADS = 128, BLOCKS_PER_SM = 16, MARKED_GROUPS = 512 };
#define ROWS_BYTES_LIMIT ((size_t)256 << 20) /* the groups' rows, per launch */

/* The tables on the devices: (profile, device) -> device memory. */
typedef struct uploaded {
    const hmmrt_profile *profile;
    int device;
    double *tables;
    unsigned char *col;
    /* the float kernel's tables, forward [0] and viterbi [1], made the first time
     * each is asked for: regs 1 (ready), -1 (the kernel does not take it), 0 (not yet) */
    int regs[2], G[2], S[2];
    float *w[2], *em[2];
    float *loops[2];
} uploaded;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uploaded *slots;
static size_t n_slots, used;

static size_t hash(const hmmrt_profile *p, int device)
{
    return ((size_t)(uintptr_t)p >> 4) * 31 + (size_t)device;
}

static size_t tables_doubles(const hmmrt_profile *p)
{
    return (size_t)HMMRT_PT_N * p->stride + 2 * (size_t)p->n_cols * p->stride +
           3 * (size_t)p->n_cols;
}

static int grow(void)
{
    size_t n = n_slots ? 2 * n_slots : 1024;
    uploaded *s = calloc(n, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < n_slots; i++)
        if (slots[i].profile) {
            size_t h = hash(slots[i].profile, slots[i].device) % n;
            while (s[h].profile)
                h = (h + 1) % n;
            s[h] = slots[i];
        }
    free(slots);
    slots = s;
    n_slots = n;
    return 0;
}

/* The float kernel's shape for the call, and its tables on the host (NULL
 * when not wanted): 1, or 0 when the float kernel does not take the profile
 * (beyond its shapes, or weights below float's range). */
static int regs_host(const hmmrt_gpu_profile_call *call, int *G, int *S, float **w, float **em,
                     float **loops)
{
    const hmmrt_profile *p = call->profile;
    if (!hmmrt_pd_regs_shape(p->M, call->viterbi, G, S) ||
        !hmmrt_pd_regs_address(*G, *S, call->viterbi))
        return 0;
    float *wt = malloc(hmmrt_pd_regs_weights(*G, *S) * sizeof(float));
    float *et = malloc((hmmrt_pd_regs_emissions(p, *G, *S) + 1) * sizeof(float));
    float *lt = malloc((3 * (size_t)p->n_cols + 1) * sizeof(float));
    int ok = wt && et && lt &&
             hmmrt_pd_regs_tables(p, call->viterbi, *G, *S, wt, et, lt) == 0;
    if (ok && w) {
        *w = wt, *em = et, *loops = lt;
        return 1;
    }
    free(wt);
    free(et);
    free(lt);
    return ok;
}

/* Makes and uploads u's float tables for the call (u->regs set). */
static cudaError_t regs_tables(const hmmrt_gpu_profile_call *call, uploaded *u)
{
    const int v = call->viterbi;
    float *w, *em, *loops;
    u->regs[v] = -1;
    if (!regs_host(call, &u->G[v], &u->S[v], &w, &em, &loops))
        return cudaSuccess;
    const size_t wb = hmmrt_pd_regs_weights(u->G[v], u->S[v]) * sizeof(float),
                 eb = (hmmrt_pd_regs_emissions(call->profile, u->G[v], u->S[v]) + 1) * sizeof(float),
                 lb = (3 * (size_t)call->profile->n_cols + 1) * sizeof(float);
    cudaError_t e = cudaMalloc((void **)&u->w[v], wb);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&u->em[v], eb);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&u->loops[v], lb);
    if (e == cudaSuccess)
        e = cudaMemcpy(u->w[v], w, wb, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(u->em[v], em, eb, cudaMemcpyHostToDevice);
    if (e == cudaSuccess)
        e = cudaMemcpy(u->loops[v], loops, lb, cudaMemcpyHostToDevice);
    free(w);
    free(em);
    free(loops);
    if (e != cudaSuccess) {
        cudaFree(u->w[v]);
        cudaFree(u->em[v]);
        cudaFree(u->loops[v]);
        u->w[v] = u->em[v] = u->loops[v] = NULL;
        u->regs[v] = 0;
        return e;
    }
    u->regs[v] = 1;
    return cudaSuccess;
}

/* The call's tables on the current device: uploaded the first time (with
 * want_regs, the float kernel's too). */
static cudaError_t tables_on_device(const hmmrt_gpu_profile_call *call, int want_regs, uploaded *out)
{
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess)
        return e;
    pthread_mutex_lock(&lock);
    if ((used + 1) * 2 > n_slots && grow() != 0) {
        pthread_mutex_unlock(&lock);
        return cudaErrorMemoryAllocation;
    }
    size_t h = hash(call->profile, device) % n_slots;
    while (slots[h].profile && !(slots[h].profile == call->profile && slots[h].device == device))
        h = (h + 1) % n_slots;
    if (!slots[h].profile) {
        uploaded u = {call->profile, device, NULL, NULL, {0, 0}, {0, 0}, {0, 0}, {NULL, NULL},
                      {NULL, NULL}, {NULL, NULL}};
        size_t bytes = tables_doubles(call->profile) * sizeof(double);
        e = cudaMalloc((void **)&u.tables, bytes);
        if (e == cudaSuccess)
            e = cudaMalloc((void **)&u.col, (size_t)call->K);
        if (e == cudaSuccess)
            e = cudaMemcpy(u.tables, call->profile->data, bytes, cudaMemcpyHostToDevice);
        if (e == cudaSuccess)
            e = cudaMemcpy(u.col, call->profile->col, (size_t)call->K, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
            cudaFree(u.tables);
            cudaFree(u.col);
            pthread_mutex_unlock(&lock);
            return e;
        }
        slots[h] = u;
        used++;
    }
    e = cudaSuccess;
    if (want_regs && !slots[h].regs[call->viterbi])
        e = regs_tables(call, &slots[h]);
    *out = slots[h];
    pthread_mutex_unlock(&lock);
    return e;
}

/* Groups for n sequences: a warp each, as many as the device keeps resident
 * (and their rows fit ROWS_BYTES_LIMIT), no more than there are sequences. */
static int64_t groups_for(int64_t n, int stride)
{
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        sms <= 0)
        sms = 1;
    int64_t groups = (int64_t)sms * BLOCKS_PER_SM * (BLOCK_THREADS / GROUP_THREADS);
    int64_t fit = (int64_t)(ROWS_BYTES_LIMIT / (6 * (size_t)stride * sizeof(double)));
    if (groups > fit)
        groups = fit > 0 ? fit : 1;
    if (groups > n)
        groups = n;
    return groups;
}

/* The float kernel on the batch (lw: the sequences' length-dependent weights). */
static cudaError_t regs_launch(const hmmrt_gpu_profile_call *call, const uploaded *u,
                               const hmmrt_gpu_batch *b, const double *lw)
{
    const hmmrt_profile *p = call->profile;
    const int v = call->viterbi;
    hmmrt_pd_regs_args a = {.w = u->w[v], .em = u->em[v], .loops = u->loops[v], .col = u->col,
                            .n_cols = p->n_cols, .n_lw = call->n_lw, .lw = lw, .codes = b->codes,
                            .offsets = b->offsets, .lengths = b->lengths, .n = b->n,
                            .scores = (float *)b->scores};
    memcpy(a.special, p->special, sizeof a.special);
    memcpy(a.special_lw, p->special_lw, sizeof a.special_lw);
    int r = hmmrt_pd_regs_launch(&a, u->G[v], u->S[v], v, b->stream);
    return r < 0 ? cudaErrorInvalidDeviceFunction : (cudaError_t)r;
}

/* The double kernel on the batch, or with `marked` (after the float kernel)
 * on the sequences whose float score is NaN or -inf only, in double, their
 * scores written back as float: each marked (sequence, model) pair is
 * scored again at once, on the device, rather than the whole sequence
 * against every model of the program by the driver's re-score in double. */
static cudaError_t double_launch(const hmmrt_gpu_profile_call *call, const uploaded *u,
                                 const hmmrt_gpu_batch *b, const double *lw, int marked)
{
    const hmmrt_profile *p = call->profile;
    cudaStream_t stream = (cudaStream_t)b->stream;
    const int per_block = BLOCK_THREADS / GROUP_THREADS;
    int64_t groups = groups_for(b->n, p->stride);
    if (marked && groups > MARKED_GROUPS)
        groups = MARKED_GROUPS; /* few sequences are marked */
    groups = (groups + per_block - 1) / per_block * per_block;
    double *rows = NULL;
    int64_t *pick = NULL;
    cudaError_t e = cudaMallocAsync((void **)&rows, (size_t)groups * 6 * p->stride * sizeof(double),
                                    stream);
    if (e == cudaSuccess && marked) /* the list, then its count */
        e = cudaMallocAsync((void **)&pick, ((size_t)b->n + 1) * sizeof(int64_t), stream);
    int *picked = pick ? (int *)(pick + b->n) : NULL;
    if (e == cudaSuccess && marked)
        e = cudaMemsetAsync(picked, 0, sizeof(int), stream);
    if (e == cudaSuccess && marked)
        e = (cudaError_t)hmmrt_profile_pick_launch((const float *)b->scores, b->n, pick, picked, stream);
    if (e == cudaSuccess) {
        hmmrt_profile_kernel_args a = {.tables = u->tables, .col = u->col, .M = p->M,
                                       .stride = p->stride, .n_cols = p->n_cols,
                                       .viterbi = call->viterbi, .n_lw = call->n_lw,
                                       .use_double = b->use_double, .lw = lw, .codes = b->codes,
                                       .offsets = b->offsets, .lengths = b->lengths, .n = b->n,
                                       .scores = b->scores, .rows = rows, .pick = pick,
                                       .picked = picked};
        memcpy(a.special, p->special, sizeof a.special);
        memcpy(a.special_lw, p->special_lw, sizeof a.special_lw);
        e = (cudaError_t)hmmrt_profile_kernel_launch(&a, (int)(groups / per_block), BLOCK_THREADS,
                                                     stream);
    }
    if (pick)
        cudaFreeAsync(pick, stream);
    if (rows)
        cudaFreeAsync(rows, stream);
    return e;
}

int hmmrt_gpu_profile_launch(const hmmrt_gpu_profile_call *call, const hmmrt_gpu_batch *b)
{
    if (b->n <= 0)
        return 0;
    cudaStream_t stream = (cudaStream_t)b->stream;
    uploaded u;
    cudaError_t e = tables_on_device(call, !b->use_double, &u);
    if (e != cudaSuccess)
        return (int)e;
    double *lw = NULL;
    if (call->n_lw > 0) {
        e = cudaMallocAsync((void **)&lw, (size_t)b->n * call->n_lw * sizeof(double), stream);
        if (e == cudaSuccess)
            e = (cudaError_t)call->length_weights(b->lengths, b->n, lw, stream);
    }
    const int regs = !b->use_double && u.regs[call->viterbi] == 1;
    if (e == cudaSuccess && regs)
        e = regs_launch(call, &u, b, lw);
    if (e == cudaSuccess)
        e = double_launch(call, &u, b, lw, regs);
    if (lw)
        cudaFreeAsync(lw, stream);
    return (int)e;
}

void hmmrt_gpu_profile_describe(const hmmrt_gpu_profile_call *call, int device, int use_double,
                                char *buf, size_t len)
{
    (void)device;
    char shape[200];
    int G = 0, S = 0;
    if (!use_double && regs_host(call, &G, &S, NULL, NULL, NULL)) {
        snprintf(shape, sizeof shape,
                 "profile as data: libhmmrt_gpu's float profile kernel (M %d, %d lanes a sequence, "
                 "%d nodes a lane in registers)", call->profile->M, G, S);
        hmmrt_gpu_describe_kernel(hmmrt_pd_regs_address(G, S, call->viterbi), shape, 32, 0, buf, len);
        return;
    }
    const char *why = use_double ? "" : G ? ", its weights below float's range"
                                          : ", beyond the float kernel's shapes";
    snprintf(shape, sizeof shape,
             "profile as data: libhmmrt_gpu's generic profile kernel (M %d, a warp a sequence, "
             "blocks of %d, double%s%s)", call->profile->M, BLOCK_THREADS,
             use_double ? "" : ", scores written as float", why);
    hmmrt_gpu_describe_kernel(hmmrt_profile_kernel_address(), shape, BLOCK_THREADS, 0, buf, len);
}
