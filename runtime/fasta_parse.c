/* fasta_parse.c: the FASTA state machine (fasta_parse.h): records over many
 * lines, line ends LF, CRLF and CR alone (old Mac files), blank lines and
 * white space inside sequences, the name as the first word after '>' (not
 * starting with '#', which starts the output's comments, and without NUL
 * bytes), no limit on the length of a line. It sees bytes only;
 * files, blocks and threads are the reader's (fasta.c). */
#include "fasta_parse.h"

#include "internal.h"

#include <stdlib.h>
#include <string.h>

static const char DATA_BEFORE_HEADER[] =
    "sequence data before the first '>' header: a FASTA record starts with a line '>NAME'";
static const char NO_NAME[] =
    "a '>' header without a name: write the sequence's name right after '>'";
static const char NAME_LIKE_COMMENT[] =
    "a sequence name that starts with '#': the output's lines that start with '#' are "
    "comments, so its row would read as one; rename the sequence (e.g. drop the '#')";
static const char NUL_IN_NAME[] =
    "a NUL byte (\\x00) in a sequence name: the name would be cut there; fix the header "
    "(is the file text?)";
static const char OUT_OF_MEMORY[] = "out of memory";

/* Blanks separate words and are left out of sequences; '\r' is a line end. */
static int is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

static int is_line_end(unsigned char c)
{
    return c == '\n' || c == '\r';
}

/* The first line end in [at, end), or NULL. */
static const char *find_line_end(const char *at, const char *end)
{
    const char *newline = memchr(at, '\n', (size_t)(end - at));
    const char *cr = memchr(at, '\r', (size_t)((newline ? newline : end) - at));
    return cr ? cr : newline;
}

static int fail(fasta_parse *p, const char *error)
{
    p->failed = 1;
    p->out_of_memory = error == OUT_OF_MEMORY;
    p->error = error;
    p->error_line = p->line;
    return -1;
}

int fasta_parse_start(fasta_parse *p, long first_line, size_t piece_bytes)
{
    memset(p, 0, sizeof *p);
    p->state = FASTA_AT_LINE_START;
    p->line = first_line;
    /* a piece's names and residues, each with its NUL, take at most its
     * bytes and one: a record's '>' pays for its name's NUL, its header's
     * line end for its residues' */
    p->store_cap = piece_bytes + piece_bytes / 4 + 64; /* and a run of lines a record */
    p->piece_cap = p->store_cap;
    p->store = hmmrt_store_take(p->store_cap);
    return p->store ? 0 : fail(p, OUT_OF_MEMORY);
}

void fasta_parse_free(fasta_parse *p)
{
    hmmrt_store_give_back(p->store);
    free(p->records);
    free(p->runs);
    p->store = NULL;
    p->records = NULL;
    p->runs = NULL;
}

/* Room for more bytes in the store: 0, or -1. */
static int reserve(fasta_parse *p, size_t more)
{
    char *store = hmmrt_grow(p->store, &p->store_cap, p->store_len + more, 1, 2048);
    if (!store)
        return fail(p, OUT_OF_MEMORY);
    p->store = store;
    return 0;
}

static int put_byte(fasta_parse *p, char c)
{
    if (reserve(p, 1) != 0)
        return -1;
    p->store[p->store_len++] = c;
    return 0;
}

int fasta_parse_new_run(fasta_parse *p, int64_t n, long line)
{
    hmmrt_line_run *runs = hmmrt_grow(p->runs, &p->runs_cap, p->n_runs + 1, sizeof *runs, 4);
    if (!runs)
        return fail(p, OUT_OF_MEMORY);
    p->runs = runs;
    p->runs[p->n_runs++] = (hmmrt_line_run){.residues = n, .width = n, .first_line = line};
    p->run_lines = 1;
    p->run_full = 1;
    return 0;
}

/* The record in progress is complete: its residues get their NUL, and its
 * runs of lines follow them in the store. */
