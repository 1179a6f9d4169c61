/* backend_cuda_thread.c: the CUDA kernel shape "thread per sequence", for
 * small models: each thread scores one sequence with the two columns in
 * registers. */

/* Each thread keeps its columns in arrays indexed only by constants, reads
 * its residues 16 at a time with one vector load, and finds the emission
 * tables in shared memory. Kernels are templates over the
 * precision: float by default, double with --double. Forward and backward
 * rescale a column by a power of two (exact) when its sum leaves
 * [2^-40, 2^40]; viterbi adds logs. */
#include "codegen/cuda/cuda_shapes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/emit.h"
#include "codegen/emit_dp.h"

typedef struct KernelWriter {
    Emitter *e;
    const Program *p;
    const IrCall *call;
    const Layout *layout; /* the names of the call's symbols */
    const GpuPlan *plan;
    int index;
    const IrModel *m;
    DpWriter dp;
    int n_tables;      /* emission tables the call uses ... */
    int *table_of;     /* ... emission index -> table number, or -1 */
    int alphabet;
} KernelWriter;

/* The name of a symbol of the call: "c0_kernel" (layout_name). */
static const char *name_of(const KernelWriter *w, const char *what)
{
    return layout_name(w->layout, w->index, what);
}

/* The name of emission em's table: "c0_table1". */
static const char *table_name(const KernelWriter *w, int em)
{
    return name_of(w, arena_printf(w->p->arena, "table%d", em));
}

/* The emission tables as __constant__ doubles; each block copies them into
 * shared memory in its precision (threads read them at different symbols). */
static void write_tables(KernelWriter *w)
{
    const IrModel *m = w->m;
    int logs = w->call->alg == ALG_VITERBI;
    char num[32];
    int *emission_of;
    w->n_tables = dp_emission_tables(w->p->arena, m, &w->table_of, &emission_of);
    for (int em = 0; em < m->n_emissions; em++) {
        if (w->table_of[em] < 0)
            continue;
        fprintf(w->e->out, "__constant__ double %s[%d] = {", table_name(w, em), m->K);
        for (int k = 0; k < m->K; k++) {
            double lp = m->emissions[em].logp[k];
            fprintf(w->e->out, "%s%s", k ? ", " : "", emit_double(num, logs ? lp : exp(lp)));
        }
        fprintf(w->e->out, "}; /* %s%s */\n", m->emissions[em].name, logs ? ", logs" : "");
    }
}

/* Kernel prologue: which sequence, the tables into shared memory, the
 * sequence's length-dependent weights (lenwK, which the moves read by name:
 * emit_dp.c). */
static void write_prologue(KernelWriter *w)
{
    const IrModel *m = w->m;
    for (int em = 0; em < m->n_emissions; em++)
        if (w->table_of[em] >= 0)
            emit_line(w->e, "__shared__ real e%d[%d];", em, m->K);
    emit_open(w->e, "for (int k = threadIdx.x; k < %d; k += blockDim.x)", m->K);
    for (int em = 0; em < m->n_emissions; em++)
        if (w->table_of[em] >= 0)
            emit_line(w->e, "e%d[k] = (real)%s[k];", em, table_name(w, em));
    emit_close(w->e, "");
    emit_line(w->e, "__syncthreads();");
    emit_line(w->e, "const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;");
    emit_line(w->e, "if (j >= b.n)");
    emit_line(w->e, "    return;");
    emit_line(w->e, "const int64_t L = b.lengths[j];");
    cuda_write_length_weights(w->e, w->p->arena, m, w->call->alg == ALG_VITERBI, "true");
}

/* The body of the position loop, written aside at the depth it will have
 * (the loop declares c and pos only where the body uses them). */
