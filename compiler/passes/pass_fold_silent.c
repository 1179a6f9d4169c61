/* pass_fold_silent.c: folds silent states into their neighbours where that
 * pays (at most one move in or out), replacing each pair of moves
 * p -> s -> r by one move p -> r. */

/* Folding silent state s replaces every pair of moves p -> s -> r by one
 * move p -> r (weights multiplied; parallel moves with the same emission
 * merged: weights added for sums, the better kept for viterbi, with the path
 * it stands for in `via`), so a state with i moves in and o moves out turns
 * i + o moves into at most i * o.
 *
 * The cost rule: s is folded when i * o < i + o, that is when it has at most
 * one move in or at most one move out (a chain link, an entry or exit with a
 * single neighbour, a dead state); a state with two or more of each (a
 * profile's delete state, a begin or end state joined to every node) is kept
 * and evaluated in order within each position, because folding it would
 * multiply the moves (a profile of M nodes would grow to O(M^2)).
 * A state is never folded when a move into it emits and a move out of it
 * emits too (that pair would emit two symbols), nor when its call prints a
 * whole table (every state's value is printed), nor with --no-fold, nor
 * when a move into or out of it has a length-dependent weight (the backends
 * compute those per sequence, as written). Runs
 * after pass_close_cycles, so the silent moves form no cycle. */
#include "passes/pass.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support/symtab.h"

typedef struct IntVec {
    int *v;
    int n, cap;
} IntVec;

static void vec_push(IntVec *x, int value)
{
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 4;
        x->v = xrealloc(x->v, sizeof(int) * (size_t)x->cap);
    }
    x->v[x->n++] = value;
}

/* The model being folded, with move lists per state that a fold updates.
 * Memory stays proportional to the live moves, not to the folds made: a
 * killed move's index is dropped from the lists that hold it (at once from
 * its pair's bucket and the folded state's lists, from its other end's list
 * when half of that list is dead), and a slot no list holds any more is
 * used again. Via paths are shared nodes (ir.h, IrPaths): composing two
 * moves costs O(1) however long their paths are. */
typedef struct Folder {
    Arena *arena;           /* the program's: the moves and via paths it keeps */
    Arena scratch;          /* the pair table's, freed with the work lists */
    IrModel *m;
    IrMove *moves;
    char *dead;
    unsigned char *refs;    /* lists that hold each slot (its from's out, its to's in, its bucket) */
    int n_moves, cap_moves;
    IntVec free_slots;      /* dead slots no list holds */
    IntVec *in, *out;       /* move indexes per state; dead moves are skipped */
    int *n_in, *n_out;      /* live moves per state */
    int *emit_in, *emit_out;/* live emitting moves per state */
    Symtab by_pair;         /* (from, to) -> bucket of moves between them */
    IntVec *buckets;
    int n_buckets, cap_buckets;
} Folder;

static void release(Folder *f, int i)
{
    if (--f->refs[i] == 0)
        vec_push(&f->free_slots, i);
}

/* Drops the dead moves' indexes from a list. */
static void compact(Folder *f, IntVec *list)
{
    int kept = 0;
    for (int k = 0; k < list->n; k++) {
        if (f->dead[list->v[k]])
            release(f, list->v[k]);
        else
            list->v[kept++] = list->v[k];
    }
    list->n = kept;
}

static IntVec *bucket_of(Folder *f, int from, int to)
{
    int b = symtab_get_pair(&f->by_pair, from, to);
    if (b >= 0)
        return &f->buckets[b];
    if (f->n_buckets == f->cap_buckets) {
        f->cap_buckets *= 2;
        f->buckets = xrealloc(f->buckets, sizeof(IntVec) * (size_t)f->cap_buckets);
        memset(f->buckets + f->n_buckets, 0, sizeof(IntVec) * (size_t)(f->cap_buckets - f->n_buckets));
    }
    symtab_put_pair(&f->by_pair, from, to, f->n_buckets);
    return &f->buckets[f->n_buckets++];
}

static void kill_move(Folder *f, int i)
{
    IrMove *mv = &f->moves[i];
    f->dead[i] = 1;
    f->n_out[mv->from]--;
    f->n_in[mv->to]--;
    if (mv->emission >= 0) {
        f->emit_out[mv->from]--;
        f->emit_in[mv->to]--;
    }
    compact(f, bucket_of(f, mv->from, mv->to));
    if (f->out[mv->from].n > 2 * f->n_out[mv->from] + 8)
        compact(f, &f->out[mv->from]);
    if (f->in[mv->to].n > 2 * f->n_in[mv->to] + 8)
        compact(f, &f->in[mv->to]);
}

