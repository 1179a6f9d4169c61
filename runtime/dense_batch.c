/* dense_batch.c: the CPU path's batched dense forward, backward and
 * posterior. Before the sequences of a batch are scored one by one, the
 * program's dense sums and posterior calls (hmmrt_program.dense_batching)
 * are scored over the whole batch: sequences sorted by length into tiles,
 * each tile matrix products per position (dense_blas.c, fb_blas.c) on one
 * thread, the tiles shared by the run's OpenMP threads (OpenBLAS itself is
 * kept to one thread: one pool, not two). */
#include "dense_batch.h"
#include "fb.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

struct dense_batch_state {
    int mode;            /* HMMRT_DENSE_BLAS: DENSE_AUTO, DENSE_ON, DENSE_OFF */
    double *scores;      /* hmmrt_dense_batch_width per sequence of the current batch */
    int64_t *order;      /* the batch's scored sequences, longest first */
    const uint8_t **x;   /* per sorted row, its codes (of the call's alphabet) */
    int64_t *lengths;    /* per sorted row, its length */
    double *tile_scores; /* per sorted row, its score */
    unsigned char *valid; /* per sequence: mapped (every symbol in its alphabets) */
    int64_t cap;         /* sequences the arrays above hold */
    int64_t batched, alone; /* sequences scored so (each call counted) and not */
    int64_t posteriors_batched, posteriors_alone; /* the same of posterior calls */
    int64_t tiles;
    double seconds;
};

int hmmrt_dense_blas_mode(void)
{
    const char *env = getenv("HMMRT_DENSE_BLAS"), *why = NULL;
    if (env && strcmp(env, "off") == 0)
        return DENSE_OFF;
    int on = env && strcmp(env, "on") == 0;
    if (!env || !*env || strcmp(env, "auto") == 0 || on) {
        if (hmmrt_openblas_loaded(&why)) /* loaded at run time: openblas_dl.c */
            return on ? DENSE_ON : DENSE_AUTO;
        if (!on)
            return DENSE_OFF; /* auto: one sequence at a time, as without OpenBLAS */
        hmmrt_error("HMMRT_DENSE_BLAS is on, but OpenBLAS cannot be loaded (%s): install it "
                    "(Debian: apt-get install libopenblas0) or set HMMRT_DENSE_BLAS=auto", why);
        return -1;
    }
    hmmrt_error("HMMRT_DENSE_BLAS is '%s': set it to auto (the default: matrix products "
                "for models of %d or more states and batches of %d or more sequences a "
                "thread), on (always) or off (never), or unset it", env,
                DENSE_BLAS_MIN_STATES, DENSE_BLAS_SEQUENCES_A_THREAD);
    return -1;
}

