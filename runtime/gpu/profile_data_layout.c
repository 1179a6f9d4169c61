/* profile_data_layout.c: lays a profile's tables (hmmrt_profile.data, by node)
 * out lane-major for the float kernel of profiles as data (profile_data_regs.h),
 * as the specialised kernels' tables are laid out: consecutive lanes read
 * consecutive addresses. */
#include "profile_data_regs.h"

#include <math.h>

/* x as the kernel holds it: the value in float (forward), or its log. Sets
 * *bad when a forward weight is not 0 and below float's normal range. */
static float held(double x, int viterbi, int *bad)
{
    if (viterbi)
        return x > 0.0 ? (float)log(x) : -INFINITY;
    if (x != 0.0 && !(x >= 0x1p-126 && x <= 0x1.fffffep127))
        *bad = 1;
    return (float)x;
}

int hmmrt_pd_regs_tables(const hmmrt_profile *p, int viterbi, int G, int S, float *w, float *em,
                         float *loops)
{
    const int stride = p->stride, C = p->n_cols;
    const double *t = p->data, *emissions = t + (size_t)HMMRT_PT_N * stride;
    int bad = 0;
    for (int lane = 0; lane < G; lane++)
        for (int jj = 0; jj < S; jj++) {
            const int k = lane * S + jj + 1; /* the node of this slot; beyond M: padding */
            for (int tab = 0; tab < HMMRT_PT_N; tab++)
                w[((size_t)tab * S + jj) * G + lane] =
                    held(k <= p->M ? t[(size_t)tab * stride + k] : 0.0, viterbi, &bad);
            for (int c = 0; c < C; c++)
                for (int r = 0; r < 2; r++)
                    em[(((size_t)c * 2 + r) * S + jj) * G + lane] = held(
                        k <= p->M ? emissions[((size_t)r * C + c) * stride + k] : 0.0, viterbi, &bad);
        }
    const double *loop = emissions + 2 * (size_t)C * stride;
    for (int i = 0; i < 3 * C; i++) {
        const double x = viterbi ? (loop[i] > 0.0 ? log(loop[i]) : -INFINITY) : loop[i];
        loops[i] = (float)x;
        bad |= (double)loops[i] != x;
    }
    return bad;
}
