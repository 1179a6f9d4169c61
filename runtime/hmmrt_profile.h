/* hmmrt_profile.h: profiles as data: one generic scorer (runtime/profile_data.c)
 * for every profile HMM of the Plan7 layout that hmmc --import-hmmer writes,
 * whose numbers the generated program holds as tables (docs/hmmer.md, "Files
 * of many models"), instead of code specialised to each model. */
#ifndef HMMRT_PROFILE_H
#define HMMRT_PROFILE_H

#include "hmmrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The moves outside the nodes, each a constant factor times, where lw >= 0,
 * the sequence's length-dependent weight lw (0 for a move the model lacks). */
enum {
    HMMRT_PX_SN, HMMRT_PX_NN, HMMRT_PX_NB, HMMRT_PX_EC, HMMRT_PX_EJ, HMMRT_PX_JJ,
    HMMRT_PX_JB, HMMRT_PX_CC, HMMRT_PX_CT, HMMRT_PX_N
};

/* The node tables, each of `stride` doubles (index k = 1..M; 0 and k > M
 * hold 0), named by the move INTO the state at index k except where said:
 * entry B->Mk, mm M(k-1)->Mk, im I(k-1)->Mk, dm D(k-1)->Mk, mi Mk->Ik, ii
 * Ik->Ik, md M(k-1)->Dk, dd D(k-1)->Dk, me Mk->E, de Dk->E. */
enum {
    HMMRT_PT_ENTRY, HMMRT_PT_MM, HMMRT_PT_IM, HMMRT_PT_DM, HMMRT_PT_MI, HMMRT_PT_II,
    HMMRT_PT_MD, HMMRT_PT_DD, HMMRT_PT_ME, HMMRT_PT_DE, HMMRT_PT_N
};

/* One profile. data holds, one after another: the HMMRT_PT_N node tables;
 * n_cols match emission tables (Mk's value of a symbol of column c at
 * [c * stride + k]); n_cols insert ones likewise; then the N, J and C loops'
 * emissions (n_cols each). Symbol code x (of the program's alphabet) reads
 * column col[x]. Weights are as written in the model (odds or probabilities). */
typedef struct hmmrt_profile {
    const char *label; /* "forward(fn3)" */
    int M, stride, n_cols;
    const unsigned char *col;
    double special[HMMRT_PX_N];
    int special_lw[HMMRT_PX_N]; /* -1, or the index of its length-dependent weight */
    const double *data;
} hmmrt_profile;

/* ln of the forward (sum over paths) and viterbi (best path) scores of x
 * (L symbol codes) under p, with lw the model's length-dependent weights
 * for this L; -inf when no path. Each returns 0, or 1 when memory ran out. */
int hmmrt_profile_forward(const hmmrt_profile *p, const double *lw, const uint8_t *x, int64_t L,
                          hmmrt_scratch *scratch, double *score);
int hmmrt_profile_viterbi(const hmmrt_profile *p, const double *lw, const uint8_t *x, int64_t L,
                          hmmrt_scratch *scratch, double *score);

#ifdef __cplusplus
}
#endif
#endif
