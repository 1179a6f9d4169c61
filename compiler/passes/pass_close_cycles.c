/* pass_close_cycles.c: closes silent cycles exactly, so that afterwards the
 * silent moves form no cycle: each strongly connected set of silent states
 * gets gatherer states and closing moves weighted by (I - S)^-1 (sums) or the
 * best path (viterbi), in near-linear time when few states cut its cycles. */

/* Within one position,
 * the silent moves of a strongly connected set C of states (a cycle, or a
 * silent self-loop) make the values of C the solution of v = a + v S, where a
 * is what enters C from outside and S the weights of the moves inside C:
 *   forward, backward: v = a (I - S)^-1, a finite sum because sema checked
 *                      that the cycles converge;
 *   viterbi:           v[j] = max_i a[i] * best(i -> j), best over simple
 *                      paths inside C (a cycle never improves a path).
 * For every state c of C the pass adds a silent state c' (aux_of = c) that
 * gathers what enters c from outside C, and drops the moves inside C for
 * moves that form no cycle. silent_scc.c picks the states that cut C's
 * cycles (one for a single cycle) and T, the path sums between them through
 * the other states. Then:
 *   - the uncut states keep the moves inside C that enter them (a "real"
 *     layer, acyclic), and c' -> c for an uncut c;
 *   - a copy h(x) of every uncut state x (aux_of = x, made before x's
 *     gatherer, which is the one a table shows) carries what entered C until
 *     it first reaches a cut state: c' -> h(c), h(x) -> h(y) for each move
 *     x -> y between uncut states and h(x) -> f' for each x -> f into a cut
 *     state f (their via: x, the state the path passed);
 *   - the cut states take closing moves f' -> g weighted (I - T)^-1[f][g]
 *     (silent_scc_closure, in logs) for sums and the best path f -> g for
 *     viterbi (its via: the states from f up to g), k^2 moves for k cut
 *     states.
 * Every path inside C from where it was entered to where it is left is then
 * counted exactly once (split at its first and last cut state), in O(n + E
 * + k^2) states and moves, and O(k (n + E) + k^3) time: a cycle of 10,000
 * states closes in milliseconds instead of 10^12 operations and 10^8 moves.
 * A small set (where n^2 moves are no more than that) is closed densely
 * instead: c'_i -> c_j for every pair, weighted by the sum (and best path)
 * over the structure above, so its weights have the same accuracy. The
 * diagonal of I - T comes from expm1 of the logs (silent_scc.c): a cycle of
 * weight product 1 - 1e-13 closes to 1e13 within a few ulps. Afterwards the
 * silent moves form no cycle. */
#include "passes/pass.h"

#include <math.h>
#include <string.h>

#include "analysis/silent_scc.h"

/* A move of the closed structure, between local nodes: state j of C is j,
 * h(j) is n + j, the gatherer j' is 2n + j. */
typedef struct Edge {
    int from, to;
    double sum, max;
    int n_via, via;
} Edge;

typedef struct Edges {
    Edge *v;
    int n, cap;
    Arena *arena;
} Edges;

static void edge_add(Edges *e, int from, int to, double sum, double max, int n_via, int via)
{
    if (e->n == e->cap) {
        int cap = e->cap ? 2 * e->cap : 64;
        e->v = arena_grow(e->arena, e->v, sizeof(Edge) * (size_t)e->cap, sizeof(Edge) * (size_t)cap);
        e->cap = cap;
    }
    e->v[e->n++] = (Edge){from, to, sum, max, n_via, via};
}

/* The best paths between cut states through uncut ones (per cut state, in
 * the uncut states' order), with their via paths (the states from f up to
 * the last before g), then the best paths between cut states
 * (Floyd-Warshall over those, next hops, via paths shared). */
