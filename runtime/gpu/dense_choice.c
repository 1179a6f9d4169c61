/* dense_choice.c: which product a dense model's forward and backward take in
 * float: TF32 (chunks of states) unless the matrix's own rounding to TF32 is
 * systematic enough to matter, then TF32X2; what HMMRT_DENSE_PRODUCT forces
 * otherwise. The analysis is in docs/program.md. */
#include "dense_choice.h"

#include "dense_tf32.h"
#include "hmmrt_gpu.h"

#include <math.h>
#include <stdio.h>

double hmmrt_dense_tf32_bias(const hmmrt_dense *d)
{
    const int n = d->n;
    const int rows = n < HMMRT_DENSE_SAMPLE_ROWS ? n : HMMRT_DENSE_SAMPLE_ROWS;
    double mean = 0;
    int counted = 0;
    for (int i = 0; i < rows; i++) {
        const int k = (int)(((long long)i * n) / rows);
        double sum = 0, change = 0;
        for (int j = 0; j < n; j++) {
            const float w = (float)exp(d->matrix[(size_t)k * n + j]); /* as the GPU's float */
            sum += w;
            change += (double)hmmrt_tf32_round(w) - (double)w;
        }
        if (sum > 0) {
            mean += change / sum;
            counted++;
        }
    }
    return counted ? fabs(mean / counted) : 0;
}

int hmmrt_dense_choose(const hmmrt_dense *d, char *why, size_t len)
{
    const char *said = NULL;
    const int mode = hmmrt_dense_product_mode_for(d->n, &said);
    const int chunks = hmmrt_dense_product_chunks(d->n);
    if (mode != HMMRT_DENSE_TF32 || hmmrt_dense_product_forced()) {
        snprintf(why, len, "%s%s", hmmrt_dense_product_forced() ? "HMMRT_DENSE_PRODUCT"
                                   : said                       ? said
                                                                : "",
                 mode == HMMRT_DENSE_TF32X2 || mode == HMMRT_DENSE_TF32
                     ? (chunks > 1 ? "; in chunks of states" : "")
                     : "");
        return mode;
    }
    const double bias = hmmrt_dense_tf32_bias(d);
    if (bias > HMMRT_DENSE_TF32_BIAS_MOST) {
        snprintf(why, len, "the matrix split in two TF32 parts: its rounding to TF32 changes "
                           "a row's sum by %.2g on average, the same every position (over %.0e)%s",
                 bias, HMMRT_DENSE_TF32_BIAS_MOST,
                 chunks > 1 ? "; in chunks of states" : "");
        return HMMRT_DENSE_TF32X2;
    }
    snprintf(why, len, "the matrix's rounding to TF32 changes a row's sum by %.2g on average "
                       "(at most %.0e)%s",
             bias, HMMRT_DENSE_TF32_BIAS_MOST,
             chunks > 1 ? "; in chunks of states: the tensor cores' sums drop "
                          "bits as they grow"
                        : "");
    return HMMRT_DENSE_TF32;
}
