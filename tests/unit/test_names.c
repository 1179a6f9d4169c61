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
    hmmrt_names *t = hmmrt_names_new();
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

/* Through many doublings (and, with reserve, batch by batch as a run
 * reserves them): no distinct name is taken for a duplicate, and every name
 * is found again with its own line. */
static void add_many_names(int reserve)
{
    enum { N = 200000, BATCH = 30000 };
    hmmrt_names *t = hmmrt_names_new();
    const char *path;
    long line;
    char name[32];
    for (long i = 0; i < N; i++) {
        if (reserve && i % BATCH == 0)
            hmmrt_names_reserve(t, BATCH);
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

static void test_many_names(void **state)
{
    add_many_names(0);
}

static void test_many_names_reserved_by_batch(void **state)
{
    add_many_names(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_names_and_a_duplicate),
        cmocka_unit_test(test_many_names),
        cmocka_unit_test(test_many_names_reserved_by_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
