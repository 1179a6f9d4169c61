/* db.c: reads a packed database (made by --make-db; format in
 * docs/database.md): checks its header against this program's alphabets and
 * hands out its records in order, names and residues (or codes: nothing to
 * map) pointing into a mapped window of the file (nothing parsed or copied),
 * each window unmapped with its last record, so memory is bounded whatever
 * the file's size. Formats 1 (residues) and 2 (residues or codes) are read. */
#include "input.h"

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes mapped at once (more for a larger record), faulted in by mmap. */
#define WINDOW_BYTES ((uint64_t)64 << 20)
/* The table of file names is read whole: a larger one is damage. */
#define FILES_TABLE_MAX ((uint64_t)64 << 20)

struct hmmrt_db {
    int fd;
    uint64_t size;
    const unsigned char *window; /* [window_start, window_end) of the file */
    uint64_t window_start, window_end;
    struct hmmrt_pool *pool;     /* the window's; NULL when none is mapped */
    uint64_t n_records, n_residues, files_at, n_files;
    char **paths;  /* the FASTA files' names, copied: records name them */
    uint64_t at;   /* the next record's offset */
    uint64_t seen, residues_seen;
    const char *path; /* as messages name it */
    int contents;     /* HMMRT_DB_RESIDUES or HMMRT_DB_CODES */
};

static uint64_t expected_fingerprint;
static int expecting;
static const char *expected_alphabet; /* the program's, where it has one */

int hmmrt_is_db(const unsigned char *head, size_t n)
{
    return n >= 8 && memcmp(head, HMMRT_DB_MAGIC, 8) == 0;
}

