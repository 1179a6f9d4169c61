/* cuda_plan.c: the CUDA backend's plan of every call (gpu_plan: thread, block
 * or lanes of a warp per sequence, or dense; unrolling; precision), how each
 * call's CUDA kernel is launched (its LaunchShape,
 * which the kernel writers and hmmc -v both read), the ptxas level of the
 * program's kernels, and hmmc -v's report of each kernel nvcc built (registers
 * and shared memory from ptxas, block size and occupancy on an H100 by the
 * runtime's rules, runtime/occupancy_rules.c). */
#include "codegen/cuda/cuda_plan.h"

#include <stdlib.h>
#include <string.h>

#include "hmmrt_fb_gpu.h"
#include "occupancy_rules.h"
#include "codegen/cuda/profile_tuning.h"
#include "codegen/cuda/backend_cuda_profile_data.h"
#include "codegen/cuda/backend_cuda_real.h"
#include "ir/graph.h"

/* Above this many moves a CUDA kernel writes one position's body once instead
 * of sixteen times: the code would outgrow the instruction cache. */
enum { GPU_UNROLL_MAX_MOVES = 256 };
/* Up to this many live states a thread keeps a sequence's two columns in
 * registers (thread per sequence); above, registers would spill to local
 * memory, and a block shares the states of one sequence instead. */
enum { GPU_THREAD_MAX_STATES = 24 };

const char *gpu_shape_name(GpuShape shape)
{
    switch (shape) {
    case GPU_THREAD_PER_SEQUENCE: return "thread-per-sequence";
    case GPU_BLOCK_PER_SEQUENCE: return "block-per-sequence";
    case GPU_DENSE: return "dense";
    case GPU_PROFILE: return "profile";
    }
    return "?";
}

/* -v: why a forward or backward call is scored in double on the GPU. */
static void say_precision(FILE *verbose, const IrCall *call, const GpuPlan *plan)
{
    if (verbose && plan->float_underflow < 0)
        fprintf(verbose, "hmmc: plan %s: weights down to e^%.0f are below float's range "
                "(2^-126): on the GPU this call is scored in double\n", call->label,
                plan->float_underflow);
    if (verbose && plan->float_overflow > 0)
        fprintf(verbose, "hmmc: plan %s: weights up to e^%.0f are above float's range "
                "(2^128): on the GPU this call is scored in double\n", call->label,
                plan->float_overflow);
}

/* The first move into or out of a profile's nodes whose weight depends on
 * the sequence length, or -1: the profile kernel holds those weights in
 * tables fixed at build time, and takes length weights only on the moves
 * between special states (HMMER3's length model: N, J, C and S -> N). */
static int node_length_move(const IrModel *m, const ProfileView *v)
{
    for (int e = 0; e < v->n_entries; e++)
        for (int k = 0; k < v->K; k++)
            if (v->entries[e].move[k] >= 0 && m->moves[v->entries[e].move[k]].length_weight)
                return v->entries[e].move[k];
    for (int x = 0; x < v->n_exits; x++)
        for (int k = 0; k < v->K; k++)
            if (v->exits[x].move[k] >= 0 && m->moves[v->exits[x].move[k]].length_weight)
                return v->exits[x].move[k];
    return -1;
}

/* The profile shape for a call whose model is a profile (profile.h), with
 * its lanes and, for forward, the lanes' own scales; -v says why not. */
static void plan_profile(const Program *p, const IrCall *call, GpuPlan *plan, FILE *verbose)
{
    const IrModel *m = call->model;
    const char *not_profile;
    ProfileView *view = profile_view(p->arena, m, &not_profile);
    int length_move = view ? node_length_move(m, view) : -1;
    if (length_move >= 0) {
        view = NULL;
        not_profile = arena_printf(p->arena, "the weight of %s -> %s depends on the sequence "
                                   "length (the profile shape takes such weights only between "
                                   "special states)", m->states[m->moves[length_move].from].name,
                                   m->states[m->moves[length_move].to].name);
    }
    if (!view) {
        if (verbose)
            fprintf(verbose, "hmmc: plan %s: not a profile: %s\n", call->label, not_profile);
        return;
    }
    plan->shape = GPU_PROFILE;
    plan->profile = view;
    plan->profile_lanes = profile_lanes(view->K, call->alg == ALG_VITERBI);
    int lanes = plan->profile_lanes, per_lane = profile_lane_nodes(view->K, lanes);
    if (call->alg == ALG_FORWARD) {
        double whole = plan->float_underflow;
        plan->profile_lane_scales = profile_lane_scales(m, view, lanes);
        plan->float_underflow = profile_float_underflow(p->arena, m, view, lanes,
                                                        plan->profile_lane_scales);
        if (verbose && whole < 0 && plan->float_underflow == 0)
            fprintf(verbose, "hmmc: plan %s: weights down to e^%.0f, below "
                    "float's range, enter or leave the nodes: the GPU holds them "
                    "per lane times a power of two, and scores in float%s\n",
                    call->label, whole, plan->profile_lane_scales
                        ? " (entries below 2^-200: each lane and special state keeps "
                          "an exponent of its own, profile.h)" : "");
    }
    if (verbose)
        fprintf(verbose, "hmmc: plan %s: profile of %d nodes, %d special "
                "states, %d kinds of moves into nodes, %d out of them: on the GPU %d "
                "lanes a sequence, %d node%s a lane\n", call->label, view->K,
                view->n_specials, view->n_entries, view->n_exits, lanes,
                per_lane, per_lane == 1 ? "" : "s");
}

