/* backend_cuda_dense.c: the CUDA side of the dense shape. The kernels are
 * libhmmrt's templates (runtime/hmmrt_dense.cuh), the same for every dense
 * model; a call's launcher hands them the model's matrix, which the .c file
 * holds (hmmc_cN_dense), and its algorithm. */
#include "codegen/cuda/cuda_shapes.h"

#include "analysis/dense.h"

void cuda_write_dense_call(Emitter *e, const Program *p, int index)
{
    const IrCall *call = &p->calls[index];
    const char *alg = call->alg == ALG_FORWARD    ? "HMMC_DENSE_FORWARD"
                      : call->alg == ALG_BACKWARD ? "HMMC_DENSE_BACKWARD"
                                                  : "HMMC_DENSE_VITERBI";
    emit_blank(e);
    emit_comment(e, "==== call %d: %s; %d live states, %d moves; dense: a tiled matrix product "
                    "per position over the batch (hmmrt_dense.cuh) ====", index, call->label,
                 call->plan.n_live, call->model->n_moves);
    emit_line(e, "extern \"C\" hmmrt_dense hmmc_c%d_dense; /* the matrix, in the .c file */", index);
    emit_line(e, "static hmmc_dense_device c%d_device; /* uploaded on first use */", index);
    emit_blank(e);
    emit_open(e, "extern \"C\" int c%d_launch(const hmmrt_gpu_batch *b)", index);
    emit_line(e, "if (b->use_double)");
    emit_line(e, "    return hmmc_dense_run<double>(&hmmc_c%d_dense, %s, &c%d_device, b, %d);", index,
              alg, index, call->plan.bp_bytes);
    emit_line(e, "return hmmc_dense_run<float>(&hmmc_c%d_dense, %s, &c%d_device, b, %d);", index,
              alg, index, call->plan.bp_bytes);
    emit_close(e, "");
    emit_blank(e);
    emit_open(e, "extern \"C\" void c%d_describe(int /* device */, int use_double, char *buf, size_t len)",
              index);
    emit_line(e, "hmmc_dense_describe(&hmmc_c%d_dense, use_double, buf, len);", index);
    emit_close(e, "");
}
