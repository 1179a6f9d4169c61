/* copy-bench.c: what each copy of the codes costs a GPU run's host per batch,
 * stand-alone (no GPU): the reader's codes (one-pass FASTA, or a database of
 * codes) copied into the batch's array, the driver's packing from that array,
 * the packing straight from each record's codes, which needs no array, and
 * the staging of this branch: each record's codes, in input order on the
 * reader's team, to its place in the sorted, padded array the driver then
 * copies to the device as it lies (runtime/score_batch.c).
 *   copy-bench FILE THREADS ROUNDS [ALPHABET]   (benchmarks/copy-bench.sh builds and runs it) */
#include "internal.h"
#include "input.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BATCH = 1 << 16, BATCH_RESIDUES = 1 << 26, PIECE = 4 << 20 };

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct step_time {
    double wall, cpu;
} step_time;

enum { TAKE, ORDER, COPY, PACK_ARRAY, PACK_DIRECT, STAGE, STEPS };
static const char *const step_names[STEPS] = {
    "take (read, parse+map or open db)", "order by length (lengths, sort)",
    "before: codes -> batch array", "before: array -> pinned (pack)",
    "no array: pack from the records", "staged: records -> sorted array"};

/* Evicts the caches (64 MB written, not timed), so that each step reads its
 * input from memory as the run does: a batch is read and mapped one batch
 * before the driver packs it, 64 M residues ago. */
static void evict(double *w, double *c)
{
    static uint8_t *junk;
    enum { JUNK = 64 << 20 };
    if (!junk)
        junk = malloc(JUNK);
    static uint8_t v;
    memset(junk, ++v, JUNK);
    *w = hmmrt_seconds();
    *c = cpu_seconds();
}

static void tick(step_time *t, double *w, double *c)
{
    double w1 = hmmrt_seconds(), c1 = cpu_seconds();
    t->wall += w1 - *w;
    t->cpu += c1 - *c;
    *w = w1;
    *c = c1;
}

/* The driver's pack_codes (runtime/gpu/chunks.c): sequence order[j] to its
 * 16-byte offset padded[j], zero-padded; from the array or the records. */
static void pack(uint8_t *to, const int64_t *padded, const int64_t *order, int64_t m,
                 const int64_t *lengths, const uint8_t *array, const int64_t *offsets,
                 const hmmrt_record *recs)
{
#pragma omp parallel for schedule(guided, 256)
    for (int64_t j = 0; j < m; j++) {
        int64_t i = order[j];
        const uint8_t *from = array ? array + offsets[i] : recs[i].codes;
        memcpy(to + padded[j], from, (size_t)lengths[i]);
        memset(to + padded[j] + lengths[i], 0, (size_t)(hmmrt_pad16(lengths[i]) - lengths[i]));
    }
}

static int run(const char *path, const char *alphabet, step_time t[STEPS], int64_t *n_seqs,
               int64_t *n_res)
{
    hmmrt_reader *r = hmmrt_reader_open(&path, 1);
    hmmrt_reader_set_pieces(r, omp_get_max_threads(), PIECE);
    hmmrt_reader_map_to(r, alphabet);
    static hmmrt_record *recs;
    static int64_t *lengths, *offsets, *order, *padded, *staged_at;
    static uint8_t *codes, *packed;
    size_t room = (size_t)BATCH_RESIDUES + (1 << 20) * 16 + (size_t)BATCH * 16;
    if (!recs) {
        recs = malloc(BATCH * sizeof *recs);
        lengths = malloc(BATCH * sizeof *lengths);
        offsets = malloc(BATCH * sizeof *offsets);
        order = malloc(BATCH * sizeof *order);
        padded = malloc(BATCH * sizeof *padded);
        staged_at = malloc(BATCH * sizeof *staged_at);
        codes = malloc(room);
        packed = malloc(room); /* stands for the pinned buffer: touched once, kept */
        memset(codes, 0, room);
        memset(packed, 0, room);
    }
    *n_seqs = *n_res = 0;
    for (;;) {
        int status;
        int64_t residues = 0;
        double w = hmmrt_seconds(), c = cpu_seconds();
        char err[1024] = "";
        int64_t n = hmmrt_reader_take(r, recs, BATCH, BATCH_RESIDUES, &residues, &status, err,
                                      sizeof err);
        if (status < 0) {
            fprintf(stderr, "%s\n", err);
            return -1;
        }
        tick(&t[TAKE], &w, &c);
        int64_t at = 0;
        for (int64_t i = 0; i < n; i++) {
            if (!recs[i].codes) {
                fprintf(stderr, "%s: a record without codes (not one alphabet?)\n", path);
                return -1;
            }
            lengths[i] = recs[i].length;
            offsets[i] = at;
            at += recs[i].length;
        }
        int64_t m = hmmrt_order_by_length(lengths, NULL, n, order);
        for (int64_t j = 0; j < m; j++)
            padded[j] = lengths[order[j]];
        hmmrt_code_offsets(padded, m, padded);
        tick(&t[ORDER], &w, &c);
        evict(&w, &c);
#pragma omp parallel for schedule(dynamic, 64)
        for (int64_t i = 0; i < n; i++)
            memcpy(codes + offsets[i], recs[i].codes, (size_t)recs[i].length);
        tick(&t[COPY], &w, &c);
        evict(&w, &c);
        pack(packed, padded, order, m, lengths, codes, offsets, NULL);
        tick(&t[PACK_ARRAY], &w, &c);
        evict(&w, &c);
        pack(packed, padded, order, m, lengths, NULL, NULL, recs);
        tick(&t[PACK_DIRECT], &w, &c);
        evict(&w, &c);
        hmmrt_staged_offsets(lengths, n, order, m, staged_at);
#pragma omp parallel for schedule(dynamic, 64)
        for (int64_t i = 0; i < n; i++) {
            uint8_t *to = packed + staged_at[i];
            memcpy(to, recs[i].codes, (size_t)lengths[i]);
            memset(to + lengths[i], 0, (size_t)(hmmrt_pad16(lengths[i]) - lengths[i]));
        }
        tick(&t[STAGE], &w, &c);
        for (int64_t i = 0; i < n; i++)
            hmmrt_record_release(&recs[i]);
        *n_seqs += n;
        *n_res += residues;
        if (status <= 0)
            break;
    }
    hmmrt_reader_close(r);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: copy-bench FILE THREADS ROUNDS [ALPHABET]\n");
        return 1;
    }
    const char *path = argv[1];
    int threads = atoi(argv[2]), rounds = atoi(argv[3]);
    const char *alphabet = argc > 4 ? argv[4] : "ACDEFGHIKLMNPQRSTVWY";
    omp_set_num_threads(threads);
    /* databases are read by a program of this one alphabet */
    static hmmrt_program prog;
    prog.n_alphabets = 1;
    prog.alphabets = &alphabet;
    hmmrt_db_expect(&prog);
    for (int round = 1; round <= rounds; round++) {
        step_time t[STEPS] = {{0, 0}};
        int64_t n_seqs, n_res;
        if (run(path, alphabet, t, &n_seqs, &n_res) != 0)
            return 1;
        printf("round %d, %d thread(s): %lld sequences, %lld residues\n", round, threads,
               (long long)n_seqs, (long long)n_res);
        for (int s = 0; s < STEPS; s++)
            printf("  %-36s %7.3f s wall %7.3f s CPU %6.2f GB/s per core\n", step_names[s],
                   t[s].wall, t[s].cpu, t[s].cpu > 0 ? (double)n_res / t[s].cpu / 1e9 : 0);
    }
    return 0;
}
