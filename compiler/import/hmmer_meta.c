/* hmmer_meta.c: the header lines the import keeps (HmmerMeta in
 * hmmer_profile.h): ACC, DESC, GA, TC, NC, STATS, NSEQ, EFFN, CKSUM, MAXL
 * and HMMER2's EVD, each checked as it is read, with an error at the column
 * of a value that is wrong or missing; and the "KEY VALUE" lines that carry
 * them into the program and to -v. */
#include "import/hmmer_meta.h"
#include "support/arena.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A finite number filling token s, which may end with ';' when last is set
 * (Pfam writes "GA 25.00 25.00;"). */
static int meta_number(const Reader *r, const char *s, int last, double *v, const char *what)
{
    size_t n = strlen(s);
    char text[TOK_MAX * 4];
    if (last && n > 1 && s[n - 1] == ';')
        n--;
    if (n >= sizeof text)
        return error_tok(r, s, "%s: '%s' is not a number", what, s);
    memcpy(text, s, n);
    text[n] = 0;
    char *end;
    errno = 0;
    *v = strtod(text, &end);
    if (end == text || *end || errno == ERANGE || !isfinite(*v))
        return error_tok(r, s, "%s: '%s' is not a number", what, s);
    return 0;
}

/* A whole number from lo to hi filling token s. */
static int meta_integer(const Reader *r, const char *s, long lo, unsigned long hi,
                        unsigned long *v, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (end == s || *end || errno || s[0] == '-' || x < (unsigned long long)lo || x > hi)
        return error_tok(r, s, "%s: '%s' is not a whole number from %ld to %lu", what, s, lo, hi);
    *v = (unsigned long)x;
    return 0;
}

/* KEY VALUE: exactly one value. */
static int one_value(const Reader *r, const char *usage)
{
    if (r->ntok < 2)
        return error_after(r, "%s: the value is missing: write `%s`", r->tok[0], usage);
    if (r->ntok > 2)
        return error_tok(r, r->tok[2], "%s takes one value: write `%s`", r->tok[0], usage);
    return 0;
}

/* GA, TC or NC: per-sequence and per-domain bit thresholds. A nucleic
 * model's line may give one (HMMER then uses it for both). */
static int cutoffs(const Reader *r, H2 *h, int which)
{
    const char *key = r->tok[0];
    int one_ok = h->K > 0 && h->nucleic, n = r->ntok - 1;
    if (n > 2)
        return error_tok(r, r->tok[3], "%s takes two thresholds in bits (per sequence, per "
                         "domain); this is a third", key);
    for (int i = 0; i < n; i++)
        if (meta_number(r, r->tok[1 + i], i == n - 1, &h->meta.cut[which][i], key) < 0)
            return -1;
    if (n < (one_ok ? 1 : 2))
        return error_after(r, "%s needs %s: write `%s SEQUENCE_BITS DOMAIN_BITS`", key,
                           n == 0 ? "two thresholds in bits" : "a second threshold, the domain's",
                           key);
    if (n == 1)
        h->meta.cut[which][1] = h->meta.cut[which][0];
    h->meta.has[META_GA + which] = 1;
    return 0;
}

static const char *const STATS_NAMES[3] = {"MSV", "VITERBI", "FORWARD"};

/* STATS LOCAL MSV|VITERBI mu lambda, STATS LOCAL FORWARD tau lambda. */
static int stats_line(const Reader *r, H2 *h)
{
    static const char usage[] = "STATS LOCAL MSV|VITERBI MU LAMBDA or STATS LOCAL FORWARD TAU LAMBDA";
    if (r->ntok < 2 || strcasecmp(r->tok[1], "LOCAL") != 0)
        return r->ntok < 2 ? error_after(r, "STATS: expected `%s`", usage)
                           : error_tok(r, r->tok[1], "STATS: expected LOCAL, found '%s': write "
                                       "`%s`", r->tok[1], usage);
    if (r->ntok < 3)
        return error_after(r, "STATS LOCAL: MSV, VITERBI or FORWARD is missing: write `%s`",
                           usage);
    int which = -1;
    for (int i = 0; i < 3; i++)
        if (strcasecmp(r->tok[2], STATS_NAMES[i]) == 0)
            which = i;
    if (which < 0)
        return error_tok(r, r->tok[2], "STATS LOCAL: '%s' is not MSV, VITERBI or FORWARD",
                         r->tok[2]);
    const char *first = which == 2 ? "tau" : "mu";
    if (r->ntok < 5)
        return error_after(r, "STATS LOCAL %s needs two numbers, %s and lambda; found %d: "
                           "write `STATS LOCAL %s %s LAMBDA`", STATS_NAMES[which], first,
                           r->ntok - 3, STATS_NAMES[which], which == 2 ? "TAU" : "MU");
    if (r->ntok > 5)
        return error_tok(r, r->tok[5], "STATS LOCAL %s takes two numbers, %s and lambda; "
                         "this is a third", STATS_NAMES[which], first);
    double *v = h->meta.stats[which];
    if (meta_number(r, r->tok[3], 0, &v[0], first) < 0 ||
        meta_number(r, r->tok[4], 0, &v[1], "lambda") < 0)
        return -1;
    if (v[1] <= 0)
        return error_tok(r, r->tok[4], "STATS LOCAL %s: lambda must be above 0, not %s",
                         STATS_NAMES[which], r->tok[4]);
    h->meta.has[META_STATS_MSV + which] = 1;
    return 0;
}

