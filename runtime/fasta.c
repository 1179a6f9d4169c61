/* fasta.c: the FASTA reader (hmmrt_reader_*): several files in turn, "-" for
 * standard input, each opened once (a run opens them all before it reads,
 * and checks the descriptors it got). A file is read in blocks; a block is cut into pieces at
 * lines that start with '>', and the pieces are parsed at once on several
 * threads (fasta_parse.c), the first one going on with the record that the
 * last block left unfinished; with several threads, a block is cut into
 * four pieces a thread, each taken by the first thread free, so that a
 * thread the system puts aside (a run's other teams share the cores) holds
 * up one small piece, not the block. Records are then handed out one by one, in
 * file order, their names and residues in the piece's store (a pool that
 * the records share and release). Records, line numbers and errors are the
 * same for every block size and thread count. A file is told apart by its
 * first bytes: gzip-compressed text is inflated into the blocks
 * (gzip_input.c), a packed database hands out its records from a mapping
 * (db.c). */
#include "internal.h"

#include "fasta_parse.h"
#include "hmmrt_mpi.h"
#include "input.h"
#include "read_long.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    DEFAULT_PIECE_BYTES = 4 << 20,
    MAX_PIECES = HMMRT_READ_MAX_RANGES,
    PIECES_A_THREAD = 4 /* with several threads, a block's pieces a thread */
};

#define STDIN_NAME "<stdin>" /* as gcc names it in messages */

/* The store of one parsed piece, freed with the last record that uses it;
 * or a database's mapping (mapped > 0 bytes), unmapped so. */
struct hmmrt_pool {
    atomic_long records;
    char *data;
    size_t mapped;
};

struct hmmrt_reader {
    char **paths; /* copies of the file names */
    int *fds;     /* per file: opened by hmmrt_reader_open_files, else -1 */
    int n_paths;
    int next_path;    /* the next file to open */
    int fd;           /* -1 between files */
    int seekable;     /* a regular file, read at offset with pread */
    off_t offset;
    hmmrt_gunzip *gz; /* the current file is gzip-compressed */
    hmmrt_db *db;     /* ... or a database */
    hmmrt_db **dbs;   /* per file, its database (the paths its records name) */
    unsigned char prefix[HMMRT_SNIFF_BYTES]; /* a pipe's first bytes, read to tell */
    size_t n_prefix;                          /* its kind, not yet parsed */
    const char *path; /* the file being read, as messages name it */
    long line;        /* where the reader is, for hmmrt_reader_where */
    int failed;       /* an error was handed out: every later call fails too */
    int out_of_memory; /* ... and it was a failed allocation */

    int threads;
    size_t piece_bytes; /* a block is threads x piece_bytes, ... */
    int pieces;         /* ... read and parsed in this many pieces ... */
    size_t range;       /* ... of this many bytes (pieces x range <= the block) */
    fasta_map map_table; /* hmmrt_reader_map_to's alphabet ... */
    const fasta_map *map;  /* ... or NULL: records hold residues */
    const char *map_alphabet;
    char *block;
    size_t block_cap;

    fasta_parse carry; /* goes on at the next block of the current file */
    /* Each piece's list of records and runs of lines, kept for the same
     * piece of the next block (grown anew a block, they cost more than
     * handing the records over): */
    fasta_parsed *spare_records[MAX_PIECES];
    size_t spare_records_cap[MAX_PIECES];
    hmmrt_line_run *spare_runs[MAX_PIECES];
    size_t spare_runs_cap[MAX_PIECES];

    hmmrt_record *pending; /* parsed, not yet handed out */
    size_t n_pending, next_pending, pending_cap;
    int error_pending; /* handed out after the pending records */
    char error[1024];

    double seconds[HMMRT_READER_PHASES]; /* where the reading went (--timing) */

    /* Under mpirun, this rank's part of the current file (ranges.c): */
    off_t window_end;    /* text: read up to this byte; 0: to the end */
    int64_t db_skip;     /* a database: records before this rank's */
    int64_t db_left;     /* ... and this rank's still to hand out; -1: all */
};

static const char *display_name(const char *path)
{
    return strcmp(path, "-") == 0 ? STDIN_NAME : path;
}

