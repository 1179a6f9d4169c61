/* backend_c_profile.c: profiles as data (backend_c_profile.h): recognises
 * the profile layout that --import-hmmer writes in a model as written (by
 * its states' names and moves: S N B M1..Mm I.. D.. E J C T), turns such a
 * model into the tables of runtime/hmmrt_profile.h, writes them into the
 * program's data file, and writes the calls that read them. */
#include "codegen/c/backend_c_profile.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/backend_dense.h"
#include "codegen/layout.h"
#include "support/arena.h"

/* The order of runtime/hmmrt_profile.h's HMMRT_PX_* and HMMRT_PT_* (the
 * generated code checks the counts with _Static_assert). */
enum { PX_SN, PX_NN, PX_NB, PX_EC, PX_EJ, PX_JJ, PX_JB, PX_CC, PX_CT, PX_N };
enum { PT_ENTRY, PT_MM, PT_IM, PT_DM, PT_MI, PT_II, PT_MD, PT_DD, PT_ME, PT_DE, PT_N };
static const char *const PX_NAME[PX_N] = {"SN", "NN", "NB", "EC", "EJ", "JJ", "JB", "CC", "CT"};

static void write_sample_data(const Program *p, const Plans *plans, FILE *f);

/* A model's tables, as hmmrt_profile holds them. */
typedef struct Tables {
    int M, stride, n_cols, K;
    unsigned char col[256];
    double special[PX_N];
    int special_lw[PX_N];
    double *data; /* size() doubles */
} Tables;

static size_t tables_size(int stride, int n_cols)
{
    return (size_t)PT_N * stride + 2 * (size_t)n_cols * stride + 3 * (size_t)n_cols;
}

/* A state's role by its name: 'S' 'N' 'B' 'E' 'J' 'C' 'T', or 'M' 'I' 'D'
 * with its node k >= 1; 0 for another name. */
static char role_of(const char *name, int *k)
{
    *k = 0;
    if (name[0] && !name[1] && strchr("SNBEJCT", name[0]))
        return name[0];
    if (!strchr("MID", name[0]) || name[1] < '1' || name[1] > '9')
        return 0;
    long v = 0;
    for (const char *s = name + 1; *s; s++) {
        if (*s < '0' || *s > '9' || v > 1000000)
            return 0;
        v = v * 10 + (*s - '0');
    }
    *k = (int)v;
    return name[0];
}

/* The special move from role a to role b, or -1. */
static int special_of(char a, char b)
{
    static const char pairs[PX_N][3] = {"SN", "NN", "NB", "EC", "EJ", "JJ", "JB", "CC", "CT"};
    for (int i = 0; i < PX_N; i++)
        if (pairs[i][0] == a && pairs[i][1] == b)
            return i;
    return -1;
}

/* The node table of a move between node states (a at node i, b at node j,
 * or b 'E'), and the index it goes to; -1 for none. */
static int node_move(char a, int i, char b, int j, int *at)
{
    *at = j;
    if (b == 'E') {
        *at = i;
        return a == 'M' ? PT_ME : a == 'D' ? PT_DE : -1;
    }
    if (a == 'I' && b == 'I' && j == i)
        return PT_II;
    if (a == 'M' && b == 'I' && j == i)
        return PT_MI;
    if (j != i + 1)
        return -1;
    if (b == 'M')
        return a == 'M' ? PT_MM : a == 'I' ? PT_IM : PT_DM;
    if (b == 'D')
        return a == 'M' ? PT_MD : a == 'D' ? PT_DD : -1;
    return -1;
}

static uint64_t hash_column(const double *v, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)v;
    for (size_t i = 0; i < n * sizeof *v; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* The model's tables into t (t->data malloc'd), or NULL; else why it is
 * not a profile of that layout. */
