/* mpi_run.c: a program under mpirun (docs/scale-out.md). Each rank scores its
 * share of the input (ranges.c) as one process would, its table going to a
 * spool file (no header); then rank 0, whose table is already out, asks
 * rank 1, 2, ... in turn for theirs and copies them to its output, whole
 * rows at a time, so the output is one table in input order in bounded
 * memory. A rank that stopped (bad input in its range, out of memory) ends
 * its table with its "# incomplete" line: rank 0 copies it, names the rank
 * and its range, and prints nothing of the ranks after it. */
#include "hmmrt_mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { TAG_DONE = 1, TAG_GO = 2, TAG_PIECE = 3, PIECE_BYTES = 1 << 20 };

/* What a rank tells rank 0 when its run is over. */
typedef struct rank_done {
    int status;
    char share[480]; /* its share of the input, in words */
} rank_done;

static int stops_the_run(int status)
{
    return status != HMMRT_EXIT_OK && status != HMMRT_EXIT_SKIPPED;
}

/* A file for this rank's table, already unlinked: in TMPDIR, else /tmp. */
static int open_spool(char *why, size_t whylen)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/hmmrt-rank-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(why, whylen, "cannot make a spool file for this rank's rows in %s: %s (set "
                 "TMPDIR to a directory with room for them)", dir && *dir ? dir : "/tmp",
                 strerror(errno));
        return -1;
    }
    unlink(path);
    return fd;
}

/* The test hook of tests/mpi: HMMRT_MPI_TEST_KILL=R kills rank R (SIGKILL)
 * as it starts to hand its rows over, as a crashed node would. */
static void test_kill_point(void)
{
    const char *k = getenv("HMMRT_MPI_TEST_KILL");
    if (k && *k && atoi(k) == hmmrt_mpi_rank())
        raise(SIGKILL);
}

/* Rank r > 0: sends its table in pieces that end with a row (a row longer
 * than a piece goes whole): each piece's length, then its bytes; 0 ends. */