void hmmrt_reader_set_pieces(hmmrt_reader *r, int threads, size_t piece_bytes)
{
    r->threads = threads < 1 ? 1 : threads > MAX_PIECES ? MAX_PIECES : threads;
    r->piece_bytes = piece_bytes > 0 ? piece_bytes : 1;
    int split = r->threads > 1 && r->piece_bytes >= PIECES_A_THREAD ? PIECES_A_THREAD : 1;
    r->pieces = r->threads * split > MAX_PIECES ? MAX_PIECES : r->threads * split;
    r->range = (size_t)r->threads * r->piece_bytes / (size_t)r->pieces;
}

int hmmrt_reader_map_to(hmmrt_reader *r, const char *alphabet)
{
    if (!alphabet || strlen(alphabet) >= 0x80 || !alphabet[0])
        return -1; /* codes must stay below the map's marks */
    fasta_map_table(&r->map_table, alphabet);
    r->map = &r->map_table;
    r->map_alphabet = alphabet;
    return 0;
}

const char *hmmrt_reader_mapped_alphabet(const hmmrt_reader *r)
{
    return r->map ? r->map_alphabet : NULL;
}

hmmrt_reader *hmmrt_reader_open(const char *const *paths, int n_paths)
{
    hmmrt_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->fd = -1;
    hmmrt_reader_set_pieces(r, 1, DEFAULT_PIECE_BYTES);
    r->paths = calloc((size_t)(n_paths > 0 ? n_paths : 1), sizeof *r->paths);
    r->fds = malloc((size_t)(n_paths > 0 ? n_paths : 1) * sizeof *r->fds);
    r->dbs = calloc((size_t)(n_paths > 0 ? n_paths : 1), sizeof *r->dbs);
    if (!r->paths || !r->fds || !r->dbs) {
        hmmrt_reader_close(r);
        return NULL;
    }
    for (int i = 0; i < n_paths; i++) {
        r->paths[i] = strdup(paths[i]);
        r->fds[i] = -1;
        if (!r->paths[i]) {
            hmmrt_reader_close(r);
            return NULL;
        }
        r->n_paths++;
    }
    return r;
}

long hmmrt_record_line_of(const hmmrt_record *rec, int64_t position)
{
    for (int64_t k = 0; k < rec->n_runs; k++) {
        const hmmrt_line_run *run = &rec->runs[k];
        if (position < run->residues)
            return rec->line + run->first_line + (long)(position / run->width);
        position -= run->residues;
    }
    return rec->line; /* not a residue of rec */
}

struct hmmrt_pool *hmmrt_pool_of_mapping(void *data, size_t bytes)
{
    struct hmmrt_pool *pool = malloc(sizeof *pool);
    if (!pool)
        return NULL;
    atomic_init(&pool->records, 1);
    pool->data = data;
    pool->mapped = bytes;
    return pool;
}

void hmmrt_pool_hold(struct hmmrt_pool *pool)
{
    atomic_fetch_add(&pool->records, 1);
}

void hmmrt_pool_drop(struct hmmrt_pool *pool)
{
    if (pool && atomic_fetch_sub(&pool->records, 1) == 1) {
        if (pool->mapped)
            munmap(pool->data, pool->mapped);
        else
            hmmrt_store_give_back(pool->data);
        free(pool);
    }
}

void hmmrt_record_release(hmmrt_record *rec)
{
    struct hmmrt_pool *pool = rec->pool;
    rec->pool = NULL;
    hmmrt_pool_drop(pool);
}

static void close_current_file(hmmrt_reader *r)
{
    if (r->fd > STDIN_FILENO)
        close(r->fd);
    r->fd = -1;
    fasta_parse_free(&r->carry);
    hmmrt_gunzip_close(r->gz);
    r->gz = NULL;
    if (r->db)
        hmmrt_db_finish(r->db);
    r->db = NULL;
    r->n_prefix = 0;
}

