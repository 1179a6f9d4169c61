/* test_emit.c: unit tests of the emitter the backends share (emit.c):
 * indentation of lines and blocks, block comments and their wrapping, the
 * spelling of doubles as C literals (and that they read back), and C string
 * literals with their escapes. Output goes into an open_memstream. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "codegen/emit.h"

/* An emitter writing into memory. */
typedef struct Capture {
    Emitter e;
    char *text;
    size_t size;
} Capture;

static void capture_start(Capture *c, int indent)
{
    c->text = NULL;
    c->size = 0;
    c->e.out = open_memstream(&c->text, &c->size);
    assert_non_null(c->e.out);
    c->e.indent = indent;
}

/* Stops capturing; the text stays in c->text until capture_free. */
static const char *capture_stop(Capture *c)
{
    fclose(c->e.out);
    return c->text;
}

static void capture_free(Capture *c)
{
    free(c->text);
}

static void test_lines_blocks_and_indentation(void **state)
{
    Capture c;
    capture_start(&c, 0);
    emit_line(&c.e, "#include <%s>", "math.h");
    emit_blank(&c.e);
    emit_open(&c.e, "static int f(int %s)", "n");
    emit_line(&c.e, "int x = %d;", 42);
    emit_open(&c.e, "struct { int a; } s =");
    emit_line(&c.e, "%s", "1");
    emit_close(&c.e, ";");
    emit_open(&c.e, "if (n)");
    emit_blank(&c.e);
    emit_close(&c.e, "");
    emit_line(&c.e, "return x;");
    emit_close(&c.e, "");
    assert_int_equal(c.e.indent, 0);
    assert_string_equal(capture_stop(&c),
                        "#include <math.h>\n"
                        "\n"
                        "static int f(int n) {\n"
                        "    int x = 42;\n"
                        "    struct { int a; } s = {\n"
                        "        1\n"
                        "    };\n"
                        "    if (n) {\n"
                        "\n" /* a blank line has no trailing spaces */
                        "    }\n"
                        "    return x;\n"
                        "}\n");
    capture_free(&c);
}

static void test_short_comment_is_one_line(void **state)
{
    Capture c;
    capture_start(&c, 2);
    emit_comment(&c.e, "call %d: %s", 3, "viterbi(casino)");
    assert_string_equal(capture_stop(&c), "        /* call 3: viterbi(casino) */\n");
    capture_free(&c);
}

/* Splits text into lines (the newline dropped); returns the count. */
static int split_lines(char *text, char **lines, int max)
{
    int n = 0;
    for (char *p = text; *p && n < max;) {
        char *nl = strchr(p, '\n');
        assert_non_null(nl); /* every line ends in a newline */
        *nl = 0;
        lines[n++] = p;
        p = nl + 1;
    }
    return n;
}

/* Checks the layout of a wrapped comment at `indent` and returns its text
 * without the comment marks, lines joined by single spaces, in `joined`. */
static int check_comment_layout(char *output, int indent, char *joined, int *longest_text)
{
    char *lines[64];
    int n = split_lines(output, lines, 64);
    const int width = 96 - 4 * indent; /* what emit.c wraps the text at */
    joined[0] = 0;
    *longest_text = 0;
    for (int i = 0; i < n; i++) {
        char *line = lines[i];
        for (int k = 0; k < 4 * indent; k++)
            assert_int_equal(line[k], ' ');
        line += 4 * indent;
        const char *mark = i == 0 ? "/* " : " * ";
        assert_memory_equal(line, mark, 3);
        line += 3;
        size_t len = strlen(line);
        int last = i == n - 1;
        int closed = len >= 3 && strcmp(line + len - 3, " */") == 0;
        assert_int_equal(closed, last);
        if (closed)
            line[len -= 3] = 0;
        if ((int)len > *longest_text)
            *longest_text = (int)len;
        assert_true((int)len <= width);
        if (i)
            strcat(joined, " ");
        strcat(joined, line);
    }
    return n;
}

