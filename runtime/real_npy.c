/* real_npy.c: NumPy input of real observations: a .npy file (one 2-D array
 * of T x D float32 or float64 values: one sequence, named after the file)
 * and a .npz archive of them (each array one sequence, named by its key, in
 * the archive's order; stored, or deflated by numpy.savez_compressed and
 * inflated here with zlib, its CRC checked), recognised by content. */
#include "real_read.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "internal.h"

int hmmrt_is_npy(const unsigned char *data, size_t len)
{
    return len >= 6 && memcmp(data, "\x93NUMPY", 6) == 0;
}

int hmmrt_is_npz(const unsigned char *data, size_t len)
{
    return len >= 4 && (memcmp(data, "PK\3\4", 4) == 0 || memcmp(data, "PK\5\6", 4) == 0);
}

static int fail(char *err, size_t errlen, const char *fmt, ...) HMMRT_PRINTF(3, 4);
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static uint64_t le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The value of `key` in the header dict (its text after the ':'), or NULL. */
static const char *header_value(const char *header, const char *key)
{
    char quoted[32];
    snprintf(quoted, sizeof quoted, "'%s'", key);
    const char *at = strstr(header, quoted);
    if (!at)
        return NULL;
    at = strchr(at + strlen(quoted), ':');
    if (!at)
        return NULL;
    at++;
    while (*at == ' ')
        at++;
    return at;
}

/* Why `name` (a file's or an archive key's) cannot name a sequence in the
 * output's rows, or NULL when it can. */
static const char *bad_name(const char *name)
{
    if (!name[0])
        return "it is empty";
    if (name[0] == '#')
        return "it starts with '#' (output lines starting with '#' are comments)";
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return "it holds a control character (a tab or a line end would break the rows)";
    return NULL;
}

/* The sequence of one array: its header read, its values checked finite. */
int hmmrt_npy_read(const char *path, const char *name, const unsigned char *data, size_t len,
                   int D, hmmrt_real_file *f, char *err, size_t errlen)
{
    const char *why = bad_name(name);
    if (why) {
        hmmrt_buf shown = {0};
        hmmrt_describe_text(&shown, name);
        fail(err, errlen, "%s: an array named '%s' cannot name a sequence: %s; rename it", path,
             shown.len ? shown.data : "", why);
        hmmrt_buf_free(&shown);
        return -1;
    }
    if (len < 10 || !hmmrt_is_npy(data, len))
        return fail(err, errlen, "%s: sequence %s: not a NumPy array (.npy)", path, name);
    int major = data[6];
    size_t header_len = major == 1 ? le(data + 8, 2) : le(data + 8, 4);
    size_t start = (major == 1 ? 10 : 12) + header_len;
    if (major < 1 || major > 3 || start > len)
        return fail(err, errlen, "%s: sequence %s: a .npy header of version %d.%d that is cut "
                    "short or unknown", path, name, major, data[7]);
    char *header = malloc(header_len + 1);
    if (!header) {
        f->out_of_memory = 1;
        return fail(err, errlen, "%s: out of memory", path);
    }
    memcpy(header, data + (major == 1 ? 10 : 12), header_len);
    header[header_len] = '\0';
    const char *descr = header_value(header, "descr");
    const char *order = header_value(header, "fortran_order");
    const char *shape = header_value(header, "shape");
    char type[8] = "";
    long long T = -1, width = -1;
    int dims = 0;
    if (descr && *descr == '\'')
        sscanf(descr + 1, "%7[^']", type);
    if (shape && *shape == '(') {
        const char *p = shape + 1;
        while (*p && *p != ')') {
            char *end;
            long long v = strtoll(p, &end, 10);
            if (end == p)
                break;
            if (dims == 0)
                T = v;
            else if (dims == 1)
                width = v;
            dims++;
            p = end;
            while (*p == ',' || *p == ' ')
                p++;
        }
    }
    int fortran = order && strncmp(order, "True", 4) == 0;
    free(header);
    int size = strcmp(type, "<f8") == 0 || strcmp(type, ">f8") == 0 ? 8
             : strcmp(type, "<f4") == 0 || strcmp(type, ">f4") == 0 ? 4 : 0;
    if (!size)
        return fail(err, errlen, "%s: sequence %s: dtype '%s' is neither float32 nor float64: "
                    "save the array as a.astype(numpy.float64)", path, name, type);
    if (dims != 2 || T < 0)
        return fail(err, errlen, "%s: sequence %s: the array has %d dimension%s; it must be "
                    "2-D, T observations x %d values", path, name, dims, dims == 1 ? "" : "s", D);
    if (width != D)
        return fail(err, errlen, "%s: sequence %s: observations of %lld value%s, but the "
                    "program's observations are vectors of %d real%s", path, name, width,
                    width == 1 ? "" : "s", D, D == 1 ? "" : "s");
    size_t row_bytes = (size_t)D * (size_t)size;
    if ((unsigned long long)T > (len - start) / row_bytes) /* no product that overflows */
        return fail(err, errlen, "%s: sequence %s: the array's shape needs %lld x %zu bytes of "
                    "data but the file holds %zu: it is cut short", path, name, T, row_bytes,
                    len - start);
    size_t n_values = (size_t)T * (size_t)D;
    double *obs = malloc((n_values > 0 ? n_values : 1) * sizeof *obs);
    char *copy = malloc(strlen(name) + 1);
    hmmrt_real_seq *grown = realloc(f->seqs, (size_t)(f->n + 1) * sizeof *grown);
    if (grown)
        f->seqs = grown;
    if (!obs || !copy || !grown) {
        free(obs);
        free(copy);
        f->out_of_memory = 1;
        return fail(err, errlen, "%s: out of memory for sequence %s", path, name);
    }
    strcpy(copy, name);
    const unsigned char *values = data + start;
    int swap = type[0] == '>';
    for (long long t = 0; t < T; t++)
        for (int j = 0; j < D; j++) {
            size_t k = fortran ? (size_t)j * (size_t)T + (size_t)t : (size_t)t * D + (size_t)j;
            unsigned char bytes[8];
            for (int b = 0; b < size; b++)
                bytes[b] = values[k * size + (swap ? size - 1 - b : b)];
            double v;
            if (size == 8) {
                memcpy(&v, bytes, 8);
            } else {
                float x;
                memcpy(&x, bytes, 4);
                v = x;
            }
            if (!isfinite(v)) {
                free(obs);
                free(copy);
                return fail(err, errlen, "%s: sequence %s, observation %lld: value %d is not a "
                            "finite number (%g)", path, name, t + 1, j + 1, v);
            }
            obs[(size_t)t * D + (size_t)j] = v;
        }
    f->seqs[f->n++] = (hmmrt_real_seq){.name = copy, .obs = obs, .length = T, .line = 0};
    return 0;
}