void hmmrt_reader_close(hmmrt_reader *r)
{
    if (!r)
        return;
    close_current_file(r);
    for (size_t i = r->next_pending; i < r->n_pending; i++)
        hmmrt_record_release(&r->pending[i]);
    free(r->pending);
    for (int k = 0; k < MAX_PIECES; k++) {
        free(r->spare_records[k]);
        free(r->spare_runs[k]);
    }
    for (int i = 0; i < r->n_paths; i++) {
        if (r->fds[i] > STDIN_FILENO)
            close(r->fds[i]);
        free(r->paths[i]);
        hmmrt_db_free(r->dbs[i]);
    }
    free(r->paths);
    free(r->fds);
    free(r->dbs);
    free(r->block);
    free(r);
}

void hmmrt_reader_seconds(const hmmrt_reader *r, double seconds[HMMRT_READER_PHASES])
{
    for (int k = 0; k < HMMRT_READER_PHASES; k++)
        seconds[k] = r ? r->seconds[k] : 0;
}

void hmmrt_reader_where(const hmmrt_reader *r, const char **path, long *line)
{
    *path = r->path;
    *line = r->line;
}

int hmmrt_reader_out_of_memory(const hmmrt_reader *r)
{
    return r->out_of_memory;
}

/* An error to hand out after the records parsed before it; the input is not
 * read any further. line 0: none to name. */
static void set_error(hmmrt_reader *r, long line, int out_of_memory, const char *what)
{
    if (line > 0)
        snprintf(r->error, sizeof r->error, "%s:%ld: %s", r->path, line, what);
    else
        snprintf(r->error, sizeof r->error, "%s: %s", r->path, what);
    r->error_pending = 1;
    r->out_of_memory = out_of_memory;
    r->line = line;
    close_current_file(r);
}

static int open_file(const char *path, int *fd, char *err, size_t errlen)
{
    if (strcmp(path, "-") == 0) {
        *fd = STDIN_FILENO;
        return 0;
    }
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    const char *why = NULL;
    if (*fd < 0)
        why = strerror(errno);
    else if (fstat(*fd, &st) == 0 && S_ISDIR(st.st_mode))
        why = "it is a directory";
    if (!why)
        return 0;
    int saved = *fd < 0 ? errno : EISDIR;
    snprintf(err, errlen, "%s: cannot open: %s", path, why);
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
    errno = saved;
    return -1;
}

/* Lets this process hold n more descriptors than now, if its hard limit
 * does (the soft one is often 1,024). */
static void allow_descriptors(int n)
{
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0)
        return;
    rlim_t want = (rlim_t)n + 64;
    if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < want) {
        lim.rlim_cur = lim.rlim_max == RLIM_INFINITY || lim.rlim_max > want ? want : lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
}

