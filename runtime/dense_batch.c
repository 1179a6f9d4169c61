/* dense_batch.c: the CPU path's batched dense forward and backward. Before
 * the sequences of a batch are scored one by one, the program's dense sums
 * (hmmrt_program.dense_batching) are scored over the whole batch: sequences
 * sorted by length into tiles, each tile one matrix product per position
 * (runtime/dense_blas.c) on one thread, the tiles shared by the run's OpenMP
 * threads (OpenBLAS itself is kept to one thread: one pool, not two). */
#include "dense_batch.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

struct dense_batch_state {
    int mode;            /* HMMC_DENSE_BLAS: DENSE_AUTO, DENSE_ON, DENSE_OFF */
    double *scores;      /* n_sums per sequence of the current batch */
    int64_t *order;      /* the batch's scored sequences, longest first */
    const uint8_t **x;   /* per sorted row, its codes (of the call's alphabet) */
    int64_t *lengths;    /* per sorted row, its length */
    double *tile_scores; /* per sorted row, its score */
    unsigned char *valid; /* per sequence: mapped (every symbol in its alphabets) */
    int64_t cap;         /* sequences the arrays above hold */
    int64_t batched, alone; /* sequences scored so (each call counted) and not */
    int64_t tiles;
    double seconds;
};

int hmmrt_dense_blas_mode(void)
{
    const char *env = getenv("HMMC_DENSE_BLAS");
    if (!env || !*env || strcmp(env, "auto") == 0)
        return DENSE_AUTO;
    if (strcmp(env, "on") == 0)
        return DENSE_ON;
    if (strcmp(env, "off") == 0)
        return DENSE_OFF;
    hmmrt_error("HMMC_DENSE_BLAS is '%s': set it to auto (the default: matrix products "
                "for models of %d or more states and batches of %d or more sequences a "
                "thread), on (always) or off (never), or unset it", env,
                DENSE_BLAS_MIN_STATES, DENSE_BLAS_SEQUENCES_A_THREAD);
    return -1;
}

int hmmrt_dense_batch_open(run *r)
{
    if (!r->prog->dense_batching || r->prog->dense_batching->n_sums == 0)
        return 0;
    int mode = hmmrt_dense_blas_mode();
    if (mode < 0)
        return -1;
    r->dense = calloc(1, sizeof *r->dense);
    if (!r->dense) {
        hmmrt_error("out of memory");
        return -2;
    }
    r->dense->mode = mode;
    r->prog->dense_batching->single_threaded();
    return 0;
}

void hmmrt_dense_batch_close(run *r)
{
    if (!r->dense)
        return;
    free(r->dense->scores);
    free(r->dense->order);
    free(r->dense->x);
    free(r->dense->lengths);
    free(r->dense->tile_scores);
    free(r->dense->valid);
    free(r->dense);
    r->dense = NULL;
}

/* Whether sum s runs batched on n sequences. */
static int batched(const struct dense_batch_state *st, const hmmrt_dense_sum *s, int64_t n)
{
    if (st->mode == DENSE_OFF || n == 0)
        return 0;
    return st->mode == DENSE_ON || (s->d->n >= DENSE_BLAS_MIN_STATES &&
                                    n >= (int64_t)DENSE_BLAS_SEQUENCES_A_THREAD * omp_get_max_threads());
}

static int grow(struct dense_batch_state *st, int64_t n, int n_sums)
{
    if (n <= st->cap)
        return 0;
    free(st->scores), free(st->order), free(st->x), free(st->lengths), free(st->tile_scores);
    free(st->valid);
    st->scores = malloc(sizeof(double) * (size_t)n * (size_t)n_sums);
    st->order = malloc(sizeof(int64_t) * (size_t)n);
    st->x = malloc(sizeof(uint8_t *) * (size_t)n);
    st->lengths = malloc(sizeof(int64_t) * (size_t)n);
    st->tile_scores = malloc(sizeof(double) * (size_t)n);
    st->valid = malloc((size_t)n);
    st->cap = st->scores && st->order && st->x && st->lengths && st->tile_scores && st->valid ? n
                                                                                             : 0;
    return st->cap ? 0 : -1;
}

/* qsort_r's order of a batch's sequences: longest first, then in input order. */
static int longest_first(const void *a, const void *b, void *context)
{
    const batch *sorting = context;
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    int64_t li = sorting->records[i].length, lj = sorting->records[j].length;
    return li != lj ? (li < lj ? 1 : -1) : (i > j) - (i < j);
}