/* A posterior call: libhmmrt_gpu's forward-backward kernel (fb_kernel.cu)
 * when the model as written fits it (runtime/gpu/fb_device.c checks the same
 * at run time, on the live moves: never more than this counts), else the CPU
 * engine. */
static void plan_posterior(const Program *p, const IrCall *call, GpuPlan *plan, FILE *verbose)
{
    const IrModel *m = call->model;
    int *comp = ARENA_ARRAY(p->arena, int, m->n_states ? m->n_states : 1);
    Graph silent = graph_of_moves(p->arena, m, 1);
    int n_comps = graph_scc(p->arena, &silent, comp);
    int *size = ARENA_ARRAY(p->arena, int, n_comps ? n_comps : 1), cycle = 0;
    for (int s = 0; s < m->n_states; s++)
        if (++size[comp[s]] > cycle)
            cycle = size[comp[s]];
    plan->posterior = 1;
    plan->fb_kernel = 1;
    if (m->n_states > HMMRT_FB_GPU_MAX_STATES)
        plan->fb_why = arena_printf(p->arena, "%d states, more than the kernel's %d",
                                    m->n_states, HMMRT_FB_GPU_MAX_STATES);
    else if (cycle > HMMRT_FB_GPU_MAX_CYCLE)
        plan->fb_why = arena_printf(p->arena, "a silent cycle of %d states, more than the "
                                    "kernel's %d", cycle, HMMRT_FB_GPU_MAX_CYCLE);
    plan->fb_kernel = plan->fb_why == NULL;
    if (!verbose)
        return;
    if (plan->fb_kernel)
        fprintf(verbose, "hmmc: plan %s: GPU: libhmmrt_gpu's forward-backward kernel on the "
                "model as written (%d states), in float: a thread a sequence when only the start "
                "and the end are silent and at most %d states emit, else lanes of a warp or a "
                "block a sequence (PROG --timing says which); --double and sequences float "
                "cannot hold: the CPU engine\n", call->label, m->n_states,
                HMMRT_FB_HMM_MAX_STATES);
    else
        fprintf(verbose, "hmmc: plan %s: GPU: none, the CPU engine (%s)\n", call->label,
                plan->fb_why);
}