static int is_regular(int fd)
{
    struct stat st;
    return fd > STDIN_FILENO && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* Closes the regular files opened so far (below n): they open again in
 * their turn, to the same effect, while a FIFO or a device keeps its one
 * opening. */
static void release_regular_files(hmmrt_reader *r, int n)
{
    for (int i = 0; i < n; i++)
        if (is_regular(r->fds[i])) {
            close(r->fds[i]);
            r->fds[i] = -1;
        }
}

int hmmrt_reader_open_files(hmmrt_reader *r, char *err, size_t errlen)
{
    allow_descriptors(r->n_paths);
    int keep_regular = 1; /* until descriptors run short */
    for (int i = 0; i < r->n_paths; i++) {
        int opened = open_file(r->paths[i], &r->fds[i], err, errlen) == 0;
        if (!opened && errno == EMFILE && keep_regular) {
            keep_regular = 0;
            release_regular_files(r, i);
            opened = open_file(r->paths[i], &r->fds[i], err, errlen) == 0;
        }
        if (opened && !keep_regular && is_regular(r->fds[i])) {
            close(r->fds[i]);
            r->fds[i] = -1;
        }
        if (opened)
            continue;
        if (errno == EMFILE) {
            size_t len = strlen(err);
            snprintf(err + len, errlen - len, " (input that is not a regular file, such as a "
                     "FIFO, is held open from the start, a descriptor each: raise ulimit -n or "
                     "pass fewer such files a run)");
        }
        return i;
    }
    return -1;
}

/* Tells the current file's kind by its first bytes (read at offset 0 of a
 * regular file; from a pipe, kept as the prefix of its text) and opens a
 * database or a gzip stream: 1, or -1 after setting an error. */
static int open_kind(hmmrt_reader *r, int file)
{
    unsigned char head[HMMRT_SNIFF_BYTES];
    ssize_t n;
    if (r->seekable) {
        do
            n = pread(r->fd, head, sizeof head, 0);
        while (n < 0 && errno == EINTR);
    } else {
        n = hmmrt_read_block(r->fd, NULL, (char *)head, 1, sizeof head);
    }
    if (n < 0) {
        char what[512];
        snprintf(what, sizeof what, "cannot read: %s", strerror(errno));
        set_error(r, 0, 0, what);
        return -1;
    }
    char why[768];
    if (hmmrt_is_db(head, (size_t)n)) {
        if (!r->seekable) {
            set_error(r, 0, 0, "a packed database is read by mapping it, which standard input "
                               "or a pipe cannot be: name the file itself");
            return -1;
        }
        r->db = hmmrt_db_open(r->fd, r->path, why, sizeof why);
        if (!r->db) {
            set_error(r, 0, 0, why);
            return -1;
        }
        r->dbs[file] = r->db; /* freed with the reader: its records name its paths */
        return 1;
    }
    if (!r->seekable) {
        memcpy(r->prefix, head, (size_t)n);
        r->n_prefix = (size_t)n;
    }
    if (hmmrt_is_gzip(head, (size_t)n)) {
        r->gz = hmmrt_gunzip_open(r->fd, r->prefix, r->n_prefix);
        r->n_prefix = 0;
        if (!r->gz) {
            set_error(r, 0, 1, "out of memory");
            return -1;
        }
    }
    return 1;
}

/* Under mpirun, starts the current file at this rank's part of it: text
 * from its first record (lines counted from there, the file named "PATH
 * (from byte B)"), a database from its first record. */
static void enter_window(hmmrt_reader *r, const hmmrt_window *w)
{
    r->window_end = 0;
    r->db_skip = 0;
    r->db_left = -1;
    if (!w || w->whole)
        return;
    if (r->db) {
        r->db_skip = w->begin;
        r->db_left = w->end - w->begin;
    } else if (!r->gz && r->seekable) {
        r->offset = (off_t)w->begin;
        r->window_end = (off_t)w->end;
        r->path = w->shown;
    }
}

/* Opens the next file: 1, 0 when none is left, -1 after setting an error. */
static int open_next_file(hmmrt_reader *r)
{
    while (r->next_path < r->n_paths && hmmrt_window_of(r->next_path) &&
           hmmrt_window_of(r->next_path)->none) { /* another rank's (hmmrt_mpi.h) */
        if (r->fds[r->next_path] > STDIN_FILENO)
            close(r->fds[r->next_path]);
        r->fds[r->next_path++] = -1;
    }
    if (r->next_path >= r->n_paths)
        return 0;
    const char *path = r->paths[r->next_path++];
    r->path = display_name(path);
    r->line = 0;
    if (r->fds[r->next_path - 1] >= 0) { /* opened once, at the start: a FIFO
                                             cannot be opened a second time */
        r->fd = r->fds[r->next_path - 1];
        r->fds[r->next_path - 1] = -1;
    } else if (open_file(path, &r->fd, r->error, sizeof r->error) != 0) {
        r->error_pending = 1;
        return -1;
    }
    struct stat st;
    r->seekable = r->fd != STDIN_FILENO && fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode);
    r->offset = 0;
    r->line = 1;
    if (fasta_parse_start(&r->carry, 1, 0) != 0) {
        set_error(r, 0, 1, "out of memory");
        return -1;
    }
    r->carry.map = r->map; /* the file's pieces map as its first does */
    int opened = open_kind(r, r->next_path - 1);
    if (opened > 0)
        enter_window(r, hmmrt_window_of(r->next_path - 1));
    return opened;
}

/* Fills the block from the current file: its length (0 at the end of the
 * file), or -1 after setting an error. */
