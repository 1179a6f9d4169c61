/* posterior_stub.c: TEMPORARY (branch posterior-front only): a stand-in for
 * the lead's runtime/posterior.c so that programs with a posterior call link
 * while the compiler side is tested. Fills '-' and NaN. Delete before merging. */
#include "internal.h"

#include <math.h>

int hmmrt_posterior(const hmmrt_posterior_call *call, const uint8_t *x, int64_t L,
                    hmmrt_value *values, hmmrt_scratch *scratch)
{
    (void)x, (void)L, (void)scratch;
    if (call->score_column >= 0)
        values[call->score_column].score = NAN;
    int text[] = {call->decode_column, call->segments_column, call->table_column};
    for (int i = 0; i < 3; i++)
        if (text[i] >= 0)
            hmmrt_buf_puts(&values[text[i]].text, "-");
    return 0;
}
