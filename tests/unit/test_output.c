/* test_output.c: unit tests of the runtime's output side: hmmrt_buf, score
 * formatting (decimals, -inf, negative zero), scratch memory, the checked
 * writer of the output table and the way messages show symbols. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#include "internal.h"

/* ---- hmmrt_buf ------------------------------------------------------------ */

static void test_buf_appends_and_resets(void **state)
{
    hmmrt_buf b = {0};
    hmmrt_buf_puts(&b, "start");
    hmmrt_buf_putc(&b, ' ');
    for (int i = 0; i < 100; i++) /* several growths */
        hmmrt_buf_puts(&b, "fair");
    assert_int_equal(b.len, 6 + 400);
    assert_int_equal(strlen(b.data), b.len);
    assert_memory_equal(b.data, "start fairfair", 14);
    assert_true(b.cap > b.len);
    char *memory = b.data;
    hmmrt_buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_ptr_equal(b.data, memory); /* keeps the memory */
    hmmrt_buf_puts(&b, "end");
    assert_string_equal(b.data, "end");
    assert_int_equal(hmmrt_buf_take_failure(), 0);
    hmmrt_buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.cap, 0);
}

/* ---- scores --------------------------------------------------------------- */

static char *score_text(double score)
{
    static hmmrt_buf b;
    hmmrt_buf_reset(&b);
    hmmrt_buf_score(&b, score);
    return b.data;
}

static int restore_decimals(void **state)
{
    hmmrt_set_decimals(6);
    return 0;
}

static void test_score_default_six_decimals(void **state)
{
    assert_string_equal(score_text(-12.3456789), "-12.345679");
    assert_string_equal(score_text(0.5), "0.500000");
    assert_string_equal(score_text(-1e-3), "-0.001000");
    assert_string_equal(score_text(-1234567.0), "-1234567.000000");
}

static void test_score_impossible_and_odd_values(void **state)
{
    assert_string_equal(score_text(-INFINITY), "-inf");
    assert_string_equal(score_text(INFINITY), "inf");
    assert_string_equal(score_text(NAN), "nan");
    assert_string_equal(score_text(-NAN), "nan");
}

static void test_score_negative_zero(void **state)
{
    assert_string_equal(score_text(-0.0), "0.000000");
    assert_string_equal(score_text(-4e-9), "0.000000"); /* rounds to zero */
    assert_string_equal(score_text(0.0), "0.000000");
    hmmrt_set_decimals(0);
    assert_string_equal(score_text(-0.2), "0");
    assert_string_equal(score_text(-0.7), "-1");
}

static void test_score_decimals(void **state)
{
    hmmrt_set_decimals(2);
    assert_string_equal(score_text(-3.14159), "-3.14");
    hmmrt_set_decimals(0);
    assert_string_equal(score_text(-3.14159), "-3");
    hmmrt_set_decimals(17);
    assert_string_equal(score_text(0.25), "0.25000000000000000");
    hmmrt_set_decimals(99); /* clamped */
    assert_string_equal(score_text(0.25), "0.25000000000000000");
    char text[HMMRT_SCORE_MAX];
    size_t n = hmmrt_format_score(text, -1.7976931348623157e308);
    assert_int_equal(n, strlen(text));
    assert_int_equal(n, 1 + 309 + 1 + 17);
}

static void test_score_appends(void **state)
{
    hmmrt_buf b = {0};
    hmmrt_buf_puts(&b, "x=");
    hmmrt_buf_score(&b, -2.5);
    hmmrt_buf_putc(&b, ',');
    hmmrt_buf_score(&b, -INFINITY);
    assert_string_equal(b.data, "x=-2.500000,-inf");
    hmmrt_buf_free(&b);
}

/* ---- scratch -------------------------------------------------------------- */

static void test_scratch_aligned_and_reused(void **state)
{
    hmmrt_scratch s = {0};
    char *a = hmmrt_scratch_get(&s, 100);
    assert_non_null(a);
    assert_int_equal((uintptr_t)a % 64, 0);
    assert_true(s.size >= 100);
    memset(a, 1, 100);
    assert_ptr_equal(hmmrt_scratch_get(&s, 50), a);
    assert_ptr_equal(hmmrt_scratch_get(&s, s.size), a);
    hmmrt_scratch_free(&s);
    assert_null(s.mem);
    assert_int_equal(s.size, 0);
}

