/* cuda_plan.c: how each call's CUDA kernel is launched (its LaunchShape,
 * which the kernel writers and hmmc -v both read), the ptxas level of the
 * program's kernels, and hmmc -v's report of each kernel nvcc built (registers
 * and shared memory from ptxas, block size and occupancy on an H100 by the
 * runtime's rules, runtime/occupancy_rules.c). */
#include "codegen/cuda/cuda_plan.h"

#include <stdlib.h>
#include <string.h>

#include "occupancy_rules.h"
#include "codegen/cuda/profile_tuning.h"

void cuda_launch_shape(const Program *p, int index, LaunchShape *shape)
{
    const IrCall *call = &p->calls[index];
    const IrModel *m = call->model;
    if (call->plan.gpu_shape == GPU_DENSE) {
        /* libhmmrt's tiled product (hmmrt_dense.cuh): 256 threads, static shared memory */
        *shape = (LaunchShape){"dense, tiled matrix products of 128 x 128 (8 x 8 a thread)", 0,
                               call->plan.n_live, 0, 0};
    } else if (call->plan.gpu_shape == GPU_PROFILE) {
        int lanes = call->plan.profile_lanes;
        *shape = (LaunchShape){arena_printf(p->arena, "profile, %d lanes a sequence", lanes), 0, 32, 0,
                               lanes};
    } else if (call->plan.gpu_shape == GPU_BLOCK_PER_SEQUENCE) {
        /* both columns of every state, and 32 values for block-wide sums;
         * a thread per live state at most */
        *shape = (LaunchShape){arena_printf(p->arena, "block per sequence, %d silent levels",
                                            call->plan.silent_levels),
                               2 * m->n_states + 32, call->plan.n_live, 1, 0};
    } else {
        *shape = (LaunchShape){"thread per sequence", 0, m->n_states, 0, 0};
    }
}

int cuda_ptxas_level(const Program *p, const char **why)
{
    int most = 0;
    for (int c = 0; c < p->n_calls; c++) {
        const IrCall *call = &p->calls[c];
        if (call->plan.gpu_shape != GPU_PROFILE || call->alg != ALG_FORWARD) {
            *why = "ptxas -O3: not every call is forward on a profile";
            return 3;
        }
        int nodes = profile_lane_nodes(call->plan.profile->K, call->plan.profile_lanes);
        most = nodes > most ? nodes : most;
    }
    if (p->n_calls == 0) {
        *why = "ptxas -O3: no calls";
        return 3;
    }
    if (most > PROFILE_PTXAS_O1_MAX_NODES) {
        *why = arena_printf(p->arena, "ptxas -O3: %d nodes a lane, more than %d", most,
                            PROFILE_PTXAS_O1_MAX_NODES);
        return 3;
    }
    *why = arena_printf(p->arena, "ptxas -O1: every call is forward on a profile of at most %d "
                                  "nodes a lane (%d here), where fewer registers fit more warps",
                        PROFILE_PTXAS_O1_MAX_NODES, most);
    return 1;
}

/* What ptxas said about one kernel. */
typedef struct KernelInfo {
    int registers;        /* -1: not found */
    size_t static_shared; /* bytes */
    int spill_bytes;      /* spill stores */
} KernelInfo;

/* Finds a kernel in the ptxas output by the start of its mangled name: the
 * lines after "Compiling entry function 'NAME...'". */
