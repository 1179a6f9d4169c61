/* reader-bench.c: what each step of the input side costs, stand-alone:
 * read (pread into blocks), parse (the FASTA reader, which also reads),
 * map (residues to codes) and pack (order by length, copy each sequence to
 * its 16-byte offset, as the GPU driver does), in MB of FASTA a second of
 * wall and of CPU (the process's, all threads: per core). Both readers run
 * in turn in one process, ROUNDS times, so that they see the same load:
 * two passes (parse copies residues, map maps them) and, where the runtime
 * has it (hmmrt_reader_map_to), one pass (parse maps; map is then the copy
 * of the codes into the batch's buffer).
 *   reader-bench FILE THREADS ROUNDS [ALPHABET]   (benchmarks/reader-bench.sh builds and runs it)
 * READER_BENCH_ONLY=one (or two) runs that reader alone (for perf). */
#include "internal.h"
#include "input.h"

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { BATCH = 1 << 16, BATCH_RESIDUES = 1 << 26, PIECE = 4 << 20 };

static double rate(double bytes, double s) { return s > 0 ? bytes / s / 1e6 : 0; }

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct step_time {
    double wall, cpu;
} step_time;

enum { READ, TAKE, MAP, PACK, STEPS };

/* One pass over the file with the reader: take (read, parse, hand over:
 * with one_pass, mapping too), map, pack. */
static void run_reader(const char *path, int threads, const char *alphabet, int one_pass,
                       step_time t[STEPS], int64_t *n_seqs, int64_t *n_res, int64_t *bad)
{
    hmmrt_reader *r = hmmrt_reader_open(&path, 1);
    hmmrt_reader_set_pieces(r, threads, PIECE);
#ifdef HMMRT_READER_MAPS
    if (one_pass)
        hmmrt_reader_map_to(r, alphabet);
#endif
    static hmmrt_record *recs;
    static int64_t *lengths, *offsets, *order, *padded;
    static uint8_t *codes, *packed;
    if (!recs) {
        recs = malloc(BATCH * sizeof *recs);
        lengths = malloc(BATCH * sizeof *lengths);
        offsets = malloc(BATCH * sizeof *offsets);
        order = malloc(BATCH * sizeof *order);
        padded = malloc(BATCH * sizeof *padded);
        codes = malloc((size_t)BATCH_RESIDUES + (1 << 20) * 16);
        packed = malloc((size_t)BATCH_RESIDUES + (1 << 20) * 16 + (size_t)BATCH * 16);
        memset(codes, 0, (size_t)BATCH_RESIDUES + (1 << 20) * 16);
        memset(packed, 0, (size_t)BATCH_RESIDUES + (1 << 20) * 16 + (size_t)BATCH * 16);
    }
    *n_seqs = *n_res = *bad = 0;
    for (;;) {
        int status;
        int64_t residues = 0;
        double w0 = hmmrt_seconds(), c0 = cpu_seconds();
        int64_t n = hmmrt_reader_take(r, recs, BATCH, BATCH_RESIDUES, &residues, &status, NULL, 0);
        double w1 = hmmrt_seconds(), c1 = cpu_seconds();
        t[TAKE].wall += w1 - w0;
        t[TAKE].cpu += c1 - c0;
        int64_t at = 0;
        for (int64_t i = 0; i < n; i++) {
            lengths[i] = recs[i].length;
            offsets[i] = at;
            at += recs[i].length;
        }
        int64_t wrong = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : wrong)
        for (int64_t i = 0; i < n; i++) {
#ifdef HMMRT_READER_MAPS
            if (recs[i].codes) {
                wrong += recs[i].first_invalid != 0;
                memcpy(codes + offsets[i], recs[i].codes, (size_t)recs[i].length);
                continue;
            }
#endif
            wrong += hmmrt_map(alphabet, recs[i].residues, recs[i].length, codes + offsets[i]) >= 0;
        }
        *bad += wrong;
        double w2 = hmmrt_seconds(), c2 = cpu_seconds();
        t[MAP].wall += w2 - w1;
        t[MAP].cpu += c2 - c1;
        int64_t m = hmmrt_order_by_length(lengths, NULL, n, order);
        for (int64_t j = 0; j < m; j++)
            padded[j] = lengths[order[j]];
        hmmrt_code_offsets(padded, m, padded);
#pragma omp parallel for schedule(dynamic, 256)
        for (int64_t j = 0; j < m; j++) {
            int64_t i = order[j];
            memcpy(packed + padded[j], codes + offsets[i], (size_t)lengths[i]);
            memset(packed + padded[j] + lengths[i], 0,
                   (size_t)(hmmrt_pad16(lengths[i]) - lengths[i]));
        }
        t[PACK].wall += hmmrt_seconds() - w2;
        t[PACK].cpu += cpu_seconds() - c2;
        for (int64_t i = 0; i < n; i++)
            hmmrt_record_release(&recs[i]);
        *n_seqs += n;
        *n_res += residues;
        if (status <= 0)
            break;
    }
    hmmrt_reader_close(r);
}

