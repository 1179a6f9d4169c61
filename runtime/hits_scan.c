/* hits_scan.c: --hmmscan, the hits mode of a program of many models turned
 * around as hmmscan does: each sequence against every model, its hits (the
 * models) ranked and written as soon as it is scored, E-values for Z = the
 * number of models, and hmmscan 3.3.2's --tblout and --domtblout layouts
 * (target: the model, query: the sequence). docs/hmmer.md. */
#include "hits.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int max_int(int a, int b) { return a > b ? a : b; }

static const char *or_dash(const char *s) { return s && *s ? s : "-"; }

/* hmmscan's order: sortkey, larger first; then the model's name; then the
 * file's order. */
static int by_rank(const void *a, const void *b)
{
    const hmmrt_hit *x = a, *y = b;
    if (x->sortkey != y->sortkey)
        return x->sortkey < y->sortkey ? 1 : -1;
    int c = strcmp(x->model->query, y->model->query);
    if (c)
        return c;
    return (x->index > y->index) - (x->index < y->index);
}

/* p7_tophits_Threshold over one sequence's hits (each model's own cutoffs),
 * then hmmscan's ranking. */
static void threshold(hmmrt_hits *h, hmmrt_hit *hits, size_t n)
{
    h->Z = h->opt->Z_set ? h->opt->Z : (double)h->n_queries; /* hmmscan: the models searched */
    hmmrt_hits_threshold(h, hits, n);
    if (n > 1)
        qsort(hits, n, sizeof *hits, by_rank);
}

/* Frees the domains of the sequence's n hits: nothing is kept. */
static void release(hmmrt_hits *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(h->hits[i].domains);
    h->n = 0;
}

/* 1 when a hit of this score may pass the reporting threshold (null2 only
 * lowers a score). */
static int may_report(const hmmrt_hits *h, const hmmrt_hits_info *m, double bits)
{
    const hmmrt_hits_options *opt = h->opt;
    if (opt->cut != HMMRT_CUT_NONE)
        return bits >= m->cut[opt->cut][0];
    if (!opt->by_E)
        return bits >= opt->T;
    double Z = opt->Z_set ? opt->Z : (double)h->n_queries;
    return hmmrt_hits_lnP(bits, m->tau, m->lambda) + log(Z) <= log(opt->E);
}

void hmmrt_hmmscan_bounds(hmmrt_hits *h)
{
    const hmmrt_hits_options *opt = h->opt;
    double Z = opt->Z_set ? opt->Z : (double)h->n_queries;
    for (int k = 0; k < h->n_queries; k++) { /* Z is fixed: set once */
        h->queries[k].sure_Z = Z;
        h->queries[k].sure_bits = hmmrt_hits_sure_bits(h->queries[k].info, opt, Z);
    }
}

int hmmrt_hmmscan_may_report(const hmmrt_hits *h, int k, double nats)
{
    if (isnan(nats) || nats == -INFINITY)
        return 0;
    double bits = nats / M_LN2;
    if (bits < h->queries[k].sure_bits) /* may_report would say no */
        return 0;
    return may_report(h, h->queries[k].info, bits);
}

int hmmrt_hmmscan_hit(hmmrt_hits *h, int k, const hmmrt_record *rec, const hmmrt_value *values,
                      const uint8_t *codes, hmmrt_hit *hit)
{
    hmmrt_hits *q = &h->queries[k];
    const hmmrt_hits_info *m = q->info;
    *hit = (hmmrt_hit){.length = rec->length, .index = k,
                       .bits = values[m->score_column].score / M_LN2, .best = -1, .model = m};
    int status = q->has_domains ? hmmrt_hits_domains(q, hit, values, codes) : 0;
    if (status == 0 && !h->opt->nonull2 &&
        (hmmrt_hits_paths(q) != 0 || hmmrt_hits_null2(q, hit, codes) != 0))
        status = -1;
    if (status != 0)
        return status;
    hit->lnP = hmmrt_hits_lnP(hit->bits, m->tau, m->lambda);
    for (int d = 0; d < hit->n_domains; d++) {
        hmmrt_domain *dom = &hit->domains[d];
        dom->lnP = hmmrt_hits_lnP(dom->bits, m->tau, m->lambda);
        if (hit->best < 0 || dom->bits > hit->domains[hit->best].bits)
            hit->best = d;
    }
    return 0;
}

