/* backend_cuda_profile.c: the CUDA kernel shape "profile"
 * (analysis/profile.h), for forward and viterbi on profile HMMs: a group of
 * 8, 16 or 32 lanes of a warp scores one sequence, each lane keeping a run of
 * nodes in registers. */

/* A group of G lanes of a warp (8, 16
 * or 32: the fewest that keep at most PROFILE_LANE_NODES_VITERBI, or
 * _FORWARD, nodes a lane; GpuPlan.profile_lanes) scores one sequence; lane l
 * of a group
 * keeps nodes l*S .. l*S+S-1 (S = ceil(K / G)) of the match, insert and
 * delete roles in registers, with R more slots in front for the last R nodes
 * of the lane to its left (R: the longest reach of a move between nodes).
 * Per position:
 *   1. emitting moves: every lane updates its nodes from the previous column
 *      (last node first, so that each read sees the old value), the specials
 *      (N, J, C...) take their emitting moves;
 *   2. silent moves: the delete chain D[k] = a[k] + t[k] D[k-1] (max-plus
 *      for viterbi): each lane
 *      folds its run into one affine step, a warp-wide scan of those steps
 *      gives every lane the value entering its run, and the lane runs its
 *      nodes again from it; then the specials after the chain, summing (or
 *      maximising) over the nodes with warp shuffles;
 *   3. forward: exact rescaling by a power of two when the column sum leaves
 *      [2^88, 2^104], near the top of float's range (in float, a value below
 *      the normal range marks the sequence for scoring again in double);
 *      viterbi keeps its best value at 0, the rest in a double offset.
 * The weights are tables the lanes read at consecutive addresses (entry e,
 * run slot jj, lane: [(e * S + jj) * G + lane]); the emission values of
 * the nodes per class of symbols that every node scores alike. In forward,
 * a row between a special and the nodes whose weights float cannot hold is
 * held per lane times 2^c (profile_tuning.h): the special's value
 * is multiplied by 2^-c before the lane's entries read it, and the lane's
 * part of an exit by 2^-c before the group sums it. Forward on long
 * profiles keeps an exponent per lane and per special state instead of one
 * per column ("lane scales", profile_tuning.h): values cross between lanes with
 * the difference of their exponents, a lane moves its values down when one
 * read in would not fit, and an empty lane takes the exponent of the first
 * value that enters it. Moves between special states may have weights of
 * the sequence's length (HMMER3's length model: N, J, C and S -> N): the
 * kernel computes them once per sequence (cuda_write_length_weights) and
 * the moves read them by name; the moves into and out of the nodes are
 * constant (cuda_plan.c sends a profile with others to the block shape). */
#include "codegen/cuda/backend_cuda_profile.h"
#include "codegen/cuda/cuda_shapes.h"

#include <math.h>
#include <string.h>

#include "codegen/emit.h"
#include "codegen/emit_dp.h"
#include "codegen/cuda/profile_tuning.h"

const char *const profile_role_array[PROFILE_ROLES] = {"match", "insert", "del"};

static const char *zero(const ProfileWriter *w) { return w->viterbi ? "(real)-INFINITY" : "(real)0"; }

static double weight_of(const ProfileWriter *w, int move)
{
    if (move < 0)
        return w->viterbi ? -INFINITY : 0;
    const IrMove *mv = &w->m->moves[move];
    return w->viterbi ? mv->lw_max : exp(mv->lw_sum);
}

/* weight_of times 2^c. In forward it is found in long double: a row held
 * per lane times 2^c may have weights below double's range (a deep node's
 * entry from B: e^-1,540 at M = 1,600), which times 2^c are not. */
static double scaled_weight_of(const ProfileWriter *w, int move, int c)
{
    if (move < 0 || w->viterbi)
        return ldexp(weight_of(w, move), c);
    return (double)ldexpl(expl((long double)w->m->moves[move].lw_sum), c);
}

/* The node of slot i (= jj * G + lane) in the lane-major tables: lane * S + jj
 * (K or more: a lane's padding). */
static int node_of_slot(const ProfileWriter *w, int i) { return (i % w->G) * w->S + i / w->G; }

/* The model's state in role r of the node of slot i, or -1 (none, or padding). */
static int slot_state(const ProfileWriter *w, int i, int r)
{
    int k = node_of_slot(w, i);
    return k < w->v->K ? w->v->state[k * PROFILE_ROLES + r] : -1;
}

/* Symbols that every node's emitting state scores alike share a class. */
static void find_classes(ProfileWriter *w)
{
    const IrModel *m = w->m;
    int K = m->K;
    w->class_of = ARENA_ARRAY(w->p->arena, int, K);
    int *first = ARENA_ARRAY(w->p->arena, int, K); /* first symbol of each class */
    for (int c = 0; c < K; c++) {
        w->class_of[c] = -1;
        for (int q = 0; q < w->n_classes && w->class_of[c] < 0; q++) {
            int same = 1;
            for (int i = 0; same && i < w->v->K * PROFILE_ROLES; i++) {
                int s = w->v->state[i];
                if (s >= 0 && m->states[s].kind == STATE_EMITTING) {
                    const double *lp = m->emissions[m->states[s].emission].logp;
                    same = lp[c] == lp[first[q]] || (isnan(lp[c]) && isnan(lp[first[q]]));
                }
            }
            if (same)
                w->class_of[c] = q;
        }
        if (w->class_of[c] < 0) {
            first[w->n_classes] = c;
            w->class_of[c] = w->n_classes++;
        }
    }
}