static int send_spool(int fd)
{
    size_t cap = PIECE_BYTES, have = 0;
    char *buf = malloc(cap);
    int64_t len;
    if (!buf || lseek(fd, 0, SEEK_SET) != 0) {
        free(buf);
        return -1;
    }
    test_kill_point();
    for (;;) {
        ssize_t n = read(fd, buf + have, cap - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        have += (size_t)n;
        size_t cut = have;
        while (n > 0 && cut > 0 && buf[cut - 1] != '\n')
            cut--;
        if (n > 0 && cut == 0) { /* one row longer than the buffer */
            char *more = realloc(buf, cap * 2);
            if (!more)
                break;
            buf = more;
            cap *= 2;
            continue;
        }
        if (n == 0)
            cut = have; /* the end: a table ends with a whole row */
        len = (int64_t)cut;
        if (len > 0 && (hmmrt_mpi_send(&len, sizeof len, 0, TAG_PIECE) != 0 ||
                        hmmrt_mpi_send(buf, cut, 0, TAG_PIECE) != 0))
            break;
        memmove(buf, buf + cut, have - cut);
        have -= cut;
        if (n == 0) {
            free(buf);
            len = 0;
            return hmmrt_mpi_send(&len, sizeof len, 0, TAG_PIECE);
        }
    }
    free(buf);
    return -1;
}

/* 1 when the n bytes at data (whole lines) end with a "# incomplete" line. */
static int ends_incomplete(const char *data, size_t n)
{
    static const char mark[] = "# incomplete";
    size_t at = n > 0 ? n - 1 : 0; /* the last line's newline */
    while (at > 0 && data[at - 1] != '\n')
        at--;
    return n - at > sizeof mark - 1 && memcmp(data + at, mark, sizeof mark - 1) == 0;
}

/* Rank 0: copies rank r's pieces to out: 0, or -1 (out->error, or MPI);
 * *incomplete: they ended with a "# incomplete" line. */
static int copy_rows(int r, hmmrt_out *out, int *incomplete)
{
    *incomplete = 0;
    char *buf = NULL;
    size_t cap = 0;
    for (;;) {
        int64_t len;
        if (hmmrt_mpi_recv(&len, sizeof len, r, TAG_PIECE) != 0)
            break;
        if (len == 0) {
            free(buf);
            return 0;
        }
        char *more = hmmrt_grow(buf, &cap, (size_t)len, 1, PIECE_BYTES);
        if (!more)
            break;
        buf = more;
        if (hmmrt_mpi_recv(buf, (size_t)len, r, TAG_PIECE) != 0)
            break;
        hmmrt_out_write(out, buf, (size_t)len);
        *incomplete = ends_incomplete(buf, (size_t)len);
        if (hmmrt_out_flush(out) != 0) { /* whole rows: a signal finds the table at a row's end */
            free(buf);
            return -1;
        }
    }
    free(buf);
    return -1;
}

/* Rank 0, its own table out with status: the others' in rank order. */
static int merge(int status)
{
    hmmrt_out out;
    if (hmmrt_out_open(&out, STDOUT_FILENO, 1 << 16) != 0) {
        hmmrt_error("out of memory");
        return HMMRT_EXIT_INTERNAL;
    }
    hmmrt_out_catch_signals(&out);
    int first_skipped = status == HMMRT_EXIT_SKIPPED, stopped = stops_the_run(status);
    for (int r = 1; r < hmmrt_mpi_size(); r++) {
        rank_done done;
        if (hmmrt_mpi_recv(&done, sizeof done, r, TAG_DONE) != 0) {
            status = HMMRT_EXIT_INTERNAL;
            stopped = 1;
        }
        int go = !stopped;
        hmmrt_mpi_send(&go, sizeof go, r, TAG_GO);
        if (!go)
            continue;
        int incomplete;
        if (copy_rows(r, &out, &incomplete) != 0) {
            if (out.error)
                hmmrt_error("cannot write the output: %s", strerror(out.error));
            else
                hmmrt_error("lost the rows of MPI rank %d (%s)", r, done.share);
            char where[600];
            snprintf(where, sizeof where, "MPI rank %d, whose rows could not be copied (%s)", r,
                     done.share);
            hmmrt_out_incomplete(&out, where);
            hmmrt_out_flush(&out);
            status = out.error ? HMMRT_EXIT_OUTPUT : HMMRT_EXIT_INTERNAL;
            stopped = 1;
            continue;
        }
        first_skipped |= done.status == HMMRT_EXIT_SKIPPED;
        if (stops_the_run(done.status)) {
            hmmrt_error("MPI rank %d of %d stopped (status %d) in its share of the input: %s; "
                        "the rows after its last are not printed",
                        r, hmmrt_mpi_size(), done.status, done.share);
            status = done.status;
            stopped = 1;
            if (!incomplete) { /* it stopped before it could say so (out of memory at its start) */
                char where[600];
                snprintf(where, sizeof where, "MPI rank %d, before its rows (%s)", r, done.share);
                hmmrt_out_incomplete(&out, where);
                hmmrt_out_flush(&out);
            }
        }
    }
    hmmrt_out_release_signals();
    hmmrt_out_close(&out);
    if (!stopped && first_skipped)
        status = HMMRT_EXIT_SKIPPED;
    return status;
}

/* Rank r > 0: tells rank 0 its status, then sends its rows when asked. */
static int hand_over(int status, int spool)
{
    rank_done done = {.status = status};
    snprintf(done.share, sizeof done.share, "%s", hmmrt_ranges_describe());
    int go = 0;
    if (hmmrt_mpi_send(&done, sizeof done, 0, TAG_DONE) != 0 ||
        hmmrt_mpi_recv(&go, sizeof go, 0, TAG_GO) != 0)
        return HMMRT_EXIT_INTERNAL;
    if (go && send_spool(spool) != 0)
        return HMMRT_EXIT_INTERNAL;
    return HMMRT_EXIT_OK; /* rank 0 reports this rank's status */
}

/* What a shared run cannot do yet: a message, else NULL. */
static const char *not_shared(const hmmrt_program *prog, const hmmrt_options *o)
{
    if (o->sample)
        return "--sample";
    if (o->make_db)
        return "--make-db";
    if (o->hits.first)
        return o->hits.first;
    if (prog->real_dim > 0)
        return "real observations";
    return NULL;
}

/* The rank's number among the ranks of its node. */
static int local_rank(void)
{
    const char *n = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    return n && *n ? atoi(n) : hmmrt_mpi_rank();
}

/* Every rank's status agreed on (the worst): a setup that failed on any
 * rank stops them all. */
static int agree(int status)
{
    int worst = status;
    return hmmrt_mpi_max_int(&worst) == 0 ? worst : HMMRT_EXIT_INTERNAL;
}

static int run_rank(const hmmrt_program *prog, hmmrt_options *o,
                    int (*dispatch)(const hmmrt_program *, const hmmrt_options *))
{
    int rank = hmmrt_mpi_rank(), size = hmmrt_mpi_size();
    char why[4600];
    const char *what = not_shared(prog, o);
    if (what) {
        if (rank == 0)
            hmmrt_error("%s is not shared out among MPI ranks yet: run it without mpirun "
                        "(or with -np 1)", what);
        return HMMRT_EXIT_USAGE;
    }
    int status = hmmrt_ranges_plan(o->files, o->n_files, rank, size, why, sizeof why) != 0
                     ? HMMRT_EXIT_INPUT : 0;
    if (status)
        hmmrt_error("MPI rank %d: %s", rank, why);
    int spool = -1;
    if (!status && rank > 0) {
        /* a rank's table goes to its spool (training writes nothing but
           rank 0's program); its stderr stays the job's */
        spool = o->train ? open("/dev/null", O_WRONLY | O_CLOEXEC) : open_spool(why, sizeof why);
        if (spool < 0 || dup2(spool, STDOUT_FILENO) < 0) {
            hmmrt_error("MPI rank %d: %s", rank, spool < 0 ? why : strerror(errno));
            status = HMMRT_EXIT_INTERNAL;
        }
        o->header = 0;
        o->progress = HMMRT_PROGRESS_OFF;
    }
    status = agree(status);
    if (status) {
        if (spool >= 0)
            close(spool);
        return status;
    }
    hmmrt_gpu_never_leave();
    if (!o->device_given) /* rank r on GPU r mod the devices of its node */
        o->device = -1 - local_rank();
    status = dispatch(prog, o);
    fflush(stdout);
    if (o->train) /* the reduction kept the ranks in step; the first failure counts */
        return status;
    if (rank == 0)
        return merge(status);
    status = hand_over(status, spool);
    close(spool);
    return status;
}

int hmmrt_mpi_main(const hmmrt_program *prog, hmmrt_options *o,
                   int (*dispatch)(const hmmrt_program *, const hmmrt_options *))
{
    char why[1024];
    if (hmmrt_mpi_start(why, sizeof why) != 0) {
        hmmrt_error("%s", why);
        return HMMRT_EXIT_USAGE;
    }
    int status = 0;
    if (o->output && hmmrt_mpi_rank() == 0 && !o->help && !o->version)
        status = hmmrt_output_to(o->output);
    if (hmmrt_mpi_size() > 1)
        status = agree(status);
    if (status)
        ; /* rank 0 said why */
    else if (o->help || o->version)
        status = hmmrt_mpi_rank() == 0 ? dispatch(prog, o) : 0;
    else if (hmmrt_mpi_size() == 1)
        status = dispatch(prog, o); /* one rank reads everything, as without mpirun */
    else
        status = run_rank(prog, o, dispatch);
    hmmrt_ranges_free();
    hmmrt_mpi_finish();
    return status;
}
