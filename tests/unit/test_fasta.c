/* test_fasta.c: unit tests of the runtime's input side: the FASTA reader
 * (records over many lines, CRLF and CR line ends, blank lines, empty
 * sequences, names, several files, standard input, error messages, very
 * long lines) and hmmrt_map. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "hmmrt.h"

/* ---- helpers -------------------------------------------------------------- */

enum { MAX_TEMPS = 8, MAX_RECORDS = 16 };

/* How read_all cuts its input: threads x piece bytes a block; 0 keeps the
 * reader's default. */
static int read_threads;
static size_t read_piece_bytes;

static char temp_paths[MAX_TEMPS][64];
static int n_temps;

/* A temporary file holding n bytes of text; removed by teardown. */
static const char *temp_file_n(const char *text, size_t n)
{
    assert_true(n_temps < MAX_TEMPS);
    char *path = temp_paths[n_temps++];
    snprintf(path, 64, "/tmp/test_fasta_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
    return path;
}

static const char *temp_file(const char *text)
{
    return temp_file_n(text, strlen(text));
}

static int remove_temps(void **state)
{
    read_threads = 0;
    for (int i = 0; i < n_temps; i++)
        unlink(temp_paths[i]);
    n_temps = 0;
    return 0;
}

/* Everything a reader returned over some files. */
typedef struct reading {
    hmmrt_record rec[MAX_RECORDS];
    int n;
    int last;      /* the call that ended the reading: 0 or -1 */
    char err[512];
} reading;

static void read_all(reading *rd, const char *const *paths, int n_paths)
{
    memset(rd, 0, sizeof *rd);
    hmmrt_reader *r = hmmrt_reader_open(paths, n_paths);
    assert_non_null(r);
    if (read_threads > 0)
        hmmrt_reader_set_pieces(r, read_threads, read_piece_bytes);
    int got;
    while ((got = hmmrt_reader_next(r, &rd->rec[rd->n], rd->err, sizeof rd->err)) == 1) {
        /* the path belongs to the reader: keep a copy that outlives it */
        rd->rec[rd->n].path = strdup(rd->rec[rd->n].path);
        assert_true(++rd->n < MAX_RECORDS);
    }
    rd->last = got;
    hmmrt_reader_close(r);
}

static void read_one_file(reading *rd, const char *text)
{
    const char *path = temp_file(text);
    read_all(rd, &path, 1);
}

static void free_reading(reading *rd)
{
    for (int i = 0; i < rd->n; i++) {
        hmmrt_record_release(&rd->rec[i]);
        free((char *)rd->rec[i].path);
    }
}

static void expect_record(const reading *rd, int i, const char *name, const char *residues,
                          long line)
{
    assert_true(i < rd->n);
    assert_string_equal(rd->rec[i].name, name);
    assert_string_equal(rd->rec[i].residues, residues);
    assert_int_equal(rd->rec[i].length, (int64_t)strlen(residues));
    assert_int_equal(rd->rec[i].line, line);
}

/* ---- the reader ----------------------------------------------------------- */

static void test_records_over_many_lines(void **state)
{
    reading rd;
    read_one_file(&rd, ">s1\nACG\nTT\nA\n>s2\nGG\n");
    assert_int_equal(rd.last, 0);
    assert_int_equal(rd.n, 2);
    expect_record(&rd, 0, "s1", "ACGTTA", 1);
    expect_record(&rd, 1, "s2", "GG", 5);
    free_reading(&rd);
}

static void test_crlf_line_ends(void **state)
{
    reading rd;
    read_one_file(&rd, ">s1 first\r\nAC\r\nGT\r\n>s2\r\nA\r\n");
    assert_int_equal(rd.last, 0);
    assert_int_equal(rd.n, 2);
    expect_record(&rd, 0, "s1", "ACGT", 1);
    expect_record(&rd, 1, "s2", "A", 4);
    free_reading(&rd);
}

/* Old Mac files end lines with CR alone: every record is read, with its
 * lines (issue 21: ">a\rACGT\r>b..." was one record "a", empty). A CR
 * followed by LF is one line end; CRs in a row are blank lines. */
static void test_cr_line_ends(void **state)
{
    reading rd;
    read_one_file(&rd, ">a\rACGT\r>b desc\rAC\r\rGT\r>c\rGG\r");
    assert_int_equal(rd.last, 0);
    assert_int_equal(rd.n, 3);
    expect_record(&rd, 0, "a", "ACGT", 1);
    expect_record(&rd, 1, "b", "ACGT", 3);
    expect_record(&rd, 2, "c", "GG", 7);
    free_reading(&rd);
    remove_temps(state);
    read_one_file(&rd, ">a\r\r\n\rAC\r\nG\r>b\r\n\rX\nT");
    assert_int_equal(rd.last, 0);
    assert_int_equal(rd.n, 2);
    expect_record(&rd, 0, "a", "ACG", 1);
    expect_record(&rd, 1, "b", "XT", 6);
    free_reading(&rd);
    remove_temps(state);
    read_one_file(&rd, ">a\rAC\r>\rGG\r");
    assert_int_equal(rd.last, -1);
    assert_int_equal(rd.n, 1);
    assert_non_null(strstr(rd.err, ":3: a '>' header without a name"));
    free_reading(&rd);
}

static void test_blank_lines_and_white_space(void **state)
{
    reading rd;
    read_one_file(&rd, "\n  \n>s1\n\nA C\tG \n\n\n>s2\n \t\nT\n");
    assert_int_equal(rd.last, 0);
    assert_int_equal(rd.n, 2);
    expect_record(&rd, 0, "s1", "ACG", 3);
    expect_record(&rd, 1, "s2", "T", 8);
    free_reading(&rd);
}

static void test_empty_sequences(void **state)
{
    reading rd;
    read_one_file(&rd, ">a\n>b\n\n>c\nAC\n>d");
    assert_int_equal(rd.last, 0);
    assert_int_equal(rd.n, 4);
    expect_record(&rd, 0, "a", "", 1);
    expect_record(&rd, 1, "b", "", 2);
    expect_record(&rd, 2, "c", "AC", 4);
    expect_record(&rd, 3, "d", "", 6);
    free_reading(&rd);
}

static void test_name_is_first_word(void **state)
{
    reading rd;
    read_one_file(&rd, ">seq1 a description here\nA\n>seq2\tTAB desc\nC\n>  spaced name\nG\n"
                       ">x|y|z\r\nT");
    assert_int_equal(rd.last, 0);
    assert_int_equal(rd.n, 4);
    expect_record(&rd, 0, "seq1", "A", 1);
    expect_record(&rd, 1, "seq2", "C", 3);
    expect_record(&rd, 2, "spaced", "G", 5);
    expect_record(&rd, 3, "x|y|z", "T", 7);
    free_reading(&rd);
}

static void test_every_other_byte_is_a_residue(void **state)
{
    reading rd;
    read_one_file(&rd, ">d\n16 25\nacGT*-.\n");
    assert_int_equal(rd.last, 0);
    expect_record(&rd, 0, "d", "1625acGT*-.", 1);
    free_reading(&rd);
}

static void test_several_files_in_turn(void **state)
{
    const char *paths[3] = {temp_file(">a\nAA\n>b\nC"), temp_file(""), temp_file(">c\n\nG\n")};
    reading rd;
    read_all(&rd, paths, 3);
    assert_int_equal(rd.last, 0);
    assert_int_equal(rd.n, 3);
    expect_record(&rd, 0, "a", "AA", 1);
    expect_record(&rd, 1, "b", "C", 3);
    expect_record(&rd, 2, "c", "G", 1);
    assert_string_equal(rd.rec[1].path, paths[0]);
    assert_string_equal(rd.rec[2].path, paths[2]);
    free_reading(&rd);
}

/* Reads "-" in a child whose standard input is a file; the child's exit
 * status says whether it saw the expected records. */
static void test_dash_reads_standard_input(void **state)
{
    const char *path = temp_file(">in1\nAC\n>in2\nG\n");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *f = freopen(path, "r", stdin);
        const char *dash = "-";
        reading rd;
        read_all(&rd, &dash, 1);
        int ok = f && rd.last == 0 && rd.n == 2 && strcmp(rd.rec[0].name, "in1") == 0 &&
                 strcmp(rd.rec[0].residues, "AC") == 0 && strcmp(rd.rec[1].residues, "G") == 0 &&
                 strcmp(rd.rec[1].path, "<stdin>") == 0;
        _exit(ok ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_missing_file_is_an_error_after_earlier_files(void **state)
{
    const char *paths[2] = {temp_file(">a\nAC\n"), "/nonexistent/dir/seqs.fa"};
    reading rd;
    read_all(&rd, paths, 2);
    assert_int_equal(rd.n, 1);
    expect_record(&rd, 0, "a", "AC", 1);
    assert_int_equal(rd.last, -1);
    assert_string_equal(rd.err, "/nonexistent/dir/seqs.fa: cannot open: No such file or directory");
    free_reading(&rd);
}

static void test_directory_is_an_error(void **state)
{
    const char *path = "/tmp";
    reading rd;
    read_all(&rd, &path, 1);
    assert_int_equal(rd.last, -1);
    assert_string_equal(rd.err, "/tmp: cannot open: it is a directory");
}

static void test_data_before_first_header(void **state)
{
    reading rd;
    const char *path = temp_file("\n\nACGT\n>a\nAC\n");
    read_all(&rd, &path, 1);
    assert_int_equal(rd.n, 0);
    assert_int_equal(rd.last, -1);
    char expected[512];
    snprintf(expected, sizeof expected,
             "%s:3: sequence data before the first '>' header: a FASTA record starts with a "
             "line '>NAME'",
             path);
    assert_string_equal(rd.err, expected);
}

static void test_header_without_name(void **state)
{
    reading rd;
    const char *path = temp_file(">a\nAC\n>  \nGG\n");
    read_all(&rd, &path, 1);
    assert_int_equal(rd.n, 1);
    assert_int_equal(rd.last, -1);
    char expected[512];
    snprintf(expected, sizeof expected,
             "%s:3: a '>' header without a name: write the sequence's name right after '>'",
             path);
    assert_string_equal(rd.err, expected);
    free_reading(&rd);
}

static void test_header_without_name_at_end_of_file(void **state)
{
    reading rd;
    const char *path = temp_file(">a\nAC\n>");
    read_all(&rd, &path, 1);
    assert_int_equal(rd.n, 1);
    expect_record(&rd, 0, "a", "AC", 1);
    assert_int_equal(rd.last, -1);
    assert_non_null(strstr(rd.err, ":3: a '>' header without a name"));
    free_reading(&rd);
}

/* A row whose name starts with '#' would read as a comment of the output;
 * a NUL would cut the name (issue 21): both stop the reading at their line,
 * after the records before. '#' later in a name is a name's byte. */
static void test_names_like_comments_and_with_nul(void **state)
{
    reading rd;
    const char *path = temp_file(">a#1\nAC\n>  #b desc\nGG\n");
    read_all(&rd, &path, 1);
    assert_int_equal(rd.n, 1);
    expect_record(&rd, 0, "a#1", "AC", 1);
    assert_int_equal(rd.last, -1);
    char expected[512];
    snprintf(expected, sizeof expected,
             "%s:3: a sequence name that starts with '#': the output's lines that start with "
             "'#' are comments, so its row would read as one; rename the sequence (e.g. drop "
             "the '#')", path);
    assert_string_equal(rd.err, expected);
    free_reading(&rd);
    static const char with_nul[] = ">a\nAC\n\n>ab\0cd\nGG\n";
    path = temp_file_n(with_nul, sizeof with_nul - 1);
    read_all(&rd, &path, 1);
    assert_int_equal(rd.n, 1);
    assert_int_equal(rd.last, -1);
    snprintf(expected, sizeof expected,
             "%s:4: a NUL byte (\\x00) in a sequence name: the name would be cut there; fix the "
             "header (is the file text?)", path);
    assert_string_equal(rd.err, expected);
    free_reading(&rd);
}

static void test_error_is_sticky(void **state)
{
    const char *path = temp_file("AC\n>a\nG\n");
    hmmrt_reader *r = hmmrt_reader_open(&path, 1);
    hmmrt_record rec;
    char err[256];
    assert_int_equal(hmmrt_reader_next(r, &rec, err, sizeof err), -1);
    assert_int_equal(hmmrt_reader_next(r, &rec, err, sizeof err), -1);
    hmmrt_reader_close(r);
}

/* A sequence on one line of 3 MB, longer than the reader's block of 3 x
 * 256 KB, then a header whose description also runs over a block boundary. */
static void test_very_long_lines(void **state)
{
    read_threads = 3;
    read_piece_bytes = 256 << 10;
    size_t n = 3u << 20, desc = 1u << 20;
    char *text = malloc(n + desc + 64);
    char *p = text + sprintf(text, ">long\n");
    for (size_t i = 0; i < n; i++)
        *p++ = "ACGT"[(i * 7 + i / 3) % 4];
    p += sprintf(p, "\n>next ");
    memset(p, 'd', desc);
    p += desc;
    p += sprintf(p, "\nTT\n");
    const char *path = temp_file_n(text, (size_t)(p - text));
    reading rd;
    read_all(&rd, &path, 1);
    assert_int_equal(rd.last, 0);
    assert_int_equal(rd.n, 2);
    assert_string_equal(rd.rec[0].name, "long");
    assert_int_equal(rd.rec[0].length, (int64_t)n);
    assert_memory_equal(rd.rec[0].residues, text + 6, n);
    assert_int_equal(rd.rec[0].residues[n], '\0');
    expect_record(&rd, 1, "next", "TT", 3);
    free_reading(&rd);
    free(text);
}

/* Inputs whose records, lines and errors must not depend on how the reader
 * cuts them into blocks and pieces. */
static const char *const cut_inputs[] = {
    ">s1\nACG\nTT\nA\n>s2\nGG\n",
    ">s1 first\r\nAC\r\nGT\r\n>s2\r\nA\r\n",
    ">s1 first\rAC\rGT\r>s2\rA\r\r>s3\r\n\rC\r\nG\n\r>s4 d\r\n",
    "\n  \n>s1\n\nA C\tG \n\n\n>s2\n \t\nT\n",
    ">a\n>b\n\n>c\nAC\n>d",
    ">seq1 a description > here\nA\n>seq2\tTAB desc\nC\n>  spaced name\nG\n>x|y|z\r\nT",
    ">a\nAC\n>b\nGG\n>c\nTT\nAC\n>  \nGG\n>d\nA\n",
    ">a\nAC\n>b\nG\n\nACGT\n>",
    "\n\nACGT\n>a\nAC\n",
    ">a\nA\n>b\nC\n>c\nG\n>d\nT\n>e\nAA\n>f\nCC\n>g\nGG\n>h\nTT\n>i\nA\n>j\nC\n",
    ">a\nAC\n>b\nGG\n>#c\nTT\n>d\nA\n",
    ">a\rAC\r>b\rGG\r> #c\rTT\r>d\rA\r",
    ">only_a_name_that_runs_over_many_pieces and a description that does too\n"
    "ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT\nACGTACGT  ACGT\n>x\n",
};

static void expect_same_reading(const reading *a, const reading *b)
{
    assert_int_equal(a->last, b->last);
    assert_string_equal(a->err, b->err);
    assert_int_equal(a->n, b->n);
    for (int i = 0; i < a->n; i++) {
        expect_record(b, i, a->rec[i].name, a->rec[i].residues, a->rec[i].line);
        for (int64_t k = 0; k < a->rec[i].length; k++)
            assert_int_equal(hmmrt_record_line_of(&a->rec[i], k),
                             hmmrt_record_line_of(&b->rec[i], k));
    }
}

/* The line of each residue (issue 21: a symbol error named the header's
 * line): lines of equal width, blank lines, a short line in the middle, CR
 * and CRLF line ends, blanks inside lines. */
static void test_line_of_each_residue(void **state)
{
    reading rd;
    read_one_file(&rd, ">a\nACGT\nACGT\n\nAC\nACGT\nA\n>b d\r\nAC GT\r\nA\rCC\n>c\n>d\nA");
    assert_int_equal(rd.last, 0);
    assert_int_equal(rd.n, 4);
    static const long a_lines[] = {2, 2, 2, 2, 3, 3, 3, 3, 5, 5, 6, 6, 6, 6, 7};
    assert_int_equal(rd.rec[0].length, 15);
    for (int k = 0; k < 15; k++)
        assert_int_equal(hmmrt_record_line_of(&rd.rec[0], k), a_lines[k]);
    static const long b_lines[] = {9, 9, 9, 9, 10, 11, 11};
    assert_int_equal(rd.rec[1].length, 7);
    for (int k = 0; k < 7; k++)
        assert_int_equal(hmmrt_record_line_of(&rd.rec[1], k), b_lines[k]);
    assert_int_equal(rd.rec[2].n_runs, 0);
    assert_int_equal(hmmrt_record_line_of(&rd.rec[3], 0), 14);
    free_reading(&rd);
}

/* Every input, with every thread count from 1 to 4 and pieces of 1 to 9
 * bytes: the same as read in one piece. */
static void test_pieces_do_not_change_the_reading(void **state)
{
    for (size_t t = 0; t < sizeof cut_inputs / sizeof cut_inputs[0]; t++) {
        const char *paths[2] = {temp_file(cut_inputs[t]), temp_file(">z\nAC\n")};
        read_threads = 0;
        reading whole;
        read_all(&whole, paths, 2);
        for (int threads = 1; threads <= 4; threads++)
            for (size_t piece = 1; piece <= 9; piece++) {
                read_threads = threads;
                read_piece_bytes = piece;
                reading cut;
                read_all(&cut, paths, 2);
                expect_same_reading(&whole, &cut);
                free_reading(&cut);
            }
        free_reading(&whole);
        remove_temps(state);
    }
}

/* 20,000 records read by 4 threads in pieces of 4 KB: the pieces' records
 * come out in file order, with their own lines. */
static void test_many_records_over_many_pieces(void **state)
{
    enum { N = 20000 };
    size_t cap = (size_t)N * 64;
    char *text = malloc(cap), *p = text;
    for (int i = 0; i < N; i++)
        p += sprintf(p, ">r%d desc\n%.*s\n%s\n", i, 1 + i % 37,
                     "ACGTACGTACGTACGTACGTACGTACGTACGTACGTACGT", i % 3 ? "GG" : "");
    const char *path = temp_file_n(text, (size_t)(p - text));
    hmmrt_reader *r = hmmrt_reader_open(&path, 1);
    hmmrt_reader_set_pieces(r, 4, 4096);
    hmmrt_record rec;
    char err[256], name[32];
    long line = 1;
    for (int i = 0; i < N; i++) {
        assert_int_equal(hmmrt_reader_next(r, &rec, err, sizeof err), 1);
        snprintf(name, sizeof name, "r%d", i);
        assert_string_equal(rec.name, name);
        assert_int_equal(rec.length, 1 + i % 37 + (i % 3 ? 2 : 0));
        assert_int_equal(rec.line, line);
        line += 3;
        hmmrt_record_release(&rec);
    }
    assert_int_equal(hmmrt_reader_next(r, &rec, err, sizeof err), 0);
    hmmrt_reader_close(r);
    free(text);
}

/* ---- hmmrt_map ------------------------------------------------------------ */

static void test_map_valid(void **state)
{
    uint8_t codes[8];
    assert_int_equal(hmmrt_map("ACGT", "GATTACA", 7, codes), -1);
    const uint8_t expected[7] = {2, 0, 3, 3, 0, 1, 0};
    assert_memory_equal(codes, expected, 7);
    assert_int_equal(hmmrt_map("123456", "61", 2, codes), -1);
    assert_int_equal(codes[0], 5);
    assert_int_equal(codes[1], 0);
    assert_int_equal(hmmrt_map("ACGT", "", 0, codes), -1);
}

static void test_map_invalid_positions(void **state)
{
    uint8_t codes[8];
    assert_int_equal(hmmrt_map("ACGT", "XACG", 4, codes), 0);
    assert_int_equal(hmmrt_map("ACGT", "ACGa", 4, codes), 3); /* case is kept */
    assert_int_equal(hmmrt_map("ACGT", "AC\xff", 3, codes), 2);
    assert_int_equal(hmmrt_map("123456", "12370", 5, codes), 3);
    /* only `length` symbols are looked at */
    assert_int_equal(hmmrt_map("ACGT", "ACX", 2, codes), -1);
}

/* Tables are cached, but never stale: same pointer, new contents. */
static void test_map_cache_follows_contents(void **state)
{
    char alphabet[8];
    uint8_t codes[4];
    strcpy(alphabet, "AB");
    assert_int_equal(hmmrt_map(alphabet, "BA", 2, codes), -1);
    assert_int_equal(codes[0], 1);
    strcpy(alphabet, "BA");
    assert_int_equal(hmmrt_map(alphabet, "BA", 2, codes), -1);
    assert_int_equal(codes[0], 0);
    strcpy(alphabet, "XY");
    assert_int_equal(hmmrt_map(alphabet, "BA", 2, codes), 0);
    /* more alphabets than the cache holds, in turn */
    const char *many[10] = {"A", "B", "C", "D", "E", "F", "G", "H", "I", "J"};
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 10; i++) {
            assert_int_equal(hmmrt_map(many[i], many[i], 1, codes), -1);
            assert_int_equal(hmmrt_map(many[i], many[(i + 1) % 10], 1, codes), 0);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_records_over_many_lines, remove_temps),
        cmocka_unit_test_teardown(test_crlf_line_ends, remove_temps),
        cmocka_unit_test_teardown(test_blank_lines_and_white_space, remove_temps),
        cmocka_unit_test_teardown(test_empty_sequences, remove_temps),
        cmocka_unit_test_teardown(test_name_is_first_word, remove_temps),
        cmocka_unit_test_teardown(test_every_other_byte_is_a_residue, remove_temps),
        cmocka_unit_test_teardown(test_several_files_in_turn, remove_temps),
        cmocka_unit_test_teardown(test_dash_reads_standard_input, remove_temps),
        cmocka_unit_test_teardown(test_missing_file_is_an_error_after_earlier_files, remove_temps),
        cmocka_unit_test_teardown(test_directory_is_an_error, remove_temps),
        cmocka_unit_test_teardown(test_data_before_first_header, remove_temps),
        cmocka_unit_test_teardown(test_header_without_name, remove_temps),
        cmocka_unit_test_teardown(test_header_without_name_at_end_of_file, remove_temps),
        cmocka_unit_test_teardown(test_names_like_comments_and_with_nul, remove_temps),
        cmocka_unit_test_teardown(test_error_is_sticky, remove_temps),
        cmocka_unit_test_teardown(test_very_long_lines, remove_temps),
        cmocka_unit_test_teardown(test_cr_line_ends, remove_temps),
        cmocka_unit_test_teardown(test_line_of_each_residue, remove_temps),
        cmocka_unit_test_teardown(test_pieces_do_not_change_the_reading, remove_temps),
        cmocka_unit_test_teardown(test_many_records_over_many_pieces, remove_temps),
        cmocka_unit_test(test_map_valid),
        cmocka_unit_test(test_map_invalid_positions),
        cmocka_unit_test(test_map_cache_follows_contents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
