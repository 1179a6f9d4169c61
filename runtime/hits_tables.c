/* hits_tables.c: what the hits mode writes: the ranked list on standard
 * output (in the spirit of hmmsearch's), and --tblout and --domtblout in the
 * column layout of hmmsearch 3.3.2's (p7_tophits_TabularTargets and
 * TabularDomains), `-` in the columns hmmc does not compute. */
#include "hits.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int max_int(int a, int b) { return a > b ? a : b; }

static int target_width(const hmmrt_hits *h)
{
    return max_int(20, (int)h->longest_name);
}

static const char *query_acc(const hmmrt_hits *h)
{
    return h->info->acc && *h->info->acc ? h->info->acc : "-";
}

static int query_acc_width(const hmmrt_hits *h)
{
    return h->info->acc ? max_int(10, (int)strlen(h->info->acc)) : 10;
}

/* HMMER's "# Program: ..." lines after a table, naming hmmc. */
void hmmrt_hits_write_tail(const hmmrt_hits *h, FILE *f)
{
    const hmmrt_options *o = h->o;
    char cwd[4096];
    time_t now = time(NULL);
    char date[64];
    if (!ctime_r(&now, date))
        strcpy(date, "-\n");
    fprintf(f, "#\n# Program:         %s (hits mode of a program compiled by hmmc)\n",
            hmmrt_progname());
    fprintf(f, "# Version:         hmmc %s\n", HMMRT_VERSION);
    fprintf(f, "# Pipeline mode:   %s\n", o->hits.scan ? "SCAN" : "SEARCH");
    if (!o->hits.scan)
        fprintf(f, "# Query file:      %s\n# Target file:    ", h->prog->source);
    else /* hmmscan: the sequences are the queries */
        fprintf(f, "# Query file:     ");
    for (int i = 0; i < o->n_files; i++)
        fprintf(f, " %s", o->files[i]);
    if (o->hits.scan)
        fprintf(f, "\n# Target file:     %s", h->prog->source);
    fprintf(f, "\n# Option settings:");
    for (int i = 0; i < o->argc; i++)
        fprintf(f, " %s", o->argv[i]);
    fprintf(f, " \n# Current dir:     %s\n", getcwd(cwd, sizeof cwd) ? cwd : "-");
    fprintf(f, "# Date:            %s# [ok]\n", date);
}

void hmmrt_hits_write_tblout(const hmmrt_hits *h, FILE *f)
{
    const char *qname = h->info->query;
    int tnamew = target_width(h), taccw = 10, qaccw = query_acc_width(h);
    int qnamew = max_int(20, (int)strlen(qname));
    if (h->first_query) /* a file of many models: one header, as hmmsearch's */
        fprintf(f, "#%*s %22s %22s %33s\n", tnamew + qnamew + taccw + qaccw + 2, "",
            "--- full sequence ----", "--- best 1 domain ----", "--- domain number estimation ----");
    if (h->first_query)
        fprintf(f, "#%-*s %-*s %-*s %-*s %9s %6s %5s %9s %6s %5s %5s %3s %3s %3s %3s %3s %3s %3s %s\n",
            tnamew - 1, " target name", taccw, "accession", qnamew, "query name", qaccw,
            "accession", "  E-value", " score", " bias", "  E-value", " score", " bias", "exp",
            "reg", "clu", " ov", "env", "dom", "rep", "inc", "description of target");
    if (h->first_query)
        fprintf(f, "#%*s %*s %*s %*s %9s %6s %5s %9s %6s %5s %5s %3s %3s %3s %3s %3s %3s %3s %s\n",
            tnamew - 1, "-------------------", taccw, "----------", qnamew,
            "--------------------", qaccw, "----------", "---------", "------", "-----",
            "---------", "------", "-----", "---", "---", "---", "---", "---", "---", "---", "---",
            "---------------------");
    for (size_t i = 0; i < h->n; i++) {
        const hmmrt_hit *hit = &h->hits[i];
        if (!hit->reported)
            continue;
        int rep = 0, inc = 0;
        for (int d = 0; d < hit->n_domains; d++) {
            rep += hit->domains[d].reported;
            inc += hit->domains[d].included;
        }
        fprintf(f, "%-*s %-*s %-*s %-*s %9.2g %6.1f %5.1f ", tnamew, hit->name, taccw, "-",
                qnamew, qname, qaccw, query_acc(h), exp(hit->lnP) * h->Z, hit->bits, hit->bias);
        if (hit->best >= 0)
            fprintf(f, "%9.2g %6.1f %5.1f ", exp(hit->domains[hit->best].lnP) * h->Z,
                    hit->domains[hit->best].bits, hit->domains[hit->best].bias);
        else
            fprintf(f, "%9s %6s %5s ", "-", "-", "-");
        if (h->has_domains)
            fprintf(f, "%5s %3s %3s %3s %3s %3d %3d %3d -\n", "-", "-", "-", "-", "-",
                    hit->n_domains, rep, inc);
        else
            fprintf(f, "%5s %3s %3s %3s %3s %3s %3s %3s -\n", "-", "-", "-", "-", "-", "-", "-",
                    "-");
    }
    if (h->last_query)
        hmmrt_hits_write_tail(h, f);
}

