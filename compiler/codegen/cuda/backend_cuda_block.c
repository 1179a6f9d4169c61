/* backend_cuda_block.c: the CUDA kernel shape "block per sequence", for
 * models too large to keep a column in one thread's registers (profiles:
 * hundreds to thousands of states). */

/* A block scores one sequence: its threads
 * share the states, both columns live in shared memory, and the call's moves
 * are tables the kernel indexes (weights and emission tables in the kernel's
 * precision, emissions stored symbol-major so that threads reading one
 * symbol's values for neighbouring states read neighbouring words).
 * Per position:
 *   1. emitting moves: each thread sums (or maximises) the moves into its
 *      states from the previous column (backward: the moves out of them);
 *   2. silent moves, level by level: a level's states take silent moves only
 *      from earlier levels, so a barrier between levels is enough (a
 *      profile's delete chain is one level per node);
 *   3. forward and backward: a block-wide sum and, when it leaves
 *      [2^-40, 2^40], exact rescaling by a power of two.
 * Viterbi writes each cell's back pointer (the index of the best move among
 * the state's incoming moves, as hmmrt_paths numbers them). A move whose
 * weight depends on the sequence's length keeps its constant factor in the
 * table, and the table's PREFIX_lw entry indexes a shared array of the
 * sequence's length weights (lenw_s: [0] is 1, or 0 in logs; doubles in
 * forward and backward, cuda_common.h says why), which the
 * kernel fills once per sequence (cuda_write_length_weights); only tables
 * with such an entry read it. */
#include "codegen/cuda/cuda_shapes.h"

#include <math.h>
#include <string.h>

#include "codegen/emit.h"
#include "codegen/emit_dp.h"
#include "ir/graph.h"

/* One group of moves per state, in the order the kernel visits them. */
typedef struct MoveTable {
    int n_rows;      /* states */
    int *row_state;  /* the state each row computes */
    int *row_start;  /* moves of row r: row_start[r] .. row_start[r+1]-1 */
    int *move;       /* IR move index of each entry */
    int *level_start;/* silent tables: rows of level l: level_start[l] .. level_start[l+1]-1 */
    int n_levels;
    int has_length;  /* some entry's weight depends on the sequence length (PREFIX_lw) */
} MoveTable;

typedef struct BlockWriter {
    Emitter *e;
    const Program *p;
    const IrCall *call;
    const Layout *layout; /* the names of the call's symbols */
    const GpuPlan *plan;
    const IrModel *m;
    int index;
    int backward;
    int *in_start, *in_order; /* incoming moves (hmmrt_paths' numbering of back pointers) */
    int n_tables, *table_of;  /* emission tables used -> dense numbers */
    MoveTable emitting, silent;
} BlockWriter;

/* The name of a symbol of the call: "c0_kernel" (layout_name). */
static const char *name_of(const BlockWriter *w, const char *what)
{
    return layout_name(w->layout, w->index, what);
}

/* The name of a column of move table t ("em" or "sl"): "c0_em_state". */
static const char *table_name(const BlockWriter *w, const char *t, const char *what)
{
    return name_of(w, arena_printf(w->p->arena, "%s_%s", t, what));
}

/* The state a move "belongs to": its destination, or its source backward. */
static int owner(const BlockWriter *w, const IrMove *mv) { return w->backward ? mv->from : mv->to; }
static int other(const BlockWriter *w, const IrMove *mv) { return w->backward ? mv->to : mv->from; }

/* Rows of moves of one kind (emitting or silent) grouped by owner, in state
 * order within a level; silent rows are grouped in levels that only read
 * earlier levels (graph_silent_levels), emitting rows are every live state in
 * one level. A row's moves keep their order in the model. */
