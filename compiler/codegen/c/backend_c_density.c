/* backend_c_density.c: the C backend's tables of gaussians and densities
 * (backend_c_density.h). A gaussian written once and used by several states
 * or mixtures is one set of numbers in the program. */
#include "codegen/c/backend_c_density.h"

#include "codegen/emit_dp.h"

static void write_numbers(FILE *o, const char *name, const double *v, int n)
{
    char num[32];
    fprintf(o, "static const double %s[] = {", name);
    for (int i = 0; i < n; i++)
        fprintf(o, "%s%s", i ? ", " : "", emit_double(num, v[i]));
    fprintf(o, "};\n");
}

/* The density of emission `index` of model model_index: its parts (and
 * weights) as <prefix>_parts<t> (<prefix>_log_weights<t>), and the
 * initializer of its hmmrt_density into `init`. */
static const char *write_density(FILE *o, const Program *p, int model_index, int index,
                                 const char *prefix, int t)
{
    const IrEmission *em = &p->models[model_index].emissions[index];
    fprintf(o, "static const hmmrt_gaussian *const %s_parts%d[] = {", prefix, t);
    if (em->kind == EMISSION_GAUSSIAN) {
        fprintf(o, "&r%d_g%d};\n", model_index, index);
        return arena_printf(p->arena, "{.n_parts = 1, .parts = %s_parts%d, .log_weights = NULL}",
                            prefix, t);
    }
    for (int k = 0; k < em->n_parts; k++)
        fprintf(o, "%s&r%d_g%d", k ? ", " : "", model_index, em->parts[k]);
    fprintf(o, "%s};\n", em->n_parts ? "" : "NULL");
    write_numbers(o, arena_printf(p->arena, "%s_log_weights%d", prefix, t), em->log_weights,
                  em->n_parts);
    return arena_printf(p->arena, "{.n_parts = %d, .parts = %s_parts%d, .log_weights = "
                        "%s_log_weights%d}", em->n_parts, prefix, t, prefix, t);
}

void c_write_model_gaussians(Emitter *e, const Program *p, int model_index)
{
    const IrModel *m = &p->models[model_index];
    FILE *o = e->out;
    int D = m->real_dim;
    char num[32];
    emit_blank(e);
    emit_comment(e, "the gaussians of model %s (observations of %d real%s): mean, then the "
                    "Cholesky factor L of the covariance (row-major, lower triangular) or the "
                    "standard deviations, and ln of the normalising constant, "
                    "-D/2 ln(2 pi) - sum ln L_ii", m->name, D, D == 1 ? "" : "s");
    for (int g = 0; g < m->n_emissions; g++) {
        const IrEmission *em = &m->emissions[g];
        if (em->kind != EMISSION_GAUSSIAN)
            continue;
        const char *base = arena_printf(p->arena, "r%d_g%d", model_index, g);
        write_numbers(o, arena_printf(p->arena, "%s_mean", base), em->mean, D);
        write_numbers(o, arena_printf(p->arena, "%s_factor", base), em->factor,
                      em->diagonal ? D : D * D);
        fprintf(o, "static const hmmrt_gaussian %s = {.diagonal = %d, .mean = %s_mean, "
                   ".factor = %s_factor, .log_norm = %s}; /* %s */\n", base, em->diagonal,
                base, base, emit_double(num, em->log_norm), em->name);
    }
}

void c_write_call_densities(Emitter *e, const Program *p, const IrCall *call, const char *prefix)
{
    const IrModel *m = call->model;
    FILE *o = e->out;
    int *table_of, *emission_of;
    int n = dp_emission_tables(p->arena, m, &table_of, &emission_of);
    const char **init = ARENA_ARRAY(p->arena, const char *, n ? n : 1);
    for (int t = 0; t < n; t++)
        init[t] = write_density(o, p, call->model_index, emission_of[t], prefix, t);
    fprintf(o, "/* %s_density[t]: emission table t; the tables:", prefix);
    for (int t = 0; t < n; t++)
        fprintf(o, " %d %s%s", t, m->emissions[emission_of[t]].name, t + 1 < n ? "," : "");
    fprintf(o, " */\nstatic const hmmrt_density %s_density[] = {\n", prefix);
    for (int t = 0; t < n; t++)
        fprintf(o, "    %s,\n", init[t]);
    if (!n)
        fprintf(o, "    {.n_parts = 0},\n");
    fprintf(o, "};\nstatic const hmmrt_densities %s_densities = {.D = %d, .n = %d, .d = "
               "%s_density};\n", prefix, m->real_dim, n, prefix);
}

void c_write_model_densities(Emitter *e, const Program *p, int model_index)
{
    const IrModel *m = &p->models[model_index];
    FILE *o = e->out;
    const char *prefix = arena_printf(p->arena, "r%d", model_index);
    emit_comment(e, "every emission of model %s, in its order (used by --sample)", m->name);
    const char **init = ARENA_ARRAY(p->arena, const char *, m->n_emissions ? m->n_emissions : 1);
    for (int t = 0; t < m->n_emissions; t++)
        init[t] = write_density(o, p, model_index, t, prefix, t);
    fprintf(o, "static const hmmrt_density %s_density[] = {\n", prefix);
    for (int t = 0; t < m->n_emissions; t++)
        fprintf(o, "    %s, /* %s */\n", init[t], m->emissions[t].name);
    if (!m->n_emissions)
        fprintf(o, "    {.n_parts = 0},\n");
    fprintf(o, "};\nstatic const hmmrt_densities %s_densities = {.D = %d, .n = %d, .d = "
               "%s_density};\n", prefix, m->real_dim, m->n_emissions, prefix);
}
