/* hits.c: the hits mode's bookkeeping: each scored sequence becomes a hit
 * (its forward score in bits, P-value, domains), kept only while it may
 * still pass the reporting threshold, so that memory holds hits, not rows;
 * at the end, hmmsearch's thresholds (p7_tophits_Threshold), its ranking,
 * and the list and tables (hits_tables.c). */
#include "hits.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static FILE *open_table(const char *option, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        hmmrt_error("%s %s: cannot open the file for writing: %s; name a file in a folder you "
                    "can write to", option, path, strerror(errno));
    return f;
}

/* One search: h's model is info's. */
static int open_one(hmmrt_hits *h, const hmmrt_program *prog, const hmmrt_hits_info *info,
                    const hmmrt_options *o)
{
    memset(h, 0, sizeof *h);
    h->prog = prog;
    h->info = info;
    h->opt = &o->hits;
    h->o = o;
    h->first_query = h->last_query = 1;
    h->sure_bits = -INFINITY;
    if (info->traceback_column >= 0 && info->model >= 0) {
        int status = hmmrt_hits_paths(h);
        if (status)
            return status;
        h->has_domains = 1;
    } else if (info->n_queries > 1 && info->model >= 0) {
        /* a program of many models: the best path of each hit made here, with
         * the model's path model made when the model has its first hit */
        h->has_domains = h->own_paths = 1;
    }
    if (info->nucleic && !(h->strands = hmmrt_strands_new(h)))
        return HMMRT_EXIT_INTERNAL;
    return 0;
}

int hmmrt_hits_paths(hmmrt_hits *h)
{
    if (h->paths || h->info->model < 0)
        return 0;
    const hmmrt_model *m = &h->prog->models[h->info->model];
    h->paths = hmmrt_path_model_new(m, h->prog->alphabets[m->alphabet]);
    if (h->paths)
        return 0;
    hmmrt_error("out of memory, or the searched model %s is not a HMMER3 import's "
                "profile (no B, E and C states)", m->name);
    return HMMRT_EXIT_INTERNAL;
}

int hmmrt_hits_open(hmmrt_hits *h, const hmmrt_program *prog, const hmmrt_options *o)
{
    int status = open_one(h, prog, prog->hits, o);
    int n = prog->hits->n_queries;
    if (!status && n > 1) { /* a program of many models: a search per model */
        if (!(h->queries = calloc((size_t)n, sizeof *h->queries)))
            status = HMMRT_EXIT_INTERNAL;
        for (int k = 0; k < n && !status; k++) {
            status = open_one(&h->queries[k], prog, &prog->hits[k], o);
            h->queries[k].first_query = k == 0;
            h->queries[k].last_query = k == n - 1;
            h->n_queries = k + 1;
            size_t name = strlen(prog->hits[k].query);
            size_t acc = prog->hits[k].acc ? strlen(prog->hits[k].acc) : 0;
            h->longest_model = name > h->longest_model ? name : h->longest_model;
            h->longest_acc = acc > h->longest_acc ? acc : h->longest_acc;
        }
        if (status == HMMRT_EXIT_INTERNAL && !h->queries)
            hmmrt_error("out of memory");
    }
    if (status)
        return status;
    if (o->hits.tblout && !(h->tblout = open_table("--tblout", o->hits.tblout)))
        return HMMRT_EXIT_OUTPUT;
    if (o->hits.domtblout && !(h->domtblout = open_table("--domtblout", o->hits.domtblout)))
        return HMMRT_EXIT_OUTPUT;
    for (int k = 0; k < h->n_queries; k++) { /* the files are h's */
        h->queries[k].tblout = h->tblout;
        h->queries[k].domtblout = h->domtblout;
    }
    if (h->queries && o->hits.scan)
        hmmrt_hmmscan_bounds(h);
    return 0;
}

void hmmrt_hits_close(hmmrt_hits *h)
{
    hmmrt_hmmscan_release_ready(h, 1);
    for (int k = 0; k < h->n_queries; k++) {
        h->queries[k].tblout = h->queries[k].domtblout = NULL; /* h's */
        hmmrt_hits_close(&h->queries[k]);
    }
    free(h->queries);
    for (size_t i = 0; i < h->n; i++) {
        free(h->hits[i].name);
        free(h->hits[i].domains);
    }
    free(h->hits);
    hmmrt_strands_free(h->strands);
    hmmrt_path_model_free(h->paths);
    for (int t = 0; t < h->n_thread_paths; t++)
        hmmrt_path_model_free(h->thread_paths[t]);
    free(h->thread_paths);
    hmmrt_buf_free(&h->traceback);
    if (h->tblout)
        fclose(h->tblout);
    if (h->domtblout)
        fclose(h->domtblout);
    memset(h, 0, sizeof *h);
}