/* HMMER3/a's STATS: LOCAL VLAMBDA x, LOCAL VMU x, LOCAL FTAU x, read as
 * HMMER reads them: lambda is every algorithm's, mu is MSV's and Viterbi's. */
static int stats_line_3a(const Reader *r, H2 *h)
{
    static const char usage[] = "STATS LOCAL VLAMBDA|VMU|FTAU VALUE";
    static const char *const names[] = {"VLAMBDA", "VMU", "FTAU"};
    if (r->ntok < 3 || strcasecmp(r->tok[1], "LOCAL") != 0)
        return r->ntok < 2 || strcasecmp(r->tok[1], "LOCAL") == 0
                   ? error_after(r, "STATS: expected `%s` (HMMER3/a)", usage)
                   : error_tok(r, r->tok[1], "STATS: expected LOCAL, found '%s': write `%s` "
                               "(HMMER3/a)", r->tok[1], usage);
    int which = -1;
    for (int i = 0; i < 3; i++)
        if (strcasecmp(r->tok[2], names[i]) == 0)
            which = i;
    if (which < 0)
        return error_tok(r, r->tok[2], "STATS LOCAL: '%s' is not VLAMBDA, VMU or FTAU "
                         "(HMMER3/a)", r->tok[2]);
    if (r->ntok < 4)
        return error_after(r, "STATS LOCAL %s: the value is missing: write `%s` (HMMER3/a)",
                           names[which], usage);
    if (r->ntok > 4)
        return error_tok(r, r->tok[4], "STATS LOCAL %s takes one value (HMMER3/a)",
                         names[which]);
    double x;
    if (meta_number(r, r->tok[3], 0, &x, names[which]) < 0)
        return -1;
    double (*s)[2] = h->meta.stats;
    if (which == 0) {
        if (x <= 0)
            return error_tok(r, r->tok[3], "STATS LOCAL VLAMBDA must be above 0, not %s",
                             r->tok[3]);
        s[0][1] = s[1][1] = s[2][1] = x;
    } else if (which == 1) {
        s[0][0] = s[1][0] = x;
    } else {
        s[2][0] = x;
    }
    h->meta.seen_3a |= 1 << which;
    if (h->meta.seen_3a == 7)
        h->meta.has[META_STATS_MSV] = h->meta.has[META_STATS_VITERBI] =
            h->meta.has[META_STATS_FORWARD] = 1;
    return 0;
}