static long fill_block(hmmrt_reader *r)
{
    size_t cap = (size_t)r->threads * r->piece_bytes;
    if (r->block_cap != cap) {
        free(r->block);
        r->block = malloc(cap);
        r->block_cap = r->block ? cap : 0;
        if (!r->block) {
            set_error(r, r->line, 1, "out of memory");
            return -1;
        }
    }
    if (r->gz) {
        char why[768];
        long n = hmmrt_gunzip_read(r->gz, r->block, cap, why, sizeof why);
        if (n < 0) {
            char what[1024];
            long line = r->line - (r->carry.state == FASTA_AT_LINE_START && r->line > 1);
            snprintf(what, sizeof what, "after line %ld of its text: %s", line, why);
            set_error(r, 0, 0, what);
        }
        return n;
    }
    long n;
    if (r->n_prefix > 0) { /* a pipe's first bytes, read to tell its kind */
        memcpy(r->block, r->prefix, r->n_prefix);
        n = hmmrt_read_block(r->fd, NULL, r->block + r->n_prefix, 1, cap - r->n_prefix);
        n = n < 0 ? n : n + (long)r->n_prefix;
        r->n_prefix = 0;
    } else if (r->window_end > 0 && r->window_end - r->offset < (off_t)cap) {
        off_t left = r->window_end - r->offset; /* the end of this rank's part */
        n = left > 0 ? hmmrt_read_block(r->fd, &r->offset, r->block, 1, (size_t)left) : 0;
    } else {
        n = hmmrt_read_ranges(r->fd, r->seekable ? &r->offset : NULL, r->block, r->pieces,
                              r->range, r->threads, &r->seconds[HMMRT_READER_BLOCKS_CPU]);
    }
    if (n < 0) {
        char what[512];
        snprintf(what, sizeof what, "cannot read: %s", strerror(errno));
        set_error(r, r->line, 0, what);
    }
    return n;
}

/* Where the pieces of a block of n bytes start: the first at 0, each other
 * at a '>' that starts a line, about n / pieces apart. Returns how many. */
static int cut_pieces(const char *block, size_t n, int pieces, size_t starts[])
{
    int count = 1;
    starts[0] = 0;
    for (int k = 1; k < pieces; k++) {
        size_t target = n / (size_t)pieces * (size_t)k;
        if (target <= starts[count - 1])
            target = starts[count - 1] + 1;
        const char *at = block + target - 1, *end = block + n;
        const char *found = NULL;
        while (!found && at < end) {
            const char *newline = memchr(at, '\n', (size_t)(end - at));
            if (!newline || newline + 1 >= end)
                break;
            if (newline[1] == '>')
                found = newline + 1;
            at = newline + 1;
        }
        if (!found)
            break; /* no record starts further on in this block */
        starts[count++] = (size_t)(found - block);
    }
    return count;
}

/* Room for n more pending records: 0, or -1. */
static int reserve_pending(hmmrt_reader *r, size_t n)
{
    hmmrt_record *pending = hmmrt_grow(r->pending, &r->pending_cap, r->n_pending + n,
                                       sizeof *pending, 1024);
    if (!pending)
        return -1;
    r->pending = pending;
    return 0;
}

/* A parse's complete records as the reader hands them out, into `into`
 * (room for p->n_records), sharing pool, lines moved by line_offset. */
static void make_records(const hmmrt_reader *r, const fasta_parse *p, struct hmmrt_pool *pool,
                         long line_offset, hmmrt_record *into)
{
    const char *store = pool->data;
    for (size_t i = 0; i < p->n_records; i++) {
        const fasta_parsed *f = &p->records[i];
        into[i] = (hmmrt_record){.name = store + f->name_at,
                                 .residues = p->map ? NULL : store + f->residues_at,
                                 .length = f->length,
                                 .path = r->path,
                                 .line = f->line + line_offset,
                                 .pool = pool,
                                 .runs = (const hmmrt_line_run *)(store + f->runs_at),
                                 .n_runs = (int64_t)f->n_runs,
                                 .codes = p->map ? (const uint8_t *)store + f->residues_at : NULL,
                                 .first_invalid = f->first_invalid,
                                 .invalid_byte = f->invalid_byte};
    }
}

/* A pool made of store for a parse's records (it owns store then, also on
 * failure): NULL when there are none (the store is given back) or out of
 * memory (*failed is set). */
