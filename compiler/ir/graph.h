/* graph.h: directed graphs over a model's states (adjacency in compressed
 * rows) and strongly connected components, for the silent-cycle check and
 * the silent-state pass's evaluation order. */
#ifndef HMMC_GRAPH_H
#define HMMC_GRAPH_H

#include "support/arena.h"
#include "ir/ir.h"

typedef struct Graph {
    int n;
    int *start; /* edges out of v: adj[start[v] .. start[v+1]-1] */
    int *adj;
} Graph;

/* The graph of the model's moves between live (not folded) states; only
 * silent moves when silent_only is set. */
Graph graph_of_moves(Arena *a, const IrModel *m, int silent_only);
/* The graph of the moves i with keep[i] (m->n_moves flags) between live states. */
Graph graph_of_kept_moves(Arena *a, const IrModel *m, const char *keep);
/* The same graph with every edge reversed. */
Graph graph_reversed(Arena *a, const Graph *g);
/* Strongly connected components: comp[v] for every vertex; components are
 * numbered so that every edge u->v between components has comp[u] > comp[v]
 * (reverse topological order). Returns the number of components. */
int graph_scc(Arena *a, const Graph *g, int *comp);
/* Marks in seen[] (n ints, zeroed by the caller) every vertex reachable from root. */
void graph_reach(Arena *a, const Graph *g, int root, int *seen);

/* Silent levels, for evaluating silent moves a level at a time: a state that
 * takes silent moves (from its sources, or backward from its destinations)
 * sits one level above the highest such state it takes them from, at 0 when
 * none of those takes any. level[s] is -1 for states that take none. The
 * silent moves must form no cycle (pass_close_cycles). Returns the number of
 * levels. */
int graph_silent_levels(Arena *a, const IrModel *m, int backward, int *level);

/* For every state: whether the start state reaches it (from_start) and whether
 * it reaches the end state (to_end), along the model's moves between live
 * states. Arrays of n_states ints from the arena. */
void graph_reach_start_and_end(Arena *a, const IrModel *m, int **from_start, int **to_end);

#endif
