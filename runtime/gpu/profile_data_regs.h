/* profile_data_regs.h: the float kernel of profiles as data on the GPU
 * (docs/hmmer.md, "Profiles as data on the GPU"): the specialised profile
 * kernel's shape (G lanes a sequence, S nodes a lane in registers, tables
 * read lane-major) with the weights as arguments; its shapes, its tables'
 * layout (profile_data_layout.c) and its launch (profile_data_regs.cu). */
#ifndef HMMRT_PROFILE_DATA_REGS_H
#define HMMRT_PROFILE_DATA_REGS_H

#include <stddef.h>
#include <stdint.h>

#include "hmmrt_profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Nodes a lane before a sequence takes more lanes (8, 16, 32), as the
 * specialised kernels choose (compiler/codegen/cuda/profile_tuning.h's
 * PROFILE_LANE_NODES_*: the same measures); the most nodes a lane of 32 may
 * hold (M up to 32 x 80 = 2,560; longer profiles take the double kernel). */
enum { HMMRT_PD_NODES_VITERBI = 18, HMMRT_PD_NODES_FORWARD = 10, HMMRT_PD_NODES_MOST = 80 };

/* The lanes G and nodes a lane S of a profile of M nodes (S rounded up to
 * one the library holds a kernel for: every S up to 18, then multiples of 4
 * up to 32 and of 8 up to 80); 0 when M is beyond them. */
static inline int hmmrt_pd_regs_shape(int M, int viterbi, int *G, int *S)
{
    int g = 8, most = viterbi ? HMMRT_PD_NODES_VITERBI : HMMRT_PD_NODES_FORWARD;
    while (g < 32 && (M + g - 1) / g > most)
        g *= 2;
    int s = (M + g - 1) / g;
    if (s < 1)
        s = 1;
    if (s > 18)
        s = s <= 32 ? (s + 3) / 4 * 4 : (s + 7) / 8 * 8;
    if (s > HMMRT_PD_NODES_MOST)
        return 0;
    *G = g;
    *S = s;
    return 1;
}

/* The node tables as the lanes read them: table t (HMMRT_PT_*), run slot jj,
 * lane at [(t * S + jj) * G + lane] (lane l holds nodes l S + 1 .. l S + S;
 * slots beyond M hold 0); the emissions of column c, role r (0 match, 1
 * insert) at [((c * 2 + r) * S + jj) * G + lane]. Forward holds the weights,
 * viterbi their natural logs (-inf for none). */
static inline size_t hmmrt_pd_regs_weights(int G, int S) { return (size_t)HMMRT_PT_N * S * G; }
static inline size_t hmmrt_pd_regs_emissions(const hmmrt_profile *p, int G, int S)
{
    return (size_t)p->n_cols * 2 * S * G;
}

/* Fills w (hmmrt_pd_regs_weights floats) and em (hmmrt_pd_regs_emissions)
 * and loops (3 * n_cols floats: the N, J and C loops' emissions, logs for
 * viterbi). Returns 0, or 1 when the profile is left to the double kernel:
 * a forward weight not 0 and below float's normal range (2^-126), or a loop
 * emission (or its log) that float does not hold exactly (a loop's rounding
 * would err the same way at every residue; an import's loops emit odds 1). */
int hmmrt_pd_regs_tables(const hmmrt_profile *p, int viterbi, int G, int S, float *w, float *em,
                         float *loops);

/* One launch of the float kernel on a batch of one model. */
typedef struct hmmrt_pd_regs_args {
    const float *w, *em;       /* device: the tables above */
    const float *loops;        /* device */
    const unsigned char *col;  /* device: symbol code -> column */
    int n_cols;
    double special[HMMRT_PX_N];
    int special_lw[HMMRT_PX_N];
    int n_lw;
    const double *lw;          /* device: n_lw a sequence, or NULL */
    const uint8_t *codes;
    const int64_t *offsets, *lengths;
    int64_t n;
    float *scores;             /* NaN: scored again in double; -inf too */
} hmmrt_pd_regs_args;

/* Launches the kernel of (G, S, viterbi) on the stream; a cudaError_t, or
 * -1 when the library holds no such kernel. */
int hmmrt_pd_regs_launch(const hmmrt_pd_regs_args *a, int G, int S, int viterbi, void *stream);

/* The kernel of (G, S, viterbi) (for --timing's line), or NULL. */
const void *hmmrt_pd_regs_address(int G, int S, int viterbi);

#ifdef __cplusplus
}
#endif
#endif