int hmmrt_dense_batch_open(run *r)
{
    if (hmmrt_dense_batch_width(r->prog) == 0)
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

int hmmrt_dense_batch_width(const hmmrt_program *prog)
{
    const hmmrt_dense_batching *db = prog->dense_batching;
    return db ? db->n_sums + db->n_posteriors : 0;
}

/* A tile of a posterior call: which sequences its rows are. */
typedef struct posterior_tile {
    run *r;
    const hmmrt_posterior_call *call;
    int n, column;       /* the model's states; the call's place in the scores */
    const int64_t *seqs; /* the batch's sequence of each row */
    int failed;
} posterior_tile;

/* fb_tile's hmmrt_fb_row_done: row r's columns, and its ln P into the
 * scores (NaN where memory for its text ran out: its turn does it again). */
static void posterior_row(void *context, int r, double lnp, const double *post, size_t stride)
{
    posterior_tile *pt = context;
    run *run = pt->r;
    const int64_t i = pt->seqs[r], L = run->current->records[i].length;
    hmmrt_value *values = run->w->values + i * run->prog->n_columns;
    int *best = hmmrt_posterior_wants_best(pt->call) ? malloc(sizeof(int) * (size_t)L) : NULL;
    hmmrt_buf_take_failure();
    if (best || !hmmrt_posterior_wants_best(pt->call))
        hmmrt_posterior_write(pt->call, pt->n, L, lnp, post, stride, best, values);
    int failed = (hmmrt_posterior_wants_best(pt->call) && !best) | hmmrt_buf_take_failure();
    free(best);
    double *score = &run->dense->scores[i * hmmrt_dense_batch_width(run->prog) + pt->column];
    *score = failed ? NAN : lnp;
    const int columns[] = {pt->call->score_column, pt->call->decode_column,
                           pt->call->segments_column, pt->call->table_column};
    for (int c = 0; failed && c < 4; c++) /* the sequence's turn writes them anew */
        if (columns[c] >= 0) {
            values[columns[c]].score = NAN;
            hmmrt_buf_reset(&values[columns[c]].text);
        }
}

/* Tiles of at most 64 sequences and 256 MB of forward tables (as training's). */
enum { POSTERIOR_TILE_ROWS = 64 };
#define POSTERIOR_TILE_BYTES ((size_t)256 << 20)

/* Posterior call k over the n sorted sequences of the batch; 0, or -1 when
 * memory ran out. Returns 1 when it was not batched. */
static int posteriors(run *r, int k, int64_t n)
{
    struct dense_batch_state *st = r->dense;
    const hmmrt_dense_batching *db = r->prog->dense_batching;
    const hmmrt_posterior_call *call = db->posteriors[k];
    hmmrt_fb *fb = hmmrt_posterior_fb(call);
    if (!fb || !fb->dense || !db->fb_tile || n == 0)
        return 1;
    if (st->mode != DENSE_ON &&
        (fb->n < DENSE_BLAS_MIN_STATES || n < (int64_t)DENSE_BLAS_SEQUENCES_A_THREAD * omp_get_max_threads()))
        return 1;
    const batch *b = r->current;
    const size_t row_doubles = (size_t)fb->n * sizeof(double);
    /* tiles: consecutive rows, as many as fit; one too long for any tile
     * (or a tile's malloc that fails) is left to its turn */
    int64_t *first = malloc(sizeof *first * (size_t)(n + 1));
    if (!first)
        return -1;
    int64_t tiles = 0;
    for (int64_t row = 0; row < n;) {
        const size_t longest = (size_t)b->records[st->order[row]].length + 1;
        int64_t count = 0;
        while (row + count < n && count < POSTERIOR_TILE_ROWS &&
               (size_t)(count + 1) * longest * row_doubles <= POSTERIOR_TILE_BYTES)
            count++;
        first[tiles++] = row;
        row += count ? count : 1;
    }
    first[tiles] = n;
    const int column = db->n_sums + k;
    for (int64_t row = 0; row < n; row++)
        st->x[row] = r->w->code_ptrs[st->order[row] * r->prog->n_alphabets + call->model->alphabet];
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
    for (int64_t t = 0; t < tiles; t++) {
        const int64_t from = first[t];
        const int count = (int)(first[t + 1] - from);
        const size_t longest = (size_t)b->records[st->order[from]].length + 1;
        if ((size_t)count * longest * row_doubles > POSTERIOR_TILE_BYTES)
            continue; /* one sequence too long for a tile: its turn */
        int64_t lengths[POSTERIOR_TILE_ROWS];
        double lnp[POSTERIOR_TILE_ROWS];
        for (int j = 0; j < count; j++)
            lengths[j] = b->records[st->order[from + j]].length;
        posterior_tile pt = {.r = r, .call = call, .n = fb->n, .column = column,
                             .seqs = st->order + from};
        failed |= db->fb_tile(fb, st->x + from, lengths, count, lnp, NULL, NULL, NULL,
                              posterior_row, &pt) != 0;
    }
    free(first);
    return failed ? -1 : 0;
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
    const int width = hmmrt_dense_batch_width(r->prog);
    if (st->mode == DENSE_OFF) {
        st->alone += b->n * db->n_sums;
        st->posteriors_alone += b->n * db->n_posteriors;
        return 0;
    }
    double started = hmmrt_seconds();
    if (grow(st, b->n, width) != 0)
        return -1;
    unsigned char *valid = st->valid;
    int chunk = hmmrt_omp_chunk(b->n);
#pragma omp parallel for schedule(dynamic, chunk)
    for (int64_t i = 0; i < b->n; i++) {
        valid[i] = hmmrt_map_sequence(r, r->w, &b->records[i], i) == 0;
        if (valid[i]) /* their turns leave the values as this phase fills them */
            hmmrt_clear_values(r, r->w, i);
    }
    int64_t n = 0, n_valid = 0;
    for (int64_t i = 0; i < b->n; i++) {
        n_valid += valid[i];
        if (valid[i] && b->records[i].length > 0)
            st->order[n++] = i;
    }
    for (int64_t i = 0; i < b->n * width; i++)
        st->scores[i] = NAN;
    qsort_r(st->order, (size_t)n, sizeof *st->order, longest_first, (void *)b);
    int failed = 0;
    for (int k = 0; k < db->n_sums; k++) {
        const hmmrt_dense_sum *s = &db->sums[k];
        if (!batched(st, s, n)) {
            st->alone += n_valid;
            continue;
        }
        for (int64_t i = 0; i < b->n; i++)
            if (valid[i] && b->records[i].length == 0) {
                st->scores[i * width + k] = s->d->start_end;
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
            st->scores[st->order[row] * width + k] = st->tile_scores[row];
        st->batched += n;
        st->tiles += tiles;
    }
    for (int k = 0; k < db->n_posteriors && !failed; k++) {
        int got = posteriors(r, k, n);
        failed |= got < 0;
        if (got == 0) {
            int64_t done = 0;
            for (int64_t row = 0; row < n; row++)
                done += !isnan(st->scores[st->order[row] * width + db->n_sums + k]);
            st->posteriors_batched += done;
            st->posteriors_alone += n_valid - done;
        } else {
            st->posteriors_alone += n_valid;
        }
    }
    st->seconds += hmmrt_seconds() - started;
    if (failed)
        return -1;
    r->dense_scores = st->scores;
    return 0;
}

void hmmrt_dense_batch_report(const run *r, FILE *out)
{
    const struct dense_batch_state *st = r->dense;
    if (!st || st->batched + st->alone + st->posteriors_batched + st->posteriors_alone == 0)
        return;
    const hmmrt_dense_batching *db = r->prog->dense_batching;
    if (db->n_sums)
        fprintf(out, "  dense forward/backward on the CPU: %lld sequence%s as batched matrix "
                     "products (OpenBLAS, %lld tile%s), %lld one at a time\n",
                (long long)st->batched, st->batched == 1 ? "" : "s", (long long)st->tiles,
                st->tiles == 1 ? "" : "s", (long long)st->alone);
    if (db->n_posteriors)
        fprintf(out, "  dense posterior on the CPU: %lld sequence%s as batched matrix products "
                     "(OpenBLAS), %lld one at a time\n",
                (long long)st->posteriors_batched, st->posteriors_batched == 1 ? "" : "s",
                (long long)st->posteriors_alone);
    fprintf(out, "  (%.3f s of the scoring, before the sequences' turns; HMMRT_DENSE_BLAS=%s; auto: "
                 "%d or more states, %d or more sequences a thread)\n", st->seconds,
            st->mode == DENSE_ON ? "on" : st->mode == DENSE_OFF ? "off" : "auto",
            DENSE_BLAS_MIN_STATES, DENSE_BLAS_SEQUENCES_A_THREAD);
}