/* The deflated bytes of an entry inflated into *plain (size bytes, which the
 * directory gave; freed by the caller), their CRC-32 checked: 0, or -1 with
 * a message naming the sequence. */
static int inflate_entry(const char *path, const char *name, const unsigned char *in,
                         uint64_t in_len, uint64_t size, uint32_t crc, unsigned char **plain,
                         char *err, size_t errlen)
{
    /* deflate expands at most 1032 times: a larger claim is a damaged
     * directory, refused before it costs memory */
    *plain = NULL;
    if (size > 1032 * in_len + 1024)
        return fail(err, errlen, "%s: sequence %s: the archive says it inflates to %llu bytes, "
                    "more than its %llu compressed bytes can hold: the archive is damaged; save "
                    "it again", path, name, (unsigned long long)size, (unsigned long long)in_len);
    *plain = malloc(size ? (size_t)size : 1);
    if (!*plain)
        return fail(err, errlen, "%s: sequence %s: out of memory inflating %llu bytes", path, name,
                    (unsigned long long)size);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
        return fail(err, errlen, "%s: sequence %s: zlib cannot start", path, name);
    int status = Z_OK;
    uint64_t in_at = 0, out_at = 0;
    while (status == Z_OK) {
        uInt in_now = in_len - in_at > (1u << 30) ? 1u << 30 : (uInt)(in_len - in_at);
        uInt out_now = size - out_at > (1u << 30) ? 1u << 30 : (uInt)(size - out_at);
        z.next_in = (unsigned char *)in + in_at;
        z.avail_in = in_now;
        z.next_out = *plain + out_at;
        z.avail_out = out_now;
        status = inflate(&z, Z_NO_FLUSH);
        in_at += in_now - z.avail_in;
        out_at += out_now - z.avail_out;
        if (status == Z_OK && z.avail_in == in_now && z.avail_out == out_now)
            status = Z_BUF_ERROR; /* no progress: the data ends too soon or is too long */
    }
    const char *why = z.msg;
    inflateEnd(&z);
    if (status != Z_STREAM_END || out_at != size)
        return fail(err, errlen, "%s: sequence %s: the compressed data is %s (zlib: %s): save the "
                    "archive again", path, name, status == Z_STREAM_END ? "not the size the "
                    "archive says" : "corrupt or cut short", why ? why : "no message");
    uLong sum = 0;
    for (uint64_t at = 0; at < size; at += 1u << 30)
        sum = crc32(sum, *plain + at, size - at > (1u << 30) ? 1u << 30 : (uInt)(size - at));
    if ((uint32_t)sum != crc)
        return fail(err, errlen, "%s: sequence %s: the compressed data does not match its "
                    "checksum (CRC-32): the archive is damaged; save it again", path, name);
    return 0;
}

