/* backend_cuda_profile_lanes.c: the parts of the CUDA profile kernel that
 * forward with lane scales writes (profile_tuning.h): each lane keeps its
 * values times 2^-lane_exp of its own, each special state a number and an
 * exponent; values cross lanes with the difference of their exponents. */
#include "codegen/cuda/backend_cuda_profile.h"

#include "codegen/emit.h"

/* Forward with lane scales: every value of the lane times 2^-shift, and
 * its exponent up by shift (`shift`: an int the kernel has just set): one
 * multiplication a value (hmmc_lane_factor); a value that loses digits on
 * the way marks the sequence. */
void profile_write_lane_shift(ProfileWriter *w)
{
    emit_line(w->e, "const real factor = hmmc_lane_factor<real>(shift);");
    emit_line(w->e, "#pragma unroll");
    emit_open(w->e, "for (int jj = 0; jj < %s; jj++)", w->S_name);
    for (int r = 0; r < PROFILE_ROLES; r++)
        if (w->v->has_role[r])
            emit_line(w->e, "{ const real v = %s[%s + jj] * factor; "
                            "risky |= hmmc_moved_below_normal(%s[%s + jj], v); %s[%s + jj] = v; }",
                      profile_role_array[r], w->R_name, profile_role_array[r], w->R_name, profile_role_array[r],
                      w->R_name);
    emit_close(w->e, "");
    emit_line(w->e, "lane_exp += shift;");
}

/* Forward with lane scales: the left lanes' last nodes of the roles in
 * `roles` (bits) into the R slots in front of each run, in this lane's
 * scale (their lane's exponent less this one's, per lane to the left).
 * When one would exceed 2^room in it (an alignment entering a lane that
 * held only values far below it, or none), the lane first moves its own
 * values down to make room; the test is one comparison of the largest. */
void profile_write_left_slots_scaled(ProfileWriter *w, unsigned roles)
{
    int lanes_left = (w->R + w->S - 1) / w->S;
    emit_open(w->e, "%s", "/* the left lanes' last nodes, in this lane's scale */");
    emit_line(w->e, "int shifted = 0;");
    for (int d = 1; d <= lanes_left; d++)
        emit_line(w->e, "const int e%d = __shfl_up_sync(mask, lane_exp, %d, %s) - lane_exp; "
                        "real top%d = (real)0;", d, d, w->G_name, d);
    for (int q = 0; q < w->R; q++) {
        int d = (w->R - q + w->S - 1) / w->S; /* lanes to the left */
        int idx = q - w->R + d * w->S;        /* run slot in that lane */
        for (int r = 0; r < PROFILE_ROLES; r++)
            if (roles >> r & 1u) {
                const char *role = profile_role_array[r];
                emit_line(w->e, "real %s%d = __shfl_up_sync(mask, %s[%s + %d], %d, %s);", role, q, role, w->R_name,
                          idx, d, w->G_name);
                emit_line(w->e, "%s%d = lane >= %d ? %s%d : (real)0;", role, q, d, role, q);
                emit_line(w->e, "top%d = hmmc_vmax(top%d, %s%d);", d, d, role, q);
            }
    }
    emit_line(w->e, "int top = -0x7fffffff;");
    for (int d = 1; d <= lanes_left; d++)
        emit_line(w->e, "if (top%d < (real)INFINITY && ldexp(top%d, e%d - room) > (real)1) "
                        "top = hmmc_vmax(top, ilogb(top%d) + e%d);", d, d, d, d, d);
    emit_open(w->e, "if (top > -0x7fffffff)");
    emit_line(w->e, "const int shift = top - %d;", LANE_EXP);
    profile_write_lane_shift(w);
    emit_line(w->e, "shifted = shift;");
    emit_close(w->e, "");
    for (int q = 0; q < w->R; q++) {
        int d = (w->R - q + w->S - 1) / w->S;
        for (int r = 0; r < PROFILE_ROLES; r++)
            if (roles >> r & 1u)
                emit_line(w->e, "%s[%d] = ldexp(%s%d, e%d - shifted);", profile_role_array[r], q,
                          profile_role_array[r], q, d);
    }
    emit_close(w->e, "");
}

/* Forward with lane scales: the lane's values back near 2^LANE_EXP when
 * their sum `part` leaves [2^(LANE_EXP - LANE_BAND), 2^(LANE_EXP + LANE_BAND)]
 * (the largest is within 3S of the sum), `part` with them; a lane whose
 * values are all 0 is marked empty. */
