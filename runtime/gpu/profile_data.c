/* profile_data.c: the launcher of the GPU's generic profile scorer
 * (profile_data_gpu.h): uploads a profile's tables to a device the first
 * time a call of it runs there (kept until the process ends: a thousand
 * profiles of 200 nodes are about 100 MB), makes the sequences'
 * length-dependent weights, and launches profile_data_kernel.cu's kernel on the
 * batch the driver already put on the device, so that every model of a
 * program scores the same batch without copying it again. */
#include "profile_data_gpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

enum { GROUP_THREADS = 32, BLOCK_THREADS = 128, BLOCKS_PER_SM = 16 };
#define ROWS_BYTES_LIMIT ((size_t)256 << 20) /* the groups' rows, per launch */

/* The tables on the devices: (profile, device) -> device memory. */
typedef struct uploaded {
    const hmmrt_profile *profile;
    int device;
    double *tables;
    unsigned char *col;
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

/* The call's tables on the current device: uploaded the first time. */
static cudaError_t tables_on_device(const hmmrt_gpu_profile_call *call, uploaded *out)
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
        uploaded u = {call->profile, device, NULL, NULL};
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
    *out = slots[h];
    pthread_mutex_unlock(&lock);
    return cudaSuccess;
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

int hmmrt_gpu_profile_launch(const hmmrt_gpu_profile_call *call, const hmmrt_gpu_batch *b)
{
    if (b->n <= 0)
        return 0;
    const hmmrt_profile *p = call->profile;
    cudaStream_t stream = (cudaStream_t)b->stream;
    uploaded u;
    cudaError_t e = tables_on_device(call, &u);
    if (e != cudaSuccess)
        return (int)e;
    const int per_block = BLOCK_THREADS / GROUP_THREADS;
    int64_t groups = groups_for(b->n, p->stride);
    groups = (groups + per_block - 1) / per_block * per_block;
    double *lw = NULL, *rows = NULL;
    if (call->n_lw > 0) {
        e = cudaMallocAsync((void **)&lw, (size_t)b->n * call->n_lw * sizeof(double), stream);
        if (e == cudaSuccess)
            e = (cudaError_t)call->length_weights(b->lengths, b->n, lw, stream);
    }
    if (e == cudaSuccess)
        e = cudaMallocAsync((void **)&rows, (size_t)groups * 6 * p->stride * sizeof(double), stream);
    if (e == cudaSuccess) {
        hmmrt_profile_kernel_args a = {.tables = u.tables, .col = u.col, .M = p->M,
                                       .stride = p->stride, .n_cols = p->n_cols,
                                       .viterbi = call->viterbi, .n_lw = call->n_lw,
                                       .use_double = b->use_double, .lw = lw, .codes = b->codes,
                                       .offsets = b->offsets, .lengths = b->lengths, .n = b->n,
                                       .scores = b->scores, .rows = rows};
        memcpy(a.special, p->special, sizeof a.special);
        memcpy(a.special_lw, p->special_lw, sizeof a.special_lw);
        e = (cudaError_t)hmmrt_profile_kernel_launch(&a, (int)(groups / per_block), BLOCK_THREADS,
                                                     stream);
    }
    if (rows)
        cudaFreeAsync(rows, stream);
    if (lw)
        cudaFreeAsync(lw, stream);
    return (int)e;
}

void hmmrt_gpu_profile_describe(const hmmrt_gpu_profile_call *call, int device, int use_double,
                                char *buf, size_t len)
{
    (void)device;
    char shape[160];
    snprintf(shape, sizeof shape,
             "profile as data: libhmmrt_gpu's generic profile kernel (M %d, a warp a sequence, "
             "blocks of %d, double%s)", call->profile->M, BLOCK_THREADS,
             use_double ? "" : ", scores written as float");
    hmmrt_gpu_describe_kernel(hmmrt_profile_kernel_address(), shape, BLOCK_THREADS, 0, buf, len);
}
