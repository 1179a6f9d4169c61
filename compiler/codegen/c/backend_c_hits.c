/* backend_c_hits.c: the hits mode's data in a generated program: the
 * `// hmmer:` header lines of its source (read back with hmmer_meta_read),
 * and the rule that picks the search score: forward(MODEL).score, where MODEL
 * is the first model the file declares (the import's), and the domains:
 * viterbi(MODEL).traceback; a program of rows per model gets one per model. */
#include "codegen/c/backend_c_hits.h"

#include "codegen/c/backend_c_rows.h"
#include "codegen/c/backend_c_train.h"
#include "import/hmmer_header.h"
#include "support/source.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The first print of `attr` from an `alg` call on model 0, or -1. */
static int find_column(const Program *p, Algorithm alg, unsigned attr)
{
    for (int i = 0; i < p->n_prints; i++) {
        const IrCall *call = &p->calls[p->prints[i].call];
        if (p->prints[i].attr == attr && call->alg == alg && call->model_index == 0)
            return i;
    }
    return -1;
}

/* 1 when the model leaves the profile at its last match state only (an
 * import's glocal configurations, --hmmer-mode=uniglocal), where a local
 * one moves to E from every match state. */
static int exits_glocal(const IrModel *m)
{
    int exits = 0, matches = 0;
    for (int s = 0; s < m->n_states; s++) {
        const char *name = m->states[s].name;
        matches += name[0] == 'M' && name[1] >= '1' && name[1] <= '9';
    }
    for (int k = 0; k < m->n_moves; k++) {
        const char *from = m->states[m->moves[k].from].name;
        exits += strcmp(m->states[m->moves[k].to].name, "E") == 0 && from[0] == 'M' &&
                 from[1] >= '1' && from[1] <= '9';
    }
    return matches > 1 && exits == 1;
}

/* Why the program cannot search as hmmsearch does, or NULL. */
static const char *refusal(const Program *p, const HmmerMeta *m, int score_column,
                           int traceback_column, int nucleic)
{
    if (strncmp(m->format, "HMMER3", 6) != 0 || !m->has[META_STATS_FORWARD])
        return "its HMMER file gave no STATS LOCAL FORWARD line (HMMER2 files have none), from "
               "which E-values come: import a HMMER3 file (hmmbuild's)";
    if (p->n_models == 0 || p->models[0].n_length_weights == 0)
        return "its model is not in hmmsearch's configuration (imported with "
               "--hmmer-mode=glocal?), so its scores are not what the file's STATS describe: "
               "import the file again without --hmmer-mode";
    if (exits_glocal(&p->models[0]))
        return "its model is in HMMER3's uniglocal configuration (--hmmer-mode=uniglocal), "
               "whose scores the file's STATS LOCAL lines do not describe, so there are no "
               "E-values: import the file again without --hmmer-mode (or "
               "--hmmer-mode=unilocal) to search";
    if (score_column < 0)
        return "its main prints no forward score of its first model, the search score: add "
               "`print forward(MODEL).score;` as --import-hmmer writes it";
    if (nucleic && !m->has[META_MAXL])
        return "its DNA model's HMMER file has no MAXL line (HMMER3/a and 3/b files have none), "
               "the window length W of nhmmer's E-values: save the model again with hmmconvert "
               "of HMMER 3.1 or later and import that file";
    if (nucleic && traceback_column < 0)
        return "the hits of a DNA model are the domains of its best path on each strand, and "
               "its main prints no viterbi traceback of its first model: add `print "
               "viterbi(MODEL).traceback;` as --import-hmmer writes it";
    return NULL;
}

static void write_text_field(FILE *o, const char *key, const char *value)
{
    if (value)
        fprintf(o, ".%s = %s, ", key, emit_string(value));
}

static const char *c_write_hits_per_model(Emitter *e, const Program *p, const Layout *layout);

