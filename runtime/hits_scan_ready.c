/* hits_scan_ready.c: the hits of a program of many models (--hmmscan or
 * per model) of a whole batch made ahead, on every thread: a hit's domains
 * and null2 take milliseconds, the printer takes sequences one at a time;
 * here the batch's (sequence, model) pairs that may be reported are made one
 * model a thread (a model's path model is its own), then taken in order. */
#include "hits.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct hmmrt_scan_ready {
    const hmmrt_record *recs; /* the batch made ahead (NULL: none) */
    int64_t n_recs;
    size_t n, cap, next;      /* pairs in (sequence, model) order; the next to take */
    int64_t *seq;             /* each pair's sequence (index in recs) ... */
    int *model;               /* ... and model */
    int *status;              /* each pair's: 0, or hmmrt_hmmscan_hit's failure */
    hmmrt_hit *hits;
    size_t *order;            /* the pairs grouped by model ... */
    size_t *model_start;      /* ... model k's at order[model_start[k] .. model_start[k + 1]) */
} hmmrt_scan_ready;

void hmmrt_hmmscan_release_ready(hmmrt_hits *h, int all)
{
    hmmrt_scan_ready *r = h->scan_ready;
    if (!r)
        return;
    for (; r->next < r->n; r->next++)
        free(r->hits[r->next].domains);
    r->n = r->next = 0;
    r->recs = NULL;
    r->n_recs = 0;
    if (!all)
        return;
    free(r->seq);
    free(r->model);
    free(r->status);
    free(r->hits);
    free(r->order);
    free(r->model_start);
    free(r);
    h->scan_ready = NULL;
}

/* Room for n pairs: 0, or -1 out of memory. */
static int reserve(hmmrt_scan_ready *r, size_t n)
{
    if (n <= r->cap)
        return 0;
    size_t cap = r->cap ? 2 * r->cap : 1024;
    while (cap < n)
        cap *= 2;
    int64_t *seq = realloc(r->seq, cap * sizeof *seq);
    if (seq)
        r->seq = seq;
    int *model = realloc(r->model, cap * sizeof *model);
    if (model)
        r->model = model;
    int *status = realloc(r->status, cap * sizeof *status);
    if (status)
        r->status = status;
    hmmrt_hit *hits = realloc(r->hits, cap * sizeof *hits);
    if (hits)
        r->hits = hits;
    size_t *order = realloc(r->order, cap * sizeof *order);
    if (order)
        r->order = order;
    if (!seq || !model || !status || !hits || !order)
        return -1;
    r->cap = cap;
    return 0;
}

/* The path models of the models with pairs, made here, one at a time (their
 * making is not for threads: hits_domains.c sorts with a global): 0, or -1
 * when one cannot be made. */
static int make_path_models(hmmrt_hits *h, const hmmrt_scan_ready *r)
{
    for (int k = 0; k < h->n_queries; k++) {
        hmmrt_hits *q = &h->queries[k];
        if (r->model_start[k + 1] == r->model_start[k] || q->paths || q->info->model < 0 ||
            (!q->has_domains && h->opt->nonull2))
            continue;
        const hmmrt_model *m = &q->prog->models[q->info->model];
        if (!(q->paths = hmmrt_path_model_new(m, q->prog->alphabets[m->alphabet])))
            return -1;
    }
    return 0;
}