/* One lane-major row of a per-node move list (an entry's or an exit's):
 * each slot's weight (times 2^exp[lane] where exp is not NULL) and
 * back-pointer number, none in a lane's padding. */
static void write_node_row(const ProfileWriter *w, const int *move, const int *exp, double *weight,
                           int *bp)
{
    for (int i = 0; i < w->S * w->G; i++) {
        int k = node_of_slot(w, i), mv = k < w->v->K ? move[k] : -1;
        weight[i] = scaled_weight_of(w, mv, exp ? exp[i % w->G] : 0);
        bp[i] = mv >= 0 ? w->in_index[mv] : -1;
    }
}

static int lane_has_moves(const ProfileWriter *w, const int *move, int lane)
{
    for (int k = lane * w->S; k < w->v->K && k < (lane + 1) * w->S; k++)
        if (move[k] >= 0)
            return 1;
    return 0;
}

/* Forward: the per-lane exponents of the rows between specials and nodes
 * (profile_tuning.h), and whether each row needs them. */
static void find_exponents(ProfileWriter *w)
{
    Arena *a = w->p->arena;
    const ProfileView *v = w->v;
    int G = w->G;
    w->entry_exp = ARENA_ARRAY(a, int, (size_t)(v->n_entries ? v->n_entries : 1) * G);
    w->exit_exp = ARENA_ARRAY(a, int, (size_t)(v->n_exits ? v->n_exits : 1) * G);
    w->entry_scaled = ARENA_ARRAY(a, int, v->n_entries ? v->n_entries : 1);
    w->exit_scaled = ARENA_ARRAY(a, int, v->n_exits ? v->n_exits : 1);
    if (w->viterbi)
        return;
    for (int e = 0; e < v->n_entries; e++)
        for (int lane = 0; profile_entry_is_scaled(v, e) && lane < G; lane++) {
            /* with lane scales, a lane's values follow its entries' own magnitude, and
             * B's value is brought to it before it is read: always scaled */
            int c = profile_lane_exponent(w->m, v->entries[e].move, v->K, G, lane, w->lane_scales);
            if (w->lane_scales && !lane_has_moves(w, v->entries[e].move, lane))
                c = NO_ENTRY_EXP;
            w->entry_exp[e * G + lane] = c;
            w->entry_scaled[e] |= c != 0;
        }
    for (int x = 0; x < v->n_exits; x++)
        for (int lane = 0; lane < G; lane++) {
            int c = profile_lane_exponent(w->m, v->exits[x].move, v->K, G, lane, 0);
            w->exit_exp[x * G + lane] = c;
            w->exit_scaled[x] |= c != 0;
        }
}

/* Tables: weights of the entries and exits, emission values, state numbers
 * and back-pointer numbers, all lane-major. */
static void write_tables(ProfileWriter *w)
{
    Arena *a = w->p->arena;
    const ProfileView *v = w->v;
    int slots = w->S * w->G, ne = v->n_entries, nx = v->n_exits;
    double *weights = ARENA_ARRAY(a, double, (size_t)(ne ? ne : 1) * slots);
    double *exits = ARENA_ARRAY(a, double, (size_t)(nx ? nx : 1) * slots);
    int *entry_bp = ARENA_ARRAY(a, int, (size_t)(ne ? ne : 1) * slots);
    int *exit_bp = ARENA_ARRAY(a, int, (size_t)(nx ? nx : 1) * slots);
    int any_scaled = 0;
    for (int e = 0; e < ne; e++) {
        write_node_row(w, v->entries[e].move, w->entry_scaled[e] ? w->entry_exp + e * w->G : NULL,
                       weights + (size_t)e * slots, entry_bp + (size_t)e * slots);
        any_scaled |= w->entry_scaled[e];
    }
    for (int x = 0; x < nx; x++) {
        write_node_row(w, v->exits[x].move, w->exit_scaled[x] ? w->exit_exp + x * w->G : NULL,
                       exits + (size_t)x * slots, exit_bp + (size_t)x * slots);
        any_scaled |= w->exit_scaled[x];
    }
    /* emission values: class q, emitting role r (match 0, insert 1) */
    double *emit = ARENA_ARRAY(a, double, (size_t)w->n_classes * 2 * slots);
    int *rep = ARENA_ARRAY(a, int, w->n_classes);
    for (int c = w->m->K - 1; c >= 0; c--)
        rep[w->class_of[c]] = c;
    for (int q = 0; q < w->n_classes; q++)
        for (int r = 0; r < 2; r++)
            for (int i = 0; i < slots; i++) {
                int s = slot_state(w, i, r);
                double lp = s >= 0 ? w->m->emissions[w->m->states[s].emission].logp[rep[q]] : -INFINITY;
                emit[(q * 2 + r) * slots + i] = w->viterbi ? lp : exp(lp);
            }
    int *states = ARENA_ARRAY(a, int, PROFILE_ROLES * slots);
    for (int r = 0; r < PROFILE_ROLES; r++)
        for (int i = 0; i < slots; i++)
            states[r * slots + i] = slot_state(w, i, r);
    emit_line(w->e, "enum { %s = %d, %s = %d, %s = %d }; /* lanes a sequence; nodes a lane; slots "
                    "for the left lane's nodes */", w->G_name, w->G, w->S_name, w->S, w->R_name, w->R);
    cuda_write_int_table(w->e, profile_name(w, "class"), w->class_of, w->m->K);
    cuda_write_real_table(w->e, profile_name(w, "weights"), weights, ne * slots);
    cuda_write_real_table(w->e, profile_name(w, "exits"), exits, nx * slots);
    cuda_write_real_table(w->e, profile_name(w, "emit"), emit, w->n_classes * 2 * slots);
    if (any_scaled) {
        emit_comment(w->e, "weights of the rows between specials and nodes that float could not "
                           "hold: each lane's are held times 2^c, c at [row * G + lane]");
        cuda_write_int_table(w->e, profile_name(w, "entry_exp"), w->entry_exp, ne * w->G);
        cuda_write_int_table(w->e, profile_name(w, "exit_exp"), w->exit_exp, nx * w->G);
    }
    if (w->bp) {
        cuda_write_int_table(w->e, profile_name(w, "state"), states, PROFILE_ROLES * slots);
        cuda_write_int_table(w->e, profile_name(w, "entry_bp"), entry_bp, ne * slots);
        cuda_write_int_table(w->e, profile_name(w, "exit_bp"), exit_bp, nx * slots);
    }
}

