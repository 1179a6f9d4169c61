/* test_parser.c: unit tests of the bison grammar (grammar/parser.y) through
 * parse_source: the tree built for models and main blocks, node locations,
 * ast_dump's text, and the exact syntax error messages and recovery. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fixtures.h"

#include "syntax/parse.h"

/* One parse of a test string, with its diagnostics kept in memory. */
typedef TestSource Parsed;

static void parse_bytes(Parsed *p, const char *src, size_t len)
{
    test_source_compile(p, src, len, 0);
    assert_non_null(p->file);
}

static void parse(Parsed *p, const char *src)
{
    parse_bytes(p, src, strlen(src));
}

static void parsed_free(Parsed *p)
{
    test_source_free(p);
}

/* Parses src, which must hold no error, into p. */
static void parse_ok(Parsed *p, const char *src)
{
    parse(p, src);
    assert_string_equal(p->messages ? p->messages : "", "");
    assert_int_equal(p->diag.errors, 0);
}

/* Parses src and checks the exact messages and the error count. */
static void expect_errors(const char *src, int errors, const char *messages)
{
    Parsed p;
    parse(&p, src);
    assert_string_equal(p.messages ? p.messages : "", messages);
    assert_int_equal(p.diag.errors, errors);
    parsed_free(&p);
}

static void assert_loc(Loc loc, int first_line, int first_column, int last_line, int last_column)
{
    assert_int_equal(loc.first_line, first_line);
    assert_int_equal(loc.first_column, first_column);
    assert_int_equal(loc.last_line, last_line);
    assert_int_equal(loc.last_column, last_column);
}

static int count_decls(const Model *m)
{
    int n = 0;
    for (const Decl *d = m->decls; d; d = d->next)
        n++;
    return n;
}

static const char *CASINO =
    CASINO_MODEL_SOURCE
    "main {\n"
    "    cas = new casino();\n"
    "    dptable = forward(cas);\n"
    "    print dptable.score;\n"
    "    print viterbi(new casino()).traceback;\n"
    "}\n";

static void test_casino_model(void **state)
{
    Parsed p;
    parse_ok(&p, CASINO);
    const Model *m = p.file->models;
    assert_non_null(m);
    assert_null(m->next);
    assert_string_equal(m->name.name, "casino");
    assert_loc(m->name.loc, 1, 5, 1, 10);
    assert_loc(m->loc, 1, 1, 15, 1);
    assert_int_equal(count_decls(m), 13);

    const Decl *d = m->decls;
    assert_int_equal(d->kind, DECL_ALPHABET);
    assert_loc(d->loc, 2, 5, 2, 32);
    const char *symbols[] = {"1", "2", "3", "4", "5", "6"};
    const SymbolList *s = d->symbols;
    for (int i = 0; i < 6; i++, s = s->next) {
        assert_non_null(s);
        assert_string_equal(s->sym.text, symbols[i]);
        assert_int_equal(s->sym.quoted, 0);
    }
    assert_null(s);

    d = d->next;
    assert_int_equal(d->kind, DECL_STARTSTATE);
    assert_string_equal(d->name.name, "start");
    assert_loc(d->name.loc, 3, 16, 3, 20);
    assert_null(d->emits.name);

    d = d->next;
    assert_int_equal(d->kind, DECL_STATE);
    assert_string_equal(d->name.name, "fair");
    assert_string_equal(d->emits.name, "fairemission");
    assert_loc(d->emits.loc, 4, 22, 4, 33);

    d = d->next->next;
    assert_int_equal(d->kind, DECL_ENDSTATE);
    assert_string_equal(d->name.name, "end");

    d = d->next;
    assert_int_equal(d->kind, DECL_EMISSION);
    assert_int_equal(d->is_dict, 0);
    assert_string_equal(d->name.name, "fairemission");
    int n = 0;
    for (const EmissionEntry *e = d->entries; e; e = e->next, n++) {
        assert_int_equal(e->p.has_den, 1);
        assert_true(e->p.num.value == 1.0);
        assert_true(e->p.den.value == 6.0);
        assert_null(e->sym.text);
    }
    assert_int_equal(n, 6);
    assert_loc(d->entries->p.loc, 7, 32, 7, 34);

    d = d->next->next;
    assert_int_equal(d->kind, DECL_TRANSITION);
    assert_string_equal(d->from.name, "start");
    assert_string_equal(d->to.name, "fair");
    assert_loc(d->to.loc, 9, 14, 9, 17);
    assert_string_equal(d->weight.num.text, "1");
    assert_int_equal(d->weight.has_den, 0);
    assert_null(d->emits.name);
    assert_loc(d->loc, 9, 5, 9, 20);
    parsed_free(&p);
}

