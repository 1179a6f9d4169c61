/* train.c: PROG --train SEQFILE...: fits one model's weights and emission
 * values to the sequences by expectation maximisation (Baum-Welch, or
 * viterbi training), then writes the program's source with the fitted
 * numbers on standard output. Each iteration's log-likelihood goes to stderr. */
#include "dense_batch.h"
#include "fb.h"
#include "hmmrt_gpu.h"
#include "hmmrt_mpi.h"
#include "internal.h"
#include "train_real.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* The sequences, mapped to the model's alphabet, all in memory: every
 * iteration reads them all. */
typedef struct corpus {
    int64_t n;
    char **names;
    int64_t *start;      /* sequence i: codes[start[i] .. start[i+1]-1] */
    uint8_t *codes;
    unsigned char *left_out; /* no path: 1 when found, 2 once named; left out */
    int64_t longest;
} corpus;

typedef struct trainer {
    const hmmrt_program *prog;
    const hmmrt_options *o;
    const hmmrt_model *model;
    hmmrt_fb *fb;
    corpus seqs;
    int n_threads;
    size_t n_values;     /* emission values: n_emissions x K */
    /* the E-step's sums */
    double *move_counts, *emission_counts;
    long double log_likelihood;
    int64_t no_path;
    int *out_start, *out; /* every move out of each state (index_out) */
    unsigned char *changed; /* n_moves + n_values: a number an update has set (written anew) */
    hmmrt_gpu_trainer *gpu; /* the E-step on the GPU, or NULL */
    double *gpu_lnp;        /* per sequence, from the GPU */
    const hmmrt_dense_batching *tiles; /* the E-step in tiles of matrix products
                                          (fb_blas.c), or NULL: one sequence at a time */
    real_trainer *real;     /* a model over real observations (train_real.c), or NULL */
    void *real_gpu;         /* its E-step on the GPU (runtime/gpu/real_train_gpu.c), or NULL */
    int64_t all_sequences;  /* seqs.n, or under mpirun every rank's together */
    int64_t *share_from;    /* under mpirun: where this rank's E-step shares start */
    int n_shares;           /* ... (hmmrt_mpi_deal_shares), else NULL */
} trainer;

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    interrupted = 1;
    signal(sig, SIG_DFL); /* a second one stops at once */
}

/* ---- reading ------------------------------------------------------------- */

static int add_sequence(corpus *c, size_t *cap_seqs, size_t *cap_codes, const hmmrt_record *rec,
                        const char *alphabet, int skip_invalid, int64_t *skipped)
{
    if (c->n + 2 > (int64_t)*cap_seqs) {
        size_t cap = *cap_seqs ? 2 * *cap_seqs : 1024;
        char **names = realloc(c->names, cap * sizeof *names);
        if (names)
            c->names = names;
        int64_t *start = realloc(c->start, (cap + 1) * sizeof *start);
        if (start)
            c->start = start;
        if (!names || !start)
            return HMMRT_EXIT_INTERNAL;
        *cap_seqs = cap;
    }
    int64_t at = c->n ? c->start[c->n] : 0;
    if ((size_t)(at + rec->length + 1) > *cap_codes) {
        size_t cap = *cap_codes ? *cap_codes : 1 << 20;
        while (cap < (size_t)(at + rec->length + 1))
            cap *= 2;
        uint8_t *codes = realloc(c->codes, cap);
        if (!codes)
            return HMMRT_EXIT_INTERNAL;
        c->codes = codes;
        *cap_codes = cap;
    }
    if (c->n == 0)
        c->start[0] = 0;
    int64_t bad = hmmrt_map(alphabet, rec->residues, rec->length, c->codes + at);
    if (bad >= 0) {
        char symbol[8];
        hmmrt_describe_byte(symbol, (unsigned char)rec->residues[bad]);
        hmmrt_buf name = {0};
        hmmrt_describe_text(&name, rec->name);
        if (skip_invalid)
            hmmrt_warning("%s:%ld: sequence %s: symbol '%s' at position %lld (1-based) is not in "
                          "the alphabet; skipped",
                          rec->path, hmmrt_record_line_of(rec, bad), name.data ? name.data : "",
                          symbol, (long long)bad + 1);
        else
            hmmrt_error("%s:%ld: sequence %s: symbol '%s' at position %lld (1-based) is not in "
                        "the alphabet of the model: fix the sequence, or pass --skip-invalid to "
                        "leave such sequences out",
                        rec->path, hmmrt_record_line_of(rec, bad), name.data ? name.data : "",
                        symbol, (long long)bad + 1);
        hmmrt_buf_free(&name);
        if (!skip_invalid)
            return HMMRT_EXIT_INPUT;
        (*skipped)++;
        return 0;
    }
    c->names[c->n] = strdup(rec->name);
    if (!c->names[c->n])
        return HMMRT_EXIT_INTERNAL;
    c->n++;
    c->start[c->n] = at + rec->length;
    if (rec->length > c->longest)
        c->longest = rec->length;
    return 0;
}

/* The observations of a model over reals: train_real.c keeps them; here
 * only their names, lengths (start) and the left-out marks. */
