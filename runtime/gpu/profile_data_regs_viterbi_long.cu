// profile_data_regs_viterbi_long.cu: viterbi, 20 nodes a lane and more
// (profile_data_regs.cuh's kernel; profile_data_regs.cu picks one by G and S).
#include "profile_data_regs.cuh"

extern const hmmrt_pd_regs_instance hmmrt_pd_regs_viterbi_long[];
const hmmrt_pd_regs_instance hmmrt_pd_regs_viterbi_long[] = {
    HMMRT_PD_REGS(32, 20, true)
    HMMRT_PD_REGS(32, 24, true)
    HMMRT_PD_REGS(32, 28, true)
    HMMRT_PD_REGS(32, 32, true)
    HMMRT_PD_REGS(32, 40, true)
    HMMRT_PD_REGS(32, 48, true)
    HMMRT_PD_REGS(32, 56, true)
    HMMRT_PD_REGS(32, 64, true)
    HMMRT_PD_REGS(32, 72, true)
    HMMRT_PD_REGS(32, 80, true)
    {0, 0, 0, 0}};
