/* test_pack.c: unit tests of runtime/pack.c, the host-side arithmetic of GPU
 * batches: the order by length (longest first, stable, skips left out),
 * 16-byte code offsets, back-pointer offsets, the layout of a chunk's buffer
 * and the split of a batch into chunks that fit a target size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "internal.h"

/* ---- order by length ---------------------------------------------------------- */

static void expect_order(const int64_t *lengths, const unsigned char *skip, int64_t n,
                         const int64_t *want, int64_t n_want)
{
    int64_t order[64];
    assert_true(n <= 64);
    assert_int_equal(hmmrt_order_by_length(lengths, skip, n, order), n_want);
    for (int64_t k = 0; k < n_want; k++)
        assert_int_equal(order[k], want[k]);
}

static void test_longest_first_ties_in_input_order(void **state)
{
    const int64_t lengths[] = {3, 10, 0, 10, 7, 3};
    const int64_t want[] = {1, 3, 4, 0, 5, 2};
    expect_order(lengths, NULL, 6, want, 6);
}

static void test_skipped_sequences_are_left_out(void **state)
{
    const int64_t lengths[] = {3, 10, 0, 10, 7, 3};
    const unsigned char skip[] = {0, 1, 0, 0, 1, 0};
    const int64_t want[] = {3, 0, 5, 2};
    expect_order(lengths, skip, 6, want, 4);
    const unsigned char all[] = {1, 1, 1, 1, 1, 1};
    expect_order(lengths, all, 6, NULL, 0);
    expect_order(lengths, NULL, 0, NULL, 0);
}

static void test_all_empty_and_single(void **state)
{
    const int64_t zeros[] = {0, 0, 0};
    const int64_t want[] = {0, 1, 2};
    expect_order(zeros, NULL, 3, want, 3);
    const int64_t one[] = {42};
    expect_order(one, NULL, 1, want, 1);
}

/* Lengths that need several radix digits: the order must hold across passes. */
static void test_long_lengths_across_digits(void **state)
{
    const int64_t lengths[] = {2047, 3000000, 5, 2048, 3000000, 4194305, 0, 2048, (int64_t)1 << 40};
    const int64_t want[] = {8, 5, 1, 4, 3, 7, 0, 2, 6};
    expect_order(lengths, NULL, 9, want, 9);
}

/* Random batches (fixed seed): a permutation of the kept ones, lengths not
 * increasing, equal lengths in input order; lengths below 30 and up to
 * 65,536 (one counting pass), and up to 99,999 (radix passes). */
static void test_random_batches(void **state)
{
    enum { N = 5000 };
    static int64_t lengths[N], order[N];
    static unsigned char skip[N], seen[N];
    srand(7);
    for (int round = 0; round < 20; round++) {
        int64_t n = rand() % N, kept = 0;
        const int64_t spreads[] = {30, 65537, 100000};
        int64_t spread = spreads[round % 3];
        for (int64_t i = 0; i < n; i++) {
            lengths[i] = rand() % spread;
            skip[i] = rand() % 5 == 0;
            kept += !skip[i];
            seen[i] = 0;
        }
        assert_int_equal(hmmrt_order_by_length(lengths, skip, n, order), kept);
        for (int64_t k = 0; k < kept; k++) {
            int64_t i = order[k];
            assert_true(i >= 0 && i < n && !skip[i] && !seen[i]);
            seen[i] = 1;
            if (k > 0) {
                int64_t before = order[k - 1];
                assert_true(lengths[before] >= lengths[i]);
                if (lengths[before] == lengths[i])
                    assert_true(before < i);
            }
        }
    }
}

/* ---- offsets ---------------------------------------------------------------------- */

static void test_pad16(void **state)
{
    assert_int_equal(hmmrt_pad16(0), 0);
    assert_int_equal(hmmrt_pad16(1), 16);
    assert_int_equal(hmmrt_pad16(16), 16);
    assert_int_equal(hmmrt_pad16(17), 32);
    assert_int_equal(hmmrt_pad16(((int64_t)1 << 40) + 1), ((int64_t)1 << 40) + 16);
}

static void test_code_offsets_are_multiples_of_16(void **state)
{
    const int64_t lengths[] = {33, 16, 1, 0, 0, 15};
    int64_t offsets[6];
    assert_int_equal(hmmrt_code_offsets(lengths, 6, offsets), 48 + 16 + 16 + 0 + 0 + 16);
    const int64_t want[] = {0, 48, 64, 80, 80, 80};
    for (int k = 0; k < 6; k++) {
        assert_int_equal(offsets[k], want[k]);
        assert_int_equal(offsets[k] % 16, 0);
    }
    assert_int_equal(hmmrt_code_offsets(lengths, 0, offsets), 0);
}