static int read_real_corpus(trainer *t)
{
    int status = real_read_corpus(t->real, t->o, &t->seqs.n, &t->seqs.names, &t->seqs.longest);
    if (status)
        return status;
    t->seqs.start = malloc(((size_t)t->seqs.n + 1) * sizeof *t->seqs.start);
    t->seqs.left_out = calloc((size_t)t->seqs.n, 1);
    if (!t->seqs.start || !t->seqs.left_out) {
        hmmrt_error("out of memory while reading the observations");
        return HMMRT_EXIT_INTERNAL;
    }
    t->seqs.start[0] = 0;
    for (int64_t i = 0; i < t->seqs.n; i++) /* in observations: the shares' sizes */
        t->seqs.start[i + 1] = t->seqs.start[i] + real_length(t->real, i);
    return 0;
}

static int read_corpus(trainer *t, int64_t *skipped)
{
    if (t->real) { /* not under mpirun with several ranks (mpi_run.c) */
        int status = read_real_corpus(t);
        t->all_sequences = t->seqs.n;
        return status;
    }
    const char *alphabet = t->prog->alphabets[t->model->alphabet];
    hmmrt_reader *r = hmmrt_reader_open(t->o->files, t->o->n_files);
    if (!r)
        return HMMRT_EXIT_INTERNAL;
    size_t cap_seqs = 0, cap_codes = 0;
    int status = 0;
    char err[1024];
    hmmrt_record rec;
    for (;;) {
        int got = hmmrt_reader_next(r, &rec, err, sizeof err);
        if (got < 0) {
            hmmrt_error("%s", err);
            status = HMMRT_EXIT_INPUT;
            break;
        }
        if (got == 0)
            break;
        status = add_sequence(&t->seqs, &cap_seqs, &cap_codes, &rec, alphabet,
                              t->o->skip_invalid, skipped);
        hmmrt_record_release(&rec);
        if (status)
            break;
    }
    hmmrt_reader_close(r);
    if (status == HMMRT_EXIT_INTERNAL)
        hmmrt_error("out of memory while reading the sequences");
    int64_t everyone = t->seqs.n; /* under mpirun, every rank's (hmmrt_mpi.h) */
    if (hmmrt_mpi_active()) {
        int worst = status;
        if (hmmrt_mpi_max_int(&worst) != 0 || hmmrt_mpi_sum_i64(&everyone) != 0)
            worst = HMMRT_EXIT_INTERNAL;
        status = worst; /* a rank that failed to read stops them all */
    }
    if (!status && everyone == 0) {
        if (hmmrt_mpi_rank() == 0)
            hmmrt_error("no sequence to train on in the files given");
        status = HMMRT_EXIT_INPUT;
    }
    t->all_sequences = everyone;
    if (!status && hmmrt_mpi_active()) { /* each rank whole shares of one process's E-step */
        hmmrt_mpi_corpus c = {t->seqs.n, t->seqs.names, t->seqs.start, t->seqs.codes,
                              t->seqs.longest};
        int dealt = hmmrt_mpi_deal_shares(&c, t->n_threads, &t->share_from, &t->n_shares);
        t->seqs.n = c.n, t->seqs.names = c.names, t->seqs.start = c.start;
        t->seqs.codes = c.codes, t->seqs.longest = c.longest;
        if (dealt != 0) {
            hmmrt_error("MPI ranks could not exchange their sequences (out of memory, or MPI "
                        "failed)");
            status = HMMRT_EXIT_INTERNAL;
        }
    }
    if (!status) {
        t->seqs.left_out = calloc((size_t)t->seqs.n + 1, 1);
        if (!t->seqs.left_out) {
            hmmrt_error("out of memory while reading the sequences");
            status = HMMRT_EXIT_INTERNAL;
        }
    }
    return status;
}

/* ---- the expectation step, on every thread ------------------------------- */

/* One thread's share: sequences [from, to), its own sums. The shares are
 * fixed (equal numbers of symbols) and summed in their order after every
 * thread is done, so that the same input and --threads give the same
 * numbers to the last bit, whichever thread finishes first. */
typedef struct share {
    trainer *t;
    int64_t from, to;
    double *counts;      /* n_moves move counts, then n_values emission counts */
    long double ll;
    int64_t no_path;
    int failed;
} share;

/* Tiles of at most 64 sequences and 256 MB of forward tables. */
enum { TILE_ROWS = 64 };
#define TILE_BYTES ((size_t)256 << 20)

static int longest_first(const void *a, const void *b, void *context)
{
    const int64_t *start = context, i = *(const int64_t *)a, j = *(const int64_t *)b;
    int64_t li = start[i + 1] - start[i], lj = start[j + 1] - start[j];
    return li != lj ? (li < lj ? 1 : -1) : (i > j) - (i < j);
}

/* The share's sequences in tiles of matrix products (fb_blas.c): sorted
 * longest first, so that the share's sums come in the same order for the
 * same input and thread count; a sequence whose forward table alone passes
 * TILE_BYTES, and the empty ones, one at a time (hmmrt_fb_run). */
