/* mpi_train.c: --train under mpirun: every rank's E-step shares are summed by
 * rank 0 in one fixed order (its own shares, then rank 1's, ...) and the
 * totals broadcast, so every rank takes the same M-step and the fitted
 * numbers do not depend on which rank finishes first (docs/scale-out.md). */
#include "hmmrt_mpi.h"

#include <stdlib.h>
#include <string.h>

enum { TAG_SHARES = 11 };

/* What a rank sends before its shares' counts. */
typedef struct share_head {
    int n_shares; /* -1: its E-step failed */
} share_head;

/* A share's ln P sum and no-path count, after its counts. */
typedef struct share_tail {
    long double ll;
    int64_t no_path;
} share_tail;

static void add(double *total, const double *c, size_t n)
{
    for (size_t j = 0; j < n; j++)
        total[j] += c[j];
}

int hmmrt_mpi_sum_shares(double *const *counts, const long double *ll, const int64_t *no_path,
                         int n_shares, size_t per_share, int failed, double *total,
                         long double *ll_total, int64_t *no_path_total)
{
    int rank = hmmrt_mpi_rank(), bad = failed;
    memset(total, 0, per_share * sizeof *total);
    *ll_total = 0;
    *no_path_total = 0;
    if (rank > 0) {
        share_head head = {failed ? -1 : n_shares};
        if (hmmrt_mpi_send(&head, sizeof head, 0, TAG_SHARES) != 0)
            return -1;
        for (int k = 0; !failed && k < n_shares; k++) {
            share_tail tail = {ll[k], no_path[k]};
            if (hmmrt_mpi_send(counts[k], per_share * sizeof(double), 0, TAG_SHARES) != 0 ||
                hmmrt_mpi_send(&tail, sizeof tail, 0, TAG_SHARES) != 0)
                return -1;
        }
    } else {
        for (int k = 0; !failed && k < n_shares; k++) {
            add(total, counts[k], per_share);
            *ll_total += ll[k];
            *no_path_total += no_path[k];
        }
        double *c = malloc((per_share ? per_share : 1) * sizeof *c);
        bad |= c == NULL;
        for (int r = 1; r < hmmrt_mpi_size(); r++) {
            share_head head;
            if (hmmrt_mpi_recv(&head, sizeof head, r, TAG_SHARES) != 0) {
                free(c);
                return -1;
            }
            bad |= head.n_shares < 0;
            for (int k = 0; k < head.n_shares; k++) {
                share_tail tail;
                if (hmmrt_mpi_recv(c ? c : total, per_share * sizeof(double), r, TAG_SHARES) !=
                        0 ||
                    hmmrt_mpi_recv(&tail, sizeof tail, r, TAG_SHARES) != 0) {
                    free(c);
                    return -1;
                }
                if (!c)
                    continue;
                add(total, c, per_share);
                *ll_total += tail.ll;
                *no_path_total += tail.no_path;
            }
        }
        free(c);
    }
    if (hmmrt_mpi_bcast(&bad, sizeof bad, 0) != 0 || bad)
        return -1;
    if (hmmrt_mpi_bcast(total, per_share * sizeof *total, 0) != 0 ||
        hmmrt_mpi_bcast(ll_total, sizeof *ll_total, 0) != 0 ||
        hmmrt_mpi_bcast(no_path_total, sizeof *no_path_total, 0) != 0)
        return -1;
    return 0;
}

/* ---- dealing the sequences out as one process's shares ------------------------ */

enum { TAG_DEAL = 12 };

/* Every rank's (sequences, symbols), in rank order, on every rank. */
static int gather_sizes(int64_t mine[2], int64_t *all)
{
    int size = hmmrt_mpi_size();
    if (hmmrt_mpi_rank() > 0) {
        if (hmmrt_mpi_send(mine, 2 * sizeof *mine, 0, TAG_DEAL) != 0)
            return -1;
    } else {
        memcpy(all, mine, 2 * sizeof *mine);
        for (int r = 1; r < size; r++)
            if (hmmrt_mpi_recv(all + 2 * r, 2 * sizeof *all, r, TAG_DEAL) != 0)
                return -1;
    }
    return hmmrt_mpi_bcast(all, 2 * (size_t)size * sizeof *all, 0);
}

/* What one rank sends another: sizes, then each sequence's share, length,
 * codes and name. */