static KernelInfo find_kernel_named(const char *log, const char *name)
{
    KernelInfo k = {-1, 0, 0};
    for (const char *at = strstr(log, "Compiling entry function"); at;
         at = strstr(at + 1, "Compiling entry function")) {
        const char *end = strchr(at, '\n');
        const char *found = strstr(at, name);
        if (!found || (end && found > end))
            continue;
        const char *next = strstr(at + 1, "Compiling entry function");
        const char *spill = strstr(at, "bytes spill stores");
        const char *used = strstr(at, "Used ");
        if (spill && (!next || spill < next)) {
            const char *line = spill;
            while (line > at && line[-1] != '\n')
                line--;
            char *after;
            strtol(line, &after, 10); /* "N bytes stack frame, M bytes spill stores" */
            const char *comma = strchr(after, ',');
            k.spill_bytes = comma ? (int)strtol(comma + 1, NULL, 10) : 0;
        }
        if (used && (!next || used < next)) {
            k.registers = (int)strtol(used + 5, NULL, 10);
            const char *smem = strstr(used, "bytes smem");
            const char *eol = strchr(used, '\n');
            if (smem && (!eol || smem < eol)) {
                const char *digits = smem - 1;
                while (digits > used && (digits[-1] == ' ' || (digits[-1] >= '0' && digits[-1] <= '9')))
                    digits--;
                k.static_shared = (size_t)strtoull(digits, NULL, 10);
            }
        }
        return k;
    }
    return k;
}

/* The kernel of call `index` in precision `type` ('f' or 'd'): c<index>_kernel,
 * or for a dense call the large tile of libhmmrt's product in its semiring. */
static KernelInfo find_kernel(const Program *p, const char *log, int index, char type)
{
    char name[128];
    if (p->calls[index].plan.gpu_shape == GPU_DENSE) {
        snprintf(name, sizeof name, "_Z18hmmc_dense_productI%c%sLi128E", type,
                 p->calls[index].alg == ALG_VITERBI ? "13hmmc_max_plus" : "16hmmc_sum_product");
    } else {
        char base[32]; /* the mangled name: _Z<length>c<index>_kernelI<f or d> */
        snprintf(base, sizeof base, "c%d_kernel", index);
        snprintf(name, sizeof name, "_Z%zu%sI%c", strlen(base), base, type);
    }
    return find_kernel_named(log, name);
}

void cuda_report_plan(const Program *p, const char *ptxas_log, FILE *out)
{
    const hmmrt_sm_limits *h100 = &hmmrt_sm90_limits;
    for (int c = 0; c < p->n_calls; c++) {
        if (p->calls[c].storage == STORE_WHOLE_TABLE)
            continue;
        LaunchShape shape;
        cuda_launch_shape(p, c, &shape);
        for (int d = 0; d < 2; d++) {
            KernelInfo k = find_kernel(p, ptxas_log, c, d ? 'd' : 'f');
            const char *precision = d ? "double" : "float";
            if (k.registers < 0) {
                fprintf(out, "hmmc: plan %s, GPU kernel in %s: %s; ptxas reported no registers\n",
                        p->calls[c].label, precision, shape.name);
                continue;
            }
            size_t dynamic = (size_t)shape.shared_values * (d ? sizeof(double) : sizeof(float));
            size_t shared = k.static_shared + dynamic;
            double occupancy = 0;
            int block = hmmrt_best_block(h100, h100->max_threads_per_block, k.registers, shared,
                                         shape.states, &occupancy);
            if (p->calls[c].plan.gpu_shape == GPU_DENSE) {
                block = 256; /* fixed by the tile */
                occupancy = (double)hmmrt_resident_blocks(h100, block, k.registers, shared) *
                            block / h100->max_threads_per_sm;
            }
            if (block > 0 && shape.block_per_sequence) {
                block = hmmrt_block_for_rows(block, shape.states, h100->warp_size);
                occupancy = (double)hmmrt_resident_blocks(h100, block, k.registers, shared) *
                            block / h100->max_threads_per_sm;
            }
            fprintf(out, "hmmc: plan %s, GPU kernel in %s: %s, %d registers%s, %zu bytes "
                         "shared memory a block (%zu static, %zu dynamic); ",
                    p->calls[c].label, precision, shape.name, k.registers,
                    k.spill_bytes ? arena_printf(p->arena, " (%d bytes spilled)", k.spill_bytes) : "",
                    shared, k.static_shared, dynamic);
            if (block > 0)
                fprintf(out, "on an H100: block %d, occupancy %.0f%%", block, 100 * occupancy);
            else
                fprintf(out, "on an H100: no block fits (too much shared memory or registers)");
            fprintf(out, " (expected: the runtime decides from the actual device's limits)\n");
        }
    }
}
