/* ranges.c: each MPI rank's share of the input (docs/scale-out.md). The
 * files, end to end, are cut into as many equal byte ranges as ranks; a
 * FASTA record belongs to the rank whose range holds its '>', so a rank
 * reads from the first record that starts in its range to the first that
 * starts in the next one, found by reading forward from the cut, and no
 * rank reads the whole file. A packed database is cut by record index (its
 * record i stands at byte i x size / records of it), a gzip file goes
 * whole to the rank whose range holds its first byte. */
#include "hmmrt_mpi.h"

#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static hmmrt_window *windows;
static int n_windows;
static char described[512];

const hmmrt_window *hmmrt_window_of(int file)
{
    return windows && file >= 0 && file < n_windows ? &windows[file] : NULL;
}

const char *hmmrt_ranges_describe(void)
{
    return described;
}

void hmmrt_ranges_free(void)
{
    for (int i = 0; windows && i < n_windows; i++)
        free((char *)windows[i].shown);
    free(windows);
    windows = NULL;
    n_windows = 0;
}

/* The first line that starts with '>' at or after byte x of the file (0 and
 * size are always cuts): its offset. -1 when the file cannot be read. */
static int64_t next_cut(int fd, int64_t x, int64_t size)
{
    if (x <= 0)
        return 0;
    if (x >= size)
        return size;
    enum { STEP = 1 << 16 };
    static char buf[STEP + 1];
    int64_t at = x - 1; /* the byte before x says whether x starts a line */
    for (;;) {
        ssize_t n = pread(fd, buf, STEP + 1, at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        for (ssize_t k = 0; k + 1 < n; k++)
            if ((buf[k] == '\n' || buf[k] == '\r') && buf[k + 1] == '>')
                return at + k + 1;
        if (at + n >= size)
            return size;
        at += n - 1; /* the last byte read is looked at again, as the one before */
    }
}

static int64_t clamp(__int128 v, int64_t hi)
{
    return v < 0 ? 0 : v > hi ? hi : (int64_t)v;
}

typedef struct file_info {
    int fd;
    int64_t size;
    int kind; /* 0 text, 1 gzip, 2 database */
    int64_t records;
} file_info;

static int look_at(const char *path, int size, file_info *f, char *why, size_t whylen)
{
    f->fd = -1;
    if (strcmp(path, "-") == 0) {
        if (size > 1) {
            snprintf(why, whylen, "standard input cannot be shared out among %d MPI ranks: "
                     "name the files themselves", size);
            return -1;
        }
        f->size = 0;
        f->kind = -1;
        return 0;
    }
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (f->fd < 0 || fstat(f->fd, &st) != 0) {
        snprintf(why, whylen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "%s: not a regular file: under mpirun each rank reads its own "
                 "part of every file, which a pipe or a device cannot give; name a file",
                 path);
        return -1;
    }
    f->size = (int64_t)st.st_size;
    unsigned char head[HMMRT_SNIFF_BYTES];
    ssize_t n = pread(f->fd, head, sizeof head, 0);
    n = n < 0 ? 0 : n;
    f->kind = hmmrt_is_gzip(head, (size_t)n) ? 1 : hmmrt_is_db(head, (size_t)n) ? 2 : 0;
    if (f->kind == 2) {
        int fd = dup(f->fd);
        char dbwhy[768];
        hmmrt_db *db = fd >= 0 ? hmmrt_db_open(fd, path, dbwhy, sizeof dbwhy) : NULL;
        if (!db) {
            snprintf(why, whylen, "%s: %s", path, fd >= 0 ? dbwhy : strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        f->records = (int64_t)hmmrt_db_record_count(db);
        hmmrt_db_free(db);
        close(fd);
    }
    return 0;
}

static void add_description(const char *path, const hmmrt_window *w)
{
    size_t len = strlen(described);
    if (w->none || len + 64 > sizeof described)
        return;
    const char *unit = w->is_db ? "records" : "bytes";
    if (w->whole)
        snprintf(described + len, sizeof described - len, "%s%s", len ? ", " : "", path);
    else
        snprintf(described + len, sizeof described - len, "%s%s %s %lld-%lld", len ? ", " : "",
                 path, unit, (long long)w->begin, (long long)w->end - 1);
}

int hmmrt_ranges_plan(const char *const *files, int n_files, int rank, int size, char *why,
                      size_t whylen)
{
    file_info *info = calloc((size_t)(n_files > 0 ? n_files : 1), sizeof *info);
    windows = calloc((size_t)(n_files > 0 ? n_files : 1), sizeof *windows);
    if (!info || !windows) {
        free(info);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    n_windows = n_files;
    described[0] = '\0';
    int status = 0;
    __int128 total = 0;
    for (int i = 0; i < n_files && !status; i++) {
        status = look_at(files[i], size, &info[i], why, whylen);
        total += info[i].size;
    }
    __int128 lo = total * rank / size, hi = total * (rank + 1) / size, at = 0;
    for (int i = 0; i < n_files && !status; i++) {
        hmmrt_window *w = &windows[i];
        file_info *f = &info[i];
        int64_t a = clamp(lo - at, f->size), b = clamp(hi - at, f->size);
        at += f->size;
        if (f->kind < 0) { /* standard input, one rank */
            w->whole = 1;
            continue;
        }
        if (f->kind == 1) { /* gzip: its first byte's rank */
            w->whole = a == 0 && b > 0;
        } else if (f->kind == 2) { /* record i at byte i x size / records */
            w->is_db = 1;
            w->begin = f->size ? (int64_t)(((__int128)a * f->records + f->size - 1) / f->size) : 0;
            w->end = f->size ? (int64_t)(((__int128)b * f->records + f->size - 1) / f->size) : 0;
            w->whole = w->begin == 0 && w->end == f->records && f->records > 0;
            w->none = w->begin >= w->end;
        } else {
            w->begin = next_cut(f->fd, a, f->size);
            w->end = next_cut(f->fd, b, f->size);
            if (w->begin < 0 || w->end < 0) {
                snprintf(why, whylen, "%s: cannot read: %s", files[i], strerror(errno));
                status = -1;
                break;
            }
            w->whole = w->begin == 0 && w->end == f->size && f->size > 0;
        }
        if (f->kind != 2)
            w->none = !w->whole && w->begin >= w->end;
        char shown[4200];
        if (w->begin > 0 && !w->is_db)
            snprintf(shown, sizeof shown, "%s (from byte %lld)", files[i], (long long)w->begin);
        else
            snprintf(shown, sizeof shown, "%s", files[i]);
        w->shown = strdup(shown);
        if (!w->shown) {
            snprintf(why, whylen, "out of memory");
            status = -1;
        }
        add_description(files[i], w);
    }
    for (int i = 0; i < n_files; i++)
        if (info[i].fd >= 0)
            close(info[i].fd);
    free(info);
    if (!described[0])
        snprintf(described, sizeof described, "no input (its range holds no record)");
    if (status)
        hmmrt_ranges_free();
    return status;
}
