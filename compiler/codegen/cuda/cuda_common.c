/* cuda_common.c: what every CUDA kernel shape writes the same way: a call's
 * tables in device memory, the guard of weights outside float's range, the
 * sequence's length-dependent weights, and its launch shape and entry points
 * (c<index>_launch, c<index>_describe), which hand the kernels to the
 * runtime's hmmc_launch (hmmrt_kernel.cuh). */

/* Length-dependent weights are computed by the kernel itself from the
 * sequence's length (b.lengths[j], already on the device), not by the host
 * into a table of the packed batch: the expression is a few double
 * operations a sequence against L times the states of DP work, the
 * kernels of models without such weights do not change at all, the batch
 * and libhmmrt_gpu stay as they are, and the .cu reads as the C path does
 * (the same expression, evaluated in double the same way). */
#include "codegen/cuda/cuda_common.h"

#include <math.h>
#include <stdio.h>

#include "codegen/emit_dp.h"

void cuda_write_int_table(Emitter *e, const char *name, const int *v, int n)
{
    fprintf(e->out, "__device__ const int %s[%d] = {", name, n ? n : 1);
    for (int i = 0; i < n; i++)
        fprintf(e->out, "%s%d", i ? ", " : "", v[i]);
    fprintf(e->out, "%s};\n", n ? "" : "0");
}

void cuda_write_real_table(Emitter *e, const char *name, const double *v, int n)
{
    char num[32];
    for (int d = 0; d < 2; d++) {
        fprintf(e->out, "__device__ const %s %s_%s[%d] = {", d ? "double" : "float", name,
                d ? "d" : "f", n ? n : 1);
        for (int i = 0; i < n; i++)
            fprintf(e->out, "%s%s%s", i ? ", " : "", emit_double(num, v[i]),
                    d || isinf(v[i]) ? "" : "f");
        fprintf(e->out, "%s};\n", n ? "" : "0");
    }
    fprintf(e->out, "template <typename real> __device__ __forceinline__ const real *%s();\n", name);
    for (int d = 0; d < 2; d++)
        fprintf(e->out, "template <> __device__ __forceinline__ const %s *%s<%s>() { "
                        "return %s_%s; }\n", d ? "double" : "float", name,
                d ? "double" : "float", name, d ? "d" : "f");
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

void cuda_write_length_weights(Emitter *e, Arena *a, const IrModel *m, int logs, const char *who)
{
    if (!m->n_length_weights)
        return;
    if (logs)
        emit_comment(e, "the weights that depend on the sequence's length L, once per sequence: "
                        "their logs in double, as the C path computes them, then in the kernel's "
                        "precision");
    else
        emit_comment(e, "the weights that depend on the sequence's length L, once per sequence, in "
                        "double as the C path computes them, and kept in double: the products "
                        "with them are formed in double (a loop's weight rounded to float would "
                        "err the same way at each position); one outside the kernel's precision "
                        "marks the sequence");
    for (int k = 0; k < m->n_length_weights; k++) {
        const IrLengthWeight *lw = &m->length_weights[k];
        const char *name = dp_length_weight_name(a, k + 1);
        if (logs)
            emit_line(e, "const real %s = (real)log(%s); /* ln (%s), line %d */", name, lw->c_text,
                      lexpr_source(a, lw->expr), lw->loc.first_line);
        else
            emit_line(e, "const double %s = %s; /* (%s), line %d */", name, lw->c_text,
                      lexpr_source(a, lw->expr), lw->loc.first_line);
    }
    if (logs)
        return;
    fprintf(e->out, "%*sif (!(", 4 * e->indent, "");
    for (int k = 0; k < m->n_length_weights; k++)
        fprintf(e->out, "%s%*shmmc_length_weight_fits<real>(%s)", k ? " &&\n" : "",
                k ? 4 * e->indent + 6 : 0, "", dp_length_weight_name(a, k + 1));
    fprintf(e->out, ")) {\n");
    e->indent++;
    emit_line(e, "if (%s)", who);
    emit_line(e, "    ((real *)b.scores)[j] = (real)NAN; /* scored again: float in double, double "
                 "on the CPU */");
    emit_line(e, "return;");
    emit_close(e, "");
}

void cuda_write_launcher(Emitter *e, const Layout *l, int index, const LaunchShape *shape)
{
    const char *shape_name = layout_name(l, index, "shape"), *kernel = layout_name(l, index, "kernel");
    const char *kind = shape->block_per_sequence ? "HMMC_LAUNCH_BLOCK"
                       : shape->lanes_per_sequence ? "HMMC_LAUNCH_LANES" : "HMMC_LAUNCH_THREAD";
    emit_line(e, "static const hmmc_launch_shape %s = {%s, %s, %d /* states */, %d /* lanes */, "
                 "%d /* shared values */};", shape_name, emit_string(shape->name), kind, shape->states,
              shape->lanes_per_sequence, shape->shared_values);
    emit_blank(e);
    emit_open(e, "extern \"C\" int %s(const hmmrt_gpu_batch *b)", layout_name(l, index, "launch"));
    emit_line(e, "static int block[2]; /* chosen once per precision */");
    emit_line(e, "return hmmc_launch(%s, %s<float>, %s<double>, block, b);", shape_name, kernel, kernel);
    emit_close(e, "");
    emit_blank(e);
    emit_open(e, "extern \"C\" void %s(int /* device */, int use_double, char *buf, size_t len)",
              layout_name(l, index, "describe"));
    emit_line(e, "hmmc_describe(%s, %s<float>, %s<double>, use_double, buf, len);", shape_name, kernel,
              kernel);
    emit_close(e, "");
}

void cuda_write_call_launcher(Emitter *e, const Program *p, const Layout *l, const GpuPlan *plan, int index)
{
    LaunchShape shape;
    cuda_launch_shape(p, plan, index, &shape);
    cuda_write_launcher(e, l, index, &shape);
}
