/* test_names.c: unit tests of the table of sequence names (runtime/names.c)
 * behind the duplicate-name warning of generated programs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "internal.h"

static void test_new_names_and_a_duplicate(void **state)
{
    hmmrt_names *t = hmmrt_names_new(HMMRT_NAMES_MAX);
    assert_non_null(t);
    const char *path = NULL;
    long line = 0;
    assert_int_equal(hmmrt_names_add(t, "a", "x.fa", 1, &path, &line), 0);
    assert_int_equal(hmmrt_names_add(t, "b", "x.fa", 3, &path, &line), 0);
    assert_int_equal(hmmrt_names_add(t, "", "x.fa", 5, &path, &line), 0);
    assert_int_equal(hmmrt_names_add(t, "a", "y.fa", 7, &path, &line), 1);
    assert_string_equal(path, "x.fa");
    assert_int_equal(line, 1);
    /* the first place stays the one reported */
    assert_int_equal(hmmrt_names_add(t, "a", "y.fa", 9, &path, &line), 1);
    assert_int_equal(line, 1);
    hmmrt_names_free(t);
}

/* Through many doublings: no distinct name is taken for a duplicate, and
 * every name is found again with its own line. */
static void test_many_names(void **state)
{
    enum { N = 200000 };
    hmmrt_names *t = hmmrt_names_new(HMMRT_NAMES_MAX);
    const char *path;
    long line;
    char name[32];
    for (long i = 0; i < N; i++) {
        snprintf(name, sizeof name, "seq%ld", i);
        assert_int_equal(hmmrt_names_add(t, name, "x.fa", i, &path, &line), 0);
    }
    for (long i = 0; i < N; i += 997) {
        snprintf(name, sizeof name, "seq%ld", i);
        assert_int_equal(hmmrt_names_add(t, name, "y.fa", -1, &path, &line), 1);
        assert_int_equal(line, i);
    }
    hmmrt_names_free(t);
}

/* Batches of records whose names repeat (within a batch and across
 * batches, some three times): checked on 1, 2, 3 and 8 threads, every
 * record's finding is what adding the names one by one says. */
enum { RECORDS = 60000, BATCH = 7001, DISTINCT = 41000 };

static void make_records(hmmrt_record *recs, uint64_t *hashes, char (*names)[24])
{
    uint64_t x = 12345;
    for (long i = 0; i < RECORDS; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        snprintf(names[i], sizeof names[i], "s%lu", (unsigned long)((x >> 33) % DISTINCT));
        recs[i] = (hmmrt_record){.name = names[i], .path = i < RECORDS / 2 ? "a.fa" : "b.fa",
                                 .line = 2 * i + 1};
        hashes[i] = hmmrt_name_hash(names[i]);
    }
}

static void check_in_batches(int n_threads, size_t max_names)
{
    static hmmrt_record recs[RECORDS];
    static uint64_t hashes[RECORDS];
    static char names[RECORDS][24];
    static hmmrt_name_seen seen[RECORDS];
    make_records(recs, hashes, names);
    hmmrt_names *batched = hmmrt_names_new(max_names), *one_by_one = hmmrt_names_new(max_names);
    assert_non_null(batched);
    assert_non_null(one_by_one);
    for (long start = 0; start < RECORDS; start += BATCH) {
        long n = start + BATCH < RECORDS ? BATCH : RECORDS - start;
        hmmrt_names_check(batched, recs + start, hashes + start, n, seen + start, n_threads);
    }
    long duplicates = 0, unchecked = 0;
    for (long i = 0; i < RECORDS; i++) {
        const char *path = NULL;
        long line = 0;
        int want = hmmrt_names_add(one_by_one, recs[i].name, recs[i].path, recs[i].line, &path,
                                   &line);
        assert_int_equal(seen[i].status, want);
        if (want == 1) {
            assert_ptr_equal(seen[i].path, path);
            assert_int_equal(seen[i].line, line);
            duplicates++;
        }
        unchecked += want < 0;
    }
    assert_true(duplicates > 2000); /* about 4,000 in the first 20,000, 26,000 in all */
    assert_int_equal(unchecked, max_names < RECORDS ? RECORDS - (long)max_names : 0);
    hmmrt_names_free(batched);
    hmmrt_names_free(one_by_one);
}

static void test_batches_on_threads(void **state)
{
    int threads[] = {1, 2, 3, 8};
    for (int k = 0; k < 4; k++)
        check_in_batches(threads[k], HMMRT_NAMES_MAX);
}

/* Past max_names, names are not checked: the first max_names are. */
static void test_batches_past_the_limit(void **state)
{
    check_in_batches(3, 20000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_names_and_a_duplicate),
        cmocka_unit_test(test_many_names),
        cmocka_unit_test(test_batches_on_threads),
        cmocka_unit_test(test_batches_past_the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
