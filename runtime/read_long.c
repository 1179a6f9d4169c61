/* read_long.c: a block of the FASTA reader that lies inside one record (a
 * chromosome's lines) mapped on every thread (issue 24: one long sequence
 * read by one thread kept 15 of 16 cores waiting). The block's whole lines
 * are cut into parts at line ends; each part is mapped by fasta_map_lines
 * into its own stretch of the store, then the parts are moved together and
 * their line runs joined, so codes, lines and the first byte outside are
 * those of one parse (read_long.h). */
#include "read_long.h"

#include "internal.h"

#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PARTS = 256, MIN_PART = 256 << 10 /* its mapping (~0.1 ms) outweighs starting it */ };
static size_t min_part = MIN_PART;
static atomic_llong parts_mapped; /* parts mapped on threads beside others, all told */

void hmmrt_parse_long_min_part(size_t bytes)
{
    min_part = bytes ? bytes : MIN_PART;
}

long long hmmrt_parse_long_parts(void)
{
    return atomic_load(&parts_mapped);
}

/* One part: whole lines [from, to), the last ending with '\n'; mapped by a
 * parse of its own (lines counted from 0) into the store from out_at. */
typedef struct part {
    const char *from, *to;
    size_t out_at;
    fasta_parse sub;
} part;

/* Maps a part's lines as fasta_parse_bytes would inside a record: 0, or 1
 * where a line is not a plain sequence line (a header, a blank line, a '\r'
 * alone: the caller then parses the block on one thread), or memory ran out. */
static int map_part(part *q, const fasta_parse *p)
{
    fasta_parse *s = &q->sub;
    memset(s, 0, sizeof *s);
    s->state = FASTA_IN_SEQUENCE_LINE;
    s->in_record = 1;
    s->map = p->map;
    s->store = p->store; /* shared: each part writes only below its own bytes' end */
    s->store_cap = p->store_cap;
    s->store_len = s->line_start = s->residues_at = q->out_at;
    const char *at = q->from;
    while (at < q->to) {
        if (*at == '>' || *at == '\n' || *at == '\r')
            return 1;
        at = fasta_map_lines(s, at, q->to);
        if (s->failed || s->saw_cr)
            return 1;
    }
    return 0;
}

/* Appends a part's runs of lines to p's, its first line `first_line` of the
 * record: its first run joins p's last where the serial parse's would
 * (contiguous, p's last run full, the same width); the runs then give the
 * same line for every position. 0, or -1 out of memory. */
static int join_runs(fasta_parse *p, const fasta_parse *s, long first_line)
{
    for (size_t k = 0; k < s->n_runs; k++) {
        hmmrt_line_run run = s->runs[k];
        run.first_line += first_line;
        int last_of_part = k + 1 == s->n_runs;
        /* a run's lines are all its width but the last */
        int64_t lines = last_of_part ? s->run_lines : (run.residues + run.width - 1) / run.width;
        int full = last_of_part ? s->run_full : 0;
        hmmrt_line_run *last = p->n_runs ? &p->runs[p->n_runs - 1] : NULL;
        if (k == 0 && last && p->run_full && last->first_line + p->run_lines == run.first_line &&
            run.width == last->width) {
            last->residues += run.residues;
            p->run_lines += lines;
            p->run_full = full;
            continue;
        }
        if (fasta_parse_new_run(p, run.residues, run.first_line) != 0)
            return -1;
        p->runs[p->n_runs - 1].width = run.width;
        p->run_lines = lines;
        p->run_full = full;
    }
    return 0;
}

/* Cuts [from, to) (whole lines) into at most `most` parts of about equal
 * bytes at line ends; returns how many. */
static int cut_parts(const char *from, const char *to, int most, part *parts)
{
    size_t bytes = (size_t)(to - from);
    int n = 0;
    const char *at = from;
    while (at < to && n < most) {
        const char *target = from + bytes / (size_t)most * (size_t)(n + 1);
        if (n + 1 == most || target >= to)
            target = to;
        if (target <= at)
            target = at + 1;
        const char *nl = memchr(target - 1, '\n', (size_t)(to - (target - 1)));
        parts[n].from = at;
        parts[n].to = nl ? nl + 1 : to;
        at = parts[n++].to;
    }
    return n;
}

/* The lines [from, to) of p's record, p at a line start, on `threads`
 * threads: 0, 1 where they are not all plain sequence lines (p is then as
 * it was), or -1 out of memory (p failed). */
static int lines_on_threads(fasta_parse *p, const char *from, const char *to, int threads)
{
    size_t bytes = (size_t)(to - from);
    int most = (int)(bytes / min_part);
    most = most > threads ? threads : most;
    most = most > MAX_PARTS ? MAX_PARTS : most;
    if (most < 2)
        return 1;
    /* room for every byte: the parts then never move the store */
    char *store = hmmrt_grow(p->store, &p->store_cap, p->store_len + bytes, 1, 2048);
    if (!store)
        return 1; /* the one thread's parse says so */
    p->store = store;
    part *parts = malloc(sizeof *parts * (size_t)most);
    if (!parts)
        return 1;
    int n = cut_parts(from, to, most, parts), plain = 1;
    for (int k = 0; k < n; k++)
        parts[k].out_at = p->store_len + (size_t)(parts[k].from - from);
#pragma omp parallel for num_threads(n) schedule(static, 1) reduction(& : plain)
    for (int k = 0; k < n; k++)
        plain &= map_part(&parts[k], p) == 0;
    int status = plain ? 0 : 1;
    if (plain)
        atomic_fetch_add(&parts_mapped, n);
    size_t at = p->store_len;
    long line = p->line - p->name_line; /* the record's line of the first part's first */
    for (int k = 0; k < n && status == 0; k++) {
        const fasta_parse *s = &parts[k].sub;
        size_t count = s->store_len - parts[k].out_at;
        if (s->first_invalid && !p->first_invalid) {
            p->first_invalid = (int64_t)(at - p->residues_at) + s->first_invalid;
            p->invalid_byte = s->invalid_byte;
        }
        if (at != parts[k].out_at)
            memmove(p->store + at, p->store + parts[k].out_at, count);
        if (join_runs(p, s, line) != 0) {
            p->failed = p->out_of_memory = 1;
            p->error = "out of memory";
            p->error_line = p->line;
            status = -1;
        }
        at += count;
        line += s->line;
    }
    if (status == 0) {
        p->line = line + p->name_line;
        p->store_len = p->line_start = at;
    }
    for (int k = 0; k < n; k++)
        free(parts[k].sub.runs);
    free(parts);
    return status;
}

int hmmrt_parse_long(fasta_parse *p, const char *block, size_t n, int threads)
{
    const char *end = block + n;
    const char *first = p->map && threads > 1 ? memchr(block, '\n', n) : NULL;
    const char *last = first ? memrchr(first, '\n', (size_t)(end - first)) : NULL;
    if (!first || (size_t)(last - first) < 2 * min_part)
        return fasta_parse_bytes(p, block, n);
    /* the line the last block left unfinished, then whole lines, then the
     * start of the line the next block finishes */
    const char *from = first + 1, *to = last + 1;
    if (fasta_parse_bytes(p, block, (size_t)(from - block)) != 0)
        return -1;
    int plain_start = p->state == FASTA_AT_LINE_START && p->in_record && !p->saw_cr &&
                      !p->after_cr && p->line_start == p->store_len;
    int got = plain_start ? lines_on_threads(p, from, to, threads) : 1;
    if (got < 0)
        return -1;
    return fasta_parse_bytes(p, got == 0 ? to : from, (size_t)(end - (got == 0 ? to : from)));
}
