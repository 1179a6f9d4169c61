/* silent_scc.c: reducing a strongly connected set of silent states to its
 * cut states (silent_scc.h). */
#include "analysis/silent_scc.h"

#include <math.h>
#include <string.h>

#include "ir/graph.h"

/* s + e = a + b exactly (Knuth's two-sum). */
static void two_sum(double a, double b, double *s, double *e)
{
    *s = a + b;
    double bb = *s - a;
    *e = (a - (*s - bb)) + (b - bb);
}

void log_dd_add(double *x_hi, double *x_lo, double y_hi, double y_lo)
{
    if (y_hi == -INFINITY)
        return;
    if (*x_hi == -INFINITY) {
        *x_hi = y_hi;
        *x_lo = y_lo;
        return;
    }
    double a_hi = *x_hi, a_lo = *x_lo, b_hi = y_hi, b_lo = y_lo;
    if (b_hi > a_hi) {
        a_hi = y_hi, a_lo = y_lo;
        b_hi = *x_hi, b_lo = *x_lo;
    }
    double d = (b_hi - a_hi) + (b_lo - a_lo);
    double s, e;
    two_sum(a_hi, log1p(exp(d)), &s, &e);
    *x_hi = s;
    *x_lo = a_lo + e;
}

/* hi + lo, with the compensation added exactly as far as it goes. */
static void dd_add(double hi, double lo, double w, double *r_hi, double *r_lo)
{
    double s, e;
    two_sum(hi, w, &s, &e);
    *r_hi = s;
    *r_lo = lo + e;
}

/* Marks the cut states and sorts the others (iterative depth-first search:
 * C may be a cycle of 100,000 states). */
static void find_cuts(Arena *a, SilentScc *c)
{
    int n = c->n;
    char *color = ARENA_ARRAY(a, char, n); /* 0 new, 1 on the stack, 2 done */
    int *stack = ARENA_ARRAY(a, int, n), *next = ARENA_ARRAY(a, int, n);
    int *post = ARENA_ARRAY(a, int, n), n_post = 0;
    c->cut_of = ARENA_ARRAY(a, int, n);
    for (int i = 0; i < n; i++)
        c->cut_of[i] = -1;
    c->k = 0;
    for (int root = 0; root < n; root++) {
        if (color[root])
            continue;
        int depth = 0;
        stack[depth++] = root;
        color[root] = 1;
        next[root] = c->out_start[root];
        while (depth) {
            int v = stack[depth - 1];
            if (next[v] < c->out_start[v + 1]) {
                int w = c->eto[c->out_edges[next[v]++]];
                if (color[w] == 0) {
                    color[w] = 1;
                    next[w] = c->out_start[w];
                    stack[depth++] = w;
                } else if (color[w] == 1 && c->cut_of[w] < 0) {
                    c->cut_of[w] = c->k++; /* a move back: w cuts its cycles */
                }
            } else {
                color[v] = 2;
                post[n_post++] = v;
                depth--;
            }
        }
    }
    c->cuts = ARENA_ARRAY(a, int, c->k ? c->k : 1);
    for (int i = 0; i < n; i++)
        if (c->cut_of[i] >= 0)
            c->cuts[c->cut_of[i]] = i;
    /* moves that do not enter a cut state go from later to earlier in postorder */
    c->order = ARENA_ARRAY(a, int, n);
    c->n_order = 0;
    for (int i = n_post - 1; i >= 0; i--)
        if (c->cut_of[post[i]] < 0)
            c->order[c->n_order++] = post[i];
}

/* T: for each cut state, the path sums over the uncut states in order. */
static void path_sums(Arena *a, SilentScc *c)
{
    int n = c->n, k = c->k;
    c->t_hi = ARENA_ARRAY(a, double, ((size_t)k * k > 0 ? (size_t)k * k : 1));
    c->t_lo = ARENA_ARRAY(a, double, ((size_t)k * k > 0 ? (size_t)k * k : 1));
    for (size_t i = 0; i < (size_t)k * k; i++)
        c->t_hi[i] = -INFINITY;
    double *hi = ARENA_ARRAY(a, double, n), *lo = ARENA_ARRAY(a, double, n);
    for (int i = 0; i < n; i++)
        hi[i] = -INFINITY;
    for (int f = 0; f < k; f++) {
        double *row_hi = c->t_hi + (size_t)f * k, *row_lo = c->t_lo + (size_t)f * k;
        /* the cut state itself, then the uncut states in order */
        for (int step = -1; step < c->n_order; step++) {
            int v = step < 0 ? c->cuts[f] : c->order[step];
            double v_hi = step < 0 ? 0 : hi[v], v_lo = step < 0 ? 0 : lo[v];
            if (v_hi == -INFINITY)
                continue;
            for (int e = c->out_start[v]; e < c->out_start[v + 1]; e++) {
                int id = c->out_edges[e], w = c->eto[id];
                double s_hi, s_lo;
                dd_add(v_hi, v_lo, c->esum[id], &s_hi, &s_lo);
                if (c->cut_of[w] >= 0)
                    log_dd_add(&row_hi[c->cut_of[w]], &row_lo[c->cut_of[w]], s_hi, s_lo);
                else
                    log_dd_add(&hi[w], &lo[w], s_hi, s_lo);
            }
        }
        for (int i = 0; i < c->n_order; i++)
            hi[c->order[i]] = -INFINITY, lo[c->order[i]] = 0;
    }
}

