/* backend_c_hits.c: the hits mode's data in a generated program: the
 * `// hmmer:` header lines of its source (read back with hmmer_meta_read),
 * and the rule that picks the search score: forward(MODEL).score, where MODEL
 * is the first model the file declares (the import's), and the domains:
 * viterbi(MODEL).traceback. */
#include "codegen/c/backend_c_hits.h"

#include "codegen/c/backend_c_rows.h"
#include "codegen/c/backend_c_train.h"
#include "import/hmmer_header.h"

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
    if (c_rows_asked(p))
        return "it holds many models (rows per model), and the hits mode searches with one: "
               "take the model out of the HMMER file (hmmfetch FILE NAME) and import it alone";
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

const char *c_write_hits(Emitter *e, const Program *p, const Layout *layout)
{
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
    fprintf(o, "    .nucleic = %d, .maxl = %ld};\n", nucleic, m.has[META_MAXL] ? m.maxl : 0L);
    hmmer_meta_free(&m);
    return ".hits = &hits,";
}
