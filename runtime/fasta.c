/* fasta.c: the FASTA reader (hmmrt_reader_*): several files in turn, "-" for
 * standard input, records over many lines, CRLF, blank lines and white space
 * inside sequences; no limit on the length of a line. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { CHUNK_SIZE = 1 << 20 };

#define STDIN_NAME "<stdin>" /* as gcc names it in messages */

/* Where the reader is inside the current line. */
typedef enum line_state {
    AT_LINE_START,
    IN_SEQUENCE_LINE,
    BEFORE_NAME,    /* after '>', skipping blanks */
    IN_NAME,
    IN_DESCRIPTION  /* the rest of a header line, ignored */
} line_state;

struct hmmrt_reader {
    char **paths; /* copies of the file names */
    int n_paths;
    int next_path; /* the next file to open */
    int fd;        /* -1 between files */
    const char *path; /* the file being read, as messages name it */
    long line;
    int failed;    /* an error was reported: every later call fails too */
    int out_of_memory; /* ... and it was a failed allocation */

    char *chunk;
    size_t chunk_len, chunk_pos;

    line_state state;
    int in_record;  /* a header was read: residues belong to it */
    hmmrt_buf name;
    long name_line;
    char *residues;
    size_t n_residues, residues_cap;
};

static int is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static const char *display_name(const char *path)
{
    return strcmp(path, "-") == 0 ? STDIN_NAME : path;
}

hmmrt_reader *hmmrt_reader_open(const char *const *paths, int n_paths)
{
    hmmrt_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->fd = -1;
    r->paths = calloc((size_t)(n_paths > 0 ? n_paths : 1), sizeof *r->paths);
    r->chunk = malloc(CHUNK_SIZE);
    if (!r->paths || !r->chunk) {
        hmmrt_reader_close(r);
        return NULL;
    }
    for (int i = 0; i < n_paths; i++) {
        r->paths[i] = strdup(paths[i]);
        if (!r->paths[i]) {
            hmmrt_reader_close(r);
            return NULL;
        }
        r->n_paths++;
    }
    return r;
}

static void close_current_file(hmmrt_reader *r)
{
    if (r->fd > STDIN_FILENO)
        close(r->fd);
    r->fd = -1;
}

void hmmrt_reader_close(hmmrt_reader *r)
{
    if (!r)
        return;
    close_current_file(r);
    for (int i = 0; i < r->n_paths; i++)
        free(r->paths[i]);
    free(r->paths);
    free(r->chunk);
    hmmrt_buf_free(&r->name);
    free(r->residues);
    free(r);
}

void hmmrt_reader_where(const hmmrt_reader *r, const char **path, long *line)
{
    *path = r->path;
    *line = r->line;
}

static int fail(hmmrt_reader *r, char *err, size_t errlen, const char *fmt, const char *detail)
{
    char what[512];
    snprintf(what, sizeof what, fmt, detail);
    if (r->line > 0)
        snprintf(err, errlen, "%s:%ld: %s", r->path, r->line, what);
    else
        snprintf(err, errlen, "%s: %s", r->path, what);
    r->failed = 1;
    close_current_file(r);
    return -1;
}

static int fail_out_of_memory(hmmrt_reader *r, char *err, size_t errlen)
{
    r->out_of_memory = 1;
    return fail(r, err, errlen, "%s", "out of memory");
}

int hmmrt_reader_out_of_memory(const hmmrt_reader *r)
{
    return r->out_of_memory;
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
    snprintf(err, errlen, "%s: cannot open: %s", path, why);
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
    return -1;
}

int hmmrt_check_readable(const char *path, char *err, size_t errlen)
{
    int fd;
    if (open_file(path, &fd, err, errlen) != 0)
        return -1;
    if (fd != STDIN_FILENO)
        close(fd);
    return 0;
}

/* Opens the next file: 1, 0 when none is left, -1 on error. */
static int open_next_file(hmmrt_reader *r, char *err, size_t errlen)
{
    if (r->next_path >= r->n_paths)
        return 0;
    const char *path = r->paths[r->next_path++];
    r->path = display_name(path);
    r->line = 0;
    if (open_file(path, &r->fd, err, errlen) != 0) {
        r->failed = 1;
        return -1;
    }
    r->line = 1;
    r->state = AT_LINE_START;
    r->chunk_len = r->chunk_pos = 0;
    return 1;
}

/* Reads more of the current file: 1, 0 at its end, -1 on error. */
static int refill(hmmrt_reader *r, char *err, size_t errlen)
{
    ssize_t n;
    do
        n = read(r->fd, r->chunk, CHUNK_SIZE);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return fail(r, err, errlen, "cannot read: %s", strerror(errno));
    r->chunk_len = (size_t)n;
    r->chunk_pos = 0;
    return n > 0;
}

static int reserve_residues(hmmrt_reader *r, size_t more)
{
    if (r->n_residues + more + 1 <= r->residues_cap)
        return 0;
    size_t cap = r->residues_cap ? r->residues_cap : 2048; /* most proteins: no growth */
    while (cap < r->n_residues + more + 1)
        cap *= 2;
    char *bigger = realloc(r->residues, cap);
    if (!bigger)
        return -1;
    r->residues = bigger;
    r->residues_cap = cap;
    return 0;
}

