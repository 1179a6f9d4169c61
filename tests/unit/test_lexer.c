/* test_lexer.c: unit tests of the flex scanner (grammar/lexer.l): every
 * token kind, numbers in all their forms, comments, quoted symbols, the
 * line:column spans of tokens, and the exact text of lexical errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "support/arena.h"
#include "support/diag.h"
#include "parser.h"
#include "lexer.h"

/* A scanner over a test string, with its diagnostics kept in memory. */
typedef struct Lexer {
    Arena arena;
    Diag diag;
    FILE *stream;
    char *messages;
    size_t size;
    ParseContext pc;
    yyscan_t scanner;
    YY_BUFFER_STATE buffer;
} Lexer;

typedef struct Lexed {
    int kind;
    Loc loc;
    YYSTYPE value;
} Lexed;

static void lexer_open(Lexer *lx, const char *src, size_t len)
{
    arena_init(&lx->arena);
    lx->messages = NULL;
    lx->size = 0;
    lx->stream = open_memstream(&lx->messages, &lx->size);
    assert_non_null(lx->stream);
    diag_init(&lx->diag, "t.hmm", src, len, lx->stream);
    lx->pc = (ParseContext){.arena = &lx->arena, .diag = &lx->diag, .line = 1, .column = 1};
    assert_int_equal(yylex_init_extra(&lx->pc, &lx->scanner), 0);
    lx->buffer = yy_scan_bytes(src, (int)len, lx->scanner);
}

static Lexed lexer_next(Lexer *lx)
{
    Lexed t;
    memset(&t, 0, sizeof t);
    t.kind = yylex(&t.value, &t.loc, lx->scanner);
    return t;
}

/* Everything reported so far. */
static const char *lexer_messages(Lexer *lx)
{
    fflush(lx->stream);
    return lx->messages ? lx->messages : "";
}

static void lexer_close(Lexer *lx)
{
    yy_delete_buffer(lx->buffer, lx->scanner);
    yylex_destroy(lx->scanner);
    fclose(lx->stream);
    free(lx->messages);
    arena_free(&lx->arena);
}

/* Scans src (a C string) and checks the kinds of all its tokens, then that
 * the input ends and nothing was reported. */
static void expect_kinds(const char *src, const int *kinds, int n)
{
    Lexer lx;
    lexer_open(&lx, src, strlen(src));
    for (int i = 0; i < n; i++)
        assert_int_equal(lexer_next(&lx).kind, kinds[i]);
    assert_int_equal(lexer_next(&lx).kind, TOK_YYEOF);
    assert_string_equal(lexer_messages(&lx), "");
    assert_int_equal(lx.diag.errors, 0);
    lexer_close(&lx);
}

static void assert_loc(Loc loc, int first_line, int first_column, int last_line, int last_column)
{
    assert_int_equal(loc.first_line, first_line);
    assert_int_equal(loc.first_column, first_column);
    assert_int_equal(loc.last_line, last_line);
    assert_int_equal(loc.last_column, last_column);
}

static void test_keywords(void **state)
{
    const int kinds[] = {TOK_HMM, TOK_ALPHABET, TOK_STARTSTATE, TOK_STATE, TOK_ENDSTATE,
                         TOK_EMITS, TOK_EMISSION, TOK_MAIN, TOK_NEW, TOK_PRINT};
    expect_kinds("hmm alphabet startstate state endstate emits emission main new print", kinds, 10);
}

static void test_identifiers(void **state)
{
    const char *src = "a x1 fair_2 hmmx states Main forward";
    const char *names[] = {"a", "x1", "fair_2", "hmmx", "states", "Main", "forward"};
    Lexer lx;
    lexer_open(&lx, src, strlen(src));
    for (int i = 0; i < 7; i++) {
        Lexed t = lexer_next(&lx);
        assert_int_equal(t.kind, TOK_IDENT);
        assert_string_equal(t.value.ident.name, names[i]);
        assert_memory_equal(&t.value.ident.loc, &t.loc, sizeof(Loc));
    }
    assert_int_equal(lexer_next(&lx).kind, TOK_YYEOF);
    lexer_close(&lx);
}

static void test_punctuation(void **state)
{
    const int kinds[] = {'{', '}', '[', ']', '(', ')', ';', ',', ':', '.', '=', TOK_ARROW, '/', '&', '-'};
    expect_kinds("{ } [ ] ( ) ; , : . = -> / & -", kinds, 15);
}