static void test_scratch_grows_by_doubling(void **state)
{
    hmmrt_scratch s = {0};
    assert_non_null(hmmrt_scratch_get(&s, 1000));
    size_t first = s.size;
    void *b = hmmrt_scratch_get(&s, first + 1);
    assert_non_null(b);
    assert_int_equal((uintptr_t)b % 64, 0);
    assert_int_equal(s.size, 2 * first);
    void *c = hmmrt_scratch_get(&s, 10 * first + 3); /* more than double: exactly enough */
    assert_non_null(c);
    assert_int_equal((uintptr_t)c % 64, 0);
    assert_true(s.size >= 10 * first + 3 && s.size < 10 * first + 3 + 64);
    memset(c, 0, s.size);
    hmmrt_scratch_free(&s);
}

static void test_scratch_zero_bytes_and_failure(void **state)
{
    hmmrt_scratch s = {0};
    assert_non_null(hmmrt_scratch_get(&s, 0));
    assert_null(hmmrt_scratch_get(&s, SIZE_MAX - 8));
    assert_null(hmmrt_scratch_get(&s, SIZE_MAX / 2)); /* too much for any machine */
    assert_non_null(hmmrt_scratch_get(&s, 64));       /* usable again after a failure */
    hmmrt_scratch_free(&s);
}

/* ---- the output writer ---------------------------------------------------- */

static char *read_whole(int fd)
{
    static char text[1 << 16];
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, text, sizeof text - 1);
    assert_true(n >= 0);
    text[n] = '\0';
    return text;
}

static int temp_fd(void)
{
    char path[] = "/tmp/test_output_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    return fd;
}

static const hmmrt_column table_columns[] = {
    {"forward(casino).score", HMMRT_FIELD_SCORE, NULL, 0, 0},
    {"viterbi(casino).traceback", HMMRT_FIELD_TEXT, NULL, 0, 0},
    {"forward(casino).score&", HMMRT_FIELD_TEXT, "positions separated by ';', states by ','", 0, 0},
};
static const hmmrt_program table_program = {.name = "casino", .n_columns = 3,
                                            .columns = table_columns};

static void write_row(hmmrt_out *o, const char *name, const hmmrt_value *values)
{
    hmmrt_buf row = {0};
    hmmrt_buf_puts(&row, "left over"); /* rows are appended */
    hmmrt_buf_reset(&row);
    hmmrt_format_row(&row, &table_program, name, values);
    hmmrt_out_write(o, row.data, row.len);
    hmmrt_buf_free(&row);
}

static void test_table_header_and_rows(void **state)
{
    int fd = temp_fd();
    hmmrt_out o;
    assert_int_equal(hmmrt_out_open(&o, fd, 16), 0); /* small: rows cross blocks */
    hmmrt_out_header(&o, &table_program);
    hmmrt_value values[3];
    memset(values, 0, sizeof values);
    values[0].score = -1.5;
    hmmrt_buf_puts(&values[1].text, "start fair end");
    hmmrt_buf_puts(&values[2].text, "0,-inf;-1,-2");
    write_row(&o, "seq1", values);
    values[0].score = -INFINITY;
    hmmrt_buf_reset(&values[1].text);
    write_row(&o, "seq2", values);
    hmmrt_out_incomplete(&o, "sequence seq3 (x.fa line 5)");
    assert_int_equal(hmmrt_out_flush(&o), 0);
    assert_string_equal(read_whole(fd),
                        "# forward(casino).score&: positions separated by ';', states by ','\n"
                        "#name\tforward(casino).score\tviterbi(casino).traceback\t"
                        "forward(casino).score&\n"
                        "seq1\t-1.500000\tstart fair end\t0,-inf;-1,-2\n"
                        "seq2\t-inf\t\t0,-inf;-1,-2\n"
                        "# incomplete: stopped at sequence seq3 (x.fa line 5)\n");
    hmmrt_out_close(&o);
    hmmrt_buf_free(&values[1].text);
    hmmrt_buf_free(&values[2].text);
    close(fd);
}

static void test_writer_reports_full_disk(void **state)
{
    int fd = open("/dev/full", O_WRONLY);
    if (fd < 0)
        skip();
    hmmrt_out o;
    assert_int_equal(hmmrt_out_open(&o, fd, 1024), 0);
    hmmrt_out_puts(&o, "a row\n");
    assert_int_equal(o.error, 0); /* still in the buffer */
    assert_int_equal(hmmrt_out_flush(&o), -1);
    assert_int_equal(o.error, ENOSPC);
    hmmrt_out_puts(&o, "more\n"); /* ignored after the failure */
    assert_int_equal(hmmrt_out_flush(&o), -1);
    hmmrt_out_close(&o);
    close(fd);
}

static void test_writer_passes_large_fields_through(void **state)
{
    int fd = temp_fd();
    hmmrt_out o;
    assert_int_equal(hmmrt_out_open(&o, fd, 8), 0);
    hmmrt_out_puts(&o, "ab");
    hmmrt_out_puts(&o, "0123456789abcdef");
    hmmrt_out_puts(&o, "z");
    assert_int_equal(hmmrt_out_flush(&o), 0);
    assert_string_equal(read_whole(fd), "ab0123456789abcdefz");
    hmmrt_out_close(&o);
    close(fd);
}

