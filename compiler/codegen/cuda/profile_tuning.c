/* profile_tuning.c: how the CUDA profile shape lays a profile over a warp's
 * lanes (profile_tuning.h): lanes a sequence, sparse entries, and the
 * per-lane exponents that let forward run in float although some of its
 * weights are below float's range. */
#include "codegen/cuda/profile_tuning.h"

#include <math.h>

int profile_lanes(int K, int viterbi)
{
    int lanes = 8, most = viterbi ? PROFILE_LANE_NODES_VITERBI : PROFILE_LANE_NODES_FORWARD;
    while (lanes < 32 && profile_lane_nodes(K, lanes) > most)
        lanes *= 2;
    return lanes;
}

int profile_entry_is_sparse(const ProfileView *v, int e)
{
    int n = 0;
    for (int k = 0; k < v->K; k++)
        n += v->entries[e].move[k] >= 0;
    return n <= PROFILE_SPARSE_MOVES;
}

int profile_entry_is_scaled(const ProfileView *v, int e)
{
    return v->entries[e].from_role < 0 && !profile_entry_is_sparse(v, e);
}

int profile_lane_exponent(const IrModel *m, const int *move, int K, int lanes, int lane, int always)
{
    int S = profile_lane_nodes(K, lanes);
    double least = INFINITY, most = -INFINITY;
    for (int k = lane * S; k < K && k < (lane + 1) * S; k++) {
        if (move[k] < 0 || m->moves[move[k]].lw_sum == -INFINITY)
            continue;
        double lw = m->moves[move[k]].lw_sum;
        least = fmin(least, lw);
        most = fmax(most, lw);
    }
    if (!(least < IR_LN_FLOAT_MIN) && !(always && most > -INFINITY))
        return 0;
    /* most = f * 2^x with f in [1/2, 1): times 2^-x it is f */
    return -(int)floor(most / M_LN2) - 1;
}

/* Marks the moves of row `move` and returns the least weight that float
 * cannot hold even times its lane's exponent, or that is below
 * least_allowed (a natural log; -INFINITY for none); 0 when there is none. */
static double hold_row(const IrModel *m, const int *move, int K, int lanes, double least_allowed,
                       char *held)
{
    double least = 0;
    int S = profile_lane_nodes(K, lanes);
    for (int lane = 0; lane < lanes; lane++) {
        int c = profile_lane_exponent(m, move, K, lanes, lane, 0);
        for (int k = lane * S; k < K && k < (lane + 1) * S; k++) {
            if (move[k] < 0)
                continue;
            held[move[k]] = 1;
            double lw = m->moves[move[k]].lw_sum;
            if (lw > -INFINITY && lw < least &&
                (lw + c * M_LN2 < IR_LN_FLOAT_MIN || lw < least_allowed))
                least = lw;
        }
    }
    return least;
}

int profile_lane_scales(const IrModel *m, const ProfileView *v, int lanes)
{
    if (profile_lane_nodes(v->K, lanes) <= PROFILE_LANE_SCALES_MIN_NODES)
        return 0;
    for (int e = 0; e < v->n_entries; e++)
        for (int k = 0; v->entries[e].from_role < 0 && k < v->K; k++) {
            int mv = v->entries[e].move[k];
            if (mv >= 0 && m->moves[mv].lw_sum > -INFINITY &&
                m->moves[mv].lw_sum < PROFILE_FLOAT_LEAST_ENTRY * M_LN2)
                return 1;
        }
    return 0;
}

double profile_float_underflow(Arena *a, const IrModel *m, const ProfileView *v, int lanes, int lane_scales)
{
    char *held = ARENA_ARRAY(a, char, m->n_moves ? m->n_moves : 1);
    double least = 0, least_entry = lane_scales ? -INFINITY : PROFILE_FLOAT_LEAST_ENTRY * M_LN2;
    for (int e = 0; e < v->n_entries; e++)
        if (profile_entry_is_scaled(v, e))
            least = fmin(least, hold_row(m, v->entries[e].move, v->K, lanes, least_entry, held));
    for (int x = 0; x < v->n_exits; x++)
        least = fmin(least, hold_row(m, v->exits[x].move, v->K, lanes, -INFINITY, held));
    return fmin(least, ir_float_underflow_except(m, held));
}
