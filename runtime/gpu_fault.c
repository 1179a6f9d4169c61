/* gpu_fault.c: reads HMMRT_GPU_FAULT, the fault-injection switch of the GPU
 * driver (runtime/gpu/) that tests/gpu/faults uses: "oom:B" makes the first
 * buffer allocation of batch B fail as a full device fails it, "error:B"
 * makes the first kernel launch of batch B fail. Host-only, so that it is
 * unit-tested where there is no GPU. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int hmmrt_parse_gpu_fault(const char *text, hmmrt_gpu_fault *f)
{
    *f = (hmmrt_gpu_fault){HMMRT_FAULT_NONE, 0};
    if (!text || !*text)
        return 0;
    hmmrt_fault_kind kind;
    const char *number;
    if (strncmp(text, "oom:", 4) == 0) {
        kind = HMMRT_FAULT_OOM;
        number = text + 4;
    } else if (strncmp(text, "error:", 6) == 0) {
        kind = HMMRT_FAULT_ERROR;
        number = text + 6;
    } else {
        return -1;
    }
    char *end;
    errno = 0;
    long long batch = strtoll(number, &end, 10);
    if (end == number || *end || errno || batch < 1 || *number == '+' || *number == ' ')
        return -1;
    *f = (hmmrt_gpu_fault){kind, batch};
    return 0;
}