/* The value entry e reads for run slot `jj` (a C expression). */
static const char *source(const ProfileWriter *w, int e)
{
    const ProfileEntry *x = &w->v->entries[e];
    if (x->from_role < 0 && (w->entry_scaled[e] || w->lane_scales))
        return arena_printf(w->p->arena, "sp%d_e%d", x->from_special, e);
    if (x->from_role < 0)
        return arena_printf(w->p->arena, "sp%d", x->from_special);
    return arena_printf(w->p->arena, "%s[%s + jj - %d]", profile_role_array[x->from_role], w->R_name,
                        x->reach);
}

static const char *entry_weight(const ProfileWriter *w, int e)
{
    return arena_printf(w->p->arena, "wt[%d * %s * %s]", e, w->S_name, w->G_name);
}

/* acc (and best) combined with `weight` times `value`. */
static void write_combine(ProfileWriter *w, const char *acc, const char *weight, const char *value,
                          const char *bp)
{
    if (!w->viterbi) {
        emit_line(w->e, "%s += %s * %s;", acc, weight, value);
    } else if (w->bp && bp) {
        emit_line(w->e, "{ const real t = %s + %s; if (t > %s) { %s = t; best_%s = %s; } }", weight, value,
                  acc, acc, acc, bp);
    } else {
        emit_line(w->e, "%s = hmmc_vmax(%s, %s + %s);", acc, acc, weight, value);
    }
}

/* Before a loop over the run, for the entries from specials of the
 * emitting phase (or the silent): with `room`, forward with lane scales
 * makes room in the lane for a special's value above 2^room in its
 * values (an empty lane takes its exponent), before anything else is read
 * in the lane's scale; without, the special's value that the lane's
 * entries read, times 2^-c where the entry's weights are held times 2^c
 * (and, with lane scales, in the lane's scale). */
static void write_scaled_sources(ProfileWriter *w, int emitting, int room)
{
    for (int e = 0; e < w->v->n_entries; e++) {
        const ProfileEntry *x = &w->v->entries[e];
        if (x->emitting != emitting || x->from_role >= 0)
            continue;
        int sp = x->from_special;
        const char *name = w->m->states[w->v->specials[sp]].name;
        const char *c_of_lane = w->entry_scaled[e]
            ? arena_printf(w->p->arena, "%s[%d * %s + lane]", profile_name(w, "entry_exp"), e, w->G_name)
            : "0";
        if (w->lane_scales) {
            profile_write_special_in_lane(w, e, sp, c_of_lane, name, room);
        } else if (w->entry_scaled[e] && !room) {
            emit_line(w->e, "const real sp%d_e%d = ldexp(sp%d, -%s); /* %s; this lane's weights of entry %d "
                            "are held times 2^c */", sp, e, sp, c_of_lane, name, e);
        }
    }
}

/* Entry e combined into acc for run slot jj of every lane. */
static void write_entry(ProfileWriter *w, int e, const char *acc)
{
    const ProfileEntry *x = &w->v->entries[e];
    if (!profile_entry_is_sparse(w->v, e)) {
        write_combine(w, acc, entry_weight(w, e), source(w, e),
                      arena_printf(w->p->arena, "%s[(%d * %s + jj) * %s + lane]", profile_name(w, "entry_bp"), e,
                                   w->S_name, w->G_name));
        return;
    }
    char num[32];
    for (int k = 0; k < w->v->K; k++) {
        int mv = x->move[k];
        if (mv < 0)
            continue;
        emit_open(w->e, "if (jj == %d && lane == %d) /* %s -> %s */", k % w->S, k / w->S,
                  w->m->states[w->m->moves[mv].from].name, w->m->states[w->m->moves[mv].to].name);
        write_combine(w, acc, arena_printf(w->p->arena, "(real)%s", emit_double(num, weight_of(w, mv))),
                      source(w, e), arena_printf(w->p->arena, "%d", w->in_index[mv]));
        emit_close(w->e, "");
    }
}

/* Fills the R slots in front of each role's run with the left lane's last nodes. */
static void write_left_slots(ProfileWriter *w, int role)
{
    for (int q = 0; q < w->R; q++) {
        int d = (w->R - q + w->S - 1) / w->S; /* lanes to the left */
        int idx = q - w->R + d * w->S;        /* run slot in that lane */
        emit_line(w->e, "{ const real t = __shfl_up_sync(mask, %s[%s + %d], %d, %s); "
                        "%s[%d] = lane >= %d ? t : %s; }", profile_role_array[role], w->R_name, idx, d,
                  w->G_name, profile_role_array[role], q, d, zero(w));
    }
}

/* The R slots in front of the runs of the first n_roles roles (those the
 * model has), plain or, with lane scales, in this lane's scale. */