void hmmrt_hits_write_domtblout(const hmmrt_hits *h, FILE *f)
{
    const char *qname = h->info->query;
    int tnamew = target_width(h), taccw = 10, qaccw = query_acc_width(h);
    int qnamew = max_int(20, (int)strlen(qname));
    if (h->first_query)
        fprintf(f, "#%*s %22s %40s %11s %11s %11s\n", tnamew + qnamew - 1 + 15 + taccw + qaccw, "",
            "--- full sequence ---", "-------------- this domain -------------", "hmm coord",
            "ali coord", "env coord");
    if (h->first_query)
        fprintf(f, "#%-*s %-*s %5s %-*s %-*s %5s %9s %6s %5s %3s %3s %9s %9s %6s %5s %5s %5s %5s %5s "
               "%5s %5s %4s %s\n",
            tnamew - 1, " target name", taccw, "accession", "tlen", qnamew, "query name", qaccw,
            "accession", "qlen", "E-value", "score", "bias", "#", "of", "c-Evalue", "i-Evalue",
            "score", "bias", "from", "to", "from", "to", "from", "to", "acc",
            "description of target");
    if (h->first_query)
        fprintf(f, "#%*s %*s %5s %*s %*s %5s %9s %6s %5s %3s %3s %9s %9s %6s %5s %5s %5s %5s %5s %5s "
               "%5s %4s %s\n",
            tnamew - 1, "-------------------", taccw, "----------", "-----", qnamew,
            "--------------------", qaccw, "----------", "-----", "---------", "------", "-----",
            "---", "---", "---------", "---------", "------", "-----", "-----", "-----", "-----",
            "-----", "-----", "-----", "----", "---------------------");
    for (size_t i = 0; i < h->n; i++) {
        const hmmrt_hit *hit = &h->hits[i];
        if (!hit->reported)
            continue;
        int of = 0, nd = 0;
        for (int d = 0; d < hit->n_domains; d++)
            of += hit->domains[d].reported;
        for (int d = 0; d < hit->n_domains; d++) {
            const hmmrt_domain *dom = &hit->domains[d];
            if (!dom->reported)
                continue;
            fprintf(f, "%-*s %-*s %5lld %-*s %-*s %5ld %9.2g %6.1f %5.1f %3d %3d %9.2g %9.2g "
                       "%6.1f %5.1f %5ld %5ld %5lld %5lld %5lld %5lld %4s -\n",
                    tnamew, hit->name, taccw, "-", (long long)hit->length, qnamew, qname, qaccw,
                    query_acc(h), h->info->M, exp(hit->lnP) * h->Z, hit->bits, hit->bias, ++nd, of,
                    exp(dom->lnP) * h->domZ, exp(dom->lnP) * h->Z, dom->bits, dom->bias, dom->hmm_from,
                    dom->hmm_to, (long long)dom->ali_from, (long long)dom->ali_to,
                    (long long)dom->ali_from, (long long)dom->ali_to, "-");
        }
    }
    if (h->last_query)
        hmmrt_hits_write_tail(h, f);
}

/* ---- the ranked list on standard output ----------------------------------- */

void hmmrt_hits_outf(hmmrt_out *out, const char *fmt, ...)
{
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof line) { /* a long name: write it in full */
        char *big = malloc((size_t)n + 1);
        if (big) {
            va_start(ap, fmt);
            vsnprintf(big, (size_t)n + 1, fmt, ap);
            va_end(ap);
            hmmrt_out_write(out, big, (size_t)n);
            free(big);
            return;
        }
        n = (int)sizeof line - 1;
    }
    if (n > 0)
        hmmrt_out_write(out, line, (size_t)n);
}

