// profile_data_regs_small.cu: forward, at most 13 nodes a lane: built with ptxas
// -O1 (the Makefile), as hmmc builds such specialised kernels (profile_tuning.h)
// (profile_data_regs.cuh's kernel; profile_data_regs.cu picks one by G and S).
#include "profile_data_regs.cuh"

extern const hmmrt_pd_regs_instance hmmrt_pd_regs_small[];
const hmmrt_pd_regs_instance hmmrt_pd_regs_small[] = {
    HMMRT_PD_REGS(8, 1, false)
    HMMRT_PD_REGS(8, 2, false)
    HMMRT_PD_REGS(8, 3, false)
    HMMRT_PD_REGS(8, 4, false)
    HMMRT_PD_REGS(8, 5, false)
    HMMRT_PD_REGS(8, 6, false)
    HMMRT_PD_REGS(8, 7, false)
    HMMRT_PD_REGS(8, 8, false)
    HMMRT_PD_REGS(8, 9, false)
    HMMRT_PD_REGS(8, 10, false)
    HMMRT_PD_REGS(16, 6, false)
    HMMRT_PD_REGS(16, 7, false)
    HMMRT_PD_REGS(16, 8, false)
    HMMRT_PD_REGS(16, 9, false)
    HMMRT_PD_REGS(16, 10, false)
    HMMRT_PD_REGS(32, 6, false)
    HMMRT_PD_REGS(32, 7, false)
    HMMRT_PD_REGS(32, 8, false)
    HMMRT_PD_REGS(32, 9, false)
    HMMRT_PD_REGS(32, 10, false)
    HMMRT_PD_REGS(32, 11, false)
    HMMRT_PD_REGS(32, 12, false)
    HMMRT_PD_REGS(32, 13, false)
    {0, 0, 0, 0}};
