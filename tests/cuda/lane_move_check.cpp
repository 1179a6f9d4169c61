// lane_move_check.cpp: holds the two helpers with which a lane-scaled
// forward kernel moves a lane's values by 2^-shift (runtime/hmmrt_kernel.cuh,
// compiled for the CPU through tests/emulate/emulator.h) to what they
// promise: hmmc_lane_factor is 2^-shift exactly wherever the type holds that
// power, and 0 beyond; a value times the factor is marked by
// hmmc_moved_below_normal exactly where it lost digits (it differs from
// ldexp by -shift, or is 0 or below the normal range where the value was
// not 0). Built and run by tests/cuda/run (no GPU needed). Prints "ok N
// cases" or the first failures; status 1 on one.
#include "emulator.h"

#include "hmmrt_kernel.cuh"

static long cases, bad;

static void fail(const char *what, double x, int shift, double got, double want)
{
    if (++bad <= 10)
        std::printf("FAIL %s: x %a, shift %d: %a, not %a\n", what, x, shift, got, want);
}

/* The factor of every shift from far below the type's range to far above
 * it, and a spread of values moved by it. */
template <typename real>
static void check_type(int least, int most)
{
    const real values[] = {(real)0, (real)1, (real)0x1.8p88, (real)0x1.fffffep112, (real)0x1p-100,
                           (real)3.14159, (real)0x1p104, (real)0x1.234p72};
    const int far = 536870912; /* an empty lane's exponent */
    for (int shift = least - 40; shift <= most + 40; shift++) {
        const real factor = hmmc_lane_factor<real>(shift);
        const real power = ldexp((real)1, -shift);
        const bool held = shift >= least && shift <= most;
        cases++;
        if (held ? factor != power : factor != (real)0)
            fail("factor", 1, shift, factor, held ? power : 0);
        for (real x : values) {
            const real moved = x * factor, exact = ldexp(x, -shift);
            const bool marked = hmmc_moved_below_normal(x, moved);
            cases++;
            /* marked exactly where the value lost digits: moved
             * otherwise than ldexp, or to 0 or below the normal range */
            const bool lost = x > (real)0 && (moved != exact || exact == (real)0 || hmmc_below_normal(exact));
            if (marked != lost)
                fail(marked ? "marked without loss" : "loss not marked", x, shift, moved, exact);
        }
    }
    for (int shift : {far, -far}) {
        cases++;
        if (hmmc_lane_factor<real>(shift) != (real)0)
            fail("factor of an empty lane's move", 1, shift, hmmc_lane_factor<real>(shift), 0);
    }
}

int main()
{
    check_type<float>(-127, 149);
    check_type<double>(-1023, 1074);
    if (bad) {
        std::printf("FAIL lane moves: %ld of %ld cases\n", bad, cases);
        return 1;
    }
    std::printf("ok   lane moves: %ld cases\n", cases);
    return 0;
}
