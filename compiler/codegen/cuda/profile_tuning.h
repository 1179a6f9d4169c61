/* profile_tuning.h: how the CUDA profile shape lays a profile (analysis/profile.h)
 * over the lanes of a warp: lanes a sequence, nodes a lane, entries written
 * apart, the per-lane exponents that let forward run in float, lane scales, and
 * ptxas's level. The measures behind each constant: benchmarks/history/profile-tuning.md. */
#ifndef HMMC_PROFILE_TUNING_H
#define HMMC_PROFILE_TUNING_H

#include "analysis/profile.h"

/* Most nodes a lane keeps before a sequence takes more lanes of a warp (8,
 * 16, 32): fewer lanes a sequence share each shuffle between more
 * sequences, but each lane holds more values; viterbi holds a node in fewer
 * registers than forward, which spills in double beyond 10. */
enum { PROFILE_LANE_NODES_VITERBI = 18, PROFILE_LANE_NODES_FORWARD = 10 };

/* ptxas's optimisation level for a program whose every call is forward on
 * a profile of at most PROFILE_PTXAS_O1_MAX_NODES nodes a lane: -O1, which
 * schedules fewer loads ahead, so that the kernel takes about half the
 * registers and more warps fit; otherwise its default, -O3 (slower at -O1
 * beyond 13 nodes, and for viterbi). nvcc builds a program's kernels
 * together, so a program that mixes calls keeps -O3. */
enum { PROFILE_PTXAS_O1_MAX_NODES = 13 };

/* Lanes a sequence for a profile of K nodes scored by viterbi (or, when
 * viterbi is 0, forward): 8, 16 or 32. */
int profile_lanes(int K, int viterbi);

/* Nodes a lane keeps when `lanes` lanes share K nodes (the last lanes may
 * hold fewer, or padding only). */
static inline int profile_lane_nodes(int K, int lanes) { return (K + lanes - 1) / lanes; }

/* Entries that only a few nodes have (the moves that folding a delete state
 * makes, at the ends of a profile) are written as their own statements, so
 * that the other nodes spend nothing on them. */
enum { PROFILE_SPARSE_MOVES = 4 };

/* Whether entry e is written as statements of its own (PROFILE_SPARSE_MOVES
 * nodes or fewer) rather than read from a table. */
int profile_entry_is_sparse(const ProfileView *v, int e);

/* Forward in float. HMMER's glocal profiles enter node k from B, and leave
 * it for E, with weights that shrink geometrically along the profile (down
 * to e^-138 for the globin): a float table would read 0 for those below
 * 2^-126. The values they lead to are not that small (B holds about 2^88),
 * only the weights are. So the rows of weights between a special state and
 * the nodes (a table entry from a special, an exit into one) are held per
 * lane times 2^c, c chosen for the lane's own nodes: the kernel multiplies
 * the special's value by 2^-c before the lane's entries read it, and the
 * lane's part of an exit by 2^-c before the group sums it. Every product is
 * then what it would be with exact weights. */

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
 * N -> B, and N is near the column sum, kept in [2^88, 2^104]: an entry
 * below 2^-200 puts values near the bottom of float's range in every
 * column, and every sequence would be scored twice. */
enum { PROFILE_FLOAT_LEAST_ENTRY = -200 }; /* log2 */

/* Forward with lane scales (IrPlan.profile_lane_scales): each lane keeps
 * its values times 2^-e, e its own, following the lane's magnitude along
 * the sequence (its values' sum near 2^88), and each special state keeps a
 * number and an exponent; values cross between lanes and specials with the
 * difference of their exponents. Then no entry is too small, and float
 * serves profiles whose entries go below 2^-200, and double those whose
 * values leave double's range against one column sum (M >= 1,600). It
 * costs work every position that only pays where a lane holds many nodes:
 * a call takes them when some entry is below 2^-200 and its lanes hold
 * more than PROFILE_LANE_SCALES_MIN_NODES nodes; otherwise such a call
 * scores in double. */
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