int hmmer_meta_line(Reader *r, H2 *h, char version)
{
    const char *key = r->tok[0];
    HmmerMeta *m = &h->meta;
    unsigned long n;
    if (strcmp(key, "ACC") == 0) {
        if (one_value(r, "ACC ACCESSION") < 0)
            return -1;
        free(m->acc);
        m->acc = xstrdup(r->tok[1]);
        m->has[META_ACC] = 1;
    } else if (strcmp(key, "DESC") == 0) {
        free(m->desc);
        m->desc = xstrdup(rest_of_line(r, 1)); /* HMMER2 allows a bare DESC */
        m->has[META_DESC] = 1;
    } else if (strcmp(key, "GA") == 0 || strcmp(key, "TC") == 0 || strcmp(key, "NC") == 0) {
        return cutoffs(r, h, key[0] == 'G' ? 0 : key[0] == 'T' ? 1 : 2);
    } else if (strcmp(key, "STATS") == 0 && version != '2') {
        return version == 'a' ? stats_line_3a(r, h) : stats_line(r, h);
    } else if (strcmp(key, "EVD") == 0 && version == '2') {
        if (r->ntok != 3)
            return r->ntok < 3 ? error_after(r, "EVD needs two numbers: write `EVD MU LAMBDA`")
                               : error_tok(r, r->tok[3], "EVD takes two numbers, mu and lambda");
        if (meta_number(r, r->tok[1], 0, &m->evd[0], "EVD mu") < 0 ||
            meta_number(r, r->tok[2], 0, &m->evd[1], "EVD lambda") < 0)
            return -1;
        if (m->evd[1] <= 0)
            return error_tok(r, r->tok[2], "EVD: lambda must be above 0, not %s", r->tok[2]);
        m->has[META_EVD] = 1;
    } else if (strcmp(key, "NSEQ") == 0) {
        if (one_value(r, "NSEQ COUNT") < 0 ||
            meta_integer(r, r->tok[1], 1, 2000000000UL, &n, "NSEQ") < 0)
            return -1;
        m->nseq = (long)n;
        m->has[META_NSEQ] = 1;
    } else if (strcmp(key, "MAXL") == 0 && version != '2') {
        if (one_value(r, "MAXL LENGTH") < 0 ||
            meta_integer(r, r->tok[1], 1, 2000000000UL, &n, "MAXL") < 0)
            return -1;
        m->maxl = (long)n;
        m->has[META_MAXL] = 1;
    } else if (strcmp(key, "CKSUM") == 0) {
        if (one_value(r, "CKSUM NUMBER") < 0 ||
            meta_integer(r, r->tok[1], 0, 4294967295UL, &m->cksum, "CKSUM") < 0)
            return -1;
        m->has[META_CKSUM] = 1;
    } else if (strcmp(key, "EFFN") == 0 && version != '2') {
        if (one_value(r, "EFFN NUMBER") < 0 || meta_number(r, r->tok[1], 0, &m->effn, "EFFN") < 0)
            return -1;
        if (m->effn <= 0)
            return error_tok(r, r->tok[1], "EFFN: the effective number of sequences must be "
                             "above 0, not %s", r->tok[1]);
        m->has[META_EFFN] = 1;
    } else {
        return 0;
    }
    return 1;
}

int hmmer_meta_check(const Reader *r, const H2 *h)
{
    const char *have[3], *lack[3];
    int nhave = 0, nlack = 0;
    for (int i = 0; i < 3; i++) {
        if (h->meta.has[META_STATS_MSV + i])
            have[nhave++] = STATS_NAMES[i];
        else
            lack[nlack++] = STATS_NAMES[i];
    }
    if (h->meta.seen_3a && h->meta.seen_3a != 7)
        return error_at(r, "the header has some of the STATS LOCAL VLAMBDA, VMU and FTAU lines "
                        "but not all three: HMMER needs each of them, or none");
    if (nhave > 0 && nlack > 0)
        return error_at(r, "the header has a STATS LOCAL %s line but no STATS LOCAL %s%s%s: "
                        "HMMER needs all three (MSV, VITERBI, FORWARD) or none", have[0],
                        lack[0], nlack > 1 ? " or " : "", nlack > 1 ? lack[1] : "");
    return 0;
}

void hmmer_meta_write(FILE *out, const char *prefix, const HmmerMeta *m)
{
    static const char *const cut_names[3] = {"GA", "TC", "NC"};
    fprintf(out, "%s FORMAT %s\n", prefix, m->format);
    if (m->name)
        fprintf(out, "%s NAME %s\n", prefix, m->name);
    if (m->has[META_ACC])
        fprintf(out, "%s ACC %s\n", prefix, m->acc);
    if (m->has[META_DESC])
        fprintf(out, "%s DESC%s%s\n", prefix, *m->desc ? " " : "", m->desc); /* may be bare */
    fprintf(out, "%s LENG %ld\n", prefix, m->leng);
    if (m->has[META_MAXL])
        fprintf(out, "%s MAXL %ld\n", prefix, m->maxl);
    fprintf(out, "%s ALPH %s\n", prefix, m->alph);
    if (m->has[META_NSEQ])
        fprintf(out, "%s NSEQ %ld\n", prefix, m->nseq);
    if (m->has[META_EFFN])
        fprintf(out, "%s EFFN %.9g\n", prefix, m->effn);
    if (m->has[META_CKSUM])
        fprintf(out, "%s CKSUM %lu\n", prefix, m->cksum);
    for (int i = 0; i < 3; i++)
        if (m->has[META_GA + i])
            fprintf(out, "%s %s %.9g %.9g\n", prefix, cut_names[i], m->cut[i][0], m->cut[i][1]);
    for (int i = 0; i < 3; i++)
        if (m->has[META_STATS_MSV + i])
            fprintf(out, "%s STATS LOCAL %s %.9g %.9g\n", prefix, STATS_NAMES[i],
                    m->stats[i][0], m->stats[i][1]);
    if (m->has[META_EVD])
        fprintf(out, "%s EVD %.9g %.9g\n", prefix, m->evd[0], m->evd[1]);
}

void hmmer_meta_free(HmmerMeta *m)
{
    free(m->name);
    free(m->acc);
    free(m->desc);
}