const char *c_write_hits(Emitter *e, const Program *p, const Layout *layout)
{
    if (p->source_text && c_rows_asked(p) && p->n_prints > 0)
        return c_write_hits_per_model(e, p, layout);
    if (!p->source_text)
        return "";
    HmmerMeta m = {0};
    if (hmmer_meta_read(p->source_text, (size_t)p->source_length, &m) <= 0) {
        hmmer_meta_free(&m);
        return "";
    }
    int score = find_column(p, ALG_FORWARD, ATTR_SCORE);
    int traceback = find_column(p, ALG_VITERBI, ATTR_TRACEBACK);
    int n_used = 0, slot = p->n_models > 0 ? c_main_model_slot(p, 0, &n_used) : -1;
    int nucleic = strcasecmp(m.alph, "DNA") == 0 || strcasecmp(m.alph, "RNA") == 0 ||
                  strcasecmp(m.alph, "Nucleic") == 0;
    const char *why = refusal(p, &m, score, traceback, nucleic);
    FILE *o = e->out;
    char tau[32], lambda[32], cut[32];
    emit_blank(e);
    emit_comment(e, "the hits mode (-E, -T, --tblout ...: docs/hmmer.md): the `// hmmer:` header "
                    "of the source, the search score (forward of its first model) and the "
                    "domains (that model's viterbi traceback)");
    fprintf(o, "static const hmmrt_hits_info hits = {\n    ");
    write_text_field(o, "query", m.name);
    write_text_field(o, "acc", m.has[META_ACC] ? m.acc : NULL);
    write_text_field(o, "desc", m.has[META_DESC] ? m.desc : NULL);
    fprintf(o, ".M = %ld,\n    ", m.leng);
    if (why) {
        fprintf(o, ".refused = %s,\n    ", emit_string(why));
    } else {
        fprintf(o, ".tau = %s, ", emit_double(tau, m.stats[STATS_FORWARD][0]));
        fprintf(o, ".lambda = %s,\n    ", emit_double(lambda, m.stats[STATS_FORWARD][1]));
    }
    static const int keys[3] = {META_GA, META_TC, META_NC};
    fprintf(o, ".has_cut = {%d, %d, %d}, .cut = {", m.has[keys[0]], m.has[keys[1]],
            m.has[keys[2]]);
    for (int k = 0; k < 3; k++) {
        fprintf(o, "%s{%s, ", k ? ", " : "", emit_double(cut, m.cut[k][0]));
        fprintf(o, "%s}", emit_double(cut, m.cut[k][1]));
    }
    fprintf(o, "},\n    .score_column = %d, .traceback_column = %d, .model = %d,\n", score,
            traceback, slot);
    if (!why && score >= 0) /* the search score's call alone: the other calls only for
                               the sequences that may be hits */
        fprintf(o, "    .search = %s,\n", layout_name(layout, p->prints[score].call, "run"));
    if (!why && score >= 0 && traceback >= 0 &&
        p->prints[traceback].call != p->prints[score].call) /* the domains' call alone */
        fprintf(o, "    .paths = %s,\n", layout_name(layout, p->prints[traceback].call, "run"));
    fprintf(o, "    .nucleic = %d, .maxl = %ld};\n", nucleic, m.has[META_MAXL] ? m.maxl : 0L);
    hmmer_meta_free(&m);
    return ".hits = &hits,";
}

/* ---- rows per model: one hmmrt_hits_info per model ---------------------------- */

/* The offset of each line of the source (1-based; [n_lines + 1] the end).
 * The text is read once, in pieces given back as they are read where it is
 * a mapping (support/source.h): the source of 20,000 profiles is 5 GB. */