static void test_bp_offsets(void **state)
{
    const int64_t lengths[] = {4, 0, 2};
    int64_t offsets[3];
    assert_int_equal(hmmrt_bp_offsets(lengths, 3, 7, offsets), (5 + 1 + 3) * 7);
    assert_int_equal(offsets[0], 0);
    assert_int_equal(offsets[1], 5 * 7);
    assert_int_equal(offsets[2], 6 * 7);
}

/* ---- the layout of a chunk ----------------------------------------------------------- */

/* Three calls: one with one-byte back pointers, one without, one with four. */
static const int shape_states[] = {5, 3, 9};
static const int shape_bp[] = {1, 0, 4};

static hmmrt_chunk_shape test_shape(int score_bytes)
{
    return (hmmrt_chunk_shape){.n_copies = 2,
                               .n_calls = 3,
                               .score_bytes = score_bytes,
                               .n_states = shape_states,
                               .bp_bytes = shape_bp};
}

typedef struct section {
    size_t at, bytes;
    int output;
} section;

static void expect_sections_fit(const section *s, int n, const hmmrt_chunk_layout *lay)
{
    for (int i = 0; i < n; i++) {
        assert_int_equal(s[i].at % HMMRT_SECTION_ALIGN, 0);
        assert_true(s[i].at + s[i].bytes <= (s[i].output ? lay->total_bytes : lay->input_bytes));
        assert_true(s[i].output ? s[i].at >= lay->input_bytes : 1);
        for (int j = 0; j < i; j++) /* no two overlap */
            assert_true(s[i].at >= s[j].at + s[j].bytes || s[j].at >= s[i].at + s[i].bytes);
    }
}

static void test_layout_sections(void **state)
{
    const int64_t lengths[] = {100, 31, 0};
    hmmrt_chunk_size size = hmmrt_measure(lengths, 3);
    assert_int_equal(size.sequences, 3);
    assert_int_equal(size.symbols, 131);
    assert_int_equal(size.padded_symbols, 112 + 32);
    size_t bp_offsets[3], scores[3], bp[3];
    hmmrt_chunk_layout lay = {.bp_offsets = bp_offsets, .scores = scores, .bp = bp};
    hmmrt_chunk_shape shape = test_shape(4);
    hmmrt_chunk_lay_out(&shape, &size, &lay);
    assert_int_equal(lay.total_bytes, hmmrt_chunk_bytes(&shape, &size));
    assert_int_equal(lay.total_bytes % HMMRT_SECTION_ALIGN, 0);
    assert_true(lay.codes_stride >= 144 + 16);
    assert_int_equal(lay.codes_stride % HMMRT_SECTION_ALIGN, 0);
    assert_int_equal(bp_offsets[1], HMMRT_NO_SECTION);
    assert_int_equal(bp[1], HMMRT_NO_SECTION);
    size_t cells = 131 + 3;
    section s[] = {
        {lay.lengths, 3 * 8, 0},        {lay.offsets, 3 * 8, 0},
        {bp_offsets[0], 3 * 8, 0},      {bp_offsets[2], 3 * 8, 0},
        {lay.codes, 2 * lay.codes_stride, 0},
        {scores[0], 3 * 4, 1},          {scores[1], 3 * 4, 1},
        {scores[2], 3 * 4, 1},          {bp[0], cells * 5 * 1, 1},
        {bp[2], cells * 9 * 4, 1},
    };
    expect_sections_fit(s, sizeof s / sizeof s[0], &lay);
}

static void test_layout_double_scores_take_more(void **state)
{
    const int64_t lengths[] = {1000, 1000};
    hmmrt_chunk_size size = hmmrt_measure(lengths, 2);
    hmmrt_chunk_shape single = test_shape(4), twice = test_shape(8);
    size_t bp_offsets[3], scores[3], bp[3];
    hmmrt_chunk_layout lay = {.bp_offsets = bp_offsets, .scores = scores, .bp = bp};
    hmmrt_chunk_lay_out(&twice, &size, &lay);
    assert_true(scores[1] >= scores[0] + 2 * 8);
    assert_true(hmmrt_chunk_bytes(&twice, &size) >= hmmrt_chunk_bytes(&single, &size));
}

/* Interleaved records: every (sequence, position) its own record, within
 * the total, which the incremental measure counts the same (any order of
 * lengths: a group's longest need not come first). */