static void best_closure(Arena *a, IrModel *m, const SilentScc *c, double *best, int *best_via,
                         int *best_len)
{
    int n = c->n, k = c->k;
    double *val = ARENA_ARRAY(a, double, n);
    int *path = ARENA_ARRAY(a, int, n), *len = ARENA_ARRAY(a, int, n);
    double *seg = ARENA_ARRAY(a, double, (size_t)k * k);
    int *seg_via = ARENA_ARRAY(a, int, (size_t)k * k), *seg_len = ARENA_ARRAY(a, int, (size_t)k * k);
    for (int i = 0; i < n; i++)
        val[i] = -INFINITY;
    for (size_t i = 0; i < (size_t)k * k; i++)
        seg[i] = -INFINITY;
    for (int f = 0; f < k; f++) {
        int from = c->cuts[f];
        val[from] = 0;
        path[from] = ir_path_join(a, m, 0, c->members[from], 0);
        len[from] = 1;
        for (int step = -1; step < c->n_order; step++) {
            int v = step < 0 ? from : c->order[step];
            if (val[v] == -INFINITY)
                continue;
            if (step >= 0) { /* its best path is final: the path to it, then it */
                int pred = path[v];
                path[v] = ir_path_join(a, m, pred, c->members[v], 0);
                len[v]++;
            }
            for (int e = c->out_start[v]; e < c->out_start[v + 1]; e++) {
                int id = c->out_edges[e], w = c->eto[id];
                double cand = val[v] + c->emax[id];
                if (c->cut_of[w] >= 0) {
                    size_t at = (size_t)f * k + c->cut_of[w];
                    if (cand > seg[at]) {
                        seg[at] = cand;
                        seg_via[at] = path[v];
                        seg_len[at] = len[v];
                    }
                } else if (cand > val[w]) {
                    val[w] = cand;
                    path[w] = path[v]; /* the path up to v; w is added when it is final */
                    len[w] = len[v];
                }
            }
        }
        val[from] = -INFINITY;
        for (int i = 0; i < c->n_order; i++)
            val[c->order[i]] = -INFINITY;
    }
    int *next = ARENA_ARRAY(a, int, (size_t)k * k);
    for (int f = 0; f < k; f++)
        for (int g = 0; g < k; g++) {
            size_t at = (size_t)f * k + g;
            best[at] = f == g ? 0 : seg[at]; /* from f to itself: stay */
            next[at] = g;
        }
    for (int h = 0; h < k; h++)
        for (int f = 0; f < k; f++) {
            double fh = best[(size_t)f * k + h];
            if (fh == -INFINITY || f == h)
                continue;
            for (int g = 0; g < k; g++) {
                double cand = fh + best[(size_t)h * k + g];
                if (g != f && cand > best[(size_t)f * k + g]) {
                    best[(size_t)f * k + g] = cand;
                    next[(size_t)f * k + g] = next[(size_t)f * k + h];
                }
            }
        }
    /* via(f, g) = seg_via(f, h) ++ via(h, g), h = next(f, g): memoized per g */
    int *stack = ARENA_ARRAY(a, int, k);
    for (size_t i = 0; i < (size_t)k * k; i++)
        best_via[i] = -1;
    for (int g = 0; g < k; g++) {
        best_via[(size_t)g * k + g] = 0;
        best_len[(size_t)g * k + g] = 0;
        for (int f = 0; f < k; f++) {
            int depth = 0, at = f;
            while (best_via[(size_t)at * k + g] < 0 && best[(size_t)at * k + g] > -INFINITY) {
                stack[depth++] = at;
                at = next[(size_t)at * k + g];
            }
            while (depth) {
                int from = stack[--depth], hop = next[(size_t)from * k + g];
                size_t s = (size_t)from * k + hop, r = (size_t)hop * k + g;
                best_via[(size_t)from * k + g] = ir_path_join(a, m, seg_via[s], -1, best_via[r]);
                best_len[(size_t)from * k + g] = seg_len[s] + best_len[r];
            }
        }
    }
}