static void add_move(Folder *f, const IrMove *mv)
{
    int i;
    if (f->free_slots.n) {
        i = f->free_slots.v[--f->free_slots.n];
    } else {
        if (f->n_moves == f->cap_moves) {
            f->cap_moves *= 2;
            f->moves = xrealloc(f->moves, sizeof(IrMove) * (size_t)f->cap_moves);
            f->dead = xrealloc(f->dead, (size_t)f->cap_moves);
            f->refs = xrealloc(f->refs, (size_t)f->cap_moves);
        }
        i = f->n_moves++;
    }
    f->moves[i] = *mv;
    f->dead[i] = 0;
    f->refs[i] = 3;
    vec_push(&f->out[mv->from], i);
    vec_push(&f->in[mv->to], i);
    vec_push(bucket_of(f, mv->from, mv->to), i);
    f->n_out[mv->from]++;
    f->n_in[mv->to]++;
    if (mv->emission >= 0) {
        f->emit_out[mv->from]++;
        f->emit_in[mv->to]++;
    }
}

/* p -> s -> r as one move; merged into a live parallel move with the same emission. */
static void compose(Folder *f, const IrMove *in, int s, const IrMove *out)
{
    IrMove mv = {0};
    mv.from = in->from;
    mv.to = out->to;
    mv.emission = in->emission >= 0 ? in->emission : out->emission;
    mv.lw_sum = in->lw_sum + out->lw_sum;
    mv.lw_max = in->lw_max + out->lw_max;
    IntVec *bucket = bucket_of(f, mv.from, mv.to);
    for (int k = 0; k < bucket->n; k++) {
        IrMove *old = &f->moves[bucket->v[k]];
        if (f->dead[bucket->v[k]] || old->emission != mv.emission || old->length_weight)
            continue; /* a length-dependent move stays as written: a parallel one beside it */
        old->lw_sum = ir_log_add(old->lw_sum, mv.lw_sum);
        if (mv.lw_max > old->lw_max) {
            old->lw_max = mv.lw_max;
            old->n_via = in->n_via + 1 + out->n_via;
            old->via = ir_path_join(f->arena, f->m, in->via, s, out->via);
        }
        return;
    }
    mv.n_via = in->n_via + 1 + out->n_via;
    mv.via = ir_path_join(f->arena, f->m, in->via, s, out->via);
    add_move(f, &mv);
}

/* The moves folding s makes (0 when it is not folded). */
static long fold_cost(const Folder *f, int s)
{
    const IrState *st = &f->m->states[s];
    if (st->folded || st->kind != STATE_SILENT)
        return -1;
    if (f->emit_in[s] > 0 && f->emit_out[s] > 0)
        return -1;
    for (int k = 0; k < f->in[s].n; k++)
        if (!f->dead[f->in[s].v[k]] && f->moves[f->in[s].v[k]].length_weight)
            return -1;
    for (int k = 0; k < f->out[s].n; k++)
        if (!f->dead[f->out[s].v[k]] && f->moves[f->out[s].v[k]].length_weight)
            return -1;
    long i = f->n_in[s], o = f->n_out[s];
    return i * o < i + o ? i * o : -1;
}

static void fold(Folder *f, int s)
{
    IntVec ins = {0}, outs = {0};
    for (int k = 0; k < f->in[s].n; k++)
        if (!f->dead[f->in[s].v[k]])
            vec_push(&ins, f->in[s].v[k]);
    for (int k = 0; k < f->out[s].n; k++)
        if (!f->dead[f->out[s].v[k]])
            vec_push(&outs, f->out[s].v[k]);
    IrMove *in = xmalloc(sizeof(IrMove) * (size_t)(ins.n + 1));
    IrMove *out = xmalloc(sizeof(IrMove) * (size_t)(outs.n + 1));
    for (int k = 0; k < ins.n; k++) {
        in[k] = f->moves[ins.v[k]];
        kill_move(f, ins.v[k]);
    }
    for (int k = 0; k < outs.n; k++) {
        out[k] = f->moves[outs.v[k]];
        kill_move(f, outs.v[k]);
    }
    /* s is gone: its lists hold nothing any more (a self-loop's move is in both) */
    f->m->states[s].folded = 1;
    compact(f, &f->in[s]);
    compact(f, &f->out[s]);
    for (int a = 0; a < ins.n; a++)
        for (int b = 0; b < outs.n; b++)
            compose(f, &in[a], s, &out[b]);
    free(f->in[s].v), free(f->out[s].v);
    f->in[s] = f->out[s] = (IntVec){0};
    free(in), free(out);
    free(ins.v);
    free(outs.v);
}