static void test_casino_main(void **state)
{
    Parsed p;
    parse_ok(&p, CASINO);
    const MainBlock *b = p.file->mains;
    assert_non_null(b);
    assert_null(b->next);
    assert_loc(b->loc, 16, 1, 21, 1);

    const Stmt *s = b->stmts;
    assert_int_equal(s->kind, STMT_ASSIGN);
    assert_string_equal(s->name.name, "cas");
    assert_int_equal(s->expr->kind, EXPR_NEW);
    assert_string_equal(s->expr->ident.name, "casino");
    assert_loc(s->expr->loc, 17, 11, 17, 22);

    s = s->next;
    assert_int_equal(s->expr->kind, EXPR_CALL);
    assert_string_equal(s->expr->ident.name, "forward");
    assert_int_equal(s->expr->arg->kind, EXPR_NAME);
    assert_string_equal(s->expr->arg->ident.name, "cas");

    s = s->next;
    assert_int_equal(s->kind, STMT_PRINT);
    assert_null(s->name.name);
    assert_int_equal(s->expr->kind, EXPR_ATTR);
    assert_string_equal(s->expr->ident.name, "score");
    assert_int_equal(s->expr->whole_table, 0);
    assert_string_equal(s->expr->arg->ident.name, "dptable");

    s = s->next;
    const Expr *attr = s->expr;
    assert_string_equal(attr->ident.name, "traceback");
    assert_int_equal(attr->arg->kind, EXPR_CALL);
    assert_int_equal(attr->arg->arg->kind, EXPR_NEW);
    assert_loc(attr->arg->arg->loc, 20, 19, 20, 30);
    assert_null(s->next);
    parsed_free(&p);
}

static void test_several_models_and_mains_in_order(void **state)
{
    Parsed p;
    parse_ok(&p, "hmm a { } main { } hmm b { state x; } hmm c { } main { print x.score; }");
    const Model *m = p.file->models;
    assert_string_equal(m->name.name, "a");
    assert_int_equal(count_decls(m), 0);
    assert_string_equal(m->next->name.name, "b");
    assert_int_equal(count_decls(m->next), 1);
    assert_string_equal(m->next->next->name.name, "c");
    assert_null(m->next->next->next);
    const MainBlock *b = p.file->mains;
    assert_null(b->stmts);
    assert_non_null(b->next->stmts);
    assert_null(b->next->next);
    assert_string_equal(p.file->path, "t.hmm");
    parsed_free(&p);
}

/* `hmm NAME scores {`: `scores` is a word only there, so a state, a model
 * or an emission may still be called `scores`. */
static void test_model_of_scores(void **state)
{
    Parsed p;
    parse_ok(&p, "hmm a scores { state scores; emission scores = [1]; scores -> scores 1; }\n"
                 "hmm scores scores { } hmm scores { } hmm b { }");
    const Model *m = p.file->models;
    assert_int_equal(m->scores, 1);
    assert_string_equal(m->decls->name.name, "scores");
    assert_string_equal(m->decls->next->name.name, "scores");
    assert_string_equal(m->decls->next->next->from.name, "scores");
    assert_string_equal(m->next->name.name, "scores");
    assert_int_equal(m->next->scores, 1);
    assert_string_equal(m->next->next->name.name, "scores");
    assert_int_equal(m->next->next->scores, 0);
    assert_int_equal(m->next->next->next->scores, 0);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    ast_dump(p.file, out);
    fclose(out);
    assert_non_null(strstr(text, "\n  model a scores @1:1-1:"));
    assert_non_null(strstr(text, "\n  model scores scores @2:1-2:"));
    assert_non_null(strstr(text, "\n  model scores @2:"));
    free(text);
    parsed_free(&p);
    expect_errors("hmm a odds { }",
                  1, "t.hmm:1:7: error: syntax error: unexpected identifier 'odds', expecting 'scores' or '{'\n"
                     "    1 | hmm a odds { }\n"
                     "      |       ^~~~\n");
}

