/* hmmrt_mpi.h: a generated program under mpirun (docs/scale-out.md): Open MPI loaded
 * at run time (mpi_dl.c), each rank's share of the input (ranges.c), the
 * merge of the ranks' tables by rank 0 (mpi_run.c) and training's reduction
 * of expected counts (mpi_train.c). Private to the runtime. */
#ifndef HMMRT_MPI_H
#define HMMRT_MPI_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* ---- mpi_dl.c --------------------------------------------------------------- */
/* 1 when the environment says mpirun (Open MPI) started this process. */
int hmmrt_mpi_launched(void);
/* Loads libmpi and initialises MPI: 0, or -1 with why set. */
int hmmrt_mpi_start(char *why, size_t whylen);
int hmmrt_mpi_rank(void); /* 0 and 1 when MPI is not started */
int hmmrt_mpi_size(void);
int hmmrt_mpi_active(void); /* started, with more than one rank */
/* Point to point and collectives over MPI_COMM_WORLD, in bytes: 0, or -1
 * (Open MPI's default handler aborts the job first on a failed link). */
int hmmrt_mpi_send(const void *data, size_t n, int to, int tag);
int hmmrt_mpi_recv(void *data, size_t n, int from, int tag);
int hmmrt_mpi_bcast(void *data, size_t n, int root);
int hmmrt_mpi_max_int(int *value); /* all-reduce with MPI_MAX */
int hmmrt_mpi_sum_i64(int64_t *value); /* all-reduce with MPI_SUM */
void hmmrt_mpi_finish(void);       /* MPI_Finalize, once */

/* ---- ranges.c --------------------------------------------------------------- */
/* What one rank reads of one input file. */
typedef struct hmmrt_window {
    int whole;            /* 1: the file is this rank's in full (and not cut) */
    int none;             /* 1: no part of it is this rank's */
    int64_t begin, end;   /* else: bytes [begin, end) of text, or records of a database */
    int is_db;
    const char *shown;    /* the file as messages name it: "seqs.fa (bytes 100-199)" */
} hmmrt_window;
/* Works out this rank's share of the files for rank of size ranks: 0, or
 * -1 with why set (a file that cannot be opened or cut). */
int hmmrt_ranges_plan(const char *const *files, int n_files, int rank, int size, char *why,
                      size_t whylen);
/* This rank's window on file i, or NULL when the input is not shared out. */
const hmmrt_window *hmmrt_window_of(int file);
/* This rank's share in words ("bytes 0-999 of a.fa"), for messages. */
const char *hmmrt_ranges_describe(void);
void hmmrt_ranges_free(void);

/* ---- mpi_run.c -------------------------------------------------------------- */
/* hmmrt_main's dispatch under mpirun: the run of this rank, then the merge;
 * the exit status. dispatch is run.c's. */
int hmmrt_mpi_main(const hmmrt_program *prog, hmmrt_options *o,
                   int (*dispatch)(const hmmrt_program *, const hmmrt_options *));

/* ---- mpi_train.c ------------------------------------------------------------ */
/* The E-step's sums of every rank's shares, added in one fixed order (rank
 * 0's shares in their order, then rank 1's ...: as one process adds its
 * threads' shares) and given to every rank. share k of this rank: counts[k]
 * (per_share doubles), ll[k], no_path[k]; failed: this rank's E-step failed.
 * The totals into total, ll_total, no_path_total: 0, or -1 when any rank
 * failed (or MPI did). */
int hmmrt_mpi_sum_shares(double *const *counts, const long double *ll, const int64_t *no_path,
                         int n_shares, size_t per_share, int failed, double *total,
                         long double *ll_total, int64_t *no_path_total);

/* A rank's sequences for training, as train.c keeps them. */
typedef struct hmmrt_mpi_corpus {
    int64_t n;
    char **names;
    int64_t *start; /* sequence i: codes[start[i] .. start[i+1]-1] */
    uint8_t *codes;
    int64_t longest;
} hmmrt_mpi_corpus;
/* Deals the ranks' sequences out again so that each rank holds whole shares
 * of the E-step as one process with size x threads threads cuts them (equal
 * symbols, train.c's expect()): rank r the shares k with k x size / S == r.
 * The corpus is replaced; *share_from (malloc'd, *n_shares + 1 entries):
 * where each of this rank's shares starts, empty ones included. 0, or -1
 * on every rank when any failed. */
int hmmrt_mpi_deal_shares(hmmrt_mpi_corpus *c, int threads, int64_t **share_from, int *n_shares);

#endif