/* Hands the record read so far to rec; the reader starts afresh. */
static int take_record(hmmrt_reader *r, hmmrt_record *rec, char *err, size_t errlen)
{
    if (reserve_residues(r, 0) != 0)
        return fail_out_of_memory(r, err, errlen);
    rec->name = strdup(r->name.data);
    if (!rec->name)
        return fail_out_of_memory(r, err, errlen);
    r->residues[r->n_residues] = '\0';
    char *fitted = realloc(r->residues, r->n_residues + 1);
    rec->residues = fitted ? fitted : r->residues;
    rec->length = (int64_t)r->n_residues;
    rec->path = r->path;
    rec->line = r->name_line;
    r->residues = NULL;
    r->n_residues = r->residues_cap = 0;
    r->in_record = 0;
    return 1;
}

/* Copies the residues of a sequence line up to its end or the chunk's. */
static int scan_sequence_line(hmmrt_reader *r, char *err, size_t errlen)
{
    const char *start = r->chunk + r->chunk_pos;
    size_t avail = r->chunk_len - r->chunk_pos;
    const char *newline = memchr(start, '\n', avail);
    size_t span = newline ? (size_t)(newline - start) : avail;
    if (reserve_residues(r, span) != 0)
        return fail_out_of_memory(r, err, errlen);
    char *out = r->residues + r->n_residues;
    if (!r->in_record) {
        for (size_t i = 0; i < span; i++)
            if (!is_blank((unsigned char)start[i]))
                return fail(r, err, errlen, "%s",
                            "sequence data before the first '>' header: a FASTA record starts "
                            "with a line '>NAME'");
    } else {
        /* most lines have no blank at all: one pass that the compiler
         * vectorises finds out, and the line is copied whole */
        unsigned char low = 0xff;
        for (size_t i = 0; i < span; i++) {
            unsigned char c = (unsigned char)start[i];
            low = c < low ? c : low;
        }
        if (low > ' ') {
            memcpy(out, start, span);
            out += span;
        } else {
            for (size_t i = 0; i < span; i++) {
                unsigned char c = (unsigned char)start[i];
                *out = (char)c;
                out += !is_blank(c);
            }
        }
    }
    r->n_residues = (size_t)(out - r->residues);
    r->chunk_pos += span;
    return 0;
}

/* Skips the rest of a header line up to its end or the chunk's. */
static void skip_description(hmmrt_reader *r)
{
    const char *start = r->chunk + r->chunk_pos;
    const char *newline = memchr(start, '\n', r->chunk_len - r->chunk_pos);
    r->chunk_pos = newline ? (size_t)(newline - r->chunk) : r->chunk_len;
}

static int no_name_error(hmmrt_reader *r, char *err, size_t errlen)
{
    return fail(r, err, errlen, "%s",
                "a '>' header without a name: write the sequence's name right after '>'");
}

/* Takes one step on the byte at the cursor: 1 when a record is complete
 * (the byte is left for the next call), 0 to go on, -1 on error. */
static int step(hmmrt_reader *r, hmmrt_record *rec, char *err, size_t errlen)
{
    unsigned char c = (unsigned char)r->chunk[r->chunk_pos];
    switch (r->state) {
    case AT_LINE_START:
        if (c == '>') {
            if (r->in_record)
                return take_record(r, rec, err, errlen);
            r->in_record = 1;
            r->name_line = r->line;
            hmmrt_buf_reset(&r->name);
            r->state = BEFORE_NAME;
            r->chunk_pos++;
            return 0;
        }
        r->state = IN_SEQUENCE_LINE;
        return 0;
    case IN_SEQUENCE_LINE:
        if (c == '\n') {
            r->line++;
            r->state = AT_LINE_START;
            r->chunk_pos++;
            return 0;
        }
        return scan_sequence_line(r, err, errlen);
    case BEFORE_NAME:
        if (c == '\n')
            return no_name_error(r, err, errlen);
        if (!is_blank(c))
            r->state = IN_NAME;
        else
            r->chunk_pos++;
        return 0;
    case IN_NAME:
        if (c == '\n' || is_blank(c)) {
            if (hmmrt_buf_take_failure())
                return fail_out_of_memory(r, err, errlen);
            r->state = IN_DESCRIPTION;
            return 0;
        }
        hmmrt_buf_putc(&r->name, (char)c);
        r->chunk_pos++;
        return 0;
    case IN_DESCRIPTION:
        if (c == '\n') {
            r->state = IN_SEQUENCE_LINE; /* ends the line as a sequence line would */
            return 0;
        }
        skip_description(r);
        return 0;
    }
    return 0;
}

/* At the end of a file: 1 with its last record, 0 without, -1 on error. */
static int finish_file(hmmrt_reader *r, hmmrt_record *rec, char *err, size_t errlen)
{
    if (r->state == BEFORE_NAME)
        return no_name_error(r, err, errlen);
    if (r->state == IN_NAME && hmmrt_buf_take_failure())
        return fail_out_of_memory(r, err, errlen);
    close_current_file(r);
    r->state = AT_LINE_START;
    if (!r->in_record)
        return 0;
    return take_record(r, rec, err, errlen);
}

int hmmrt_reader_next(hmmrt_reader *r, hmmrt_record *rec, char *err, size_t errlen)
{
    if (r->failed) {
        snprintf(err, errlen, "the input was not read to its end after an error");
        return -1;
    }
    for (;;) {
        if (r->fd < 0) {
            int opened = open_next_file(r, err, errlen);
            if (opened <= 0)
                return opened;
        }
        if (r->chunk_pos == r->chunk_len) {
            int more = refill(r, err, errlen);
            if (more < 0)
                return -1;
            if (more == 0) {
                int last = finish_file(r, rec, err, errlen);
                if (last != 0)
                    return last;
                continue;
            }
        }
        int done = step(r, rec, err, errlen);
        if (done != 0)
            return done;
    }
}