void hmmrt_hits_write_thresholds(const hmmrt_hits *h, hmmrt_out *out)
{
    const hmmrt_hits_options *opt = h->opt;
    static const char *const cuts[3] = {"GA", "TC", "NC"};
    if (opt->cut != HMMRT_CUT_NONE && h->prog->hits->n_queries > 1) {
        hmmrt_hits_outf(out, "# model-specific thresholding:   %s cutoffs (each model's own)\n",
                        cuts[opt->cut]);
        return;
    }
    if (opt->cut != HMMRT_CUT_NONE) {
        hmmrt_hits_outf(out, "# model-specific thresholding:   %s cutoffs (%g bits per sequence, %g per "
                  "domain)\n", cuts[opt->cut], h->info->cut[opt->cut][0],
             h->info->cut[opt->cut][1]);
        return;
    }
    if (opt->by_E)
        hmmrt_hits_outf(out, "# sequence reporting threshold:    E-value <= %g\n", opt->E);
    else
        hmmrt_hits_outf(out, "# sequence reporting threshold:    score >= %g\n", opt->T);
    if (h->strands) /* nhmmer: no domain thresholds */
        ;
    else if (opt->dom_by_E)
        hmmrt_hits_outf(out, "# domain reporting threshold:      E-value <= %g\n", opt->domE);
    else
        hmmrt_hits_outf(out, "# domain reporting threshold:      score >= %g\n", opt->domT);
    if (opt->inc_by_E)
        hmmrt_hits_outf(out, "# sequence inclusion threshold:    E-value <= %g\n", opt->incE);
    else
        hmmrt_hits_outf(out, "# sequence inclusion threshold:    score >= %g\n", opt->incT);
}

static char end_mark(int64_t at, int64_t edge, char mark)
{
    return at == edge ? mark : '.';
}

void hmmrt_hits_write_domain_block(const hmmrt_hits *h, const hmmrt_hit *hit, const char *name,
                                   const char *desc, int M, hmmrt_out *out)
{
    hmmrt_hits_outf(out, ">> %s  %s\n", name, desc);
    int any = 0;
    for (int d = 0; d < hit->n_domains; d++)
        any |= hit->domains[d].reported;
    if (!any) {
        hmmrt_hits_outf(out, "   [No individual domains that satisfy reporting thresholds (although "
                  "complete target did)]\n\n");
        return;
    }
    hmmrt_hits_outf(out, "   #    score  bias  c-Evalue  i-Evalue hmmfrom  hmm to    alifrom  ali to    "
              "envfrom  env to     acc\n");
    hmmrt_hits_outf(out, " ---   ------ ----- --------- --------- ------- -------    ------- -------    "
              "------- -------    ----\n");
    int nd = 0;
    for (int d = 0; d < hit->n_domains; d++) {
        const hmmrt_domain *dom = &hit->domains[d];
        if (!dom->reported)
            continue;
        char hf = end_mark(dom->hmm_from, 1, '['), ht = end_mark(dom->hmm_to, M, ']');
        char af = end_mark(dom->ali_from, 1, '['), at = end_mark(dom->ali_to, hit->length, ']');
        hmmrt_hits_outf(out, " %3d %c %6.1f %5.1f %9.2g %9.2g %7ld %7ld %c%c %7lld %7lld %c%c %7lld %7lld "
                  "%c%c %4s\n",
             ++nd, dom->included ? '!' : '?', dom->bits, dom->bias, exp(dom->lnP) * h->domZ,
             exp(dom->lnP) * h->Z, dom->hmm_from, dom->hmm_to, hf, ht, (long long)dom->ali_from,
             (long long)dom->ali_to, af, at, (long long)dom->ali_from, (long long)dom->ali_to,
             af, at, "-");
    }
    hmmrt_hits_outf(out, "\n");
}

static void hmmrt_hits_write_query(const hmmrt_hits *h, hmmrt_out *out);

void hmmrt_hits_write_list(const hmmrt_hits *h, hmmrt_out *out)
{
    if (h->first_query)
        hmmrt_hits_write_preamble(h, out);
    hmmrt_hits_write_query(h, out);
    if (h->last_query)
        hmmrt_hits_outf(out, "[ok]\n");
}

