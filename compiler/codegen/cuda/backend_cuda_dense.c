/* backend_cuda_dense.c: the CUDA side of the dense shape. The kernels are
 * libhmmrt's templates (runtime/hmmrt_dense.cuh), the same for every dense
 * model; a call's launcher hands them the model's matrix, which the .c file
 * holds (hmmc_cN_dense), and its algorithm. */
#include "codegen/cuda/cuda_shapes.h"

#include "analysis/dense.h"

void cuda_write_dense_call(Emitter *e, const Program *p, const Layout *l, int index)
{
    const IrCall *call = &p->calls[index];
    const char *alg = call->alg == ALG_FORWARD    ? "HMMC_DENSE_FORWARD"
                      : call->alg == ALG_BACKWARD ? "HMMC_DENSE_BACKWARD"
                                                  : "HMMC_DENSE_VITERBI";
    const char *dense = layout_name(l, index, "dense"), *device = layout_name(l, index, "device");
    emit_blank(e);
    emit_comment(e, "==== call %d: %s; %d live states, %d moves; dense: a tiled matrix product "
                    "per position over the batch (hmmrt_dense.cuh) ====", index, call->label,
                 call->plan.n_live, call->model->n_moves);
    emit_line(e, "extern \"C\" hmmrt_dense hmmc_%s; /* the matrix, in the .c file */", dense);
    emit_line(e, "static hmmc_dense_device %s[HMMC_DENSE_DEVICES]; /* a GPU's, uploaded on its first "
                 "use there */", device);
    emit_blank(e);
    emit_open(e, "extern \"C\" int %s(const hmmrt_gpu_batch *b)", layout_name(l, index, "launch"));
    emit_line(e, "if (b->use_double)");
    emit_line(e, "    return hmmc_dense_run<double>(&hmmc_%s, %s, %s, b, %d);", dense, alg, device,
              call->plan.bp_bytes);
    emit_line(e, "return hmmc_dense_run<float>(&hmmc_%s, %s, %s, b, %d);", dense, alg, device,
              call->plan.bp_bytes);
    emit_close(e, "");
    emit_blank(e);
    emit_open(e, "extern \"C\" void %s(int /* device */, int use_double, char *buf, size_t len)",
              layout_name(l, index, "describe"));
    emit_line(e, "hmmc_dense_describe(&hmmc_%s, use_double, buf, len);", dense);
    emit_close(e, "");
}
