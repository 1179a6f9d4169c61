/* profile.h: recognising profile-shaped models (HMMER's Plan7 and models
 * like it) and their node view, which the CUDA profile shape reads instead
 * of the move list, with the constants of that shape's tuning. */

/* A profile is a chain of K nodes, each with up to three
 * states in fixed roles (match: emits, no loop; insert: emits, loops on
 * itself; delete: silent), joined by moves that go forward at most
 * PROFILE_MAX_REACH nodes, plus a few special states (start, end, and the
 * hubs such as B and E that reach every node, with what hangs off them: N,
 * J, C, T). The recogniser is structural: names play no part, and every
 * move of the model must find its place in the view or the model is not a
 * profile. */
#ifndef HMMC_PROFILE_H
#define HMMC_PROFILE_H

#include "ir/ir.h"

enum {
    PROFILE_MIN_NODES = 24,     /* fewer: the other shapes serve as well */
    PROFILE_MAX_SPECIALS = 16,  /* states outside the nodes */
    PROFILE_MAX_REACH = 2,      /* node(to) - node(from) of a move between nodes (folding a
                                   delete state joins nodes two apart) */
    PROFILE_HUB_DEGREE = 16     /* a state with this many neighbours or more is a hub */
};

typedef enum ProfileRole { ROLE_MATCH, ROLE_INSERT, ROLE_DELETE, PROFILE_ROLES } ProfileRole;

/* One kind of move into a node's state, the same at every node: from a
 * node's state `reach` nodes back (from_role >= 0) or from a special state
 * (from_role < 0). move[k]: the model's move into node k's state, -1 where
 * node k has none. Emitting entries read the previous column, silent ones
 * the current column. An entry from the delete role into the delete role
 * is the delete chain. */
typedef struct ProfileEntry {
    int from_role;    /* ProfileRole, or -1: from specials[from_special] */
    int from_special;
    int reach;        /* node moves: 0 .. PROFILE_MAX_REACH */
    int to_role;
    int emitting;
    int *move;        /* K move indexes or -1 */
} ProfileEntry;

/* Moves from a node's state into a special state (silent, same column):
 * the special sums (or maximises) over the nodes. */
typedef struct ProfileExit {
    int from_role;
    int to_special;
    int *move;        /* K move indexes or -1 */
} ProfileExit;

typedef struct ProfileView {
    int K;                      /* nodes */
    int *state;                 /* K * PROFILE_ROLES: the model's state of node k in role r
                                   at [k * PROFILE_ROLES + r], -1 where there is none */
    int has_role[PROFILE_ROLES];
    int n_entries;
    ProfileEntry *entries;      /* emitting entries first, then silent ones */
    int n_exits;
    ProfileExit *exits;
    int n_specials;
    int *specials;              /* state indexes, in evaluation order (after the delete
                                   chain; none enters a delete state silently) */
    int n_special_moves;
    int *special_moves;         /* moves between specials: emitting ones first, then the
                                   silent ones in evaluation order of their destinations */
} ProfileView;

/* The node view of a call's model, or NULL when it is not a profile (why,
 * when not NULL, receives the reason). */
ProfileView *profile_view(Arena *a, const IrModel *m, const char **why);

/* Most nodes a lane keeps before a sequence takes more lanes of a warp (8,
 * 16, 32) in the CUDA profile shape: fewer lanes a sequence share each
 * shuffle between more sequences, but each lane holds more values. Measured
 * on an H100 (2026-11-23, 200,000 proteins, kernel rates in --timing's
 * unit; benchmarks/README.md):
 * - viterbi holds a node in fewer registers: at most 18 nodes a lane,
 *   p100 (8 lanes) 1058 G cells/s against 821 at most 10 (16 lanes), globin
 *   (8 lanes) 1094 against 1008; p200 the same at 16 lanes as at 32
 *   (1026, 1015); in double p100 523 against 393, globin 560 against 486;
 * - forward holds more per node: at most 10, as at 16 or 24 nodes it
 *   spills in double (globin, 8 lanes: 413 against 700; p200, 16 lanes:
 *   694 against 743), measured in double; in float (profile_scale.c) 18
 *   gained nothing (2026-11-23, benchmarks/ab-programs: globin 1170 at 8
 *   lanes against 1157 at 16, p100 969 against 1051). */
enum { PROFILE_LANE_NODES_VITERBI = 18, PROFILE_LANE_NODES_FORWARD = 10 };

/* ptxas's optimisation level for a program whose every call is forward on
 * a profile of at most PROFILE_PTXAS_O1_MAX_NODES nodes a lane: -O1, which
 * schedules fewer loads ahead, so that the kernel takes about half the
 * registers and more warps fit; otherwise its default, -O3. Measured on an
 * H100 (2026-11-24, every score byte for byte the same; -O3 -> -O1):
 * - 100,000 random proteins, kernels in --timing's unit, two runs each in
 *   turn: globin forward (9 nodes a lane) 1131 -> 1207 in float (registers
 *   162 -> 80), 545 -> 763 in double (255 and a spill -> 117); p200
 *   forward in double 640 -> 680; p400 forward in double (13 nodes) 625 ->
 *   821 (255 and 480 bytes spilled -> 152); p100 forward 1027 -> 1025;
 * - the suite (200,000 proteins, G cells/s): p50 and p100 forward in
 *   double 164 -> 192 and 159 -> 202, p400 209 -> 277, globin in double
 *   185 -> 260; but p800 (25 nodes, lane scales) 200 -> 223 in float and
 *   114 -> 72 in double, and one level serves both precisions of a
 *   program;
 * - at 50 and 63 nodes a lane (p1600, p2000) -O1 is 1.8x to 2.3x slower
 *   in both precisions, though it spills nothing in float;
 * - viterbi gains little and loses some: globin 1052 -> 1106 in float, 544
 *   -> 481 in double, p200 991 -> 1089, p400 1203 -> 1160, p800 1280 ->
 *   1280; it keeps -O3.
 * So -O1 up to 13 nodes a lane, where both precisions gained; nvcc builds
 * a program's kernels together, so a program that mixes calls keeps -O3. */
