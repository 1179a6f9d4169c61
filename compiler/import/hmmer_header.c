/* hmmer_header.c: reads back the `// hmmer: KEY VALUE` lines that
 * hmmer_meta_write put in a program (see hmmer_header.h), for the passes
 * that need a HMMER file's header lines after the import. */
#include "import/hmmer_header.h"
#include "support/arena.h"

#include <stdlib.h>
#include <string.h>

static const char PREFIX[] = "// hmmer: ";

/* Whole numbers and reals filling value (white space between), as many as
 * asked for; 0 when value is just that. */
static int reals(const char *value, int n, double *v)
{
    int used = 0;
    if (n == 1 ? sscanf(value, "%lf %n", &v[0], &used) != 1
               : sscanf(value, "%lf %lf %n", &v[0], &v[1], &used) != 2)
        return -1;
    return value[used] ? -1 : 0;
}

static int whole(const char *value, unsigned long *v)
{
    int used = 0;
    if (value[0] == '-' || sscanf(value, "%lu %n", v, &used) != 1 || value[used])
        return -1;
    return 0;
}

/* One word: no white space inside (the line's end is already cut). */
static int word(const char *value)
{
    return *value && !strpbrk(value, " \t") ? 0 : -1;
}

static int stats(const char *value, HmmerMeta *m)
{
    static const char *const names[] = {"LOCAL MSV ", "LOCAL VITERBI ", "LOCAL FORWARD "};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(value, names[i], n) == 0 && reals(value + n, 2, m->stats[i]) == 0) {
            m->has[META_STATS_MSV + i] = 1;
            return 0;
        }
    }
    return -1;
}

/* KEY and VALUE (the line's end cut off) into m; -1 when VALUE is not what
 * KEY holds. Keys not known here are passed over. */
static int key_value(const char *key, const char *value, HmmerMeta *m)
{
    static const char *const cuts[] = {"GA", "TC", "NC"};
    unsigned long n;
    if (strcmp(key, "FORMAT") == 0) {
        if (word(value) < 0 || strlen(value) >= sizeof m->format)
            return -1;
        strcpy(m->format, value);
    } else if (strcmp(key, "NAME") == 0) {
        if (word(value) < 0)
            return -1;
        free(m->name);
        m->name = xstrdup(value);
    } else if (strcmp(key, "ACC") == 0) {
        if (word(value) < 0)
            return -1;
        free(m->acc);
        m->acc = xstrdup(value);
        m->has[META_ACC] = 1;
    } else if (strcmp(key, "DESC") == 0) {
        free(m->desc);
        m->desc = xstrdup(value);
        m->has[META_DESC] = 1;
    } else if (strcmp(key, "ALPH") == 0) {
        if (word(value) < 0 || strlen(value) >= sizeof m->alph)
            return -1;
        strcpy(m->alph, value);
    } else if (strcmp(key, "LENG") == 0 || strcmp(key, "MAXL") == 0 ||
               strcmp(key, "NSEQ") == 0 || strcmp(key, "CKSUM") == 0) {
        if (whole(value, &n) < 0)
            return -1;
        if (key[0] == 'L')
            m->leng = (long)n;
        else if (key[0] == 'M')
            m->maxl = (long)n, m->has[META_MAXL] = 1;
        else if (key[0] == 'N')
            m->nseq = (long)n, m->has[META_NSEQ] = 1;
        else
            m->cksum = n, m->has[META_CKSUM] = 1;
    } else if (strcmp(key, "EFFN") == 0) {
        if (reals(value, 1, &m->effn) < 0)
            return -1;
        m->has[META_EFFN] = 1;
    } else if (strcmp(key, "STATS") == 0) {
        return stats(value, m);
    } else if (strcmp(key, "EVD") == 0) {
        if (reals(value, 2, m->evd) < 0)
            return -1;
        m->has[META_EVD] = 1;
    } else {
        for (int i = 0; i < 3; i++)
            if (strcmp(key, cuts[i]) == 0) {
                if (reals(value, 2, m->cut[i]) < 0)
                    return -1;
                m->has[META_GA + i] = 1;
            }
    }
    return 0;
}

int hmmer_meta_read(const char *text, size_t len, HmmerMeta *m)
{
    int count = 0, line = 0;
    char *buf = NULL;
    for (size_t at = 0; at < len;) {
        const char *start = text + at, *nl = memchr(start, '\n', len - at);
        size_t n = nl ? (size_t)(nl - start) : len - at;
        at += n + 1;
        line++;
        while (n > 0 && (start[n - 1] == '\r' || start[n - 1] == ' ' || start[n - 1] == '\t'))
            n--;
        size_t lead = 0;
        while (lead < n && (start[lead] == ' ' || start[lead] == '\t'))
            lead++;
        if (lead >= n)
            continue; /* blank */
        if (n - lead < 2 || strncmp(start + lead, "//", 2) != 0)
            break; /* the first line of code */
        if (lead > 0 || n < sizeof PREFIX - 1 || strncmp(start, PREFIX, sizeof PREFIX - 1) != 0)
            continue; /* another comment */
        free(buf);
        buf = xmalloc(n + 1);
        memcpy(buf, start, n);
        buf[n] = 0;
        char *key = buf + sizeof PREFIX - 1, *value = key + strcspn(key, " ");
        if (*value)
            *value++ = 0;
        if (key_value(key, value, m) < 0) {
            free(buf);
            return -line;
        }
        count++;
    }
    free(buf);
    return count;
}