/* 1 when a hit of this score and P-value can still be reported: hmmsearch
 * reports P Z <= E, and Z is at least the sequences searched so far and the
 * `ahead` ones scored but not taken yet (nhmmer: the residues searched so
 * far over W). */
static int may_report(const hmmrt_hits *h, double bits, double lnP, int64_t ahead)
{
    const hmmrt_hits_options *opt = h->opt;
    if (opt->cut != HMMRT_CUT_NONE)
        return bits >= h->info->cut[opt->cut][0];
    if (!opt->by_E)
        return bits >= opt->T;
    double Z = h->strands ? hmmrt_strands_Z(h) : opt->Z_set ? opt->Z
                                                          : (double)(h->searched + ahead);
    if (Z >= h->sure_Z && bits < h->sure_bits) /* the test below would say no */
        return 0;
    return lnP + log(Z) <= log(opt->E);
}

double hmmrt_hits_sure_bits(const hmmrt_hits_info *m, const hmmrt_hits_options *opt, double Z)
{
    if (opt->cut != HMMRT_CUT_NONE || !opt->by_E || !(Z > 0))
        return -INFINITY;
    double lnZ = log(Z), lnE = log(opt->E);
    return lnZ > lnE && m->lambda > 0 ? m->tau + (lnZ - lnE) / m->lambda - 1e-6 * (1 + fabs(m->tau))
                                      : -INFINITY;
}

/* Sets the bound may_report reads (hmmrt_hits_sure_bits) for Z = sure_Z and
 * every larger Z (Z only grows, or -Z fixes it). Refreshed each time the
 * count doubles: two logarithms then, none for most sequences. */
static void refresh_sure(hmmrt_hits *h)
{
    const hmmrt_hits_options *opt = h->opt;
    if (h->strands || opt->cut != HMMRT_CUT_NONE || !opt->by_E)
        return;
    double Z = opt->Z_set ? opt->Z : (double)h->searched;
    if (h->sure_Z > 0 && (opt->Z_set || Z < 2 * h->sure_Z))
        return;
    h->sure_Z = Z;
    h->sure_bits = hmmrt_hits_sure_bits(h->info, opt, Z);
}

int hmmrt_hits_may_report(const hmmrt_hits *h, double nats, int64_t before)
{
    if (h->queries) /* many models: no second pass (their main prints no traceback) */
        return 1;
    if (isnan(nats) || nats == -INFINITY)
        return 0;
    double bits = nats / M_LN2; /* Z counts the sequence itself too */
    return may_report(h, bits, hmmrt_hits_lnP(bits, h->info->tau, h->info->lambda), before + 1);
}

/* Drops the hits that can no longer be reported (Z has grown). */
static void prune(hmmrt_hits *h)
{
    size_t kept = 0;
    for (size_t i = 0; i < h->n; i++) {
        if (may_report(h, h->hits[i].bits, h->hits[i].lnP, 0)) {
            h->hits[kept++] = h->hits[i];
        } else {
            free(h->hits[i].name);
            free(h->hits[i].domains);
        }
    }
    h->n = kept;
    h->prune_at = 2 * h->n > 1024 ? 2 * h->n : 1024;
}

int hmmrt_hits_keep(hmmrt_hits *h, hmmrt_hit *hit)
{
    if (!may_report(h, hit->bits, hit->lnP, 0)) {
        free(hit->name);
        free(hit->domains);
        return 0;
    }
    hmmrt_hit *grown = h->n < h->cap ? h->hits : hmmrt_grow(h->hits, &h->cap, h->n + 1,
                                                             sizeof *h->hits, 256);
    if (!hit->name || !grown) {
        free(hit->name);
        free(hit->domains);
        return -1;
    }
    h->hits = grown;
    h->hits[h->n++] = *hit;
    if (h->n >= h->prune_at && h->n >= 1024)
        prune(h);
    return 0;
}