/* Rows of a tile: a 16th of the batch's sequences, 32 to 128: a share that
 * does not depend on the number of threads (so neither do the scores),
 * large enough for the products to run near the BLAS's rate (each product
 * packs the whole matrix: 16 rows ran at 0.6 to 0.7 times 64 rows' rate at
 * 1,024 states), small enough to spread over 16 threads. */
int hmmrt_dense_tile_rows(int64_t n)
{
    int64_t rows = (n + 15) / 16;
    return rows < 32 ? 32 : rows > 128 ? 128 : (int)rows;
}

int hmmrt_dense_batch_score(run *r)
{
    struct dense_batch_state *st = r->dense;
    if (st)
        r->dense_scores = NULL;
    if (!st)
        return 0;
    const batch *b = r->current;
    const hmmrt_dense_batching *db = r->prog->dense_batching;
    if (st->mode == DENSE_OFF) {
        st->alone += b->n * db->n_sums;
        return 0;
    }
    double started = hmmrt_seconds();
    if (grow(st, b->n, db->n_sums) != 0)
        return -1;
    unsigned char *valid = st->valid;
    int chunk = hmmrt_omp_chunk(b->n);
#pragma omp parallel for schedule(dynamic, chunk)
    for (int64_t i = 0; i < b->n; i++)
        valid[i] = hmmrt_map_sequence(r, r->w, &b->records[i], i) == 0;
    int64_t n = 0;
    for (int64_t i = 0; i < b->n; i++)
        if (valid[i] && b->records[i].length > 0)
            st->order[n++] = i;
    for (int64_t i = 0; i < b->n * db->n_sums; i++)
        st->scores[i] = NAN;
    qsort_r(st->order, (size_t)n, sizeof *st->order, longest_first, (void *)b);
    int failed = 0, any = 0;
    for (int k = 0; k < db->n_sums; k++) {
        const hmmrt_dense_sum *s = &db->sums[k];
        if (!batched(st, s, n)) {
            for (int64_t i = 0; i < b->n; i++)
                st->alone += valid[i];
            continue;
        }
        any = 1;
        for (int64_t i = 0; i < b->n; i++)
            if (valid[i] && b->records[i].length == 0) {
                st->scores[i * db->n_sums + k] = s->d->start_end;
                st->batched++;
            }
        for (int64_t row = 0; row < n; row++) {
            st->x[row] = r->w->code_ptrs[st->order[row] * r->prog->n_alphabets + s->alphabet];
            st->lengths[row] = b->records[st->order[row]].length;
        }
        int rows = hmmrt_dense_tile_rows(n);
        int64_t tiles = (n + rows - 1) / rows;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
        for (int64_t t = 0; t < tiles; t++) {
            int64_t first = t * rows;
            int count = (int)(n - first < rows ? n - first : rows);
            failed |= db->tile(s, st->x + first, st->lengths + first, count,
                               st->tile_scores + first) != 0;
        }
        for (int64_t row = 0; row < n && !failed; row++)
            st->scores[st->order[row] * db->n_sums + k] = st->tile_scores[row];
        st->batched += n;
        st->tiles += tiles;
    }
    st->seconds += hmmrt_seconds() - started;
    if (failed)
        return -1;
    r->dense_scores = any ? st->scores : NULL;
    return 0;
}

void hmmrt_dense_batch_report(const run *r, FILE *out)
{
    const struct dense_batch_state *st = r->dense;
    if (!st || st->batched + st->alone == 0)
        return;
    fprintf(out, "  dense forward/backward on the CPU: %lld sequence%s as batched matrix products "
                 "(OpenBLAS, %lld tile%s, %.3f s, before the per-sequence scoring), %lld one at a "
                 "time (HMMC_DENSE_BLAS=%s; auto: %d or more states, %d or more sequences a "
                 "thread)\n",
            (long long)st->batched, st->batched == 1 ? "" : "s", (long long)st->tiles,
            st->tiles == 1 ? "" : "s", st->seconds, (long long)st->alone,
            st->mode == DENSE_ON ? "on" : st->mode == DENSE_OFF ? "off" : "auto",
            DENSE_BLAS_MIN_STATES, DENSE_BLAS_SEQUENCES_A_THREAD);
}
