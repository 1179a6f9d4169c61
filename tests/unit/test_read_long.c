/* test_read_long.c: a long record's lines mapped on several threads
 * (runtime/read_long.c) against the one-thread parse: the same records,
 * codes, first byte outside, line of every position and errors, for random
 * long records (lines of changing width, blanks, bytes outside, LF, CRLF
 * and CR line ends, blank lines, a header without a name) read in blocks
 * of many sizes on 1 to 4 threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"
#include "read_long.h"

static const char ALPHABET[] = "ACGT";

/* A random FASTA file of a few long records into buf: its length. */
static size_t random_long_fasta(char *buf, size_t cap, unsigned seed)
{
    srand(seed);
    const char *ends[] = {"\n", "\r\n", "\r"};
    int kind = rand() % 8;
    const char *nl = ends[kind == 0 ? 2 : kind == 1 ? 1 : 0];
    int records = 1 + rand() % 3, odd = rand() % 3; /* 0: every line plain */
    size_t n = 0;
    for (int i = 0; i < records && n + 4096 < cap; i++) {
        n += (size_t)snprintf(buf + n, cap - n, ">chr%d some words%s", i, nl);
        int length = 1000 + rand() % 300000, width = 1 + rand() % 120;
        int column = 0;
        for (int k = 0; k < length && n + 16 < cap; k++) {
            int r = rand() % 100000;
            char c = ALPHABET[rand() % 4];
            if (odd && r < 5)
                c = "xN*\x01\x80"[rand() % 5]; /* outside the alphabet */
            else if (odd && r < 10)
                c = " \t"[rand() % 2]; /* blanks, left out */
            buf[n++] = c;
            if (++column == width || k + 1 == length) {
                column = 0;
                n += (size_t)snprintf(buf + n, cap - n, "%s", nl);
                if (odd == 2 && rand() % 5000 == 0)
                    n += (size_t)snprintf(buf + n, cap - n, "%s", nl); /* a blank line */
                if (rand() % 3000 == 0)
                    width = 1 + rand() % 120; /* the lines' width changes */
            }
        }
    }
    if (rand() % 10 == 0)
        n += (size_t)snprintf(buf + n, cap - n, ">%s", nl); /* no name: an error */
    return n;
}

/* Reads path whole; appends each record's name, line, length, first byte
 * outside and its line, the line of every 97th position, and a checksum
 * of its codes to out, then the end or error. */
static size_t describe_reading(const char *path, int threads, size_t piece, char *out, size_t cap)
{
    hmmrt_reader *r = hmmrt_reader_open(&path, 1);
    assert_non_null(r);
    hmmrt_reader_set_pieces(r, threads, piece);
    assert_int_equal(hmmrt_reader_map_to(r, ALPHABET), 0);
    size_t n = 0;
    hmmrt_record rec;
    char err[512];
    int got;
    while ((got = hmmrt_reader_next(r, &rec, err, sizeof err)) == 1) {
        assert_non_null(rec.codes);
        uint64_t sum = 0;
        for (int64_t k = 0; k < rec.length; k++)
            sum = sum * 1000003u + rec.codes[k];
        int64_t bad = rec.first_invalid - 1;
        n += (size_t)snprintf(out + n, cap - n, "%s %ld %lld %lld@%ld %02x %llx:", rec.name,
                              rec.line, (long long)rec.length, (long long)bad,
                              bad >= 0 ? hmmrt_record_line_of(&rec, bad) : 0L, rec.invalid_byte,
                              (unsigned long long)sum);
        for (int64_t k = 0; k < rec.length && n + 64 < cap; k += 97)
            n += (size_t)snprintf(out + n, cap - n, " %ld", hmmrt_record_line_of(&rec, k));
        n += (size_t)snprintf(out + n, cap - n, " %ld\n",
                              hmmrt_record_line_of(&rec, rec.length - 1));
        hmmrt_record_release(&rec);
        assert_true(n + 1024 < cap);
    }
    n += (size_t)snprintf(out + n, cap - n, "end %d %s\n", got, got < 0 ? err : "");
    hmmrt_reader_close(r);
    return n;
}