static struct hmmrt_pool *pool_of_store(const fasta_parse *p, char *store, int *failed)
{
    struct hmmrt_pool *pool = p->n_records > 0 ? malloc(sizeof *pool) : NULL;
    if (!pool) {
        *failed |= p->n_records > 0;
        hmmrt_store_give_back(store);
        return NULL;
    }
    atomic_init(&pool->records, (long)p->n_records);
    pool->data = store;
    pool->mapped = 0;
    return pool;
}

/* Appends a parse's complete records to the pending ones, sharing a pool
 * made of store (which it then owns, also on failure), lines moved by
 * line_offset: 0, or -1 out of memory. */
static int hand_over(hmmrt_reader *r, const fasta_parse *p, char *store, long line_offset)
{
    int failed = 0;
    struct hmmrt_pool *pool = pool_of_store(p, store, &failed);
    if (!pool)
        return failed ? -1 : 0;
    if (reserve_pending(r, p->n_records) != 0) {
        hmmrt_store_give_back(store);
        free(pool);
        return -1;
    }
    make_records(r, p, pool, line_offset, r->pending + r->n_pending);
    r->n_pending += p->n_records;
    return 0;
}

/* The parses of one block, and what the reader makes of them. */
typedef struct block_parse {
    int n;                        /* pieces */
    int threads;                  /* that parse them ... */
    double busy;                  /* ... in this many CPU seconds, summed */
    hmmrt_reader *reader;         /* lends its spare lists to pieces 1 on */
    size_t starts[MAX_PIECES + 1]; /* the last one is the block's length */
    fasta_parse parses[MAX_PIECES];
    long line_offsets[MAX_PIECES]; /* from each piece's lines to the file's */
    int used;                     /* pieces whose records are handed out */
} block_parse;

/* Piece k's parse, just started, takes the lists kept for piece k. */
static void lend_spares(hmmrt_reader *r, int k, fasta_parse *p)
{
    p->records = r->spare_records[k];
    p->records_cap = r->spare_records_cap[k];
    p->runs = r->spare_runs[k];
    p->runs_cap = r->spare_runs_cap[k];
    r->spare_records[k] = NULL;
    r->spare_runs[k] = NULL;
}

/* Keeps a finished parse's lists for a piece of the next block: the same
 * piece's slot, else the first free one (the last piece's lists go on with
 * the record it leaves unfinished, the carried parse's come back here). */
static void keep_spares(hmmrt_reader *r, int k, fasta_parse *p)
{
    for (int slot = k > 0 ? k : 1, tries = 0; p->records && tries < MAX_PIECES; tries++) {
        if (!r->spare_records[slot]) {
            r->spare_records[slot] = p->records;
            r->spare_records_cap[slot] = p->records_cap;
            p->records = NULL;
        }
        slot = slot + 1 < MAX_PIECES ? slot + 1 : 1;
    }
    for (int slot = k > 0 ? k : 1, tries = 0; p->runs && tries < MAX_PIECES; tries++) {
        if (!r->spare_runs[slot]) {
            r->spare_runs[slot] = p->runs;
            r->spare_runs_cap[slot] = p->runs_cap;
            p->runs = NULL;
        }
        slot = slot + 1 < MAX_PIECES ? slot + 1 : 1;
    }
}

static void parse_pieces(block_parse *bp, const char *block)
{
    int threads = bp->threads < bp->n ? bp->threads : bp->n;
    double busy = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1) \
    reduction(+ : busy)
    for (int k = 0; k < bp->n; k++) {
        double started = hmmrt_thread_seconds();
        fasta_parse *p = &bp->parses[k];
        if (k > 0 && fasta_parse_start(p, 1, bp->starts[k + 1] - bp->starts[k]) != 0)
            continue;
        if (k > 0) /* the lists piece k had in the block before */
            lend_spares(bp->reader, k, p);
        p->map = bp->parses[0].map;
        if (fasta_parse_bytes(p, block + bp->starts[k], bp->starts[k + 1] - bp->starts[k]) == 0 &&
            k + 1 < bp->n)
            fasta_parse_end_piece(p); /* the next piece starts with '>' */
        busy += hmmrt_thread_seconds() - started;
    }
    bp->busy = busy;
}