/* Each reported model's domains, as hmmscan's "Domain annotation for each
 * model" (without the alignments). */
static void write_domains(hmmrt_hits *h, const hmmrt_hit *hits, size_t n)
{
    hmmrt_out *out = h->out;
    hmmrt_hits_outf(out, "\n\nDomain annotation for each model:\n");
    for (size_t i = 0; i < n; i++) {
        const hmmrt_hit *hit = &hits[i];
        if (!hit->reported)
            continue;
        hmmrt_hits_write_domain_block(h, hit, hit->model->query,
                                      hit->model->desc ? hit->model->desc : "", hit->model->M, out);
    }
}

static void write_list(hmmrt_hits *h, const hmmrt_record *rec, const hmmrt_hit *hits, size_t n)
{
    hmmrt_out *out = h->out;
    if (h->scan_written++ == 0)
        hmmrt_hits_write_preamble(h, out);
    int namew = max_int(8, (int)h->longest_model);
    hmmrt_hits_outf(out, "Query:       %s  [L=%lld]\n", rec->name, (long long)rec->length);
    hmmrt_hits_outf(out, "Scores for complete sequence (score includes all domains):\n");
    hmmrt_hits_outf(out, "   --- full sequence ---   --- best 1 domain ---    -#dom-\n");
    hmmrt_hits_outf(out, "    E-value  score  bias    E-value  score  bias    exp  N  %-*s %s\n",
                    namew, "Model", "Description");
    hmmrt_hits_outf(out, "    ------- ------ -----    ------- ------ -----   ---- --  %-*s %s\n",
                    namew, "--------", "-----------");
    int inclusion_line = 0;
    for (size_t i = 0; i < n; i++) {
        const hmmrt_hit *hit = &hits[i];
        if (!hit->reported)
            continue;
        if (!hit->included && !inclusion_line) {
            hmmrt_hits_outf(out, "  ------ inclusion threshold ------\n");
            inclusion_line = 1;
        }
        hmmrt_hits_outf(out, "  %9.2g %6.1f %5.1f  ", exp(hit->lnP) * h->Z, hit->bits, hit->bias);
        if (hit->best >= 0) {
            const hmmrt_domain *best = &hit->domains[hit->best];
            hmmrt_hits_outf(out, "%9.2g %6.1f %5.1f  %5s %2d", exp(best->lnP) * h->Z, best->bits,
                            best->bias, "-", hit->n_domains);
        } else {
            hmmrt_hits_outf(out, "%9s %6s %5s  %5s %2s", "-", "-", "-", "-", "-");
        }
        hmmrt_hits_outf(out, "  %-*s %s\n", namew, hit->model->query, or_dash(hit->model->desc));
    }
    if (h->n_reported == 0)
        hmmrt_hits_outf(out, "\n   [No hits detected that satisfy reporting thresholds]\n");
    if (h->n_reported > 0)
        write_domains(h, hits, n);
    hmmrt_hits_outf(out, "\nInternal pipeline statistics summary:\n"
                         "-------------------------------------\n");
    hmmrt_hits_outf(out, "Query sequence(s):                %12d  (%lld residues searched)\n", 1,
                    (long long)rec->length);
    hmmrt_hits_outf(out, "Target model(s):                  %12d\n", h->n_queries);
    hmmrt_hits_outf(out, "Initial search space (Z):         %12.0f  [%s]\n", h->Z,
                    h->opt->Z_set ? "as set by -Z on cmdline" : "actual number of targets");
    hmmrt_hits_outf(out, "Domain search space  (domZ):      %12.0f  [%s]\n", h->domZ,
                    h->opt->domZ_set ? "as set by --domZ" : "number of targets reported over "
                                                            "threshold");
    hmmrt_hits_outf(out, "//\n");
}

/* hmmscan 3.3.2's --tblout (p7_tophits_TabularTargets in its scan mode):
 * the header once, over the first sequence's lines. */
