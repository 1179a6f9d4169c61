/* traceback.c: follows back pointers into a path of state names or its
 * segments, and writes whole tables (values and back pointers) in the output
 * table's layout. The same for every model: the generated code passes its
 * moves as tables. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

/* The back pointer of a cell, or -1 for none. */
static long bp_at(const void *bp, int bp_bytes, size_t cell)
{
    switch (bp_bytes) {
    case 1: { uint8_t v = ((const uint8_t *)bp)[cell]; return v == UINT8_MAX ? -1 : (long)v; }
    case 2: { uint16_t v = ((const uint16_t *)bp)[cell]; return v == UINT16_MAX ? -1 : (long)v; }
    default: { uint32_t v = ((const uint32_t *)bp)[cell]; return v == UINT32_MAX ? -1 : (long)v; }
    }
}

/* One step back along the best path into (pos, state). */
typedef struct Step {
    int from;          /* the state it came from */
    int emits;         /* 1 when the move consumed a symbol */
    int via_first, via_end; /* the folded states between: via[via_first .. via_end-1] */
    int emit_to;       /* the state its emitting part ends in (-1 when silent) */
} Step;

/* The step back from (pos, state), or 0 when the cell has no path. A dense
 * call's back pointer is the state itself (in_moves is NULL); otherwise it
 * indexes the state's incoming moves. */
static int step_back(const hmmrt_paths *p, const void *bp, int bp_bytes, int64_t pos, int state,
                     Step *st)
{
    long k = bp_at(bp, bp_bytes, (size_t)pos * (size_t)p->n_states + (size_t)state);
    if (!p->in_moves) {
        if (k < 0 || k >= p->n_states)
            return 0;
        *st = (Step){(int)k, p->state_emits[state], 0, 0, p->state_emits[state] ? state : -1};
        return 1;
    }
    if (k < 0 || k >= p->in_start[state + 1] - p->in_start[state])
        return 0;
    int m = p->in_moves[p->in_start[state] + k];
    *st = (Step){p->move_from[m], p->move_emits[m], p->via_start[m], p->via_start[m + 1],
                 !p->move_emits[m] ? -1 : p->move_emit_to ? p->move_emit_to[m] : state};
    return 1;
}

typedef struct IntStack {
    int *v;
    size_t n, cap;
} IntStack;

static int push(IntStack *s, int x)
{
    int *v = hmmrt_grow(s->v, &s->cap, s->n + 1, sizeof(int), 64);
    if (!v)
        return -1;
    s->v = v;
    s->v[s->n++] = x;
    return 0;
}

/* Walks the best path back from the end state after `length` symbols,
 * calling visit for every step (pos: the symbols consumed before it is
 * undone). Returns 1 when the walk reaches the start at position 0, 0 when
 * the back pointers are broken, -1 when visit failed. */
static int walk_back(const hmmrt_paths *p, const void *bp, int bp_bytes, int64_t length,
                     int (*visit)(void *ctx, const Step *st, int64_t pos), void *ctx)
{
    int state = p->end;
    int64_t pos = length;
    /* every step either consumes a symbol or follows a silent move, and the
     * silent moves form no cycle: this many steps are always enough */
    size_t budget = ((size_t)length + 1) * ((size_t)p->n_states + 1);
    while (budget-- > 0) {
        if (state == p->start && pos == 0)
            return 1;
        Step st;
        if (!step_back(p, bp, bp_bytes, pos, state, &st))
            return 0;
        if (visit(ctx, &st, pos) != 0)
            return -1;
        state = st.from;
        pos -= st.emits;
        if (pos < 0)
            return 0;
    }
    return 0;
}

/* A traceback gathers the states backwards: a step's folded states, then
 * the state it came from. */
typedef struct Gathered {
    const hmmrt_paths *p;
    IntStack rev;
} Gathered;

static int gather_step(void *ctx, const Step *st, int64_t pos)
{
    Gathered *g = ctx;
    (void)pos;
    for (int k = st->via_end - 1; k >= st->via_first; k--)
        if (push(&g->rev, g->p->via[k]) < 0)
            return -1;
    return push(&g->rev, st->from);
}