static void folder_init(Folder *f, Arena *a, IrModel *m)
{
    int n = m->n_states;
    memset(f, 0, sizeof *f);
    f->arena = a;
    f->m = m;
    f->cap_moves = m->n_moves > 8 ? m->n_moves + m->n_moves / 4 : 16;
    f->moves = xmalloc(sizeof(IrMove) * (size_t)f->cap_moves);
    f->dead = xmalloc((size_t)f->cap_moves);
    f->refs = xmalloc((size_t)f->cap_moves);
    f->in = xcalloc((size_t)n, sizeof(IntVec));
    f->out = xcalloc((size_t)n, sizeof(IntVec));
    f->n_in = xcalloc((size_t)n, sizeof(int));
    f->n_out = xcalloc((size_t)n, sizeof(int));
    f->emit_in = xcalloc((size_t)n, sizeof(int));
    f->emit_out = xcalloc((size_t)n, sizeof(int));
    f->cap_buckets = 16;
    f->buckets = xcalloc((size_t)f->cap_buckets, sizeof(IntVec));
    arena_init(&f->scratch);
    symtab_init(&f->by_pair, &f->scratch);
    for (int i = 0; i < m->n_moves; i++)
        add_move(f, &m->moves[i]);
}

/* Writes the live moves back into the model (when a fold changed them: else
 * they stay as they are, shared with the model as written, which spares a
 * copy of every profile's moves per call) and frees the work lists. */
static void folder_finish(Folder *f, int folded)
{
    IrModel *m = f->m;
    int live = 0;
    for (int i = 0; i < f->n_moves; i++)
        live += !f->dead[i];
    if (folded) {
        m->moves = ARENA_ARRAY(f->arena, IrMove, live ? live : 1);
        m->moves_shared = 0;
        m->n_moves = 0;
        for (int i = 0; i < f->n_moves; i++)
            if (!f->dead[i])
                m->moves[m->n_moves++] = f->moves[i];
    }
    arena_free(&f->scratch);
    for (int s = 0; s < m->n_states; s++) {
        free(f->in[s].v);
        free(f->out[s].v);
    }
    for (int b = 0; b < f->n_buckets; b++)
        free(f->buckets[b].v);
    free(f->buckets);
    free(f->in), free(f->out), free(f->n_in), free(f->n_out), free(f->emit_in), free(f->emit_out);
    free(f->moves), free(f->dead), free(f->refs), free(f->free_slots.v);
}

/* A queue of states to look at (each at most once in it). */
typedef struct StateQueue {
    int *v;
    int head, tail, cap;
} StateQueue;

static void queue_push(StateQueue *q, char *queued, int s)
{
    if (queued[s])
        return;
    queued[s] = 1;
    q->v[q->tail] = s;
    q->tail = (q->tail + 1) % q->cap;
}

static int queue_pop(StateQueue *q, char *queued)
{
    int s = q->v[q->head];
    q->head = (q->head + 1) % q->cap;
    queued[s] = 0;
    return s;
}

/* Folds until no silent state passes the cost rule; a fold changes only its
 * neighbours' counts, so they are looked at again. Folds that make at most
 * one move (a link of a chain, a dead end) go first: folding a chain of L
 * links into a state with k moves out then makes those k moves once, not
 * once per link (L * k). */
static int fold_model(Arena *a, IrModel *m)
{
    /* nothing to fold (a dense model, say, silent only in its start and
       end): spare building the move buckets, the pass's main cost */
    int candidates = 0;
    for (int s = 0; s < m->n_states && !candidates; s++)
        candidates = !m->states[s].folded && m->states[s].kind == STATE_SILENT;
    if (!candidates)
        return 0;
    Folder f;
    folder_init(&f, a, m);
    int n = m->n_states, folded = 0;
    StateQueue cheap = {xmalloc(sizeof(int) * (size_t)(n + 1)), 0, 0, n + 1};
    StateQueue other = {xmalloc(sizeof(int) * (size_t)(n + 1)), 0, 0, n + 1};
    char *in_cheap = xcalloc((size_t)n, 1), *in_other = xcalloc((size_t)n, 1);
    for (int s = 0; s < n; s++) {
        long cost = fold_cost(&f, s);
        if (cost >= 0)
            queue_push(cost <= 1 ? &cheap : &other, cost <= 1 ? in_cheap : in_other, s);
    }
    IntVec near = {0};
    while (cheap.head != cheap.tail || other.head != other.tail) {
        int s = cheap.head != cheap.tail ? queue_pop(&cheap, in_cheap) : queue_pop(&other, in_other);
        long cost = fold_cost(&f, s);
        if (cost < 0)
            continue;
        if (cost > 1 && cheap.head != cheap.tail) { /* cheaper folds came up: after them */
            queue_push(&other, in_other, s);
            continue;
        }
        near.n = 0;
        for (int k = 0; k < f.in[s].n; k++)
            if (!f.dead[f.in[s].v[k]])
                vec_push(&near, f.moves[f.in[s].v[k]].from);
        for (int k = 0; k < f.out[s].n; k++)
            if (!f.dead[f.out[s].v[k]])
                vec_push(&near, f.moves[f.out[s].v[k]].to);
        fold(&f, s);
        folded++;
        for (int k = 0; k < near.n; k++) {
            long c = fold_cost(&f, near.v[k]);
            if (c >= 0)
                queue_push(c <= 1 ? &cheap : &other, c <= 1 ? in_cheap : in_other, near.v[k]);
        }
    }
    free(near.v);
    free(cheap.v), free(other.v), free(in_cheap), free(in_other);
    folder_finish(&f, folded);
    return folded;
}