static int take_record(fasta_parse *p)
{
    if (fasta_parse_end_line(p) != 0 || put_byte(p, '\0') != 0)
        return -1;
    size_t length = p->store_len - 1 - p->residues_at;
    size_t runs_at = (p->store_len + 7) & ~(size_t)7;
    size_t run_bytes = p->n_runs * sizeof(hmmrt_line_run);
    if (reserve(p, runs_at - p->store_len + run_bytes) != 0)
        return -1;
    if (run_bytes)
        memcpy(p->store + runs_at, p->runs, run_bytes);
    p->store_len = runs_at + run_bytes;
    fasta_parsed *records = hmmrt_grow(p->records, &p->records_cap, p->n_records + 1,
                                       sizeof *records, 1024);
    if (!records)
        return fail(p, OUT_OF_MEMORY);
    p->records = records;
    p->records[p->n_records++] = (fasta_parsed){
        .name_at = p->name_at,
        .residues_at = p->residues_at,
        .runs_at = runs_at,
        .n_runs = p->n_runs,
        .length = (int64_t)length,
        .line = p->name_line,
        .first_invalid = p->first_invalid,
        .invalid_byte = p->invalid_byte,
    };
    p->in_record = 0;
    p->n_runs = 0;
    return 0;
}

/* The name ended: its NUL, and the residues start after it. */
static int end_name(fasta_parse *p)
{
    if (put_byte(p, '\0') != 0)
        return -1;
    p->residues_at = p->line_start = p->store_len;
    p->state = FASTA_IN_DESCRIPTION;
    return 0;
}

/* 1 when one of the 8 bytes of w is below '!': a blank, a line end or
 * another control byte (bytes from 0x80 have their top bit, never flagged). */
static int has_byte_below_bang(uint64_t w)
{
    return ((w - 0x2121212121212121u) & ~w & 0x8080808080808080u) != 0;
}

/* Copies bytes above ' ' from at to *out, 8 at a time while it can; returns
 * where it stopped: at end or at a byte that is not above ' '. */
static const char *copy_plain(char **out, const char *at, const char *end)
{
    char *o = *out;
    while (end - at >= 8) {
        uint64_t w;
        memcpy(&w, at, 8);
        if (has_byte_below_bang(w))
            break;
        memcpy(o, &w, 8);
        o += 8;
        at += 8;
    }
    while (at < end && (unsigned char)*at > ' ')
        *o++ = *at++;
    *out = o;
    return at;
}

/* A line before the first header: white space only, or the error. */
static const char *line_before_header(fasta_parse *p, const char *at, const char *end)
{
    for (; at < end && !is_line_end((unsigned char)*at); at++)
        if (!is_blank((unsigned char)*at)) {
            fail(p, DATA_BEFORE_HEADER);
            return at;
        }
    return at;
}

/* Copies the residues of a sequence line from at up to its end (or end) to
 * *out, leaving out blanks; other control bytes are residues (that the
 * alphabet then refuses). Returns where it stopped. */
static const char *copy_line(char **out, const char *at, const char *end)
{
    for (;;) {
        at = copy_plain(out, at, end);
        if (at == end || is_line_end((unsigned char)*at))
            return at;
        if (!is_blank((unsigned char)*at))
            *(*out)++ = *at;
        at++;
    }
}

/* The lines of a record's sequence one after another, as long as each ends
 * with '\n' and the next starts a sequence line: the common case, without
 * a step of the state machine for every line end and line start. Leaves
 * the rest (a '\r', a '>', a blank line, the end of the bytes) to step. */
static const char *sequence_lines(fasta_parse *p, const char *at, const char *end)
{
    if (reserve(p, (size_t)(end - at)) != 0)
        return at;
    char *out = p->store + p->store_len;
    for (;;) {
        at = copy_line(&out, at, end);
        p->store_len = (size_t)(out - p->store);
        if (at == end || *at != '\n')
            return at;
        if (fasta_parse_end_line(p) != 0)
            return at;
        p->line++;
        at++;
        if (at == end || *at == '>' || is_line_end((unsigned char)*at)) {
            p->state = FASTA_AT_LINE_START;
            return at;
        }
    }
}

/* sequence_lines with a map (fasta_map.c): the same steps, each line's
 * residues mapped to codes as they are copied. */
static const char *mapped_lines(fasta_parse *p, const char *at, const char *end)
{
    if (reserve(p, (size_t)(end - at)) != 0)
        return at;
    return fasta_map_lines(p, at, end);
}