static void write_left_slots_of(ProfileWriter *w, int n_roles)
{
    unsigned roles = 0;
    for (int r = 0; r < n_roles; r++)
        if (w->v->has_role[r]) {
            if (!w->lane_scales)
                write_left_slots(w, r);
            roles |= 1u << r;
        }
    if (w->lane_scales)
        profile_write_left_slots_scaled(w, roles);
}

/* Stores node lane * S + jj's back pointer in `role` (best: a C expression,
 * NULL for none). */
static void write_bp_store(ProfileWriter *w, int role, const char *best)
{
    const char *type = dp_bp_type(w->bp);
    emit_line(w->e, "{ const int s = %s[(%d * %s + jj) * %s + lane];", profile_name(w, "state"), role, w->S_name,
              w->G_name);
    if (best)
        emit_line(w->e, "  if (s >= 0) bp_row[pos * %d + s] = %s < 0 ? (%s)~0u : (%s)%s; }", w->m->n_states,
                  best, type, type, best);
    else
        emit_line(w->e, "  if (s >= 0) bp_row[pos * %d + s] = (%s)~0u; }", w->m->n_states, type);
}

/* Whether an emitting move leaves special s: its value of the previous
 * column is read after the column's specials are set to 0. */
static int read_from_previous_column(const ProfileWriter *w, int s)
{
    for (int i = 0; i < w->v->n_special_moves; i++) {
        const IrMove *mv = &w->m->moves[w->v->special_moves[i]];
        if (mv->emission >= 0 && profile_special_index(w->v, mv->from) == s)
            return 1;
    }
    return 0;
}

/* The weight of a move between specials: a literal, or for one that
 * depends on the sequence's length its lenwK (cuda_write_length_weights),
 * times (plus, in logs) the constant factor where that is not 1. Only such
 * moves have length weights (plan_profile keeps the others constant). */
static const char *special_weight(const ProfileWriter *w, int move)
{
    const IrMove *mv = &w->m->moves[move];
    char num[32];
    const char *literal = arena_printf(w->p->arena, "(real)%s", emit_double(num, weight_of(w, move)));
    if (!mv->length_weight)
        return literal;
    const char *name = dp_length_weight_name(w->p->arena, mv->length_weight);
    if ((w->viterbi ? mv->lw_max : mv->lw_sum) == 0)
        return name;
    return arena_printf(w->p->arena, "(%s %s %s)", name, w->viterbi ? "+" : "*", literal);
}

static void write_special_combine(ProfileWriter *w, int move, int previous_column)
{
    const IrMove *mv = &w->m->moves[move];
    int f = profile_special_index(w->v, mv->from), t = profile_special_index(w->v, mv->to);
    const char *weight = special_weight(w, move);
    const char *value = arena_printf(w->p->arena, "%ssp%d", previous_column ? "old_" : "", f);
    if (mv->emission >= 0)
        value = arena_printf(w->p->arena, "%s %s %s<real>()[%d * %d + c]", value,
                             w->viterbi ? "+" : "*", profile_name(w, "spem"), mv->emission, w->m->K);
    emit_comment(w->e, "%s -> %s", w->m->states[mv->from].name, w->m->states[mv->to].name);
    if (w->lane_scales) {
        emit_line(w->e, "hmmc_scaled_add(sp%d, spx%d, %s%s * %s%s, %sspx%d);", t, t,
                  mv->length_weight ? "(real)(" : "", weight, value, mv->length_weight ? ")" : "",
                  previous_column ? "old_" : "", f);
        return;
    }
    write_combine(w, arena_printf(w->p->arena, "sp%d", t), weight, value,
                  arena_printf(w->p->arena, "%d", w->in_index[move]));
}

/* Emission tables of the moves between specials, symbol-major per table. */
static void write_special_emissions(ProfileWriter *w)
{
    const IrModel *m = w->m;
    double *v = ARENA_ARRAY(w->p->arena, double, (size_t)(m->n_emissions ? m->n_emissions : 1) * m->K);
    for (int t = 0; t < m->n_emissions; t++)
        for (int c = 0; c < m->K; c++)
            v[t * m->K + c] = w->viterbi ? m->emissions[t].logp[c] : exp(m->emissions[t].logp[c]);
    int used = 0;
    for (int i = 0; i < w->v->n_special_moves; i++)
        used |= m->moves[w->v->special_moves[i]].emission >= 0;
    cuda_write_real_table(w->e, profile_name(w, "spem"), v, used ? m->n_emissions * m->K : 0);
}

/* Step 1: emitting moves. */
static void write_emitting_phase(ProfileWriter *w)
{
    const ProfileView *v = w->v;
    write_scaled_sources(w, 1, 1);
    write_left_slots_of(w, PROFILE_ROLES);
    write_scaled_sources(w, 1, 0);
    emit_line(w->e, "#pragma unroll");
    emit_open(w->e, "for (int jj = %s - 1; jj >= 0; jj--)", w->S_name);
    emit_line(w->e, "const real *wt = w + jj * %s;", w->G_name);
    for (int r = 0; r < 2; r++) {
        if (!v->has_role[r])
            continue;
        emit_line(w->e, "real new_%s = %s;", profile_role_array[r], zero(w));
        if (w->bp)
            emit_line(w->e, "int best_new_%s = -1;", profile_role_array[r]);
        for (int e = 0; e < v->n_entries; e++) {
            const ProfileEntry *x = &v->entries[e];
            if (x->emitting && x->to_role == r)
                write_entry(w, e, arena_printf(w->p->arena, "new_%s", profile_role_array[r]));
        }
    }
    for (int r = 0; r < 2; r++) {
        if (!v->has_role[r])
            continue;
        emit_line(w->e, "%s[%s + jj] = new_%s %s em[((cls * 2 + %d) * %s + jj) * %s];",
                  profile_role_array[r], w->R_name, profile_role_array[r], w->viterbi ? "+" : "*", r, w->S_name,
                  w->G_name);
        if (w->bp)
            write_bp_store(w, r, arena_printf(w->p->arena, "best_new_%s", profile_role_array[r]));
    }
    emit_close(w->e, "");
    /* specials: emitting moves from the previous column */
    for (int s = 0; s < v->n_specials; s++)
        if (read_from_previous_column(w, s))
            emit_line(w->e, "const real old_sp%d = sp%d;%s", s, s,
                      w->lane_scales ? arena_printf(w->p->arena, " const int old_spx%d = spx%d;", s, s) : "");
    for (int s = 0; s < v->n_specials; s++) {
        emit_line(w->e, "sp%d = %s;", s, zero(w));
        if (w->bp)
            emit_line(w->e, "best_sp%d = -1;", s);
    }
    for (int i = 0; i < v->n_special_moves; i++)
        if (w->m->moves[v->special_moves[i]].emission >= 0)
            write_special_combine(w, v->special_moves[i], 1);
}

