/* backend_c_density.h: what the C backend writes for models over real
 * observations (alphabet real[D]): each model's gaussians (mean, Cholesky
 * factor, normalising constant) once, and per call the densities its
 * emission tables stand for, which libhmmrt evaluates at each position. */
#ifndef HMMC_BACKEND_C_DENSITY_H
#define HMMC_BACKEND_C_DENSITY_H

#include "codegen/emit.h"
#include "ir/ir.h"

/* r<model_index>_g<emission>: every gaussian of model model_index, once for
 * all the calls of main on it. */
void c_write_model_gaussians(Emitter *e, const Program *p, int model_index);
/* <prefix>_densities: the densities of call `call`'s emission tables, in
 * the order of dp_emission_tables (the row a position reads). */
void c_write_call_densities(Emitter *e, const Program *p, const IrCall *call, const char *prefix);
/* r<model_index>_densities: every emission of the model, in its order, for
 * the sampler (hmmrt_model.densities). */
void c_write_model_densities(Emitter *e, const Program *p, int model_index);

#endif