static void test_group_offsets(void **state)
{
    enum { N = 100 };
    int64_t lengths[N], rec_at[N];
    for (int k = 0; k < N; k++)
        lengths[k] = (k * 37) % 23 + (k == 70 ? 40 : 0);
    int64_t total = hmmrt_group_offsets(lengths, N, rec_at);
    assert_int_equal(total, hmmrt_measure(lengths, N).grouped_columns);
    static unsigned char used[N * 64 * HMMRT_GROUP];
    assert_true(total <= (int64_t)sizeof used);
    memset(used, 0, sizeof used);
    for (int k = 0; k < N; k++)
        for (int64_t i = 0; i <= lengths[k]; i++) {
            int64_t r = rec_at[k] + HMMRT_GROUP * i;
            assert_true(r >= 0 && r < total);
            assert_int_equal(used[r], 0);
            used[r] = 1;
        }
    /* a group of one sequence still takes a group's width */
    int64_t one = 5;
    assert_int_equal(hmmrt_group_offsets(&one, 1, rec_at), 6 * HMMRT_GROUP);
}

/* ---- chunks ---------------------------------------------------------------------------- */

static size_t bytes_of(const hmmrt_chunk_shape *shape, const int64_t *lengths, int64_t n)
{
    hmmrt_chunk_size size = hmmrt_measure(lengths, n);
    return hmmrt_chunk_bytes(shape, &size);
}

/* Chunks cover the batch in order, and each fits the target or is one sequence. */
static void expect_plan(const hmmrt_chunk_shape *shape, const int64_t *lengths, int64_t n,
                        size_t target, const int64_t *starts, int64_t chunks)
{
    assert_int_equal(starts[0], 0);
    assert_int_equal(starts[chunks], n);
    for (int64_t c = 0; c < chunks; c++) {
        int64_t count = starts[c + 1] - starts[c];
        assert_true(count >= 1);
        assert_true(count == 1 || bytes_of(shape, lengths + starts[c], count) <= target);
        if (c + 1 < chunks) /* greedy: the next sequence would not have fitted */
            assert_true(bytes_of(shape, lengths + starts[c], count + 1) > target);
    }
}

static void test_plan_chunks(void **state)
{
    enum { N = 3000 };
    static int64_t lengths[N], starts[N + 1];
    for (int i = 0; i < N; i++)
        lengths[i] = 2000 - i / 2; /* sorted, longest first */
    hmmrt_chunk_shape shape = test_shape(4);
    size_t total = bytes_of(&shape, lengths, N);
    size_t target = total / 4;
    int64_t chunks = hmmrt_plan_chunks(&shape, lengths, N, target, starts);
    assert_true(chunks >= 4 && chunks <= 6);
    expect_plan(&shape, lengths, N, target, starts, chunks);
    assert_int_equal(hmmrt_plan_chunks(&shape, lengths, N, total, starts), 1);
    assert_int_equal(starts[1], N);
}

static void test_plan_long_sequence_alone(void **state)
{
    const int64_t lengths[] = {1000000, 10, 10, 10, 5};
    int64_t starts[6];
    hmmrt_chunk_shape shape = test_shape(4);
    size_t target = bytes_of(&shape, lengths + 1, 4);
    int64_t chunks = hmmrt_plan_chunks(&shape, lengths, 5, target, starts);
    assert_int_equal(chunks, 2);
    assert_int_equal(starts[1], 1);
    expect_plan(&shape, lengths, 5, target, starts, chunks);
    /* a target smaller than any sequence: one a chunk */
    assert_int_equal(hmmrt_plan_chunks(&shape, lengths, 5, 1, starts), 5);
    expect_plan(&shape, lengths, 5, 1, starts, 5);
}

static void test_plan_nothing(void **state)
{
    int64_t starts[1] = {-1};
    hmmrt_chunk_shape shape = test_shape(4);
    assert_int_equal(hmmrt_plan_chunks(&shape, NULL, 0, 1 << 20, starts), 0);
    assert_int_equal(starts[0], 0);
}

/* HMMRT_GPU_FAULT, the GPU driver's fault-injection switch (gpu_fault.c). */
static void test_gpu_fault_switch(void **state)
{
    hmmrt_gpu_fault f;
    assert_int_equal(hmmrt_parse_gpu_fault(NULL, &f), 0);
    assert_int_equal(f.kind, HMMRT_FAULT_NONE);
    assert_int_equal(hmmrt_parse_gpu_fault("", &f), 0);
    assert_int_equal(f.kind, HMMRT_FAULT_NONE);
    assert_int_equal(hmmrt_parse_gpu_fault("oom:2", &f), 0);
    assert_int_equal(f.kind, HMMRT_FAULT_OOM);
    assert_int_equal(f.batch, 2);
    assert_int_equal(hmmrt_parse_gpu_fault("error:17", &f), 0);
    assert_int_equal(f.kind, HMMRT_FAULT_ERROR);
    assert_int_equal(f.batch, 17);
    const char *bad[] = {"oom", "oom:", "oom:0", "oom:-1", "oom:2x", "error: 3", "error:+3",
                         "crash:1", "OOM:1", "oom:99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(hmmrt_parse_gpu_fault(bad[i], &f), -1);
        assert_int_equal(f.kind, HMMRT_FAULT_NONE);
    }
}