static void test_long_comment_wraps_at_the_width(void **state)
{
    /* 40 words of 7 letters and a space: 319 characters */
    char text[400] = "";
    for (int i = 0; i < 40; i++)
        sprintf(text + strlen(text), "%sword%03d", i ? " " : "", i);
    for (int indent = 0; indent <= 3; indent++) {
        Capture c;
        capture_start(&c, indent);
        emit_comment(&c.e, "%s", text);
        char joined[512];
        int longest;
        int n = check_comment_layout((char *)capture_stop(&c), indent, joined, &longest);
        assert_string_equal(joined, text);
        /* greedy: each full line takes as many 7-letter words as fit the width
         * w = 96 - 4 * indent: k words need 8k - 1 <= w, k = (w + 1) / 8 */
        int per_line = (96 - 4 * indent + 1) / 8;
        assert_int_equal(longest, 8 * per_line - 1);
        assert_int_equal(n, (40 + per_line - 1) / per_line);
        capture_free(&c);
    }
}

static void test_word_longer_than_the_width_is_cut(void **state)
{
    char text[300];
    memset(text, 'x', 250);
    text[250] = 0;
    Capture c;
    capture_start(&c, 0);
    emit_comment(&c.e, "%s", text);
    char joined[512];
    int longest;
    int n = check_comment_layout((char *)capture_stop(&c), 0, joined, &longest);
    /* 250 = 96 + 96 + 58, cut without a space to break at */
    assert_int_equal(n, 3);
    assert_int_equal(longest, 96);
    capture_free(&c);
}

/* A comment's text may hold a star followed by a slash (the name of a file in
 * a folder whose name ends in a star does); the comment must end only where
 * emit_comment ends it, or the generated C does not compile. */
static void test_comment_text_cannot_end_the_comment(void **state)
{
    Capture c;
    capture_start(&c, 0);
    emit_comment(&c.e, "generated from %s", "models*/casino.hmm");
    const char *out = capture_stop(&c);
    const char *end = strstr(out, "*/");
    assert_non_null(end);
    if (strcmp(end, "*/\n") != 0)
        fail_msg("the comment ends early: %s", out);
    capture_free(&c);
}

/* ---- doubles ---- */

static void assert_literal(double v, const char *expected)
{
    char buf[32];
    assert_string_equal(emit_double(buf, v), expected);
}

/* The literal is a whole C double literal that reads back as v exactly, and
 * one digit fewer would not. */
static void assert_reads_back(double v)
{
    char buf[32];
    const char *s = emit_double(buf, v);
    char *end;
    double back = strtod(s, &end);
    assert_int_equal(*end, 0);
    assert_true(strpbrk(s, ".eE") != NULL); /* a double, never an int literal */
    if (back != v)
        fail_msg("%s reads back as %.17g, not %.17g", s, back, v);
    /* its significant digits: those of the mantissa less leading zeros and
     * the ".0" that marks a double */
    char mantissa[32];
    snprintf(mantissa, sizeof mantissa, "%.*s", (int)strcspn(s, "eE"), s);
    size_t len = strlen(mantissa);
    if (len > 2 && strcmp(mantissa + len - 2, ".0") == 0)
        mantissa[len - 2] = 0;
    int digits = 0, leading = 1;
    for (const char *c = mantissa; *c; c++) {
        if (*c >= '1' && *c <= '9')
            leading = 0;
        digits += *c >= '0' && *c <= '9' && !leading;
    }
    char shorter[400];
    if (digits > 1) { /* one digit fewer never reads back */
        snprintf(shorter, sizeof shorter, "%.*g", digits - 1, v);
        if (strtod(shorter, NULL) == v)
            fail_msg("%s is longer than %s, which reads back too", s, shorter);
    }
}

static void test_double_literals(void **state)
{
    assert_literal(0.95, "0.95");
    assert_literal(nextafter(0.95, 0), "0.9499999999999998"); /* not 0.95: it reads back */
    assert_literal(1.0 / 3, "0.3333333333333333");
    assert_literal(0.1 + 0.2, "0.30000000000000004");
    assert_literal(1, "1.0");
    assert_literal(0, "0.0");
    assert_literal(-0.5, "-0.5");
    assert_literal(2.5, "2.5");
    assert_literal(1e-300, "1e-300");
    assert_literal(1e21, "1e+21");
    assert_reads_back(100); /* spelled 1e+02, the shortest %g form */
    assert_literal(-INFINITY, "-INFINITY");
    assert_literal(INFINITY, "INFINITY");
}