static const char *recognise(Arena *a, const IrModel *m, Tables *t)
{
    memset(t, 0, sizeof *t);
    if (m->real_dim || m->K <= 0 || m->K > 256)
        return "not over an alphabet of symbols";
    int M = 0, n = m->n_states;
    char *role = arena_alloc(a, (size_t)n);
    int *node = arena_alloc(a, sizeof(int) * (size_t)n);
    int seen_special[128] = {0};
    for (int s = 0; s < n; s++) {
        const IrState *st = &m->states[s];
        role[s] = role_of(st->name, &node[s]);
        if (!role[s])
            return arena_printf(a, "state '%s' has no role in a profile", st->name);
        if (node[s] == 0 && seen_special[(int)role[s]]++)
            return "a special state twice";
        int emits = st->kind == STATE_EMITTING;
        if ((role[s] == 'M' || role[s] == 'I') != emits)
            return arena_printf(a, "state '%s' %s", st->name, emits ? "emits" : "does not emit");
        if ((role[s] == 'S') != (s == m->start) || (role[s] == 'T') != (s == m->end))
            return "S and T are not the start and end states";
        if (role[s] == 'M' && node[s] > M)
            M = node[s];
    }
    if (M < 1 || !seen_special['N'] || !seen_special['B'] || !seen_special['E'] ||
        !seen_special['C'])
        return "no match states, or no N, B, E or C";
    int n_match = 0;
    for (int s = 0; s < n; s++) {
        n_match += role[s] == 'M';
        if (node[s] > M)
            return arena_printf(a, "state '%s' lies beyond M%d", m->states[s].name, M);
    }
    if (n_match != M)
        return "the match states are not M1..Mm";
    int K = m->K, S = (M + 1 + 7) / 8 * 8;
    /* per symbol, then per node: what the columns are made of */
    double *match = calloc((size_t)K * S, sizeof(double));
    double *insert = calloc((size_t)K * S, sizeof(double));
    double loops[3][256] = {{0}};
    double *nodes = calloc((size_t)PT_N * S, sizeof(double));
    if (!match || !insert || !nodes)
        fatal_out_of_memory();
    const char *why = NULL;
    for (int s = 0; s < n && !why; s++)
        if (role[s] == 'M' || role[s] == 'I')
            for (int x = 0; x < K; x++)
                (role[s] == 'M' ? match : insert)[(size_t)x * S + node[s]] =
                    exp(m->emissions[m->states[s].emission].logp[x]);
    for (int s = 0; s < PX_N; s++)
        t->special_lw[s] = -1;
    for (int i = 0; i < m->n_moves && !why; i++) {
        const IrMove *mv = &m->moves[i];
        char ra = role[mv->from], rb = role[mv->to];
        int ka = node[mv->from], kb = node[mv->to], at;
#define what arena_printf(a, "the move %s -> %s", m->states[mv->from].name, \
                             m->states[mv->to].name)
        if (mv->lw_sum != mv->lw_max || mv->n_via) {
            why = arena_printf(a, "%s stands for folded paths", what);
        } else if (ra == 'B' && rb == 'M') {
            if (mv->emission != m->states[mv->to].emission || mv->length_weight)
                why = arena_printf(a, "%s emits or depends on L", what);
            nodes[(size_t)PT_ENTRY * S + kb] = exp(mv->lw_sum);
        } else if (ka && (kb || rb == 'E')) {
            int tab = node_move(ra, ka, rb, kb, &at);
            /* a move into an emitting state carries its emission */
            if (tab < 0 || mv->emission != m->states[mv->to].emission || mv->length_weight)
                why = arena_printf(a, "%s is not a move of a profile's nodes", what);
            else
                nodes[(size_t)tab * S + at] = exp(mv->lw_sum);
        } else {
            int sp = special_of(ra, rb);
            int loop = sp == PX_NN ? 0 : sp == PX_JJ ? 1 : sp == PX_CC ? 2 : -1;
            if (sp < 0 || (loop >= 0) != (mv->emission >= 0)) {
                why = arena_printf(a, "%s is not a move of a profile", what);
            } else {
                t->special[sp] = exp(mv->lw_sum);
                t->special_lw[sp] = mv->length_weight - 1;
                for (int x = 0; loop >= 0 && x < K; x++)
                    loops[loop][x] = exp(m->emissions[mv->emission].logp[x]);
            }
        }
    }
