/* test_fasta_map.c: the one-pass reader (hmmrt_reader_map_to: residues
 * mapped to codes as they are parsed) against the two passes it replaces
 * (the reader's residues, then hmmrt_map): the same records, codes, first
 * byte outside the alphabet, line numbers and errors, for random FASTA with
 * LF, CRLF and CR line ends, blanks, bytes outside, long and empty lines,
 * cut into pieces of many sizes on 1 to 4 threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"

static const char ALPHABET[] = "ACDEFGHIKLMNPQRSTVWY";

/* A random FASTA file of about `records` records into buf (NUL-free but
 * for an odd byte outside): its length. */
static size_t random_fasta(char *buf, size_t cap, unsigned seed, int records)
{
    srand(seed);
    const char *ends[] = {"\n", "\r\n", "\r"};
    const char *nl = ends[rand() % 4 == 0 ? 1 + rand() % 2 : 0];
    size_t n = 0;
    for (int i = 0; i < records && n + 4096 < cap; i++) {
        n += (size_t)snprintf(buf + n, cap - n, ">s%d some words%s", i, nl);
        int length = rand() % 700, width = 1 + rand() % 90;
        if (rand() % 6 == 0)
            width = 2000; /* longer than a vector, and than a line chunk at times */
        for (int k = 0; k < length && n + 8 < cap; k++) {
            int r = rand() % 1000;
            char c = ALPHABET[rand() % 20];
            if (r < 3)
                c = "xB*\x01\x80\xff"[rand() % 6]; /* outside the alphabet */
            else if (r < 6)
                c = " \t\v\f"[rand() % 4]; /* blanks, left out */
            buf[n++] = c;
            if ((k + 1) % width == 0 || k + 1 == length) {
                if (rand() % 20 == 0)
                    buf[n++] = ' ';
                n += (size_t)snprintf(buf + n, cap - n, "%s", nl);
                if (rand() % 30 == 0)
                    n += (size_t)snprintf(buf + n, cap - n, "%s", nl); /* a blank line */
            }
        }
    }
    return n;
}

/* Reads path whole with the given pieces, mapping or not; appends each
 * record's name, line, first invalid position and byte, and codes to out
 * (the two-pass reading maps its residues with hmmrt_map), then the error. */
static size_t describe_reading(const char *path, int threads, size_t piece, int one_pass,
                               char *out, size_t cap)
{
    hmmrt_reader *r = hmmrt_reader_open(&path, 1);
    assert_non_null(r);
    hmmrt_reader_set_pieces(r, threads, piece);
    if (one_pass)
        assert_int_equal(hmmrt_reader_map_to(r, ALPHABET), 0);
    size_t n = 0;
    hmmrt_record rec;
    char err[512];
    int got;
    uint8_t *codes = malloc(1 << 16);
    while ((got = hmmrt_reader_next(r, &rec, err, sizeof err)) == 1) {
        assert_true(rec.length < (1 << 16));
        int64_t bad;
        unsigned char bad_byte = 0;
        if (one_pass) {
            assert_non_null(rec.codes);
            assert_null(rec.residues);
            bad = rec.first_invalid - 1;
            bad_byte = rec.invalid_byte;
            memcpy(codes, rec.codes, (size_t)rec.length);
        } else {
            assert_null(rec.codes);
            bad = hmmrt_map(ALPHABET, rec.residues, rec.length, codes);
            if (bad >= 0)
                bad_byte = (unsigned char)rec.residues[bad];
        }
        long bad_line = bad >= 0 ? hmmrt_record_line_of(&rec, bad) : 0;
        n += (size_t)snprintf(out + n, cap - n, "%s %ld %lld %lld@%ld %02x:", rec.name, rec.line,
                              (long long)rec.length, (long long)bad, bad_line, bad_byte);
        /* the codes up to the first outside (the two passes stop there) */
        int64_t upto = bad >= 0 ? bad : rec.length;
        for (int64_t k = 0; k < upto && n + 4 < cap; k++)
            out[n++] = (char)('a' + codes[k]);
        out[n++] = '\n';
        hmmrt_record_release(&rec);
        assert_true(n + 1024 < cap);
    }
    n += (size_t)snprintf(out + n, cap - n, "end %d %s\n", got, got < 0 ? err : "");
    free(codes);
    hmmrt_reader_close(r);
    return n;
}