static void expect_share_tiles(share *sh, double *mc, double *ec, double *scratch)
{
    trainer *t = sh->t;
    const hmmrt_fb *fb = t->fb;
    const size_t n = (size_t)fb->n;
    int64_t count = sh->to - sh->from;
    int64_t *order = malloc(sizeof *order * (size_t)(count + 1));
    const uint8_t **x = malloc(sizeof *x * TILE_ROWS);
    int64_t *lengths = malloc(sizeof *lengths * TILE_ROWS);
    double *lnp = malloc(sizeof *lnp * TILE_ROWS), *uses = calloc(n * n, sizeof *uses);
    if (!order || !x || !lengths || !lnp || !uses) {
        sh->failed = 1;
        free(order), free(x), free(lengths), free(lnp), free(uses);
        return;
    }
    int64_t m = 0;
    for (int64_t i = sh->from; i < sh->to; i++)
        if (!t->seqs.left_out[i])
            order[m++] = i;
    qsort_r(order, (size_t)m, sizeof *order, longest_first, t->seqs.start);
    for (int64_t k = 0; k < m && !interrupted && !sh->failed;) {
        int rows = 0;
        const int64_t first_length = t->seqs.start[order[k] + 1] - t->seqs.start[order[k]];
        const size_t row_bytes = ((size_t)first_length + 1) * n * sizeof(double);
        while (k + rows < m && rows < TILE_ROWS && (size_t)(rows + 1) * row_bytes <= TILE_BYTES &&
               t->seqs.start[order[k + rows] + 1] > t->seqs.start[order[k + rows]]) {
            x[rows] = t->seqs.codes + t->seqs.start[order[k + rows]];
            lengths[rows] = t->seqs.start[order[k + rows] + 1] - t->seqs.start[order[k + rows]];
            rows++;
        }
        if (rows == 0) { /* too long for a tile, or empty */
            int64_t i = order[k++];
            const uint8_t *xi = t->seqs.codes + t->seqs.start[i];
            lnp[0] = hmmrt_fb_run(fb, xi, t->seqs.start[i + 1] - t->seqs.start[i], scratch, mc, ec,
                                  NULL);
            rows = 1;
            lengths[0] = i; /* the sequence, for the bookkeeping below */
        } else {
            sh->failed |=
                t->tiles->fb_tile(fb, x, lengths, rows, lnp, uses, mc, ec, NULL, NULL) != 0;
            for (int r = 0; r < rows; r++)
                lengths[r] = order[k + r];
            k += rows;
        }
        for (int r = 0; r < rows && !sh->failed; r++) {
            if (lnp[r] == -INFINITY || !isfinite(lnp[r])) {
                t->seqs.left_out[lengths[r]] = 1;
                sh->no_path++;
                continue;
            }
            sh->ll += lnp[r];
        }
    }
    t->tiles->fb_counts(fb, uses, mc);
    free(order), free(x), free(lengths), free(lnp), free(uses);
}

static void *expect_share(void *arg)
{
    share *sh = arg;
    trainer *t = sh->t;
    const hmmrt_fb *fb = t->fb;
    size_t n_moves = (size_t)fb->n_moves;
    sh->counts = calloc(n_moves + t->n_values + 1, sizeof *sh->counts);
    size_t bytes = t->o->viterbi_training ? hmmrt_fb_viterbi_scratch(fb, t->seqs.longest)
                                          : hmmrt_fb_scratch(fb, t->seqs.longest) * sizeof(double);
    if (t->real)
        bytes += real_scratch(t->real, t->seqs.longest) * sizeof(double);
    double *scratch = malloc(bytes);
    if (!sh->counts || !scratch) {
        free(scratch);
        sh->failed = 1;
        return NULL;
    }
    double *mc = sh->counts, *ec = mc + n_moves;
    if (t->tiles) {
        expect_share_tiles(sh, mc, ec, scratch);
        free(scratch);
        return NULL;
    }
    for (int64_t i = sh->from; i < sh->to && !interrupted; i++) {
        if (t->seqs.left_out[i])
            continue;
        const uint8_t *x = t->real ? NULL : t->seqs.codes + t->seqs.start[i];
        int64_t L = t->seqs.start[i + 1] - t->seqs.start[i];
        double lnp = t->real ? real_expect(t->real, fb, i, t->o->viterbi_training, scratch, mc, ec)
                     : t->o->viterbi_training
                         ? hmmrt_fb_viterbi_counts(fb, x, L, scratch, mc, ec)
                         : hmmrt_fb_run(fb, x, L, scratch, mc, ec, NULL);
        if (lnp == -INFINITY || !isfinite(lnp)) {
            t->seqs.left_out[i] = 1;
            sh->no_path++;
            continue;
        }
        sh->ll += lnp;
    }
    free(scratch);
    return NULL;
}

/* The E-step on the GPU: the same sums, each sequence's ln P from the device. */
static int expect_on_gpu(trainer *t)
{
    char err[512];
    const hmmrt_gpu_program *gp = t->prog->gpu;
    if (gp->fb_expect(t->gpu, t->fb, t->gpu_lnp, t->move_counts, t->emission_counts, err,
                      sizeof err) != 0) {
        hmmrt_error("training on the GPU: %s", err);
        return HMMRT_EXIT_INTERNAL;
    }
    long double ll = 0;
    t->no_path = 0;
    for (int64_t i = 0; i < t->seqs.n; i++) {
        if (t->seqs.left_out[i])
            continue;
        if (!isfinite(t->gpu_lnp[i])) {
            t->seqs.left_out[i] = 1;
            t->no_path++;
            continue;
        }
        ll += t->gpu_lnp[i];
    }
    t->log_likelihood = ll;
    if (!hmmrt_mpi_active())
        return 0;
    /* under mpirun: this rank's sums as one share of the ranks' total */
    size_t n_moves = (size_t)t->fb->n_moves, per = n_moves + t->n_values;
    double *mine = malloc((per + 1) * sizeof *mine), *total = malloc((per + 1) * sizeof *total);
    if (mine) {
        memcpy(mine, t->move_counts, n_moves * sizeof *mine);
        memcpy(mine + n_moves, t->emission_counts, t->n_values * sizeof *mine);
    }
    int64_t no_path = t->no_path;
    int failed = hmmrt_mpi_sum_shares(&mine, &ll, &no_path, 1, per, !mine || !total,
                                      total ? total : t->move_counts, &t->log_likelihood,
                                      &t->no_path) != 0;
    if (!failed) {
        memcpy(t->move_counts, total, n_moves * sizeof *total);
        memcpy(t->emission_counts, total + n_moves, t->n_values * sizeof *total);
    }
    free(mine), free(total);
    if (failed)
        hmmrt_error("training stopped: an MPI rank failed in its E-step (or MPI did)");
    return failed ? HMMRT_EXIT_INTERNAL : 0;
}