void hmmrt_hmmscan_prepare(hmmrt_hits *h, const hmmrt_record *recs, int64_t n,
                           int64_t first_index, const hmmrt_value *values, int n_columns,
                           const uint8_t *const *codes, const unsigned char *use, int n_threads)
{
    if (!h->queries)
        return;
    int scan = h->opt->scan;
    for (int k = 0; k < h->n_queries; k++)
        if (h->queries[k].strands)
            return; /* a DNA model's hits: hits_strands.c */
    hmmrt_hmmscan_release_ready(h, 0);
    hmmrt_scan_ready *r = h->scan_ready;
    if (!r && !(r = h->scan_ready = calloc(1, sizeof *r)))
        return;
    int n_models = h->n_queries;
    if (!r->model_start && !(r->model_start = calloc((size_t)n_models + 1, sizeof(size_t))))
        return;
    memset(r->model_start, 0, ((size_t)n_models + 1) * sizeof(size_t));
    /* the pairs that may be reported: most cost a comparison */
    for (int64_t i = 0; i < n; i++) {
        const hmmrt_value *v = values + i * n_columns;
        if (!use[i] || isnan(v[h->info->score_column].score))
            continue; /* not scored: hmmrt_hmmscan_add takes none */
        for (int k = 0; k < n_models; k++) {
            double nats = v[h->queries[k].info->score_column].score;
            if (scan ? !hmmrt_hmmscan_may_report(h, k, nats)
                     : !hmmrt_hits_may_report_ahead(&h->queries[k], nats))
                continue;
            if (reserve(r, r->n + 1) != 0) {
                r->n = 0;
                return; /* hmmrt_hmmscan_add makes them */
            }
            r->seq[r->n] = i;
            r->hits[r->n] = (hmmrt_hit){.best = -1};
            r->model[r->n] = k;
            r->model_start[k + 1]++;
            r->n++;
        }
    }
    for (int k = 0; k < n_models; k++)
        r->model_start[k + 1] += r->model_start[k];
    for (size_t p = 0; p < r->n; p++) { /* a counting sort by model, each in input order */
        size_t *slot = &r->model_start[r->model[p]];
        r->order[(*slot)++] = p;
    }
    for (int k = n_models; k > 0; k--)
        r->model_start[k] = r->model_start[k - 1];
    r->model_start[0] = 0;
    if (make_path_models(h, r) != 0) { /* hmmrt_hmmscan_add makes them, and says why */
        r->n = 0;
        return;
    }
#pragma omp parallel for num_threads(n_threads > 0 ? n_threads : 1) schedule(dynamic, 1)
    for (int k = 0; k < n_models; k++) {
        for (size_t o = r->model_start[k]; o < r->model_start[k + 1]; o++) {
            size_t p = r->order[o];
            int64_t i = r->seq[p];
            r->status[p] = scan ? hmmrt_hmmscan_hit(h, k, &recs[i], values + i * n_columns,
                                                    codes[i], &r->hits[p])
                                : hmmrt_hits_make(&h->queries[k], &recs[i], first_index + i,
                                                  values + i * n_columns, codes[i], &r->hits[p]);
        }
    }
    r->recs = recs;
    r->n_recs = n;
}

int64_t hmmrt_hmmscan_take(hmmrt_hits *h, const hmmrt_record *rec, hmmrt_hit *hits, int *status)
{
    hmmrt_scan_ready *r = h->scan_ready;
    *status = 0;
    if (!r || !r->recs || rec < r->recs || rec >= r->recs + r->n_recs)
        return -1;
    int64_t i = rec - r->recs;
    while (r->next < r->n && r->seq[r->next] < i) /* sequences not taken (cannot happen) */
        free(r->hits[r->next++].domains);
    int64_t n = 0;
    while (r->next < r->n && r->seq[r->next] == i && !*status) {
        *status = r->status[r->next];
        hits[n++] = r->hits[r->next];
        r->hits[r->next++].domains = NULL; /* hits' now */
    }
    return n;
}

int hmmrt_hits_take_ready(hmmrt_hits *h, const hmmrt_record *rec, int k, hmmrt_hit *hit,
                          int *status)
{
    hmmrt_scan_ready *r = h->scan_ready;
    *status = 0;
    if (!r || !r->recs || rec < r->recs || rec >= r->recs + r->n_recs)
        return 0;
    int64_t i = rec - r->recs;
    while (r->next < r->n && (r->seq[r->next] < i || (r->seq[r->next] == i && r->model[r->next] < k)))
        free(r->hits[r->next++].domains); /* not taken (a sequence stopped short) */
    if (r->next >= r->n || r->seq[r->next] != i || r->model[r->next] != k)
        return 0;
    *status = r->status[r->next];
    *hit = r->hits[r->next];
    r->hits[r->next++].domains = NULL; /* *hit's now */
    return 1;
}