static void test_one_pass_reads_as_two_passes(void **state)
{
    enum { FILE_CAP = 1 << 20, DESCRIPTION_CAP = 4 << 20 };
    char *text = malloc(FILE_CAP);
    char *two = malloc(DESCRIPTION_CAP), *one = malloc(DESCRIPTION_CAP);
    char path[] = "/tmp/test_fasta_map_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    const size_t pieces[] = {1, 7, 64, 333, 4096, 1 << 20};
    for (unsigned seed = 1; seed <= 40; seed++) {
        size_t n = random_fasta(text, FILE_CAP, seed, 1 + (int)(seed * 7 % 120));
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(text, 1, n, f), n);
        fclose(f);
        size_t expected = describe_reading(path, 1, 4 << 20, 0, two, DESCRIPTION_CAP);
        for (int p = 0; p < 6; p++)
            for (int threads = 1; threads <= 4; threads += 3) {
                size_t got = describe_reading(path, threads, pieces[p], 1, one, DESCRIPTION_CAP);
                if (got != expected || memcmp(one, two, got) != 0) {
                    size_t k = 0;
                    while (k < got && k < expected && one[k] == two[k])
                        k++;
                    fail_msg("seed %u, %d threads, pieces of %zu: the one pass differs at "
                             "byte %zu:\n  two: %.120s\n  one: %.120s",
                             seed, threads, pieces[p], k, two + (k > 40 ? k - 40 : 0),
                             one + (k > 40 ? k - 40 : 0));
                }
            }
    }
    unlink(path);
    free(text);
    free(two);
    free(one);
}

/* The one-pass reader notes only the first byte outside, with its line. */
static void test_first_byte_outside_and_its_line(void **state)
{
    char path[] = "/tmp/test_fasta_map_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char text[] = ">a\nACD\nE x\nxY\n>b\n\r\nAC\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    const char *p = path;
    hmmrt_reader *r = hmmrt_reader_open(&p, 1);
    assert_int_equal(hmmrt_reader_map_to(r, ALPHABET), 0);
    hmmrt_record rec;
    char err[256];
    assert_int_equal(hmmrt_reader_next(r, &rec, err, sizeof err), 1);
    assert_int_equal(rec.length, 7); /* ACD Ex xY: the blank left out */
    assert_int_equal(rec.first_invalid, 5);
    assert_int_equal(rec.invalid_byte, 'x');
    assert_int_equal(hmmrt_record_line_of(&rec, rec.first_invalid - 1), 3);
    assert_int_equal(rec.codes[0], 0);
    assert_int_equal(rec.codes[3], 3);
    assert_int_equal(rec.codes[4], 0xFF);
    assert_int_equal(rec.codes[5], 0xFF);
    assert_int_equal(rec.codes[6], 19); /* Y, after the bytes outside */
    hmmrt_record_release(&rec);
    assert_int_equal(hmmrt_reader_next(r, &rec, err, sizeof err), 1);
    assert_int_equal(rec.length, 2);
    assert_int_equal(rec.first_invalid, 0);
    assert_int_equal(rec.codes[1], 1);
    hmmrt_record_release(&rec);
    assert_int_equal(hmmrt_reader_next(r, &rec, err, sizeof err), 0);
    hmmrt_reader_close(r);
    unlink(path);
}

static void test_alphabet_too_large_is_refused(void **state)
{
    char big[200];
    for (int i = 0; i < 199; i++)
        big[i] = (char)(33 + i % 94);
    big[199] = '\0';
    const char *none = "/nonexistent";
    hmmrt_reader *r = hmmrt_reader_open(&none, 1);
    assert_int_equal(hmmrt_reader_map_to(r, big), -1);
    assert_null(hmmrt_reader_mapped_alphabet(r));
    hmmrt_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_pass_reads_as_two_passes),
        cmocka_unit_test(test_first_byte_outside_and_its_line),
        cmocka_unit_test(test_alphabet_too_large_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