static void explain(FILE *out, const IrCall *call, int folded)
{
    const IrModel *m = call->model;
    int kept = 0;
    for (int s = 0; s < m->n_states; s++)
        kept += m->states[s].kind == STATE_SILENT && !m->states[s].folded;
    fprintf(out, "hmmc: %s: folded %d silent state%s (each had at most one move in or out), "
            "kept %d (folding each would make more moves than it removes); %d moves\n",
            call->label, folded, folded == 1 ? "" : "s", kept, m->n_moves);
    int listed = 0;
    for (int s = 0; s < m->n_states && kept; s++)
        if (m->states[s].kind == STATE_SILENT && !m->states[s].folded && m->states[s].aux_of < 0 &&
            listed++ < 20)
            fprintf(out, "hmmc:   kept silent state '%s'\n", m->states[s].name);
    if (listed > 20)
        fprintf(out, "hmmc:   (and %d more)\n", listed - 20);
}

/* The call folded last, as it was before its fold: a call whose model is
 * the same (the same shared moves, the same states: forward and viterbi of
 * one model, the two calls of each profile of an import) takes its result
 * instead of folding again, and shares its moves: a file of thousands of
 * profiles keeps one folded copy of each, not one per call. The fold does
 * not depend on the algorithm (each move keeps both its sum and its best
 * path). */
typedef struct LastFold {
    IrCall *call;         /* NULL: none yet */
    const IrMove *moves;  /* its moves before the fold */
    int n_moves, n_states;
    IrState *states;      /* its states before the fold (malloc'd) */
    int folded;
} LastFold;

static int same_as_last(const LastFold *last, const IrModel *m)
{
    return last->call && m->moves_shared && last->moves == m->moves &&
           last->n_moves == m->n_moves && last->n_states == m->n_states &&
           memcmp(last->states, m->states, sizeof(IrState) * (size_t)m->n_states) == 0;
}

/* m takes the folded model of the last call. */
static void take_last(const LastFold *last, IrModel *m)
{
    IrModel *done = last->call->model;
    if (last->folded) {
        done->moves_shared = 1; /* both hold them now, neither owns them */
        m->moves = done->moves;
        m->n_moves = done->n_moves;
        m->moves_shared = 1;
        m->paths = done->paths;
        memcpy(m->states, done->states, sizeof(IrState) * (size_t)m->n_states);
    }
}

int pass_fold_silent(Program *p, const PassOptions *o, Diag *d)
{
    LastFold last = {0};
    for (int c = 0; c < p->n_calls; c++) {
        IrCall *call = &p->calls[c];
        if (call->alg == ALG_POSTERIOR) /* runs on the model as written */
            continue;
        if (!o->fold_silent || call->storage == STORE_WHOLE_TABLE) {
            if (o->verbose)
                fprintf(o->verbose, "hmmc: %s: no silent state folded (%s)\n", call->label,
                        o->fold_silent ? "a whole table is printed" : "--no-fold");
            continue;
        }
        IrModel *m = call->model;
        int folded;
        if (same_as_last(&last, m)) {
            take_last(&last, m);
            folded = last.folded;
        } else {
            last.call = call;
            last.moves = m->moves;
            last.n_moves = m->n_moves;
            last.n_states = m->n_states;
            last.states = xrealloc(last.states, sizeof(IrState) * (size_t)(m->n_states + 1));
            memcpy(last.states, m->states, sizeof(IrState) * (size_t)m->n_states);
            folded = last.folded = fold_model(p->arena, m);
        }
        if (o->verbose)
            explain(o->verbose, call, folded);
    }
    free(last.states);
    return 1;
}