/* The structure of the header comment, as edges between local nodes. */
static void close_sparse(Arena *a, IrModel *m, const SilentScc *c, Edges *out)
{
    int n = c->n, k = c->k;
    for (int j = 0; j < n; j++)
        if (c->cut_of[j] < 0) {
            edge_add(out, 2 * n + j, j, 0, 0, 0, 0);
            edge_add(out, 2 * n + j, n + j, 0, 0, 0, 0);
        }
    int *single = ARENA_ARRAY(a, int, n); /* the path [state j], made once */
    for (int e = 0; e < c->n_edges; e++) {
        int i = c->efrom[e], j = c->eto[e];
        if (c->cut_of[j] < 0)
            edge_add(out, i, j, c->esum[e], c->emax[e], 0, 0);
        if (c->cut_of[i] >= 0)
            continue;
        if (!single[i])
            single[i] = ir_path_join(a, m, 0, c->members[i], 0);
        edge_add(out, n + i, c->cut_of[j] < 0 ? n + j : 2 * n + j, c->esum[e], c->emax[e], 1,
                 single[i]);
    }
    /* the sums between cut states, in logs (silent_scc_closure): sema checked
       that they converge */
    double *sum = ARENA_ARRAY(a, double, (size_t)k * k), *sum_lo = ARENA_ARRAY(a, double, (size_t)k * k);
    silent_scc_closure(a, c, sum, sum_lo);
    double *best = ARENA_ARRAY(a, double, (size_t)k * k);
    int *via = ARENA_ARRAY(a, int, (size_t)k * k), *len = ARENA_ARRAY(a, int, (size_t)k * k);
    best_closure(a, m, c, best, via, len);
    for (int f = 0; f < k; f++)
        for (int g = 0; g < k; g++) {
            size_t at = (size_t)f * k + g;
            if (sum[at] == -INFINITY)
                continue;
            edge_add(out, 2 * n + c->cuts[f], c->cuts[g], sum[at] + sum_lo[at], best[at],
                     best[at] > -INFINITY ? len[at] : 0, best[at] > -INFINITY ? via[at] : 0);
        }
}

/* The sparse structure's local nodes in an order where every edge goes
 * forward: gatherers of uncut states, copies, gatherers of cut states, cut
 * states, uncut states. */
static int *topological(Arena *a, const SilentScc *c, int *count)
{
    int n = c->n, *order = ARENA_ARRAY(a, int, 3 * n), k = 0;
    for (int i = 0; i < c->n_order; i++)
        order[k++] = 2 * n + c->order[i];
    for (int i = 0; i < c->n_order; i++)
        order[k++] = n + c->order[i];
    for (int f = 0; f < c->k; f++)
        order[k++] = 2 * n + c->cuts[f];
    for (int f = 0; f < c->k; f++)
        order[k++] = c->cuts[f];
    for (int i = 0; i < c->n_order; i++)
        order[k++] = c->order[i];
    *count = k; /* 3n - k: cut states have no copy */
    return order;
}

/* The dense closure j'_i -> j for every pair, from the sparse structure:
 * the sum over its paths and the best one, whose via lists the states of C
 * it passes (the copies' moves carry theirs). */