/* The null2 of hmmrt_hits_null2 with path model pm (a thread's). */
static int null2_with(const hmmrt_hits *h, hmmrt_path_model *pm, hmmrt_hit *hit,
                      const uint8_t *codes)
{
    double seq = hmmrt_null2_sequence(pm, codes, hit->length);
    if (isnan(seq))
        return -1;
    hit->bias = seq / M_LN2;
    hit->bits -= hit->bias;
    hit->lnP = hmmrt_hits_lnP(hit->bits, h->info->tau, h->info->lambda);
    for (int d = 0; d < hit->n_domains; d++) {
        hmmrt_domain *dom = &hit->domains[d];
        double b = hmmrt_null2(pm, codes, hit->length, dom->ali_from, dom->ali_to, NULL);
        if (isnan(b))
            return -1;
        dom->bias = b / M_LN2;
        dom->bits -= dom->bias;
    }
    return 0;
}

/* hmmsearch's null2 (hits_null2.c): the sequence's correction, from the
 * envelopes of its posterior decoding, and each domain's, from its stretch
 * of the best path as its envelope, taken from their scores. 0, or -1 out of
 * memory. */
int hmmrt_hits_null2(hmmrt_hits *h, hmmrt_hit *hit, const uint8_t *codes)
{
    return null2_with(h, h->paths, hit, codes);
}

int hmmrt_hits_domains(hmmrt_hits *h, hmmrt_hit *hit, const hmmrt_value *values,
                       const uint8_t *codes)
{
    const char *traceback = "";
    if (h->own_paths) { /* a program of many models: the path made here */
        if (hmmrt_hits_paths(h) != 0)
            return -1;
        int status = hmmrt_path_traceback(h->paths, codes, hit->length, &h->traceback);
        if (status < 0)
            return -1;
        if (status > 0) /* no path: no domains */
            return 0;
        traceback = h->traceback.data;
    } else {
        const hmmrt_buf *tb = &values[h->info->traceback_column].text;
        traceback = tb->len ? tb->data : "";
    }
    return hmmrt_find_domains(h->paths, traceback, codes, hit->length, 1, &hit->domains,
                              &hit->n_domains);
}

int hmmrt_hits_can_prepare(hmmrt_hits *h, int n_threads)
{
    if (h->queries || h->strands || !h->paths || h->own_paths || !h->has_domains || n_threads < 1)
        return 0;
    if (h->n_thread_paths >= n_threads)
        return 1;
    hmmrt_path_model **grown = realloc(h->thread_paths, (size_t)n_threads * sizeof *grown);
    if (!grown)
        return 0;
    h->thread_paths = grown;
    const hmmrt_model *m = &h->prog->models[h->info->model];
    for (; h->n_thread_paths < n_threads; h->n_thread_paths++)
        if (!(grown[h->n_thread_paths] = hmmrt_path_model_new(m, h->prog->alphabets[m->alphabet])))
            return 0;
    return 1;
}

int hmmrt_hits_prepare(const hmmrt_hits *h, int t, const hmmrt_record *rec, int64_t index,
                       const hmmrt_value *values, const uint8_t *codes, hmmrt_hit *hit)
{
    double nats = values[h->info->score_column].score, bits = nats / M_LN2;
    *hit = (hmmrt_hit){.length = rec->length, .index = index, .bits = bits,
                       .lnP = hmmrt_hits_lnP(bits, h->info->tau, h->info->lambda), .best = -1};
    hmmrt_path_model *pm = h->thread_paths[t];
    const hmmrt_buf *tb = &values[h->info->traceback_column].text;
    int status = hmmrt_find_domains(pm, tb->len ? tb->data : "", codes, hit->length, 1,
                                    &hit->domains, &hit->n_domains);
    if (status != 0)
        return status;
    if (!h->opt->nonull2 && null2_with(h, pm, hit, codes) != 0) {
        free(hit->domains);
        hit->domains = NULL;
        return -1;
    }
    return 0;
}

/* Takes hit (its domains found, null2 taken) into the list when it may be
 * reported; frees it otherwise. */
static int keep_made(hmmrt_hits *h, const hmmrt_record *rec, hmmrt_hit *made)
{
    hmmrt_hit hit = *made;
    made->domains = NULL;
    for (int d = 0; d < hit.n_domains; d++) {
        hmmrt_domain *dom = &hit.domains[d];
        dom->lnP = hmmrt_hits_lnP(dom->bits, h->info->tau, h->info->lambda);
        if (hit.best < 0 || dom->bits > hit.domains[hit.best].bits)
            hit.best = d;
    }
    hit.name = strdup(rec->name);
    return hmmrt_hits_keep(h, &hit);
}

void hmmrt_hits_count(hmmrt_hits *h, const hmmrt_record *rec)
{
    h->searched++;
    h->residues += rec->length;
    size_t len = strlen(rec->name);
    if (len > h->longest_name)
        h->longest_name = len;
    refresh_sure(h);
}

