/* output.c: the output table (column notes and header, one row per sequence, the
 * '# incomplete' line), written to a file descriptor in large blocks, with
 * every write checked. Rows are formatted apart, so that threads can do it. */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hmmrt_out_open(hmmrt_out *o, int fd, size_t cap)
{
    o->fd = fd;
    o->len = 0;
    o->error = 0;
    o->cap = cap;
    o->data = malloc(cap);
    return o->data ? 0 : -1;
}

void hmmrt_out_close(hmmrt_out *o)
{
    free(o->data);
    o->data = NULL;
    o->len = o->cap = 0;
}

/* Writes all of bytes to the descriptor; after a failure, nothing more. */
static void write_fully(hmmrt_out *o, const char *bytes, size_t n)
{
    while (n > 0 && !o->error) {
        ssize_t done = write(o->fd, bytes, n);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0) {
            o->error = done < 0 ? errno : EIO;
            return;
        }
        bytes += done;
        n -= (size_t)done;
    }
}

int hmmrt_out_flush(hmmrt_out *o)
{
    write_fully(o, o->data, o->len);
    o->len = 0;
    return o->error ? -1 : 0;
}

void hmmrt_out_write(hmmrt_out *o, const char *bytes, size_t n)
{
    if (o->error)
        return;
    if (o->len + n > o->cap) {
        hmmrt_out_flush(o);
        if (n >= o->cap) { /* a large field goes straight through */
            write_fully(o, bytes, n);
            return;
        }
    }
    memcpy(o->data + o->len, bytes, n);
    o->len += n;
}

void hmmrt_out_puts(hmmrt_out *o, const char *s)
{
    hmmrt_out_write(o, s, strlen(s));
}

/* "# LABEL: NOTE" for every column that explains its layout. */
static void write_notes(hmmrt_out *o, const hmmrt_program *prog)
{
    for (int c = 0; c < prog->n_columns; c++) {
        if (!prog->columns[c].note)
            continue;
        hmmrt_out_puts(o, "# ");
        hmmrt_out_puts(o, prog->columns[c].label);
        hmmrt_out_puts(o, ": ");
        hmmrt_out_puts(o, prog->columns[c].note);
        hmmrt_out_write(o, "\n", 1);
    }
}

void hmmrt_out_header(hmmrt_out *o, const hmmrt_program *prog)
{
    write_notes(o, prog);
    hmmrt_out_puts(o, "#name");
    for (int c = 0; c < prog->n_columns; c++) {
        hmmrt_out_write(o, "\t", 1);
        hmmrt_out_puts(o, prog->columns[c].label);
    }
    hmmrt_out_write(o, "\n", 1);
}

static void format_field(hmmrt_buf *row, hmmrt_field_kind kind, const hmmrt_value *value)
{
    if (kind == HMMRT_FIELD_SCORE)
        hmmrt_buf_score(row, value->score);
    else if (value->text.len > 0)
        hmmrt_buf_append(row, value->text.data, value->text.len);
}

void hmmrt_format_row(hmmrt_buf *row, const hmmrt_program *prog, const char *name,
                      const hmmrt_value *values)
{
    hmmrt_buf_puts(row, name);
    for (int c = 0; c < prog->n_columns; c++) {
        hmmrt_buf_putc(row, '\t');
        format_field(row, prog->columns[c].kind, &values[c]);
    }
    hmmrt_buf_putc(row, '\n');
}

void hmmrt_out_incomplete(hmmrt_out *o, const char *where)
{
    hmmrt_out_puts(o, "# incomplete: stopped at ");
    hmmrt_out_puts(o, where);
    hmmrt_out_write(o, "\n", 1);
}