static void close_dense(Arena *a, IrModel *m, const SilentScc *c, const Edges *sparse, Edges *out)
{
    int n = c->n, nodes = 3 * n;
    int *start = ARENA_ARRAY(a, int, nodes + 1), *adj = ARENA_ARRAY(a, int, sparse->n + 1);
    int *fill = ARENA_ARRAY(a, int, nodes);
    for (int e = 0; e < sparse->n; e++)
        start[sparse->v[e].from + 1]++;
    for (int v = 0; v < nodes; v++)
        start[v + 1] += start[v];
    for (int e = 0; e < sparse->n; e++)
        adj[start[sparse->v[e].from] + fill[sparse->v[e].from]++] = e;
    int n_order;
    int *order = topological(a, c, &n_order);
    double *sum = ARENA_ARRAY(a, double, nodes), *max = ARENA_ARRAY(a, double, nodes);
    int *via = ARENA_ARRAY(a, int, nodes), *len = ARENA_ARRAY(a, int, nodes);
    int *pred = ARENA_ARRAY(a, int, nodes); /* the best path's last edge into each node */
    for (int i = 0; i < n; i++) {
        for (int v = 0; v < nodes; v++)
            sum[v] = max[v] = -INFINITY, pred[v] = -1;
        sum[2 * n + i] = max[2 * n + i] = 0;
        for (int t = 0; t < n_order; t++) {
            int v = order[t];
            if (sum[v] == -INFINITY && max[v] == -INFINITY)
                continue;
            for (int k = start[v]; k < start[v + 1]; k++) {
                const Edge *e = &sparse->v[adj[k]];
                sum[e->to] = ir_log_add(sum[e->to], sum[v] + e->sum);
                double cand = max[v] + e->max;
                if (cand > max[e->to]) {
                    max[e->to] = cand;
                    pred[e->to] = adj[k];
                }
            }
        }
        /* via paths along the best paths only (their edges come earlier in order):
           the path to the edge's source, that source when it is a state of C, the edge's */
        for (int t = 0; t < n_order; t++) {
            int v = order[t];
            via[v] = len[v] = 0;
            if (pred[v] < 0)
                continue;
            const Edge *e = &sparse->v[pred[v]];
            int passed = e->from < n ? c->members[e->from] : -1;
            via[v] = ir_path_join(a, m, via[e->from], passed, e->via);
            len[v] = len[e->from] + (passed >= 0) + e->n_via;
        }
        for (int j = 0; j < n; j++)
            if (sum[j] > -INFINITY)
                edge_add(out, 2 * n + i, j, sum[j], max[j], max[j] > -INFINITY ? len[j] : 0,
                         max[j] > -INFINITY ? via[j] : 0);
    }
}

typedef struct Closed {
    SilentScc c;
    Edges edges;
    int dense;
    int first_copy, first_gatherer; /* state indexes of h(uncut states in local order), j' */
} Closed;

/* A silent cycle through a length-dependent weight would need its closure
 * per sequence: not done (docs/language.md, "Length-dependent weights"). */
static int length_weight_on_cycle(const IrModel *m, const SilentSccs *sets, Diag *d)
{
    for (int i = 0; i < sets->move_start[sets->count]; i++) {
        const IrMove *mv = &m->moves[sets->moves[i]];
        if (!mv->length_weight)
            continue;
        diag_error(d, m->length_weights[mv->length_weight - 1].loc,
                   "the length-dependent weight of %s -> %s lies on a cycle of silent moves, "
                   "which hmmc closes once at build time: give the cycle a constant weight, or "
                   "make one of its moves emit", m->states[mv->from].name,
                   m->states[mv->to].name);
        return 1;
    }
    return 0;
}