static void test_dict_emission(void **state)
{
    Parsed p;
    parse_ok(&p, "hmm h { emission e = { a: 0.5, '*': 1/4, 3: .25 }; emission f = {}; emission g = []; }");
    const Decl *d = p.file->models->decls;
    assert_int_equal(d->is_dict, 1);
    const EmissionEntry *e = d->entries;
    assert_string_equal(e->sym.text, "a");
    assert_int_equal(e->sym.quoted, 0);
    assert_true(e->p.num.value == 0.5);
    e = e->next;
    assert_string_equal(e->sym.text, "*");
    assert_int_equal(e->sym.quoted, 1);
    assert_loc(e->sym.loc, 1, 32, 1, 34);
    assert_int_equal(e->p.has_den, 1);
    assert_true(e->p.den.value == 4.0);
    e = e->next;
    assert_string_equal(e->sym.text, "3");
    assert_null(e->next);
    d = d->next;
    assert_int_equal(d->is_dict, 1);
    assert_null(d->entries);
    d = d->next;
    assert_int_equal(d->is_dict, 0);
    assert_null(d->entries);
    parsed_free(&p);
}

static void test_alphabet_symbol_forms(void **state)
{
    Parsed p;
    parse_ok(&p, "hmm h { alphabet [A, '-', 12, ab, 1e5]; alphabet []; }");
    const SymbolList *s = p.file->models->decls->symbols;
    const char *texts[] = {"A", "-", "12", "ab", "1e5"};
    const int quoted[] = {0, 1, 0, 0, 0};
    for (int i = 0; i < 5; i++, s = s->next) {
        assert_string_equal(s->sym.text, texts[i]);
        assert_int_equal(s->sym.quoted, quoted[i]);
    }
    assert_null(s);
    assert_null(p.file->models->decls->next->symbols);
    parsed_free(&p);
}

static void test_negative_numbers_and_fractions(void **state)
{
    Parsed p;
    parse_ok(&p, "hmm h { a -> b -0.5; a -> c 1/-3 emits e; }");
    const Decl *d = p.file->models->decls;
    assert_int_equal(d->weight.num.negative, 1);
    assert_string_equal(d->weight.num.text, "-0.5");
    assert_true(d->weight.num.value == -0.5);
    assert_loc(d->weight.num.loc, 1, 16, 1, 19);
    assert_loc(d->weight.loc, 1, 16, 1, 19);
    d = d->next;
    assert_int_equal(d->weight.has_den, 1);
    assert_int_equal(d->weight.num.negative, 0);
    assert_int_equal(d->weight.den.negative, 1);
    assert_string_equal(d->weight.den.text, "-3");
    assert_loc(d->weight.loc, 1, 29, 1, 32);
    assert_string_equal(d->emits.name, "e");
    parsed_free(&p);
}

static void test_attribute_chains_and_whole_tables(void **state)
{
    Parsed p;
    parse_ok(&p, "main { t = forward(backward(new h())).score&; print t.a.b&; }");
    const Stmt *s = p.file->mains->stmts;
    const Expr *e = s->expr;
    assert_int_equal(e->kind, EXPR_ATTR);
    assert_int_equal(e->whole_table, 1);
    assert_loc(e->loc, 1, 12, 1, 44);
    assert_string_equal(e->arg->ident.name, "forward");
    assert_string_equal(e->arg->arg->ident.name, "backward");
    assert_int_equal(e->arg->arg->arg->kind, EXPR_NEW);
    e = s->next->expr;
    assert_string_equal(e->ident.name, "b");
    assert_int_equal(e->whole_table, 1);
    assert_string_equal(e->arg->ident.name, "a");
    assert_int_equal(e->arg->whole_table, 0);
    assert_int_equal(e->arg->arg->kind, EXPR_NAME);
    parsed_free(&p);
}

/* A transition matrix is one declaration: its names, and its values as
 * numbers in rows, each row with its place; no node per value. */
