/* test_diag.c: unit tests of diag.c: the exact text of errors, warnings,
 * notes and fatal errors (header, source line, caret and span), and the
 * error and warning counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/arena.h"
#include "support/diag.h"

#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

/* A Diag writing into memory, over a given source text. */
typedef struct Capture {
    Diag diag;
    FILE *stream;
    char *text;
    size_t size;
} Capture;

static void capture_start(Capture *c, const char *src, size_t len)
{
    c->text = NULL;
    c->size = 0;
    c->stream = open_memstream(&c->text, &c->size);
    assert_non_null(c->stream);
    diag_init(&c->diag, "t.hmm", src, len, c->stream);
}

/* Stops capturing and checks what was written. */
static void capture_expect(Capture *c, const char *expected)
{
    fclose(c->stream);
    assert_string_equal(c->text, expected);
    free(c->text);
}

static Loc span(int line, int first_column, int last_column)
{
    return (Loc){line, first_column, line, last_column};
}

static void test_error_with_span(void **state)
{
    const char *src = "hmm casino {\n    fiar -> loaded 0.05;\n}\n";
    Capture c;
    capture_start(&c, src, strlen(src));
    diag_error(&c.diag, span(2, 5, 8), "unknown state '%s'", "fiar");
    assert_int_equal(c.diag.errors, 1);
    assert_int_equal(c.diag.warnings, 0);
    capture_expect(&c, "t.hmm:2:5: error: unknown state 'fiar'\n"
                       "    2 |     fiar -> loaded 0.05;\n"
                       "      |     ^~~~\n");
}

static void test_single_column_has_no_tildes(void **state)
{
    const char *src = "a;\n";
    Capture c;
    capture_start(&c, src, strlen(src));
    diag_error(&c.diag, span(1, 2, 2), "here");
    capture_expect(&c, "t.hmm:1:2: error: here\n"
                       "    1 | a;\n"
                       "      |  ^\n");
}

static void test_tabs_are_copied_into_caret_line(void **state)
{
    const char *src = "\t\tstate\tx y;\n";
    Capture c;
    capture_start(&c, src, strlen(src));
    diag_error(&c.diag, span(1, 11, 11), "oops");
    capture_expect(&c, "t.hmm:1:11: error: oops\n"
                       "    1 | \t\tstate\tx y;\n"
                       "      | \t\t     \t  ^\n");
}

static void test_warning_and_note(void **state)
{
    const char *src = "x\ny\n";
    Capture c;
    capture_start(&c, src, strlen(src));
    diag_warning(&c.diag, span(2, 1, 1), "unused '%s'", "y");
    diag_note(&c.diag, span(1, 1, 1), "declared here");
    assert_int_equal(c.diag.errors, 0);
    assert_int_equal(c.diag.warnings, 1);
    capture_expect(&c, "t.hmm:2:1: warning: unused 'y'\n"
                       "    2 | y\n"
                       "      | ^\n"
                       "t.hmm:1:1: note: declared here\n"
                       "    1 | x\n"
                       "      | ^\n");
}

static void test_line_zero_has_no_excerpt(void **state)
{
    const char *src = "x\n";
    Capture c;
    capture_start(&c, src, strlen(src));
    diag_error(&c.diag, (Loc){0}, "no main block");
    assert_int_equal(c.diag.errors, 1);
    capture_expect(&c, "t.hmm: error: no main block\n");
}

static void test_fatal(void **state)
{
    Capture c;
    capture_start(&c, NULL, 0);
    diag_fatal(&c.diag, "cannot open '%s'", "x.hmm");
    assert_int_equal(c.diag.errors, 1);
    capture_expect(&c, "hmmc: error: cannot open 'x.hmm'\n");
}

static void test_multi_line_span_gets_caret_only(void **state)
{
    const char *src = "hmm a {\n}\n";
    Capture c;
    capture_start(&c, src, strlen(src));
    diag_error(&c.diag, (Loc){1, 1, 2, 1}, "model");
    capture_expect(&c, "t.hmm:1:1: error: model\n"
                       "    1 | hmm a {\n"
                       "      | ^\n");
}

static void test_non_printable_bytes_shown_as_question_marks(void **state)
{
    const char src[] = "a\0b\x01\xc3\xa9;\n";
    Capture c;
    capture_start(&c, src, sizeof src - 1);
    diag_error(&c.diag, span(1, 7, 7), "x");
    capture_expect(&c, "t.hmm:1:7: error: x\n"
                       "    1 | a?b???;\n"
                       "      |       ^\n");
}