/* Under mpirun: the shares of every rank, summed in one fixed order
 * (mpi_train.c) into t's sums. failed: this rank's E-step failed. */
static int sum_ranks(trainer *t, share *shares, int n, int failed)
{
    size_t n_moves = (size_t)t->fb->n_moves, per = n_moves + t->n_values;
    double **counts = calloc((size_t)n + 1, sizeof *counts);
    long double *ll = calloc((size_t)n + 1, sizeof *ll);
    int64_t *no_path = calloc((size_t)n + 1, sizeof *no_path);
    double *total = malloc((per + 1) * sizeof *total);
    failed |= !counts || !ll || !no_path || !total;
    for (int k = 0; !failed && k < n; k++) {
        failed |= shares[k].failed;
        counts[k] = shares[k].counts;
        ll[k] = shares[k].ll;
        no_path[k] = shares[k].no_path;
    }
    double spare;
    failed = hmmrt_mpi_sum_shares(counts, ll, no_path, n, per, failed, total ? total : &spare,
                                  &t->log_likelihood, &t->no_path) != 0;
    if (!failed) {
        memcpy(t->move_counts, total, n_moves * sizeof *total);
        memcpy(t->emission_counts, total + n_moves, t->n_values * sizeof *total);
    }
    free(counts), free(ll), free(no_path), free(total);
    return failed;
}

/* The model over real observations with its current numbers: its moves
 * with fb's weights (moves: n_moves of them), its densities the trainer's. */
static hmmrt_model real_model_now(const trainer *t, hmmrt_model_move *moves)
{
    hmmrt_model m = *t->model;
    for (int k = 0; k < t->fb->n_moves; k++) {
        moves[k] = t->fb->moves[k];
        moves[k].weight = t->fb->live[k] ? t->fb->w[k] : 0;
    }
    m.moves = moves;
    m.n_moves = t->fb->n_moves;
    m.densities = real_densities(t->real);
    return m;
}

/* The E-step over real observations on the GPU (real_train_gpu.c): the
 * moves' uses and the densities' statistics, each sequence's ln P. */
static int expect_real_on_gpu(trainer *t)
{
    const hmmrt_gpu_program *gp = t->prog->gpu;
    hmmrt_model_move *moves = malloc(((size_t)t->fb->n_moves + 1) * sizeof *moves);
    if (!moves || !t->gpu_lnp) {
        free(moves);
        hmmrt_error("out of memory during training");
        return HMMRT_EXIT_INTERNAL;
    }
    const hmmrt_model m = real_model_now(t, moves);
    memset(t->move_counts, 0, (size_t)t->fb->n_moves * sizeof *t->move_counts);
    memset(t->emission_counts, 0, t->n_values * sizeof *t->emission_counts);
    double *gauss, *parts;
    int64_t *gauss_at;
    int *part_start;
    char err[512];
    int failed = gp->real_train_expect(t->real_gpu, &m, t->gpu_lnp, t->move_counts, &gauss,
                                       &gauss_at, &parts, &part_start, err, sizeof err);
    free(moves);
    if (failed) {
        hmmrt_error("training on the GPU: %s", err);
        return HMMRT_EXIT_INTERNAL;
    }
    real_add_gpu_stats(t->real, gauss, gauss_at, parts, part_start, t->emission_counts);
    long double ll = 0;
    t->no_path = 0;
    for (int64_t i = 0; i < t->seqs.n; i++) {
        if (!isfinite(t->gpu_lnp[i])) {
            t->seqs.left_out[i] = t->seqs.left_out[i] ? t->seqs.left_out[i] : 1;
            t->no_path++;
            continue;
        }
        ll += t->gpu_lnp[i];
    }
    t->log_likelihood = ll;
    return 0;
}