static void test_arrow_and_minus_without_spaces(void **state)
{
    const int kinds[] = {TOK_IDENT, TOK_ARROW, TOK_IDENT, '-', TOK_NUMBER, '-', '-', TOK_ARROW};
    expect_kinds("a->b -1 ---> ", kinds, 8);
}

static void test_numbers_in_all_forms(void **state)
{
    const char *src = "1 0.95 .5 1e-5 2.5E+3 10. 7e3 007";
    const char *texts[] = {"1", "0.95", ".5", "1e-5", "2.5E+3", "10.", "7e3", "007"};
    const double values[] = {1, 0.95, 0.5, 1e-5, 2500, 10, 7000, 7};
    Lexer lx;
    lexer_open(&lx, src, strlen(src));
    for (int i = 0; i < 8; i++) {
        Lexed t = lexer_next(&lx);
        assert_int_equal(t.kind, TOK_NUMBER);
        assert_string_equal(t.value.number.text, texts[i]);
        assert_true(t.value.number.value == values[i]);
        assert_int_equal(t.value.number.negative, 0);
    }
    assert_int_equal(lexer_next(&lx).kind, TOK_YYEOF);
    assert_string_equal(lexer_messages(&lx), "");
    lexer_close(&lx);
}

static void test_number_overflow_and_underflow_are_not_lexical_errors(void **state)
{
    const char *src = "1e999 1e-999";
    Lexer lx;
    lexer_open(&lx, src, strlen(src));
    Lexed big = lexer_next(&lx);
    Lexed tiny = lexer_next(&lx);
    assert_int_equal(big.kind, TOK_NUMBER);
    assert_true(isinf(big.value.number.value));
    assert_int_equal(tiny.kind, TOK_NUMBER);
    assert_true(tiny.value.number.value == 0.0);
    assert_int_equal(lx.diag.errors, 0);
    lexer_close(&lx);
}

static void test_comments_are_skipped(void **state)
{
    const char *src = "a // one line } \n"
                      "b /* two\n"
                      " * lines ' */ c /**/ d /***/ e /* a /* b */ f //";
    const char *names[] = {"a", "b", "c", "d", "e", "f"};
    Lexer lx;
    lexer_open(&lx, src, strlen(src));
    for (int i = 0; i < 6; i++) {
        Lexed t = lexer_next(&lx);
        assert_int_equal(t.kind, TOK_IDENT);
        assert_string_equal(t.value.ident.name, names[i]);
    }
    assert_int_equal(lexer_next(&lx).kind, TOK_YYEOF);
    assert_string_equal(lexer_messages(&lx), "");
    lexer_close(&lx);
}