void silent_scc_reduce(Arena *a, const IrModel *m, const int *members, int n, const int *local,
                       const int *moves, int n_moves, SilentScc *c)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->members = members;
    c->n_edges = n_moves;
    c->efrom = ARENA_ARRAY(a, int, n_moves ? n_moves : 1);
    c->eto = ARENA_ARRAY(a, int, n_moves ? n_moves : 1);
    c->esum = ARENA_ARRAY(a, double, n_moves ? n_moves : 1);
    c->emax = ARENA_ARRAY(a, double, n_moves ? n_moves : 1);
    c->out_start = ARENA_ARRAY(a, int, n + 1);
    c->out_edges = ARENA_ARRAY(a, int, n_moves ? n_moves : 1);
    for (int i = 0; i < n_moves; i++) {
        const IrMove *mv = &m->moves[moves[i]];
        c->efrom[i] = local[mv->from];
        c->eto[i] = local[mv->to];
        c->esum[i] = mv->lw_sum;
        c->emax[i] = mv->lw_max;
        c->out_start[c->efrom[i] + 1]++;
    }
    for (int i = 0; i < n; i++)
        c->out_start[i + 1] += c->out_start[i];
    int *fill = ARENA_ARRAY(a, int, n);
    for (int i = 0; i < n_moves; i++)
        c->out_edges[c->out_start[c->efrom[i]] + fill[c->efrom[i]]++] = i;
    find_cuts(a, c);
    path_sums(a, c);
}

/* ln(1 - e^(hi + lo)) for hi + lo < 0: 1 - e^(hi+lo) = -(expm1(hi) + e^hi expm1(lo)),
 * accurate however near 0 the log is; NaN when hi + lo >= 0. */
static double log_one_minus(double hi, double lo)
{
    double d = -(expm1(hi) + exp(hi) * expm1(lo));
    return d > 0 ? log(d) : NAN;
}

int silent_scc_closure(Arena *a, const SilentScc *c, double *w_hi, double *w_lo)
{
    int k = c->k;
    size_t kk = (size_t)k * k;
    double *l_hi = ARENA_ARRAY(a, double, kk ? kk : 1), *l_lo = ARENA_ARRAY(a, double, kk ? kk : 1);
    memcpy(l_hi, c->t_hi, sizeof(double) * kk);
    memcpy(l_lo, c->t_lo, sizeof(double) * kk);
    double *col_hi = ARENA_ARRAY(a, double, k ? k : 1), *col_lo = ARENA_ARRAY(a, double, k ? k : 1);
    /* Kleene: after step p, L[i][j] sums the paths i -> ... -> j (one move or
     * more) whose inner cut states are among 0..p. Every update adds
     * positive terms, in logs; the one subtraction is 1 - L[p][p], the
     * returns to p, from expm1. */
    for (int p = 0; p < k; p++) {
        size_t pp = (size_t)p * k + p;
        double star = l_hi[pp] == -INFINITY ? 0 : -log_one_minus(l_hi[pp], l_lo[pp]);
        if (!(star < INFINITY))
            return 0; /* the returns to p weigh 1 or more: the sum diverges */
        for (int i = 0; i < k; i++) { /* column p as it was, times the star */
            col_hi[i] = l_hi[(size_t)i * k + p];
            col_lo[i] = l_lo[(size_t)i * k + p];
            if (col_hi[i] > -INFINITY)
                dd_add(col_hi[i], col_lo[i], star, &col_hi[i], &col_lo[i]);
        }
        for (int i = 0; i < k; i++) {
            if (col_hi[i] == -INFINITY)
                continue;
            for (int j = 0; j < k; j++) {
                size_t pj = (size_t)p * k + j, ij = (size_t)i * k + j;
                if (l_hi[pj] == -INFINITY || i == p || j == p)
                    continue;
                double hi, lo;
                dd_add(col_hi[i], col_lo[i] + l_lo[pj], l_hi[pj], &hi, &lo);
                log_dd_add(&l_hi[ij], &l_lo[ij], hi, lo);
            }
        }
        for (int j = 0; j < k; j++) { /* row p, then column p, times the star */
            size_t pj = (size_t)p * k + j;
            if (l_hi[pj] > -INFINITY)
                dd_add(l_hi[pj], l_lo[pj], star, &l_hi[pj], &l_lo[pj]);
        }
        for (int i = 0; i < k; i++)
            if (i != p) {
                l_hi[(size_t)i * k + p] = col_hi[i];
                l_lo[(size_t)i * k + p] = col_lo[i];
            }
    }
    for (size_t at = 0; at < kk; at++) {
        w_hi[at] = l_hi[at];
        w_lo[at] = l_lo[at];
    }
    for (int f = 0; f < k; f++) /* the empty path: W = I + T^+ */
        log_dd_add(&w_hi[(size_t)f * k + f], &w_lo[(size_t)f * k + f], 0, 0);
    return 1;
}