static void test_transition_matrix(void **state)
{
    Parsed p;
    parse_ok(&p, "hmm m {\n"
                 "  [s, x] -> [x, y, e] [1/4, 0, .5e1;\n"
                 "     /* ; ] */ 0, 2.5, 1e-3 // , ]\n"
                 "  ];\n"
                 "}\n");
    const Decl *d = p.file->models->decls;
    assert_int_equal(d->kind, DECL_MATRIX);
    assert_int_equal(d->n_sources, 2);
    assert_int_equal(d->n_targets, 3);
    assert_string_equal(d->sources->id.name, "s");
    assert_string_equal(d->targets->next->next->id.name, "e");
    assert_loc(d->targets->next->next->id.loc, 2, 20, 2, 20);
    const Matrix *m = d->matrix;
    assert_int_equal(m->n_rows, 2);
    assert_int_equal(m->n_values, 6);
    const double expected[] = {0.25, 0, 5, 0, 2.5, 1e-3};
    for (int i = 0; i < 6; i++)
        assert_true(m->values[i] == expected[i]);
    assert_int_equal(m->rows[1].first, 3);
    assert_loc(m->rows[0].loc, 2, 24, 2, 35);
    assert_loc(m->rows[1].loc, 3, 16, 3, 27);
    assert_loc(m->loc, 2, 23, 4, 3);
    /* a value's place is found again by reading its row */
    assert_loc(matrix_value_loc(m, 0, 2), 2, 32, 2, 35);
    assert_loc(matrix_value_loc(m, 1, 1), 3, 19, 3, 21);
    assert_loc(matrix_value_loc(m, 1, 2), 3, 24, 3, 27);
    parsed_free(&p);
}

/* Only the third '[' after '->' opens a matrix: arrows, lists of symbols and
 * emissions read as before, and names that are not keywords stay names. */
static void test_matrix_needs_its_place(void **state)
{
    Parsed p;
    parse_ok(&p, "hmm matrix { alphabet [a, b]; state matrix emits row;\n"
                 "  emission row = [0.5, 0.5]; matrix -> matrix 1; [matrix] -> [matrix] [1]; }\n");
    const Decl *d = p.file->models->decls;
    assert_int_equal(d->next->next->next->kind, DECL_TRANSITION);
    assert_int_equal(d->next->next->next->next->kind, DECL_MATRIX);
    parsed_free(&p);
    expect_errors("hmm m { [a] -> [b] 0.5; }\n", 1,
                  "t.hmm:1:20: error: syntax error: unexpected number '0.5', expecting a "
                  "matrix of weights '[p11, p12; p21, p22]'\n"
                  "    1 | hmm m { [a] -> [b] 0.5; }\n"
                  "      |                    ^~~\n");
}

/* Values are checked as weights when they are read, each at its place. */
static void test_matrix_value_errors(void **state)
{
    Parsed p;
    parse(&p, "hmm m { [a] -> [b, c, d, e, f] [-1, 2/0, 1e999, , x]; }\n");
    assert_int_equal(p.diag.errors, 5);
    assert_non_null(strstr(p.messages, "t.hmm:1:33: error: transition weight must be >= 0, not -1"));
    assert_non_null(strstr(p.messages, "t.hmm:1:39: error: division by zero in transition weight 2/0"));
    assert_non_null(strstr(p.messages, "t.hmm:1:42: error: transition weight 1e999 is too large"));
    assert_non_null(strstr(p.messages, "t.hmm:1:49: error: a value is missing before ','"));
    assert_non_null(strstr(p.messages, "t.hmm:1:51: error: unexpected 'x' in a transition matrix"));
    /* every value keeps its column (0 after an error) */
    assert_int_equal(p.file->models->decls->matrix->rows[0].n_values, 5);
    parsed_free(&p);
}

static void test_empty_file(void **state)
{
    Parsed p;
    parse_ok(&p, "  // nothing\n");
    assert_null(p.file->models);
    assert_null(p.file->mains);
    parsed_free(&p);
}

