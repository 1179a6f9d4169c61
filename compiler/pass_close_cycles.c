/* pass_close_cycles.c: closes silent cycles exactly. Within one position,
 * the silent moves of a strongly connected set C of states (a cycle, or a
 * silent self-loop) make the values of C the solution of v = a + v S, where a
 * is what enters C from outside and S the weights of the moves inside C:
 *   forward, backward: v = a (I - S)^-1, a finite sum because sema checked
 *                      that the cycles converge;
 *   viterbi:           v[j] = max_i a[i] * best(i -> j), best over simple
 *                      paths inside C (a cycle never improves a path).
 * For every state c of C the pass adds a silent state c' (aux_of = c) that
 * gathers what enters c from outside C, drops the moves inside C, and adds a
 * closing move c'_i -> c_j weighted (I - S)^-1[i][j] for sums and
 * best(i -> j) for viterbi, whose via lists the source states of that best
 * path. Afterwards the silent moves form no cycle. */
#include "pass.h"

#include <math.h>
#include <string.h>

#include "graph.h"

/* Inverts the n x n matrix I - S in place of a (a holds S on entry).
 * Returns 0 when a pivot vanishes (cannot happen after sema's check). */
static int invert_identity_minus(Arena *arena, double *a, int n)
{
    double *inv = ARENA_ARRAY(arena, double, (size_t)n * n);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            a[(size_t)i * n + j] = (i == j) - a[(size_t)i * n + j];
        inv[(size_t)i * n + i] = 1;
    }
    for (int k = 0; k < n; k++) {
        int piv = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(a[(size_t)i * n + k]) > fabs(a[(size_t)piv * n + k]))
                piv = i;
        if (a[(size_t)piv * n + k] == 0)
            return 0;
        for (int j = 0; j < n; j++) {
            double t = a[(size_t)k * n + j];
            a[(size_t)k * n + j] = a[(size_t)piv * n + j];
            a[(size_t)piv * n + j] = t;
            t = inv[(size_t)k * n + j];
            inv[(size_t)k * n + j] = inv[(size_t)piv * n + j];
            inv[(size_t)piv * n + j] = t;
        }
        double p = a[(size_t)k * n + k];
        for (int j = 0; j < n; j++) {
            a[(size_t)k * n + j] /= p;
            inv[(size_t)k * n + j] /= p;
        }
        for (int i = 0; i < n; i++) {
            double f = a[(size_t)i * n + k];
            if (i == k || f == 0)
                continue;
            for (int j = 0; j < n; j++) {
                a[(size_t)i * n + j] -= f * a[(size_t)k * n + j];
                inv[(size_t)i * n + j] -= f * inv[(size_t)k * n + j];
            }
        }
    }
    memcpy(a, inv, sizeof(double) * (size_t)n * n);
    return 1;
}

/* Best (max-product, in logs) paths between all pairs of C, with the next
 * state of each best path for rebuilding it (Floyd-Warshall). */
static void best_paths(double *best, int *next, int n)
{
    for (int i = 0; i < n; i++) {
        best[(size_t)i * n + i] = 0; /* the empty path */
        next[(size_t)i * n + i] = i;
    }
    for (int k = 0; k < n; k++)
        for (int i = 0; i < n; i++) {
            double ik = best[(size_t)i * n + k];
            if (ik == -INFINITY)
                continue;
            for (int j = 0; j < n; j++) {
                double cand = ik + best[(size_t)k * n + j];
                if (cand > best[(size_t)i * n + j]) {
                    best[(size_t)i * n + j] = cand;
                    next[(size_t)i * n + j] = next[(size_t)i * n + k];
                }
            }
        }
}

typedef struct ModelBuilder {
    Arena *arena;
    IrModel *m;
    int cap_states, cap_moves;
} ModelBuilder;

static void reserve(ModelBuilder *b, int more_states, int more_moves)
{
    IrModel *m = b->m;
    if (m->n_states + more_states > b->cap_states) {
        b->cap_states = 2 * (m->n_states + more_states);
        IrState *s = ARENA_ARRAY(b->arena, IrState, b->cap_states);
        memcpy(s, m->states, sizeof(IrState) * (size_t)m->n_states);
        m->states = s;
    }
    if (m->n_moves + more_moves > b->cap_moves) {
        b->cap_moves = 2 * (m->n_moves + more_moves);
        IrMove *mv = ARENA_ARRAY(b->arena, IrMove, b->cap_moves);
        memcpy(mv, m->moves, sizeof(IrMove) * (size_t)m->n_moves);
        m->moves = mv;
    }
}

