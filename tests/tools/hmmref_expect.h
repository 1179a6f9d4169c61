/* hmmref_expect.h: hmmref's E-step for one sequence: the posterior of every
 * state at every position and the expected uses of every transition and every
 * (emission table, symbol) pair, three ways: forward-backward over the stored
 * scaled columns (exact), every path enumerated (--brute), or the uses along
 * the best path (--viterbi-training). Included by hmmref.c after viterbi and
 * brute_force; uses their types. */
#ifndef HMMREF_EXPECT_H
#define HMMREF_EXPECT_H

typedef enum { COUNT_EXACT, COUNT_BRUTE, COUNT_VITERBI } CountMethod;

/* What one sequence contributes. All arrays are zero when there is no path. */
typedef struct {
    long double log_p;            /* ln P(sequence), the forward score; -inf: no path */
    double viterbi;               /* the viterbi score (COUNT_VITERBI only) */
    long double *posterior;       /* length x states: [(i - 1) * states + q] */
    long double *transition_uses; /* per Model.transitions */
    long double *emission_uses;   /* emission_count x alphabet_size */
} Expectation;

/* What the E-step needs of a model, prepared once. */
typedef struct {
    const Model *m;
    SilentStates silent;
    Factored forward_system, backward_system;
    CountMethod method;
    long max_moves; /* COUNT_BRUTE: --max-moves */
} Expecter;

static Expecter make_expecter(const Model *m, CountMethod method, long max_moves)
{
    Expecter x = { m, find_silent_states(m), { 0 }, { 0 }, method, max_moves };
    if (method == COUNT_BRUTE && max_moves <= 0 && has_silent_cycle(m))
        die("--brute: the model has silent cycles; give --max-moves N");
    x.forward_system = factor_silent_system(m, &x.silent, 1);
    x.backward_system = factor_silent_system(m, &x.silent, 0);
    return x;
}

static void free_expecter(Expecter *x)
{
    free_factored(&x->forward_system);
    free_factored(&x->backward_system);
    free(x->silent.index_of_state);
    free(x->silent.state_of_index);
}

static void free_expectation(Expectation *e)
{
    free(e->posterior);
    free(e->transition_uses);
    free(e->emission_uses);
}

/* Forward-backward. With f_i and b_i the forward and backward columns after
 * i symbols (silent moves of the column included), a silent move p -> q is
 * used f_i[p] w b_i[q] / P times in column i (a silent cycle's repeated
 * visits are in f_i and b_i), and the emitting move p -> q that emits x_i
 * f_{i-1}[p] w e(x_i) b_i[q] / P times: that is also the probability that the
 * i-th emitting move is this one, so it adds to q's posterior at i. The
 * columns are scaled; each term is put together in logs. */
static void expect_exact(const Expecter *x, const int *codes, long length, Expectation *out)
{
    const Model *m = x->m;
    int n = m->state_count, k = m->alphabet_size;
    long double *f = xcalloc((size_t)(length + 1) * n, sizeof *f);
    long double *b = xcalloc((size_t)(length + 1) * n, sizeof *b);
    long double *f_scale = xcalloc(length + 1, sizeof *f_scale);
    long double *b_scale = xcalloc(length + 1, sizeof *b_scale);
    double score = forward_score(m, &x->silent, &x->forward_system, codes, length, f, f_scale);
    backward_score(m, &x->silent, &x->backward_system, codes, length, b, b_scale);
    out->log_p = -INFINITY;
    if (score > -INFINITY && f[(size_t)length * n + m->end] > 0)
        out->log_p = f_scale[length] + logl(f[(size_t)length * n + m->end]);
    for (long i = 0; i <= length && out->log_p > -INFINITY; i++) {
        for (int t = 0; t < m->transition_count; t++) {
            const Transition *tr = &m->transitions[t];
            int e = move_emission(m, tr);
            if (e >= 0 && i == 0)
                continue;
            long from_column = e >= 0 ? i - 1 : i;
            long double before = f[(size_t)from_column * n + tr->from], after = b[(size_t)i * n + tr->to];
            long double value = e >= 0 ? m->emissions[e].value[codes[i - 1]] : 1;
            if (before == 0 || after == 0 || value == 0)
                continue;
            long double uses = expl(logl(before) + f_scale[from_column] + tr->log_weight + logl(value) +
                                    logl(after) + b_scale[i] - out->log_p);
            out->transition_uses[t] += uses;
            if (e >= 0) {
                out->emission_uses[(size_t)e * k + codes[i - 1]] += uses;
                out->posterior[(size_t)(i - 1) * n + tr->to] += uses;
            }
        }
    }
    free(f);
    free(b);
    free(f_scale);
    free(b_scale);
}

/* Every move of the best path counts once. */
static void expect_viterbi(const Expecter *x, const int *codes, long length, Expectation *out)
{
    const Model *m = x->m;
    int n = m->state_count;
    out->log_p = forward_score(m, &x->silent, &x->forward_system, codes, length, NULL, NULL);
    ViterbiResult r = viterbi(m, codes, length);
    out->viterbi = r.score;
    long position = 0;
    for (int k = 0; k + 1 < r.path_length; k++) {
        const Transition *tr = find_transition(m, r.path[k], r.path[k + 1]);
        out->transition_uses[tr - m->transitions] += 1;
        int e = move_emission(m, tr);
        if (e < 0)
            continue;
        out->emission_uses[(size_t)e * m->alphabet_size + codes[position]] += 1;
        out->posterior[(size_t)position * n + tr->to] = 1;
        position++;
    }
    free(r.path);
}

/* The E-step of one sequence by the expecter's method. */
static Expectation expect_sequence(const Expecter *x, const int *codes, long length)
{
    const Model *m = x->m;
    Expectation out = { -INFINITY, -INFINITY, xcalloc((size_t)length * m->state_count, sizeof(long double)),
                        xcalloc(m->transition_count, sizeof(long double)),
                        xcalloc((size_t)m->emission_count * m->alphabet_size, sizeof(long double)) };
    if (x->method == COUNT_EXACT) {
        expect_exact(x, codes, length, &out);
    } else if (x->method == COUNT_VITERBI) {
        expect_viterbi(x, codes, length, &out);
    } else {
        double sum;
        long double *uses[3] = { out.posterior, out.transition_uses, out.emission_uses };
        ViterbiResult r = brute_force(m, codes, length, x->max_moves, &sum, uses);
        out.log_p = sum;
        out.viterbi = r.score;
        free(r.path);
    }
    return out;
}

#endif