static size_t *line_starts(const Program *p, int *n_lines)
{
    const char *text = p->source_text, *end = text + p->source_length;
    size_t cap = 1024;
    size_t *at = malloc(sizeof *at * cap);
    if (!at)
        return NULL;
    int k = 1;
    at[1] = 0;
    const size_t piece = (size_t)16 << 20;
    for (const char *from = text; from < end; from += piece) {
        const char *to = (size_t)(end - from) > piece ? from + piece : end;
        for (const char *t = from; t < to; t++) {
            if (*t != '\n')
                continue;
            if ((size_t)k + 3 > cap) {
                size_t *grown = realloc(at, sizeof *at * (cap *= 2));
                if (!grown) {
                    free(at);
                    return NULL;
                }
                at = grown;
            }
            at[++k] = (size_t)(t - text) + 1;
        }
        source_release(text, (size_t)(from - text), (size_t)(to - text));
    }
    at[k + 1] = (size_t)(end - text);
    *n_lines = k;
    return at;
}

/* Reads the `// hmmer:` lines in the comments just above source line `line`
 * into m: what hmmer_meta_read returns. */
static int meta_above(const Program *p, const size_t *at, int n_lines, int line, HmmerMeta *m)
{
    const char *text = p->source_text;
    if (line < 1 || line > n_lines)
        return 0;
    int first = line;
    while (first > 1) { /* back over the comments and blank lines above the model */
        const char *s = text + at[first - 1];
        while (*s == ' ' || *s == '\t')
            s++;
        if (!(*s == '\n' || *s == '\r' || (s[0] == '/' && s[1] == '/')))
            break;
        first--;
    }
    int read = hmmer_meta_read(text + at[first], (size_t)p->source_length - at[first], m);
    source_release(text, at[first], at[line + 1]); /* the next model's pages only stay */
    return read;
}

/* Why the program of many models cannot search as hmmsearch does, or NULL. */
static const char *per_model_refusal(const Program *p, int g, const HmmerMeta *m, int read,
                                     int model_index, int score_column, const char *symbols0)
{
    const char *who = arena_printf(p->arena, "model %d ('%s')", g + 1,
                                   read > 0 && m->name ? m->name : p->models[model_index].name);
    const IrModel *model = &p->models[model_index];
    if (read <= 0 || strncmp(m->format, "HMMER3", 6) != 0 || !m->has[META_STATS_FORWARD])
        return arena_printf(p->arena, "%s has no STATS LOCAL FORWARD line (HMMER2 files have "
                            "none), from which E-values come: import a file of HMMER3 models "
                            "(hmmbuild's)", who);
    if (model->n_length_weights == 0)
        return arena_printf(p->arena, "%s is not in hmmsearch's configuration (imported with "
                            "--hmmer-mode=glocal?), so its scores are not what its STATS "
                            "describe: import the file again without --hmmer-mode", who);
    if (score_column < 0)
        return arena_printf(p->arena, "main prints no forward score of %s, the search score: "
                            "print `forward(MODEL).score` for every model as --import-hmmer "
                            "writes it", who);
    if (strcasecmp(m->alph, "amino") != 0 || strcmp(model->symbols, symbols0) != 0)
        return arena_printf(p->arena, "%s is not a protein model (ALPH %s), and the hits mode of "
                            "a file of many models searches protein models only: put the DNA "
                            "models in a file of their own and import each alone", who, m->alph);
    return NULL;
}

typedef struct PerModel {
    int score, model_index, slot;
} PerModel;