static void test_doubles_read_back(void **state)
{
    const double values[] = {1.0 / 3, 2.0 / 3, 1.0 / 6, 0.97999, 1e-5, 1e-300, 4.9e-324,
                             1.7976931348623157e308, -1.0 / 7, 123456789.123456789,
                             0.6931471805599453, 1e-15, 1 + 1e-15};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        assert_reads_back(values[i]);
    /* and a spread of values as a model's weights would give them */
    unsigned long long x = 88172645463325252ull;
    for (int i = 0; i < 10000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        double u = (double)(x >> 11) / 9007199254740992.0; /* [0, 1) */
        assert_reads_back(exp(-40 * u));
    }
    /* and random doubles of every exponent, subnormals included: any bit
     * pattern that is a finite number */
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v;
        memcpy(&v, &x, sizeof v);
        if (isfinite(v))
            assert_reads_back(v);
    }
}

/* ---- strings ---- */

/* Decodes a C string literal using only \", \\ and three-digit octal escapes,
 * which is what emit_string writes; fails on anything else. */
static void decode_literal(const char *lit, char *out)
{
    size_t n = strlen(lit);
    assert_true(n >= 2 && lit[0] == '"' && lit[n - 1] == '"');
    const char *p = lit + 1, *end = lit + n - 1;
    while (p < end) {
        unsigned char ch = (unsigned char)*p;
        assert_true(ch >= 32 && ch < 127); /* the literal itself is plain ASCII */
        if (ch == '"')
            fail_msg("unescaped quote in %s", lit);
        if (ch != '\\') {
            *out++ = *p++;
            continue;
        }
        p++;
        if (*p == '"' || *p == '\\') {
            *out++ = *p++;
        } else if (p[0] >= '0' && p[0] <= '7' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' &&
                   p[2] <= '7') {
            *out++ = (char)((p[0] - '0') * 64 + (p[1] - '0') * 8 + (p[2] - '0'));
            p += 3;
        } else {
            fail_msg("unexpected escape in %s", lit);
        }
    }
    *out = 0;
}

static void assert_string_round_trip(const char *s)
{
    char back[256];
    decode_literal(emit_string(s), back);
    assert_string_equal(back, s);
}

static void test_string_literals(void **state)
{
    assert_string_equal(emit_string("casino"), "\"casino\"");
    assert_string_equal(emit_string(""), "\"\"");
    assert_string_equal(emit_string("say \"hi\""), "\"say \\\"hi\\\"\"");
    assert_string_equal(emit_string("a\\b"), "\"a\\\\b\"");
    assert_string_equal(emit_string("tab\there"), "\"tab\\011here\"");
    assert_string_equal(emit_string("line\n"), "\"line\\012\"");
    assert_string_equal(emit_string("\x7f"), "\"\\177\"");
    assert_string_equal(emit_string("caf\xc3\xa9"), "\"caf\\303\\251\"");
    /* an octal escape is always three digits, so a digit after it stays a digit */
    assert_string_equal(emit_string("\x01" "2"), "\"\\0012\"");
    const char *samples[] = {"forward(casino).score", "a\"b\\c\"", "\x01\x1f ~\x7f\x80\xff",
                             "models/casino.hmm", "'*'"};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
        assert_string_round_trip(samples[i]);
}

/* A literal of any length: 10 KB of text, a quarter of it escaped (no cut
 * at a buffer's end), and the next call reuses the buffer. */
static void test_long_string_literal(void **state)
{
    enum { N = 10 * 1024 };
    char *s = malloc(N + 1), *back = malloc(4 * N + 3);
    assert_non_null(s);
    assert_non_null(back);
    for (int i = 0; i < N; i++)
        s[i] = i % 4 == 3 ? (i % 8 == 3 ? '"' : '\n') : (char)('a' + i % 26);
    s[N] = 0;
    const char *lit = emit_string(s);
    assert_int_equal(strlen(lit), N + N / 4 + N / 8 * 2 + 2); /* \" 2 bytes, \012 4 */
    decode_literal(lit, back);
    assert_string_equal(back, s);
    assert_string_equal(emit_string("short"), "\"short\"");
    free(s);
    free(back);
}

/* ---- wrapping ---- */

static char *wrapped(const char *text)
{
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&out, &size);
    assert_non_null(f);
    assert_int_equal(emit_wrap(f, text, strlen(text)), 0);
    fclose(f);
    return out;
}

/* text less its white space */
static void squeeze(const char *text, char *out)
{
    for (; *text; text++)
        if (*text != ' ' && *text != '\n')
            *out++ = *text;
    *out = 0;
}