typedef struct deal_head {
    int64_t n, code_bytes, name_bytes;
} deal_head;

typedef struct dealt {
    int64_t n, cap, codes_len, codes_cap;
    char **names;
    int64_t *start;
    int *share;
    uint8_t *codes;
} dealt;

static int dealt_add(dealt *d, const char *name, int share, const uint8_t *codes, int64_t length)
{
    if (d->n + 2 > d->cap) {
        int64_t cap = d->cap ? 2 * d->cap : 1024;
        char **names = realloc(d->names, (size_t)cap * sizeof *names);
        d->names = names ? names : d->names;
        int64_t *start = realloc(d->start, (size_t)(cap + 1) * sizeof *start);
        d->start = start ? start : d->start;
        int *sh = realloc(d->share, (size_t)cap * sizeof *sh);
        d->share = sh ? sh : d->share;
        if (!names || !start || !sh)
            return -1;
        d->cap = cap;
        if (d->n == 0)
            d->start[0] = 0;
    }
    if (d->codes_len + length + 1 > d->codes_cap) {
        int64_t cap = d->codes_cap ? d->codes_cap : 1 << 20;
        while (cap < d->codes_len + length + 1)
            cap *= 2;
        uint8_t *c = realloc(d->codes, (size_t)cap);
        if (!c)
            return -1;
        d->codes = c;
        d->codes_cap = cap;
    }
    if (length > 0) /* an empty sequence's codes may be NULL */
        memcpy(d->codes + d->codes_len, codes, (size_t)length);
    d->codes_len += length;
    d->names[d->n] = strdup(name);
    if (!d->names[d->n])
        return -1;
    d->share[d->n] = share;
    d->n++;
    d->start[d->n] = d->codes_len;
    return 0;
}

/* Sends sequences [from, to) of the corpus, with their shares, to rank d. */
static int send_part(const hmmrt_mpi_corpus *c, const int *share, int64_t from, int64_t to, int d)
{
    deal_head h = {to - from, to > from ? c->start[to] - c->start[from] : 0, 0};
    for (int64_t i = from; i < to; i++)
        h.name_bytes += (int64_t)strlen(c->names[i]) + 1;
    if (hmmrt_mpi_send(&h, sizeof h, d, TAG_DEAL) != 0)
        return -1;
    if (h.n == 0)
        return 0;
    int64_t *lengths = malloc((size_t)h.n * sizeof *lengths);
    char *names = malloc((size_t)h.name_bytes);
    int ok = lengths && names;
    for (int64_t i = from, at = 0; ok && i < to; i++) {
        lengths[i - from] = c->start[i + 1] - c->start[i];
        size_t len = strlen(c->names[i]) + 1;
        memcpy(names + at, c->names[i], len);
        at += (int64_t)len;
    }
    ok = ok && hmmrt_mpi_send(lengths, (size_t)h.n * sizeof *lengths, d, TAG_DEAL) == 0 &&
         hmmrt_mpi_send(share + from, (size_t)h.n * sizeof *share, d, TAG_DEAL) == 0 &&
         hmmrt_mpi_send(c->codes + c->start[from], (size_t)h.code_bytes, d, TAG_DEAL) == 0 &&
         hmmrt_mpi_send(names, (size_t)h.name_bytes, d, TAG_DEAL) == 0;
    free(lengths), free(names);
    return ok ? 0 : -1;
}

/* Receives rank s's part for this rank into d. */
static int receive_part(dealt *d, int s)
{
    deal_head h;
    if (hmmrt_mpi_recv(&h, sizeof h, s, TAG_DEAL) != 0)
        return -1;
    if (h.n == 0)
        return 0;
    int64_t *lengths = malloc((size_t)h.n * sizeof *lengths);
    int *share = malloc((size_t)h.n * sizeof *share);
    uint8_t *codes = malloc((size_t)h.code_bytes + 1);
    char *names = malloc((size_t)h.name_bytes);
    int ok = lengths && share && codes && names;
    /* the messages are received even without room, so that the sender goes on */
    ok = hmmrt_mpi_recv(lengths, (size_t)h.n * sizeof *lengths, s, TAG_DEAL) == 0 && ok;
    ok = hmmrt_mpi_recv(share, (size_t)h.n * sizeof *share, s, TAG_DEAL) == 0 && ok;
    ok = hmmrt_mpi_recv(codes, (size_t)h.code_bytes, s, TAG_DEAL) == 0 && ok;
    ok = hmmrt_mpi_recv(names, (size_t)h.name_bytes, s, TAG_DEAL) == 0 && ok;
    for (int64_t i = 0, at = 0, name_at = 0; ok && i < h.n; i++) {
        ok = dealt_add(d, names + name_at, share[i], codes + at, lengths[i]) == 0;
        at += lengths[i];
        name_at += (int64_t)strlen(names + name_at) + 1;
    }
    free(lengths), free(share), free(codes), free(names);
    return ok ? 0 : -1;
}

