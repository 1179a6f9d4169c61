// profile_data_regs_forward.cu: forward, 14 nodes a lane and more (ptxas -O3)
// (profile_data_regs.cuh's kernel; profile_data_regs.cu picks one by G and S).
#include "profile_data_regs.cuh"

extern const hmmrt_pd_regs_instance hmmrt_pd_regs_forward[];
const hmmrt_pd_regs_instance hmmrt_pd_regs_forward[] = {
    HMMRT_PD_REGS(32, 14, false)
    HMMRT_PD_REGS(32, 15, false)
    HMMRT_PD_REGS(32, 16, false)
    HMMRT_PD_REGS(32, 17, false)
    HMMRT_PD_REGS(32, 18, false)
    HMMRT_PD_REGS(32, 20, false)
    HMMRT_PD_REGS(32, 24, false)
    HMMRT_PD_REGS(32, 28, false)
    HMMRT_PD_REGS(32, 32, false)
    HMMRT_PD_REGS(32, 40, false)
    HMMRT_PD_REGS(32, 48, false)
    HMMRT_PD_REGS(32, 56, false)
    HMMRT_PD_REGS(32, 64, false)
    HMMRT_PD_REGS(32, 72, false)
    HMMRT_PD_REGS(32, 80, false)
    {0, 0, 0, 0}};