GpuPlan *gpu_plan(const Program *p, FILE *verbose, const unsigned char *generic)
{
    GpuPlan *plans = ARENA_ARRAY(p->arena, GpuPlan, p->n_calls ? p->n_calls : 1);
    for (int c = 0; c < p->n_calls; c++) {
        const IrCall *call = &p->calls[c];
        const IrModel *m = call->model;
        GpuPlan *plan = &plans[c];
        if (generic && generic[c]) {
            memset(plan, 0, sizeof *plan);
            plan->profile_data = 1;
            if (verbose)
                fprintf(verbose, "hmmc: plan %s: GPU: profile as data: %s on the model's "
                        "tables; no kernel of its own\n", call->label,
                        cuda_profile_data_plan_text(p->arena, call));
            continue;
        }
        if (call->alg == ALG_POSTERIOR && !m->real_dim) {
            plan_posterior(p, call, plan, verbose);
            continue;
        }
        if (m->real_dim) { /* densities: libhmmrt_gpu's path (backend_cuda_real.c) or the C path */
            plan->real = 1;
            const char *refused = cuda_real_refusal(p);
            if (verbose && refused)
                fprintf(verbose, "hmmc: plan %s: GPU: none, the program scores on the CPU: its "
                        "observations are real vectors (alphabet real[%d]) and %s\n", call->label,
                        m->real_dim, refused);
            else if (verbose)
                fprintf(verbose, "hmmc: plan %s: GPU: libhmmrt_gpu's path over real observations: "
                        "an emission pass (each frame's log-density under each of the model's %d "
                        "densities: a block per group of densities and 128 frames, or from 1,024 "
                        "distinct gaussians in float a matrix product of expanded features "
                        "through cuBLAS, TF32 x 3 on the tensor cores or FP32 as a bound of its "
                        "error says when the model is loaded: --timing says which) then %s, in "
                        "float, or double with --double\n",
                        call->label, m->n_emissions,
                        call->alg == ALG_FORWARD ? "the forward recursion (a block per sequence)"
                        : call->alg == ALG_VITERBI
                            ? "the viterbi recursion (a block per sequence); a traceback or "
                              "segments from back pointers kept on the device "
                              "(real_fb_kernel.cu, whole sequences of a chunk)"
                            : "forward storing its columns, then backward and the posteriors "
                              "(real_fb_kernel.cu: a block per whole sequence of a chunk; a "
                              "sequence longer than a chunk: the CPU path)");
            continue;
        }
        if (m->n_length_weights && verbose) /* cuda_write_length_weights */
            fprintf(verbose, "hmmc: plan %s: GPU: %d weight%s depend%s on the sequence length: "
                    "each kernel computes %s from the sequence's length, once per sequence, in "
                    "double as the C path does\n", call->label, m->n_length_weights,
                    m->n_length_weights == 1 ? "" : "s", m->n_length_weights == 1 ? "s" : "",
                    m->n_length_weights == 1 ? "it" : "them");
        plan->unroll = m->n_moves <= GPU_UNROLL_MAX_MOVES ? 16 : 1;
        plan->shape = call->plan.n_live <= GPU_THREAD_MAX_STATES ? GPU_THREAD_PER_SEQUENCE
                                                                 : GPU_BLOCK_PER_SEQUENCE;
        plan->silent_levels = graph_silent_levels(p->arena, m, call->alg == ALG_BACKWARD,
                                                  ARENA_ARRAY(p->arena, int, m->n_states));
        plan->float_underflow = call->plan.float_underflow;
        plan->float_overflow = call->plan.float_overflow;
        if (call->plan.dense) {
            plan->shape = GPU_DENSE;
            plan->unroll = 1;
            say_precision(verbose, call, plan);
            if (verbose)
                fprintf(verbose, "hmmc: plan %s: GPU scan of one long sequence: no, a dense "
                        "call (its transfers would need matrix products; docs/scan.md)\n",
                        call->label);
            continue;
        }
        if (verbose) /* runtime/gpu/scan_gpu.c decides per batch */
            fprintf(verbose, "hmmc: plan %s: GPU scan of one long sequence: %s\n", call->label,
                    call->storage == STORE_WHOLE_TABLE
                        ? "no, a whole table is printed"
                    : call->plan.bp_bytes
                        ? "where the run's rule takes the batch's longest sequences "
                          "(docs/scan.md), if the call has at most 32 boundary states; the "
                          "traceback from back pointers written on the host's cores"
                        : "where the run's rule takes the batch's longest sequences "
                          "(docs/scan.md), if the call has at most 32 boundary states");
        if (plan->shape == GPU_BLOCK_PER_SEQUENCE && call->alg != ALG_BACKWARD &&
            call->storage != STORE_WHOLE_TABLE)
            plan_profile(p, call, plan, verbose);
        say_precision(verbose, call, plan);
        if (verbose)
            fprintf(verbose, "hmmc: plan %s: GPU: %s\n", call->label,
                    plan->shape == GPU_THREAD_PER_SEQUENCE
                        ? arena_printf(p->arena, "thread per sequence (%d live states <= %d), "
                                       "%d position%s per body", call->plan.n_live,
                                       GPU_THREAD_MAX_STATES, plan->unroll,
                                       plan->unroll == 1 ? "" : "s")
                        : plan->shape == GPU_PROFILE ? "profile (above)"
                        : arena_printf(p->arena, "block per sequence (%d live states > %d), "
                                       "%d silent level%s", call->plan.n_live,
                                       GPU_THREAD_MAX_STATES, plan->silent_levels,
                                       plan->silent_levels == 1 ? "" : "s"));
    }
    return plans;
}

void gpu_plan_dump(const GpuPlan *plan, FILE *out)
{
    if (plan->profile_data) {
        fprintf(out, "  gpu-plan profile-data (libhmmrt_gpu's generic profile kernel)\n");
        return;
    }
    if (plan->real) {
        fprintf(out, "  gpu-plan real (libhmmrt_gpu's emission pass, recursions and "
                     "forward-backward, where no column is a whole table; else the CPU)\n");
        return;
    }
    if (plan->posterior) {
        fprintf(out, "  gpu-plan %s\n", plan->fb_kernel ? "fb-kernel" : "cpu-engine");
        return;
    }
    fprintf(out, "  gpu-plan shape %s unroll %d silent-levels %d profile-lanes %d lane-scales %d "
            "float-underflow %.17g float-overflow %.17g\n", gpu_shape_name(plan->shape),
            plan->unroll, plan->silent_levels, plan->profile_lanes, plan->profile_lane_scales,
            plan->float_underflow, plan->float_overflow);
}

