/* output.c: the output table (column notes and header, one row per sequence, the
 * '# incomplete' line), written to a file descriptor in large blocks, with
 * every write checked. Rows are formatted apart, so that threads can do it.
 * The output never ends inside a row: a write that fails part way through
 * one (a full disk) is cut back to the row before where the file allows
 * (a regular file), and SIGTERM, SIGINT and SIGHUP end the output with a
 * '# incomplete: stopped by SIGTERM' line after the last whole row before
 * the program dies of the signal (hmmrt_out_catch_signals). */
#include "internal.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- stopping on a signal ---------------------------------------------------
 * The handler may write only while no write of the table is under way: the
 * output is then at the end of a row. Otherwise the writer, once its write
 * returns, completes the row it was in and writes the line itself. A second
 * signal kills at once (a reader that never reads would hold the writer). */

enum { OUT_IDLE, OUT_WRITING, OUT_STOPPING };
static atomic_int out_state = OUT_IDLE;
static atomic_int stop_signal;
static int signal_fd = -1; /* the output the handler writes to; -1: none */

static const int caught_signals[] = {SIGTERM, SIGINT, SIGHUP};
enum { N_CAUGHT = sizeof caught_signals / sizeof caught_signals[0] };
static struct sigaction previous_actions[N_CAUGHT];
static int caught[N_CAUGHT];

/* Only write(2): called from the handler. */
static void write_stop_line(int sig)
{
    const char *name = sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT"
                     : sig == SIGHUP  ? "SIGHUP"  : "a signal";
    char line[64] = "# incomplete: stopped by ";
    size_t n = strlen(line), k = strlen(name);
    memcpy(line + n, name, k);
    line[n + k] = '\n';
    const char *at = line;
    size_t left = n + k + 1;
    while (left > 0 && signal_fd >= 0) {
        ssize_t done = write(signal_fd, at, left);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            break;
        at += done;
        left -= (size_t)done;
    }
}

/* Dies of sig as if it had not been caught: the exit status is 128 + sig. */
static void die_of(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached */
}

static void on_stop_signal(int sig)
{
    int saved = errno;
    if (atomic_exchange(&stop_signal, sig) != 0)
        die_of(sig);
    int expected = OUT_IDLE;
    if (atomic_compare_exchange_strong(&out_state, &expected, OUT_STOPPING)) {
        write_stop_line(sig);
        die_of(sig);
    }
    errno = saved; /* the writer finishes its row, then stops */
}

void hmmrt_out_catch_signals(const hmmrt_out *o)
{
    signal_fd = o->fd;
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = on_stop_signal;
    sigemptyset(&act.sa_mask);
    act.sa_flags = SA_RESTART;
    for (int k = 0; k < N_CAUGHT; k++) {
        caught[k] = 0;
        if (sigaction(caught_signals[k], NULL, &previous_actions[k]) != 0 ||
            previous_actions[k].sa_handler == SIG_IGN) /* nohup, a background job */
            continue;
        caught[k] = sigaction(caught_signals[k], &act, NULL) == 0;
    }
}

void hmmrt_out_release_signals(void)
{
    for (int k = 0; k < N_CAUGHT; k++)
        if (caught[k])
            sigaction(caught_signals[k], &previous_actions[k], NULL);
}

/* The table's writer takes the output; if a handler has it, the program is
 * about to die. */
static void begin_writing(void)
{
    int expected = OUT_IDLE;
    while (!atomic_compare_exchange_weak(&out_state, &expected, OUT_WRITING)) {
        if (expected == OUT_STOPPING)
            for (;;)
                pause();
        expected = OUT_IDLE;
    }
}

/* Writes n bytes whatever signals come (the row must be whole). */
static void write_rest_of_row(int fd, const char *bytes, size_t n)
{
    while (n > 0) {
        ssize_t done = write(fd, bytes, n);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            return;
        bytes += done;
        n -= (size_t)done;
    }
}

/* A signal came while [start, at) of a write was written and [at, end) not:
 * completes the row at is in, writes the line and dies. */
static void stop_after_row(int fd, const char *start, const char *at, const char *end)
{
    if (at > start && at[-1] != '\n' && at < end) {
        const char *row_end = memchr(at, '\n', (size_t)(end - at));
        write_rest_of_row(fd, at, row_end ? (size_t)(row_end + 1 - at) : (size_t)(end - at));
    }
    int sig = atomic_load(&stop_signal);
    write_stop_line(sig);
    die_of(sig);
}

static void end_writing(void)
{
    atomic_store(&out_state, OUT_IDLE);
    int expected = OUT_IDLE;
    if (atomic_load(&stop_signal) &&
        atomic_compare_exchange_strong(&out_state, &expected, OUT_STOPPING)) {
        write_stop_line(atomic_load(&stop_signal));
        die_of(atomic_load(&stop_signal));
    }
}

/* ---- the table ----------------------------------------------------------- */

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

/* A write failed after [start, at) went out, which ends inside a row: the
 * file is cut back to the row before, where it can be (a regular file;
 * a pipe's reader is gone, a device keeps what it took). */
static void cut_back_to_row(hmmrt_out *o, const char *start, const char *at)
{
    size_t partial = 0;
    while (at - partial > start && at[-1 - (ptrdiff_t)partial] != '\n')
        partial++;
    struct stat st;
    if (partial == 0 || fstat(o->fd, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    off_t end = lseek(o->fd, 0, SEEK_CUR);
    if (end >= (off_t)partial && ftruncate(o->fd, end - (off_t)partial) == 0)
        lseek(o->fd, end - (off_t)partial, SEEK_SET);
}

/* Writes all of bytes (whole rows) to the descriptor; after a failure,
 * nothing more, and the output ends at a row. */
static void write_fully(hmmrt_out *o, const char *bytes, size_t n)
{
    const char *start = bytes, *end = bytes + n;
    begin_writing();
    while (bytes < end && !o->error) {
        ssize_t done = write(o->fd, bytes, (size_t)(end - bytes));
        if (done > 0)
            bytes += done;
        if (atomic_load(&stop_signal))
            stop_after_row(o->fd, start, bytes, end);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0) {
            o->error = done < 0 ? errno : EIO;
            cut_back_to_row(o, start, bytes);
        }
    }
    end_writing();
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
    if (prog->row_models > 0) { /* rows per model */
        hmmrt_out_puts(o, "\tmodel");
        for (int c = 0; c < prog->row_width; c++) {
            hmmrt_out_write(o, "\t", 1);
            hmmrt_out_puts(o, prog->row_labels[c]);
        }
        hmmrt_out_write(o, "\n", 1);
        return;
    }
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
    for (int m = 0; m < prog->row_models; m++) { /* rows per model */
        hmmrt_buf_puts(row, name);
        hmmrt_buf_putc(row, '\t');
        hmmrt_buf_puts(row, prog->row_model_names[m]);
        for (int c = m * prog->row_width; c < (m + 1) * prog->row_width; c++) {
            hmmrt_buf_putc(row, '\t');
            format_field(row, prog->columns[c].kind, &values[c]);
        }
        hmmrt_buf_putc(row, '\n');
    }
    if (prog->row_models > 0)
        return;
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