static void test_long_tables_wrap(void **state)
{
    /* short lines, however many values, stay as they are */
    const char *small = "static const int a[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};\n";
    char *out = wrapped(small);
    assert_string_equal(out, small);
    free(out);
    /* a long table: 8 values a line, then the rest one level deeper */
    char text[4096], line[64];
    strcpy(text, "    static const int t[20] = {");
    for (int i = 0; i < 20; i++) {
        snprintf(line, sizeof line, "%s%d", i ? ", " : "", 1000000 + i);
        strcat(text, line);
    }
    strcat(text, "};\nint x;\n");
    out = wrapped(text);
    assert_string_equal(out,
        "    static const int t[20] = {1000000, 1000001, 1000002, 1000003, 1000004, 1000005, "
        "1000006, 1000007,\n"
        "        1000008, 1000009, 1000010, 1000011, 1000012, 1000013, 1000014, 1000015,\n"
        "        1000016, 1000017, 1000018, 1000019};\nint x;\n");
    free(out);
}

static void test_wrap_changes_only_white_space(void **state)
{
    /* commas and pluses in strings, characters and comments, in calls, in
     * preprocessor lines (continued with a backslash) and after a comment
     * that spans lines are not breaks */
    char text[16384] = "", *at = text;
    const char *pieces[] = {
        "/* a comment over lines, , , , , , , , , , , , , , , , , , , , , , , , , , , , ,\n",
        " , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , */ ",
        "const char *s[] = {\"a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u\", ",
        "\"\\\\\\\", \\\\\\\", \", ',', ' ', '+', '\\'', /* x, y + z, w, v, u, t, s, r, q, p, o */ ",
        "f(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 1, 2, 3, 4, ",
        "5, 6, 7, 8, 9, 10, 11, 12}; // a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s\n",
        "#define LIST 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, \\\n",
        "    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, ",
        "44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65\n",
        "double y = a + b + c + d + e + f + g + h + i + j + k + l + m + n + o + p + q + r + s + t + ",
        "u + v + w + x + y + z + a + b + c + d + e + f + g + h + i + j + k + l + m + n + o + p;\n"};
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++)
        at += sprintf(at, "%s", pieces[i]);
    char *out = wrapped(text), a[16384], b[16384];
    squeeze(text, a);
    squeeze(out, b);
    assert_string_equal(a, b);
    /* the comment, the strings and the directive are whole */
    assert_non_null(strstr(out, pieces[0]));
    assert_non_null(strstr(out, pieces[1]));
    assert_non_null(strstr(out, pieces[2]));
    assert_non_null(strstr(out, pieces[3]));
    assert_non_null(strstr(out, pieces[6]));
    assert_non_null(strstr(out, pieces[7]));
    assert_non_null(strstr(out, pieces[8]));
    /* the table after the call breaks (its line starts with a space: five
     * spaces go before the rest), the call does not; the sum does */
    assert_non_null(strstr(out, "f(1, 2, 3, 4, 5, 6, 7, 8, 9,"));
    assert_non_null(strstr(out, "19, 20), 1,\n     2, 3, 4, 5, 6, 7, 8, 9,\n     10, 11, 12}; //"));
    assert_non_null(strstr(out, " + h +\n    i + j"));
    free(out);
}

/* The generated C is compiled with -std=c11, where "??=" in a string literal
 * is a trigraph for '#' (and "??/" for a backslash): a string holding two
 * question marks in a row must not come out as a trigraph. */
static void test_string_literal_has_no_trigraphs(void **state)
{
    const char *lit = emit_string("what?\?=.hmm"); /* \? keeps this file free of trigraphs */
    if (strstr(lit, "??"))
        fail_msg("%s holds a trigraph", lit);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_blocks_and_indentation),
        cmocka_unit_test(test_short_comment_is_one_line),
        cmocka_unit_test(test_long_comment_wraps_at_the_width),
        cmocka_unit_test(test_word_longer_than_the_width_is_cut),
        cmocka_unit_test(test_comment_text_cannot_end_the_comment),
        cmocka_unit_test(test_double_literals),
        cmocka_unit_test(test_doubles_read_back),
        cmocka_unit_test(test_string_literals),
        cmocka_unit_test(test_string_literal_has_no_trigraphs),
        cmocka_unit_test(test_long_string_literal),
        cmocka_unit_test(test_long_tables_wrap),
        cmocka_unit_test(test_wrap_changes_only_white_space),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