static void test_dump(void **state)
{
    Parsed p;
    parse_ok(&p, "hmm h {\n"
                 "  alphabet [a, '*'];\n"
                 "  state s emits e;\n"
                 "  emission e = {a: 1/2};\n"
                 "  s -> s -1 emits e;\n"
                 "}\n"
                 "main { print forward(new h()).score&; }\n");
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    ast_dump(p.file, out);
    fclose(out);
    assert_string_equal(text, "file t.hmm\n"
                              "  model h @1:1-6:1\n"
                              "    alphabet @2:3-2:20\n"
                              "      symbol a @2:13-2:13\n"
                              "      symbol '*' @2:16-2:18\n"
                              "    state s emits e @3:3-3:18\n"
                              "    emission e dict @4:3-4:24\n"
                              "      entry a: 1/2 @4:20-4:22\n"
                              "    transition s -> s -1 emits e @5:3-5:20\n"
                              "  main @7:1-7:39\n"
                              "    print @7:8-7:37\n"
                              "      attr score& @7:14-7:36\n"
                              "        call forward @7:14-7:29\n"
                              "          new h @7:22-7:28\n");
    free(text);
    parsed_free(&p);
}

static void test_missing_semicolon(void **state)
{
    expect_errors("hmm a {\n    state fair\n    state loaded;\n}\n", 1,
                  "t.hmm:3:5: error: syntax error: unexpected 'state', expecting 'emits' or ';'\n"
                  "    3 |     state loaded;\n"
                  "      |     ^~~~~\n");
}

static void test_unexpected_token_names_its_text(void **state)
{
    expect_errors("hmm a {\n  emission e = { a 0.5 };\n  x -> y '*';\n}\n", 2,
                  "t.hmm:2:20: error: syntax error: unexpected number '0.5', expecting ':'\n"
                  "    2 |   emission e = { a 0.5 };\n"
                  "      |                    ^~~\n"
                  "t.hmm:3:10: error: syntax error: unexpected quoted symbol '*', expecting number, '(' or '-'\n"
                  "    3 |   x -> y '*';\n"
                  "      |          ^~~\n");
}

static void test_missing_closing_brace(void **state)
{
    expect_errors("hmm a {\n  state x;\n", 1,
                  "t.hmm:2:11: error: unexpected end of file: a '}' is missing\n"
                  "    2 |   state x;\n"
                  "      |           ^\n"
                  "t.hmm:1:7: note: this '{' is not closed\n"
                  "    1 | hmm a {\n"
                  "      |       ^\n");
}

static void test_end_of_file_outside_a_block(void **state)
{
    expect_errors("hmm a", 1,
                  "t.hmm:1:6: error: syntax error: unexpected end of file, expecting 'scores' or '{'\n"
                  "    1 | hmm a\n"
                  "      |      ^\n");
}

static void test_recovery_reports_every_error(void **state)
{
    expect_errors("hmm a {\n"
                  "  state a b;\n"
                  "  state c d;\n"
                  "  x -> ;\n"
                  "}\n"
                  "main {\n"
                  "  x = ;\n"
                  "  print new;\n"
                  "}\n",
                  5,
                  "t.hmm:2:11: error: syntax error: unexpected identifier 'b', expecting 'emits' or ';'\n"
                  "    2 |   state a b;\n"
                  "      |           ^\n"
                  "t.hmm:3:11: error: syntax error: unexpected identifier 'd', expecting 'emits' or ';'\n"
                  "    3 |   state c d;\n"
                  "      |           ^\n"
                  "t.hmm:4:8: error: syntax error: unexpected ';', expecting identifier\n"
                  "    4 |   x -> ;\n"
                  "      |        ^\n"
                  "t.hmm:7:7: error: syntax error: unexpected ';', expecting identifier or 'new'\n"
                  "    7 |   x = ;\n"
                  "      |       ^\n"
                  "t.hmm:8:12: error: syntax error: unexpected ';', expecting identifier\n"
                  "    8 |   print new;\n"
                  "      |            ^\n");
}

static void test_recovery_at_closing_brace_keeps_later_models(void **state)
{
    Parsed p;
    parse(&p, "hmm a { state x }\nhmm b { state y; }\n");
    assert_int_equal(p.diag.errors, 1);
    assert_string_equal(p.messages, "t.hmm:1:17: error: syntax error: unexpected '}', expecting 'emits' or ';'\n"
                                    "    1 | hmm a { state x }\n"
                                    "      |                 ^\n");
    assert_string_equal(p.file->models->name.name, "a");
    assert_non_null(p.file->models->next);
    assert_string_equal(p.file->models->next->name.name, "b");
    assert_int_equal(count_decls(p.file->models->next), 1);
    parsed_free(&p);
}