int hmmrt_hits_add_prepared(hmmrt_hits *h, const hmmrt_record *rec, hmmrt_hit *ready)
{
    /* the same counting and test as add_one, on the score before null2 */
    hmmrt_hits_count(h, rec);
    double bits = ready->bits + ready->bias, lnP = hmmrt_hits_lnP(bits, h->info->tau,
                                                                   h->info->lambda);
    if (!may_report(h, bits, lnP, 0)) {
        free(ready->domains);
        ready->domains = NULL;
        return 0;
    }
    return keep_made(h, rec, ready);
}

int hmmrt_hits_make(hmmrt_hits *h, const hmmrt_record *rec, int64_t index,
                    const hmmrt_value *values, const uint8_t *codes, hmmrt_hit *hit)
{
    double bits = values[h->info->score_column].score / M_LN2;
    *hit = (hmmrt_hit){.length = rec->length, .index = index, .bits = bits,
                       .lnP = hmmrt_hits_lnP(bits, h->info->tau, h->info->lambda), .best = -1};
    if (h->has_domains) {
        int status = hmmrt_hits_domains(h, hit, values, codes);
        if (status != 0)
            return status;
    }
    if (h->paths && !h->opt->nonull2 && hmmrt_hits_null2(h, hit, codes) != 0)
        return -1;
    return 0;
}

int hmmrt_hits_may_report_ahead(const hmmrt_hits *h, double nats)
{
    if (h->strands || isnan(nats) || nats == -INFINITY)
        return 0;
    double bits = nats / M_LN2; /* Z: at least the sequences counted and this one */
    return may_report(h, bits, hmmrt_hits_lnP(bits, h->info->tau, h->info->lambda), 1);
}

static int add_one(hmmrt_hits *h, const hmmrt_record *rec, int64_t index,
                   const hmmrt_value *values, const uint8_t *codes, hmmrt_hit *made,
                   int made_status)
{
    double nats = values[h->info->score_column].score;
    if (isnan(nats))
        return 0;
    hmmrt_hits_count(h, rec);
    if (h->strands)
        return hmmrt_strands_add(h, rec, index, codes);
    double bits = nats / M_LN2, lnP = hmmrt_hits_lnP(bits, h->info->tau, h->info->lambda);
    if (nats == -INFINITY || !may_report(h, bits, lnP, 0)) {
        if (made)
            free(made->domains);
        return 0;
    }
    hmmrt_hit hit;
    int status = made ? made_status : hmmrt_hits_make(h, rec, index, values, codes, &hit);
    if (made)
        hit = *made;
    if (status != 0) {
        free(hit.domains);
        return status;
    }
    return keep_made(h, rec, &hit);
}

int hmmrt_hits_add(hmmrt_hits *h, const hmmrt_record *rec, int64_t index,
                   const hmmrt_value *values, const uint8_t *codes)
{
    if (!h->queries)
        return add_one(h, rec, index, values, codes, NULL, 0);
    if (!isnan(values[h->info->score_column].score)) {
        h->searched++;
        h->residues += rec->length;
    }
    if (h->opt->scan)
        return hmmrt_hmmscan_add(h, rec, values, codes);
    for (int k = 0; k < h->n_queries; k++) { /* with the hit made ahead, if it was */
        hmmrt_hit made;
        int made_status = 0;
        int ready = hmmrt_hits_take_ready(h, rec, k, &made, &made_status);
        int status = add_one(&h->queries[k], rec, index, values, codes, ready ? &made : NULL,
                             made_status);
        if (status)
            return status;
    }
    return 0;
}

/* hmmsearch's order: sortkey, larger first; then the name; then input order. */
static int by_rank(const void *a, const void *b)
{
    const hmmrt_hit *x = a, *y = b;
    if (x->sortkey != y->sortkey)
        return x->sortkey < y->sortkey ? 1 : -1;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return (x->index > y->index) - (x->index < y->index);
}