int silent_scc_converges(Arena *a, const SilentScc *c)
{
    size_t kk = (size_t)c->k * c->k;
    double *hi = ARENA_ARRAY(a, double, kk ? kk : 1), *lo = ARENA_ARRAY(a, double, kk ? kk : 1);
    return silent_scc_closure(a, c, hi, lo);
}

void silent_sccs_of(Arena *a, const IrModel *m, SilentSccs *out)
{
    int n = m->n_states;
    Graph g = graph_of_moves(a, m, 1);
    int *comp = ARENA_ARRAY(a, int, n ? n : 1);
    int n_comp = graph_scc(a, &g, comp);
    int *size = ARENA_ARRAY(a, int, n_comp + 1), *looped = ARENA_ARRAY(a, int, n_comp + 1);
    for (int v = 0; v < n; v++)
        size[comp[v]]++;
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        if (mv->emission < 0 && mv->from == mv->to && !m->states[mv->from].folded)
            looped[comp[mv->from]] = 1;
    }
    /* the sets kept, numbered in the order of the components */
    int *set = ARENA_ARRAY(a, int, n_comp + 1), count = 0;
    for (int c = 0; c < n_comp; c++)
        set[c] = size[c] >= 2 || looped[c] ? count++ : -1;
    out->count = count;
    out->member_start = ARENA_ARRAY(a, int, count + 1);
    out->move_start = ARENA_ARRAY(a, int, count + 1);
    out->local = ARENA_ARRAY(a, int, n ? n : 1);
    int total = 0;
    for (int v = 0; v < n; v++) {
        out->local[v] = -1;
        if (!m->states[v].folded && set[comp[v]] >= 0) {
            out->member_start[set[comp[v]] + 1]++;
            total++;
        }
    }
    for (int i = 0; i < count; i++)
        out->member_start[i + 1] += out->member_start[i];
    out->members = ARENA_ARRAY(a, int, total ? total : 1);
    int *fill = ARENA_ARRAY(a, int, count + 1);
    for (int v = 0; v < n; v++)
        if (!m->states[v].folded && set[comp[v]] >= 0) {
            int i = set[comp[v]];
            out->local[v] = fill[i];
            out->members[out->member_start[i] + fill[i]++] = v;
        }
    int inner = 0;
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        if (mv->emission < 0 && out->local[mv->from] >= 0 && out->local[mv->to] >= 0 &&
            comp[mv->from] == comp[mv->to]) {
            out->move_start[set[comp[mv->from]] + 1]++;
            inner++;
        }
    }
    for (int i = 0; i < count; i++)
        out->move_start[i + 1] += out->move_start[i];
    out->moves = ARENA_ARRAY(a, int, inner ? inner : 1);
    memset(fill, 0, sizeof(int) * (size_t)(count + 1));
    for (int i = 0; i < m->n_moves; i++) {
        const IrMove *mv = &m->moves[i];
        if (mv->emission < 0 && out->local[mv->from] >= 0 && out->local[mv->to] >= 0 &&
            comp[mv->from] == comp[mv->to]) {
            int c = set[comp[mv->from]];
            out->moves[out->move_start[c] + fill[c]++] = i;
        }
    }
}