static const char *c_write_hits_per_model(Emitter *e, const Program *p, const Layout *layout)
{
    (void)layout;
    int w = p->n_prints;
    for (int i = 1; i < p->n_prints && w == p->n_prints; i++) /* the group, as backend_c_rows.c */
        for (int j = 0; j < i; j++)
            if (p->prints[i].attr == p->prints[j].attr &&
                p->calls[p->prints[i].call].alg == p->calls[p->prints[j].call].alg) {
                w = i;
                break;
            }
    int n = p->n_prints / w, n_lines = 0;
    size_t *at = line_starts(p, &n_lines);
    PerModel *pm = calloc((size_t)n, sizeof *pm);
    int *slot_of = malloc(sizeof(int) * (size_t)(p->n_models + 1));
    if (!at || !pm || !slot_of) {
        free(at), free(pm), free(slot_of);
        return "";
    }
    for (int k = 0; k < p->n_models; k++) /* c_main_model_slot, for every model at once */
        slot_of[k] = -1;
    for (int c = 0, used = 0; c < p->n_calls; c++)
        if (slot_of[p->calls[c].model_index] < 0)
            slot_of[p->calls[c].model_index] = used++;
    const char *symbols0 = p->models[p->calls[p->prints[0].call].model_index].symbols;
    const char *why = NULL;
    HmmerMeta first = {0}; /* no `// hmmer:` lines: no hits mode at all, as for one model */
    int read_first = meta_above(p, at, n_lines,
                                p->models[p->calls[p->prints[0].call].model_index].loc.first_line,
                                &first);
    hmmer_meta_free(&first);
    if (read_first <= 0) {
        free(at), free(pm), free(slot_of);
        return "";
    }
    for (int g = 0; g < n; g++) {
        pm[g].score = -1;
        for (int j = g * w; j < (g + 1) * w && pm[g].score < 0; j++)
            if (p->prints[j].attr == ATTR_SCORE && p->calls[p->prints[j].call].alg == ALG_FORWARD)
                pm[g].score = j;
        pm[g].model_index = p->calls[p->prints[pm[g].score >= 0 ? pm[g].score : g * w].call]
                                .model_index;
        pm[g].slot = slot_of[pm[g].model_index];
        if (!why) {
            HmmerMeta m = {0};
            int read = meta_above(p, at, n_lines, p->models[pm[g].model_index].loc.first_line, &m);
            why = per_model_refusal(p, g, &m, read, pm[g].model_index, pm[g].score, symbols0);
            hmmer_meta_free(&m);
        }
    }
    FILE *o = e->out;
    emit_blank(e);
    emit_comment(e, "the hits mode (-E, -T, --tblout ..., --hmmscan: docs/hmmer.md), one entry "
                    "per model: its `// hmmer:` lines, its search score (forward) and model");
    fprintf(o, "static const hmmrt_hits_info hits[%d] = {\n", n);
    for (int g = 0; g < n; g++) {
        HmmerMeta m = {0};
        int read = meta_above(p, at, n_lines, p->models[pm[g].model_index].loc.first_line, &m);
        char num[32];
        fprintf(o, "    {");
        write_text_field(o, "query", read > 0 && m.name ? m.name : p->models[pm[g].model_index].name);
        write_text_field(o, "acc", m.has[META_ACC] ? m.acc : NULL);
        write_text_field(o, "desc", m.has[META_DESC] ? m.desc : NULL);
        fprintf(o, ".M = %ld,\n     ", m.leng);
        if (g == 0 && why)
            fprintf(o, ".refused = %s,\n     ", emit_string(why));
        fprintf(o, ".tau = %s, ", emit_double(num, m.stats[STATS_FORWARD][0]));
        fprintf(o, ".lambda = %s, ", emit_double(num, m.stats[STATS_FORWARD][1]));
        static const int keys[3] = {META_GA, META_TC, META_NC};
        fprintf(o, ".has_cut = {%d, %d, %d}, .cut = {", m.has[keys[0]], m.has[keys[1]],
                m.has[keys[2]]);
        for (int k = 0; k < 3; k++) {
            fprintf(o, "%s{%s, ", k ? ", " : "", emit_double(num, m.cut[k][0]));
            fprintf(o, "%s}", emit_double(num, m.cut[k][1]));
        }
        fprintf(o, "},\n     .score_column = %d, .traceback_column = -1, .model = %d, "
                   ".n_queries = %d},\n", pm[g].score, pm[g].slot, n);
        hmmer_meta_free(&m);
    }
    fprintf(o, "};\n");
    free(at), free(pm), free(slot_of);
    return ".hits = hits,";
}
