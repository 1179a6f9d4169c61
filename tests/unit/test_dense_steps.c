/* test_dense_steps.c: unit tests of how a dense call walks a chunk's
 * positions on the GPU (runtime/gpu/dense_steps.h): the running rows, and
 * the CUDA graphs' replays, checked by walking whole batches as
 * hmmrt_dense.cuh's loop does and counting what each position got. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "gpu/dense_steps.h"

enum { P = HMMRT_DENSE_GRAPH_POSITIONS };

static void running_rows(void **state)
{
    (void)state;
    const int64_t lengths[] = {100, 100, 40, 3, 0};
    assert_int_equal(hmmrt_dense_active(lengths, 5, 0), 4); /* the empty row never runs */
    assert_int_equal(hmmrt_dense_active(lengths, 5, 2), 4);
    assert_int_equal(hmmrt_dense_active(lengths, 5, 3), 3);
    assert_int_equal(hmmrt_dense_active(lengths, 5, 39), 3);
    assert_int_equal(hmmrt_dense_active(lengths, 5, 40), 2);
    assert_int_equal(hmmrt_dense_active(lengths, 5, 99), 2);
    assert_int_equal(hmmrt_dense_active(lengths, 5, 100), 0);
}

static void replays_by_hand(void **state)
{
    (void)state;
    const int64_t lengths[] = {1000, 1000, 1000};
    /* position 0 is the first kernel, not a product: no graph */
    assert_int_equal(hmmrt_dense_replays(lengths, 3, 0), 0);
    /* 999 products from position 1: 31 graphs of 32, 7 positions left */
    assert_int_equal(hmmrt_dense_replays(lengths, 3, 1), 999 / P);
    assert_int_equal(hmmrt_dense_replays(lengths, 3, 1 + (999 / P) * P), 0);
    /* fewer than two graphs' positions left: launches */
    assert_int_equal(hmmrt_dense_replays(lengths, 3, 1000 - 2 * P + 1), 0);
    assert_int_equal(hmmrt_dense_replays(lengths, 3, 1000 - 2 * P), 2);
    assert_int_equal(hmmrt_dense_replays(lengths, 3, 1000), 0);
    assert_int_equal(hmmrt_dense_replays(lengths, 0, 5), 0);
}

/* Walks rows sorted longest first as the chunk's loop does (graphs where
 * hmmrt_dense_replays allows, else one position); every position from 0 to
 * the longest length is run exactly once, by graphs only after position 0,
 * and within a graph's positions no row ends early (the rows are the same
 * at each of them). Returns the positions run by graphs. */
static int64_t walk(const int64_t *lengths, int64_t rows)
{
    int64_t running = 0;
    while (running < rows && lengths[running] > 0)
        running++;
    if (running == 0)
        return 0;
    int64_t *seen = calloc((size_t)lengths[0], sizeof *seen);
    assert_non_null(seen);
    int64_t by_graphs = 0;
    for (int64_t t = 0; t < lengths[0];) {
        const int64_t active = hmmrt_dense_active(lengths, running, t);
        assert_true(active > 0);
        const int64_t replays = hmmrt_dense_replays(lengths, active, t);
        const int64_t span = replays > 0 ? replays * P : 1;
        if (replays > 0) {
            assert_true(t > 0);
            by_graphs += span;
        }
        for (int64_t k = t; k < t + span; k++) {
            assert_true(k < lengths[0]);
            assert_int_equal(hmmrt_dense_active(lengths, running, k), active);
            seen[k]++;
        }
        t += span;
    }
    for (int64_t k = 0; k < lengths[0]; k++)
        assert_int_equal(seen[k], 1);
    free(seen);
    return by_graphs;
}

static void whole_batches(void **state)
{
    (void)state;
    const int64_t same[] = {1000, 1000, 1000, 1000};
    assert_int_equal(walk(same, 4), (999 / P) * P); /* issue 25's batch: 992 of 999 products */
    const int64_t ragged[] = {700, 650, 650, 129, 64, 63, 2, 1, 0, 0};
    const int64_t got = walk(ragged, 10);
    assert_true(got > 0 && got % P == 0);
    const int64_t one[] = {1};
    assert_int_equal(walk(one, 1), 0);
    const int64_t none[] = {0, 0};
    assert_int_equal(walk(none, 2), 0);
    /* random ragged batches, sorted longest first */
    srand(25);
    for (int round = 0; round < 200; round++) {
        int64_t lengths[64];
        const int rows = 1 + rand() % 64;
        for (int i = 0; i < rows; i++)
            lengths[i] = rand() % 4 == 0 ? rand() % 3 : rand() % 600;
        for (int i = 1; i < rows; i++) /* insertion sort, longest first */
            for (int j = i; j > 0 && lengths[j - 1] < lengths[j]; j--) {
                const int64_t swap = lengths[j];
                lengths[j] = lengths[j - 1];
                lengths[j - 1] = swap;
            }
        walk(lengths, rows);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(running_rows),
        cmocka_unit_test(replays_by_hand),
        cmocka_unit_test(whole_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
