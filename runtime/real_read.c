/* real_read.c: the text form of real observations: `>NAME` lines, then one
 * observation a line, D numbers separated by white space or commas. Every
 * malformed case is an error naming the file, line, sequence and
 * observation; the sequences before it are kept. */
#include "real_read.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The whole of a file ("-": standard input) into *text (NUL-terminated). */
static int slurp(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        *len = 0;
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int failed = !buf || ferror(f);
    int saved = errno;
    if (f != stdin)
        fclose(f);
    if (failed) {
        snprintf(err, errlen, "cannot read %s: %s", path, buf ? strerror(saved) : "out of memory");
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

typedef struct reader {
    hmmrt_real_file *f;
    const char *path;
    long line;
    char *err;
    size_t errlen;
    size_t seq_cap, obs_cap; /* of f->seqs, and of the last sequence's obs */
} reader;

static int fail(reader *r, const char *fmt, ...) HMMRT_PRINTF(2, 3);
static int fail(reader *r, const char *fmt, ...)
{
    r->f->error_line = r->line;
    int n = snprintf(r->err, r->errlen, "%s:%ld: ", r->path, r->line);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < r->errlen)
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int out_of_memory(reader *r)
{
    r->f->out_of_memory = 1;
    return fail(r, "out of memory");
}

/* A `>NAME` line (from after the '>'): starts a sequence. */
static int start_sequence(reader *r, char *rest)
{
    while (*rest == ' ' || *rest == '\t')
        rest++;
    size_t n = strcspn(rest, " \t");
    if (n == 0)
        return fail(r, "a '>' line without a name: write >NAME, then one observation a line");
    if (rest[0] == '#')
        return fail(r, "sequence names may not start with '#' (output lines starting with '#' "
                    "are comments): rename the sequence");
    hmmrt_real_file *f = r->f;
    if ((size_t)f->n == r->seq_cap) {
        size_t cap = r->seq_cap ? r->seq_cap * 2 : 64;
        hmmrt_real_seq *bigger = realloc(f->seqs, cap * sizeof *bigger);
        if (!bigger)
            return out_of_memory(r);
        f->seqs = bigger;
        r->seq_cap = cap;
    }
    hmmrt_real_seq *s = &f->seqs[f->n];
    *s = (hmmrt_real_seq){.line = r->line};
    s->name = malloc(n + 1);
    if (!s->name)
        return out_of_memory(r);
    memcpy(s->name, rest, n);
    s->name[n] = '\0';
    f->n++;
    r->obs_cap = 0;
    return 0;
}

/* An observation line of the current sequence: D numbers. */
static int add_observation(reader *r, char *p, int D)
{
    hmmrt_real_file *f = r->f;
    if (f->n == 0)
        return fail(r, "an observation before the first '>NAME' line: start each sequence "
                    "with >NAME");
    hmmrt_real_seq *s = &f->seqs[f->n - 1];
    int64_t obs = s->length + 1;
    if ((size_t)(s->length + 1) * (size_t)D > r->obs_cap) {
        size_t cap = r->obs_cap ? r->obs_cap * 2 : (size_t)D * 256;
        double *bigger = realloc(s->obs, cap * sizeof *bigger);
        if (!bigger)
            return out_of_memory(r);
        s->obs = bigger;
        r->obs_cap = cap;
    }
    double *out = s->obs + (size_t)s->length * (size_t)D;
    int count = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        if (count > 0) { /* a separator: white space (above) or one comma */
            if (*p == ',') {
                p++;
                while (*p == ' ' || *p == '\t')
                    p++;
                if (*p == '\0' || *p == ',')
                    return fail(r, "sequence %s, observation %lld: a value is missing "
                                "between commas (or after the last one)", s->name,
                                (long long)obs);
            }
        } else if (*p == ',') {
            return fail(r, "sequence %s, observation %lld: a value is missing before the "
                        "first comma", s->name, (long long)obs);
        }
        char *end;
        errno = 0;
        double v = strtod(p, &end);
        size_t word = strcspn(p, " \t,");
        if (end != p + word || word == 0)
            return fail(r, "sequence %s, observation %lld: '%.*s' is not a number", s->name,
                        (long long)obs, (int)(word > 40 ? 40 : word), p);
        if (!isfinite(v))
            return fail(r, "sequence %s, observation %lld: '%.*s' is not a finite number",
                        s->name, (long long)obs, (int)(word > 40 ? 40 : word), p);
        if (count < D)
            out[count] = v;
        count++;
        p = end;
    }
    if (count != D)
        return fail(r, "sequence %s, observation %lld: %d number%s, but the program's "
                    "observations are vectors of %d real%s", s->name, (long long)obs, count,
                    count == 1 ? "" : "s", D, D == 1 ? "" : "s");
    s->length++;
    return 0;
}

/* A .npy file's sequence is named after the file: its base name less ".npy". */
static const char *npy_name(const char *path, char *name, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(name, size, "%s", base);
    size_t n = strlen(name);
    if (n > 4 && strcmp(name + n - 4, ".npy") == 0)
        name[n - 4] = '\0';
    return name;
}

int hmmrt_real_read(const char *path, int D, hmmrt_real_file *f, char *err, size_t errlen)
{
    *f = (hmmrt_real_file){0};
    char name[512];
    char *text;
    size_t len;
    if (slurp(path, &text, &len, err, errlen) != 0)
        return -1;
    const unsigned char *bytes = (const unsigned char *)text;
    if (hmmrt_is_npy(bytes, len) || hmmrt_is_npz(bytes, len)) {
        int status = hmmrt_is_npy(bytes, len)
                         ? hmmrt_npy_read(path, npy_name(path, name, sizeof name), bytes, len, D,
                                          f, err, errlen)
                         : hmmrt_npz_read(path, bytes, len, D, f, err, errlen);
        free(text);
        return status;
    }
    reader r = {.f = f, .path = path, .err = err, .errlen = errlen};
    int status = 0, dropped = 0;
    char *p = text, *end = text + len;
    while (p < end && status == 0) {
        r.line++;
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *line_end = nl ? nl : end;
        int has_nul = memchr(p, '\0', (size_t)(line_end - p)) != NULL;
        *line_end = '\0';
        if (line_end > p && line_end[-1] == '\r')
            line_end[-1] = '\0';
        if (has_nul)
            status = fail(&r, "a NUL byte in the line: the text form holds numbers only");
        else if (*p == '>')
            status = start_sequence(&r, p + 1);
        else if (p[strspn(p, " \t")] != '\0' && (status = add_observation(&r, p, D)) != 0)
            dropped = f->n > 0 ? --f->n, 1 : 0; /* the sequence in error is not whole */
        p = line_end + 1;
    }
    free(text);
    if (dropped) { /* the sequence dropped above: its memory */
        free(f->seqs[f->n].name);
        free(f->seqs[f->n].obs);
    }
    return status;
}

void hmmrt_real_free(hmmrt_real_file *f)
{
    for (int64_t i = 0; i < f->n; i++) {
        free(f->seqs[i].name);
        free(f->seqs[i].obs);
    }
    free(f->seqs);
    *f = (hmmrt_real_file){0};
}
