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