static char *write_aside(KernelWriter *w, void (*write_body)(KernelWriter *), int depth, size_t *size)
{
    FILE *out = w->e->out;
    char *body = NULL;
    *size = 0;
    if (!(w->e->out = open_memstream(&body, size)))
        fatal_out_of_memory();
    w->e->indent += depth;
    write_body(w);
    w->e->indent -= depth;
    if (fclose(w->e->out) != 0)
        fatal_out_of_memory();
    w->e->out = out;
    return body;
}

/* Whether `name` occurs in body as a word of its own, not part of a longer name. */
static int uses_name(const char *body, const char *name)
{
    static const char NAME_CHARS[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_";
    size_t n = strlen(name);
    for (const char *at = body; (at = strstr(at, name)); at += n)
        if ((at == body || !strchr(NAME_CHARS, at[-1])) && !(at[n] && strchr(NAME_CHARS, at[n])))
            return 1;
    return 0;
}

/* The loop over positions: 16 residues per vector load, the body unrolled over
 * them. BODY is written by write_body with `c` the symbol and `pos` the
 * position after it (forward, viterbi) or the position of the symbol (backward). */
static void write_position_loop(KernelWriter *w, void (*write_body)(KernelWriter *), int backward)
{
    int unrolled = w->plan->unroll != 1;
    size_t size;
    char *body = write_aside(w, write_body, unrolled ? 2 : 1, &size);
    int uses_c = uses_name(body, "c"), uses_pos = uses_name(body, "pos");
    if (uses_c)
        emit_line(w->e, "const uint8_t *x = b.codes + b.offsets[j];");
    if (!unrolled) {
        /* large models: one body, one residue at a time */
        if (backward)
            emit_open(w->e, "for (int64_t pos = L - 1; pos >= 0; pos--)");
        else
            emit_open(w->e, "for (int64_t pos = 1; pos <= L; pos++)");
        if (uses_c)
            emit_line(w->e, "const int c = x[pos%s];", backward ? "" : " - 1");
    } else {
        if (backward)
            emit_open(w->e, "for (int64_t base = ((L + 15) / 16 - 1) * 16; base >= 0; base -= 16)");
        else
            emit_open(w->e, "for (int64_t base = 0; base < L; base += 16)");
        if (uses_c)
            emit_line(w->e, "const uint4 chunk = __ldg((const uint4 *)(x + base));");
        emit_line(w->e, "#pragma unroll");
        if (backward)
            emit_open(w->e, "for (int k = 15; k >= 0; k--)");
        else
            emit_open(w->e, "for (int k = 0; k < 16; k++)");
        emit_line(w->e, "if (base + k >= L)");
        emit_line(w->e, "    %s;", backward ? "continue" : "break");
        if (uses_c) {
            emit_line(w->e, "const uint32_t word = k < 4 ? chunk.x : k < 8 ? chunk.y : k < 12 ? chunk.z : chunk.w;");
            emit_line(w->e, "const int c = (word >> (8 * (k & 3))) & 0xff;");
        }
        if (uses_pos)
            emit_line(w->e, "const int64_t pos = base + k%s;", backward ? "" : " + 1");
    }
    fwrite(body, 1, size, w->e->out);
    free(body);
    if (unrolled)
        emit_close(w->e, "");
    emit_close(w->e, "");
}

static void write_copy_back(KernelWriter *w)
{
    emit_line(w->e, "#pragma unroll");
    emit_line(w->e, "for (int s = 0; s < %d; s++)", w->m->n_states);
    emit_line(w->e, "    prev[s] = cur[s];");
}

/* Rescaling by a power of two when the column sum leaves [2^-40, 2^40]
 * (hmmc_rescaling, runtime/hmmrt_kernel.cuh); a column of zeros ends the
 * sequence: no path emits it. */
static void write_rescale(KernelWriter *w)
{
    dp_column_sum(&w->dp, "const real sum");
    emit_open(w->e, "if (!(sum > (real)0))");
    emit_line(w->e, "dead = true;");
    emit_line(w->e, "goto done;");
    emit_close(w->e, "");
    /* the marking rule: hmmc_losing_paths (runtime/hmmrt_kernel.cuh) */
    emit_line(w->e, "const real floor = hmmc_losing_floor(sum);");
    for (int s = 0; s < w->m->n_states; s++)
        if (dp_live(w->m, s))
            emit_line(w->e, "risky |= hmmc_losing_paths(cur[%d], floor);", s);
    emit_line(w->e, "real factor;");
    emit_line(w->e, "int shift;");
    emit_open(w->e, "if (hmmc_rescaling<0, 40>(sum, factor, shift))");
    emit_line(w->e, "#pragma unroll");
    emit_line(w->e, "for (int s = 0; s < %d; s++)", w->m->n_states);
    emit_line(w->e, "    cur[s] *= factor;");
    emit_line(w->e, "scale += shift;");
    emit_close(w->e, "");
}

static void write_forward_body(KernelWriter *w)
{
    dp_forward_emitting(&w->dp);
    dp_forward_silent(&w->dp);
    write_rescale(w);
    write_copy_back(w);
}

static void write_backward_body(KernelWriter *w)
{
    dp_backward_emitting(&w->dp);
    dp_backward_silent(&w->dp);
    write_rescale(w);
    write_copy_back(w);
}

/* Viterbi in float: a running sum of logs in the thousands has an ulp near
 * 1e-3, so the column is kept near 0: after every position its best value is
 * subtracted from every state and added to `offset`, kept in double. The
 * values on the best path then stay a few units from 0 (ulp about 2e-7). */
static void write_normalise(KernelWriter *w)
{
    const IrModel *m = w->m;
    fprintf(w->e->out, "%*sreal top = (real)-INFINITY;\n", 4 * w->e->indent, "");
    for (int s = 0; s < m->n_states; s++)
        if (dp_live(m, s))
            emit_line(w->e, "top = cur[%d] > top ? cur[%d] : top;", s, s);
    emit_open(w->e, "if (top != (real)-INFINITY)");
    emit_line(w->e, "#pragma unroll");
    emit_line(w->e, "for (int s = 0; s < %d; s++)", m->n_states);
    emit_line(w->e, "    cur[s] -= top;");
    emit_line(w->e, "offset += (double)top;");
    emit_close(w->e, "");
}

static void write_viterbi_body(KernelWriter *w)
{
    int bytes = w->call->plan.bp_bytes;
    if (bytes) {
        emit_line(w->e, "#pragma unroll");
        emit_line(w->e, "for (int s = 0; s < %d; s++)", w->m->n_states);
        emit_line(w->e, "    bp[s] = (%s)~0u;", dp_bp_type(bytes));
    }
    dp_viterbi_emitting(&w->dp);
    dp_viterbi_silent(&w->dp);
    if (bytes) {
        emit_line(w->e, "#pragma unroll");
        emit_line(w->e, "for (int s = 0; s < %d; s++)", w->m->n_states);
        emit_line(w->e, "    bp_row[pos * %d + s] = bp[s];", w->m->n_states);
    }
    write_normalise(w);
    write_copy_back(w);
}

static void write_init_columns(KernelWriter *w, const char *value, int state, const char *name)
{
    emit_line(w->e, "real prev[%d], cur[%d];", w->m->n_states, w->m->n_states);
    emit_line(w->e, "#pragma unroll");
    emit_line(w->e, "for (int s = 0; s < %d; s++)", w->m->n_states);
    emit_line(w->e, "    cur[s] = %s;", value);
    emit_line(w->e, "cur[%d] = (real)%s; /* %s */", state, w->call->alg == ALG_VITERBI ? "0" : "1",
              name);
}

static void write_sum_kernel(KernelWriter *w, int backward)
{
    const IrModel *m = w->m;
    int first = backward ? m->end : m->start, last = backward ? m->start : m->end;
    emit_line(w->e, "template <typename real>");
    emit_open(w->e, "__global__ void %s(const hmmrt_gpu_batch b)", name_of(w, "kernel"));
    write_prologue(w);
    write_init_columns(w, "(real)0", first, m->states[first].name);
    if (backward)
        dp_backward_silent(&w->dp);
    else
        dp_forward_silent(&w->dp);
    write_copy_back(w);
    cuda_write_float_guard(w->e, w->plan, "true");
    emit_line(w->e, "int scale = 0;");
    emit_line(w->e, "bool dead = false, risky = false;");
    write_position_loop(w, backward ? write_backward_body : write_forward_body, backward);
    emit_line(w->e, "done:");
    emit_line(w->e, "((real *)b.scores)[j] = dead ? (real)-INFINITY : risky ? (real)NAN /* rescore in double */ : "
                    "(real)((double)log(prev[%d]) + (double)scale * 0.693147180559945309417); /* %s */",
              last, m->states[last].name);
    emit_close(w->e, "");
}

static void write_viterbi_kernel(KernelWriter *w)
{
    const IrModel *m = w->m;
    int bytes = w->call->plan.bp_bytes;
    emit_line(w->e, "template <typename real>");
    emit_open(w->e, "__global__ void %s(const hmmrt_gpu_batch b)", name_of(w, "kernel"));
    write_prologue(w);
    if (bytes) {
        emit_line(w->e, "%s *bp_row = (%s *)b.bp + b.bp_offsets[j];", dp_bp_type(bytes), dp_bp_type(bytes));
        emit_line(w->e, "%s bp[%d];", dp_bp_type(bytes), m->n_states);
        emit_line(w->e, "#pragma unroll");
        emit_line(w->e, "for (int s = 0; s < %d; s++)", m->n_states);
        emit_line(w->e, "    bp[s] = (%s)~0u;", dp_bp_type(bytes));
    }
    write_init_columns(w, "(real)-INFINITY", m->start, m->states[m->start].name);
    dp_viterbi_silent(&w->dp);
    if (bytes) {
        emit_line(w->e, "#pragma unroll");
        emit_line(w->e, "for (int s = 0; s < %d; s++)", m->n_states);
        emit_line(w->e, "    bp_row[s] = bp[s];");
    }
    write_copy_back(w);
    emit_line(w->e, "double offset = 0;");
    write_position_loop(w, write_viterbi_body, 0);
    emit_line(w->e, "((real *)b.scores)[j] = (real)((double)prev[%d] + offset); /* %s */", m->end,
              m->states[m->end].name);
    emit_close(w->e, "");
}

void cuda_write_thread_call(Emitter *e, const Program *p, const Layout *l, const GpuPlan *plan, int index)
{
    const IrCall *call = &p->calls[index];
    KernelWriter w = {.e = e, .p = p, .call = call, .layout = l, .plan = plan, .index = index,
                      .m = call->model};
    dp_writer_init(&w.dp, e, p->arena, w.m);
    w.dp.prob_table = "e";
    w.dp.log_table = "e";
    w.dp.literal = "(real)%s";
    w.dp.value_type = "real";
    w.dp.back_pointers = call->plan.bp_bytes > 0;
    emit_blank(e);
    emit_comment(e, "==== call %d: %s; %d live states, %d moves; thread per sequence ====", index,
                 call->label, call->plan.n_live, w.m->n_moves);
    write_tables(&w);
    emit_blank(e);
    switch (call->alg) {
    case ALG_FORWARD: write_sum_kernel(&w, 0); break;
    case ALG_BACKWARD: write_sum_kernel(&w, 1); break;
    case ALG_VITERBI: write_viterbi_kernel(&w); break;
    case ALG_POSTERIOR: break; /* runs on the CPU (backend_cuda.c skips it) */
    }
    emit_blank(e);
    cuda_write_call_launcher(e, p, l, plan, index);
}