static void write_tblout(hmmrt_hits *h, const hmmrt_record *rec, const hmmrt_hit *hits, size_t n,
                         FILE *f)
{
    int tnamew = max_int(20, (int)h->longest_model), taccw = max_int(10, (int)h->longest_acc);
    int qnamew = max_int(20, (int)strlen(rec->name)), qaccw = 10;
    if (h->scan_written == 1) {
        fprintf(f, "#%*s %22s %22s %33s\n", tnamew + qnamew + taccw + qaccw + 2, "",
                "--- full sequence ----", "--- best 1 domain ----",
                "--- domain number estimation ----");
        fprintf(f, "#%-*s %-*s %-*s %-*s %9s %6s %5s %9s %6s %5s %5s %3s %3s %3s %3s %3s %3s "
                   "%3s %s\n",
                tnamew - 1, " target name", taccw, "accession", qnamew, "query name", qaccw,
                "accession", "  E-value", " score", " bias", "  E-value", " score", " bias",
                "exp", "reg", "clu", " ov", "env", "dom", "rep", "inc", "description of target");
        fprintf(f, "#%*s %*s %*s %*s %9s %6s %5s %9s %6s %5s %5s %3s %3s %3s %3s %3s %3s %3s "
                   "%s\n",
                tnamew - 1, "-------------------", taccw, "----------", qnamew,
                "--------------------", qaccw, "----------", "---------", "------", "-----",
                "---------", "------", "-----", "---", "---", "---", "---", "---", "---", "---",
                "---", "---------------------");
    }
    for (size_t i = 0; i < n; i++) {
        const hmmrt_hit *hit = &hits[i];
        if (!hit->reported)
            continue;
        int rep = 0, inc = 0;
        for (int d = 0; d < hit->n_domains; d++) {
            rep += hit->domains[d].reported;
            inc += hit->domains[d].included;
        }
        fprintf(f, "%-*s %-*s %-*s %-*s %9.2g %6.1f %5.1f ", tnamew, hit->model->query, taccw,
                or_dash(hit->model->acc), qnamew, rec->name, qaccw, "-", exp(hit->lnP) * h->Z,
                hit->bits, hit->bias);
        if (hit->best >= 0)
            fprintf(f, "%9.2g %6.1f %5.1f ", exp(hit->domains[hit->best].lnP) * h->Z,
                    hit->domains[hit->best].bits, hit->domains[hit->best].bias);
        else
            fprintf(f, "%9s %6s %5s ", "-", "-", "-");
        fprintf(f, "%5s %3s %3s %3s %3s %3d %3d %3d %s\n", "-", "-", "-", "-", "-",
                hit->n_domains, rep, inc, or_dash(hit->model->desc));
    }
}

/* hmmscan 3.3.2's --domtblout (p7_tophits_TabularDomains in its scan mode:
 * tlen the model's length, qlen the sequence's). */
