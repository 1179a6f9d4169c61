/* fb.c: forward-backward over a model as written, for posteriors and
 * expected counts (fb.h). Columns are scaled to sum to 1; silent cycles are
 * summed exactly through the inverse of (I - W) of each cycle's states. */
#include "fb.h"
#include "hmmrt_scan.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

hmmrt_model_move *hmmrt_dense_moves(const hmmrt_model *m, int *n_moves)
{
    const hmmrt_dense *d = m->dense;
    size_t n = (size_t)d->n, count = 0, cap = (n + 1) * (n + 1);
    hmmrt_model_move *moves = malloc(cap * sizeof *moves);
    if (!moves)
        return NULL;
    for (size_t k = 0; k <= n; k++) { /* k = 0: the start; k: emitting state k - 1 */
        int from = k ? d->state_of[k - 1] : d->start;
        for (size_t j = 0; j <= n; j++) {
            double w = k == 0 ? (j < n ? d->start_w[j] : d->start_end)
                              : (j < n ? d->matrix[(k - 1) * n + j] : d->end_w[k - 1]);
            if (w == -INFINITY)
                continue;
            int to = j < n ? d->state_of[j] : d->end;
            moves[count++] = (hmmrt_model_move){from, to, m->state_emission[to], exp(w)};
        }
    }
    *n_moves = (int)count;
    return moves;
}

/* Compressed rows: the moves i with keep(i) listed under key(i). */
static int index_by(int n_states, int n_moves, const int *key, int **start, int **list)
{
    *start = calloc((size_t)n_states + 1, sizeof **start);
    *list = malloc(((size_t)n_moves + 1) * sizeof **list);
    int *next = malloc(((size_t)n_states + 1) * sizeof *next);
    if (!*start || !*list || !next) {
        free(next);
        return -1;
    }
    for (int i = 0; i < n_moves; i++)
        if (key[i] >= 0)
            (*start)[key[i] + 1]++;
    for (int s = 0; s < n_states; s++)
        (*start)[s + 1] += (*start)[s];
    memcpy(next, *start, (size_t)n_states * sizeof *next);
    for (int i = 0; i < n_moves; i++)
        if (key[i] >= 0)
            (*list)[next[key[i]]++] = i;
    free(next);
    return 0;
}

/* The moves on some path from the start to the end: the others carry no
 * probability, and leaving them out keeps the columns' scale for the paths
 * that count (a state that cannot reach the end, gathering most of a
 * column, would otherwise push the end's share below float's or double's
 * range on long sequences). Their expected counts stay 0. */
static int find_live(hmmrt_fb *fb)
{
    int n = fb->n, nm = fb->n_moves;
    int *from = malloc(((size_t)nm + 1) * sizeof *from), *to = malloc(((size_t)nm + 1) * sizeof *to);
    int *out_start = NULL, *out = NULL, *in_start = NULL, *in = NULL;
    unsigned char *ahead = calloc((size_t)n + 1, 1), *behind = calloc((size_t)n + 1, 1);
    int *queue = malloc(((size_t)n + 1) * sizeof *queue);
    fb->live = malloc((size_t)nm + 1);
    int ok = from && to && ahead && behind && queue && fb->live;
    for (int i = 0; ok && i < nm; i++)
        from[i] = fb->moves[i].from, to[i] = fb->moves[i].to;
    ok = ok && index_by(n, nm, from, &out_start, &out) == 0 && index_by(n, nm, to, &in_start, &in) == 0;
    if (ok) {
        /* reachable from the start, along moves out */
        int head = 0, tail = 0;
        ahead[fb->start] = 1, queue[tail++] = fb->start;
        while (head < tail) {
            int s = queue[head++];
            for (int j = out_start[s]; j < out_start[s + 1]; j++)
                if (!ahead[to[out[j]]])
                    ahead[to[out[j]]] = 1, queue[tail++] = to[out[j]];
        }
        /* reaching the end, along moves in */
        head = tail = 0;
        behind[fb->end] = 1, queue[tail++] = fb->end;
        while (head < tail) {
            int s = queue[head++];
            for (int j = in_start[s]; j < in_start[s + 1]; j++)
                if (!behind[from[in[j]]])
                    behind[from[in[j]]] = 1, queue[tail++] = from[in[j]];
        }
        for (int i = 0; i < nm; i++)
            fb->live[i] = ahead[from[i]] && behind[to[i]];
    }
    free(from), free(to), free(out_start), free(out), free(in_start), free(in);
    free(ahead), free(behind), free(queue);
    return ok ? 0 : -1;
}