#undef what
    if (!why) {
        /* symbols with the same values everywhere share a column */
        size_t per = 2 * (size_t)(M + 1) + 3;
        double *vec = malloc(per * sizeof(double) * (size_t)K);
        uint64_t *h = malloc(sizeof(uint64_t) * (size_t)K);
        int *first = malloc(sizeof(int) * (size_t)K);
        if (!vec || !h || !first)
            fatal_out_of_memory();
        for (int x = 0; x < K; x++) {
            double *v = vec + (size_t)x * per;
            memcpy(v, match + (size_t)x * S, sizeof(double) * (size_t)(M + 1));
            memcpy(v + M + 1, insert + (size_t)x * S, sizeof(double) * (size_t)(M + 1));
            for (int l = 0; l < 3; l++)
                v[2 * (M + 1) + l] = loops[l][x];
            h[x] = hash_column(v, per);
            t->col[x] = (unsigned char)t->n_cols;
            for (int y = 0; y < x; y++)
                if (first[y] == y && h[y] == h[x] &&
                    memcmp(v, vec + (size_t)y * per, per * sizeof(double)) == 0) {
                    t->col[x] = t->col[y];
                    break;
                }
            first[x] = t->col[x] == t->n_cols ? x : -1;
            if (first[x] == x)
                t->n_cols++;
        }
        t->M = M;
        t->K = K;
        t->stride = S;
        t->data = calloc(tables_size(S, t->n_cols), sizeof(double));
        if (!t->data)
            fatal_out_of_memory();
        memcpy(t->data, nodes, sizeof(double) * PT_N * (size_t)S);
        double *mt = t->data + (size_t)PT_N * S, *it = mt + (size_t)t->n_cols * S,
               *lp = it + (size_t)t->n_cols * S;
        for (int x = 0; x < K; x++) {
            if (first[x] != x)
                continue;
            int c = t->col[x];
            memcpy(mt + (size_t)c * S, match + (size_t)x * S, sizeof(double) * (size_t)S);
            memcpy(it + (size_t)c * S, insert + (size_t)x * S, sizeof(double) * (size_t)S);
            for (int l = 0; l < 3; l++)
                lp[(size_t)l * t->n_cols + c] = loops[l][x];
        }
        free(vec);
        free(h);
        free(first);
    }
    free(match);
    free(insert);
    free(nodes);
    return why;
}

/* Bytes of the model as written for --sample: its moves as hmmrt_model_move
 * records (24 bytes), then its emission tables (doubles), then its states'
 * names, each NUL-terminated (the C holds no array of a thousand models'
 * names: the program points at these when it starts), each part from a
 * multiple of 64 bytes. */
static size_t sample_bytes(const IrModel *m, size_t *emissions_at, size_t *names_at)
{
    *emissions_at = ((size_t)m->n_moves * 24 + 63) / 64 * 64;
    *names_at = *emissions_at + ((size_t)m->n_emissions * (size_t)m->K * 8 + 63) / 64 * 64;
    size_t names = 0;
    for (int s = 0; s < m->n_states; s++)
        names += strlen(m->states[s].name) + 1;
    return *names_at + (names + 63) / 64 * 64;
}

/* Whether the call could take the generic scorer, its model aside. */
static const char *call_refusal(const IrCall *call)
{
    if (call->alg != ALG_FORWARD && call->alg != ALG_VITERBI)
        return "not forward or viterbi";
    if (call->attrs != ATTR_SCORE)
        return "it prints more than its score: the generic scorer keeps no tracebacks or tables";
    if (call->plan.dense)
        return "dense";
    return NULL;
}