/* FNV-1a over the number of alphabets and each alphabet's symbols. */
uint64_t hmmrt_db_fingerprint(const hmmrt_program *prog)
{
    uint64_t h = 14695981039346656037ull;
    char count[32];
    snprintf(count, sizeof count, "%d", prog->n_alphabets);
    for (const char *c = count; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    for (int a = 0; a < prog->n_alphabets; a++) {
        h = (h ^ 0) * 1099511628211ull;
        for (const char *c = prog->alphabets[a]; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
    }
    return h;
}

void hmmrt_db_expect(const hmmrt_program *prog)
{
    expected_fingerprint = hmmrt_db_fingerprint(prog);
    expecting = 1;
    expected_alphabet = prog->n_alphabets == 1 ? prog->alphabets[0] : NULL;
}

static uint64_t u64_at(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return le64toh(v);
}

static uint32_t u32_at(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return le32toh(v);
}

#define REBUILD "rebuild it with %s --make-db %s FASTA..."

/* Checks the header h: 0, or -1 with why set. */
static int check_header(hmmrt_db *db, const unsigned char *h, char *why, size_t whylen)
{
    uint32_t version = u32_at(h + 8), header_bytes = u32_at(h + 12);
    if (version < 1 || version > HMMRT_DB_VERSION || header_bytes != HMMRT_DB_HEADER_BYTES) {
        snprintf(why, whylen, "a packed database of format %u, which this program does not "
                 "read (it reads formats 1 and 2): " REBUILD, version, hmmrt_progname(),
                 db->path);
        return -1;
    }
    db->contents = version >= 2 ? (int)u32_at(h + 72) : HMMRT_DB_RESIDUES;
    if (db->contents != HMMRT_DB_RESIDUES && db->contents != HMMRT_DB_CODES) {
        snprintf(why, whylen, "the packed database's header is damaged (it says its records "
                 "hold %u, neither residues (0) nor codes (1)): " REBUILD,
                 (unsigned)db->contents, hmmrt_progname(), db->path);
        return -1;
    }
    if (!expecting || u64_at(h + 16) != expected_fingerprint) {
        snprintf(why, whylen, "a packed database made for a program of other alphabets "
                 "(fingerprint %016llx; this program's is %016llx): " REBUILD,
                 (unsigned long long)u64_at(h + 16), (unsigned long long)expected_fingerprint,
                 hmmrt_progname(), db->path);
        return -1;
    }
    if (db->contents == HMMRT_DB_CODES && !expected_alphabet) {
        snprintf(why, whylen, "a packed database of codes for a program of one alphabet, "
                 "which this program is not: " REBUILD, hmmrt_progname(), db->path);
        return -1;
    }
    db->n_records = u64_at(h + 24);
    db->n_residues = u64_at(h + 32);
    uint64_t records_at = u64_at(h + 40), file_bytes = u64_at(h + 64);
    db->files_at = u64_at(h + 48);
    db->n_files = u64_at(h + 56);
    if (file_bytes != db->size) {
        snprintf(why, whylen, "the packed database has %llu bytes where its header says %llu: "
                 "it was cut short or changed since it was made; " REBUILD,
                 (unsigned long long)db->size, (unsigned long long)file_bytes, hmmrt_progname(),
                 db->path);
        return -1;
    }
    if (records_at != HMMRT_DB_HEADER_BYTES || db->files_at < records_at ||
        db->files_at > db->size || db->n_files > db->size - db->files_at ||
        db->size - db->files_at > FILES_TABLE_MAX) {
        snprintf(why, whylen, "the packed database's header is damaged (its offsets lie "
                 "outside the file): " REBUILD, hmmrt_progname(), db->path);
        return -1;
    }
    db->at = records_at;
    return 0;
}

/* Reads n bytes at offset: 0, or -1 with why set. */
static int read_at(hmmrt_db *db, void *into, size_t n, uint64_t offset, char *why, size_t whylen)
{
    size_t done = 0;
    while (done < n) {
        ssize_t got = pread(db->fd, (char *)into + done, n - done, (off_t)(offset + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            snprintf(why, whylen, "cannot read: %s", got < 0 ? strerror(errno) : "it shrank");
            return -1;
        }
        done += (size_t)got;
    }
    return 0;
}

/* Copies the table of FASTA file names: 0, or -1 with why set. */
static int read_paths(hmmrt_db *db, char *why, size_t whylen)
{
    size_t bytes = (size_t)(db->size - db->files_at);
    unsigned char *table = malloc(bytes + 1);
    db->paths = calloc(db->n_files ? db->n_files : 1, sizeof *db->paths);
    if (!table || !db->paths) {
        free(table);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    if (read_at(db, table, bytes, db->files_at, why, whylen) != 0) {
        free(table);
        return -1;
    }
    int status = 0;
    const unsigned char *p = table, *end = table + bytes;
    for (uint64_t f = 0; f < db->n_files; f++) {
        const unsigned char *nul = memchr(p, 0, (size_t)(end - p));
        if (!nul) {
            snprintf(why, whylen, "the packed database's table of files is damaged: " REBUILD,
                     hmmrt_progname(), db->path);
            status = -1;
            break;
        }
        db->paths[f] = strdup((const char *)p);
        if (!db->paths[f]) {
            snprintf(why, whylen, "out of memory");
            status = -1;
            break;
        }
        p = nul + 1;
    }
    free(table);
    return status;
}

hmmrt_db *hmmrt_db_open(int fd, const char *path, char *why, size_t whylen)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, whylen, "cannot read: %s", strerror(errno));
        return NULL;
    }
    hmmrt_db *db = calloc(1, sizeof *db);
    if (!db) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    db->fd = fd;
    db->size = (uint64_t)st.st_size;
    db->path = path;
    unsigned char header[HMMRT_DB_HEADER_BYTES];
    if (db->size < HMMRT_DB_HEADER_BYTES) {
        snprintf(why, whylen, "a packed database cut short inside its header: " REBUILD,
                 hmmrt_progname(), db->path);
    } else if (read_at(db, header, sizeof header, 0, why, whylen) == 0 &&
               check_header(db, header, why, whylen) == 0 &&
               read_paths(db, why, whylen) == 0) {
        return db;
    }
    hmmrt_db_free(db);
    return NULL;
}

/* Maps the window that holds [at, at + bytes) (within the records), unless
 * the current one does; the last window's records keep it: 0, or -1 with
 * why set. */
static int map_window(hmmrt_db *db, uint64_t bytes, char *why, size_t whylen)
{
    if (db->pool && db->at + bytes <= db->window_end)
        return 0;
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t start = db->at / page * page;
    uint64_t end = db->at + bytes - start > WINDOW_BYTES ? db->at + bytes : start + WINDOW_BYTES;
    if (end > db->files_at)
        end = db->files_at;
    void *map = mmap(NULL, (size_t)(end - start), PROT_READ, MAP_PRIVATE | MAP_POPULATE, db->fd,
                     (off_t)start);
    if (map == MAP_FAILED) {
        snprintf(why, whylen, "cannot map the packed database: %s", strerror(errno));
        return -1;
    }
    struct hmmrt_pool *pool = hmmrt_pool_of_mapping(map, (size_t)(end - start));
    if (!pool) {
        munmap(map, (size_t)(end - start));
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    hmmrt_pool_drop(db->pool);
    db->pool = pool;
    db->window = map;
    db->window_start = start;
    db->window_end = end;
    return 0;
}

static int damaged(const hmmrt_db *db, char *why, size_t whylen, const char *what)
{
    snprintf(why, whylen, "the packed database is damaged at byte %llu (%s, after %llu of its "
             "%llu sequences): " REBUILD, (unsigned long long)db->at, what,
             (unsigned long long)db->seen, (unsigned long long)db->n_records, hmmrt_progname(),
             db->path);
    return -1;
}

/* 1 when one of the n codes at c is not below symbols (< 0x80): 8 at a
 * time, as the codes are read (nothing of a damaged file reaches a kernel). */
static int has_code_outside(const unsigned char *c, uint64_t n, unsigned symbols)
{
    const uint64_t ones = 0x0101010101010101u, top = 0x8080808080808080u;
    const uint64_t lift = (0x80 - (uint64_t)symbols) * ones; /* a byte >= symbols gets its top bit */
    uint64_t outside = 0, k = 0;
    for (; k + 8 <= n; k += 8) {
        uint64_t w;
        memcpy(&w, c + k, 8);
        outside |= (w | (w + lift)) & top; /* w < 0x80: no carry crosses bytes */
    }
    for (; k < n; k++)
        outside |= c[k] >= symbols;
    return outside != 0;
}

/* A record of codes as residues, its name and residues in memory of its
 * own that the record then holds (for a reader that does not map, as
 * training's): 0, or -1. */
static int as_residues(hmmrt_record *rec)
{
    size_t name_bytes = strlen(rec->name) + 1;
    char *copy = hmmrt_store_take(name_bytes + (size_t)rec->length + 1);
    struct hmmrt_pool *pool = copy ? hmmrt_pool_of_mapping(copy, 0) : NULL;
    if (!pool) {
        hmmrt_store_give_back(copy);
        return -1;
    }
    memcpy(copy, rec->name, name_bytes);
    char *residues = copy + name_bytes;
    for (int64_t k = 0; k < rec->length; k++)
        residues[k] = expected_alphabet[rec->codes[k]];
    residues[rec->length] = '\0';
    rec->name = copy;
    rec->residues = residues;
    rec->codes = NULL;
    rec->pool = pool;
    return 0;
}

int hmmrt_db_contents(const hmmrt_db *db)
{
    return db->contents;
}

int hmmrt_db_next(hmmrt_db *db, hmmrt_record *rec, const char *codes_of, char *why,
                  size_t whylen)
{
    uint64_t end = db->files_at;
    if (db->at == end) {
        if (db->seen != db->n_records || db->residues_seen != db->n_residues)
            return damaged(db, why, whylen, "its header counts other sequences");
        return 0;
    }
    if (end - db->at < HMMRT_DB_RECORD_BYTES)
        return damaged(db, why, whylen, "a record cut short");
    if (map_window(db, HMMRT_DB_RECORD_BYTES, why, whylen) != 0)
        return -1;
    const unsigned char *r = db->window + (db->at - db->window_start);
    uint64_t length = u64_at(r), line = u64_at(r + 8);
    uint32_t file = u32_at(r + 16), name_bytes = u32_at(r + 20);
    uint64_t room = end - db->at - HMMRT_DB_RECORD_BYTES;
    if (file >= db->n_files || name_bytes == 0 || name_bytes > room ||
        length >= room - name_bytes || length > INT64_MAX || line > (uint64_t)LONG_MAX)
        return damaged(db, why, whylen, "a record's sizes lie outside the file");
    uint64_t bytes = HMMRT_DB_RECORD_BYTES + name_bytes + length + 1;
    bytes = (bytes + 7) & ~(uint64_t)7;
    if (bytes > end - db->at)
        return damaged(db, why, whylen, "a record cut short");
    if (map_window(db, bytes, why, whylen) != 0) /* the record may reach past the window */
        return -1;
    r = db->window + (db->at - db->window_start);
    const char *name = (const char *)r + HMMRT_DB_RECORD_BYTES;
    const char *residues = name + name_bytes;
    if (name[name_bytes - 1] != '\0' || residues[length] != '\0')
        return damaged(db, why, whylen, "a record's name or residues are not ended");
    int codes = db->contents == HMMRT_DB_CODES;
    if (codes && has_code_outside((const unsigned char *)residues, length,
                                  (unsigned)strlen(expected_alphabet)))
        return damaged(db, why, whylen, "a record's codes lie outside the alphabet");
    *rec = (hmmrt_record){.name = name,
                          .residues = codes ? NULL : residues,
                          .length = (int64_t)length,
                          .path = db->paths[file],
                          .line = (long)line,
                          .pool = db->pool,
                          .runs = NULL,
                          .n_runs = 0,
                          .codes = codes ? (const uint8_t *)residues : NULL};
    if (codes && !(codes_of && strcmp(codes_of, expected_alphabet) == 0)) {
        if (as_residues(rec) != 0) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
    } else {
        hmmrt_pool_hold(db->pool);
    }
    db->at += bytes;
    db->seen++;
    db->residues_seen += length;
    return 1;
}

void hmmrt_db_finish(hmmrt_db *db)
{
    if (!db)
        return;
    hmmrt_pool_drop(db->pool);
    db->pool = NULL;
}

void hmmrt_db_free(hmmrt_db *db)
{
    if (!db)
        return;
    hmmrt_db_finish(db);
    for (uint64_t f = 0; db->paths && f < db->n_files; f++)
        free(db->paths[f]);
    free(db->paths);
    free(db);
}

uint64_t hmmrt_db_record_count(const hmmrt_db *db)
{
    return db->n_records;
}