static void build_table(BlockWriter *w, MoveTable *t, int silent)
{
    Arena *a = w->p->arena;
    const IrModel *m = w->m;
    int n = m->n_states;
    int *level = ARENA_ARRAY(a, int, n);
    if (silent) {
        t->n_levels = graph_silent_levels(a, m, w->backward, level);
    } else {
        t->n_levels = 1;
        for (int s = 0; s < n; s++)
            level[s] = dp_live(m, s) ? 0 : -1;
    }
    t->level_start = ARENA_ARRAY(a, int, t->n_levels + 1);
    for (int s = 0; s < n; s++)
        if (level[s] >= 0)
            t->level_start[level[s] + 1]++;
    for (int l = 0; l < t->n_levels; l++)
        t->level_start[l + 1] += t->level_start[l];
    int *fill = ARENA_ARRAY(a, int, t->n_levels + 1), *row_of = ARENA_ARRAY(a, int, n);
    memcpy(fill, t->level_start, sizeof(int) * (size_t)(t->n_levels + 1));
    t->row_state = ARENA_ARRAY(a, int, n);
    for (int s = 0; s < n; s++) {
        row_of[s] = -1;
        if (level[s] >= 0)
            t->row_state[row_of[s] = fill[level[s]]++] = s;
    }
    t->n_rows = t->level_start[t->n_levels];
    t->row_start = ARENA_ARRAY(a, int, t->n_rows + 1);
    t->move = ARENA_ARRAY(a, int, m->n_moves ? m->n_moves : 1);
    for (int i = 0; i < m->n_moves; i++)
        if ((m->moves[i].emission < 0) == silent && row_of[owner(w, &m->moves[i])] >= 0)
            t->row_start[row_of[owner(w, &m->moves[i])] + 1]++;
    for (int r = 0; r < t->n_rows; r++)
        t->row_start[r + 1] += t->row_start[r];
    int *next = ARENA_ARRAY(a, int, t->n_rows + 1);
    memcpy(next, t->row_start, sizeof(int) * (size_t)(t->n_rows + 1));
    for (int i = 0; i < m->n_moves; i++)
        if ((m->moves[i].emission < 0) == silent && row_of[owner(w, &m->moves[i])] >= 0)
            t->move[next[row_of[owner(w, &m->moves[i])]]++] = i;
    for (int k = 0; k < t->row_start[t->n_rows]; k++)
        t->has_length |= m->moves[t->move[k]].length_weight != 0;
}

/* Index of move i among its destination's incoming moves (back pointers). */
static int incoming_index(const BlockWriter *w, int i)
{
    int to = w->m->moves[i].to;
    for (int k = w->in_start[to]; k < w->in_start[to + 1]; k++)
        if (w->in_order[k] == i)
            return k - w->in_start[to];
    return -1;
}

/* Weights (probabilities, or logs for viterbi), sources, emission tables and
 * back-pointer numbers of one move table. */
static void write_move_table(BlockWriter *w, const MoveTable *t, const char *prefix)
{
    Arena *a = w->p->arena;
    const IrModel *m = w->m;
    int n = t->row_start[t->n_rows];
    int *from = ARENA_ARRAY(a, int, n ? n : 1), *table = ARENA_ARRAY(a, int, n ? n : 1);
    int *bp = ARENA_ARRAY(a, int, n ? n : 1);
    double *weight = ARENA_ARRAY(a, double, n ? n : 1);
    int *length = ARENA_ARRAY(a, int, n ? n : 1);
    int logs = w->call->alg == ALG_VITERBI;
    for (int k = 0; k < n; k++) {
        const IrMove *mv = &m->moves[t->move[k]];
        from[k] = other(w, mv);
        table[k] = mv->emission >= 0 ? w->table_of[mv->emission] : 0;
        bp[k] = incoming_index(w, t->move[k]);
        weight[k] = logs ? mv->lw_max : exp(mv->lw_sum); /* a length weight's constant factor */
        length[k] = mv->length_weight;
    }
    cuda_write_int_table(w->e, table_name(w, prefix, "state"), t->row_state, t->n_rows);
    cuda_write_int_table(w->e, table_name(w, prefix, "start"), t->row_start, t->n_rows + 1);
    cuda_write_int_table(w->e, table_name(w, prefix, "other"), from, n);
    if (!strcmp(prefix, "em"))
        cuda_write_int_table(w->e, table_name(w, prefix, "table"), table, n);
    if (w->call->plan.bp_bytes)
        cuda_write_int_table(w->e, table_name(w, prefix, "bp"), bp, n);
    cuda_write_real_table(w->e, table_name(w, prefix, "w"), weight, n);
    if (t->has_length) {
        emit_comment(w->e, "per entry: 0, or k + 1 where the weight is also times length weight k "
                           "(lenw_s[k + 1], this sequence's)");
        cuda_write_int_table(w->e, table_name(w, prefix, "lw"), length, n);
    }
    if (!strcmp(prefix, "sl"))
        cuda_write_int_table(w->e, table_name(w, "sl", "level"), t->level_start, t->n_levels + 1);
}