void hmmrt_hits_write_preamble(const hmmrt_hits *h, hmmrt_out *out)
{
    const hmmrt_options *o = h->o;
    hmmrt_hits_outf(out, "# %s: the hits mode of a program compiled by hmmc %s (docs/hmmer.md)\n",
         hmmrt_progname(), HMMRT_VERSION);
    if (!o->hits.scan)
        hmmrt_hits_outf(out, "# query HMM file:                  %s\n", h->prog->source);
    hmmrt_hits_outf(out, o->hits.scan ? "# query sequence file:            "
                                      : "# target sequence database:       ");
    for (int i = 0; i < o->n_files; i++)
        hmmrt_hits_outf(out, " %s", o->files[i]);
    hmmrt_hits_outf(out, "\n");
    if (o->hits.scan) /* hmmscan: the models are the targets */
        hmmrt_hits_outf(out, "# target HMM database:             %s\n", h->prog->source);
    if (h->opt->tblout)
        hmmrt_hits_outf(out, "# per-seq hits tabular output:     %s\n", h->opt->tblout);
    if (h->opt->domtblout)
        hmmrt_hits_outf(out, "# per-dom hits tabular output:     %s\n", h->opt->domtblout);
    hmmrt_hits_write_thresholds(h, out);
    if (h->opt->Z_set)
        hmmrt_hits_outf(out, "# sequence search space set to:   %g\n", h->opt->Z);
    if (h->opt->nonull2)
        hmmrt_hits_outf(out, "# null2 bias corrections:          off\n");
    if (h->opt->scan)
        hmmrt_hits_outf(out, "# each sequence against every model (--hmmscan): %d models\n",
                        h->n_queries);
    hmmrt_hits_outf(out, "# - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -\n\n");
}

static void hmmrt_hits_write_query(const hmmrt_hits *h, hmmrt_out *out)
{
    const hmmrt_hits_info *info = h->info;
    hmmrt_hits_outf(out, "Query:       %s  [M=%ld]\n", info->query, info->M);
    if (info->acc)
        hmmrt_hits_outf(out, "Accession:   %s\n", info->acc);
    if (info->desc)
        hmmrt_hits_outf(out, "Description: %s\n", info->desc);
    int namew = max_int(8, (int)h->longest_name);
    hmmrt_hits_outf(out, "Scores for complete sequences (score includes all domains):\n");
    hmmrt_hits_outf(out, "   --- full sequence ---   --- best 1 domain ---    -#dom-\n");
    hmmrt_hits_outf(out, "    E-value  score  bias    E-value  score  bias    exp  N  %-*s %s\n", namew,
         "Sequence", "Description");
    hmmrt_hits_outf(out, "    ------- ------ -----    ------- ------ -----   ---- --  %-*s %s\n", namew,
         "--------", "-----------");
    int inclusion_line = 0;
    for (size_t i = 0; i < h->n; i++) {
        const hmmrt_hit *hit = &h->hits[i];
        if (!hit->reported)
            continue;
        if (!hit->included && !inclusion_line) {
            hmmrt_hits_outf(out, "  ------ inclusion threshold ------\n");
            inclusion_line = 1;
        }
        const hmmrt_domain *best = hit->best >= 0 ? &hit->domains[hit->best] : NULL;
        hmmrt_hits_outf(out, "  %9.2g %6.1f %5.1f  ", exp(hit->lnP) * h->Z, hit->bits, hit->bias);
        if (best)
            hmmrt_hits_outf(out, "%9.2g %6.1f %5.1f  %5s %2d", exp(best->lnP) * h->Z, best->bits, best->bias, "-",
                 hit->n_domains);
        else
            hmmrt_hits_outf(out, "%9s %6s %5s  %5s %2s", "-", "-", "-", "-", "-");
        hmmrt_hits_outf(out, "  %-*s %s\n", namew, hit->name, "-");
    }
    if (h->n_reported == 0)
        hmmrt_hits_outf(out, "\n   [No hits detected that satisfy reporting thresholds]\n");
    if (h->has_domains && h->n_reported > 0) {
        hmmrt_hits_outf(out, "\n\nDomain annotation for each sequence:\n");
        for (size_t i = 0; i < h->n; i++)
            if (h->hits[i].reported)
                hmmrt_hits_write_domain_block(h, &h->hits[i], h->hits[i].name, "-", h->info->M,
                                              out);
    }
    hmmrt_hits_outf(out, "\nInternal pipeline statistics summary:\n-------------------------------------\n");
    hmmrt_hits_outf(out, "Query model(s):                   %12d  (%ld nodes)\n", 1, info->M);
    hmmrt_hits_outf(out, "Target sequences:                 %12lld  (%lld residues searched)\n",
         (long long)h->searched, (long long)h->residues);
    hmmrt_hits_outf(out, "Sequences reported:               %12lld  (%lld included)\n",
         (long long)h->n_reported, (long long)h->n_included);
    hmmrt_hits_outf(out, "Domain search space  (domZ):      %12.0f  [%s]\n", h->domZ,
         h->opt->domZ_set ? "as set by --domZ" : "number of targets reported over threshold");
    hmmrt_hits_outf(out, "//\n");
}