static void test_recovery_inside_dict_emission(void **state)
{
    expect_errors("hmm a {\n  emission e = { a 1 };\n  emission f = [1 2];\n}\n", 2,
                  "t.hmm:2:20: error: syntax error: unexpected number '1', expecting ':'\n"
                  "    2 |   emission e = { a 1 };\n"
                  "      |                    ^\n"
                  "t.hmm:3:19: error: syntax error: unexpected number '2', expecting ']', ',' or '/'\n"
                  "    3 |   emission f = [1 2];\n"
                  "      |                   ^\n");
}

static void test_junk_at_top_level(void **state)
{
    Parsed p;
    parse(&p, "foo;\nhmm a { }\n}\nmain { }\n");
    assert_string_equal(p.messages, "t.hmm:1:1: error: syntax error: unexpected identifier 'foo', expecting 'hmm' or 'main'\n"
                                    "    1 | foo;\n"
                                    "      | ^~~\n"
                                    "t.hmm:3:1: error: syntax error: unexpected '}', expecting 'hmm' or 'main'\n"
                                    "    3 | }\n"
                                    "      | ^\n");
    assert_int_equal(p.diag.errors, 2);
    assert_non_null(p.file->models);
    assert_non_null(p.file->mains);
    parsed_free(&p);
}

static void test_keyword_where_a_name_is_expected(void **state)
{
    expect_errors("hmm state { }", 1,
                  "t.hmm:1:5: error: syntax error: unexpected 'state', expecting identifier\n"
                  "    1 | hmm state { }\n"
                  "      |     ^~~~~\n");
}

static void test_unterminated_comment_is_one_error(void **state)
{
    expect_errors("hmm a {\n  state x; /* forgot\n", 1,
                  "t.hmm:2:12: error: unterminated comment: add */\n"
                  "    2 |   state x; /* forgot\n"
                  "      |            ^~\n");
}

static void test_lexical_error_does_not_derail_the_parser(void **state)
{
    expect_errors("hmm a { state $x; state y; }", 1,
                  "t.hmm:1:15: error: stray character '$'\n"
                  "    1 | hmm a { state $x; state y; }\n"
                  "      |               ^\n");
}

static void test_source_with_nul_bytes(void **state)
{
    const char src[] = "hmm a { state x; }\0 main { }";
    Parsed p;
    parse_bytes(&p, src, sizeof src - 1);
    assert_int_equal(p.diag.errors, 1);
    assert_string_equal(p.messages, "t.hmm:1:19: error: stray character 0x00\n"
                                    "    1 | hmm a { state x; }? main { }\n"
                                    "      |                   ^\n");
    assert_non_null(p.file->mains);
    parsed_free(&p);
}

static void test_deep_nesting_is_an_error_not_a_crash(void **state)
{
    enum { DEPTH = 20000 };
    size_t len = 0;
    char *src = malloc(DEPTH * 3 + 64);
    len += (size_t)sprintf(src, "main { print ");
    for (int i = 0; i < DEPTH; i++)
        len += (size_t)sprintf(src + len, "f(");
    len += (size_t)sprintf(src + len, "x");
    for (int i = 0; i < DEPTH; i++)
        src[len++] = ')';
    len += (size_t)sprintf(src + len, "; }");
    Parsed p;
    parse_bytes(&p, src, len);
    assert_int_equal(p.diag.errors, 1);
    assert_non_null(strstr(p.messages, ": error: nested too deeply for the parser (memory exhausted)\n"));
    parsed_free(&p);
    free(src);
}

/* `fixed` after a weight (before or after `emits`), an emission's values or a
 * matrix sets Decl.fixed; nothing else does. */