int hmmrt_mpi_deal_shares(hmmrt_mpi_corpus *c, int threads, int64_t **share_from, int *n_shares)
{
    int rank = hmmrt_mpi_rank(), size = hmmrt_mpi_size();
    int64_t mine[2] = {c->n, c->n ? c->start[c->n] : 0};
    int64_t *all = malloc(2 * (size_t)size * sizeof *all);
    int *share = malloc(((size_t)c->n + 1) * sizeof *share);
    int bad = !all || !share;
    if (bad || gather_sizes(mine, all) != 0) {
        free(all), free(share);
        return -1;
    }
    int64_t seqs = 0, symbols = 0, my_symbols = 0;
    for (int r = 0; r < size; r++) {
        if (r == rank)
            my_symbols = symbols;
        seqs += all[2 * r];
        symbols += all[2 * r + 1];
    }
    free(all);
    /* one process with size x threads threads: its shares, as train.c's expect() cuts them */
    int64_t S = (int64_t)size * (threads < 1 ? 1 : threads);
    if (S > seqs)
        S = seqs;
    int64_t q = S > 0 ? symbols / S : 0;
    for (int64_t i = 0; i < c->n; i++) {
        int64_t g = my_symbols + c->start[i], k = q > 0 ? g / q : S - 1;
        share[i] = (int)(k > S - 1 ? S - 1 : k);
    }
    /* share k is rank k x size / S's; rank d gathers its shares' sequences */
    dealt d = {0};
    int failed = 0;
    for (int to = 0; to < size; to++) {
        if (to == rank) {
            for (int s = 0; s < size; s++) {
                if (s != rank) {
                    failed |= receive_part(&d, s) != 0;
                    continue;
                }
                for (int64_t i = 0; i < c->n && !failed; i++)
                    if ((int64_t)share[i] * size / S == rank)
                        failed |= dealt_add(&d, c->names[i], share[i], c->codes + c->start[i],
                                            c->start[i + 1] - c->start[i]) != 0;
            }
            continue;
        }
        int64_t from = 0, end;
        while (from < c->n && (int64_t)share[from] * size / S < to)
            from++;
        end = from;
        while (end < c->n && (int64_t)share[end] * size / S == to)
            end++;
        failed |= send_part(c, share, from, end, to) != 0;
    }
    free(share);
    /* this rank's shares, empty ones included: from its first to its last */
    int64_t first = (S * rank + size - 1) / size, last = (S * (rank + 1) + size - 1) / size;
    *n_shares = (int)(last - first);
    *share_from = calloc((size_t)(last - first) + 1, sizeof **share_from);
    failed |= *share_from == NULL;
    for (int64_t k = first, i = 0; !failed && k <= last; k++) {
        while (i < d.n && d.share[i] < k)
            i++;
        (*share_from)[k - first] = i;
    }
    int worst = failed;
    if (hmmrt_mpi_max_int(&worst) != 0 || worst) {
        for (int64_t i = 0; i < d.n; i++)
            free(d.names[i]);
        free(d.names), free(d.start), free(d.share), free(d.codes);
        return -1;
    }
    for (int64_t i = 0; i < c->n; i++)
        free(c->names[i]);
    free(c->names), free(c->start), free(c->codes);
    free(d.share);
    c->n = d.n;
    c->names = d.names;
    c->start = d.start;
    c->codes = d.codes;
    if (!c->start) { /* nothing dealt to this rank */
        c->start = calloc(1, sizeof *c->start);
        if (!c->start)
            return -1;
    }
    c->longest = 0;
    for (int64_t i = 0; i < c->n; i++)
        if (c->start[i + 1] - c->start[i] > c->longest)
            c->longest = c->start[i + 1] - c->start[i];
    return 0;
}