/* Line offsets, and the pieces up to the first that failed. */
static void number_pieces(block_parse *bp)
{
    bp->line_offsets[0] = 0; /* the carried parse counts the file's lines */
    bp->used = bp->n;
    for (int k = 0; k < bp->n; k++) {
        if (bp->parses[k].failed) {
            bp->used = k + 1;
            return;
        }
        if (k + 1 < bp->n)
            bp->line_offsets[k + 1] = bp->parses[k].line + bp->line_offsets[k] - 1;
    }
}

/* Hands out the records of the pieces that were used, in order, room made
 * for all at once: 0, or -1 out of memory (then none is, and the stores are
 * freed). */
static int hand_over_pieces(hmmrt_reader *r, block_parse *bp, char *stores[])
{
    struct hmmrt_pool *pools[MAX_PIECES];
    size_t first[MAX_PIECES], total = 0;
    int failed = 0;
    for (int k = 0; k < bp->used; k++) {
        pools[k] = pool_of_store(&bp->parses[k], stores[k], &failed);
        first[k] = r->n_pending + total;
        total += bp->parses[k].n_records;
    }
    if (!failed && reserve_pending(r, total) != 0)
        failed = 1;
    if (failed) { /* none is handed out */
        for (int k = 0; k < bp->used; k++)
            if (pools[k]) {
                hmmrt_store_give_back(pools[k]->data);
                free(pools[k]);
            }
        return -1;
    }
    /* on this thread: a team started again for a few ms of copying cost
     * more than it saved where the cores were busy (measured) */
    for (int k = 0; k < bp->used; k++)
        if (pools[k])
            make_records(r, &bp->parses[k], pools[k], bp->line_offsets[k], r->pending + first[k]);
    r->n_pending += total;
    return 0;
}

/* Parses a block of n bytes of the current file into pending records; the
 * last piece's parse goes on with the next block. */
static void parse_block(hmmrt_reader *r, size_t n)
{
    double started = hmmrt_seconds();
    block_parse *bp = malloc(sizeof *bp);
    if (!bp) {
        set_error(r, r->line, 1, "out of memory");
        return;
    }
    int wanted = (int)((n + r->range - 1) / r->range);
    bp->n = cut_pieces(r->block, n, wanted < r->pieces ? wanted : r->pieces, bp->starts);
    bp->threads = r->threads;
    bp->reader = r;
    bp->starts[bp->n] = n;
    memset(bp->parses, 0, sizeof bp->parses[0] * (size_t)bp->n);
    bp->parses[0] = r->carry;
    memset(&r->carry, 0, sizeof r->carry);
    if (bp->n == 1) /* inside one record (a chromosome): its lines on every thread */
        hmmrt_parse_long(&bp->parses[0], r->block, n, r->threads);
    else
        parse_pieces(bp, r->block);
    double parsed = hmmrt_seconds();
    r->seconds[HMMRT_READER_PARSING] += parsed - started;
    r->seconds[HMMRT_READER_PARSING_CPU] += bp->busy;
    number_pieces(bp);

    /* the stores go to the records; the last piece keeps its record in
     * progress, unless it failed */
    fasta_parse *last = &bp->parses[bp->used - 1];
    int goes_on = !last->failed;
    char *stores[MAX_PIECES];
    for (int k = 0; k < bp->used; k++)
        stores[k] = bp->parses[k].store;
    for (int k = 0; k < bp->used - 1; k++)
        bp->parses[k].store = NULL;
    if (!goes_on || fasta_parse_keep_partial(last, &stores[bp->used - 1]) != 0)
        last->store = NULL; /* its records are handed out, then its error */
    long offset = bp->line_offsets[bp->used - 1];
    if (hand_over_pieces(r, bp, stores) != 0) {
        set_error(r, r->line, 1, "out of memory");
    } else if (last->failed) {
        set_error(r, last->error_line + offset, last->out_of_memory, last->error);
    } else {
        r->carry = *last;
        memset(last, 0, sizeof *last);
        r->carry.n_records = 0;
        r->carry.line += offset;
        r->carry.name_line += offset;
        r->line = r->carry.line;
    }
    for (int k = 0; k < bp->n; k++) {
        keep_spares(r, k, &bp->parses[k]);
        fasta_parse_free(&bp->parses[k]);
    }
    free(bp);
    r->seconds[HMMRT_READER_HANDING] += hmmrt_seconds() - parsed;
}