/* Emission values symbol-major: value of table t at symbol c at [c * n_tables + t]. */
static void write_emissions(BlockWriter *w)
{
    const IrModel *m = w->m;
    int logs = w->call->alg == ALG_VITERBI;
    int *emission_of;
    w->n_tables = dp_emission_tables(w->p->arena, m, &w->table_of, &emission_of);
    int n = m->K * (w->n_tables ? w->n_tables : 1);
    double *v = ARENA_ARRAY(w->p->arena, double, n);
    for (int c = 0; c < m->K; c++)
        for (int t = 0; t < w->n_tables; t++) {
            double lp = m->emissions[emission_of[t]].logp[c];
            v[c * w->n_tables + t] = logs ? lp : exp(lp);
        }
    cuda_write_real_table(w->e, name_of(w, "emission"), v, w->n_tables ? n : 0);
}

/* One thread's part of a phase over rows [first, last): combine its moves. */
static void write_rows(BlockWriter *w, const char *first, const char *last, int silent)
{
    int viterbi = w->call->alg == ALG_VITERBI, bp = w->call->plan.bp_bytes > 0;
    const char *t = silent ? "sl" : "em";
    const char *other = table_name(w, t, "other"), *start = table_name(w, t, "start");
    emit_open(w->e, "for (int r = %s + threadIdx.x; r < %s; r += blockDim.x)", first, last);
    emit_line(w->e, "const int s = %s[r];", table_name(w, t, "state"));
    if (silent)
        emit_line(w->e, "real acc = cur[s];");
    else
        emit_line(w->e, "real acc = %s;", viterbi ? "(real)-INFINITY" : "(real)0");
    if (bp && !silent)
        emit_line(w->e, "int best = -1;");
    if (bp && silent)
        emit_line(w->e, "int best = -2; /* -2: the emitting moves' choice stands */");
    emit_open(w->e, "for (int k = %s[r]; k < %s[r + 1]; k++)", start, start);
    const char *column = silent ? "cur" : "prev";
    const char *emission = silent ? "" : arena_printf(w->p->arena, " %s emission[c * %d + %s[k]]",
                                                      viterbi ? "+" : "*", w->n_tables,
                                                      table_name(w, "em", "table"));
    const MoveTable *table = silent ? &w->silent : &w->emitting;
    const char *weight = arena_printf(w->p->arena, "weight_%s[k]", t);
    if (table->has_length)
        weight = arena_printf(w->p->arena, "(%s %s lenw_s[%s[k]])", weight, viterbi ? "+" : "*",
                              table_name(w, t, "lw"));
    if (viterbi) {
        emit_line(w->e, "const real v = %s[%s[k]] + %s%s;", column, other, weight, emission);
        if (bp)
            emit_line(w->e, "if (v > acc) { acc = v; best = %s[k]; }", table_name(w, t, "bp"));
        else
            emit_line(w->e, "acc = v > acc ? v : acc;");
    } else {
        emit_line(w->e, "acc += %s%s * %s[%s[k]];", weight, emission, column, other);
    }
    emit_close(w->e, "");
    emit_line(w->e, "cur[s] = acc;");
    if (bp && !silent)
        emit_line(w->e, "bp_row[pos * %d + s] = best < 0 ? (%s)~0u : (%s)best;", w->m->n_states,
                  dp_bp_type(w->call->plan.bp_bytes), dp_bp_type(w->call->plan.bp_bytes));
    if (bp && silent)
        emit_line(w->e, "if (best >= 0) bp_row[pos * %d + s] = (%s)best;", w->m->n_states,
                  dp_bp_type(w->call->plan.bp_bytes));
    emit_close(w->e, "");
}

static void write_silent_phase(BlockWriter *w)
{
    if (!w->silent.n_levels)
        return;
    emit_open(w->e, "for (int level = 0; level < %d; level++)", w->silent.n_levels);
    const char *level = table_name(w, "sl", "level");
    write_rows(w, arena_printf(w->p->arena, "%s[level]", level),
               arena_printf(w->p->arena, "%s[level + 1]", level), 1);
    emit_line(w->e, "__syncthreads();");
    emit_close(w->e, "");
}