static void write_domtblout(hmmrt_hits *h, const hmmrt_record *rec, const hmmrt_hit *hits,
                            size_t n, FILE *f)
{
    int tnamew = max_int(20, (int)h->longest_model), taccw = max_int(10, (int)h->longest_acc);
    int qnamew = max_int(20, (int)strlen(rec->name)), qaccw = 10;
    if (h->scan_written == 1) {
        fprintf(f, "#%*s %22s %40s %11s %11s %11s\n", tnamew + qnamew - 1 + 15 + taccw + qaccw,
                "", "--- full sequence ---", "-------------- this domain -------------",
                "hmm coord", "ali coord", "env coord");
        fprintf(f, "#%-*s %-*s %5s %-*s %-*s %5s %9s %6s %5s %3s %3s %9s %9s %6s %5s %5s %5s "
                   "%5s %5s %5s %5s %4s %s\n",
                tnamew - 1, " target name", taccw, "accession", "tlen", qnamew, "query name",
                qaccw, "accession", "qlen", "E-value", "score", "bias", "#", "of", "c-Evalue",
                "i-Evalue", "score", "bias", "from", "to", "from", "to", "from", "to", "acc",
                "description of target");
        fprintf(f, "#%*s %*s %5s %*s %*s %5s %9s %6s %5s %3s %3s %9s %9s %6s %5s %5s %5s %5s "
                   "%5s %5s %5s %4s %s\n",
                tnamew - 1, "-------------------", taccw, "----------", "-----", qnamew,
                "--------------------", qaccw, "----------", "-----", "---------", "------",
                "-----", "---", "---", "---------", "---------", "------", "-----", "-----",
                "-----", "-----", "-----", "-----", "-----", "----", "---------------------");
    }
    for (size_t i = 0; i < n; i++) {
        const hmmrt_hit *hit = &hits[i];
        if (!hit->reported)
            continue;
        int of = 0, nd = 0;
        for (int d = 0; d < hit->n_domains; d++)
            of += hit->domains[d].reported;
        for (int d = 0; d < hit->n_domains; d++) {
            const hmmrt_domain *dom = &hit->domains[d];
            if (!dom->reported)
                continue;
            fprintf(f, "%-*s %-*s %5ld %-*s %-*s %5lld %9.2g %6.1f %5.1f %3d %3d %9.2g %9.2g "
                       "%6.1f %5.1f %5ld %5ld %5lld %5lld %5lld %5lld %4s %s\n",
                    tnamew, hit->model->query, taccw, or_dash(hit->model->acc), hit->model->M,
                    qnamew, rec->name, qaccw, "-", (long long)rec->length, exp(hit->lnP) * h->Z,
                    hit->bits, hit->bias, ++nd, of, exp(dom->lnP) * h->domZ,
                    exp(dom->lnP) * h->Z, dom->bits, dom->bias, dom->hmm_from, dom->hmm_to,
                    (long long)dom->ali_from, (long long)dom->ali_to, (long long)dom->ali_from,
                    (long long)dom->ali_to, "-", or_dash(hit->model->desc));
        }
    }
}

int hmmrt_hmmscan_add(hmmrt_hits *h, const hmmrt_record *rec, const hmmrt_value *values,
                   const uint8_t *codes)
{
    if (isnan(values[h->info->score_column].score))
        return 0; /* not scored (--skip-invalid) */
    size_t len = strlen(rec->name);
    if (len > h->longest_name)
        h->longest_name = len;
    if (h->cap < (size_t)h->n_queries) { /* h->hits: this sequence's, one per model at most */
        hmmrt_hit *grown = realloc(h->hits, (size_t)h->n_queries * sizeof *grown);
        if (!grown)
            return -1;
        h->hits = grown;
        h->cap = (size_t)h->n_queries;
    }
    int status = 0;
    int64_t made = hmmrt_hmmscan_take(h, rec, h->hits, &status); /* made ahead, or -1 */
    size_t n = made >= 0 ? (size_t)made : 0;
    for (int k = 0; made < 0 && k < h->n_queries && !status; k++)
        if (hmmrt_hmmscan_may_report(h, k, values[h->queries[k].info->score_column].score))
            status = hmmrt_hmmscan_hit(h, k, rec, values, codes, &h->hits[n++]);
    if (status != 0) { /* the failed hit's domains are freed too */
        release(h, n);
        return status;
    }
    threshold(h, h->hits, n);
    write_list(h, rec, h->hits, n);
    if (h->tblout)
        write_tblout(h, rec, h->hits, n, h->tblout);
    if (h->domtblout)
        write_domtblout(h, rec, h->hits, n, h->domtblout);
    release(h, n);
    return 0;
}

void hmmrt_hmmscan_finish(hmmrt_hits *h, hmmrt_out *out)
{
    if (h->scan_written == 0) { /* no sequence: the opening lines alone */
        hmmrt_hits_write_preamble(h, out);
        const hmmrt_record none = {.name = ""};
        h->scan_written = 1; /* the headers, as hmmscan writes them for no query */
        if (h->tblout)
            write_tblout(h, &none, NULL, 0, h->tblout);
        if (h->domtblout)
            write_domtblout(h, &none, NULL, 0, h->domtblout);
    }
    hmmrt_hits_outf(out, "[ok]\n");
    if (h->tblout)
        hmmrt_hits_write_tail(h, h->tblout);
    if (h->domtblout)
        hmmrt_hits_write_tail(h, h->domtblout);
}