/* The specials' silent moves, and the moves out of the nodes into them. */
static void write_special_silent(ProfileWriter *w)
{
    const ProfileView *v = w->v;
    for (int t = 0; t < v->n_specials; t++) {
        for (int x = 0; x < v->n_exits; x++) {
            const ProfileExit *ex = &v->exits[x];
            if (ex->to_special != t)
                continue;
            emit_comment(w->e, "%s from every node's %s", w->m->states[v->specials[t]].name,
                         profile_role_array[ex->from_role]);
            emit_open(w->e, "%s", "");
            emit_line(w->e, "real part = %s;", zero(w));
            if (w->bp)
                emit_line(w->e, "int best_part = -1;");
            emit_line(w->e, "#pragma unroll");
            emit_open(w->e, "for (int jj = 0; jj < %s; jj++)", w->S_name);
            write_combine(w, "part",
                          arena_printf(w->p->arena, "ex[(%d * %s + jj) * %s]", x, w->S_name, w->G_name),
                          arena_printf(w->p->arena, "%s[%s + jj]", profile_role_array[ex->from_role], w->R_name),
                          arena_printf(w->p->arena, "%s[(%d * %s + jj) * %s + lane]",
                                       profile_name(w, "exit_bp"), x, w->S_name, w->G_name));
            emit_close(w->e, "");
            if (w->viterbi && w->bp) {
                emit_line(w->e, "hmmc_group_argmax(part, best_part, mask, %s);", w->G_name);
                emit_line(w->e, "if (part > sp%d) { sp%d = part; best_sp%d = best_part; }", t, t, t);
            } else if (w->viterbi) {
                emit_line(w->e, "sp%d = hmmc_vmax(sp%d, hmmc_group_all(part, hmmc_max(), mask, %s));", t, t,
                          w->G_name);
            } else if (w->lane_scales) {
                profile_write_exit_sum_in_lanes(w, x, t);
            } else if (w->exit_scaled[x]) {
                emit_line(w->e, "sp%d += hmmc_group_all(ldexp(part, -%s[%d * %s + lane]), "
                                "hmmc_add(), mask, %s); /* this lane's weights are held times 2^c */",
                          t, profile_name(w, "exit_exp"), x, w->G_name, w->G_name);
            } else {
                emit_line(w->e, "sp%d += hmmc_group_all(part, hmmc_add(), mask, %s);", t, w->G_name);
            }
            emit_close(w->e, "");
        }
        for (int i = 0; i < v->n_special_moves; i++) {
            const IrMove *mv = &w->m->moves[v->special_moves[i]];
            if (mv->emission < 0 && mv->to == v->specials[t])
                write_special_combine(w, v->special_moves[i], 0);
        }
    }
}