/* Block-wide sum of the live states, exact rescaling; a column of zeros
 * means no path emits the sequence. */
static void write_rescale(BlockWriter *w)
{
    const char *state = table_name(w, "em", "state");
    emit_line(w->e, "real mine = (real)0;");
    emit_line(w->e, "for (int r = threadIdx.x; r < %d; r += blockDim.x)", w->emitting.n_rows);
    emit_line(w->e, "    mine += cur[%s[r]];", state);
    emit_line(w->e, "const real sum = hmmc_block_sum(mine, partial);");
    emit_line(w->e, "if (!(sum > (real)0))");
    emit_line(w->e, "    break; /* every thread sees the same sum */");
    emit_comment(w->e, "a state more than 2^90 below the sum (float), or below the normal range "
                       "(double), is close to losing its paths: the sequence is scored again, "
                       "float in double, double on the CPU (long double)");
    emit_line(w->e, "const real floor = hmmc_losing_floor(sum);");
    emit_line(w->e, "for (int r = threadIdx.x; r < %d; r += blockDim.x)", w->emitting.n_rows);
    emit_line(w->e, "    risky |= hmmc_losing_paths(cur[%s[r]], floor);", state);
    emit_line(w->e, "real factor;");
    emit_line(w->e, "int shift;");
    emit_open(w->e, "if (hmmc_rescaling<0, 40>(sum, factor, shift))");
    emit_line(w->e, "for (int r = threadIdx.x; r < %d; r += blockDim.x)", w->emitting.n_rows);
    emit_line(w->e, "    cur[%s[r]] *= factor;", state);
    emit_line(w->e, "scale += shift;");
    emit_line(w->e, "__syncthreads();");
    emit_close(w->e, "");
}

/* Viterbi in float: the column is kept near 0 (see backend_cuda_thread.c): after
 * every position the block's best value moves into `offset`, a double. */
static void write_normalise(BlockWriter *w)
{
    const char *state = table_name(w, "em", "state");
    emit_line(w->e, "real mine = (real)-INFINITY;");
    emit_line(w->e, "for (int r = threadIdx.x; r < %d; r += blockDim.x)", w->emitting.n_rows);
    emit_line(w->e, "    mine = cur[%s[r]] > mine ? cur[%s[r]] : mine;", state, state);
    emit_line(w->e, "const real top = hmmc_block_max(mine, partial);");
    emit_open(w->e, "if (top != (real)-INFINITY)");
    emit_line(w->e, "for (int r = threadIdx.x; r < %d; r += blockDim.x)", w->emitting.n_rows);
    emit_line(w->e, "    cur[%s[r]] -= top;", state);
    emit_line(w->e, "offset += (double)top;");
    emit_line(w->e, "__syncthreads();");
    emit_close(w->e, "");
}

