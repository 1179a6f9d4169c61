/* backend_cuda_profile.h: what the two files of the CUDA profile kernel's
 * writer share (backend_cuda_profile.c writes the kernel,
 * backend_cuda_profile_lanes.c the parts that forward with lane scales
 * adds): the writer's state and the constants of the scales. */
#ifndef HMMC_BACKEND_CUDA_PROFILE_H
#define HMMC_BACKEND_CUDA_PROFILE_H

#include "codegen/cuda/cuda_common.h"
#include "codegen/cuda/profile_tuning.h"

typedef struct ProfileWriter {
    Emitter *e;
    const Program *p;
    const IrCall *call;
    const Layout *layout; /* the names of the call's symbols (profile_name) */
    const GpuPlan *plan;
    const IrModel *m;
    const ProfileView *v;
    int index, viterbi, bp;
    int G, S, R;         /* lanes a sequence, nodes a lane, slots in front */
    const char *G_name, *S_name, *R_name; /* their constants in the kernel: "c0_G" */
    int n_classes;
    int *class_of;       /* symbol -> class */
    int *in_index;       /* move -> its number among its destination's incoming moves */
    int *entry_exp, *exit_exp; /* forward: per row and lane, the exponent c of a row held
                                  times 2^c (profile_lane_exponent; [row * G + lane]) */
    int *entry_scaled, *exit_scaled; /* per row: some lane's c is not 0 */
    int lane_scales;     /* forward: each lane keeps its values times 2^-lane_exp
                            (GpuPlan.profile_lane_scales) */
} ProfileWriter;

/* The name of a symbol of the call: "c0_kernel" (layout_name). */
static inline const char *profile_name(const ProfileWriter *w, const char *what)
{
    return layout_name(w->layout, w->index, what);
}

/* The arrays of the roles' values in the kernel: match, insert, del. */
extern const char *const profile_role_array[PROFILE_ROLES];

/* With lane scales: NO_ENTRY_EXP, the exponent c of a lane with no moves
 * in an entry row (a lane of padding, or of nodes the special does not
 * enter): the special's value read through it is 0, however far the lane's
 * own exponent drifts. EMPTY_LANE_EXP, the exponent of a lane that holds
 * only zeros: any value that enters it is far above its values, so the
 * lane makes room for it (takes the entering value's exponent) rather than
 * reading it in a frame where it would fall below the type's range. */
enum { NO_ENTRY_EXP = 1 << 30, EMPTY_LANE_EXP = -(1 << 29) };

/* With lane scales, a value read into a lane (from the lane to its left,
 * the delete chain's scan, a special) that is above 2^ROOM_EXP in the
 * lane's scale makes the lane move its values down to make room. The
 * higher, the rarer (each move is a pass over the lane's values, and a
 * warp waits for its slowest lane): float keeps 2^15 below its top for the
 * sums that follow (at most 3 terms a node, times an emission value of at
 * most 2^6 or so), double far more. */
enum { ROOM_EXP_FLOAT = 112, ROOM_EXP_DOUBLE = 900 };

/* Forward keeps a column's sum within 2^(SUM_EXP +- SUM_BAND). With lane
 * scales, each lane keeps its own sum within 2^(LANE_EXP +- LANE_BAND),
 * wider and lower, below ROOM_EXP_FLOAT: each move is a pass over the
 * lane's values that its warp waits for, and a group's lanes move at once
 * (the measures: benchmarks/history/profile-tuning.md). */
enum { SUM_EXP = 96, SUM_BAND = 8, LANE_EXP = 88, LANE_BAND = 16 };

/* Forward with lane scales (backend_cuda_profile_lanes.c). */
void profile_write_lane_shift(ProfileWriter *w);
void profile_write_left_slots_scaled(ProfileWriter *w, unsigned roles);
void profile_write_lane_renormalise(ProfileWriter *w);
void profile_write_special_in_lane(ProfileWriter *w, int e, int sp, const char *c_of_lane, const char *name,
                                   int room);
void profile_write_exit_sum_in_lanes(ProfileWriter *w, int x, int t);
void profile_write_chain_scan_in_lanes(ProfileWriter *w);

#endif