void hmmrt_hits_threshold(hmmrt_hits *h, hmmrt_hit *hits, size_t n)
{
    const hmmrt_hits_options *opt = h->opt;
    int cut = opt->cut;
    int by_E = cut == HMMRT_CUT_NONE && opt->by_E, inc_by_E = cut == HMMRT_CUT_NONE && opt->inc_by_E;
    int dom_by_E = cut == HMMRT_CUT_NONE && opt->dom_by_E;
    int incdom_by_E = cut == HMMRT_CUT_NONE && opt->incdom_by_E;
    h->n_reported = h->n_included = 0;
    for (size_t i = 0; i < n; i++) {
        hmmrt_hit *hit = &hits[i];
        const hmmrt_hits_info *m = hit->model ? hit->model : h->info;
        double T = cut != HMMRT_CUT_NONE ? m->cut[cut][0] : opt->T;
        double incT = cut != HMMRT_CUT_NONE ? T : opt->incT;
        double E = exp(hit->lnP) * h->Z;
        hit->reported = by_E ? E <= opt->E : hit->bits >= T;
        hit->included = hit->reported && (inc_by_E ? E <= opt->incE : hit->bits >= incT);
        hit->sortkey = inc_by_E ? -hit->lnP : hit->bits;
        h->n_reported += hit->reported;
        h->n_included += hit->included;
    }
    h->domZ = opt->domZ_set ? opt->domZ : (double)h->n_reported;
    for (size_t i = 0; i < n; i++) {
        hmmrt_hit *hit = &hits[i];
        const hmmrt_hits_info *m = hit->model ? hit->model : h->info;
        double domT = cut != HMMRT_CUT_NONE ? m->cut[cut][1] : opt->domT;
        double incdomT = cut != HMMRT_CUT_NONE ? domT : opt->incdomT;
        for (int d = 0; d < hit->n_domains; d++) {
            hmmrt_domain *dom = &hit->domains[d];
            double cE = exp(dom->lnP) * h->domZ;
            if (h->strands) { /* nhmmer: a hit is its one domain */
                dom->reported = hit->reported;
                dom->included = hit->included;
                continue;
            }
            dom->reported = hit->reported && (dom_by_E ? cE <= opt->domE : dom->bits >= domT);
            dom->included = hit->included &&
                            (incdom_by_E ? cE <= opt->incdomE : dom->bits >= incdomT);
        }
    }
}

/* The hits and domains reported and included, then ranked. */
static void threshold(hmmrt_hits *h)
{
    const hmmrt_hits_options *opt = h->opt;
    h->Z = h->strands ? hmmrt_strands_Z(h) : opt->Z_set ? opt->Z : (double)h->searched;
    hmmrt_hits_threshold(h, h->hits, h->n);
    if (h->n > 1) /* none: hits may be NULL, which qsort must not get */
        qsort(h->hits, h->n, sizeof *h->hits, by_rank);
}

static int finish_table(FILE **f, const char *option, const char *path)
{
    int failed = fflush(*f) != 0 || ferror(*f);
    int error = errno;
    failed |= fclose(*f) != 0;
    *f = NULL;
    if (!failed)
        return 0;
    hmmrt_error("%s %s: cannot write the table: %s", option, path, strerror(error ? error : EIO));
    return HMMRT_EXIT_OUTPUT;
}

int hmmrt_hits_finish(hmmrt_hits *h, hmmrt_out *out)
{
    if (h->queries && h->opt->scan) {
        hmmrt_hmmscan_finish(h, out);
        int status = h->tblout ? finish_table(&h->tblout, "--tblout", h->opt->tblout) : 0;
        int s = h->domtblout ? finish_table(&h->domtblout, "--domtblout", h->opt->domtblout) : 0;
        return status ? status : s;
    }
    if (h->queries) { /* each model's list and table lines in turn, as hmmsearch's */
        for (int k = 0; k < h->n_queries; k++) {
            hmmrt_hits *q = &h->queries[k];
            threshold(q);
            hmmrt_hits_write_list(q, out);
            if (q->tblout)
                hmmrt_hits_write_tblout(q, q->tblout);
            if (q->domtblout)
                hmmrt_hits_write_domtblout(q, q->domtblout);
        }
        int status = h->tblout ? finish_table(&h->tblout, "--tblout", h->opt->tblout) : 0;
        int s = h->domtblout ? finish_table(&h->domtblout, "--domtblout", h->opt->domtblout) : 0;
        return status ? status : s;
    }
    threshold(h);
    if (h->strands)
        hmmrt_hits_write_dna_list(h, out);
    else
        hmmrt_hits_write_list(h, out);
    int status = 0;
    if (h->tblout) {
        if (h->strands)
            hmmrt_hits_write_dna_tblout(h, h->tblout);
        else
            hmmrt_hits_write_tblout(h, h->tblout);
        status = finish_table(&h->tblout, "--tblout", h->opt->tblout);
    }
    if (h->domtblout) {
        hmmrt_hits_write_domtblout(h, h->domtblout);
        int s = finish_table(&h->domtblout, "--domtblout", h->opt->domtblout);
        status = status ? status : s;
    }
    return status;
}