/* The blocks alone, as the reader reads them. */
static void run_read(const char *path, int threads, step_time *t)
{
    int fd = open(path, O_RDONLY);
    char *block = malloc((size_t)threads * PIECE);
    off_t off = 0;
    double w0 = hmmrt_seconds(), c0 = cpu_seconds();
    while (hmmrt_read_block(fd, &off, block, threads, PIECE) > 0)
        ;
    t->wall += hmmrt_seconds() - w0;
    t->cpu += cpu_seconds() - c0;
    close(fd);
    free(block);
}

static void show(const char *what, double bytes, step_time t)
{
    printf("  %-34s %7.3f s wall %7.0f MB/s   %7.3f s CPU %7.0f MB/s per core\n", what, t.wall,
           rate(bytes, t.wall), t.cpu, rate(bytes, t.cpu));
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: reader-bench FILE THREADS ROUNDS [ALPHABET]\n");
        return 1;
    }
    const char *path = argv[1];
    int threads = atoi(argv[2]), rounds = atoi(argv[3]);
    const char *alphabet = argc > 4 ? argv[4] : "ACDEFGHIKLMNPQRSTVWY";
    const char *only = getenv("READER_BENCH_ONLY"); /* "one" or "two": that reader alone */
    omp_set_num_threads(threads);
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return 1;
    }
    double bytes = (double)st.st_size;
#ifdef HMMRT_READER_MAPS
    int modes = 2;
#else
    int modes = 1;
#endif
    for (int round = 1; round <= rounds; round++) {
        for (int one_pass = 0; one_pass < modes; one_pass++) {
            if (only && strcmp(only, one_pass ? "one" : "two") != 0)
                continue;
            step_time t[STEPS] = {{0, 0}};
            int64_t n_seqs, n_res, bad;
            run_read(path, threads, &t[READ]);
            run_reader(path, threads, alphabet, one_pass, t, &n_seqs, &n_res, &bad);
            printf("round %d, %d thread(s), %s: %.0f bytes, %lld sequences, %lld residues, "
                   "%lld with a byte outside the alphabet\n", round, threads,
                   one_pass ? "one pass (parse maps)" : "two passes", bytes, (long long)n_seqs,
                   (long long)n_res, (long long)bad);
            step_time parse = {t[TAKE].wall - t[READ].wall, t[TAKE].cpu - t[READ].cpu};
            step_time both = {parse.wall + t[MAP].wall, parse.cpu + t[MAP].cpu};
            show("read (pread alone)", bytes, t[READ]);
            show("take (read, parse, hand over)", bytes, t[TAKE]);
            show(one_pass ? "parse+map (take - read)" : "parse (take - read)", bytes, parse);
            show(one_pass ? "copy codes to the batch" : "map", bytes, t[MAP]);
            show("PARSE + MAP (+ copy)", bytes, both);
            show("pack (order, pad, copy)", bytes, t[PACK]);
        }
    }
    return 0;
}