static void write_kernel(BlockWriter *w)
{
    const IrModel *m = w->m;
    int n = m->n_states, viterbi = w->call->alg == ALG_VITERBI;
    int bp = w->call->plan.bp_bytes;
    int first = w->backward ? m->end : m->start, last = w->backward ? m->start : m->end;
    const char *zero = viterbi ? "(real)-INFINITY" : "(real)0";
    emit_line(w->e, "template <typename real>");
    emit_open(w->e, "__global__ void %s(const hmmrt_gpu_batch b)", name_of(w, "kernel"));
    emit_line(w->e, "real *prev = (real *)hmmc_dynamic_shared(), *cur = prev + %d, *partial = cur + %d;", n, n);
    emit_line(w->e, "const real *weight_em = %s<real>();", table_name(w, "em", "w"));
    if (w->silent.n_levels)
        emit_line(w->e, "const real *weight_sl = %s<real>();", table_name(w, "sl", "w"));
    emit_line(w->e, "const real *emission = %s<real>();", name_of(w, "emission"));
    emit_line(w->e, "const int64_t j = blockIdx.x;");
    emit_line(w->e, "const uint8_t *x = b.codes + b.offsets[j];");
    emit_line(w->e, "const int64_t L = b.lengths[j];");
    if (bp)
        emit_line(w->e, "%s *bp_row = (%s *)b.bp + b.bp_offsets[j];", dp_bp_type(bp), dp_bp_type(bp));
    cuda_write_float_guard(w->e, w->plan, "threadIdx.x == 0");
    if (m->n_length_weights) {
        cuda_write_length_weights(w->e, w->p->arena, m, viterbi, "threadIdx.x == 0");
        emit_comment(w->e, "for the move tables' entries (PREFIX_lw): [0] the weight as it is, "
                           "[k + 1] times (plus, in logs) length weight k; read after the barrier "
                           "below");
        emit_line(w->e, "__shared__ %s lenw_s[%d];", viterbi ? "real" : "double /* in float too */",
                  m->n_length_weights + 1);
        emit_open(w->e, "if (threadIdx.x == 0)");
        emit_line(w->e, "lenw_s[0] = %s;", viterbi ? "(real)0" : "1.0");
        for (int k = 0; k < m->n_length_weights; k++)
            emit_line(w->e, "lenw_s[%d] = %s;", k + 1, dp_length_weight_name(w->p->arena, k + 1));
        emit_close(w->e, "");
    }
    emit_line(w->e, "int64_t pos = %s;", w->backward ? "L" : "0");
    emit_open(w->e, "for (int s = threadIdx.x; s < %d; s += blockDim.x)", n);
    emit_line(w->e, "cur[s] = s == %d ? (real)%s : %s; /* %s */", first, viterbi ? "0" : "1", zero,
              m->states[first].name);
    if (bp)
        emit_line(w->e, "bp_row[s] = (%s)~0u;", dp_bp_type(bp));
    emit_close(w->e, "");
    emit_line(w->e, "__syncthreads();");
    write_silent_phase(w);
    if (viterbi) {
        emit_line(w->e, "double offset = 0;");
    } else {
        emit_line(w->e, "int scale = 0;");
        emit_line(w->e, "bool risky = false;");
    }
    if (w->backward)
        emit_open(w->e, "for (pos = L - 1; pos >= 0; pos--)");
    else
        emit_open(w->e, "for (pos = 1; pos <= L; pos++)");
    emit_line(w->e, "real *swap = prev;");
    emit_line(w->e, "prev = cur;");
    emit_line(w->e, "cur = swap;");
    emit_line(w->e, "const int c = x[pos%s];", w->backward ? "" : " - 1");
    write_rows(w, "0", arena_printf(w->p->arena, "%d", w->emitting.n_rows), 0);
    emit_line(w->e, "__syncthreads();");
    write_silent_phase(w);
    if (viterbi)
        write_normalise(w);
    else
        write_rescale(w);
    emit_close(w->e, "");
    if (!viterbi)
        emit_line(w->e, "risky = __syncthreads_or(risky);");
    emit_open(w->e, "if (threadIdx.x == 0)");
    if (viterbi)
        emit_line(w->e, "((real *)b.scores)[j] = (real)((double)cur[%d] + offset); /* %s */", last,
                  m->states[last].name);
    else
        emit_line(w->e, "((real *)b.scores)[j] = pos != %s ? (real)-INFINITY : risky ? (real)NAN : "
                        "(real)((double)log(cur[%d]) + (double)scale * 0.693147180559945309417); /* %s */",
                  w->backward ? "-1" : "L + 1", last, m->states[last].name);
    emit_close(w->e, "");
    emit_close(w->e, "");
}

void cuda_write_block_call(Emitter *e, const Program *p, const Layout *l, const GpuPlan *plan, int index)
{
    const IrCall *call = &p->calls[index];
    BlockWriter w = {.e = e, .p = p, .call = call, .layout = l, .plan = plan, .m = call->model, .index = index,
                     .backward = call->alg == ALG_BACKWARD};
    ir_incoming(p->arena, w.m, &w.in_start, &w.in_order);
    build_table(&w, &w.emitting, 0);
    build_table(&w, &w.silent, 1);
    emit_blank(e);
    emit_comment(e, "==== call %d: %s; %d live states, %d moves; block per sequence, %d silent "
                    "level%s ====", index, call->label, call->plan.n_live, w.m->n_moves,
                 w.silent.n_levels, w.silent.n_levels == 1 ? "" : "s");
    write_emissions(&w);
    write_move_table(&w, &w.emitting, "em");
    write_move_table(&w, &w.silent, "sl");
    emit_blank(e);
    write_kernel(&w);
    emit_blank(e);
    cuda_write_call_launcher(e, p, l, plan, index);
}