static void test_fixed_marks_weights_emissions_and_matrices(void **state)
{
    Parsed p;
    parse_ok(&p, "hmm m {\n"
                 "  emission e = [0.5, 0.5] fixed;\n"
                 "  emission g = {a: 1} fixed;\n"
                 "  emission h = [1, 0];\n"
                 "  a -> b 0.5 fixed;\n"
                 "  a -> c 0.5 fixed emits e;\n"
                 "  b -> c 1/2 emits e fixed;\n"
                 "  c -> d 1 emits e;\n"
                 "  [a, b] -> [c, d] [0.5, 0.5; 1, 0] fixed;\n"
                 "  [c] -> [d] [1];\n"
                 "}\n");
    static const int fixed[] = {1, 1, 0, 1, 1, 1, 0, 1, 0};
    int i = 0;
    for (const Decl *d = p.file->models->decls; d; d = d->next, i++) {
        assert_true(i < 9);
        assert_int_equal(d->fixed, fixed[i]);
    }
    assert_int_equal(i, 9);
    parsed_free(&p);
}

/* Each number keeps the bytes of its text, and a weight or value the bytes
 * of all of it (a fraction as one), so that --train can replace it. */
static void test_numbers_keep_their_bytes(void **state)
{
    const char *src = "hmm m { emission e = [ 1/6 ,0.25e-1, 7 / 8]; a -> b 1e-3 fixed; }\n";
    Parsed p;
    parse_ok(&p, src);
    const Decl *e = p.file->models->decls, *t = e->next;
    const char *texts[] = {"1/6", "0.25e-1", "7 / 8"};
    int i = 0;
    for (const EmissionEntry *x = e->entries; x; x = x->next, i++) {
        long b = prob_begin(&x->p), n = prob_end(&x->p) - b;
        assert_int_equal(n, (long)strlen(texts[i]));
        assert_memory_equal(src + b, texts[i], (size_t)n);
    }
    assert_int_equal(i, 3);
    assert_int_equal(e->entries->p.num.begin, 23);
    assert_int_equal(e->entries->p.den.end, 26);
    assert_memory_equal(src + prob_begin(&t->weight), "1e-3", 4);
    assert_int_equal(prob_end(&t->weight) - prob_begin(&t->weight), 4);
    parsed_free(&p);
}

/* A name `fixed` is an error that says the word is reserved. */
static void test_fixed_is_reserved(void **state)
{
    Parsed p;
    parse(&p, "hmm m { state fixed; }\n");
    assert_int_equal(p.diag.errors, 1);
    assert_non_null(strstr(p.messages, "t.hmm:1:15: error: 'fixed' is a reserved word"));
    parsed_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_casino_model),
        cmocka_unit_test(test_casino_main),
        cmocka_unit_test(test_several_models_and_mains_in_order),
        cmocka_unit_test(test_model_of_scores),
        cmocka_unit_test(test_dict_emission),
        cmocka_unit_test(test_alphabet_symbol_forms),
        cmocka_unit_test(test_negative_numbers_and_fractions),
        cmocka_unit_test(test_attribute_chains_and_whole_tables),
        cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_dump),
        cmocka_unit_test(test_missing_semicolon),
        cmocka_unit_test(test_unexpected_token_names_its_text),
        cmocka_unit_test(test_missing_closing_brace),
        cmocka_unit_test(test_end_of_file_outside_a_block),
        cmocka_unit_test(test_recovery_reports_every_error),
        cmocka_unit_test(test_recovery_at_closing_brace_keeps_later_models),
        cmocka_unit_test(test_recovery_inside_dict_emission),
        cmocka_unit_test(test_junk_at_top_level),
        cmocka_unit_test(test_keyword_where_a_name_is_expected),
        cmocka_unit_test(test_unterminated_comment_is_one_error),
        cmocka_unit_test(test_lexical_error_does_not_derail_the_parser),
        cmocka_unit_test(test_source_with_nul_bytes),
        cmocka_unit_test(test_deep_nesting_is_an_error_not_a_crash),
        cmocka_unit_test(test_transition_matrix),
        cmocka_unit_test(test_matrix_needs_its_place),
        cmocka_unit_test(test_matrix_value_errors),
        cmocka_unit_test(test_fixed_marks_weights_emissions_and_matrices),
        cmocka_unit_test(test_numbers_keep_their_bytes),
        cmocka_unit_test(test_fixed_is_reserved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
