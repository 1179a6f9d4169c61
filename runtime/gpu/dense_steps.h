/* dense_steps.h: how a dense call walks a chunk's positions on the GPU
 * (hmmrt_dense.cuh): the rows still running at a position, and how many
 * whole CUDA graphs of positions can replay from it with the same rows.
 * Host code, unit-tested in tests/unit/test_dense_steps.c. */
#ifndef HMMRT_DENSE_STEPS_H
#define HMMRT_DENSE_STEPS_H

#include <stdint.h>

/* Positions a graph holds (even: the two columns are where they were after
 * each replay), and the fewest replays worth a capture. */
enum { HMMRT_DENSE_GRAPH_POSITIONS = 32, HMMRT_DENSE_GRAPH_MIN_REPLAYS = 2 };

/* The rows with a residue at position t, of `rows` sorted longest first. */
static inline int64_t hmmrt_dense_active(const int64_t *lengths, int64_t rows, int64_t t)
{
    int64_t active = rows;
    while (active > 0 && lengths[active - 1] <= t)
        active--;
    return active;
}

/* The whole graphs that can replay from position t (a product comes first,
 * so t > 0) before any of the `active` rows ends; 0 where that is fewer than
 * HMMRT_DENSE_GRAPH_MIN_REPLAYS (the positions then run as launches). */
static inline int64_t hmmrt_dense_replays(const int64_t *lengths, int64_t active, int64_t t)
{
    if (t <= 0 || active <= 0 || lengths[active - 1] <= t)
        return 0;
    const int64_t replays = (lengths[active - 1] - t) / HMMRT_DENSE_GRAPH_POSITIONS;
    return replays >= HMMRT_DENSE_GRAPH_MIN_REPLAYS ? replays : 0;
}

#endif
