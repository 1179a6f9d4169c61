/* graph.c: compressed-row graphs over model states, Tarjan's strongly
 * connected components (iterative: models may have 100,000 states) and
 * reachability. */
#include "ir/graph.h"

#include <string.h>

/* The moves between live states, silent ones alone when silent_only is set,
 * and of those only the moves i with keep[i] when keep is not NULL. */
static Graph moves_graph(Arena *a, const IrModel *m, int silent_only, const char *keep)
{
    Graph g = {.n = m->n_states};
    g.start = ARENA_ARRAY(a, int, m->n_states + 1);
    g.adj = ARENA_ARRAY(a, int, m->n_moves ? m->n_moves : 1);
    for (int pass = 0; pass < 2; pass++) {
        int *fill = ARENA_ARRAY(a, int, m->n_states);
        for (int i = 0; i < m->n_moves; i++) {
            const IrMove *mv = &m->moves[i];
            if ((silent_only && mv->emission >= 0) || (keep && !keep[i]) ||
                m->states[mv->from].folded || m->states[mv->to].folded)
                continue;
            if (pass == 0)
                g.start[mv->from + 1]++;
            else
                g.adj[g.start[mv->from] + fill[mv->from]++] = mv->to;
        }
        if (pass == 0)
            for (int v = 0; v < g.n; v++)
                g.start[v + 1] += g.start[v];
    }
    return g;
}

Graph graph_of_moves(Arena *a, const IrModel *m, int silent_only)
{
    return moves_graph(a, m, silent_only, NULL);
}

Graph graph_of_kept_moves(Arena *a, const IrModel *m, const char *keep)
{
    return moves_graph(a, m, 0, keep);
}

Graph graph_reversed(Arena *a, const Graph *g)
{
    Graph r = {.n = g->n};
    int n_edges = g->start[g->n];
    r.start = ARENA_ARRAY(a, int, g->n + 1);
    r.adj = ARENA_ARRAY(a, int, n_edges ? n_edges : 1);
    for (int e = 0; e < n_edges; e++)
        r.start[g->adj[e] + 1]++;
    for (int v = 0; v < g->n; v++)
        r.start[v + 1] += r.start[v];
    int *fill = ARENA_ARRAY(a, int, g->n);
    for (int u = 0; u < g->n; u++)
        for (int e = g->start[u]; e < g->start[u + 1]; e++) {
            int v = g->adj[e];
            r.adj[r.start[v] + fill[v]++] = u;
        }
    return r;
}

int graph_scc(Arena *a, const Graph *g, int *comp)
{
    int n = g->n, counter = 0, n_comp = 0, sp = 0, cp = 0;
    int *index = ARENA_ARRAY(a, int, n), *low = ARENA_ARRAY(a, int, n);
    int *on_stack = ARENA_ARRAY(a, int, n), *stack = ARENA_ARRAY(a, int, n);
    int *call_v = ARENA_ARRAY(a, int, n), *call_e = ARENA_ARRAY(a, int, n);
    for (int v = 0; v < n; v++)
        index[v] = -1;
    for (int root = 0; root < n; root++) {
        if (index[root] >= 0)
            continue;
        call_v[cp] = root;
        call_e[cp++] = g->start[root];
        index[root] = low[root] = counter++;
        stack[sp++] = root;
        on_stack[root] = 1;
        while (cp > 0) {
            int v = call_v[cp - 1];
            if (call_e[cp - 1] < g->start[v + 1]) {
                int w = g->adj[call_e[cp - 1]++];
                if (index[w] < 0) {
                    index[w] = low[w] = counter++;
                    stack[sp++] = w;
                    on_stack[w] = 1;
                    call_v[cp] = w;
                    call_e[cp++] = g->start[w];
                } else if (on_stack[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            if (low[v] == index[v]) {
                int w;
                do {
                    w = stack[--sp];
                    on_stack[w] = 0;
                    comp[w] = n_comp;
                } while (w != v);
                n_comp++;
            }
            cp--;
            if (cp > 0) {
                int parent = call_v[cp - 1];
                if (low[v] < low[parent])
                    low[parent] = low[v];
            }
        }
    }
    return n_comp;
}

void graph_reach(Arena *a, const Graph *g, int root, int *seen)
{
    int *queue = ARENA_ARRAY(a, int, g->n), head = 0, tail = 0;
    seen[root] = 1;
    queue[tail++] = root;
    while (head < tail) {
        int v = queue[head++];
        for (int e = g->start[v]; e < g->start[v + 1]; e++)
            if (!seen[g->adj[e]]) {
                seen[g->adj[e]] = 1;
                queue[tail++] = g->adj[e];
            }
    }
}

void graph_reach_start_and_end(Arena *a, const IrModel *m, int **from_start, int **to_end)
{
    Graph g = graph_of_moves(a, m, 0);
    Graph r = graph_reversed(a, &g);
    *from_start = ARENA_ARRAY(a, int, m->n_states);
    *to_end = ARENA_ARRAY(a, int, m->n_states);
    graph_reach(a, &g, m->start, *from_start);
    graph_reach(a, &r, m->end, *to_end);
}

int graph_silent_levels(Arena *a, const IrModel *m, int backward, int *level)
{
    Graph g = graph_of_moves(a, m, 1);
    Graph r = graph_reversed(a, &g);
    const Graph *from = backward ? &g : &r; /* the states each state takes silent moves from */
    int n = m->n_states, levels = 0;
    int *comp = ARENA_ARRAY(a, int, n), *by_comp = ARENA_ARRAY(a, int, n);
    int n_comp = graph_scc(a, &g, comp); /* n: no silent cycle is left */
    for (int v = 0; v < n; v++) {
        by_comp[comp[v]] = v;
        level[v] = -1;
    }
    /* components come in reverse topological order: forward walks them from
     * the last, so that a state's sources come first; backward from the first */
    for (int k = 0; k < n_comp; k++) {
        int v = by_comp[backward ? k : n_comp - 1 - k];
        if (from->start[v] == from->start[v + 1])
            continue;
        int l = 0;
        for (int e = from->start[v]; e < from->start[v + 1]; e++)
            if (level[from->adj[e]] >= 0 && level[from->adj[e]] + 1 > l)
                l = level[from->adj[e]] + 1;
        level[v] = l;
        if (l + 1 > levels)
            levels = l + 1;
    }
    return levels;
}
