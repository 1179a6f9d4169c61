/* cuda_common.c: what every CUDA kernel shape writes the same way: a call's
 * tables in device memory, the guard of weights outside float's range, and
 * the launcher (c<index>_launch, c<index>_describe). */
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
    char shared[32];
    snprintf(shared, sizeof shared, "(size_t)%d", shape->shared_values);
    emit_line(e, "#ifndef HMMC_HOST_EMULATION /* tests/emulate launches the kernels itself */");
    emit_open(e, "extern \"C\" int c%d_launch(const hmmrt_gpu_batch *b)", c);
    emit_line(e, "static int block[2];");
    emit_line(e, "const int d = b->use_double;");
    if (shape->shared_values)
        emit_line(e, "const size_t shared = %s * (d ? sizeof(double) : sizeof(float));", shared);
    else
        emit_line(e, "const size_t shared = 0;");
    emit_line(e, "const void *kernel = d ? (const void *)c%d_kernel<double> : (const void *)c%d_kernel<float>;",
              c, c);
    emit_open(e, "if (!block[d])");
    if (shape->shared_values) {
        emit_line(e, "if (shared > 48 * 1024 && cudaFuncSetAttribute(kernel, "
                     "cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared) != cudaSuccess)");
        emit_line(e, "    return (int)cudaGetLastError();");
    }
    if (shape->block_per_sequence)
        emit_line(e, "block[d] = hmmc_block_threads(hmmrt_gpu_block_size(kernel, %d, shared, NULL), %d);",
                  shape->states, shape->states);
    else if (shape->lanes_per_sequence)
        emit_line(e, "block[d] = hmmrt_gpu_block_size(kernel, %d, shared, NULL) / 32 * 32;",
                  shape->states);
    else
        emit_line(e, "block[d] = hmmrt_gpu_block_size(kernel, %d, shared, NULL);", shape->states);
    emit_close(e, "");
    emit_line(e, "if (b->n == 0)");
    emit_line(e, "    return 0;");
    if (shape->block_per_sequence)
        emit_line(e, "const unsigned grid = (unsigned)b->n; /* a block a sequence */");
    else if (shape->lanes_per_sequence)
        emit_line(e, "const unsigned grid = (unsigned)((b->n + block[d] / %d - 1) / (block[d] / %d)); "
                     "/* %d lanes a sequence */", shape->lanes_per_sequence, shape->lanes_per_sequence,
                  shape->lanes_per_sequence);
    else
        emit_line(e, "const unsigned grid = (unsigned)((b->n + block[d] - 1) / block[d]);");
    emit_line(e, "cudaStream_t stream = (cudaStream_t)b->stream;");
    emit_line(e, "if (d)");
    emit_line(e, "    c%d_kernel<double><<<grid, block[d], shared, stream>>>(*b);", c);
    emit_line(e, "else");
    emit_line(e, "    c%d_kernel<float><<<grid, block[d], shared, stream>>>(*b);", c);
    emit_line(e, "return (int)cudaGetLastError();");
    emit_close(e, "");
    emit_blank(e);
    emit_open(e, "extern \"C\" void c%d_describe(int device, int use_double, char *buf, size_t len)", c);
    emit_line(e, "const void *kernel = use_double ? (const void *)c%d_kernel<double> : "
                 "(const void *)c%d_kernel<float>;", c, c);
    emit_line(e, "(void)device;");
    if (shape->shared_values)
        emit_line(e, "hmmrt_gpu_describe_kernel(kernel, %s, %d, %s * (use_double ? sizeof(double) : "
                     "sizeof(float)), buf, len);", emit_string(shape->name), shape->states, shared);
    else
        emit_line(e, "hmmrt_gpu_describe_kernel(kernel, %s, %d, 0, buf, len);",
                  emit_string(shape->name), shape->states);
    emit_close(e, "");
    emit_line(e, "#endif");
}

void cuda_write_call_launcher(Emitter *e, const Program *p, const GpuPlan *plan, int index)
{
    LaunchShape shape;
    cuda_launch_shape(p, plan, index, &shape);
    cuda_write_launcher(e, index, &shape);
}