/* Where the central directory is, from the end of central directory record
 * (and its zip64 form when the sizes overflow the 32-bit fields). */
static int central_directory(const unsigned char *data, size_t len, uint64_t *offset,
                             uint64_t *entries)
{
    if (len < 22)
        return -1;
    size_t lowest = len > 65557 ? len - 65557 : 0;
    for (size_t at = len - 22 + 1; at-- > lowest;) {
        if (memcmp(data + at, "PK\5\6", 4) != 0)
            continue;
        *entries = le(data + at + 10, 2);
        *offset = le(data + at + 16, 4);
        if ((*entries == 0xffff || *offset == 0xffffffff) && at >= 20 &&
            memcmp(data + at - 20, "PK\6\7", 4) == 0) {
            uint64_t z = le(data + at - 20 + 8, 8);
            if (z > len || len - z < 56 || memcmp(data + z, "PK\6\6", 4) != 0)
                return -1;
            *entries = le(data + z + 32, 8);
            *offset = le(data + z + 48, 8);
        }
        return *offset <= len ? 0 : -1;
    }
    return -1;
}

int hmmrt_npz_read(const char *path, const unsigned char *data, size_t len, int D,
                   hmmrt_real_file *f, char *err, size_t errlen)
{
    uint64_t at, entries;
    if (central_directory(data, len, &at, &entries) != 0)
        return fail(err, errlen, "%s: a zip archive (.npz) whose directory cannot be read: the "
                    "file is cut short or not a NumPy archive", path);
    for (uint64_t e = 0; e < entries; e++) {
        if (at + 46 > len || memcmp(data + at, "PK\1\2", 4) != 0)
            return fail(err, errlen, "%s: entry %llu of the archive's directory is broken", path,
                        (unsigned long long)e + 1);
        int method = (int)le(data + at + 10, 2);
        uint32_t crc = (uint32_t)le(data + at + 16, 4);
        uint64_t size = le(data + at + 20, 4), plain_size = le(data + at + 24, 4);
        size_t name_len = le(data + at + 28, 2), extra_len = le(data + at + 30, 2);
        size_t comment_len = le(data + at + 32, 2);
        uint64_t local = le(data + at + 42, 4);
        if (at + 46 + name_len + extra_len > len)
            return fail(err, errlen, "%s: entry %llu of the archive's directory is cut short",
                        path, (unsigned long long)e + 1);
        /* zip64: the fields that read all ones are in the extra field, in order */
        const unsigned char *x = data + at + 46 + name_len, *x_end = x + extra_len;
        while (x + 4 <= x_end) {
            size_t id = le(x, 2), n = le(x + 2, 2);
            if (n > (size_t)(x_end - x) - 4)
                break; /* a field longer than what is left: not read */
            if (id == 1) {
                const unsigned char *v = x + 4;
                if (plain_size == 0xffffffff && v + 8 <= x + 4 + n) {
                    plain_size = le(v, 8); /* the uncompressed size */
                    v += 8;
                }
                if (size == 0xffffffff && v + 8 <= x + 4 + n) {
                    size = le(v, 8);
                    v += 8;
                }
                if (local == 0xffffffff && v + 8 <= x + 4 + n)
                    local = le(v, 8);
            }
            x += 4 + n;
        }
        char name[512];
        size_t shown = name_len < sizeof name - 1 ? name_len : sizeof name - 1;
        memcpy(name, data + at + 46, shown);
        name[shown] = '\0';
        if (shown > 4 && strcmp(name + shown - 4, ".npy") == 0)
            name[shown - 4] = '\0';
        if (method != 0 && method != 8)
            return fail(err, errlen, "%s: sequence %s is compressed with zip method %d, which "
                        "this program does not read: save with numpy.savez or "
                        "numpy.savez_compressed", path, name, method);
        if (local > len || len - local < 30 || memcmp(data + local, "PK\3\4", 4) != 0)
            return fail(err, errlen, "%s: sequence %s: its entry in the archive is broken", path,
                        name);
        uint64_t begin = local + 30 + le(data + local + 26, 2) + le(data + local + 28, 2);
        if (begin > len || size > len - begin)
            return fail(err, errlen, "%s: sequence %s: the archive is cut short", path, name);
        if (method == 8) { /* deflated (numpy.savez_compressed) */
            unsigned char *plain = NULL;
            int bad = inflate_entry(path, name, data + begin, size, plain_size, crc, &plain, err,
                                    errlen) != 0 ||
                      hmmrt_npy_read(path, name, plain, (size_t)plain_size, D, f, err, errlen) != 0;
            free(plain);
            if (bad)
                return -1;
        } else if (hmmrt_npy_read(path, name, data + begin, (size_t)size, D, f, err, errlen) != 0) {
            return -1;
        }
        at += 46 + name_len + extra_len + comment_len;
    }
    return 0;
}
