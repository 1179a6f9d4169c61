/* db_make.c: --make-db DB FILES...: reads the sequence files as a scoring
 * run does (FASTA, gzip, other databases), checks every residue against the
 * program's alphabets, and writes the records into a packed database
 * (docs/database.md) in bounded memory: to a temporary file beside DB,
 * renamed to DB only when it is whole. A program of one alphabet writes
 * its codes (mapped by the reader as it parses), so that runs map nothing;
 * one of several alphabets writes the residues. */
#include "input.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SKIP_WARNINGS_SHOWN = 10, WRITE_BUFFER = 4 << 20 };

typedef struct db_writer {
    FILE *f;
    char *buffer;       /* f's */
    char *temp;         /* its name until it is renamed */
    uint64_t at;        /* bytes written */
    uint64_t n_records, n_residues;
    const char **paths; /* the FASTA files, in the order records first name them */
    uint64_t n_paths, paths_cap;
    const char *last_path;
    uint32_t last_file;
    int error;          /* errno of the first failed write */
    int contents;       /* HMMRT_DB_RESIDUES or HMMRT_DB_CODES */
} db_writer;

static void put(db_writer *w, const void *bytes, size_t n)
{
    if (!w->error && n > 0 && fwrite(bytes, 1, n, w->f) != n)
        w->error = errno ? errno : EIO;
    w->at += n;
}

static void put_u64(db_writer *w, uint64_t v)
{
    v = htole64(v);
    put(w, &v, sizeof v);
}

static void put_u32(db_writer *w, uint32_t v)
{
    v = htole32(v);
    put(w, &v, sizeof v);
}

/* The index of rec's file in the table of files (added when new): 0, or -1
 * out of memory. Records of one file come together. */
static int file_index(db_writer *w, const char *path, uint32_t *index)
{
    if (w->n_paths > 0 && path == w->last_path) {
        *index = w->last_file;
        return 0;
    }
    const char **paths = hmmrt_grow(w->paths, &w->paths_cap, w->n_paths + 1, sizeof *paths, 16);
    if (!paths || w->n_paths >= UINT32_MAX)
        return -1;
    w->paths = paths;
    w->paths[w->n_paths] = path;
    w->last_path = path;
    w->last_file = (uint32_t)w->n_paths++;
    *index = w->last_file;
    return 0;
}

/* rec's residues, or with contents codes, its codes (rec's own, or
 * mapped into codes by check_residues). */
static int write_record(db_writer *w, const hmmrt_record *rec, const uint8_t *codes)
{
    uint32_t file;
    size_t name_bytes = strlen(rec->name) + 1;
    if (file_index(w, rec->path, &file) != 0 || name_bytes > UINT32_MAX)
        return -1;
    put_u64(w, (uint64_t)rec->length);
    put_u64(w, (uint64_t)rec->line);
    put_u32(w, file);
    put_u32(w, (uint32_t)name_bytes);
    put(w, rec->name, name_bytes);
    static const char zeros[8];
    if (w->contents == HMMRT_DB_CODES) {
        put(w, codes, (size_t)rec->length);
        put(w, zeros, 1);
    } else {
        put(w, rec->residues, (size_t)rec->length + 1);
    }
    put(w, zeros, (size_t)(-w->at & 7));
    w->n_records++;
    w->n_residues += (uint64_t)rec->length;
    return 0;
}

/* The header, at the start of the file, once everything else is written. */
static void write_header(db_writer *w, const hmmrt_program *prog, uint64_t files_at)
{
    unsigned char h[HMMRT_DB_HEADER_BYTES] = {0};
    uint64_t fields[] = {hmmrt_db_fingerprint(prog), w->n_records, w->n_residues,
                         HMMRT_DB_HEADER_BYTES, files_at, w->n_paths, w->at};
    memcpy(h, HMMRT_DB_MAGIC, 8);
    uint32_t version = htole32(HMMRT_DB_VERSION), header = htole32(HMMRT_DB_HEADER_BYTES);
    uint32_t contents = htole32((uint32_t)w->contents);
    memcpy(h + 8, &version, 4);
    memcpy(h + 12, &header, 4);
    memcpy(h + 72, &contents, 4);
    for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
        uint64_t v = htole64(fields[k]);
        memcpy(h + 16 + 8 * k, &v, 8);
    }
    if (!w->error && (fflush(w->f) != 0 || fseeko(w->f, 0, SEEK_SET) != 0))
        w->error = errno ? errno : EIO;
    uint64_t at = w->at;
    put(w, h, sizeof h);
    w->at = at;
    if (!w->error && (fflush(w->f) != 0 || fsync(fileno(w->f)) != 0))
        w->error = errno ? errno : EIO;
}