enum { PROFILE_PTXAS_O1_MAX_NODES = 13 };

/* Lanes a sequence for a profile of K nodes scored by viterbi (or, when
 * viterbi is 0, forward): 8, 16 or 32. */
int profile_lanes(int K, int viterbi);

/* Nodes a lane keeps when `lanes` lanes share K nodes (the last lanes may
 * hold fewer, or padding only). */
static inline int profile_lane_nodes(int K, int lanes) { return (K + lanes - 1) / lanes; }

/* The special index of state s in v (-1 when s is in a node). */
int profile_special_index(const ProfileView *v, int s);

/* Entries that only a few nodes have (the moves that folding a delete state
 * makes, at the ends of a profile) are written as their own statements, so
 * that the other nodes spend nothing on them. */
enum { PROFILE_SPARSE_MOVES = 4 };

/* Whether entry e is written as statements of its own (PROFILE_SPARSE_MOVES
 * nodes or fewer) rather than read from a table. */
int profile_entry_is_sparse(const ProfileView *v, int e);

/* Forward in float (profile_scale.c). HMMER's glocal profiles enter node k
 * from B, and leave it for E, with weights that shrink geometrically along
 * the profile (down to e^-138 for the globin): a float table would read 0
 * for those below 2^-126. The values they lead to are not that small (B
 * holds about 2^88), only the weights are. So the rows of weights between a
 * special state and the nodes (a table entry from a special, an exit into
 * one) are held per lane times 2^c, c chosen for the lane's own nodes: the
 * kernel multiplies the special's value by 2^-c before the lane's entries
 * read it, and the lane's part of an exit by 2^-c before the group sums it.
 * Every product is then what it would be with exact weights. */

/* The exponent c of lane `lane` (of `lanes`) for a row of per-node moves
 * (move[k], -1 for none): 0 when every weight of the lane's nodes is a
 * normal float (unless `always`), else the one that puts the lane's largest
 * weight in [1/2, 1). */
int profile_lane_exponent(const IrModel *m, const int *move, int K, int lanes, int lane, int always);

/* Whether entry e is a row that forward may hold through per-lane
 * exponents: a table entry from a special state (not sparse). Every exit
 * is such a row too; viterbi, which adds logs, holds none so. */
int profile_entry_is_scaled(const ProfileView *v, int e);

/* The values that entries from a special put in the nodes must stay normal
 * floats too: below them the kernel marks the sequence for double (such a
 * path may carry the alignment later). B holds its feeder N's value times
 * N -> B (2^-8.5 for HMMER2's models), and N is near the column sum, which
 * is kept in [2^88, 2^104]: an entry below 2^-200 puts values near the
 * bottom of float's range in every column, and every sequence would be
 * scored twice (run through tests/emulate, 2026-11-23: the globin, entries
 * down to 2^-194, marked none of 300 random proteins and 200 globins; M =
 * 400, down to 2^-555, and M = 2000 marked every one of 25). */
enum { PROFILE_FLOAT_LEAST_ENTRY = -200 }; /* log2 */

/* Forward with lane scales (GpuPlan.profile_lane_scales): each lane keeps
 * its values times 2^-e, e its own, following the lane's magnitude along
 * the sequence (its values' sum near 2^88), and each special state keeps a
 * number and an exponent; values cross between lanes and specials with the
 * difference of their exponents. Then no entry is too small, and float
 * serves profiles whose entries go below 2^-200, and double those whose
 * values leave double's range against one column sum (M >= 1,600). It
 * costs work every position that only pays where a lane holds many nodes:
 * measured on an H200 (2026-11-23, 200,000 random proteins, --timing's
 * G cells/s), M = 200 (7 nodes a lane) 286 against 648 in double without
 * them, M = 400 (13) 414 against 633, M = 800 (25) 534 against 301; again
 * on an H100 after lane moves became one multiplication a value
 * (2026-11-24): M = 200 282 against 645, M = 400 440 against 630. So a
 * call takes them when some entry is below 2^-200 and its lanes hold more
 * than PROFILE_LANE_SCALES_MIN_NODES nodes; otherwise such a call scores
 * in double as before. */
enum { PROFILE_LANE_SCALES_MIN_NODES = 16 };

/* Whether forward on v with `lanes` lanes a sequence takes lane scales
 * (above). */
int profile_lane_scales(const IrModel *m, const ProfileView *v, int lanes);

/* What ir_float_underflow says of a forward call's model in the profile
 * shape with `lanes` lanes a sequence: the least weight (as a natural log)
 * that float cannot hold even with the per-lane exponents (a lane whose
 * weights span more than float's range), or, without lane scales, that
 * puts values below float's range (an entry from a special below
 * 2^PROFILE_FLOAT_LEAST_ENTRY); 0 when every one fits. */
double profile_float_underflow(Arena *a, const IrModel *m, const ProfileView *v, int lanes, int lane_scales);

#endif