/* Copies the name's bytes from at up to a blank or line end (or end). */
static const char *name_bytes(fasta_parse *p, const char *at, const char *end)
{
    const char *stop = at;
    while (stop < end && !is_line_end((unsigned char)*stop) && !is_blank((unsigned char)*stop) &&
           *stop != '\0')
        stop++;
    if (stop < end && *stop == '\0') {
        fail(p, NUL_IN_NAME);
        return stop;
    }
    size_t span = (size_t)(stop - at);
    if (reserve(p, span) != 0)
        return at;
    memcpy(p->store + p->store_len, at, span);
    p->store_len += span;
    if (stop < end)
        end_name(p);
    return stop;
}

/* Takes the steps that the byte at `at` starts; returns where the next starts. */
static const char *step(fasta_parse *p, const char *at, const char *end)
{
    unsigned char c = (unsigned char)*at;
    if (p->after_cr) { /* the '\n' of a CRLF ends no second line */
        p->after_cr = 0;
        if (c == '\n')
            return at + 1;
    }
    switch (p->state) {
    case FASTA_AT_LINE_START:
        if (c != '>') {
            p->state = FASTA_IN_SEQUENCE_LINE;
            return at;
        }
        if (p->in_record && take_record(p) != 0)
            return at;
        p->in_record = 1;
        p->first_invalid = 0;
        p->invalid_byte = 0;
        p->name_line = p->line;
        p->name_at = p->store_len;
        p->state = FASTA_BEFORE_NAME;
        return at + 1;
    case FASTA_IN_SEQUENCE_LINE:
        if (is_line_end(c)) {
            if (p->in_record && fasta_parse_end_line(p) != 0)
                return at;
            p->after_cr = c == '\r';
            p->line++;
            p->state = FASTA_AT_LINE_START;
            return at + 1;
        }
        if (!p->in_record)
            return line_before_header(p, at, end);
        return p->map ? mapped_lines(p, at, end) : sequence_lines(p, at, end);
    case FASTA_BEFORE_NAME:
        if (is_line_end(c)) {
            fail(p, NO_NAME);
            return at;
        }
        if (c == '#') {
            fail(p, NAME_LIKE_COMMENT);
            return at;
        }
        if (!is_blank(c))
            p->state = FASTA_IN_NAME;
        return is_blank(c) ? at + 1 : at;
    case FASTA_IN_NAME:
        return name_bytes(p, at, end);
    case FASTA_IN_DESCRIPTION: {
        const char *newline = find_line_end(at, end);
        if (!newline)
            return end;
        p->state = FASTA_IN_SEQUENCE_LINE; /* ends the line as a sequence line would */
        return newline;
    }
    }
    return end;
}

int fasta_parse_bytes(fasta_parse *p, const char *bytes, size_t n)
{
    const char *at = bytes, *end = bytes + n;
    while (at < end && !p->failed)
        at = step(p, at, end);
    return p->failed ? -1 : 0;
}

int fasta_parse_end_piece(fasta_parse *p)
{
    if (p->failed)
        return -1;
    if (p->state == FASTA_BEFORE_NAME)
        return fail(p, NO_NAME);
    if (p->state == FASTA_IN_NAME && end_name(p) != 0)
        return -1;
    p->state = FASTA_AT_LINE_START;
    if (p->in_record && take_record(p) != 0)
        return -1;
    return 0;
}

int fasta_parse_keep_partial(fasta_parse *p, char **old_store)
{
    if (p->n_records == 0) { /* the store holds the partial record alone, from 0 */
        *old_store = NULL;
        return 0;
    }
    size_t from = p->in_record ? p->name_at : p->store_len;
    size_t n = p->store_len - from;
    /* the carried record goes on in the next block's first piece: room for
     * that piece from the start (not grown from a few KB, a copy at each step) */
    size_t cap = n > p->piece_cap / 2 ? 2 * n : p->piece_cap;
    if (cap < 2048)
        cap = 2048;
    char *store = hmmrt_store_take(cap);
    if (!store)
        return fail(p, OUT_OF_MEMORY);
    memcpy(store, p->store + from, n);
    *old_store = p->store;
    p->store = store;
    p->store_len = n;
    p->store_cap = cap;
    /* residues_at below from belongs to an earlier record: it is set again
     * when the name in progress ends */
    p->name_at = p->in_record ? p->name_at - from : 0;
    p->residues_at = p->residues_at >= from ? p->residues_at - from : 0;
    p->line_start = p->line_start >= from ? p->line_start - from : 0;
    return 0;
}