static void test_crlf_line_end_is_not_shown(void **state)
{
    const char *src = "a b\r\nc\r\n";
    Capture c;
    capture_start(&c, src, strlen(src));
    diag_error(&c.diag, span(1, 3, 3), "x");
    capture_expect(&c, "t.hmm:1:3: error: x\n"
                       "    1 | a b\n"
                       "      |   ^\n");
}

static void test_span_is_clipped_at_line_end(void **state)
{
    const char *src = "abc\n";
    Capture c;
    capture_start(&c, src, strlen(src));
    diag_error(&c.diag, span(1, 2, 40), "x");
    capture_expect(&c, "t.hmm:1:2: error: x\n"
                       "    1 | abc\n"
                       "      |  ^~\n");
}

static void test_caret_after_last_byte(void **state)
{
    const char *src = "ab";
    Capture c;
    capture_start(&c, src, strlen(src));
    diag_error(&c.diag, span(1, 3, 3), "end");
    capture_expect(&c, "t.hmm:1:3: error: end\n"
                       "    1 | ab\n"
                       "      |   ^\n");
}

static void test_last_line_without_newline_and_missing_line(void **state)
{
    const char *src = "a\nbcd";
    Capture c;
    capture_start(&c, src, strlen(src));
    diag_error(&c.diag, span(2, 2, 3), "x");
    diag_error(&c.diag, span(7, 1, 1), "beyond");
    assert_int_equal(c.diag.errors, 2);
    capture_expect(&c, "t.hmm:2:2: error: x\n"
                       "    2 | bcd\n"
                       "      |  ^~\n"
                       "t.hmm:7:1: error: beyond\n");
}

static void test_wide_line_numbers_widen_the_margin(void **state)
{
    enum { LINES = 123456 };
    char *src = malloc(LINES + 2);
    memset(src, '\n', LINES);
    src[LINES - 1] = 'z';
    src[LINES] = '\n';
    Capture c;
    capture_start(&c, src, LINES + 1);
    diag_error(&c.diag, span(LINES, 1, 1), "far");
    capture_expect(&c, "t.hmm:123456:1: error: far\n"
                       "123456 | z\n"
                       "       | ^\n");
    free(src);
}

static void test_counts_accumulate(void **state)
{
    const char *src = "x\n";
    Capture c;
    capture_start(&c, src, strlen(src));
    diag_error(&c.diag, span(1, 1, 1), "one");
    diag_error(&c.diag, span(1, 1, 1), "two");
    diag_warning(&c.diag, span(1, 1, 1), "three");
    diag_note(&c.diag, span(1, 1, 1), "not counted");
    assert_int_equal(c.diag.errors, 2);
    assert_int_equal(c.diag.warnings, 1);
    fclose(c.stream);
    free(c.text);
}

/* ---- out of memory: one message, one status ---- */

static void hook_says_so(void) { fputs("hook ran\n", stderr); }

/* Runs the failing allocation in a child whose standard error is a pipe;
 * returns its exit status and what it printed. */
static int run_out_of_memory(int which, char *printed, size_t size)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        fatal_out_of_memory_hook(hook_says_so);
        if (which == 0) {
            Arena a;
            arena_init(&a);
            arena_alloc(&a, SIZE_MAX - 8); /* more than any block can hold */
        } else {
            fatal_out_of_memory();
        }
        _exit(99); /* not reached */
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t got;
    while (n + 1 < size && (got = read(fds[0], printed + n, size - 1 - n)) > 0)
        n += (size_t)got;
    printed[n] = 0;
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_out_of_memory_is_status_3(void **state)
{
    char printed[256];
    for (int which = 0; which < 2; which++) {
        assert_int_equal(run_out_of_memory(which, printed, sizeof printed), 3);
        assert_int_equal(HMMC_EXIT_OUT_OF_MEMORY, 3); /* hmmc --help: 3 the build failed */
        assert_string_equal(printed, "hmmc: out of memory\nhook ran\n");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_with_span),
        cmocka_unit_test(test_single_column_has_no_tildes),
        cmocka_unit_test(test_tabs_are_copied_into_caret_line),
        cmocka_unit_test(test_warning_and_note),
        cmocka_unit_test(test_line_zero_has_no_excerpt),
        cmocka_unit_test(test_fatal),
        cmocka_unit_test(test_multi_line_span_gets_caret_only),
        cmocka_unit_test(test_non_printable_bytes_shown_as_question_marks),
        cmocka_unit_test(test_crlf_line_end_is_not_shown),
        cmocka_unit_test(test_span_is_clipped_at_line_end),
        cmocka_unit_test(test_caret_after_last_byte),
        cmocka_unit_test(test_last_line_without_newline_and_missing_line),
        cmocka_unit_test(test_wide_line_numbers_widen_the_margin),
        cmocka_unit_test(test_counts_accumulate),
        cmocka_unit_test(test_out_of_memory_is_status_3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