/* The delete chain and the other silent moves into delete states. */
static void write_delete_chain(ProfileWriter *w)
{
    const ProfileView *v = w->v;
    int chain = -1;
    if (!v->has_role[ROLE_DELETE])
        return;
    for (int e = 0; e < v->n_entries; e++)
        if (!v->entries[e].emitting && v->entries[e].from_role == ROLE_DELETE)
            chain = e;
    emit_comment(w->e, "delete states: first what enters them from elsewhere (a)");
    if (w->bp)
        emit_line(w->e, "int best_as[%s];", w->S_name);
    write_scaled_sources(w, 0, 1);
    write_left_slots_of(w, 2);
    write_scaled_sources(w, 0, 0);
    emit_line(w->e, "#pragma unroll");
    emit_open(w->e, "for (int jj = 0; jj < %s; jj++)", w->S_name);
    emit_line(w->e, "const real *wt = w + jj * %s;", w->G_name);
    emit_line(w->e, "real a = %s;", zero(w));
    if (w->bp)
        emit_line(w->e, "int best_a = -1;");
    for (int e = 0; e < v->n_entries; e++) {
        const ProfileEntry *x = &v->entries[e];
        if (!x->emitting && e != chain)
            write_entry(w, e, "a");
    }
    emit_line(w->e, "del[%s + jj] = a;", w->R_name);
    if (w->bp)
        emit_line(w->e, "best_as[jj] = best_a;");
    emit_close(w->e, "");
    if (chain >= 0) {
        const char *t = arena_printf(w->p->arena, "w[(%d * %s + jj) * %s]", chain, w->S_name, w->G_name);
        emit_comment(w->e, "the chain D[k] = a[k] %s t[k] %s D[k-1]: this lane's run as one step "
                           "(A, T), a scan of the steps across the warp, then the run again from "
                           "the value entering it", w->viterbi ? "max" : "+", w->viterbi ? "+" : "*");
        emit_line(w->e, "real A = %s, T = %s;", zero(w), w->viterbi ? "(real)0" : "(real)1");
        emit_line(w->e, "#pragma unroll");
        emit_open(w->e, "for (int jj = 0; jj < %s; jj++)", w->S_name);
        if (w->viterbi)
            emit_line(w->e, "A = hmmc_vmax(del[%s + jj], %s + A); T += %s;", w->R_name, t, t);
        else
            emit_line(w->e, "A = del[%s + jj] + %s * A; T *= %s;", w->R_name, t, t);
        emit_close(w->e, "");
        if (w->lane_scales) {
            profile_write_chain_scan_in_lanes(w);
        } else {
            emit_line(w->e, "real entering = hmmc_group_chain_scan(A, T, lane, %s(), mask, %s);",
                      w->viterbi ? "hmmc_maxplus" : "hmmc_sumproduct", w->G_name);
        }
        emit_line(w->e, "#pragma unroll");
        emit_open(w->e, "for (int jj = 0; jj < %s; jj++)", w->S_name);
        if (w->viterbi && w->bp) {
            emit_line(w->e, "const real through = %s + entering;", t);
            emit_line(w->e, "int best_del = best_as[jj];");
            emit_line(w->e, "if (through > del[%s + jj]) { del[%s + jj] = through; "
                            "best_del = %s[(%d * %s + jj) * %s + lane]; }", w->R_name, w->R_name,
                      profile_name(w, "entry_bp"), chain, w->S_name, w->G_name);
            write_bp_store(w, ROLE_DELETE, "best_del");
        } else if (w->viterbi) {
            emit_line(w->e, "del[%s + jj] = hmmc_vmax(del[%s + jj], %s + entering);", w->R_name, w->R_name, t);
        } else {
            emit_line(w->e, "del[%s + jj] += %s * entering;", w->R_name, t);
        }
        emit_line(w->e, "entering = del[%s + jj];", w->R_name);
        emit_close(w->e, "");
    } else if (w->bp) {
        emit_line(w->e, "#pragma unroll");
        emit_open(w->e, "for (int jj = 0; jj < %s; jj++)", w->S_name);
        write_bp_store(w, ROLE_DELETE, "best_as[jj]");
        emit_close(w->e, "");
    }
}

/* Step 2: every silent move, in order. */
static void write_silent_phase(ProfileWriter *w)
{
    write_delete_chain(w);
    write_special_silent(w);
    if (w->bp) {
        emit_open(w->e, "if (lane == 0)");
        for (int s = 0; s < w->v->n_specials; s++)
            emit_line(w->e, "bp_row[pos * %d + %d] = best_sp%d < 0 ? (%s)~0u : (%s)best_sp%d; /* %s */",
                      w->m->n_states, w->v->specials[s], s, dp_bp_type(w->bp), dp_bp_type(w->bp), s,
                      w->m->states[w->v->specials[s]].name);
        emit_close(w->e, "");
    }
}

/* Applies `op` ("*= factor", "-= top") to every value the warp keeps. */
static void write_apply_all(ProfileWriter *w, const char *op)
{
    emit_line(w->e, "#pragma unroll");
    emit_open(w->e, "for (int jj = 0; jj < %s; jj++)", w->S_name);
    for (int r = 0; r < PROFILE_ROLES; r++)
        if (w->v->has_role[r])
            emit_line(w->e, "%s[%s + jj] %s;", profile_role_array[r], w->R_name, op);
    emit_close(w->e, "");
    for (int s = 0; s < w->v->n_specials; s++)
        emit_line(w->e, "sp%d %s;", s, op);
}

