/* profile_data_dp.h: the row recursion of profile_data.c, included twice:
 * VITERBI 0 (forward: sums) and 1 (viterbi: maxima), as PROFILE_FN. Values
 * are probabilities times 2^-scale; rows[6 * stride]: M, I, D of the
 * previous and current residue. */
static double PROFILE_FN(const hmmrt_profile *p, const double *lw, const uint8_t *x, int64_t L,
                         double *rows)
{
    const int M = p->M, S = p->stride;
    const double *t = p->data;
    const double *entry = t + HMMRT_PT_ENTRY * S, *mm = t + HMMRT_PT_MM * S,
                 *im = t + HMMRT_PT_IM * S, *dm = t + HMMRT_PT_DM * S, *mi = t + HMMRT_PT_MI * S,
                 *ii = t + HMMRT_PT_II * S, *md = t + HMMRT_PT_MD * S, *dd = t + HMMRT_PT_DD * S,
                 *me = t + HMMRT_PT_ME * S, *de = t + HMMRT_PT_DE * S;
    const double *match = t + HMMRT_PT_N * S, *insert = match + (size_t)p->n_cols * S;
    const double *loop_n = insert + (size_t)p->n_cols * S, *loop_j = loop_n + p->n_cols,
                 *loop_c = loop_j + p->n_cols;
    double w[HMMRT_PX_N];
    specials(p, lw, w);
    double *mp = rows, *ip = rows + S, *dp = rows + 2 * S;
    double *mc = rows + 3 * S, *ic = rows + 4 * S, *dc = rows + 5 * S;
    memset(rows, 0, sizeof(double) * 6 * (size_t)S);
    int64_t scale = -960;
    /* N, B, J, C (E is made and used within a row) */
    double sp[4] = {0x1p960 * w[HMMRT_PX_SN], 0.0, 0.0, 0.0};
    sp[1] = sp[0] * w[HMMRT_PX_NB];
    for (int64_t i = 0; i < L; i++) {
        const int c = p->col[x[i]];
        const double *em = match + (size_t)c * S, *ei = insert + (size_t)c * S;
        const double b = sp[1];
        double top = 0.0, e = 0.0;
        /* match and insert states, from the previous row: no dependence
         * between nodes, so the loops vectorise */
#pragma omp simd reduction(max : top)
        for (int k = 1; k <= M; k++) {
            double v = PROFILE_COMBINE(PROFILE_COMBINE(b * entry[k], mp[k - 1] * mm[k]),
                                       PROFILE_COMBINE(ip[k - 1] * im[k], dp[k - 1] * dm[k]));
            mc[k] = em[k] * v;
            top = mc[k] > top ? mc[k] : top;
        }
#pragma omp simd reduction(max : top)
        for (int k = 1; k <= M; k++) {
            ic[k] = ei[k] * PROFILE_COMBINE(mp[k] * mi[k], ip[k] * ii[k]);
            top = ic[k] > top ? ic[k] : top;
        }
        /* the delete chain: each node from the one before, in this row */
        for (int k = 1; k <= M; k++) {
            dc[k] = PROFILE_COMBINE(mc[k - 1] * md[k], dc[k - 1] * dd[k]);
            top = dc[k] > top ? dc[k] : top;
        }
#if VITERBI
        for (int k = 1; k <= M; k++)
            e = PROFILE_COMBINE(e, PROFILE_COMBINE(mc[k] * me[k], dc[k] * de[k]));
#else
#pragma omp simd reduction(+ : e)
        for (int k = 1; k <= M; k++)
            e += mc[k] * me[k] + dc[k] * de[k];
#endif
        const double r = p->n_cols ? 1.0 : 0.0;
        (void)r;
        sp[0] = sp[0] * w[HMMRT_PX_NN] * loop_n[c];
        sp[2] = PROFILE_COMBINE(sp[2] * w[HMMRT_PX_JJ] * loop_j[c], e * w[HMMRT_PX_EJ]);
        sp[3] = PROFILE_COMBINE(sp[3] * w[HMMRT_PX_CC] * loop_c[c], e * w[HMMRT_PX_EC]);
        sp[1] = PROFILE_COMBINE(sp[0] * w[HMMRT_PX_NB], sp[2] * w[HMMRT_PX_JB]);
        for (int s = 0; s < 4; s++)
            top = sp[s] > top ? sp[s] : top;
        double *swap;
        swap = mp, mp = mc, mc = swap;
        swap = ip, ip = ic, ic = swap;
        swap = dp, dp = dc, dc = swap;
        rescale(top, rows, 6 * (size_t)S, sp, 4, &scale);
    }
    return log(sp[3] * w[HMMRT_PX_CT]) + (double)scale * LN2;
}
