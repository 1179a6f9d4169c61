// profile_data_regs.cu: the launch of the float kernel of profiles as data
// (profile_data_regs.h): finds the instance of (G, S, viterbi) among the
// tables of profile_data_regs_{small,forward,viterbi,viterbi_long}.cu, and its
// block size (the occupancy rules, as hmmc_launch picks a lanes kernel's).
#include "profile_data_regs.cuh"

extern const hmmrt_pd_regs_instance hmmrt_pd_regs_small[], hmmrt_pd_regs_forward[],
    hmmrt_pd_regs_viterbi[], hmmrt_pd_regs_viterbi_long[];

static const hmmrt_pd_regs_instance *const tables[] = {hmmrt_pd_regs_small, hmmrt_pd_regs_forward,
                                                        hmmrt_pd_regs_viterbi,
                                                        hmmrt_pd_regs_viterbi_long};
enum { N_TABLES = sizeof tables / sizeof tables[0], MOST_INSTANCES = 64 };
static int block_of[N_TABLES][MOST_INSTANCES]; /* chosen once per instance */

static const hmmrt_pd_regs_instance *find(int G, int S, int viterbi, int **block)
{
    for (int t = 0; t < N_TABLES; t++)
        for (int i = 0; tables[t][i].kernel && i < MOST_INSTANCES; i++)
            if (tables[t][i].G == G && tables[t][i].S == S && tables[t][i].viterbi == viterbi) {
                *block = &block_of[t][i];
                return &tables[t][i];
            }
    return NULL;
}

extern "C" const void *hmmrt_pd_regs_address(int G, int S, int viterbi)
{
    int *block;
    const hmmrt_pd_regs_instance *k = find(G, S, viterbi, &block);
    return k ? k->kernel : NULL;
}

extern "C" int hmmrt_pd_regs_launch(const hmmrt_pd_regs_args *a, int G, int S, int viterbi, void *stream)
{
    int *block;
    const hmmrt_pd_regs_instance *k = find(G, S, viterbi, &block);
    if (!k)
        return -1;
    int threads = __atomic_load_n(block, __ATOMIC_RELAXED);
    if (!threads) { /* the same for every device of a kind; several may work it out at once */
        threads = hmmrt_gpu_block_size(k->kernel, 32, 0, NULL) / 32 * 32;
        if (threads < 32)
            threads = 32;
        __atomic_store_n(block, threads, __ATOMIC_RELAXED);
    }
    if (a->n == 0)
        return 0;
    const int per_block = threads / G;
    const dim3 grid((unsigned)((a->n + per_block - 1) / per_block));
    void *params[] = {(void *)a};
    cudaError_t e = cudaLaunchKernel(k->kernel, grid, dim3((unsigned)threads), params, 0,
                                     (cudaStream_t)stream);
    return e != cudaSuccess ? (int)e : (int)cudaGetLastError();
}
