/* profile_models.c: the profiles' tables of a generated program (HMMC_PROGRAM:
 * the .c of a --target=c --profile-data=on build) for profile_data_regs.cpp,
 * which scores them with the float kernel on the CPU: hmmc_test_profiles
 * lists HMMC_PROFILES (&hmmc_profile_m0, ...), NULL last. */
#include "hmmrt.h"
#include "hmmrt_profile.h"

#define main hmmc_program_main
#define hmmrt_main hmmc_no_main
int hmmc_no_main(int argc, char **argv, const hmmrt_program *prog);
#include HMMC_PROGRAM
#undef hmmrt_main

int hmmc_no_main(int argc, char **argv, const hmmrt_program *prog)
{
    (void)argc, (void)argv, (void)prog;
    return 0;
}

const hmmrt_profile *const hmmc_test_profiles[] = {HMMC_PROFILES, NULL};