void profile_write_lane_renormalise(ProfileWriter *w)
{
    emit_comment(w->e, "all the group's lanes move at once when one must (a warp waits for its "
                       "slowest lane): then they leave the band together later, not at each "
                       "position one by one");
    emit_line(w->e, "const bool part_positive_finite = part > (real)0 && part < (real)INFINITY;");
    emit_open(w->e, "if (__any_sync(mask, part_positive_finite && (part < (real)0x1p%d || "
                    "part > (real)0x1p%d)) && part_positive_finite)", LANE_EXP - LANE_BAND, LANE_EXP + LANE_BAND);
    emit_line(w->e, "const int shift = ilogb(part) - %d;", LANE_EXP);
    profile_write_lane_shift(w);
    emit_line(w->e, "part = ldexp(part, -shift);");
    emit_close(w->e, "");
    emit_line(w->e, "if (part == (real)0)");
    emit_line(w->e, "    lane_exp = %d; /* empty */", EMPTY_LANE_EXP);
}

/* A special's value that the entries of entry row e read (special sp,
 * name `name`; c_of_lane: the row's exponent c in this lane, a C
 * expression): with `room`, the lane first moves its values down when the
 * special's value would be above 2^room in its scale (an empty lane takes
 * its exponent); without, sp<sp>_e<e>, the value in the lane's scale times
 * 2^-c. */
void profile_write_special_in_lane(ProfileWriter *w, int e, int sp, const char *c_of_lane, const char *name,
                                   int room)
{
    if (room) {
        emit_open(w->e, "if (sp%d > (real)0 && ilogb(sp%d) + spx%d - %s - lane_exp > room) /* %s, entry %d */",
                  sp, sp, sp, c_of_lane, name, e);
        emit_line(w->e, "const int shift = spx%d - %s - lane_exp;", sp, c_of_lane);
        profile_write_lane_shift(w);
        emit_close(w->e, "");
    } else {
        emit_line(w->e, "const real sp%d_e%d = ldexp(sp%d, spx%d - %s - lane_exp); /* %s in this lane's "
                        "scale, times 2^-c */", sp, e, sp, sp, c_of_lane, name);
    }
}

/* Special t += the lanes' parts of exit row x (`part`, each in its lane's
 * scale and times 2^c where the row is held so), summed at the largest
 * one's exponent. */
void profile_write_exit_sum_in_lanes(ProfileWriter *w, int x, int t)
{
    emit_comment(w->e, "the lanes' parts, each in its lane's scale (and times 2^c), "
                       "summed at the largest one's exponent");
    emit_line(w->e, "const int part_exp = lane_exp - %s;",
              w->exit_scaled[x]
                  ? arena_printf(w->p->arena, "%s[%d * %s + lane]", profile_name(w, "exit_exp"), x, w->G_name)
                  : "0");
    emit_line(w->e, "const int top = hmmc_group_all(part > (real)0 && part < (real)INFINITY ? "
                    "ilogb(part) + part_exp : -0x3fffffff, hmmc_max(), mask, %s);", w->G_name);
    emit_line(w->e, "hmmc_scaled_add(sp%d, spx%d, hmmc_group_all(ldexp(part, part_exp - top), "
                    "hmmc_add(), mask, %s), top);", t, t, w->G_name);
}

/* The delete chain's scan across the lanes (each lane's step (A, T) in
 * its own scale): leaves `entering`, the value entering this lane's run, in
 * its scale, after the lane made room for it where it would not fit. */
void profile_write_chain_scan_in_lanes(ProfileWriter *w)
{
    emit_comment(w->e, "lanes keep their own scales: the scan in numbers with exponents; a "
                       "value entering far above this lane's makes room first");
    emit_line(w->e, "real entering_m;");
    emit_line(w->e, "int entering_e;");
    emit_line(w->e, "hmmc_group_chain_scan_scaled(A, lane_exp, T, 0, lane, mask, %s, entering_m, "
                    "entering_e);", w->G_name);
    emit_open(w->e, "if (entering_m > (real)0 && entering_m < (real)INFINITY && "
                    "ilogb(entering_m) + entering_e - lane_exp > room)");
    emit_line(w->e, "const int shift = ilogb(entering_m) + entering_e - lane_exp - %d;", LANE_EXP);
    profile_write_lane_shift(w);
    emit_close(w->e, "");
    emit_line(w->e, "real entering = ldexp(entering_m, entering_e - lane_exp);");
}
