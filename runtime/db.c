/* db.c: reads a packed database (written by --make-db, db_make.c; the format
 * is in docs/database.md): maps the file, checks its header against this
 * program's alphabets, and hands out its records in order, each name and
 * residues pointing into the mapping (nothing is parsed or copied). */
#include "input.h"

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

struct hmmrt_db {
    const unsigned char *map;
    size_t size;
    struct hmmrt_pool *pool; /* NULL once the reader is done with it */
    uint64_t n_records, n_residues, files_at, n_files;
    char **paths;  /* the FASTA files' names, copied: records name them */
    uint64_t at;   /* the next record's offset */
    uint64_t seen, residues_seen;
    const char *path; /* as messages name it */
};

static uint64_t expected_fingerprint;
static int expecting;

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

/* Checks the header of a mapping of size bytes: 0, or -1 with why set. */
static int check_header(hmmrt_db *db, char *why, size_t whylen)
{
    const unsigned char *h = db->map;
    uint32_t version = u32_at(h + 8), header_bytes = u32_at(h + 12);
    if (version != HMMRT_DB_VERSION || header_bytes != HMMRT_DB_HEADER_BYTES) {
        snprintf(why, whylen, "a packed database of format %u, which this program does not "
                 "read (it reads format %d): " REBUILD, version, HMMRT_DB_VERSION,
                 hmmrt_progname(), db->path);
        return -1;
    }
    if (!expecting || u64_at(h + 16) != expected_fingerprint) {
        snprintf(why, whylen, "a packed database made for a program of other alphabets "
                 "(fingerprint %016llx; this program's is %016llx): " REBUILD,
                 (unsigned long long)u64_at(h + 16), (unsigned long long)expected_fingerprint,
                 hmmrt_progname(), db->path);
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
        db->files_at > db->size || db->n_files > db->size - db->files_at) {
        snprintf(why, whylen, "the packed database's header is damaged (its offsets lie "
                 "outside the file): " REBUILD, hmmrt_progname(), db->path);
        return -1;
    }
    db->at = records_at;
    return 0;
}

/* Copies the table of FASTA file names: 0, or -1 with why set. */
static int read_paths(hmmrt_db *db, char *why, size_t whylen)
{
    db->paths = calloc(db->n_files ? db->n_files : 1, sizeof *db->paths);
    if (!db->paths) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    const unsigned char *p = db->map + db->files_at, *end = db->map + db->size;
    for (uint64_t f = 0; f < db->n_files; f++) {
        const unsigned char *nul = memchr(p, 0, (size_t)(end - p));
        if (!nul) {
            snprintf(why, whylen, "the packed database's table of files is damaged: " REBUILD,
                     hmmrt_progname(), db->path);
            return -1;
        }
        db->paths[f] = strdup((const char *)p);
        if (!db->paths[f]) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        p = nul + 1;
    }
    return 0;
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
    db->size = (size_t)st.st_size;
    db->path = path;
    if (db->size < HMMRT_DB_HEADER_BYTES) {
        snprintf(why, whylen, "a packed database cut short inside its header: " REBUILD,
                 hmmrt_progname(), db->path);
        free(db);
        return NULL;
    }
    void *map = mmap(NULL, db->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        snprintf(why, whylen, "cannot map the packed database: %s", strerror(errno));
        free(db);
        return NULL;
    }
    madvise(map, db->size, MADV_SEQUENTIAL); /* pages behind the reader may go */
    db->map = map;
    db->pool = hmmrt_pool_of_mapping(map, db->size);
    if (!db->pool) {
        munmap(map, db->size);
        free(db);
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    if (check_header(db, why, whylen) != 0 || read_paths(db, why, whylen) != 0) {
        hmmrt_db_finish(db);
        hmmrt_db_free(db);
        return NULL;
    }
    return db;
}

static int damaged(const hmmrt_db *db, char *why, size_t whylen, const char *what)
{
    snprintf(why, whylen, "the packed database is damaged at byte %llu (%s, after %llu of its "
             "%llu sequences): " REBUILD, (unsigned long long)db->at, what,
             (unsigned long long)db->seen, (unsigned long long)db->n_records, hmmrt_progname(),
             db->path);
    return -1;
}

int hmmrt_db_next(hmmrt_db *db, hmmrt_record *rec, char *why, size_t whylen)
{
    uint64_t end = db->files_at;
    if (db->at == end) {
        if (db->seen != db->n_records || db->residues_seen != db->n_residues)
            return damaged(db, why, whylen, "its header counts other sequences");
        return 0;
    }
    if (end - db->at < HMMRT_DB_RECORD_BYTES)
        return damaged(db, why, whylen, "a record cut short");
    const unsigned char *r = db->map + db->at;
    uint64_t length = u64_at(r), line = u64_at(r + 8);
    uint32_t file = u32_at(r + 16), name_bytes = u32_at(r + 20);
    uint64_t room = end - db->at - HMMRT_DB_RECORD_BYTES;
    if (file >= db->n_files || name_bytes == 0 || name_bytes > room ||
        length >= room - name_bytes || length > INT64_MAX || line > (uint64_t)LONG_MAX)
        return damaged(db, why, whylen, "a record's sizes lie outside the file");
    const char *name = (const char *)r + HMMRT_DB_RECORD_BYTES;
    const char *residues = name + name_bytes;
    if (name[name_bytes - 1] != '\0' || residues[length] != '\0')
        return damaged(db, why, whylen, "a record's name or residues are not ended");
    uint64_t bytes = HMMRT_DB_RECORD_BYTES + name_bytes + length + 1;
    bytes = (bytes + 7) & ~(uint64_t)7;
    if (bytes > end - db->at)
        return damaged(db, why, whylen, "a record cut short");
    hmmrt_pool_hold(db->pool);
    *rec = (hmmrt_record){.name = name,
                          .residues = residues,
                          .length = (int64_t)length,
                          .path = db->paths[file],
                          .line = (long)line,
                          .pool = db->pool,
                          .runs = NULL,
                          .n_runs = 0};
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