int hmmrt_traceback(const hmmrt_paths *p, const void *bp, int bp_bytes, int64_t length,
                    hmmrt_buf *out)
{
    Gathered g = {p, {0}};
    int ok = push(&g.rev, p->end) == 0 && walk_back(p, bp, bp_bytes, length, gather_step, &g) == 1;
    int first = 1;
    for (size_t i = g.rev.n; ok && i-- > 0;) {
        if (p->hidden[g.rev.v[i]])
            continue;
        if (!first)
            hmmrt_buf_putc(out, ' ');
        hmmrt_buf_puts(out, p->state_names[g.rev.v[i]]);
        first = 0;
    }
    free(g.rev.v);
    return ok ? 0 : -1;
}

/* One run of a path's segments: positions first..last whose emitting moves
 * end in state. */
typedef struct Run {
    int state;
    int64_t first, last;
} Run;

typedef struct Runs {
    const hmmrt_paths *p;
    Run *v;
    size_t n, cap;
} Runs;

/* A step that consumed symbol `pos` (1-based) extends the run of the state
 * its emitting part ends in, or starts one (the runs come last first). */
static int run_step(void *ctx, const Step *st, int64_t pos)
{
    Runs *r = ctx;
    if (!st->emits)
        return 0;
    if (st->emit_to < 0 || st->emit_to >= r->p->n_states || pos < 1)
        return -1;
    if (r->n > 0 && r->v[r->n - 1].state == st->emit_to) {
        r->v[r->n - 1].first = pos;
        return 0;
    }
    Run *grown = hmmrt_grow(r->v, &r->cap, r->n + 1, sizeof(Run), 16);
    if (!grown)
        return -1;
    r->v = grown;
    r->v[r->n++] = (Run){st->emit_to, pos, pos};
    return 0;
}

int hmmrt_segments(const hmmrt_paths *p, const void *bp, int bp_bytes, int64_t length,
                   hmmrt_buf *out)
{
    Runs r = {p, NULL, 0, 0};
    int ok = walk_back(p, bp, bp_bytes, length, run_step, &r) == 1;
    for (size_t i = r.n; ok && i-- > 0;) {
        if (i + 1 < r.n)
            hmmrt_buf_putc(out, ' ');
        hmmrt_buf_segment(out, p->state_names[r.v[i].state], r.v[i].first, r.v[i].last);
    }
    if (ok && r.n == 0) /* an empty sequence */
        hmmrt_buf_puts(out, "-");
    free(r.v);
    return ok ? 0 : -1;
}

/* The state printed just before (pos, state) on the best path into it, or -1. */
static int predecessor(const hmmrt_paths *p, const void *bp, int bp_bytes, int64_t pos, int state)
{
    size_t budget = ((size_t)pos + 1) * ((size_t)p->n_states + 1);
    while (budget-- > 0) {
        Step st;
        if (!step_back(p, bp, bp_bytes, pos, state, &st))
            return -1;
        for (int k = st.via_end - 1; k >= st.via_first; k--)
            if (!p->hidden[p->via[k]])
                return p->via[k];
        state = st.from;
        if (!p->hidden[state])
            return state;
        pos -= st.emits;
        if (pos < 0)
            return -1;
    }
    return -1;
}

void hmmrt_traceback_table(const hmmrt_paths *p, const void *bp, int bp_bytes, int64_t length,
                           const int *shown, int n_shown, hmmrt_buf *out)
{
    for (int64_t pos = 0; pos <= length && !hmmrt_buf_failed(); pos++) {
        if (pos)
            hmmrt_buf_putc(out, ';');
        for (int k = 0; k < n_shown; k++) {
            if (k)
                hmmrt_buf_putc(out, ',');
            int prev = predecessor(p, bp, bp_bytes, pos, shown[k]);
            hmmrt_buf_puts(out, prev < 0 ? "-" : p->state_names[prev]);
        }
    }
}

void hmmrt_buf_table(hmmrt_buf *out, const double *values, int64_t n_positions, int n_states,
                     const int *shown, int n_shown)
{
    for (int64_t pos = 0; pos < n_positions && !hmmrt_buf_failed(); pos++) {
        if (pos)
            hmmrt_buf_putc(out, ';');
        for (int k = 0; k < n_shown; k++) {
            if (k)
                hmmrt_buf_putc(out, ',');
            hmmrt_buf_score(out, values[(size_t)pos * (size_t)n_states + (size_t)shown[k]]);
        }
    }
}