void c_profile_plan(const Program *p, CPlan *plans, ProfileDataMode mode, int gpu,
                    FILE *verbose)
{
    if (mode == PROFILE_DATA_OFF || p->n_calls == 0)
        return;
    /* per model: -1 not asked, 0 not a profile, 1 a profile */
    int *is = arena_alloc(p->arena, sizeof(int) * (size_t)(p->n_models + 1));
    const char **why = arena_alloc(p->arena, sizeof(char *) * (size_t)(p->n_models + 1));
    int (*size)[2] = arena_alloc(p->arena, sizeof(int[2]) * (size_t)(p->n_models + 1));
    int profiles = 0;
    for (int i = 0; i < p->n_models; i++)
        is[i] = -1;
    for (int c = 0; c < p->n_calls; c++) {
        int mi = p->calls[c].model_index;
        if (call_refusal(&p->calls[c]) || is[mi] >= 0)
            continue;
        Tables t;
        why[mi] = recognise(p->arena, &p->models[mi], &t);
        is[mi] = !why[mi];
        profiles += is[mi];
        size[mi][0] = t.stride;
        size[mi][1] = t.n_cols;
        free(t.data);
    }
    int use = mode == PROFILE_DATA_ON || profiles >= 2;
    size_t *offset = arena_alloc(p->arena, sizeof(size_t) * (size_t)(p->n_models + 1));
    for (int i = 0; i < p->n_models; i++)
        offset[i] = SIZE_MAX;
    size_t at = 0;
    for (int c = 0; c < p->n_calls; c++) {
        const IrCall *call = &p->calls[c];
        int mi = call->model_index;
        const char *refused = call_refusal(call);
        plans[c].profile_data = use && !refused && is[mi] == 1;
        if (plans[c].profile_data && offset[mi] == SIZE_MAX) { /* where its tables go */
            offset[mi] = at;
            at += (tables_size(size[mi][0], size[mi][1]) + 7) / 8 * 8;
        }
        if (plans[c].profile_data) {
            plans[c].profile_offset = (long)offset[mi];
            plans[c].profile_size = (long)((tables_size(size[mi][0], size[mi][1]) + 7) / 8 * 8);
        }
    }
    /* the models as written (for --sample) after the tables, in the models' order */
    size_t *sample_at = arena_alloc(p->arena, sizeof(size_t) * (size_t)(p->n_models + 1));
    size_t bytes = at * sizeof(double), e, names;
    for (int i = 0; i < p->n_models; i++)
        if (offset[i] != SIZE_MAX) {
            sample_at[i] = bytes;
            bytes += sample_bytes(&p->models[i], &e, &names);
        }
    for (int c = 0; c < p->n_calls; c++) {
        const IrCall *call = &p->calls[c];
        int mi = call->model_index;
        const char *refused = call_refusal(call);
        if (plans[c].profile_data)
            plans[c].profile_sample_at = (long)sample_at[mi];
        if (!verbose)
            continue;
        if (plans[c].profile_data)
            fprintf(verbose, "hmmc: plan %s: profile as data: libhmmrt's generic profile "
                    "scorer%s\n", call->label,
                    gpu ? " on the CPU path, libhmmrt_gpu's generic profile kernel on the GPU"
                        : "");
        else if (!refused && is[mi] == 1)
            fprintf(verbose, "hmmc: plan %s: specialised code (%s)\n", call->label,
                    "the only profile of the program: --profile-data=on takes the "
                    "generic scorer");
        else if (refused && is[mi] == 1)
            fprintf(verbose, "hmmc: plan %s: specialised code (%s)\n", call->label, refused);
        else if (!refused && is[mi] == 0)
            fprintf(verbose, "hmmc: plan %s: specialised code (not a profile: %s)\n",
                    call->label, why[mi]);
    }
}

int c_profile_needs_data(const Program *p, const Plans *plans)
{
    for (int c = 0; c < p->n_calls; c++)
        if (plans->c[c].profile_data)
            return 1;
    return 0;
}