const char *gpu_double_only_reason(const Program *p, const GpuPlan *plans)
{
    for (int c = 0; c < p->n_calls; c++) {
        const IrCall *call = &p->calls[c];
        if (plans[c].float_underflow < 0)
            return arena_printf(p->arena, "%s has weights down to e^%.0f, below float's range "
                                "(2^-126)", call->label, plans[c].float_underflow);
        if (plans[c].float_overflow > 0)
            return arena_printf(p->arena, "%s has weights up to e^%.0f, above float's range "
                                "(2^128)", call->label, plans[c].float_overflow);
    }
    return NULL;
}

void cuda_launch_shape(const Program *p, const GpuPlan *plan, int index, LaunchShape *shape)
{
    const IrCall *call = &p->calls[index];
    const IrModel *m = call->model;
    if (plan->shape == GPU_DENSE) {
        /* libhmmrt's products (hmmrt_dense.cuh): cuBLAS for float sums where the
         * program finds it at run time, else tiles of 256 threads */
        *shape = (LaunchShape){call->alg == ALG_VITERBI || call->plan.bp_bytes
                                   ? "dense, tiled matrix products of 128 x 128 (8 x 8 a thread)"
                                   : "dense, matrix products through cuBLAS (TF32, tensor cores) "
                                     "where the program finds libcublas at run time, else tiled "
                                     "products of 128 x 128 (8 x 8 a thread)",
                               0,
                               call->plan.n_live, 0, 0};
    } else if (plan->shape == GPU_PROFILE) {
        int lanes = plan->profile_lanes;
        *shape = (LaunchShape){arena_printf(p->arena, "profile, %d lanes a sequence", lanes), 0, 32, 0,
                               lanes};
    } else if (plan->shape == GPU_BLOCK_PER_SEQUENCE) {
        /* both columns of every state, and 32 values for block-wide sums;
         * a thread per live state at most */
        *shape = (LaunchShape){arena_printf(p->arena, "block per sequence, %d silent levels",
                                            plan->silent_levels),
                               2 * m->n_states + 32, call->plan.n_live, 1, 0};
    } else {
        *shape = (LaunchShape){"thread per sequence", 0, m->n_states, 0, 0};
    }
}

int cuda_ptxas_level(const Program *p, const GpuPlan *plans, const char **why)
{
    int most = 0;
    for (int c = 0; c < p->n_calls; c++) {
        const IrCall *call = &p->calls[c];
        if (plans[c].shape != GPU_PROFILE || call->alg != ALG_FORWARD) {
            *why = "ptxas -O3: not every call is forward on a profile";
            return 3;
        }
        int nodes = profile_lane_nodes(plans[c].profile->K, plans[c].profile_lanes);
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
static KernelInfo find_kernel(const Program *p, const Layout *layout, const GpuPlan *plans,
                              const char *log, int index, char type)
{
    char name[128];
    if (plans[index].shape == GPU_DENSE) {
        snprintf(name, sizeof name, "_Z18hmmc_dense_productI%c%sLi128E", type,
                 p->calls[index].alg == ALG_VITERBI ? "13hmmc_max_plus" : "16hmmc_sum_product");
    } else {
        /* the mangled name: _Z<length>c<index>_kernelI<f or d> */
        const char *base = layout_name(layout, index, "kernel");
        snprintf(name, sizeof name, "_Z%zu%sI%c", strlen(base), base, type);
    }
    return find_kernel_named(log, name);
}

void cuda_report_plan(const Program *p, const Layout *layout, const GpuPlan *plans,
                      const char *ptxas_log, FILE *out)
{
    const hmmrt_sm_limits *h100 = &hmmrt_sm90_limits;
    for (int c = 0; c < p->n_calls; c++) {
        if (p->calls[c].storage == STORE_WHOLE_TABLE || p->calls[c].storage == STORE_RUNTIME ||
            plans[c].real || plans[c].profile_data) /* no kernel (backend_cuda.c) */
            continue;
        LaunchShape shape;
        cuda_launch_shape(p, &plans[c], c, &shape);
        for (int d = 0; d < 2; d++) {
            KernelInfo k = find_kernel(p, layout, plans, ptxas_log, c, d ? 'd' : 'f');
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
            if (plans[c].shape == GPU_DENSE) {
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