/* One E-step over every sequence: 0, or an exit status. */
static int expect(trainer *t)
{
    if (t->gpu)
        return expect_on_gpu(t);
    if (t->real_gpu)
        return expect_real_on_gpu(t);
    int n = t->n_threads < 1 ? 1 : t->n_threads;
    if ((int64_t)n > t->seqs.n)
        n = (int)t->seqs.n;
    if (t->share_from) /* under mpirun: this rank's shares of one process's (maybe 0) */
        n = t->n_shares;
    share *shares = calloc((size_t)n + 1, sizeof *shares);
    pthread_t *threads = calloc((size_t)n + 1, sizeof *threads);
    char *running = calloc((size_t)n + 1, 1);
    int status = shares && threads && running ? 0 : HMMRT_EXIT_INTERNAL;
    /* share k: from the first sequence whose symbols before it reach k / n of them */
    int64_t total = t->seqs.n ? t->seqs.start[t->seqs.n] : 0, i = 0;
    for (int k = 0; !status && k < n; k++) {
        shares[k] = (share){.t = t, .from = i};
        while (i < t->seqs.n && (k + 1 == n || t->seqs.start[i] < total / n * (k + 1)))
            i++;
        shares[k].to = k + 1 == n ? t->seqs.n : i;
        if (t->share_from)
            shares[k].from = t->share_from[k], shares[k].to = t->share_from[k + 1];
    }
    for (int k = 0; !status && k < n; k++)
        running[k] = pthread_create(&threads[k], NULL, expect_share, &shares[k]) == 0;
    for (int k = 0; !status && k < n; k++) {
        if (running[k])
            pthread_join(threads[k], NULL);
        else /* no thread for it: this one does it */
            expect_share(&shares[k]);
    }
    memset(t->move_counts, 0, (size_t)t->fb->n_moves * sizeof *t->move_counts);
    memset(t->emission_counts, 0, t->n_values * sizeof *t->emission_counts);
    t->log_likelihood = 0;
    t->no_path = 0;
    size_t n_moves = (size_t)t->fb->n_moves;
    int n_added = n; /* the shares added here: under mpirun, by sum_ranks */
    if (hmmrt_mpi_active()) {
        n_added = 0;
        if (sum_ranks(t, shares, n, status != 0)) {
            if (!status)
                hmmrt_error("training stopped: an MPI rank failed in its E-step (or MPI did)");
            status = HMMRT_EXIT_INTERNAL;
        }
    }
    for (int k = 0; !status && k < n_added; k++) {
        if (shares[k].failed) {
            status = HMMRT_EXIT_INTERNAL;
            break;
        }
        for (size_t j = 0; j < n_moves; j++)
            t->move_counts[j] += shares[k].counts[j];
        for (size_t j = 0; j < t->n_values; j++)
            t->emission_counts[j] += shares[k].counts[n_moves + j];
        t->log_likelihood += shares[k].ll;
        t->no_path += shares[k].no_path;
    }
    for (int k = 0; shares && k < n; k++)
        free(shares[k].counts);
    free(shares), free(threads), free(running);
    if (status)
        hmmrt_error("out of memory during training");
    return status;
}

/* ---- the maximisation step ------------------------------------------------ */

/* Sets the free weights out of each state, and the values of each free
 * emission table, in proportion to their counts plus c, keeping their sum;
 * zeros stay zero, and a state or table with no expected use keeps its
 * values. */
static void maximise(trainer *t, double c)
{
    hmmrt_fb *fb = t->fb;
    const hmmrt_model *m = t->model;
    for (int s = 0; s < fb->n; s++) {
        const int *out = t->out + t->out_start[s];
        int n_out = t->out_start[s + 1] - t->out_start[s], n_free = 0;
        double total = 0, used = 0, denominator = 0;
        for (int j = 0; j < n_out; j++)
            if (fb->w[out[j]] > 0 && !(m->move_fixed && m->move_fixed[out[j]])) {
                total += fb->w[out[j]];
                used += t->move_counts[out[j]];
                denominator += t->move_counts[out[j]] + c;
                n_free++;
            }
        /* a lone free weight keeps its value: its share of the total is all of it */
        if (n_free < 2 || !(used > 0) || !(denominator > 0))
            continue;
        for (int j = 0; j < n_out; j++)
            if (fb->w[out[j]] > 0 && !(m->move_fixed && m->move_fixed[out[j]])) {
                fb->w[out[j]] = total * (t->move_counts[out[j]] + c) / denominator;
                t->changed[out[j]] = 1;
            }
    }
    for (int em = 0; em < fb->n_emissions; em++) {
        if (m->emission_fixed && m->emission_fixed[em])
            continue;
        double *v = fb->e + (size_t)em * fb->K;
        const double *counts = t->emission_counts + (size_t)em * fb->K;
        double total = 0, used = 0, denominator = 0;
        int n_free = 0;
        for (int k = 0; k < fb->K; k++)
            if (v[k] > 0) {
                total += v[k];
                used += counts[k];
                denominator += counts[k] + c;
                n_free++;
            }
        if (n_free < 2 || !(used > 0) || !(denominator > 0))
            continue;
        for (int k = 0; k < fb->K; k++)
            if (v[k] > 0) {
                v[k] = total * (counts[k] + c) / denominator;
                t->changed[(size_t)fb->n_moves + (size_t)em * fb->K + k] = 1;
            }
    }
}

/* Every move out of each state: out[out_start[s] .. out_start[s+1]-1]. */
static int index_out(trainer *t)
{
    const hmmrt_fb *fb = t->fb;
    t->out_start = calloc((size_t)fb->n + 1, sizeof *t->out_start);
    t->out = malloc(((size_t)fb->n_moves + 1) * sizeof *t->out);
    int *next = malloc(((size_t)fb->n + 1) * sizeof *next);
    if (!t->out_start || !t->out || !next) {
        free(next);
        return -1;
    }
    for (int i = 0; i < fb->n_moves; i++)
        t->out_start[fb->moves[i].from + 1]++;
    for (int s = 0; s < fb->n; s++)
        t->out_start[s + 1] += t->out_start[s];
    memcpy(next, t->out_start, (size_t)fb->n * sizeof *next);
    for (int i = 0; i < fb->n_moves; i++)
        t->out[next[fb->moves[i].from]++] = i;
    free(next);
    return 0;
}

/* ---- writing the fitted program ------------------------------------------ */

typedef struct replacement {
    int64_t begin, end;
    double value;
} replacement;