/* "FILE:LINE: sequence NAME: symbol 'c' at position P (1-based) is not in
 * the alphabet of model M [symbols]", as a scoring run says it. */
static void describe_invalid(const hmmrt_program *prog, const hmmrt_record *rec, int alphabet,
                             int64_t position, hmmrt_buf *msg)
{
    char symbol[8], part[1024];
    hmmrt_describe_byte(symbol, rec->codes ? rec->invalid_byte
                                           : (unsigned char)rec->residues[position]);
    snprintf(part, sizeof part, "%s:%ld: sequence ", rec->path,
             hmmrt_record_line_of(rec, position));
    hmmrt_buf_puts(msg, part);
    hmmrt_describe_text(msg, rec->name);
    snprintf(part, sizeof part,
             ": symbol '%s' at position %lld (1-based) is not in the alphabet of ", symbol,
             (long long)position + 1);
    hmmrt_buf_puts(msg, part);
    const char *model = NULL;
    for (int m = 0; m < prog->n_models && !model; m++)
        if (prog->models[m].alphabet == alphabet)
            model = prog->models[m].name;
    if (model) {
        hmmrt_buf_puts(msg, "model ");
        hmmrt_buf_puts(msg, model);
    } else {
        snprintf(part, sizeof part, "alphabet %d", alphabet + 1);
        hmmrt_buf_puts(msg, part);
    }
    hmmrt_buf_putc(msg, ' ');
    hmmrt_describe_alphabet(msg, prog->alphabets[alphabet]);
}

typedef struct make_run {
    const hmmrt_program *prog;
    const hmmrt_options *o;
    hmmrt_reader *reader;
    db_writer w;
    uint8_t *codes; /* scratch for checking residues */
    size_t codes_cap;
    long skipped;
} make_run;

/* 0: rec's residues are all in every alphabet (*codes: the one alphabet's
 * codes, with contents codes); 1: skipped (warned); -1 stopped (said); -2
 * out of memory. */
static int check_residues(make_run *m, const hmmrt_record *rec, const uint8_t **codes_out)
{
    *codes_out = rec->codes;
    if (rec->codes && !rec->first_invalid)
        return 0; /* mapped by the reader, or a database's codes */
    uint8_t *codes = hmmrt_grow(m->codes, &m->codes_cap, (size_t)rec->length + 1, 1, 1 << 20);
    if (!codes)
        return -2;
    m->codes = codes;
    *codes_out = codes;
    for (int a = 0; a < m->prog->n_alphabets; a++) {
        int64_t bad = rec->codes ? rec->first_invalid - 1
                                 : hmmrt_map(m->prog->alphabets[a], rec->residues, rec->length,
                                             codes);
        if (bad < 0)
            continue;
        hmmrt_buf msg = {0};
        describe_invalid(m->prog, rec, a, bad, &msg);
        if (!m->o->skip_invalid) {
            hmmrt_error("%s; fix the input, or pass --skip-invalid to leave such sequences out "
                        "of the database", msg.len ? msg.data : "");
        } else if (++m->skipped <= SKIP_WARNINGS_SHOWN) {
            hmmrt_warning("%s; left out of the database%s", msg.len ? msg.data : "",
                          m->skipped == SKIP_WARNINGS_SHOWN ? " (later ones are only counted)"
                                                            : "");
        }
        hmmrt_buf_free(&msg);
        return m->o->skip_invalid ? 1 : -1;
    }
    return 0;
}

/* Reads every record into the writer: 0, or an exit status after saying why. */
static int copy_records(make_run *m)
{
    char err[1024];
    for (;;) {
        hmmrt_record rec;
        int got = hmmrt_reader_next(m->reader, &rec, err, sizeof err);
        if (got == 0)
            return 0;
        if (got < 0) {
            hmmrt_error("%s", err);
            return hmmrt_reader_out_of_memory(m->reader) ? HMMRT_EXIT_INTERNAL : HMMRT_EXIT_INPUT;
        }
        const uint8_t *codes;
        int checked = check_residues(m, &rec, &codes);
        int written = checked == 0 ? write_record(&m->w, &rec, codes) : 0;
        hmmrt_record_release(&rec);
        if (checked == -1)
            return HMMRT_EXIT_INPUT;
        if (checked == -2 || written != 0) {
            hmmrt_error("out of memory");
            return HMMRT_EXIT_INTERNAL;
        }
        if (m->w.error)
            return 0; /* said by the caller */
    }
}