/* Replaces the component's inner moves by their closure. */
static void close_component(ModelBuilder *b, const int *members, int n, const int *local)
{
    Arena *a = b->arena;
    IrModel *m = b->m;
    double *sum = ARENA_ARRAY(a, double, (size_t)n * n);
    double *best = ARENA_ARRAY(a, double, (size_t)n * n);
    int *next = ARENA_ARRAY(a, int, (size_t)n * n);
    for (size_t i = 0; i < (size_t)n * n; i++)
        best[i] = -INFINITY;
    ir_model_own_moves(a, m);
    reserve(b, n, n * n);
    int first_aux = m->n_states;
    for (int i = 0; i < n; i++) {
        IrState *aux = &m->states[m->n_states++];
        *aux = m->states[members[i]];
        aux->kind = STATE_SILENT;
        aux->emission = -1;
        aux->aux_of = members[i];
    }
    int kept = 0;
    for (int i = 0; i < m->n_moves; i++) {
        IrMove mv = m->moves[i];
        int to = local[mv.to];
        if (to >= 0 && mv.emission < 0 && local[mv.from] >= 0) {
            sum[(size_t)local[mv.from] * n + to] = exp(mv.lw_sum);
            best[(size_t)local[mv.from] * n + to] = mv.lw_max;
            next[(size_t)local[mv.from] * n + to] = to;
            continue; /* a move inside C: replaced by the closure */
        }
        if (to >= 0)
            mv.to = first_aux + to; /* what enters C from outside gathers in the aux state */
        m->moves[kept++] = mv;
    }
    m->n_moves = kept;
    invert_identity_minus(a, sum, n);
    best_paths(best, next, n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (!(sum[(size_t)i * n + j] > 0))
                continue;
            IrMove *mv = &m->moves[m->n_moves++];
            memset(mv, 0, sizeof *mv);
            mv->from = first_aux + i;
            mv->to = members[j];
            mv->emission = -1;
            mv->lw_sum = log(sum[(size_t)i * n + j]);
            mv->lw_max = best[(size_t)i * n + j];
            if (i == j)
                continue; /* the best path from c to itself is to stay */
            int len = 0;
            for (int k = i; k != j; k = next[(size_t)k * n + j])
                len++;
            mv->via = ARENA_ARRAY(a, int, len);
            for (int k = i; k != j; k = next[(size_t)k * n + j])
                mv->via[mv->n_via++] = members[k];
        }
}

static void close_model(Arena *a, IrModel *m, FILE *verbose, const char *label)
{
    Graph g = graph_of_moves(a, m, 1);
    int *comp = ARENA_ARRAY(a, int, m->n_states);
    int n_comp = graph_scc(a, &g, comp);
    int *size = ARENA_ARRAY(a, int, n_comp), *looped = ARENA_ARRAY(a, int, n_comp);
    for (int v = 0; v < m->n_states; v++)
        size[comp[v]]++;
    for (int i = 0; i < m->n_moves; i++)
        if (m->moves[i].emission < 0 && m->moves[i].from == m->moves[i].to)
            looped[comp[m->moves[i].from]] = 1;
    ModelBuilder b = {a, m, m->n_states, m->n_moves};
    int n_orig = m->n_states;
    int *members = ARENA_ARRAY(a, int, n_orig);
    for (int c = 0; c < n_comp; c++) {
        if (size[c] < 2 && !looped[c])
            continue;
        int *local = ARENA_ARRAY(a, int, n_orig + m->n_states);
        int n = 0;
        for (int v = 0; v < m->n_states; v++) {
            local[v] = -1;
            if (v < n_orig && comp[v] == c) {
                local[v] = n;
                members[n++] = v;
            }
        }
        close_component(&b, members, n, local);
        if (verbose)
            fprintf(verbose, "hmmc: %s: closed the silent cycle through %d state%s starting at '%s'\n",
                    label, n, n == 1 ? "" : "s", m->states[members[0]].name);
    }
}

int pass_close_cycles(Program *p, Diag *d)
{
    for (int c = 0; c < p->n_calls; c++)
        close_model(p->arena, p->calls[c].model, p->verbose, p->calls[c].label);
    return 1;
}