static int close_model(Arena *a, IrModel *m, FILE *verbose, const char *label, Diag *d)
{
    SilentSccs sets;
    /* most models have no silent cycle: look in scratch, freed at once, so
     * that a file of thousands of profiles keeps nothing per call */
    Arena scratch;
    arena_init(&scratch);
    silent_sccs_of(&scratch, m, &sets);
    int any = sets.count > 0;
    arena_free(&scratch);
    if (!any)
        return 1;
    silent_sccs_of(a, m, &sets);
    if (length_weight_on_cycle(m, &sets, d))
        return 0;
    Closed *closed = ARENA_ARRAY(a, Closed, sets.count);
    int new_states = 0, new_moves = 0;
    for (int s = 0; s < sets.count; s++) {
        Closed *cl = &closed[s];
        const int *members = sets.members + sets.member_start[s];
        int n = sets.member_start[s + 1] - sets.member_start[s];
        silent_scc_reduce(a, m, members, n, sets.local, sets.moves + sets.move_start[s],
                          sets.move_start[s + 1] - sets.move_start[s], &cl->c);
        Edges sparse = {.arena = a};
        close_sparse(a, m, &cl->c, &sparse);
        /* dense where its n^2 moves are no more than the structure's moves and copies */
        cl->dense = (long)n * n <= (long)sparse.n + (n - cl->c.k);
        if (cl->dense) {
            cl->edges = (Edges){.arena = a};
            close_dense(a, m, &cl->c, &sparse, &cl->edges);
        } else {
            cl->edges = sparse;
        }
        new_states += n + (cl->dense ? 0 : n);
        new_moves += cl->edges.n;
    }
    ir_model_own_moves(a, m);
    IrState *states = ARENA_ARRAY(a, IrState, m->n_states + new_states);
    memcpy(states, m->states, sizeof(IrState) * (size_t)m->n_states);
    m->states = states;
    for (int s = 0; s < sets.count; s++) { /* copies first: a table shows the gatherer */
        Closed *cl = &closed[s];
        cl->first_copy = m->n_states;
        if (!cl->dense)
            m->n_states += cl->c.n; /* a slot per state; those of cut states stay unused */
    }
    for (int s = 0; s < sets.count; s++) {
        Closed *cl = &closed[s];
        cl->first_gatherer = m->n_states;
        m->n_states += cl->c.n;
    }
    for (int s = 0; s < sets.count; s++) {
        Closed *cl = &closed[s];
        for (int j = 0; j < cl->c.n; j++) {
            IrState base = m->states[cl->c.members[j]];
            base.kind = STATE_SILENT;
            base.emission = -1;
            base.aux_of = cl->c.members[j];
            m->states[cl->first_gatherer + j] = base;
            if (!cl->dense) {
                base.folded = cl->c.cut_of[j] >= 0; /* no copy: never used */
                m->states[cl->first_copy + j] = base;
            }
        }
    }
    /* moves inside a set go; moves entering one go to the gatherer */
    int kept = 0;
    IrMove *moves = ARENA_ARRAY(a, IrMove, (size_t)m->n_moves + new_moves + 1);
    int *set_of = ARENA_ARRAY(a, int, m->n_states);
    for (int v = 0; v < m->n_states; v++)
        set_of[v] = -1;
    for (int s = 0; s < sets.count; s++)
        for (int j = 0; j < closed[s].c.n; j++)
            set_of[closed[s].c.members[j]] = s;
    for (int i = 0; i < m->n_moves; i++) {
        IrMove mv = m->moves[i];
        int s = set_of[mv.to];
        if (s >= 0 && mv.emission < 0 && set_of[mv.from] == s)
            continue;
        if (s >= 0)
            mv.to = closed[s].first_gatherer + sets.local[mv.to];
        moves[kept++] = mv;
    }
    for (int s = 0; s < sets.count; s++) {
        Closed *cl = &closed[s];
        int n = cl->c.n;
        for (int e = 0; e < cl->edges.n; e++) {
            const Edge *ed = &cl->edges.v[e];
            int node[2] = {ed->from, ed->to};
            for (int x = 0; x < 2; x++)
                node[x] = node[x] < n       ? cl->c.members[node[x]]
                          : node[x] < 2 * n ? cl->first_copy + node[x] - n
                                            : cl->first_gatherer + node[x] - 2 * n;
            moves[kept++] = (IrMove){.from = node[0], .to = node[1], .emission = -1,
                                     .n_via = ed->n_via, .lw_sum = ed->sum, .lw_max = ed->max,
                                     .via = ed->via};
        }
        if (verbose)
            fprintf(verbose, "hmmc: %s: closed the silent cycle through %d state%s starting at '%s'"
                    " (%d cutting its cycles; %s, %d moves)\n", label, n, n == 1 ? "" : "s",
                    m->states[cl->c.members[0]].name, cl->c.k,
                    cl->dense ? "every pair joined" : "copies and closing moves", cl->edges.n);
    }
    m->moves = moves;
    m->n_moves = kept;
    return 1;
}

int pass_close_cycles(Program *p, const PassOptions *o, Diag *d)
{
    for (int c = 0; c < p->n_calls; c++)
        if (p->calls[c].alg != ALG_POSTERIOR && /* runs on the model as written */
            !close_model(p->arena, p->calls[c].model, o->verbose, p->calls[c].label, d))
            return 0;
    return 1;
}