/* A temporary file beside path: 0, or -1 after saying why. */
static int open_temp(db_writer *w, const char *path)
{
    size_t n = strlen(path) + 16;
    w->temp = malloc(n);
    if (!w->temp) {
        hmmrt_error("out of memory");
        return -1;
    }
    snprintf(w->temp, n, "%s.partXXXXXX", path);
    int fd = mkstemp(w->temp);
    if (fd < 0) {
        hmmrt_error("%s: cannot write the database: creating a file beside it failed: %s; "
                    "name a folder that exists and that you may write to", path,
                    strerror(errno));
        free(w->temp);
        w->temp = NULL;
        return -1;
    }
    mode_t mask = umask(0); /* mkstemp's 0600 would keep others from reading it */
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    w->f = fdopen(fd, "w");
    w->buffer = malloc(WRITE_BUFFER);
    if (!w->f || !w->buffer || setvbuf(w->f, w->buffer, _IOFBF, WRITE_BUFFER) != 0) {
        hmmrt_error("out of memory");
        if (w->f)
            fclose(w->f);
        else
            close(fd);
        w->f = NULL;
        unlink(w->temp);
        return -1;
    }
    return 0;
}

/* The records, the table of files, then the header; renamed into place. */
static int make(make_run *m)
{
    const char *path = m->o->make_db;
    if (open_temp(&m->w, path) != 0)
        return m->w.temp ? HMMRT_EXIT_INTERNAL : HMMRT_EXIT_OUTPUT;
    unsigned char zeros[HMMRT_DB_HEADER_BYTES] = {0};
    put(&m->w, zeros, sizeof zeros);
    int status = copy_records(m);
    if (!status && !m->w.error) {
        uint64_t files_at = m->w.at;
        for (uint64_t f = 0; f < m->w.n_paths; f++)
            put(&m->w, m->w.paths[f], strlen(m->w.paths[f]) + 1);
        write_header(&m->w, m->prog, files_at);
    }
    if (fclose(m->w.f) != 0 && !m->w.error)
        m->w.error = errno ? errno : EIO;
    m->w.f = NULL;
    if (!status && m->w.error) {
        hmmrt_error("%s: cannot write the database: %s", path, strerror(m->w.error));
        status = HMMRT_EXIT_OUTPUT;
    }
    if (!status && rename(m->w.temp, path) != 0) {
        hmmrt_error("%s: cannot write the database (renaming %s to it): %s", path, m->w.temp,
                    strerror(errno));
        status = HMMRT_EXIT_OUTPUT;
    }
    if (status)
        unlink(m->w.temp);
    return status;
}

/* DB may be replaced only when it is missing, empty or a database: a
 * FASTA named by mistake (--make-db in.fa in.fa) is kept. 0, or status 1. */
static int check_target(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    unsigned char head[8];
    ssize_t n = read(fd, head, sizeof head);
    struct stat st;
    int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    close(fd);
    if (regular && (n == 0 || hmmrt_is_db(head, n > 0 ? (size_t)n : 0)))
        return 0;
    hmmrt_error("--make-db %s: that file exists and is not a packed database; it is not "
                "replaced: name another file, or remove it first", path);
    return HMMRT_EXIT_USAGE;
}

int hmmrt_make_db(const hmmrt_program *prog, const hmmrt_options *o)
{
    if (check_target(o->make_db) != 0)
        return HMMRT_EXIT_USAGE;
    make_run m = {.prog = prog, .o = o};
    if (o->threads > 0)
        omp_set_num_threads(o->threads);
    int threads = o->threads > 0 ? o->threads : 1;
    m.reader = hmmrt_reader_open(o->files, o->n_files);
    if (!m.reader) {
        hmmrt_error("out of memory");
        return HMMRT_EXIT_INTERNAL;
    }
    hmmrt_reader_set_pieces(m.reader, threads, threads > 64 ? (256u << 20) / (size_t)threads
                                                            : 4u << 20);
    m.w.contents = HMMRT_DB_RESIDUES;
    if (prog->n_alphabets == 1 && hmmrt_reader_map_to(m.reader, prog->alphabets[0]) == 0)
        m.w.contents = HMMRT_DB_CODES;
    char err[1024];
    int status = 0;
    if (hmmrt_reader_open_files(m.reader, err, sizeof err) >= 0) {
        hmmrt_error("%s", err);
        status = HMMRT_EXIT_INPUT;
    }
    if (!status)
        status = make(&m);
    if (!status)
        hmmrt_note("%s: %llu sequences, %llu residues, from %d file%s", o->make_db,
                   (unsigned long long)m.w.n_records, (unsigned long long)m.w.n_residues,
                   o->n_files, o->n_files == 1 ? "" : "s");
    if (!status && m.skipped > SKIP_WARNINGS_SHOWN)
        hmmrt_warning("%ld sequences were left out of the database", m.skipped);
    if (!status && m.skipped > 0)
        status = HMMRT_EXIT_SKIPPED;
    hmmrt_reader_close(m.reader);
    free(m.codes);
    free(m.w.paths);
    free(m.w.temp);
    free(m.w.buffer);
    return status;
}