/* Tarjan's strongly connected components of the silent moves, without
 * recursion (a chain of 100,000 silent states would overflow the stack).
 * Components come out sinks first; comp_of receives each state's. */
static int silent_components(hmmrt_fb *fb, const int *succ_start, const int *succ, int *order,
                             int *n_order)
{
    int n = fb->n;
    int *index = malloc((size_t)n * sizeof *index), *low = malloc((size_t)n * sizeof *low);
    int *stack = malloc((size_t)n * sizeof *stack), *on = calloc((size_t)n, sizeof *on);
    int *call = malloc((size_t)n * sizeof *call), *edge = malloc((size_t)n * sizeof *edge);
    if (!index || !low || !stack || !on || !call || !edge) {
        free(index), free(low), free(stack), free(on), free(call), free(edge);
        return -1;
    }
    for (int s = 0; s < n; s++)
        index[s] = -1;
    int counter = 0, top = 0, comps = 0;
    *n_order = 0;
    for (int root = 0; root < n; root++) {
        if (index[root] >= 0)
            continue;
        int depth = 0;
        call[0] = root;
        edge[0] = succ_start[root];
        index[root] = low[root] = counter++;
        stack[top++] = root;
        on[root] = 1;
        while (depth >= 0) {
            int v = call[depth];
            if (edge[depth] < succ_start[v + 1]) {
                int w = fb->moves[succ[edge[depth]++]].to;
                if (index[w] < 0) {
                    index[w] = low[w] = counter++;
                    stack[top++] = w;
                    on[w] = 1;
                    depth++;
                    call[depth] = w;
                    edge[depth] = succ_start[w];
                } else if (on[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            if (low[v] == index[v]) { /* v roots a component */
                int w;
                do {
                    w = stack[--top];
                    on[w] = 0;
                    fb->comp_of[w] = comps;
                    order[(*n_order)++] = w;
                } while (w != v);
                order[(*n_order)++] = -1; /* end of the component */
                comps++;
            }
            depth--;
            if (depth >= 0 && low[v] < low[call[depth]])
                low[call[depth]] = low[v];
        }
    }
    free(index), free(low), free(stack), free(on), free(call), free(edge);
    return comps;
}

/* Orders the states that take part in silent moves into components, the
 * first components first, and indexes the silent moves between them. */
static int order_silent(hmmrt_fb *fb)
{
    int n = fb->n;
    int *from = malloc(((size_t)fb->n_moves + 1) * sizeof *from);
    int *to = malloc(((size_t)fb->n_moves + 1) * sizeof *to);
    int *succ_start = NULL, *succ = NULL;
    int *order = malloc((2 * (size_t)n + 1) * sizeof *order);
    int *touched = calloc((size_t)n, sizeof *touched);
    fb->comp_of = malloc((size_t)n * sizeof *fb->comp_of);
    int ok = from && to && order && touched && fb->comp_of;
    if (ok) {
        for (int i = 0; i < fb->n_moves; i++) {
            int silent = fb->moves[i].emission < 0 && fb->live[i];
            from[i] = silent ? fb->moves[i].from : -1;
            if (silent)
                touched[fb->moves[i].from] = touched[fb->moves[i].to] = 1;
        }
        ok = index_by(n, fb->n_moves, from, &succ_start, &succ) == 0;
    }
    int n_order = 0, comps = ok ? silent_components(fb, succ_start, succ, order, &n_order) : -1;
    ok = comps >= 0;
    if (ok) {
        /* Tarjan gives sinks first: the components in reverse, keeping only
         * those that touch a silent move. */
        fb->comp_start = malloc(((size_t)comps + 1) * sizeof *fb->comp_start);
        fb->comp_state = malloc(((size_t)n + 1) * sizeof *fb->comp_state);
        int *rank = malloc(((size_t)comps + 1) * sizeof *rank);
        ok = fb->comp_start && fb->comp_state && rank;
        int c = 0, k = 0, end = n_order;
        while (ok && end > 0) {
            int begin = end - 1; /* order[end - 1] is the -1 closing the last component */
            while (begin > 0 && order[begin - 1] != -1)
                begin--;
            int used = 0;
            for (int j = begin; j < end - 1; j++)
                used |= touched[order[j]];
            int old = fb->comp_of[order[begin]];
            if (used) {
                fb->comp_start[c] = k;
                for (int j = begin; j < end - 1; j++)
                    fb->comp_state[k++] = order[j];
                rank[old] = c++;
            } else {
                rank[old] = -1;
            }
            end = begin;
        }
        if (ok) {
            fb->comp_start[c] = k;
            fb->n_comps = c;
            for (int s = 0; s < n; s++)
                fb->comp_of[s] = rank[fb->comp_of[s]];
        }
        free(rank);
    }
    if (ok) {
        /* silent moves between components, into (forward) and out of (backward) each state */
        for (int i = 0; i < fb->n_moves; i++) {
            const hmmrt_model_move *mv = &fb->moves[i];
            int between = mv->emission < 0 && fb->live[i] &&
                          fb->comp_of[mv->from] != fb->comp_of[mv->to];
            to[i] = between ? mv->to : -1;
            from[i] = between ? mv->from : -1;
        }
        ok = index_by(n, fb->n_moves, to, &fb->in_start, &fb->in) == 0 &&
             index_by(n, fb->n_moves, from, &fb->out_start, &fb->out) == 0;
    }
    free(from), free(to), free(succ_start), free(succ), free(order), free(touched);
    return ok ? 0 : -1;
}

/* The matrix of the dense form from the weights (after every update). */
static void fill_matrix(hmmrt_fb *fb)
{
    size_t n = (size_t)fb->n;
    for (size_t k = 0; k < n * n; k++)
        fb->matrix[k] = fb->move_at[k] >= 0 ? fb->w[fb->move_at[k]] : 0.0;
}

/* The path sums of each silent cycle: (I - W)^-1 over its states, in long
 * double (Gauss-Jordan with partial pivoting). A cycle whose weights
 * multiply to 1 or more has no finite, non-negative inverse. */
int hmmrt_fb_close_cycles(hmmrt_fb *fb, char *err, size_t errlen)
{
    if (fb->dense)
        fill_matrix(fb);
    for (int c = 0; c < fb->n_comps; c++) {
        if (fb->closure_at[c] == (size_t)-1)
            continue;
        const int *st = fb->comp_state + fb->comp_start[c];
        int m = fb->comp_start[c + 1] - fb->comp_start[c];
        long double *a = calloc((size_t)m * (size_t)m * 2, sizeof *a);
        if (!a) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        size_t w2 = 2 * (size_t)m; /* row width: [I - W | I] */
        for (int r = 0; r < m; r++) {
            a[r * w2 + r] = 1;
            a[r * w2 + m + r] = 1;
        }
        /* W: the component's own silent moves (fb->inner), by their ends' places in st */
        for (int j = fb->inner_start[c]; j < fb->inner_start[c + 1]; j++) {
            const hmmrt_model_move *mv = &fb->moves[fb->inner[j]];
            int r = 0, col = 0;
            while (st[r] != mv->from)
                r++;
            while (st[col] != mv->to)
                col++;
            a[r * w2 + col] -= fb->w[fb->inner[j]];
        }
        int diverges = 0;
        for (int p = 0; p < m && !diverges; p++) {
            int best = p;
            for (int r = p + 1; r < m; r++)
                if (fabsl(a[r * w2 + p]) > fabsl(a[best * w2 + p]))
                    best = r;
            if (!(fabsl(a[best * w2 + p]) > 0)) {
                diverges = 1;
                break;
            }
            if (best != p)
                for (size_t j = 0; j < w2; j++) {
                    long double t = a[p * w2 + j];
                    a[p * w2 + j] = a[best * w2 + j];
                    a[best * w2 + j] = t;
                }
            long double pivot = a[p * w2 + p];
            for (size_t j = 0; j < w2; j++)
                a[p * w2 + j] /= pivot;
            for (int r = 0; r < m; r++) {
                long double f = a[r * w2 + p];
                if (r == p || f == 0)
                    continue;
                for (size_t j = 0; j < w2; j++)
                    a[r * w2 + j] -= f * a[p * w2 + j];
            }
        }
        double *k = fb->closure + fb->closure_at[c];
        for (int r = 0; r < m && !diverges; r++)
            for (int j = 0; j < m; j++) {
                long double v = a[r * w2 + m + j];
                /* a convergent sum of non-negative terms: a negative or
                 * infinite entry means the series diverges */
                if (!isfinite((double)v) || v < -1e-12L)
                    diverges = 1;
                k[r * m + j] = v < 0 ? 0.0 : (double)v;
            }
        free(a);
        if (diverges) {
            snprintf(err, errlen,
                     "the silent cycle through state '%s' has weights that multiply to 1 or more: "
                     "the sum over its paths diverges",
                     fb->names ? fb->names[st[0]] : "?");
            return -1;
        }
    }
    return 0;
}

void hmmrt_fb_free(hmmrt_fb *fb)
{
    if (!fb)
        return;
    free(fb->moves), free(fb->w), free(fb->e);
    free(fb->emit_out_start), free(fb->emit_out), free(fb->silent);
    free(fb->comp_start), free(fb->comp_state), free(fb->comp_of);
    free(fb->in_start), free(fb->in), free(fb->out_start), free(fb->out);
    free(fb->closure_at), free(fb->closure);
    free(fb->inner_start), free(fb->inner), free(fb->live);
    free(fb->matrix), free(fb->move_at), free(fb->state_table);
    free(fb);
}

/* Takes the dense form when the model fits it (hmmrt_fb.dense); -1 when
 * memory runs out. */
static int make_dense(hmmrt_fb *fb)
{
    size_t n = (size_t)fb->n, emitting = 0;
    /* below 16 states the move lists are as short as the rows (the casino's
     * posterior took 1.17 s with the matrix, 0.96 s without, on 16 threads) */
    if (n < 16 || n > 2048)
        return 0;
    for (int i = 0; i < fb->n_moves; i++)
        emitting += fb->moves[i].emission >= 0 && fb->live[i];
    if (emitting * 4 < n * n)
        return 0;
    fb->state_table = malloc(n * sizeof *fb->state_table);
    fb->move_at = malloc(n * n * sizeof *fb->move_at);
    fb->matrix = calloc(n * n, sizeof *fb->matrix);
    if (!fb->state_table || !fb->move_at || !fb->matrix)
        return -1;
    for (size_t q = 0; q < n; q++)
        fb->state_table[q] = -1;
    for (size_t k = 0; k < n * n; k++)
        fb->move_at[k] = -1;
    for (int i = 0; i < fb->n_moves; i++) {
        const hmmrt_model_move *mv = &fb->moves[i];
        if (mv->emission < 0 || !fb->live[i])
            continue;
        if (fb->state_table[mv->to] >= 0 && fb->state_table[mv->to] != mv->emission)
            return 0; /* two tables into one state: the move lists serve */
        fb->state_table[mv->to] = mv->emission;
        fb->move_at[(size_t)mv->from * n + (size_t)mv->to] = i;
    }
    fb->dense = 1;
    return 0;
}

hmmrt_fb *hmmrt_fb_new(const hmmrt_model *m, int n_symbols, char *err, size_t errlen)
{
    hmmrt_fb *fb = calloc(1, sizeof *fb);
    if (!fb) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    fb->n = m->n_states;
    fb->K = n_symbols;
    fb->names = m->state_names;
    fb->start = m->start;
    fb->end = m->end;
    fb->n_emissions = m->n_emissions;
    if (m->moves) {
        fb->n_moves = m->n_moves;
        fb->moves = malloc(((size_t)m->n_moves + 1) * sizeof *fb->moves);
        if (fb->moves)
            memcpy(fb->moves, m->moves, (size_t)m->n_moves * sizeof *fb->moves);
    } else if (m->dense) {
        fb->moves = hmmrt_dense_moves(m, &fb->n_moves);
    }
    size_t values = (size_t)fb->n_emissions * (size_t)fb->K;
    int ok = fb->moves != NULL;
    fb->w = ok ? malloc(((size_t)fb->n_moves + 1) * sizeof *fb->w) : NULL;
    fb->e = ok ? malloc((values + 1) * sizeof *fb->e) : NULL;
    int *key = ok ? malloc(((size_t)fb->n_moves + 1) * sizeof *key) : NULL;
    unsigned char *self = ok ? calloc((size_t)fb->n + 1, 1) : NULL;
    fb->silent = ok ? malloc(((size_t)fb->n_moves + 1) * sizeof *fb->silent) : NULL;
    ok = ok && fb->w && fb->e && key && self && fb->silent && find_live(fb) == 0;
    if (ok && values)
        memcpy(fb->e, m->emissions, values * sizeof *fb->e);
    for (int i = 0; ok && i < fb->n_moves; i++) {
        const hmmrt_model_move *mv = &fb->moves[i];
        fb->w[i] = mv->weight;
        key[i] = mv->emission >= 0 && fb->live[i] ? mv->from : -1;
        if (mv->emission < 0 && fb->live[i]) {
            fb->silent[fb->n_silent++] = i;
            if (mv->from == mv->to)
                self[mv->from] = 1;
        }
    }
    ok = ok && index_by(fb->n, fb->n_moves, key, &fb->emit_out_start, &fb->emit_out) == 0;
    free(key);
    ok = ok && order_silent(fb) == 0;
    if (ok) {
        fb->closure_at = malloc(((size_t)fb->n_comps + 1) * sizeof *fb->closure_at);
        ok = fb->closure_at != NULL;
    }
    size_t cells = 0;
    for (int c = 0; ok && c < fb->n_comps; c++) {
        int size = fb->comp_start[c + 1] - fb->comp_start[c];
        int loop = size > 1 || self[fb->comp_state[fb->comp_start[c]]];
        fb->closure_at[c] = loop ? cells : (size_t)-1;
        cells += loop ? (size_t)size * (size_t)size : 0;
        if (size > fb->max_comp)
            fb->max_comp = size;
    }
    free(self);
    if (ok) {
        fb->closure = malloc((cells + 1) * sizeof *fb->closure);
        ok = fb->closure != NULL;
    }
    if (ok) { /* silent moves within a component, by component */
        int *comp = malloc(((size_t)fb->n_moves + 1) * sizeof *comp);
        ok = comp != NULL;
        for (int i = 0; ok && i < fb->n_moves; i++) {
            const hmmrt_model_move *mv = &fb->moves[i];
            comp[i] = mv->emission < 0 && fb->live[i] && fb->comp_of[mv->from] == fb->comp_of[mv->to]
                          ? fb->comp_of[mv->from]
                          : -1;
        }
        ok = ok && index_by(fb->n_comps, fb->n_moves, comp, &fb->inner_start, &fb->inner) == 0;
        free(comp);
    }
    ok = ok && make_dense(fb) == 0;
    if (!ok) {
        snprintf(err, errlen, "out of memory");
        hmmrt_fb_free(fb);
        return NULL;
    }
    if (hmmrt_fb_close_cycles(fb, err, errlen) != 0) {
        hmmrt_fb_free(fb);
        return NULL;
    }
    return fb;
}

/* ---- forward and backward over one sequence --------------------------------- */

size_t hmmrt_fb_scratch(const hmmrt_fb *fb, int64_t L)
{
    size_t n = (size_t)fb->n, columns = (size_t)L + 1;
    return columns * n          /* the forward table (then the posteriors) */
           + columns            /* ln of each column's scale */
           + 2 * n              /* two backward columns */
           + (size_t)fb->max_comp + 8
           + (fb->dense ? n * n + 2 * n : 0); /* dense: the moves' counts, two rows */
}

/* Silent moves within a column, forward: each component in order gathers
 * what enters its states (emitting moves, already in col, and silent moves
 * from earlier components), then its path sums spread it. */
void hmmrt_fb_silent_forward(const hmmrt_fb *fb, double *col, double *g)
{
    for (int c = 0; c < fb->n_comps; c++) {
        const int *st = fb->comp_state + fb->comp_start[c];
        int m = fb->comp_start[c + 1] - fb->comp_start[c];
        for (int k = 0; k < m; k++) {
            int v = st[k];
            double sum = col[v];
            for (int j = fb->in_start[v]; j < fb->in_start[v + 1]; j++)
                sum += col[fb->moves[fb->in[j]].from] * fb->w[fb->in[j]];
            g[k] = sum;
        }
        if (fb->closure_at[c] == (size_t)-1) {
            col[st[0]] = g[0];
            continue;
        }
        const double *paths = fb->closure + fb->closure_at[c];
        for (int k = 0; k < m; k++) {
            double sum = 0;
            for (int u = 0; u < m; u++)
                sum += g[u] * paths[(size_t)u * m + k];
            col[st[k]] = sum;
        }
    }
}

/* The same backward: col holds what each state gets from the next column
 * and receives the whole backward value. */
void hmmrt_fb_silent_backward(const hmmrt_fb *fb, double *col, double *g)
{
    for (int c = fb->n_comps - 1; c >= 0; c--) {
        const int *st = fb->comp_state + fb->comp_start[c];
        int m = fb->comp_start[c + 1] - fb->comp_start[c];
        for (int k = 0; k < m; k++) {
            int u = st[k];
            double sum = col[u];
            for (int j = fb->out_start[u]; j < fb->out_start[u + 1]; j++)
                sum += fb->w[fb->out[j]] * col[fb->moves[fb->out[j]].to];
            g[k] = sum;
        }
        if (fb->closure_at[c] == (size_t)-1) {
            col[st[0]] = g[0];
            continue;
        }
        const double *paths = fb->closure + fb->closure_at[c];
        for (int r = 0; r < m; r++) {
            double sum = 0;
            for (int k = 0; k < m; k++)
                sum += paths[(size_t)r * m + k] * g[k];
            col[st[r]] = sum;
        }
    }
}

/* Divides the column by its sum; returns ln of the sum, -inf when it is 0. */
double hmmrt_fb_scale_column(double *col, int n)
{
    double sum = 0;
    for (int q = 0; q < n; q++)
        sum += col[q];
    if (!(sum > 0) || !isfinite(sum))
        return -INFINITY;
    double inv = 1.0 / sum;
    for (int q = 0; q < n; q++)
        col[q] *= inv;
    return log(sum);
}

/* Expected uses of the silent moves within column i. */
void hmmrt_fb_count_silent(const hmmrt_fb *fb, const double *f, const double *b, double inv_p,
                         double *move_counts)
{
    for (int j = 0; j < fb->n_silent; j++) {
        int i = fb->silent[j];
        move_counts[i] += f[fb->moves[i].from] * fb->w[i] * b[fb->moves[i].to] * inv_p;
    }
}

/* Where the emission values of a run come from: symbol codes x into the
 * model's tables (e = fb->e, em_step K, pos_step 1), or, for a real
 * alphabet, a row of values per position (x NULL, e = rows, em_step 1,
 * pos_step n_emissions). value(em, i) = e[em * em_step + code(i) * pos_step],
 * and the emission counts use the same index. */
typedef struct emit_src {
    const double *e;
    size_t em_step, pos_step;
    const uint8_t *x;
    int symbols; /* x is read (a constant in each caller of run, which is
                    inlined into each: the symbols' loops are as before) */
} emit_src;

/* The index of table em's value at position i (0-based). */
static inline size_t value_at(const emit_src *s, int em, int64_t i)
{
    return (size_t)em * s->em_step + (s->symbols ? (size_t)s->x[i] : (size_t)i) * s->pos_step;
}

/* One backward step of the dense form, at position i (0-based): b_cur
 * receives each state's share of b_next through the matrix (before its
 * silent moves); the uses of the moves k -> q (f[k] w e b[q] / P) go to
 * counts[k * n + q], their sums by q to post[q] and to the emission counts. */
static inline __attribute__((always_inline)) void
dense_backward(const hmmrt_fb *fb, const emit_src *src, int64_t i, double scale_p,
               double inv_scale, const double *fi, const double *b_next, double *b_cur,
               double *post, double *counts, double *emission_counts, double *carry,
               double *into)
{
    const size_t n = (size_t)fb->n;
    for (size_t q = 0; q < n; q++) {
        const int t = fb->state_table[q];
        carry[q] = t < 0 ? 0.0 : src->e[value_at(src, t, i)] * b_next[q];
        into[q] = 0;
    }
    const int uses = counts || post;
    for (size_t k = 0; k < n; k++) {
        const double *w = fb->matrix + k * n;
        double h = 0;
        for (size_t q = 0; q < n; q++)
            h += w[q] * carry[q];
        b_cur[k] = h * inv_scale;
        const double from = fi[k] * scale_p;
        if (!uses || from == 0)
            continue;
        double *c = counts ? counts + k * n : NULL;
        for (size_t q = 0; q < n; q++) {
            const double use = from * w[q] * carry[q];
            into[q] += use;
            if (c)
                c[q] += use;
        }
    }
    for (size_t q = 0; q < n; q++) {
        if (post)
            post[q] = into[q];
        if (counts && fb->state_table[q] >= 0)
            emission_counts[value_at(src, fb->state_table[q], i)] += into[q];
    }
}

static inline __attribute__((always_inline)) double
run(const hmmrt_fb *fb, const emit_src *src, int64_t L, double *scratch, double *move_counts,
    double *emission_counts, double **posterior)
{
    const size_t n = (size_t)fb->n;
    double *f = scratch, *ls = f + ((size_t)L + 1) * n;
    double *b_next = ls + L + 1, *b_cur = b_next + n, *g = b_cur + n;
    /* dense: the moves' counts as a matrix, what a move into q carries, and
     * each q's share of the column */
    double *dense_counts = g + fb->max_comp + 8, *carry = dense_counts + (fb->dense ? n * n : 0);
    double *into = carry + n;
    if (fb->dense && move_counts)
        memset(dense_counts, 0, n * n * sizeof *dense_counts);
    if (posterior)
        *posterior = NULL;

    /* forward: f[i * n + q], each column scaled to sum to 1 */
    memset(f, 0, n * sizeof *f);
    f[fb->start] = 1;
    hmmrt_fb_silent_forward(fb, f, g);
    ls[0] = hmmrt_fb_scale_column(f, (int)n);
    if (ls[0] == -INFINITY)
        return -INFINITY;
    for (int64_t i = 1; i <= L; i++) {
        const double *prev = f + (size_t)(i - 1) * n;
        double *row = f + (size_t)i * n;
        memset(row, 0, n * sizeof *row);
        if (fb->dense) {
            for (size_t k = 0; k < n; k++) {
                const double a = prev[k];
                const double *w = fb->matrix + k * n;
                if (a != 0)
                    for (size_t q = 0; q < n; q++)
                        row[q] += a * w[q];
            }
            for (size_t q = 0; q < n; q++)
                row[q] = fb->state_table[q] < 0
                             ? 0.0
                             : row[q] * src->e[value_at(src, fb->state_table[q], i - 1)];
        } else {
            for (size_t p = 0; p < n; p++) {
                if (prev[p] == 0)
                    continue;
                for (int j = fb->emit_out_start[p]; j < fb->emit_out_start[p + 1]; j++) {
                    const int mi = fb->emit_out[j];
                    const hmmrt_model_move *mv = &fb->moves[mi];
                    row[mv->to] += prev[p] * fb->w[mi] * src->e[value_at(src, mv->emission, i - 1)];
                }
            }
        }
        hmmrt_fb_silent_forward(fb, row, g);
        ls[i] = hmmrt_fb_scale_column(row, (int)n);
        if (ls[i] == -INFINITY)
            return -INFINITY;
    }
    const double p_end = f[(size_t)L * n + fb->end];
    if (!(p_end > 0))
        return -INFINITY;
    double lnp = log(p_end);
    for (int64_t i = 0; i <= L; i++)
        lnp += ls[i];
    if (!move_counts && !posterior)
        return lnp;

    /* backward, with each column's scale, gathering counts and posteriors:
     * a move used at position i has probability f[i'][from] w e b[i][to] / P */
    const double inv_p = 1.0 / p_end;
    memset(b_cur, 0, n * sizeof *b_cur);
    b_cur[fb->end] = 1;
    hmmrt_fb_silent_backward(fb, b_cur, g);
    if (move_counts)
        hmmrt_fb_count_silent(fb, f + (size_t)L * n, b_cur, inv_p, move_counts);
    for (int64_t i = L - 1; i >= 0; i--) {
        double *swap = b_next;
        b_next = b_cur;
        b_cur = swap;
        memset(b_cur, 0, n * sizeof *b_cur);
        const double *fi = f + (size_t)i * n;
        double *post = posterior ? f + (size_t)(i + 1) * n : NULL; /* row i + 1 is done with */
        if (post)
            memset(post, 0, n * sizeof *post);
        const double inv_scale = exp(-ls[i + 1]);
        if (fb->dense) {
            dense_backward(fb, src, i, inv_scale * inv_p, inv_scale, fi, b_next, b_cur, post,
                           move_counts ? dense_counts : NULL, emission_counts, carry, into);
            hmmrt_fb_silent_backward(fb, b_cur, g);
            if (move_counts)
                hmmrt_fb_count_silent(fb, fi, b_cur, inv_p, move_counts);
            continue;
        }
        for (size_t p = 0; p < n; p++) {
            double h = 0;
            for (int j = fb->emit_out_start[p]; j < fb->emit_out_start[p + 1]; j++) {
                const int mi = fb->emit_out[j];
                const hmmrt_model_move *mv = &fb->moves[mi];
                const size_t ev = value_at(src, mv->emission, i);
                const double t = fb->w[mi] * src->e[ev] * b_next[mv->to] * inv_scale;
                h += t;
                if (fi[p] == 0)
                    continue;
                const double use = fi[p] * t * inv_p;
                if (move_counts) {
                    move_counts[mi] += use;
                    emission_counts[ev] += use;
                }
                if (post)
                    post[mv->to] += use;
            }
            b_cur[p] = h;
        }
        hmmrt_fb_silent_backward(fb, b_cur, g);
        if (move_counts)
            hmmrt_fb_count_silent(fb, fi, b_cur, inv_p, move_counts);
    }
    if (fb->dense && move_counts)
        for (size_t k = 0; k < n * n; k++)
            if (fb->move_at[k] >= 0)
                move_counts[fb->move_at[k]] += dense_counts[k];
    if (posterior)
        *posterior = f + n;
    return lnp;
}

double hmmrt_fb_run(const hmmrt_fb *fb, const uint8_t *x, int64_t L, double *scratch,
                    double *move_counts, double *emission_counts, double **posterior)
{
    /* one long sequence over every thread where the rule takes it (scan_fb.c; NAN: not) */
    const double scanned = hmmrt_scan_fb_run(fb, x, L, scratch, move_counts, emission_counts,
                                             posterior);
    if (!isnan(scanned))
        return scanned;
    const emit_src src = {fb->e, (size_t)fb->K, 1, x, 1};
    return run(fb, &src, L, scratch, move_counts, emission_counts, posterior);
}

double hmmrt_fb_run_rows(const hmmrt_fb *fb, const double *rows, int64_t L, double *scratch,
                         double *move_counts, double *use_rows, double **posterior)
{
    const emit_src src = {rows, 1, (size_t)fb->n_emissions, NULL, 0};
    return run(fb, &src, L, scratch, move_counts, use_rows, posterior);
}