/* ---- the staged layout ------------------------------------------------------------ */

/* The staged layout puts the sorted sequences where a chunk's codes section
 * has them: each run of the order is a staged run, and its offsets less the
 * first are hmmrt_code_offsets of its lengths. */
static void test_staged_layout_matches_chunks(void **state)
{
    const int64_t lengths[] = {3, 17, 0, 16, 33, 1};
    int64_t order[6], offsets[6], sorted[6], chunk[6];
    int64_t m = hmmrt_order_by_length(lengths, NULL, 6, order);
    assert_int_equal(m, 6);
    int64_t total = hmmrt_staged_offsets(lengths, 6, order, m, offsets);
    /* 33, 17, 16, 3, 1, 0: 48 + 32 + 16 + 16 + 16 + 0 */
    assert_int_equal(total, 128);
    assert_int_equal(offsets[4], 0);
    assert_int_equal(offsets[1], 48);
    assert_int_equal(offsets[3], 80);
    assert_int_equal(offsets[0], 96);
    assert_int_equal(offsets[5], 112);
    assert_int_equal(offsets[2], 128);
    for (int64_t k = 0; k < m; k++)
        sorted[k] = lengths[order[k]];
    for (int64_t first = 0; first < m; first++)
        for (int64_t n = 0; first + n <= m; n++) {
            assert_true(hmmrt_staged_run(lengths, offsets, order + first, n));
            hmmrt_code_offsets(sorted + first, n, chunk);
            for (int64_t j = 0; j < n; j++)
                assert_int_equal(offsets[order[first + j]] - offsets[order[first]], chunk[j]);
        }
}

/* A gap (a skipped sequence), another order (a device's share, the driver's
 * own sort) or a sequence left out of the layout is not a staged run. */
static void test_staged_run_refuses_gaps(void **state)
{
    const int64_t lengths[] = {3, 17, 0, 16, 33, 1};
    int64_t order[6], offsets[6];
    int64_t m = hmmrt_order_by_length(lengths, NULL, 6, order); /* 4 1 3 0 5 2 */
    hmmrt_staged_offsets(lengths, 6, order, m, offsets);
    const int64_t gap[] = {4, 3, 0};      /* 1 left out */
    const int64_t swapped[] = {1, 4, 3}; /* not in the staged order */
    assert_false(hmmrt_staged_run(lengths, offsets, gap, 3));
    assert_false(hmmrt_staged_run(lengths, offsets, swapped, 3));
    assert_true(hmmrt_staged_run(lengths, offsets, gap + 1, 2)); /* 3 then 0: adjacent */
    /* staged without sequence 3 (skipped before the layout) */
    const unsigned char skip[] = {0, 0, 0, 1, 0, 0};
    int64_t part[6];
    int64_t n = hmmrt_order_by_length(lengths, skip, 6, part);
    hmmrt_staged_offsets(lengths, 6, part, n, offsets);
    assert_int_equal(offsets[3], -1);
    const int64_t with_unstaged[] = {1, 3};
    assert_false(hmmrt_staged_run(lengths, offsets, with_unstaged, 2));
    const int64_t unstaged_first[] = {3, 0};
    assert_false(hmmrt_staged_run(lengths, offsets, unstaged_first, 2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_longest_first_ties_in_input_order),
        cmocka_unit_test(test_skipped_sequences_are_left_out),
        cmocka_unit_test(test_all_empty_and_single),
        cmocka_unit_test(test_long_lengths_across_digits),
        cmocka_unit_test(test_random_batches),
        cmocka_unit_test(test_pad16),
        cmocka_unit_test(test_code_offsets_are_multiples_of_16),
        cmocka_unit_test(test_bp_offsets),
        cmocka_unit_test(test_layout_sections),
        cmocka_unit_test(test_layout_double_scores_take_more),
        cmocka_unit_test(test_group_offsets),
        cmocka_unit_test(test_plan_chunks),
        cmocka_unit_test(test_plan_long_sequence_alone),
        cmocka_unit_test(test_plan_nothing),
        cmocka_unit_test(test_gpu_fault_switch),
        cmocka_unit_test(test_staged_layout_matches_chunks),
        cmocka_unit_test(test_staged_run_refuses_gaps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
