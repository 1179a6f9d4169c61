/* profile_data_lanes.c: the GPU's generic profile scorer (runtime/gpu/
 * profile_data_kernel.cu: a group of PD_LANES lanes a sequence) emulated on the
 * CPU, each lane's values in an array and every shuffle, scan and reduction
 * in the order the kernel makes it, over profile_data_lanes.h's arithmetic:
 * what the unit tests compare with hmmrt_profile_forward and _viterbi. */
#include "profile_data_lanes.h"

#include <string.h>

/* Every lane takes x[l] (+) x[l ^ d], d = 16, 8, 4, 2, 1 (__shfl_xor_sync). */
static void butterfly(int viterbi, double x[PD_LANES])
{
    for (int d = PD_LANES / 2; d >= 1; d /= 2) {
        double y[PD_LANES];
        for (int l = 0; l < PD_LANES; l++)
            y[l] = pd_combine(viterbi, x[l], x[l ^ d]);
        memcpy(x, y, sizeof y);
    }
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}

double hmmrt_profile_lanes_score(const hmmrt_profile *p, int viterbi, const double *lw,
                                 const uint8_t *x, int64_t L, double *rows)
{
    pd_view v = {.M = p->M, .stride = p->stride, .n_cols = p->n_cols, .viterbi = viterbi,
                 .t = p->data, .col = p->col};
    pd_specials(&v, p->special, p->special_lw, lw);
    const int S = p->stride, M = p->M, tiles = (M + PD_LANES - 1) / PD_LANES;
    double *mp = rows, *ip = rows + S, *dp = rows + 2 * S;
    double *mc = rows + 3 * S, *ic = rows + 4 * S, *dc = rows + 5 * S;
    memset(rows, 0, sizeof(double) * 6 * (size_t)S);
    int64_t scale = -960;
    double sp[4];
    pd_start(&v, sp);
    for (int64_t i = 0; i < L; i++) {
        const int c = v.col[x[i]];
        double top[PD_LANES] = {0}, e[PD_LANES] = {0};
        /* match and insert cells: lane l, nodes l + 1, l + 1 + PD_LANES, ... */
        for (int t = 0; t < tiles; t++)
            for (int l = 0; l < PD_LANES; l++) {
                int k = t * PD_LANES + l + 1;
                if (k > M)
                    continue;
                pd_match_insert(&v, k, c, sp[1], mp, ip, dp, &mc[k], &ic[k]);
                top[l] = max2(top[l], max2(mc[k], ic[k]));
            }
        /* the delete chain: a scan of each tile's maps, from the tile before */
        double carry = 0.0;
        for (int t = 0; t < tiles; t++) {
            double a[PD_LANES], f[PD_LANES];
            for (int l = 0; l < PD_LANES; l++)
                pd_delete_map(&v, t * PD_LANES + l + 1, mc, &a[l], &f[l]);
            for (int d = 1; d < PD_LANES; d *= 2) {
                double a2[PD_LANES], f2[PD_LANES];
                memcpy(a2, a, sizeof a);
                memcpy(f2, f, sizeof f);
                for (int l = d; l < PD_LANES; l++)
                    pd_compose(viterbi, a[l - d], f[l - d], &a2[l], &f2[l]);
                memcpy(a, a2, sizeof a);
                memcpy(f, f2, sizeof f);
            }
            double d_of[PD_LANES];
            for (int l = 0; l < PD_LANES; l++) {
                int k = t * PD_LANES + l + 1;
                d_of[l] = pd_combine(viterbi, a[l], f[l] * carry);
                if (k <= M) {
                    dc[k] = d_of[l];
                    top[l] = max2(top[l], dc[k]);
                }
            }
            carry = d_of[PD_LANES - 1];
        }
        for (int t = 0; t < tiles; t++)
            for (int l = 0; l < PD_LANES; l++) {
                int k = t * PD_LANES + l + 1;
                if (k <= M)
                    e[l] = pd_combine(viterbi, e[l], pd_end_term(&v, k, mc, dc));
            }
        butterfly(viterbi, e);
        butterfly(1, top);
        pd_special_row(&v, c, e[0], sp);
        double row_top = top[0];
        for (int s = 0; s < 4; s++)
            row_top = max2(row_top, sp[s]);
        double *swap;
        swap = mp, mp = mc, mc = swap;
        swap = ip, ip = ic, ic = swap;
        swap = dp, dp = dc, dc = swap;
        const double factor = pd_rescale_factor(row_top, &scale);
        if (factor != 1.0) {
            for (int k = 1; k <= M; k++) {
                mp[k] *= factor;
                ip[k] *= factor;
                dp[k] *= factor;
            }
            for (int s = 0; s < 4; s++)
                sp[s] *= factor;
        }
    }
    return pd_final(&v, sp, scale);
}