static int by_begin(const void *a, const void *b)
{
    const replacement *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* The shortest text that reads back as exactly v. */
static void number_text(char out[40], double v)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(out, 40, "%.*g", digits, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

/* The replacements so far, for real_replacements. */
typedef struct replacements {
    replacement *r;
    size_t n, cap;
} replacements;

static void add_replacement(void *context, int64_t begin, int64_t end, double value)
{
    replacements *list = context;
    if (list->n < list->cap)
        list->r[list->n++] = (replacement){begin, end, value};
}

/* The source with every number training changed written anew, on stdout;
 * a model over reals writes its densities' kept numbers (kept 1) or its
 * current ones. */
static int write_program(const trainer *t, const double *w, const double *e, int kept)
{
    const hmmrt_model *m = t->model;
    const hmmrt_fb *fb = t->fb;
    size_t cap = (size_t)fb->n_moves + (t->real ? 0 : t->n_values) +
                 (t->real ? (size_t)m->density_span_at[m->densities->n] : 0) + 1, n = 0;
    replacement *r = malloc(cap * sizeof *r);
    if (!r) {
        hmmrt_error("out of memory while writing the fitted program");
        return HMMRT_EXIT_INTERNAL;
    }
    /* only the numbers an update set: the others keep their text (`1/6`) */
    for (int i = 0; i < fb->n_moves; i++)
        if (m->move_span[i].begin >= 0 && t->changed[i])
            r[n++] = (replacement){m->move_span[i].begin, m->move_span[i].end, w[i]};
    for (size_t j = 0; !t->real && j < t->n_values; j++)
        if (m->emission_span[j].begin >= 0 && t->changed[(size_t)fb->n_moves + j])
            r[n++] = (replacement){m->emission_span[j].begin, m->emission_span[j].end, e[j]};
    if (t->real) {
        replacements list = {r, n, cap};
        real_replacements(t->real, kept, add_replacement, &list);
        n = list.n;
    }
    qsort(r, n, sizeof *r, by_begin);
    const char *text = t->prog->source_text;
    int64_t at = 0;
    char num[40];
    for (size_t j = 0; j < n; j++) {
        fwrite(text + at, 1, (size_t)(r[j].begin - at), stdout);
        number_text(num, r[j].value);
        fputs(num, stdout);
        at = r[j].end;
    }
    fwrite(text + at, 1, (size_t)(t->prog->source_length - at), stdout);
    free(r);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        hmmrt_error("cannot write the fitted program: %s", strerror(errno ? errno : EIO));
        return HMMRT_EXIT_OUTPUT;
    }
    return 0;
}

/* ---- the run ----------------------------------------------------------------- */

/* Whether training can change anything: a state with two or more free
 * weights, or a free emission table with two or more values. */
static int has_free_parameter(const hmmrt_fb *fb, const hmmrt_model *m)
{
    int *free_out = calloc((size_t)fb->n + 1, sizeof *free_out);
    int found = 0;
    for (int i = 0; free_out && i < fb->n_moves; i++)
        if (fb->w[i] > 0 && !(m->move_fixed && m->move_fixed[i]) && ++free_out[fb->moves[i].from] > 1)
            found = 1;
    free(free_out);
    for (int em = 0; em < fb->n_emissions && !found; em++) {
        if (m->emission_fixed && m->emission_fixed[em])
            continue;
        int values = 0;
        for (int k = 0; k < fb->K; k++)
            values += fb->e[(size_t)em * fb->K + k] > 0;
        found = values > 1;
    }
    return found;
}

static int check_trainable(const hmmrt_program *prog, const hmmrt_model *m)
{
    if (!prog->source_text || !m->move_span || !m->emission_span) {
        hmmrt_error("model %s cannot be trained: %s", m->name,
                    m->not_trainable ? m->not_trainable
                                     : "this program does not carry its source's numbers "
                                       "(compile it again with this hmmc)");
        return HMMRT_EXIT_USAGE;
    }
    return 0;
}

/* Names the sequences this iteration found without a path (left_out 1),
 * the first ten of them, and marks them named (2): an iteration that finds
 * more names only those. */
static void name_left_out(trainer *t)
{
    int64_t found = 0;
    for (int64_t i = 0; i < t->seqs.n; i++) {
        if (t->seqs.left_out[i] != 1)
            continue;
        t->seqs.left_out[i] = 2;
        if (found++ < 10)
            hmmrt_warning("sequence %s: model %s gives it no path (probability 0); left out of "
                          "the training",
                          t->seqs.names[i], t->model->name);
    }
    if (found > 10)
        hmmrt_warning("%lld sequences in all have no path and were left out",
                      (long long)found);
}

/* Moves the E-step to the GPU where the program and the run allow it;
 * returns where it runs, for the first line on stderr. */
static const char *open_gpu(trainer *t)
{
    static char where[600];
    const hmmrt_gpu_program *gp = t->prog->gpu;
    snprintf(where, sizeof where, "on the CPU, %d threads", t->n_threads);
    if (t->real) {
        char err[512] = "";
        const char *why = !gp || !gp->real_train_open ? NULL
                          : t->o->cpu                 ? "--cpu"
                          : t->o->viterbi_training    ? "viterbi training runs on the CPU"
                          : t->o->use_double          ? "--double: the GPU trains in float"
                          : hmmrt_mpi_active()        ? "under mpirun, on the CPU"
                                                      : NULL;
        hmmrt_model_move *moves = malloc(((size_t)t->fb->n_moves + 1) * sizeof *moves);
        t->gpu_lnp = malloc(((size_t)t->seqs.n + 1) * sizeof *t->gpu_lnp);
        if (gp && gp->real_train_open && !why && moves && t->gpu_lnp) {
            const hmmrt_model m = real_model_now(t, moves);
            t->real_gpu = gp->real_train_open(&m, t->seqs.n, real_observations(t->real),
                                              real_lengths(t->real), t->o->device, err,
                                              sizeof err);
        }
        free(moves);
        if (t->real_gpu) {
            char shape[300];
            gp->real_train_describe(t->real_gpu, shape, sizeof shape);
            snprintf(where, sizeof where, "on GPU %d (%s)", t->o->device, shape);
        } else if (gp && gp->real_train_open) {
            snprintf(where + strlen(where), sizeof where - strlen(where), " (%s%s)",
                     why ? why : "the GPU cannot train it: ", why ? "" : err[0] ? err : "out of memory");
        } else if (gp) {
            snprintf(where + strlen(where), sizeof where - strlen(where),
                     " (this program's real observations train on the CPU)");
        }
        return where;
    }
    if (!gp || !gp->fb_open || !gp->fb_launch)
        return where;
    if (t->o->cpu || t->o->viterbi_training || t->o->use_double) {
        snprintf(where + strlen(where), sizeof where - strlen(where), " (%s)",
                 t->o->cpu ? "--cpu" : t->o->use_double ? "--double: the GPU trains in float"
                                                        : "viterbi training runs on the CPU");
        return where;
    }
    char err[512] = "";
    t->gpu_lnp = malloc(((size_t)t->seqs.n + 1) * sizeof *t->gpu_lnp);
    if (t->gpu_lnp)
        t->gpu = gp->fb_open(t->fb, t->seqs.n, t->seqs.start, t->seqs.codes, t->o->device,
                             gp->fb_launch, err, sizeof err);
    if (!t->gpu) {
        snprintf(where + strlen(where), sizeof where - strlen(where),
                 " (the GPU cannot train it: %s)", err[0] ? err : "out of memory");
        return where;
    }
    if (t->o->device >= 0)
        snprintf(where, sizeof where, "on GPU %d, in float, counts in double", t->o->device);
    else /* under mpirun, each rank its own (mpi_run.c) */
        snprintf(where, sizeof where, "on each rank's GPU, in float, counts in double");
    if (gp->fb_describe) {
        char shape[300];
        gp->fb_describe(t->gpu, shape, sizeof shape);
        snprintf(where + strlen(where), sizeof where - strlen(where), " (%s)", shape);
    }
    return where;
}

static void free_trainer(trainer *t)
{
    for (int64_t i = 0; !t->real && i < t->seqs.n; i++)
        free(t->seqs.names[i]);
    if (!t->real) /* train_real.c owns them */
        free(t->seqs.names);
    real_trainer_free(t->real);
    free(t->seqs.start), free(t->seqs.codes), free(t->seqs.left_out);
    free(t->share_from);
    free(t->move_counts), free(t->emission_counts);
    free(t->out_start), free(t->out), free(t->changed);
    if (t->gpu)
        t->prog->gpu->fb_close(t->gpu);
    if (t->real_gpu)
        t->prog->gpu->real_train_close(t->real_gpu);
    free(t->gpu_lnp);
    hmmrt_fb_free(t->fb);
}

int hmmrt_train(const hmmrt_program *prog, const hmmrt_options *o)
{
    const hmmrt_model *m = &prog->models[o->model];
    hmmrt_set_decimals(o->decimals);
    int status = check_trainable(prog, m);
    if (status)
        return status;
    trainer t = {.prog = prog, .o = o, .model = m, .n_threads = o->threads};
    char err[512];
    int K = (int)strlen(prog->alphabets[m->alphabet]);
    t.fb = hmmrt_fb_new(m, K, err, sizeof err);
    if (!t.fb) {
        hmmrt_error("model %s cannot be trained: %s", m->name, err);
        free_trainer(&t);
        return HMMRT_EXIT_INTERNAL;
    }
    t.n_values = (size_t)t.fb->n_emissions * (size_t)K;
    if (prog->real_dim > 0) {
        int real_status;
        t.real = real_trainer_new(m, &real_status);
        if (!t.real) {
            free_trainer(&t);
            return real_status;
        }
        t.n_values = real_stats_size(t.real);
    }
    if (!has_free_parameter(t.fb, m) && !(t.real && real_has_free_parameter(t.real))) {
        if (t.real)
            hmmrt_error("model %s has nothing to train: every state's weights are fixed or a "
                        "single number, and every gaussian and mixture is fixed (or a mixture "
                        "of one weight above 0); remove `fixed` from some of them", m->name);
        else
            hmmrt_error("model %s has nothing to train: every state's weights and every "
                        "emission table are fixed or a single number; remove `fixed` from "
                        "some of them", m->name);
        free_trainer(&t);
        return HMMRT_EXIT_USAGE;
    }
    t.move_counts = calloc((size_t)t.fb->n_moves + 1, sizeof *t.move_counts);
    t.emission_counts = calloc(t.n_values + 1, sizeof *t.emission_counts);
    t.changed = calloc((size_t)t.fb->n_moves + t.n_values + 1, 1);
    double *kept_w = malloc(((size_t)t.fb->n_moves + 1) * sizeof *kept_w);
    double *kept_e = malloc((t.n_values + 1) * sizeof *kept_e);
    if (!t.move_counts || !t.emission_counts || !t.changed || !kept_w || !kept_e ||
        index_out(&t) != 0) {
        hmmrt_error("out of memory");
        free(kept_w), free(kept_e);
        free_trainer(&t);
        return HMMRT_EXIT_INTERNAL;
    }
    int64_t skipped = 0;
    status = read_corpus(&t, &skipped);
    if (status) {
        free(kept_w), free(kept_e);
        free_trainer(&t);
        return status;
    }
    const char *where = open_gpu(&t);
    int blas = hmmrt_dense_blas_mode();
    if (blas < 0) {
        free(kept_w), free(kept_e);
        free_trainer(&t);
        return HMMRT_EXIT_USAGE;
    }
    /* the dense form's E-step as matrix products: from 128 states and 4
     * sequences a thread (as the scoring run's dense sums), or as told */
    int threads = t.n_threads < 1 ? 1 : t.n_threads;
    if (hmmrt_mpi_active()) /* decided as one process of every rank's threads would */
        threads *= hmmrt_mpi_size();
    if (!t.gpu && !t.real && !o->viterbi_training && t.fb->dense && prog->dense_batching &&
        prog->dense_batching->fb_tile && blas != DENSE_OFF &&
        (blas == DENSE_ON || (t.fb->n >= DENSE_BLAS_MIN_STATES &&
                              t.all_sequences >= (int64_t)DENSE_BLAS_SEQUENCES_A_THREAD * threads))) {
        t.tiles = prog->dense_batching;
        t.tiles->single_threaded();
    }
    char where_tiles[700];
    snprintf(where_tiles, sizeof where_tiles, "%s%s", where,
             t.tiles ? ", the dense form's sums as matrix products over tiles of sequences "
                       "(OpenBLAS)" : "");
    where = where_tiles;
    void (*old_handler)(int) = signal(SIGINT, on_interrupt);
    /* under mpirun rank 0 alone tells how training goes: every rank has the same sums */
    FILE *log = hmmrt_mpi_rank() == 0 ? stderr : fopen("/dev/null", "w");
    if (!log)
        log = stderr;
    fprintf(log, "# training model %s on %lld sequences (%s, pseudocount %g, at most %ld "
                    "iterations, tolerance %g), %s\n",
            m->name, (long long)t.all_sequences, o->viterbi_training ? "viterbi training" : "Baum-Welch",
            o->pseudocount, o->iterations, o->tolerance, where);
    double previous = 0;
    int have_previous = 0;
    long iteration = 0;
    int64_t left_out = 0;
    for (;; iteration++) {
        double started = hmmrt_seconds();
        status = expect(&t);
        if (status)
            break;
        if (interrupted) {
            if (have_previous) {
                fprintf(log, "# interrupted: writing the model of iteration %ld "
                                "(log-likelihood %.6f)\n", iteration - 1, previous);
                status = write_program(&t, kept_w, kept_e, 1);
            } else {
                hmmrt_error("interrupted before the first iteration ended: nothing written");
            }
            status = status ? status : 128 + SIGINT;
            break;
        }
        if (t.no_path) {
            left_out += t.no_path;
            name_left_out(&t);
        }
        double ll = (double)t.log_likelihood;
        char text[HMMRT_SCORE_MAX];
        hmmrt_format_score(text, ll); /* with --decimals, as the scores of a run */
        /* one write: under mpirun another rank's warning may come at the same time */
        char line[HMMRT_SCORE_MAX + 128], change[64] = "";
        if (have_previous)
            snprintf(change, sizeof change, "\tchange %+.6g", ll - previous);
        snprintf(line, sizeof line, "iteration %ld\t%s %s%s\t%.3f s\n", iteration,
                 o->viterbi_training ? "best-path score" : "log-likelihood", text, change,
                 hmmrt_seconds() - started);
        fputs(line, log);
        int converged = have_previous && ll - previous < o->tolerance * fabs(ll);
        if (have_previous && ll < previous - 1e-9 * fabs(ll) && log == stderr)
            hmmrt_warning("the log-likelihood fell by %g at iteration %ld (rounding, or a model "
                          "whose weights are scores)", previous - ll, iteration);
        if (converged || iteration >= o->iterations) {
            fprintf(log, "# %s after %ld iterations: %s %s\n",
                    converged ? "converged" : "stopped", iteration,
                    o->viterbi_training ? "best-path score" : "log-likelihood", text);
            status = write_program(&t, t.fb->w, t.fb->e, 0);
            break;
        }
        memcpy(kept_w, t.fb->w, (size_t)t.fb->n_moves * sizeof *kept_w);
        /* a model over reals keeps its densities' numbers in train_real.c (real_keep) */
        memcpy(kept_e, t.fb->e, (t.real ? 0 : t.n_values) * sizeof *kept_e);
        previous = ll;
        have_previous = 1;
        if (t.real)
            real_keep(t.real);
        maximise(&t, o->pseudocount);
        if (t.real && real_maximise(t.real, t.emission_counts, o->min_variance, o->pseudocount,
                                    err, sizeof err) != 0) {
            hmmrt_error("training stopped at iteration %ld: %s; nothing written", iteration + 1,
                        err);
            status = HMMRT_EXIT_INPUT;
            break;
        }
        if (hmmrt_fb_close_cycles(t.fb, err, sizeof err) != 0) {
            hmmrt_error("training stopped at iteration %ld: after the update, %s; mark one of "
                        "the cycle's weights `fixed`; nothing written",
                        iteration + 1, err);
            status = HMMRT_EXIT_INPUT;
            break;
        }
    }
    signal(SIGINT, old_handler == SIG_ERR ? SIG_DFL : old_handler);
    if (log != stderr)
        fclose(log);
    free(kept_w), free(kept_e);
    free_trainer(&t);
    if (!status && (skipped || left_out))
        status = HMMRT_EXIT_SKIPPED;
    return status;
}