static void test_comments_may_hold_any_byte(void **state)
{
    const char src[] = "a // \0 \xff $\nb /* \0 \x01 \xc3\xa9 */ c";
    Lexer lx;
    lexer_open(&lx, src, sizeof src - 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(lexer_next(&lx).kind, TOK_IDENT);
    assert_int_equal(lexer_next(&lx).kind, TOK_YYEOF);
    assert_int_equal(lx.diag.errors, 0);
    lexer_close(&lx);
}

static void test_quoted_symbols(void **state)
{
    const char *src = "'*' '1' 'ab'";
    const char *texts[] = {"*", "1", "ab"};
    Lexer lx;
    lexer_open(&lx, src, strlen(src));
    for (int i = 0; i < 3; i++) {
        Lexed t = lexer_next(&lx);
        assert_int_equal(t.kind, TOK_QUOTED);
        assert_string_equal(t.value.symbol.text, texts[i]);
        assert_int_equal(t.value.symbol.quoted, 1);
    }
    assert_int_equal(lexer_next(&lx).kind, TOK_YYEOF);
    assert_int_equal(lx.diag.errors, 0);
    lexer_close(&lx);
}

static void test_locations_count_bytes_and_lines(void **state)
{
    const char *src = "hmm a {\n\tstate  xy;\n  0.25 /* c\n */ }";
    Lexer lx;
    lexer_open(&lx, src, strlen(src));
    assert_loc(lexer_next(&lx).loc, 1, 1, 1, 3);   /* hmm */
    assert_loc(lexer_next(&lx).loc, 1, 5, 1, 5);   /* a */
    assert_loc(lexer_next(&lx).loc, 1, 7, 1, 7);   /* { */
    assert_loc(lexer_next(&lx).loc, 2, 2, 2, 6);   /* state: the tab is one column */
    assert_loc(lexer_next(&lx).loc, 2, 9, 2, 10);  /* xy */
    assert_loc(lexer_next(&lx).loc, 2, 11, 2, 11); /* ; */
    assert_loc(lexer_next(&lx).loc, 3, 3, 3, 6);   /* 0.25 */
    assert_loc(lexer_next(&lx).loc, 4, 5, 4, 5);   /* } after a comment over two lines */
    Lexed end = lexer_next(&lx);
    assert_int_equal(end.kind, TOK_YYEOF);
    assert_loc(end.loc, 4, 6, 4, 6);               /* just after the last token */
    lexer_close(&lx);
}

static void test_end_of_file_location_skips_trailing_space(void **state)
{
    const char *src = "a;\n\n  // done\n";
    Lexer lx;
    lexer_open(&lx, src, strlen(src));
    lexer_next(&lx);
    lexer_next(&lx);
    Lexed end = lexer_next(&lx);
    assert_int_equal(end.kind, TOK_YYEOF);
    assert_loc(end.loc, 1, 3, 1, 3);
    lexer_close(&lx);
}

static void test_empty_input(void **state)
{
    Lexer lx;
    lexer_open(&lx, "", 0);
    Lexed end = lexer_next(&lx);
    assert_int_equal(end.kind, TOK_YYEOF);
    assert_loc(end.loc, 1, 1, 1, 1);
    lexer_close(&lx);
}

static void test_carriage_returns_are_white_space(void **state)
{
    const char *src = "a\r\nb";
    Lexer lx;
    lexer_open(&lx, src, strlen(src));
    assert_loc(lexer_next(&lx).loc, 1, 1, 1, 1);
    assert_loc(lexer_next(&lx).loc, 2, 1, 2, 1);
    assert_int_equal(lx.diag.errors, 0);
    lexer_close(&lx);
}

/* Scans src (len bytes) to the end and checks the messages and how many
 * tokens came before the end of the input. */
static void expect_messages(const char *src, size_t len, int tokens, const char *messages)
{
    Lexer lx;
    lexer_open(&lx, src, len);
    int n = 0;
    while (lexer_next(&lx).kind != TOK_YYEOF)
        n++;
    assert_string_equal(lexer_messages(&lx), messages);
    assert_int_equal(n, tokens);
    assert_true(lx.diag.errors > 0);
    lexer_close(&lx);
}

static void test_stray_printable_character(void **state)
{
    expect_messages("a $ b", 5, 2,
                    "t.hmm:1:3: error: stray character '$'\n"
                    "    1 | a $ b\n"
                    "      |   ^\n");
}

static void test_stray_nul_and_control_bytes(void **state)
{
    expect_messages("a\0b\x7f", 4, 2,
                    "t.hmm:1:2: error: stray character 0x00\n"
                    "    1 | a?b?\n"
                    "      |  ^\n"
                    "t.hmm:1:4: error: stray character 0x7f\n"
                    "    1 | a?b?\n"
                    "      |    ^\n");
}

static void test_stray_non_ascii_is_one_error_per_run(void **state)
{
    expect_messages("x \xc3\xa9 \xe2\x82\xac\xc3\xa9", 10, 1,
                    "t.hmm:1:3: error: stray character (non-ASCII bytes 0xc3 0xa9)\n"
                    "    1 | x ?? ?????\n"
                    "      |   ^~\n"
                    "t.hmm:1:6: error: stray character (non-ASCII bytes 0xe2 0x82 0xac 0xc3 ...)\n"
                    "    1 | x ?? ?????\n"
                    "      |      ^~~~~\n");
}

static void test_unterminated_comment(void **state)
{
    const char *src = "a\n  /* b\n c";
    Lexer lx;
    lexer_open(&lx, src, strlen(src));
    assert_int_equal(lexer_next(&lx).kind, TOK_IDENT);
    assert_int_equal(lexer_next(&lx).kind, TOK_YYerror);
    assert_int_equal(lexer_next(&lx).kind, TOK_YYEOF);
    assert_string_equal(lexer_messages(&lx), "t.hmm:2:3: error: unterminated comment: add */\n"
                                             "    2 |   /* b\n"
                                             "      |   ^~\n");
    assert_int_equal(lx.diag.errors, 1);
    lexer_close(&lx);
}

static void test_empty_quote(void **state)
{
    expect_messages("['']", 4, 3,
                    "t.hmm:1:2: error: empty quoted symbol: write one character between the quotes\n"
                    "    1 | ['']\n"
                    "      |  ^~\n");
}

static void test_unterminated_quote(void **state)
{
    expect_messages("['*, a]\n'", 9, 6,
                    "t.hmm:1:2: error: unterminated quoted symbol: add the closing '\n"
                    "    1 | ['*, a]\n"
                    "      |  ^\n"
                    "t.hmm:2:1: error: unterminated quoted symbol: add the closing '\n"
                    "    2 | '\n"
                    "      | ^\n");
}

static void test_quote_of_invisible_characters(void **state)
{
    expect_messages("' ' '\t'", 7, 2,
                    "t.hmm:1:1: error: a quoted symbol may hold only visible ASCII characters: white space and control characters cannot be symbols, since FASTA sequence data skips them\n"
                    "    1 | ' ' '\t'\n"
                    "      | ^~~\n"
                    "t.hmm:1:5: error: a quoted symbol may hold only visible ASCII characters: white space and control characters cannot be symbols, since FASTA sequence data skips them\n"
                    "    1 | ' ' '\t'\n"
                    "      |     ^~~\n");
}

/* ''' is the apostrophe; '\'', '''' and a ' before a comma are one error
 * each, read as it, and the quoted symbols after them still pair up. */
static void test_apostrophe(void **state)
{
    const char *src = "''' '\\'' '''' ', 'b'";
    const char *texts[] = {"'", "'", "'", "'"};
    Lexer lx;
    lexer_open(&lx, src, strlen(src));
    for (int i = 0; i < 4; i++) {
        Lexed t = lexer_next(&lx);
        assert_int_equal(t.kind, TOK_QUOTED);
        assert_string_equal(t.value.symbol.text, texts[i]);
    }
    assert_int_equal(lexer_next(&lx).kind, ',');
    Lexed b = lexer_next(&lx);
    assert_int_equal(b.kind, TOK_QUOTED);
    assert_string_equal(b.value.symbol.text, "b");
    assert_int_equal(lexer_next(&lx).kind, TOK_YYEOF);
    assert_int_equal(lx.diag.errors, 3);
    lexer_close(&lx);
}

static void test_malformed_numbers(void **state)
{
    const char *src = "1e 1.2.3 1e-5x 12ab .5.5 1e+";
    const char *texts[] = {"1e", "1.2.3", "1e-5x", "12ab", ".5.5", "1e+"};
    Lexer lx;
    lexer_open(&lx, src, strlen(src));
    for (int i = 0; i < 6; i++) {
        Lexed t = lexer_next(&lx);
        assert_int_equal(t.kind, TOK_NUMBER);
        assert_string_equal(t.value.number.text, texts[i]);
    }
    assert_int_equal(lexer_next(&lx).kind, TOK_YYEOF);
    assert_int_equal(lx.diag.errors, 6);
    assert_non_null(strstr(lexer_messages(&lx), "t.hmm:1:10: error: malformed number '1e-5x'\n"
                                                "    1 | 1e 1.2.3 1e-5x 12ab .5.5 1e+\n"
                                                "      |          ^~~~~\n"));
    lexer_close(&lx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keywords),
        cmocka_unit_test(test_identifiers),
        cmocka_unit_test(test_punctuation),
        cmocka_unit_test(test_arrow_and_minus_without_spaces),
        cmocka_unit_test(test_numbers_in_all_forms),
        cmocka_unit_test(test_number_overflow_and_underflow_are_not_lexical_errors),
        cmocka_unit_test(test_comments_are_skipped),
        cmocka_unit_test(test_comments_may_hold_any_byte),
        cmocka_unit_test(test_quoted_symbols),
        cmocka_unit_test(test_locations_count_bytes_and_lines),
        cmocka_unit_test(test_end_of_file_location_skips_trailing_space),
        cmocka_unit_test(test_empty_input),
        cmocka_unit_test(test_carriage_returns_are_white_space),
        cmocka_unit_test(test_stray_printable_character),
        cmocka_unit_test(test_stray_nul_and_control_bytes),
        cmocka_unit_test(test_stray_non_ascii_is_one_error_per_run),
        cmocka_unit_test(test_unterminated_comment),
        cmocka_unit_test(test_empty_quote),
        cmocka_unit_test(test_unterminated_quote),
        cmocka_unit_test(test_quote_of_invisible_characters),
        cmocka_unit_test(test_apostrophe),
        cmocka_unit_test(test_malformed_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