/* The current file ended: its last record, if any, is pending. */
static void finish_file(hmmrt_reader *r)
{
    fasta_parse *p = &r->carry;
    if (fasta_parse_end_piece(p) != 0) {
        set_error(r, p->error_line, p->out_of_memory, p->error);
        return;
    }
    char *store = p->store;
    p->store = NULL;
    if (hand_over(r, p, store, 0) != 0) {
        set_error(r, r->line, 1, "out of memory");
        return;
    }
    close_current_file(r);
}

/* Records of the current database, a run of them at once, pending (their
 * bytes stay in the mapping); at its end the next file follows. */
static void take_db_records(hmmrt_reader *r)
{
    enum { DB_RECORDS_AT_ONCE = 4096 };
    if (reserve_pending(r, DB_RECORDS_AT_ONCE) != 0) {
        set_error(r, 0, 1, "out of memory");
        return;
    }
    char why[768];
    for (; r->db_skip > 0; r->db_skip--) { /* another rank's records (hmmrt_mpi.h) */
        hmmrt_record skipped;
        int got =
            hmmrt_db_next(r->db, &skipped, hmmrt_reader_mapped_alphabet(r), why, sizeof why);
        if (got <= 0) {
            set_error(r, 0, 0, got < 0 ? why : "it holds fewer records than its header counts");
            return;
        }
        hmmrt_record_release(&skipped);
    }
    while (r->n_pending < DB_RECORDS_AT_ONCE) {
        if (r->db_left == 0) { /* the next rank's records follow */
            close_current_file(r);
            return;
        }
        int got = hmmrt_db_next(r->db, &r->pending[r->n_pending], hmmrt_reader_mapped_alphabet(r),
                                why, sizeof why);
        r->db_left -= got > 0 && r->db_left > 0;
        if (got > 0) {
            r->n_pending++;
            continue;
        }
        if (got < 0)
            set_error(r, 0, 0, why);
        else
            close_current_file(r);
        return;
    }
}

/* Reads and parses on until records or an error are pending: 1, or 0 at the
 * end of all input. */
static int read_on(hmmrt_reader *r)
{
    while (r->next_pending == r->n_pending && !r->error_pending) {
        r->n_pending = r->next_pending = 0;
        if (r->fd < 0) {
            int opened = open_next_file(r);
            if (opened == 0)
                return 0;
            continue;
        }
        if (r->db) {
            take_db_records(r);
            continue;
        }
        double started = hmmrt_seconds();
        long n = fill_block(r);
        r->seconds[HMMRT_READER_BLOCKS] += hmmrt_seconds() - started;
        if (n > 0)
            parse_block(r, (size_t)n);
        if (n == 0 && r->fd >= 0)
            finish_file(r);
    }
    return 1;
}

int64_t hmmrt_reader_take(hmmrt_reader *r, hmmrt_record *recs, int64_t max, int64_t max_residues,
                          int64_t *residues, int *status, char *err, size_t errlen)
{
    int64_t n = 0;
    *status = 1;
    while (n < max && *residues < max_residues) {
        if (r->failed || read_on(r) == 0 || r->next_pending == r->n_pending) {
            *status = hmmrt_reader_next(r, &recs[n], err, errlen); /* the end, or an error */
            if (*status <= 0)
                return n;
            *residues += recs[n++].length;
            continue;
        }
        while (n < max && *residues < max_residues && r->next_pending < r->n_pending) {
            recs[n] = r->pending[r->next_pending++];
            *residues += recs[n++].length;
        }
    }
    return n;
}

int hmmrt_reader_next(hmmrt_reader *r, hmmrt_record *rec, char *err, size_t errlen)
{
    if (r->failed) {
        snprintf(err, errlen, "the input was not read to its end after an error");
        return -1;
    }
    if (read_on(r) == 0)
        return 0;
    if (r->next_pending < r->n_pending) {
        *rec = r->pending[r->next_pending++];
        return 1;
    }
    r->error_pending = 0;
    r->failed = 1;
    snprintf(err, errlen, "%s", r->error);
    return -1;
}
