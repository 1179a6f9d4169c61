/* scan_chunk_body.h: the chunk runs of scan_chunk.h, written once for a type
 * HMMRT_SCAN_REAL (float or double) and named by HMMRT_SCAN_NAME; included
 * only by scan_chunk.h, once per type. nb is a constant where the device
 * calls these (runtime/gpu/scan_kernel.cu: a template per size), so the columns stay in
 * registers. */

/* Sum-product: v (nb values, times 2^*e) through the chunk's positions.
 * HMMRT_SCAN_LIVE, DEAD (v all 0) or RISKY. */
HMMRT_SCAN_HD int HMMRT_SCAN_NAME(hmmrt_scan_run_sum)(int nb, const HMMRT_SCAN_REAL *m,
                                                     const int *me, const uint8_t *x,
                                                     int64_t len, int backward,
                                                     HMMRT_SCAN_REAL *v, int *e)
{
    typedef HMMRT_SCAN_REAL real;
    int risky = 0;
    for (int64_t k = 0; k < len; k++) {
        const int c = x[backward ? len - 1 - k : k];
        const real *row = m + (size_t)c * nb * nb;
        real w[HMMRT_SCAN_NB_MAX];
        real sum = 0;
        HMMRT_SCAN_UNROLL
        for (int s = 0; s < nb; s++) {
            real acc = 0;
            HMMRT_SCAN_UNROLL
            for (int j = 0; j < nb; j++)
                acc += row[s * nb + j] * v[j];
            w[s] = acc;
            sum += acc;
        }
        *e += me[c];
        if (!(sum > 0)) {
            HMMRT_SCAN_UNROLL
            for (int s = 0; s < nb; s++)
                v[s] = 0;
            return HMMRT_SCAN_DEAD;
        }
        const real floor = sum * HMMRT_SCAN_FLOOR;
        HMMRT_SCAN_UNROLL
        for (int s = 0; s < nb; s++) {
            risky |= w[s] > 0 && w[s] < floor;
            v[s] = w[s];
        }
        if (sum < (real)1 / HMMRT_SCAN_BAND || sum > HMMRT_SCAN_BAND) {
            int ex;
            frexp(sum, &ex); /* sum = f 2^ex, f in [0.5, 1): the column back to [0.5, 1) */
            const real factor = ldexp((real)1, -ex);
            HMMRT_SCAN_UNROLL
            for (int s = 0; s < nb; s++)
                v[s] *= factor;
            *e += ex;
        }
    }
    return risky ? HMMRT_SCAN_RISKY : HMMRT_SCAN_LIVE;
}

/* Max-plus: v (nb ln values less *offset; -inf: no path) through the
 * chunk's positions; each position's best is taken out into *offset (double),
 * so that the values stay near 0 where the type has its digits. */
HMMRT_SCAN_HD void HMMRT_SCAN_NAME(hmmrt_scan_run_max)(int nb, const HMMRT_SCAN_REAL *m,
                                                      const double *mo, const uint8_t *x,
                                                      int64_t len, int backward,
                                                      HMMRT_SCAN_REAL *v, double *offset)
{
    typedef HMMRT_SCAN_REAL real;
    for (int64_t k = 0; k < len; k++) {
        const int c = x[backward ? len - 1 - k : k];
        const real *row = m + (size_t)c * nb * nb;
        real w[HMMRT_SCAN_NB_MAX];
        real top = -INFINITY;
        HMMRT_SCAN_UNROLL
        for (int s = 0; s < nb; s++) {
            real best = -INFINITY;
            HMMRT_SCAN_UNROLL
            for (int j = 0; j < nb; j++) {
                const real t = row[s * nb + j] + v[j];
                best = t > best ? t : best;
            }
            w[s] = best;
            top = best > top ? best : top;
        }
        if (top == -INFINITY) { /* no path goes through */
            HMMRT_SCAN_UNROLL
            for (int s = 0; s < nb; s++)
                v[s] = -INFINITY;
            return;
        }
        HMMRT_SCAN_UNROLL
        for (int s = 0; s < nb; s++)
            v[s] = w[s] - top;
        *offset += (double)top + mo[c];
    }
}

/* One thread of the scan's kernel (runtime/gpu/scan_kernel.cu) or of its
 * emulation (scan_matrices.c): thread t runs chunk t / nb (positions
 * [k * chunk, min((k + 1) * chunk, len)) of codes) from boundary state
 * t % nb alone and writes its transfer column into a launch's results
 * (hmmrt_scan_results: values, then scales, then statuses). */
HMMRT_SCAN_HD void HMMRT_SCAN_NAME(hmmrt_scan_thread)(int nb, const HMMRT_SCAN_REAL *m,
                                                     const int *me, const double *mo,
                                                     int max_plus, int backward,
                                                     const uint8_t *codes, int64_t len,
                                                     int64_t chunk, int64_t t,
                                                     HMMRT_SCAN_REAL *values, void *scales,
                                                     int *status)
{
    typedef HMMRT_SCAN_REAL real;
    const int64_t k = t / nb, i0 = k * chunk;
    const int j = (int)(t % nb);
    const int64_t n = i0 + chunk < len ? chunk : len - i0;
    real v[HMMRT_SCAN_NB_MAX];
    HMMRT_SCAN_UNROLL
    for (int s = 0; s < nb; s++)
        v[s] = max_plus ? (s == j ? (real)0 : (real)-INFINITY) : (real)(s == j);
    if (max_plus) {
        double offset = 0;
        HMMRT_SCAN_NAME(hmmrt_scan_run_max)(nb, m, mo, codes + i0, n, backward, v, &offset);
        ((double *)scales)[t] = offset;
        status[t] = HMMRT_SCAN_LIVE;
    } else {
        int e = 0;
        status[t] = HMMRT_SCAN_NAME(hmmrt_scan_run_sum)(nb, m, me, codes + i0, n, backward, v, &e);
        ((int64_t *)scales)[t] = e;
    }
    real *out = values + t * nb;
    HMMRT_SCAN_UNROLL
    for (int s = 0; s < nb; s++)
        out[s] = v[s];
}
