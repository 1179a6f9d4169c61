/* cuda_common.c: what every CUDA kernel shape writes the same way: a call's
 * tables in device memory, the guard of weights outside float's range, and
 * its launch shape and entry points (c<index>_launch, c<index>_describe),
 * which hand the kernels to the runtime's hmmc_launch (hmmrt_kernel.cuh). */
#include "codegen/cuda/cuda_common.h"

#include <math.h>
#include <stdio.h>

void cuda_write_int_table(Emitter *e, int index, const char *name, const int *v, int n)
{
    fprintf(e->out, "__device__ const int c%d_%s[%d] = {", index, name, n ? n : 1);
    for (int i = 0; i < n; i++)
        fprintf(e->out, "%s%d", i ? ", " : "", v[i]);
    fprintf(e->out, "%s};\n", n ? "" : "0");
}

void cuda_write_real_table(Emitter *e, int index, const char *name, const double *v, int n)
{
    char num[32];
    for (int d = 0; d < 2; d++) {
        fprintf(e->out, "__device__ const %s c%d_%s_%s[%d] = {", d ? "double" : "float",
                index, name, d ? "d" : "f", n ? n : 1);
        for (int i = 0; i < n; i++)
            fprintf(e->out, "%s%s%s", i ? ", " : "", emit_double(num, v[i]),
                    d || isinf(v[i]) ? "" : "f");
        fprintf(e->out, "%s};\n", n ? "" : "0");
    }
    fprintf(e->out, "template <typename real> __device__ __forceinline__ const real *c%d_%s();\n",
            index, name);
    for (int d = 0; d < 2; d++)
        fprintf(e->out, "template <> __device__ __forceinline__ const %s *c%d_%s<%s>() { "
                        "return c%d_%s_%s; }\n", d ? "double" : "float", index, name,
                d ? "double" : "float", index, name, d ? "d" : "f");
}

void cuda_write_float_guard(Emitter *e, const GpuPlan *plan, const char *who)
{
    double least = plan->float_underflow, most = plan->float_overflow;
    if (least == 0 && most == 0)
        return;
    emit_open(e, "if (sizeof(real) == sizeof(float))");
    if (least != 0)
        emit_comment(e, "weights down to e^%.0f are below float's range (2^-126) and would be "
                        "lost: every sequence is scored in double", least);
    else
        emit_comment(e, "weights up to e^%.0f are above float's range (2^128), inf as floats: "
                        "every sequence is scored in double", most);
    emit_line(e, "if (%s)", who);
    emit_line(e, "    ((real *)b.scores)[j] = (real)NAN;");
    emit_line(e, "return;");
    emit_close(e, "");
}

void cuda_write_launcher(Emitter *e, int index, const LaunchShape *shape)
{
    int c = index;
    const char *kind = shape->block_per_sequence ? "HMMC_LAUNCH_BLOCK"
                       : shape->lanes_per_sequence ? "HMMC_LAUNCH_LANES" : "HMMC_LAUNCH_THREAD";
    emit_line(e, "static const hmmc_launch_shape c%d_shape = {%s, %s, %d /* states */, %d /* lanes */, "
                 "%d /* shared values */};", c, emit_string(shape->name), kind, shape->states,
              shape->lanes_per_sequence, shape->shared_values);
    emit_blank(e);
    emit_open(e, "extern \"C\" int c%d_launch(const hmmrt_gpu_batch *b)", c);
    emit_line(e, "static int block[2]; /* chosen once per precision */");
    emit_line(e, "return hmmc_launch(c%d_shape, c%d_kernel<float>, c%d_kernel<double>, block, b);", c, c, c);
    emit_close(e, "");
    emit_blank(e);
    emit_open(e, "extern \"C\" void c%d_describe(int /* device */, int use_double, char *buf, size_t len)", c);
    emit_line(e, "hmmc_describe(c%d_shape, c%d_kernel<float>, c%d_kernel<double>, use_double, buf, len);",
              c, c, c);
    emit_close(e, "");
}

void cuda_write_call_launcher(Emitter *e, const Program *p, const GpuPlan *plan, int index)
{
    LaunchShape shape;
    cuda_launch_shape(p, plan, index, &shape);
    cuda_write_launcher(e, index, &shape);
}