/* Step 3, forward: the column sum and exact rescaling. */
static void write_rescale(ProfileWriter *w)
{
    emit_line(w->e, "real part = (real)0;");
    emit_line(w->e, "#pragma unroll");
    emit_open(w->e, "for (int jj = 0; jj < %s; jj++)", w->S_name);
    for (int r = 0; r < PROFILE_ROLES; r++)
        if (w->v->has_role[r])
            emit_line(w->e, "part += %s[%s + jj];", profile_role_array[r], w->R_name);
    emit_close(w->e, "");
    if (w->lane_scales) {
        emit_comment(w->e, "each lane keeps its values near the top of float's range, its "
                           "exponent apart (so a lane of nodes far below the column sum keeps "
                           "its digits)");
        profile_write_lane_renormalise(w);
        for (int s = 0; s < w->v->n_specials; s++)
            emit_line(w->e, "hmmc_renormalise(sp%d, spx%d, %d);", s, s, SUM_EXP);
    }
    emit_line(w->e, "real sum = hmmc_group_all(%s, hmmc_add(), mask, %s)",
              w->lane_scales ? "ldexp(part, lane_exp)" : "part", w->G_name);
    for (int s = 0; s < w->v->n_specials; s++)
        emit_line(w->e, w->lane_scales ? "    + ldexp(sp%d, spx%d)" : "    + sp%d", s, s);
    emit_line(w->e, "    ;");
    emit_line(w->e, "if (!(sum > (real)0))");
    emit_line(w->e, "    break; /* no path emits this prefix; the sum is the same in every lane */");
    const char *how_kept = w->lane_scales
        ? arena_printf(w->p->arena, " by the exponents alone (each lane's values stay in their own "
                                    "scale, near 2^%d)", LANE_EXP)
        : arena_printf(w->p->arena, ", near the top of float's range: no value exceeds the sum, so "
                                    "values down to 2^-%d of it stay normal floats (a profile's "
                                    "entries put states 2^-100 and more below the sum, and those may "
                                    "still carry the best alignment later)", 126 + SUM_EXP - SUM_BAND);
    emit_comment(w->e, "the sum is kept within [2^%d, 2^%d]%s. A value below the normal range "
                       "(losing digits), or in float a sum beyond it, marks the sequence for "
                       "scoring again: float in double, double on the CPU (long double).",
                 SUM_EXP - SUM_BAND, SUM_EXP + SUM_BAND, how_kept);
    emit_line(w->e, "if (sizeof(real) == sizeof(float))");
    emit_line(w->e, "    risky |= !(sum < (real)0x1p126);");
    emit_line(w->e, "#pragma unroll");
    emit_open(w->e, "for (int jj = 0; jj < %s; jj++)", w->S_name);
    for (int r = 0; r < PROFILE_ROLES; r++)
        if (w->v->has_role[r])
            emit_line(w->e, "risky |= hmmc_below_normal(%s[%s + jj]);", profile_role_array[r], w->R_name);
    emit_close(w->e, "");
    for (int s = 0; s < w->v->n_specials; s++)
        emit_line(w->e, "risky |= hmmc_below_normal(sp%d);", s);
    emit_line(w->e, "real factor;");
    emit_line(w->e, "int shift;");
    emit_open(w->e, "if (hmmc_rescaling<%d, %d>(sum, factor, shift))", SUM_EXP, SUM_BAND);
    if (w->lane_scales) {
        for (int s = 0; s < w->v->n_specials; s++)
            emit_line(w->e, "spx%d -= shift;", s);
        emit_line(w->e, "lane_exp -= shift; /* every value keeps its digits (factor: unused) */");
    } else {
        write_apply_all(w, "*= factor");
    }
    emit_line(w->e, "scale += shift;");
    emit_close(w->e, "");
}

/* Step 3, viterbi: the best value moves into `offset`. */
static void write_normalise(ProfileWriter *w)
{
    emit_line(w->e, "real part = (real)-INFINITY;");
    emit_line(w->e, "#pragma unroll");
    emit_open(w->e, "for (int jj = 0; jj < %s; jj++)", w->S_name);
    for (int r = 0; r < PROFILE_ROLES; r++)
        if (w->v->has_role[r])
            emit_line(w->e, "part = hmmc_vmax(part, %s[%s + jj]);", profile_role_array[r], w->R_name);
    emit_close(w->e, "");
    emit_line(w->e, "real top = hmmc_group_all(part, hmmc_max(), mask, %s);", w->G_name);
    for (int s = 0; s < w->v->n_specials; s++)
        emit_line(w->e, "top = hmmc_vmax(top, sp%d);", s);
    emit_open(w->e, "if (top != (real)-INFINITY)");
    write_apply_all(w, "-= top");
    emit_line(w->e, "offset += (double)top;");
    emit_close(w->e, "");
}