/* ---- symbols in messages -------------------------------------------------- */

static void test_symbols_in_messages(void **state)
{
    char shown[8];
    hmmrt_describe_byte(shown, 'X');
    assert_string_equal(shown, "X");
    hmmrt_describe_byte(shown, '\t');
    assert_string_equal(shown, "\\x09");
    hmmrt_describe_byte(shown, 0xC3);
    assert_string_equal(shown, "\\xC3");
    hmmrt_buf b = {0};
    hmmrt_describe_alphabet(&b, "AC\x01");
    assert_string_equal(b.data, "[A, C, \\x01]");
    hmmrt_buf_free(&b);
}


/* printf's text of x with d decimals, without the sign of a zero. */
static void printf_text(char *out, size_t cap, double x, int d)
{
    snprintf(out, cap, "%.*f", d, x);
    int zero = out[0] == '-';
    for (const char *p = out + 1; zero && *p; p++)
        zero = *p == '0' || *p == '.';
    if (zero)
        memmove(out, out + 1, strlen(out));
}

static void expect_printf_bytes(double x, int d)
{
    char fast[64], slow[400];
    int n = hmmrt_fixed_text(fast, x, d);
    printf_text(slow, sizeof slow, x, d);
    if (n < 0) { /* only beyond 2^52 / 10^d */
        assert_true(fabs(x) * pow(10, d) >= 4503599627370496.0);
        return;
    }
    if (strcmp(fast, slow) != 0)
        fail_msg("%.17g with %d decimals: '%s', printf '%s'", x, d, fast, slow);
    assert_int_equal(n, strlen(slow));
}

/* The fast fixed-point text against printf: random values over every
 * magnitude, exact ties (odd multiples of 2^-k, which round to even), the
 * doubles either side of a decimal half, negative values and zeros. */
static void test_fixed_text_is_printf(void **state)
{
    (void)state;
    uint64_t seed = 88172645463325252u;
    for (int i = 0; i < 400000; i++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        int d = (int)(seed % 10);
        double mant = (double)(seed >> 11) / 9007199254740992.0; /* [0, 1) */
        int exp = (int)((seed >> 3) % 80) - 40;
        double x = ldexp(mant, exp) * ((seed >> 2) & 1 ? -1 : 1);
        expect_printf_bytes(x, d);
        double half = (floor(x * pow(10, d)) + 0.5) / pow(10, d); /* near a half */
        expect_printf_bytes(half, d);
        expect_printf_bytes(nextafter(half, INFINITY), d);
        expect_printf_bytes(nextafter(half, -INFINITY), d);
    }
    for (int k = 1; k <= 30; k++) /* odd multiples of 2^-k: exact ties at some d */
        for (int m = 1; m < 400; m += 2)
            for (int d = 0; d <= 9; d++) {
                expect_printf_bytes(ldexp(m, -k), d);
                expect_printf_bytes(-ldexp(m, -k), d);
            }
    double odd[] = {0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 1e-300, -1e-300, 4503599627.3705, 1e15, -1e15,
                    123456.0000005, -98.7654325, 0.0078125, -0.0078125};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        for (int d = 0; d <= 9; d++)
            expect_printf_bytes(odd[i], d);
    char text[64];
    assert_int_equal(hmmrt_fixed_text(text, NAN, 6), -1);
    assert_int_equal(hmmrt_fixed_text(text, -INFINITY, 6), -1);
    assert_int_equal(hmmrt_fixed_text(text, 1.0, 10), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_appends_and_resets),
        cmocka_unit_test(test_fixed_text_is_printf),
        cmocka_unit_test_teardown(test_score_default_six_decimals, restore_decimals),
        cmocka_unit_test_teardown(test_score_impossible_and_odd_values, restore_decimals),
        cmocka_unit_test_teardown(test_score_negative_zero, restore_decimals),
        cmocka_unit_test_teardown(test_score_decimals, restore_decimals),
        cmocka_unit_test_teardown(test_score_appends, restore_decimals),
        cmocka_unit_test(test_scratch_aligned_and_reused),
        cmocka_unit_test(test_scratch_grows_by_doubling),
        cmocka_unit_test(test_scratch_zero_bytes_and_failure),
        cmocka_unit_test(test_table_header_and_rows),
        cmocka_unit_test(test_writer_reports_full_disk),
        cmocka_unit_test(test_writer_passes_large_fields_through),
        cmocka_unit_test(test_symbols_in_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
