/* hits_dna_tables.c: what the hits mode of a DNA model writes, in nhmmer
 * 3.3.2's layouts (p7_tophits_Targets and TabularTargets of a long-target
 * pipeline): the ranked list of hits, one per line with its strand's
 * coordinates, and --tblout. */
#include "hits.h"

#include <math.h>
#include <string.h>

static int max_int(int a, int b) { return a > b ? a : b; }

static int digits(int64_t v)
{
    int n = 1;
    for (; v >= 10; v /= 10)
        n++;
    return n;
}

/* The widest position (or length) of a reported hit. */
static int position_width(const hmmrt_hits *h, int at_least, int with_length)
{
    int w = at_least;
    for (size_t i = 0; i < h->n; i++) {
        const hmmrt_hit *hit = &h->hits[i];
        if (!hit->reported)
            continue;
        w = max_int(w, digits(hit->domains[0].ali_from));
        w = max_int(w, digits(hit->domains[0].ali_to));
        w = max_int(w, digits(hit->domains[0].env_from));
        w = max_int(w, digits(hit->domains[0].env_to));
        if (with_length)
            w = max_int(w, digits(hit->length));
    }
    return w;
}

void hmmrt_hits_write_dna_tblout(const hmmrt_hits *h, FILE *f)
{
    const char *qname = h->info->query, *qacc = h->info->acc && *h->info->acc ? h->info->acc : "-";
    int tnamew = max_int(20, (int)h->longest_name), taccw = 10;
    int qnamew = max_int(20, (int)strlen(qname));
    int qaccw = h->info->acc ? max_int(10, (int)strlen(h->info->acc)) : 10;
    int posw = position_width(h, 7, 1);
    fprintf(f, "#%-*s %-*s %-*s %-*s %s %s %*s %*s %*s %*s %*s %6s %9s %6s %5s  %s\n",
            tnamew - 1, " target name", taccw, "accession", qnamew, "query name", qaccw,
            "accession", "hmmfrom", "hmm to", posw, "alifrom", posw, "ali to", posw, "envfrom",
            posw, "env to", posw, "sq len", "strand", "  E-value", " score", " bias",
            "description of target");
    fprintf(f, "#%*s %*s %*s %*s %s %s %*s %*s %*s %*s %*s %6s %9s %6s %5s %s\n", tnamew - 1,
            "-------------------", taccw, "----------", qnamew, "--------------------", qaccw,
            "----------", "-------", "-------", posw, "-------", posw, "-------", posw,
            "-------", posw, "-------", posw, "-------", "------", "---------", "------",
            "-----", "---------------------");
    for (size_t i = 0; i < h->n; i++) {
        const hmmrt_hit *hit = &h->hits[i];
        if (!hit->reported)
            continue;
        const hmmrt_domain *d = &hit->domains[0];
        fprintf(f, "%-*s %-*s %-*s %-*s %7ld %7ld %*lld %*lld %*lld %*lld %*lld %6s %9.2g %6.1f "
                   "%5.1f  %s\n",
                tnamew, hit->name, taccw, "-", qnamew, qname, qaccw, qacc, d->hmm_from,
                d->hmm_to, posw, (long long)d->ali_from, posw, (long long)d->ali_to, posw,
                (long long)d->env_from, posw, (long long)d->env_to, posw,
                (long long)hit->length, hit->strand == '+' ? "   +  " : "   -  ",
                exp(hit->lnP) * h->Z, hit->bits, d->bias, "-");
    }
    hmmrt_hits_write_tail(h, f);
}

void hmmrt_hits_write_dna_list(const hmmrt_hits *h, hmmrt_out *out)
{
    const hmmrt_hits_info *info = h->info;
    const hmmrt_options *o = h->o;
    static const char *const strands[4] = {"", "top (--watson)", "bottom (--crick)", "both"};
    hmmrt_hits_outf(out, "# %s: the hits mode of a program compiled by hmmc %s, as nhmmer's "
                         "(docs/hmmer.md)\n", hmmrt_progname(), HMMRT_VERSION);
    hmmrt_hits_outf(out, "# query file:                      %s\n", h->prog->source);
    hmmrt_hits_outf(out, "# target sequence database:       ");
    for (int i = 0; i < o->n_files; i++)
        hmmrt_hits_outf(out, " %s", o->files[i]);
    hmmrt_hits_outf(out, "\n");
    if (h->opt->tblout)
        hmmrt_hits_outf(out, "# hits tabular output:             %s\n", h->opt->tblout);
    hmmrt_hits_write_thresholds(h, out);
    hmmrt_hits_outf(out, "# strands searched:                %s\n", strands[h->opt->strands]);
    if (h->opt->Z_set)
        hmmrt_hits_outf(out, "# database size is set to:         %g Mb\n", h->opt->Z);
    hmmrt_hits_outf(out, "# null2 bias corrections:          %s\n", h->opt->nonull2 ? "off" : "on");
    hmmrt_hits_outf(out, "# - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - "
                         "- - -\n\n");
    hmmrt_hits_outf(out, "Query:       %s  [M=%ld]\n", info->query, info->M);
    if (info->acc)
        hmmrt_hits_outf(out, "Accession:   %s\n", info->acc);
    if (info->desc)
        hmmrt_hits_outf(out, "Description: %s\n", info->desc);
    int namew = max_int(8, (int)h->longest_name), posw = position_width(h, 5, 0);
    hmmrt_hits_outf(out, "Scores for complete hits:\n");
    hmmrt_hits_outf(out, "    E-value  score  bias  %-*s %*s %*s  Description\n", namew,
                    "Sequence", posw, "start", posw, "end");
    hmmrt_hits_outf(out, "    ------- ------ -----  %-*s %*s %*s  -----------\n", namew,
                    "--------", posw, "-----", posw, "-----");
    int inclusion_line = 0;
    for (size_t i = 0; i < h->n; i++) {
        const hmmrt_hit *hit = &h->hits[i];
        if (!hit->reported)
            continue;
        if (!hit->included && !inclusion_line) {
            hmmrt_hits_outf(out, "  ------ inclusion threshold ------\n");
            inclusion_line = 1;
        }
        hmmrt_hits_outf(out, "  %9.2g %6.1f %5.1f  %-*s %*lld %*lld \n", exp(hit->lnP) * h->Z,
                        hit->bits, hit->bias, namew, hit->name, posw,
                        (long long)hit->domains[0].ali_from, posw,
                        (long long)hit->domains[0].ali_to);
    }
    if (h->n_reported == 0)
        hmmrt_hits_outf(out, "\n   [No hits detected that satisfy reporting thresholds]\n");
    int n_strands = h->opt->strands == HMMRT_STRAND_BOTH ? 2 : 1;
    hmmrt_hits_outf(out, "\nInternal pipeline statistics summary:\n"
                         "-------------------------------------\n");
    hmmrt_hits_outf(out, "Query model(s):                   %12d  (%ld nodes)\n", 1, info->M);
    hmmrt_hits_outf(out, "Target sequences:                 %12lld  (%lld residues searched)\n",
                    (long long)h->searched, (long long)(h->residues * n_strands));
    hmmrt_hits_outf(out, "Total number of hits:             %12lld  (%lld included)\n",
                    (long long)h->n_reported, (long long)h->n_included);
    hmmrt_hits_outf(out, "E-value per P-value:              %12.6g  (searched / W, W = MAXL = %ld)\n",
                    h->Z, info->maxl);
    hmmrt_hits_outf(out, "//\n[ok]\n");
}