static void write_kernel(ProfileWriter *w)
{
    const ProfileView *v = w->v;
    const IrModel *m = w->m;
    int end = profile_special_index(v, m->end), start = profile_special_index(v, m->start);
    emit_line(w->e, "template <typename real>");
    emit_open(w->e, "__global__ void %s(const hmmrt_gpu_batch b)", profile_name(w, "kernel"));
    emit_line(w->e, "const int lane = threadIdx.x %% %s;", w->G_name);
    emit_line(w->e, "const int64_t j = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / %s;", w->G_name);
    emit_comment(w->e, "the lanes of this sequence: shuffles and votes stay inside the group, whose "
                       "sequence may end before its neighbour's");
    emit_line(w->e, "const unsigned mask = %s == 32 ? 0xffffffffu : ((1u << (%s %% 32)) - 1) << "
                    "(threadIdx.x %% 32 / %s * %s);", w->G_name, w->G_name, w->G_name, w->G_name);
    emit_line(w->e, "if (j >= b.n)");
    emit_line(w->e, "    return; /* the whole group */");
    cuda_write_float_guard(w->e, w->plan, "lane == 0");
    emit_line(w->e, "const uint8_t *x = b.codes + b.offsets[j];");
    emit_line(w->e, "const int64_t L = b.lengths[j];");
    cuda_write_length_weights(w->e, w->p->arena, m, w->viterbi, "lane == 0");
    if (w->bp)
        emit_line(w->e, "%s *bp_row = (%s *)b.bp + b.bp_offsets[j];", dp_bp_type(w->bp), dp_bp_type(w->bp));
    emit_line(w->e, "const real *w = %s<real>() + lane, *ex = %s<real>() + lane;", profile_name(w, "weights"),
              profile_name(w, "exits"));
    emit_line(w->e, "const real *em = %s<real>() + lane;", profile_name(w, "emit"));
    if (!v->n_exits)
        emit_line(w->e, "(void)ex; /* no exits */");
    if (!v->has_role[ROLE_MATCH] && !v->has_role[ROLE_INSERT])
        emit_line(w->e, "(void)em; /* no emitting nodes */");
    emit_comment(w->e, "node lane * S + jj of each role at [R + jj]; [0, R): the left lane's last nodes");
    emit_line(w->e, "real match[%s + %s], insert[%s + %s], del[%s + %s];", w->R_name, w->S_name, w->R_name,
              w->S_name, w->R_name, w->S_name);
    emit_line(w->e, "#pragma unroll");
    emit_line(w->e, "for (int jj = 0; jj < %s + %s; jj++)", w->R_name, w->S_name);
    emit_line(w->e, "    match[jj] = insert[jj] = del[jj] = %s;", zero(w));
    for (int s = 0; s < v->n_specials; s++) {
        if (w->lane_scales)
            emit_line(w->e, "int spx%d = 0; /* forward with lane scales: %s is held times 2^-spx%d too */",
                      s, m->states[v->specials[s]].name, s);
        emit_line(w->e, "real sp%d = %s; /* %s */", s,
                  s == start ? (w->viterbi ? "(real)0" : arena_printf(w->p->arena, "(real)0x1p%d", SUM_EXP))
                                                                  : zero(w), m->states[v->specials[s]].name);
        if (w->bp)
            emit_line(w->e, "int best_sp%d = -1;", s);
    }
    if (w->viterbi)
        emit_line(w->e, "double offset = 0;");
    else
        emit_line(w->e, "int scale = -%d; /* forward: the start holds 2^%d (step 3) */", SUM_EXP, SUM_EXP);
    if (w->lane_scales) {
        emit_comment(w->e, "this lane's nodes are held times 2^-lane_exp (and 2^-scale); it starts "
                           "empty, and takes the exponent of what first enters it");
        emit_line(w->e, "int lane_exp = %d; /* empty */", EMPTY_LANE_EXP);
        emit_comment(w->e, "a value read into the lane above 2^room in its scale (near the top of the "
                           "type's range) makes the lane move its values down first, to 2^%d", LANE_EXP);
        emit_line(w->e, "const int room = sizeof(real) == sizeof(float) ? %d : %d;", ROOM_EXP_FLOAT,
                  ROOM_EXP_DOUBLE);
    }
    if (!w->viterbi)
        emit_line(w->e, "bool risky = false;");
    emit_line(w->e, "int64_t pos = 0;");
    if (w->bp) {
        emit_comment(w->e, "position 0: nothing has emitted");
        emit_line(w->e, "#pragma unroll");
        emit_open(w->e, "for (int jj = 0; jj < %s; jj++)", w->S_name);
        for (int r = 0; r < 2; r++)
            if (v->has_role[r])
                write_bp_store(w, r, NULL);
        emit_close(w->e, "");
    }
    emit_open(w->e, "%s", "/* position 0: the silent moves from the start */");
    write_silent_phase(w);
    emit_close(w->e, "");
    emit_open(w->e, "for (pos = 1; pos <= L; pos++)");
    emit_comment(w->e, "the weights are read at every position (from L1), not held in registers: "
                       "more warps fit (measured on an H100: globin forward 256 -> 383 G cells/s)");
    emit_line(w->e, "w = hmmc_opaque(w);");
    emit_line(w->e, "ex = hmmc_opaque(ex);");
    emit_line(w->e, "const int c = x[pos - 1], cls = %s[c];", profile_name(w, "class"));
    write_emitting_phase(w);
    write_silent_phase(w);
    if (w->viterbi)
        write_normalise(w);
    else
        write_rescale(w);
    emit_close(w->e, "");
    if (!w->viterbi)
        emit_line(w->e, "risky = __any_sync(mask, risky);");
    emit_open(w->e, "if (lane == 0)");
    if (w->viterbi)
        emit_line(w->e, "((real *)b.scores)[j] = (real)((double)sp%d + offset); /* %s */", end,
                  m->states[m->end].name);
    else
        emit_line(w->e, "((real *)b.scores)[j] = pos != L + 1 ? (real)-INFINITY : risky "
                        "? (real)NAN : (real)((double)log(sp%d) + (double)(scale%s) * 0.693147180559945309417); "
                        "/* %s */", end, w->lane_scales ? arena_printf(w->p->arena, " + spx%d", end) : "",
                  m->states[m->end].name);
    emit_close(w->e, "");
    emit_close(w->e, "");
}

void cuda_write_profile_call(Emitter *e, const Program *p, const Layout *l, const GpuPlan *plan, int index)
{
    const IrCall *call = &p->calls[index];
    ProfileWriter w = {.e = e, .p = p, .call = call, .layout = l, .plan = plan, .m = call->model,
                       .index = index, .viterbi = call->alg == ALG_VITERBI,
                       .bp = call->plan.bp_bytes, .v = plan->profile};
    w.G_name = profile_name(&w, "G");
    w.S_name = profile_name(&w, "S");
    w.R_name = profile_name(&w, "R");
    w.G = plan->profile_lanes;
    w.S = profile_lane_nodes(w.v->K, w.G);
    for (int x = 0; x < w.v->n_entries; x++)
        if (w.v->entries[x].reach > w.R)
            w.R = w.v->entries[x].reach;
    int *in_start, *in_order;
    ir_incoming(p->arena, w.m, &in_start, &in_order);
    w.in_index = ARENA_ARRAY(p->arena, int, w.m->n_moves ? w.m->n_moves : 1);
    for (int s = 0; s < w.m->n_states; s++)
        for (int k = in_start[s]; k < in_start[s + 1]; k++)
            w.in_index[in_order[k]] = k - in_start[s];
    find_classes(&w);
    w.lane_scales = !w.viterbi && plan->profile_lane_scales;
    find_exponents(&w);
    emit_blank(e);
    emit_comment(e, "==== call %d: %s; profile of %d nodes, %d lanes a sequence, %d nodes a lane, %d "
                    "special states ====", index, call->label, w.v->K, w.G, w.S, w.v->n_specials);
    write_tables(&w);
    write_special_emissions(&w);
    emit_blank(e);
    write_kernel(&w);
    emit_blank(e);
    cuda_write_call_launcher(e, p, l, plan, index);
}
