/* layout.c: the program's layout (layout.h): what both backends read of the
 * program as a whole, worked out once. */
#include "codegen/layout.h"

#include <string.h>

/* The reason a CUDA program scores on the CPU, or NULL. */
static const char *cpu_only_reason(const Program *p)
{
    for (int c = 0; c < p->n_calls; c++)
        if (p->calls[c].model->real_dim)
            return arena_printf(p->arena, "%s observes real vectors (alphabet real[%d]), scored "
                                "on the CPU for now", p->calls[c].label,
                                p->calls[c].model->real_dim);
    for (int c = 0; c < p->n_calls; c++)
        if (p->calls[c].storage == STORE_WHOLE_TABLE)
            return "it prints whole tables (&), which are computed on the CPU";
        else if (p->calls[c].plan.long_double_only)
            return arena_printf(p->arena, "%s has weights or emission values outside double's "
                                "range, summed in long double on the CPU", p->calls[c].label);
    return NULL;
}

const Layout *layout_build(const Program *p)
{
    Arena *a = p->arena;
    int n_models = p->n_models ? p->n_models : 1;
    Layout *l = ARENA_ARRAY(a, Layout, 1);
    l->arena = a;
    /* one alphabet per distinct symbol string among the models of main */
    l->alphabets = ARENA_ARRAY(a, const char *, n_models);
    l->model_alphabet = ARENA_ARRAY(a, int, n_models);
    l->used_models = ARENA_ARRAY(a, int, n_models);
    for (int i = 0; i < p->n_models; i++)
        l->model_alphabet[i] = -1;
    for (int c = 0; c < p->n_calls; c++) {
        int mi = p->calls[c].model_index;
        if (l->model_alphabet[mi] >= 0)
            continue;
        l->used_models[l->n_used++] = mi;
        for (int k = 0; k < l->n_alphabets && l->model_alphabet[mi] < 0; k++)
            if (strcmp(l->alphabets[k], p->models[mi].symbols) == 0)
                l->model_alphabet[mi] = k;
        if (l->model_alphabet[mi] < 0) {
            l->alphabets[l->n_alphabets] = p->models[mi].symbols;
            l->model_alphabet[mi] = l->n_alphabets++;
        }
    }
    l->calls = ARENA_ARRAY(a, LayoutCall, p->n_calls ? p->n_calls : 1);
    for (int c = 0; c < p->n_calls; c++) {
        LayoutCall *lc = &l->calls[c];
        lc->prefix = arena_printf(a, "c%d", c);
        lc->alphabet = l->model_alphabet[p->calls[c].model_index];
        lc->columns = ARENA_ARRAY(a, int, p->n_prints ? p->n_prints : 1);
        for (int i = 0; i < p->n_prints; i++)
            if (p->prints[i].call == c)
                lc->columns[lc->n_columns++] = i;
    }
    l->n_columns = p->n_prints;
    l->columns = ARENA_ARRAY(a, LayoutColumn, p->n_prints ? p->n_prints : 1);
    for (int i = 0; i < p->n_prints; i++) {
        const IrPrint *pr = &p->prints[i];
        const IrCall *call = &p->calls[pr->call];
        /* viterbi works in logs: its -inf is always an impossible sequence */
        if (pr->attr == ATTR_SCORE && call->alg != ALG_VITERBI) {
            Arena scratch; /* graphs of the model: freed at once (thousands of profiles) */
            arena_init(&scratch);
            int from = ir_every_sequence_from(&scratch, call->model);
            arena_free(&scratch);
            l->columns[i].possible_from = from < 0 ? 0 : from > 0 ? from : 1;
        }
    }
    l->cpu_only = cpu_only_reason(p);
    return l;
}

const char *layout_name(const Layout *l, int call, const char *what)
{
    return arena_printf(l->arena, "%s_%s", l->calls[call].prefix, what);
}

void layout_dump_call(const Layout *l, int call, FILE *out)
{
    const LayoutCall *lc = &l->calls[call];
    fprintf(out, "  layout names %s_* alphabet %d columns", lc->prefix, lc->alphabet);
    for (int k = 0; k < lc->n_columns; k++)
        fprintf(out, " %d", lc->columns[k]);
    fprintf(out, "\n");
}

void layout_dump(const Layout *l, FILE *out)
{
    fprintf(out, "layout alphabets");
    for (int a = 0; a < l->n_alphabets; a++)
        fprintf(out, " \"%s\"", l->alphabets[a]);
    fprintf(out, "\nlayout models");
    for (int i = 0; i < l->n_used; i++)
        fprintf(out, " %d", l->used_models[i]);
    fprintf(out, "\nlayout possible-from");
    for (int i = 0; i < l->n_columns; i++)
        fprintf(out, " %d", l->columns[i].possible_from);
    fprintf(out, "\nlayout cpu-only %s\n", l->cpu_only ? l->cpu_only : "-");
}