/* The first call of the model that takes the generic scorer writes its tables. */
static int owner_of(const Program *p, const Plans *plans, int index)
{
    for (int c = 0; c < index; c++)
        if (plans->c[c].profile_data && p->calls[c].model_index == p->calls[index].model_index)
            return c;
    return index;
}

static const char *data_path(const Program *p, const char *prefix)
{
    return arena_printf(p->arena, "%s.profiles", prefix);
}

int c_profile_write_data(const Program *p, const Plans *plans, const char *prefix)
{
    const char *path = data_path(p, prefix);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "hmmc: error: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (int c = 0; c < p->n_calls; c++) {
        if (!plans->c[c].profile_data || owner_of(p, plans, c) != c)
            continue;
        Tables t;
        if (recognise(p->arena, &p->models[p->calls[c].model_index], &t))
            abort(); /* c_profile_plan recognised it */
        size_t n = tables_size(t.stride, t.n_cols);
        n = (n + 7) / 8 * 8; /* the next model's from a multiple of 64 bytes */
        double *padded = realloc(t.data, n * sizeof(double));
        if (!padded)
            fatal_out_of_memory();
        memset(padded + tables_size(t.stride, t.n_cols), 0,
               (n - tables_size(t.stride, t.n_cols)) * sizeof(double));
        fwrite(padded, sizeof(double), n, f);
        free(padded);
    }
    write_sample_data(p, plans, f);
    if (fclose(f) != 0) {
        fprintf(stderr, "hmmc: error: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int c_profile_model_in_data(const Program *p, const Plans *plans, int model_index)
{
    for (int c = 0; c < p->n_calls; c++)
        if (plans->c[c].profile_data && p->calls[c].model_index == model_index)
            return 1;
    return 0;
}

size_t c_profile_sample_offset(const Program *p, const Plans *plans, int model_index,
                               size_t *emissions_at, size_t *names_at)
{
    for (int c = 0; c < p->n_calls; c++)
        if (plans->c[c].profile_data && p->calls[c].model_index == model_index) {
            size_t at = (size_t)plans->c[c].profile_sample_at;
            sample_bytes(&p->models[model_index], emissions_at, names_at);
            *emissions_at += at;
            *names_at += at;
            return at;
        }
    abort(); /* not a model in the data file */
}

static void pad(FILE *f, size_t n)
{
    static const char zeros[64];
    fwrite(zeros, 1, n, f);
}

static void write_sample_data(const Program *p, const Plans *plans, FILE *f)
{
    for (int i = 0; i < p->n_models; i++) {
        if (!c_profile_model_in_data(p, plans, i))
            continue;
        const IrModel *m = &p->models[i];
        size_t emissions_at, names_at, total = sample_bytes(m, &emissions_at, &names_at);
        for (int k = 0; k < m->n_moves; k++) {
            const IrMove *mv = &m->moves[k];
            int ints[4] = {mv->from, mv->to, mv->emission, 0};
            double w = sample_move_weight(m, mv);
            fwrite(ints, sizeof ints, 1, f);
            fwrite(&w, sizeof w, 1, f);
        }
        pad(f, emissions_at - (size_t)m->n_moves * 24);
        for (int em = 0; em < m->n_emissions; em++)
            for (int x = 0; x < m->K; x++) {
                double v = exp(m->emissions[em].logp[x]);
                fwrite(&v, sizeof v, 1, f);
            }
        pad(f, names_at - emissions_at - (size_t)m->n_emissions * (size_t)m->K * 8);
        size_t names = 0;
        for (int s = 0; s < m->n_states; s++) {
            size_t n = strlen(m->states[s].name) + 1;
            fwrite(m->states[s].name, 1, n, f);
            names += n;
        }
        pad(f, total - names_at - names);
    }
}

void c_profile_remove_data(const Program *p, const char *prefix)
{
    unlink(data_path(p, prefix));
}

void c_profile_write_call(Emitter *e, const Program *p, const Plans *plans, int index,
                          const char *prefix)
{
    const IrCall *call = &p->calls[index];
    const IrModel *m = &p->models[call->model_index];
    const Layout *layout = plans->layout;
    int owner = owner_of(p, plans, index);
    const char *table = arena_printf(p->arena, "hmmc_profile_m%d", call->model_index);
    FILE *o = e->out;
    char num[32];
    emit_blank(e);
    emit_comment(e, "==== call %d: %s; profile as data: libhmmrt's generic profile scorer "
                    "(hmmrt_profile.h) on the model's tables ====", index, call->label);
    if (owner == index) {
        Tables t;
        if (recognise(p->arena, m, &t))
            abort();
        size_t at = (size_t)plans->c[index].profile_offset;
        emit_comment(e, "model %s: %d nodes, %d columns of emissions; its tables are at double "
                        "%zu of %s", m->name, t.M, t.n_cols, at, data_path(p, prefix));
        fprintf(o, "static const unsigned char %s_col[%d] = {", table, t.K);
        for (int x = 0; x < t.K; x++)
            fprintf(o, "%s%d", x ? ", " : "", t.col[x]);
        fprintf(o, "};\nstatic const hmmrt_profile %s = {\n    .label = %s, .M = %d, "
                   ".stride = %d, .n_cols = %d, .col = %s_col,\n", table,
                emit_string(m->name), t.M, t.stride, t.n_cols, table);
        fprintf(o, "    /* the moves outside the nodes: a constant factor, times the sequence's\n"
                   "     * length-dependent weight lw[special_lw] where special_lw >= 0 */\n"
                   "    .special = {\n");
        for (int s = 0; s < PX_N; s++)
            fprintf(o, "        [HMMRT_PX_%s] = %s, /* %c -> %c%s */\n", PX_NAME[s],
                    emit_double(num, t.special[s]), PX_NAME[s][0], PX_NAME[s][1],
                    t.special_lw[s] >= 0
                        ? arena_printf(p->arena, ", times lw[%d]", t.special_lw[s]) : "");
        fprintf(o, "    },\n    .special_lw = {");
        for (int s = 0; s < PX_N; s++)
            fprintf(o, "%s[HMMRT_PX_%s] = %d", s == 0 ? "" : s % 5 ? ", " : ",\n        ",
                    PX_NAME[s], t.special_lw[s]);
        fprintf(o, "},\n    .data = hmmc_profile_data + %zu,\n};\n", at);
        free(t.data);
    }
    emit_open(e, "static int %s(const hmmrt_seq *seq, hmmrt_value *values, hmmrt_scratch *scratch)",
              layout_name(layout, index, "run"));
    emit_line(e, "const int64_t L = seq->length;");
    if (m->n_length_weights) {
        emit_line(e, "/* the model's length-dependent weights at this L */");
        fprintf(o, "%*sconst double lw[%d] = {", e->indent * 4, "", m->n_length_weights);
        for (int k = 0; k < m->n_length_weights; k++)
            fprintf(o, "%s%s", k ? ", " : "", m->length_weights[k].c_text);
        fprintf(o, "};\n");
    } else {
        emit_line(e, "const double *lw = NULL;");
        emit_line(e, "(void)L;");
    }
    emit_line(e, "double score;");
    emit_line(e, "if (hmmrt_profile_%s(&%s, lw, seq->codes[%d], L, scratch, &score))",
              call->alg == ALG_VITERBI ? "viterbi" : "forward", table,
              layout->calls[index].alphabet);
    emit_line(e, "    return 1;");
    const LayoutCall *lc = &layout->calls[index];
    for (int i = 0; i < lc->n_columns; i++)
        emit_line(e, "values[%d].score = score;", lc->columns[i]);
    emit_line(e, "return 0;");
    emit_close(e, "");
}
