/* backend_c_rows.c: rows per model (backend_c_rows.h): the directive in a
 * program's opening comments, the groups of main's prints (one per model),
 * and the tables that libhmmrt's output reads (hmmrt_program.row_models). */
#include "codegen/c/backend_c_rows.h"

#include <string.h>

#include "support/source.h"

static const char DIRECTIVE[] = "// hmmc: rows per model";

int c_rows_asked(const Program *p)
{
    const char *s = p->source_text, *end = s ? s + p->source_length : NULL;
    while (s && s < end) {
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        const char *line_end = eol ? eol : end;
        while (s < line_end && (*s == ' ' || *s == '\t'))
            s++;
        const char *t = line_end;
        while (t > s && (t[-1] == ' ' || t[-1] == '\t' || t[-1] == '\r'))
            t--;
        if ((size_t)(t - s) == sizeof DIRECTIVE - 1 && memcmp(s, DIRECTIVE, (size_t)(t - s)) == 0)
            return 1;
        if (t > s && (t - s < 2 || s[0] != '/' || s[1] != '/'))
            return 0; /* the first line of code: the opening comments end */
        s = eol ? eol + 1 : end;
    }
    return 0;
}

static int same_kind(const Program *p, int i, int j)
{
    return p->prints[i].attr == p->prints[j].attr &&
           p->calls[p->prints[i].call].alg == p->calls[p->prints[j].call].alg;
}

/* The prints of one model: up to the first print of a kind (algorithm and
 * attribute) the group already has. */
static int group_width(const Program *p)
{
    for (int i = 1; i < p->n_prints; i++)
        for (int j = 0; j < i; j++)
            if (same_kind(p, i, j))
                return i;
    return p->n_prints;
}

/* "forward(...).score": a print's kind, whatever its model. */
static const char *attr_label(const Program *p, int i)
{
    return arena_printf(p->arena, "%s(...).%s", algorithm_name(p->calls[p->prints[i].call].alg),
                        attr_name(p->prints[i].attr));
}

int c_rows_check(const Program *p, Diag *d)
{
    if (!c_rows_asked(p))
        return 1;
    if (p->n_prints == 0) {
        diag_error(d, (Loc){1, 1, 1, 1}, "`%s` asks for one row per model, but main prints "
                   "nothing: print each model's scores, or leave the line out", DIRECTIVE);
        return 0;
    }
    int w = group_width(p), ok = 1;
    for (int i = w; i < p->n_prints && ok; i++)
        if (!same_kind(p, i, i % w)) {
            diag_error(d, p->prints[i].loc, "`%s` asks for the same prints for every model, "
                       "in the first model's order (%d a model): here %s was expected, not %s; "
                       "print each model's as the first, or leave the line out", DIRECTIVE, w,
                       attr_label(p, i % w), attr_label(p, i));
            ok = 0;
        }
    if (ok && p->n_prints % w != 0) {
        diag_error(d, p->prints[p->n_prints - 1].loc, "`%s` asks for the same %d print%s for "
                   "every model: the last model's are cut short", DIRECTIVE, w, w > 1 ? "s" : "");
        ok = 0;
    }
    return ok;
}

/* Per line of the source (1-based): the NAME of the `// hmmer: NAME x` line
 * in the comments just above a line that starts a model, else NULL. */
static const char **hmmer_names(const Program *p, int *n_lines)
{
    const char *s = p->source_text, *end = s + p->source_length;
    int lines = 1;
    const size_t piece = (size_t)16 << 20; /* given back as read: read again below */
    for (const char *from = s; from < end; from += piece) {
        const char *to = (size_t)(end - from) > piece ? from + piece : end;
        for (const char *t = from; t < to; t++)
            lines += *t == '\n';
        source_release(s, (size_t)(from - s), (size_t)(to - s));
    }
    size_t released = 0; /* the text before it was given back (support/source.h) */
    const char **name = arena_alloc(p->arena, sizeof(char *) * (size_t)(lines + 1));
    const char *pending = NULL;
    for (int line = 1; s < end; line++) {
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        const char *line_end = eol ? eol : end;
        size_t len = (size_t)(line_end - s);
        static const char key[] = "// hmmer: NAME ";
        if (len > sizeof key - 1 && memcmp(s, key, sizeof key - 1) == 0) {
            const char *v = s + sizeof key - 1, *ve = line_end;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
                ve--;
            pending = arena_printf(p->arena, "%.*s", (int)(ve - v), v);
        } else if (len >= 2 && s[0] == '/' && s[1] == '/') {
            /* a comment: the name stays pending */
        } else if (len > 0 && s[0] != '\r') {
            name[line] = pending;
            pending = NULL;
        }
        s = eol ? eol + 1 : end;
        if ((size_t)(s - p->source_text) - released > ((size_t)16 << 20)) {
            source_release(p->source_text, released, (size_t)(s - p->source_text));
            released = (size_t)(s - p->source_text);
        }
    }
    source_release(p->source_text, released, (size_t)p->source_length);
    *n_lines = lines;
    return name;
}

const char *c_write_rows(Emitter *e, const Program *p)
{
    if (!c_rows_asked(p) || p->n_prints == 0)
        return "";
    int w = group_width(p), n = p->n_prints / w, n_lines;
    const char **names = hmmer_names(p, &n_lines);
    FILE *o = e->out;
    emit_blank(e);
    emit_comment(e, "rows per model (`%s`): each sequence gets a row per model, the model "
                    "named, with %d field%s a row", DIRECTIVE, w, w > 1 ? "s" : "");
    fprintf(o, "static const char *const row_labels[] = {");
    for (int j = 0; j < w; j++) {
        const IrPrint *pr = &p->prints[j];
        fprintf(o, "%s%s", j ? ", " : "", emit_string(arena_printf(
            p->arena, "%s.%s", algorithm_name(p->calls[pr->call].alg), attr_name(pr->attr))));
    }
    fprintf(o, "};\nstatic const char *const row_model_names[] = {\n");
    for (int g = 0; g < n; g++) {
        /* the model declared first among the group's calls (a HMMER2 import's
         * NAME_forward gives only forward), by the NAME of its `// hmmer:`
         * lines where it has them (HMMER's names need not be identifiers) */
        int model = p->calls[p->prints[g * w].call].model_index;
        for (int j = 1; j < w; j++)
            if (p->calls[p->prints[g * w + j].call].model_index < model)
                model = p->calls[p->prints[g * w + j].call].model_index;
        int line = p->models[model].loc.first_line;
        const char *hmmer = line >= 1 && line <= n_lines ? names[line] : NULL;
        fprintf(o, "    %s,\n", emit_string(hmmer ? hmmer : p->models[model].name));
    }
    fprintf(o, "};\n");
    return arena_printf(p->arena, "\n    .row_models = %d, .row_width = %d, .row_model_names = "
                        "row_model_names, .row_labels = row_labels,", n, w);
}