static void test_long_records_read_as_on_one_thread(void **state)
{
    enum { FILE_CAP = 4 << 20, DESCRIPTION_CAP = 8 << 20 };
    char *text = malloc(FILE_CAP);
    char *serial = malloc(DESCRIPTION_CAP), *parallel = malloc(DESCRIPTION_CAP);
    char path[] = "/tmp/test_read_long_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    hmmrt_parse_long_min_part(1000); /* parts of a few KB: many cuts */
    long long parts_before = hmmrt_parse_long_parts();
    const size_t pieces[] = {4096, 65536, 333333};
    for (unsigned seed = 1; seed <= 16; seed++) {
        size_t n = random_long_fasta(text, FILE_CAP, seed);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, n, f), n);
        fclose(f);
        size_t expected = describe_reading(path, 1, 4 << 20, serial, DESCRIPTION_CAP);
        for (int p = 0; p < 3; p++)
            for (int threads = 2; threads <= 4; threads += 2) {
                size_t got = describe_reading(path, threads, pieces[p], parallel, DESCRIPTION_CAP);
                if (got != expected || memcmp(parallel, serial, got) != 0) {
                    size_t k = 0;
                    while (k < got && k < expected && parallel[k] == serial[k])
                        k++;
                    fail_msg("seed %u, %d threads, pieces of %zu: the parts differ at "
                             "byte %zu:\n  one thread: %.120s\n  parts:      %.120s",
                             seed, threads, pieces[p], k, serial + (k > 40 ? k - 40 : 0),
                             parallel + (k > 40 ? k - 40 : 0));
                }
            }
    }
    /* most blocks were plain lines, cut into parts */
    assert_true(hmmrt_parse_long_parts() - parts_before > 1000);
    hmmrt_parse_long_min_part(0);
    unlink(path);
    free(text);
    free(serial);
    free(parallel);
}

/* The first byte outside, its position and line, from a part that is not
 * the first: lines of 10 on 4 threads, the byte on line 901. */
static void test_byte_outside_in_a_later_part(void **state)
{
    char path[] = "/tmp/test_read_long_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    fprintf(f, ">long\n");
    for (int line = 0; line < 1000; line++)
        fprintf(f, "%s\n", line == 899 ? "ACGTAxGTAC" : "ACGTACGTAC");
    fclose(f);
    hmmrt_parse_long_min_part(100);
    long long parts_before = hmmrt_parse_long_parts();
    const char *p = path;
    hmmrt_reader *r = hmmrt_reader_open(&p, 1);
    hmmrt_reader_set_pieces(r, 4, 4096); /* blocks of 16 KB: the whole file, 4 parts */
    assert_int_equal(hmmrt_reader_map_to(r, ALPHABET), 0);
    hmmrt_record rec;
    char err[256];
    assert_int_equal(hmmrt_reader_next(r, &rec, err, sizeof err), 1);
    assert_int_equal(rec.length, 10000);
    assert_int_equal(rec.first_invalid, 8995 + 1);
    assert_int_equal(rec.invalid_byte, 'x');
    assert_int_equal(hmmrt_record_line_of(&rec, 8995), 901);
    assert_int_equal(hmmrt_record_line_of(&rec, 9999), 1001);
    assert_int_equal(rec.codes[8996], 2); /* G, after the byte outside */
    assert_true(hmmrt_parse_long_parts() - parts_before >= 2);
    hmmrt_record_release(&rec);
    assert_int_equal(hmmrt_reader_next(r, &rec, err, sizeof err), 0);
    hmmrt_reader_close(r);
    hmmrt_parse_long_min_part(0);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_records_read_as_on_one_thread),
        cmocka_unit_test(test_byte_outside_in_a_later_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
