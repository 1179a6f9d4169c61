/* genmodel.c: draws a random valid .hmm model and a FASTA file of sequences
 * for the differential tests (tests/differential/run). The same seed and
 * options always give the same files (own RNG: splitmix64).
 *
 *   genmodel SEED OUT.hmm OUT.fa [--states N] [--seqs M] [--maxlen L]
 *                                [--structure S] [--no-silent-cycles] [--extreme]
 *
 * --states N counts the states besides start and end (default: 2..12 drawn
 * from the seed; up to 1,000,000). --structure says how states are joined:
 *   random   (default) up to 60 states, a move between any two states with a
 *            density drawn from the seed; above, 1 to 3 moves out of each
 *            state to states drawn at random; plus a spine start -> ... -> end;
 *   chain    the states in a line, 1 -> 2 -> ... -> N, with self-loops on
 *            emitting states, skips over one state, and entries from the start
 *            and exits to the end here and there (runs of silent states make
 *            long silent chains);
 *   cycle    a chain whose last state leads back to the first, with a few
 *            more moves back;
 *   profile  N/3 nodes of match (emitting), insert (emitting, a self-loop)
 *            and delete (silent) states joined as in a profile HMM, with
 *            local entries and exits.
 * Every structure also gets, drawn from the seed, silent self-loops and
 * cycles, emitting transitions, unreachable states and dead ends. Across seeds the models cover: alphabets of 1..20 symbols
 * (letters, digits, quoted '*' '-' '.'), emitting and silent states, silent
 * chains, silent self-loops and 2- and 3-cycles, emitting transitions (into
 * silent states or the end only), list and dictionary emissions, weights
 * written as decimals, fractions and exponents, weights > 1 on emitting
 * moves, unreachable states, dead ends, start -> end, shuffled declarations,
 * comments and a second, unused model. Every model is valid: nothing enters
 * the start, nothing leaves the end, no duplicate transitions, every list
 * emission has one value per symbol, every weight > 0, and every state's
 * silent moves (into a silent state or the end, not emitting) weigh < 0.9 in
 * total, so every silent cycle converges. --extreme multiplies about a third
 * of the weights and emission values by 10^-300..10^300 (silent moves: only
 * smaller), some of them subnormal doubles (1e-308..1e-318), then scales the
 * moves into some states by 10^k and the moves out of them by 10^-k (paths and
 * cycles keep their weights, silent moves get large ones), so that products
 * leave double's range: forward must still equal backward. --no-silent-cycles leaves silent
 * cycles out (for brute-force path enumeration).
 *
 * Sequences: seq1..seqM, a mix of random walks of the model, uniformly random
 * strings of length 0..L over the alphabet, and one empty sequence. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL_NAME "genmodel"
#include "tool_common.h"
#include "tool_rng.h"

enum {
    MAX_OTHER_STATES = 1000000,          /* states besides start and end */
    DENSE_MAX_STATES = 60,               /* random structure: moves over every pair up to here */
    MAX_SYMBOLS = 20,
    SILENT_BUDGET_LIMIT = 890            /* thousandths: silent moves of a state weigh <= 0.89 */
};

/* ------------------------------------------------------------------ random */

static int rng_range(Rng *r, int lo, int hi) /* lo..hi inclusive */
{
    return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

static int rng_chance(Rng *r, double p)
{
    return rng_uniform(r) < p;
}

static void shuffle_ints(Rng *r, int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = rng_range(r, 0, i);
        int tmp = a[i];
        a[i] = a[j];
        a[j] = tmp;
    }
}

/* ------------------------------------------------------------------- model */

typedef struct {
    long numerator, denominator; /* the exact value as written */
} Rational;

typedef struct {
    int count[MAX_SYMBOLS]; /* value of symbol k = count[k] / scale * 10^exp10[k] */
    int exp10[MAX_SYMBOLS]; /* 0 unless --extreme */
    int scale;
    int is_dict;
    int uses;
} Emission;

/* A transition p -> to; the moves out of a state are kept sorted by `to`. */
typedef struct {
    int to;
    int emission; /* the transition's own emission, -1: none */
    Rational weight;
    int exp10; /* the weight is weight * 10^exp10 (0 unless --extreme) */
} Edge;

typedef struct {
    Edge *edges;
    int count, cap;
} EdgeList;

typedef struct {
    int symbol_count;
    char symbols[MAX_SYMBOLS];
    int state_count;          /* start = 0, end = state_count - 1 */
    int *emission_of;         /* per state; -1: silent */
    char (*names)[64];        /* per state */
    char (*emission_names)[24];
    EdgeList *out;            /* per state: the transitions out of it */
    int emission_count, emission_cap;
    Emission *emissions;
    char model_name[32];
} GenModel;

typedef enum { STRUCTURE_RANDOM, STRUCTURE_CHAIN, STRUCTURE_CYCLE, STRUCTURE_PROFILE } Structure;

typedef struct {
    int states;        /* -1: draw */
    int seqs;
    int maxlen;
    int no_silent_cycles;
    int extreme;
    Structure structure;
} Options;


static int end_state(const GenModel *g)
{
    return g->state_count - 1;
}

static int is_silent(const GenModel *g, int q)
{
    return g->emission_of[q] < 0;
}

/* A move is silent when it neither carries an emission nor enters an emitting state. */
static int is_silent_move(const GenModel *g, const Edge *e)
{
    return e->emission < 0 && is_silent(g, e->to);
}

static int edge_allowed(const GenModel *g, int p, int q)
{
    return p != end_state(g) && q != 0;
}

/* Where p -> q is, or would go, in p's sorted list. */
static int edge_position(const GenModel *g, int p, int q)
{
    int lo = 0, hi = g->out[p].count;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (g->out[p].edges[mid].to < q)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static Edge *find_edge(const GenModel *g, int p, int q)
{
    int at = edge_position(g, p, q);
    return at < g->out[p].count && g->out[p].edges[at].to == q ? &g->out[p].edges[at] : NULL;
}

static void add_edge(GenModel *g, int p, int q)
{
    if (!edge_allowed(g, p, q) || find_edge(g, p, q))
        return;
    EdgeList *l = &g->out[p];
    if (l->count == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4;
        l->edges = xrealloc(l->edges, sizeof(Edge) * (size_t)l->cap);
    }
    int at = edge_position(g, p, q);
    memmove(&l->edges[at + 1], &l->edges[at], sizeof(Edge) * (size_t)(l->count - at));
    l->edges[at] = (Edge){ q, -1, { 1, 1 }, 0 };
    l->count++;
}

static void remove_edge(GenModel *g, int p, int q)
{
    Edge *e = find_edge(g, p, q);
    if (!e)
        return;
    EdgeList *l = &g->out[p];
    int at = (int)(e - l->edges);
    memmove(&l->edges[at], &l->edges[at + 1], sizeof(Edge) * (size_t)(l->count - at - 1));
    l->count--;
}

/* ---------------------------------------------------------------- alphabet */

static void draw_alphabet(Rng *r, GenModel *g)
{
    static const char *pools[] = {
        "ACGT", "123456", "ACDEFGHIKLMNPQRSTVWY",
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        "abcdefghijklmnopqrstuvwxyz0123456789*-.",
    };
    const char *pool = pools[rng_range(r, 0, 4)];
    int pool_size = (int)strlen(pool);
    int order[64];
    for (int i = 0; i < pool_size; i++)
        order[i] = i;
    shuffle_ints(r, order, pool_size);
    int want = rng_range(r, 1, pool_size < MAX_SYMBOLS ? pool_size : MAX_SYMBOLS);
    if (rng_chance(r, 0.4))
        want = pool_size < MAX_SYMBOLS ? pool_size : MAX_SYMBOLS; /* the whole pool, in order */
    g->symbol_count = 0;
    for (int i = 0; i < want; i++)
        g->symbols[g->symbol_count++] = pool[want == pool_size ? i : order[i]];
    if (rng_chance(r, 0.25) && g->symbol_count < MAX_SYMBOLS - 1 && !strchr(g->symbols, '*')) {
        g->symbols[g->symbol_count++] = '*';
    }
    if (rng_chance(r, 0.15) && g->symbol_count < MAX_SYMBOLS - 1 && !memchr(g->symbols, '-', g->symbol_count))
        g->symbols[g->symbol_count++] = '-';
}

/* ------------------------------------------------------------------ states */

/* Names that a careless code generator might trip on (C keywords, library
 * functions, usual local variable names), none a keyword of the .hmm language. */
static const char *const awkward_names[] = {
    "int", "double", "if", "return", "static", "printf", "exit", "free", "i", "j", "n", "x",
    "seq", "score", "forward", "viterbi", "backward", "traceback", "NULL", "EOF", "stdin",
    "errno", "log", "exp", "INFINITY", "size_t", "memcpy", "argc", "argv", "tmp", "p", "q",
    "k", "L", "len", "row", "col", "best", "prev", "next", "sum", "max", "min", "result",
};
static const char *const awkward_emission_names[] = {
    "float", "char", "void", "while", "for", "do", "switch", "case", "default", "sizeof",
};

typedef enum {
    NAMES_PLAIN,    /* M1, D1, em1 */
    NAMES_AWKWARD,  /* C keywords and library names */
    NAMES_LONG,     /* long names */
    NAMES_CASE      /* q1 and Q1: names that differ only in case */
} NamingStyle;

static void name_other_state(GenModel *g, NamingStyle style, int q, int number, const int *awkward_order,
                             int *awkward_used)
{
    int silent = is_silent(g, q);
    int awkward_count = (int)(sizeof awkward_names / sizeof awkward_names[0]);
    if (style == NAMES_AWKWARD && *awkward_used < awkward_count)
        snprintf(g->names[q], sizeof g->names[q], "%s", awkward_names[awkward_order[(*awkward_used)++]]);
    else if (style == NAMES_LONG)
        snprintf(g->names[q], sizeof g->names[q], "a_rather_long_%s_state_name_number_%d",
                 silent ? "silent" : "emitting", number);
    else if (style == NAMES_CASE)
        snprintf(g->names[q], sizeof g->names[q], "%c%d", silent ? 'q' : 'Q', number);
    else
        snprintf(g->names[q], sizeof g->names[q], "%c%d", silent ? 'D' : 'M', number);
}

static void name_states(Rng *r, GenModel *g, NamingStyle style)
{
    static const char *start_names[] = { "start", "begin", "S", "st_0", "auto", "goto" };
    static const char *end_names[] = { "end", "stop", "E", "fin_", "break", "continue" };
    int pick = rng_range(r, 0, style == NAMES_AWKWARD ? 5 : 3);
    snprintf(g->names[0], sizeof g->names[0], "%s", start_names[pick]);
    snprintf(g->names[end_state(g)], sizeof g->names[0], "%s", end_names[pick]);
    int awkward_order[64], awkward_used = 0;
    int awkward_count = (int)(sizeof awkward_names / sizeof awkward_names[0]);
    for (int i = 0; i < awkward_count; i++)
        awkward_order[i] = i;
    shuffle_ints(r, awkward_order, awkward_count);
    int emitting = 0, silent = 0;
    for (int q = 1; q < end_state(g); q++) {
        /* in the case style, q1 and Q1 both exist when possible */
        int number = is_silent(g, q) ? ++silent : ++emitting;
        name_other_state(g, style, q, number, awkward_order, &awkward_used);
    }
}

static void name_emissions(GenModel *g, NamingStyle style)
{
    int awkward_count = (int)(sizeof awkward_emission_names / sizeof awkward_emission_names[0]);
    g->emission_names = xcalloc((size_t)g->emission_count, sizeof *g->emission_names);
    for (int e = 0; e < g->emission_count; e++) {
        if (style == NAMES_AWKWARD && e < awkward_count)
            snprintf(g->emission_names[e], sizeof g->emission_names[e], "%s", awkward_emission_names[e]);
        else if (style == NAMES_CASE)
            snprintf(g->emission_names[e], sizeof g->emission_names[e], "%s%d", e % 2 ? "EM" : "em", e / 2 + 1);
        else
            snprintf(g->emission_names[e], sizeof g->emission_names[e], "em%d", e + 1);
    }
}

static void name_model(Rng *r, GenModel *g, uint64_t seed)
{
    static const char *odd_names[] = { "model", "double", "score", "Casino_2" };
    if (rng_chance(r, 0.8))
        snprintf(g->model_name, sizeof g->model_name, "gen%llu", (unsigned long long)seed);
    else
        snprintf(g->model_name, sizeof g->model_name, "%s", odd_names[rng_range(r, 0, 3)]);
}

static void allocate_states(GenModel *g, int others)
{
    g->state_count = others + 2;
    g->emission_of = xcalloc((size_t)g->state_count, sizeof(int));
    g->names = xcalloc((size_t)g->state_count, sizeof *g->names);
    g->out = xcalloc((size_t)g->state_count, sizeof(EdgeList));
}

/* A profile: node k (0-based) is match 1 + 3k, insert 2 + 3k, delete 3 + 3k. */
static void draw_profile_states(GenModel *g, int nodes)
{
    allocate_states(g, 3 * nodes);
    g->emission_of[0] = g->emission_of[end_state(g)] = -1;
    for (int k = 0; k < nodes; k++) {
        g->emission_of[1 + 3 * k] = g->emission_of[2 + 3 * k] = 0; /* 0: emits, chosen later */
        g->emission_of[3 + 3 * k] = -1;
    }
}

static void draw_states(Rng *r, GenModel *g, const Options *o)
{
    int others = o->states >= 0 ? o->states : rng_range(r, 2, 12);
    if (o->structure == STRUCTURE_PROFILE) {
        draw_profile_states(g, others / 3 > 0 ? others / 3 : 1);
        return;
    }
    allocate_states(g, others);
    int silent = others == 0 || rng_chance(r, 0.15) ? 0 : rng_range(r, 1, others);
    if (rng_chance(r, 0.2) && others >= 3)
        silent = others < 5 ? others : rng_range(r, 3, others); /* room for chains and cycles */
    if (others > DENSE_MAX_STATES) /* enough emitting states that sequences have paths */
        silent = rng_range(r, others / 10, others / 3);
    int *order = xcalloc((size_t)others, sizeof(int));
    for (int i = 0; i < others; i++)
        order[i] = i + 1;
    shuffle_ints(r, order, others);
    g->emission_of[0] = g->emission_of[end_state(g)] = -1;
    for (int i = 0; i < others; i++)
        g->emission_of[order[i]] = i < silent ? -1 : 0; /* 0: emits, chosen later */
    free(order);
}

static int collect_states(const GenModel *g, int silent, int *out)
{
    int n = 0;
    for (int q = 1; q < end_state(g); q++)
        if (is_silent(g, q) == silent)
            out[n++] = q;
    return n;
}

/* ------------------------------------------------------------- transitions */

static void add_random_edges(Rng *r, GenModel *g)
{
    if (g->state_count - 2 > DENSE_MAX_STATES) { /* sparse: 1 to 3 moves out of each state */
        for (int p = 0; p < g->state_count; p++)
            for (int n = rng_range(r, 1, 3); n > 0; n--)
                add_edge(g, p, rng_range(r, 0, g->state_count - 1));
        return;
    }
    double density = 0.08 + 0.4 * rng_uniform(r);
    for (int p = 0; p < g->state_count; p++)
        for (int q = 0; q < g->state_count; q++)
            if (rng_chance(r, density))
                add_edge(g, p, q);
}

/* The states in a line 1 -> 2 -> ... -> N: self-loops on emitting states,
 * skips over one state, entries from the start and exits to the end (about
 * one in fifty states, and always at both ends); with `cycle`, N -> 1 and
 * a few more moves back. Moves only go forward but for those, so silent
 * cycles come only from the moves back. */
static void add_chain(Rng *r, GenModel *g, int cycle)
{
    int n = g->state_count - 2, end = end_state(g);
    add_edge(g, 0, n >= 1 ? 1 : end);
    for (int q = 1; q <= n; q++) {
        add_edge(g, q, q < n ? q + 1 : end);
        if (!is_silent(g, q) && rng_chance(r, 0.5))
            add_edge(g, q, q);
        if (q + 2 <= n && rng_chance(r, 0.2))
            add_edge(g, q, q + 2);
        if (rng_chance(r, 0.02))
            add_edge(g, 0, q);
        if (rng_chance(r, 0.02))
            add_edge(g, q, end);
        if (cycle && q > 1 && rng_chance(r, 0.01))
            add_edge(g, q, rng_range(r, 1, q - 1));
    }
    if (cycle && n >= 1)
        add_edge(g, n, 1);
}

/* Profile moves between nodes k and k+1 (see draw_profile_states), local
 * entries from the start and exits to the end on about one node in ten. */
static void add_profile(Rng *r, GenModel *g)
{
    int nodes = (g->state_count - 2) / 3, end = end_state(g);
    add_edge(g, 0, 1);
    add_edge(g, 0, 3);
    for (int k = 0; k < nodes; k++) {
        int match = 1 + 3 * k, insert = match + 1, del = match + 2;
        int next = k + 1 < nodes ? match + 3 : end, next_delete = k + 1 < nodes ? del + 3 : end;
        add_edge(g, match, next);
        add_edge(g, match, insert);
        add_edge(g, match, next_delete);
        add_edge(g, insert, insert);
        add_edge(g, insert, next);
        add_edge(g, del, next);
        add_edge(g, del, next_delete);
        if (k > 0 && rng_chance(r, 0.1))
            add_edge(g, 0, match);
        if (rng_chance(r, 0.1))
            add_edge(g, match, end);
    }
}

/* start -> some states in random order -> end, so that many sequences have a path. */
static void add_spine(Rng *r, GenModel *g)
{
    int *order = xcalloc((size_t)g->state_count, sizeof(int)), n = 0;
    for (int q = 1; q < end_state(g); q++)
        if (rng_chance(r, 0.6))
            order[n++] = q;
    shuffle_ints(r, order, n);
    int previous = 0;
    for (int i = 0; i < n; i++) {
        add_edge(g, previous, order[i]);
        previous = order[i];
    }
    add_edge(g, previous, end_state(g));
    free(order);
}

static void add_silent_structures(Rng *r, GenModel *g)
{
    int *silent = xcalloc((size_t)g->state_count, sizeof(int));
    int n = collect_states(g, 1, silent);
    shuffle_ints(r, silent, n);
    if (n >= 3 && rng_chance(r, 0.6)) { /* a chain of 3 or more silent states */
        int length = rng_range(r, 3, n < 6 ? n : 6);
        add_edge(g, 0, silent[0]);
        for (int i = 0; i + 1 < length; i++)
            add_edge(g, silent[i], silent[i + 1]);
        add_edge(g, silent[length - 1], end_state(g));
    }
    if (n >= 1 && rng_chance(r, 0.5))
        add_edge(g, silent[0], silent[0]);
    if (n >= 2 && rng_chance(r, 0.4)) {
        add_edge(g, silent[0], silent[1]);
        add_edge(g, silent[1], silent[0]);
    }
    if (n >= 3 && rng_chance(r, 0.35)) {
        int a = silent[n - 1], b = silent[n - 2], c = silent[n - 3];
        add_edge(g, a, b);
        add_edge(g, b, c);
        add_edge(g, c, a);
    }
    free(silent);
}

/* Unreachable states, dead ends and start -> end, each on some seeds. */
static void add_odd_corners(Rng *r, GenModel *g)
{
    int end = end_state(g);
    if (rng_chance(r, 0.25))
        add_edge(g, 0, end);
    if (g->state_count > 3 && rng_chance(r, 0.2)) { /* an unreachable state */
        int u = rng_range(r, 1, end - 1);
        for (int p = 0; p < g->state_count; p++)
            if (p != u)
                remove_edge(g, p, u);
    }
    if (g->state_count > 3 && rng_chance(r, 0.2)) { /* a dead end */
        int d = rng_range(r, 1, end - 1);
        g->out[d].count = 0;
    }
}

static void remove_silent_cycles(GenModel *g)
{
    for (int p = 1; p < end_state(g); p++) {
        if (!is_silent(g, p))
            continue;
        EdgeList *l = &g->out[p];
        int kept = 0;
        for (int i = 0; i < l->count; i++)
            if (!(l->edges[i].to >= 1 && l->edges[i].to <= p && is_silent(g, l->edges[i].to)))
                l->edges[kept++] = l->edges[i];
        l->count = kept;
    }
}

/* ---------------------------------------------------------------- emissions */

static void draw_emission(Rng *r, const GenModel *g, Emission *e)
{
    double zero_chance = g->symbol_count > 1 ? 0.3 * rng_uniform(r) : 0;
    int total = 0;
    for (int k = 0; k < g->symbol_count; k++) {
        e->count[k] = rng_chance(r, zero_chance) ? 0 : rng_range(r, 1, 9);
        total += e->count[k];
    }
    if (total == 0) {
        e->count[rng_range(r, 0, g->symbol_count - 1)] = 1;
        total = 1;
    }
    e->scale = rng_chance(r, 0.6) ? total : 10; /* normalised, or tenths */
    e->is_dict = rng_chance(r, 0.35);
}

/* An emission for a new user: a shared one sometimes, else a fresh one. */
static int pick_emission(Rng *r, GenModel *g)
{
    if (g->emission_count > 0 && rng_chance(r, 0.3)) {
        int e = rng_range(r, 0, g->emission_count - 1);
        g->emissions[e].uses++;
        return e;
    }
    if (g->emission_count == g->emission_cap) {
        g->emission_cap = g->emission_cap ? 2 * g->emission_cap : 16;
        g->emissions = xrealloc(g->emissions, sizeof(Emission) * (size_t)g->emission_cap);
    }
    Emission *e = &g->emissions[g->emission_count];
    memset(e, 0, sizeof *e);
    draw_emission(r, g, e);
    e->uses = 1;
    return g->emission_count++;
}

static void assign_emissions(Rng *r, GenModel *g)
{
    for (int q = 1; q < end_state(g); q++)
        if (g->emission_of[q] >= 0)
            g->emission_of[q] = pick_emission(r, g);
    double emitting_transition_chance = rng_chance(r, 0.4) ? 0 : 0.1 + 0.4 * rng_uniform(r);
    for (int p = 0; p < g->state_count; p++)
        for (int i = 0; i < g->out[p].count; i++) {
            Edge *e = &g->out[p].edges[i];
            e->emission = -1;
            if (is_silent(g, e->to) && rng_chance(r, emitting_transition_chance))
                e->emission = pick_emission(r, g);
        }
}

/* ------------------------------------------------------------------ weights */

static long gcd(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static Rational thousandths(long value)
{
    long d = gcd(value, 1000);
    return (Rational){ value / d, 1000 / d };
}

/* Splits `budget` thousandths over the silent moves of state p, each >= 1. */
static void weigh_silent_moves(Rng *r, GenModel *g, int p, int count, int budget)
{
    double *share = xcalloc((size_t)count, sizeof(double)), total = 0;
    for (int i = 0; i < count; i++)
        total += share[i] = 0.2 + rng_uniform(r);
    int i = 0;
    for (int k = 0; k < g->out[p].count; k++) {
        Edge *e = &g->out[p].edges[k];
        if (!is_silent_move(g, e))
            continue;
        long value = 1 + (long)((budget - count) * share[i++] / total); /* sum <= budget */
        e->weight = thousandths(value);
    }
    free(share);
}

static void weigh_edges(Rng *r, GenModel *g)
{
    int log_odds = rng_chance(r, 0.3); /* emitting moves may weigh up to 3 */
    for (int p = 0; p < g->state_count; p++) {
        int silent_moves = 0;
        for (int k = 0; k < g->out[p].count; k++) {
            Edge *e = &g->out[p].edges[k];
            if (is_silent_move(g, e))
                silent_moves++;
            else if (rng_chance(r, 0.15))
                e->weight = (Rational){ 1, rng_range(r, 2, 9) }; /* a plain fraction like 1/3 */
            else
                e->weight = thousandths(log_odds ? rng_range(r, 100, 3000) : rng_range(r, 1, 1000));
        }
        if (silent_moves > 0) {
            int budget = rng_range(r, 50, SILENT_BUDGET_LIMIT);
            if (budget < silent_moves)
                budget = silent_moves;
            if (budget > SILENT_BUDGET_LIMIT)
                die("too many silent moves out of one state");
            weigh_silent_moves(r, g, p, silent_moves, budget);
        }
    }
}

static double rational_value(Rational v);

enum { EXTREME_LEAST = -318, EXTREME_MOST = 300 }; /* 0.001e-318 is still > 0 as a double */

static int exponent_fits(int e) { return e >= EXTREME_LEAST && e <= EXTREME_MOST; }


/* --extreme: a power of ten for a weight or emission value, from 10^-300 to
 * 10^-1, with subnormal doubles (below 2.2e-308) now and then; 0 most of the
 * time. Weights and values are only made smaller this
 * way: a loop that grew 1e300 a position would carry a state 1e4932 above
 * the others in 17 positions, past what long double holds in one column
 * (hmmc and hmmref then both print -inf, and hmmc says why); large weights
 * come from rescale_state, which changes no path's weight. */
static int extreme_exponent(Rng *r)
{
    if (!rng_chance(r, 0.35))
        return 0;
    if (rng_chance(r, 0.15))
        return -rng_range(r, 308, -EXTREME_LEAST); /* a subnormal double, still > 0 */
    return -rng_range(r, 1, 300);
}

/* Weights 10^k times larger into state q and 10^k times smaller out of it:
 * every path through q, and every cycle, keeps its weight, so silent moves
 * may weigh 1e300 and their cycles still converge. Skipped where an exponent
 * would leave EXTREME_LEAST..EXTREME_MOST. */
static void rescale_state(GenModel *g, int q, int k)
{
    for (int pass = 0; pass < 2; pass++)
        for (int p = 0; p < g->state_count; p++)
            for (int i = 0; i < g->out[p].count; i++) {
                Edge *e = &g->out[p].edges[i];
                int change = (e->to == q ? k : 0) - (p == q ? k : 0);
                if (pass == 0 && !exponent_fits(e->exp10 + change))
                    return;
                if (pass == 1)
                    e->exp10 += change;
            }
}

static void make_extreme(Rng *r, GenModel *g)
{
    for (int p = 0; p < g->state_count; p++)
        for (int k = 0; k < g->out[p].count; k++) {
            Edge *e = &g->out[p].edges[k];
            e->exp10 = extreme_exponent(r);
        }
    for (int i = 0; i < g->emission_count; i++)
        for (int k = 0; k < g->symbol_count; k++)
            g->emissions[i].exp10[k] = extreme_exponent(r);
    for (int q = 1; q < end_state(g); q++)
        if (rng_chance(r, 0.3))
            rescale_state(g, q, rng_range(r, -300, 300));
}

/* ------------------------------------------------------------ writing numbers */

/* A number times 10^exp10, written as MANTISSAeEXP (the mantissa as %.17g of
 * text that has no exponent of its own). */
static void format_scaled(double value, int exp10, char *out, size_t size)
{
    snprintf(out, size, "%.17fe%d", value, exp10);
}

static void format_rational(Rng *r, Rational v, char *out, size_t size)
{
    double value = (double)v.numerator / v.denominator;
    int exact_decimal = 1000 % v.denominator == 0;
    int style = rng_range(r, 0, 3);
    if (!exact_decimal || style == 0) {
        snprintf(out, size, "%ld/%ld", v.numerator, v.denominator);
        return;
    }
    long milli = v.numerator * (1000 / v.denominator);
    if (style == 1) {
        snprintf(out, size, rng_chance(r, 0.8) ? "%lde-3" : "%ldE-3", milli);
    } else if (style == 2 && milli < 1000) {
        snprintf(out, size, ".%03ld", milli); /* leading-dot form */
    } else {
        snprintf(out, size, "%.3f", value);
    }
}

/* ---------------------------------------------------------------- the model */

typedef struct {
    char **lines;
    int count, cap;
} Lines;

static void add_line(Lines *l, const char *fmt, ...)
{
    char buffer[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buffer, sizeof buffer, fmt, ap);
    va_end(ap);
    if (l->count == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->lines = xrealloc(l->lines, sizeof(char *) * (size_t)l->cap);
    }
    l->lines[l->count] = malloc(strlen(buffer) + 1);
    if (!l->lines[l->count])
        die("out of memory");
    strcpy(l->lines[l->count++], buffer);
}

static void format_symbol(Rng *r, char symbol, char *out)
{
    int bare_ok = (symbol >= 'a' && symbol <= 'z') || (symbol >= 'A' && symbol <= 'Z') ||
                  (symbol >= '0' && symbol <= '9');
    if (bare_ok && rng_chance(r, 0.85))
        sprintf(out, "%c", symbol);
    else
        sprintf(out, "'%c'", symbol);
}

static void format_emission_value(Rng *r, int count, int scale, int exp10, char *out, size_t size)
{
    if (count != 0 && exp10 != 0) {
        format_scaled((double)count / scale, exp10, out, size);
    } else if (count == 0) {
        snprintf(out, size, rng_chance(r, 0.5) ? "0" : "0.0");
    } else if (scale == 10) {
        format_rational(r, thousandths(count * 100L), out, size);
    } else if (rng_chance(r, 0.5)) {
        snprintf(out, size, "%d/%d", count, scale);
    } else {
        snprintf(out, size, "%.17g", (double)count / scale);
    }
}

static void write_emission(Rng *r, const GenModel *g, int index, Lines *l)
{
    const Emission *e = &g->emissions[index];
    char text[4096] = "", value[64], symbol[8];
    int first = 1;
    for (int k = 0; k < g->symbol_count; k++) {
        if (e->is_dict && e->count[k] == 0 && !rng_chance(r, 0.15))
            continue; /* unnamed symbols get 0 */
        format_emission_value(r, e->count[k], e->scale, e->exp10[k], value, sizeof value);
        format_symbol(r, g->symbols[k], symbol);
        size_t used = strlen(text);
        if (e->is_dict)
            snprintf(text + used, sizeof text - used, "%s%s: %s", first ? "" : ", ", symbol, value);
        else
            snprintf(text + used, sizeof text - used, "%s%s", first ? "" : ", ", value);
        first = 0;
    }
    if (e->is_dict)
        add_line(l, "emission %s = { %s };", g->emission_names[index], text);
    else
        add_line(l, "emission %s = [%s];", g->emission_names[index], text);
}

/* A transition of weight 0 does not exist: a few, on some seeds, between
 * states that have no transition. */
static void write_zero_weight_transitions(Rng *r, const GenModel *g, Lines *l)
{
    if (!rng_chance(r, 0.15))
        return;
    int written[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
    for (int tries = 0; tries < 3; tries++) {
        int p = rng_range(r, 0, g->state_count - 1), q = rng_range(r, 0, g->state_count - 1);
        int again = 0; /* a pair given twice is an error even at weight 0 */
        for (int i = 0; i < tries; i++)
            again |= written[i][0] == p && written[i][1] == q;
        written[tries][0] = p, written[tries][1] = q;
        if (!again && edge_allowed(g, p, q) && !find_edge(g, p, q))
            add_line(l, "%s -> %s %s;", g->names[p], g->names[q], rng_chance(r, 0.5) ? "0" : "0.0");
    }
}

static void write_declarations(Rng *r, const GenModel *g, Lines *l)
{
    char text[4096] = "", symbol[8];
    for (int k = 0; k < g->symbol_count; k++) {
        format_symbol(r, g->symbols[k], symbol);
        size_t used = strlen(text);
        snprintf(text + used, sizeof text - used, "%s%s", k ? ", " : "", symbol);
    }
    add_line(l, "alphabet [%s];", text);
    add_line(l, "startstate %s;", g->names[0]);
    add_line(l, "endstate %s;", g->names[end_state(g)]);
    for (int q = 1; q < end_state(g); q++) {
        if (is_silent(g, q))
            add_line(l, "state %s;", g->names[q]);
        else
            add_line(l, "state %s emits %s;", g->names[q], g->emission_names[g->emission_of[q]]);
    }
    for (int e = 0; e < g->emission_count; e++)
        write_emission(r, g, e, l);
    for (int p = 0; p < g->state_count; p++)
        for (int k = 0; k < g->out[p].count; k++) {
            const Edge *e = &g->out[p].edges[k];
            int q = e->to;
            char weight[64];
            if (e->exp10)
                format_scaled(rational_value(e->weight), e->exp10, weight, sizeof weight);
            else
                format_rational(r, e->weight, weight, sizeof weight);
            if (e->emission >= 0)
                add_line(l, "%s -> %s %s emits %s;", g->names[p], g->names[q], weight,
                         g->emission_names[e->emission]);
            else
                add_line(l, "%s -> %s %s;", g->names[p], g->names[q], weight);
        }
    write_zero_weight_transitions(r, g, l);
}

static void shuffle_lines(Rng *r, Lines *l)
{
    for (int i = l->count - 1; i > 0; i--) {
        int j = rng_range(r, 0, i);
        char *tmp = l->lines[i];
        l->lines[i] = l->lines[j];
        l->lines[j] = tmp;
    }
}

static void write_decoy_model(FILE *f)
{
    fputs("/* a second model that main does not use */\n"
          "hmm decoy {\n"
          "    alphabet [x, y];\n"
          "    startstate s;\n"
          "    state a emits e;\n"
          "    endstate t;\n"
          "    emission e = [1/2, 1/2];\n"
          "    s -> a 1;\n"
          "    a -> t 0.5;\n"
          "}\n\n",
          f);
}

static void write_model(Rng *r, const GenModel *g, const char *path, uint64_t seed)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot write %s", path);
    int decoy = rng_chance(r, 0.15);
    int decoy_first = rng_chance(r, 0.5);
    fprintf(f, "// random model drawn by genmodel, seed %llu\n", (unsigned long long)seed);
    if (decoy && decoy_first)
        write_decoy_model(f);
    Lines lines = { .count = 0 };
    write_declarations(r, g, &lines);
    /* large models keep their order: hmmref's viterbi relaxes silent moves
     * in file order, and a shuffled long silent chain would take a round a state */
    if (rng_chance(r, 0.3) && g->state_count - 2 <= DENSE_MAX_STATES)
        shuffle_lines(r, &lines);
    /* random weights: scores, not probabilities (no warning for rows above 1) */
    fprintf(f, "hmm %s scores {\n", g->model_name);
    for (int i = 0; i < lines.count; i++) {
        if (rng_chance(r, 0.05))
            fprintf(f, "    /* a comment\n       over two lines */\n");
        fprintf(f, "    %s%s\n", lines.lines[i], rng_chance(r, 0.05) ? " // trailing comment" : "");
        free(lines.lines[i]);
    }
    free(lines.lines);
    fprintf(f, "}\n\n");
    if (decoy && !decoy_first)
        write_decoy_model(f);
    fprintf(f,
            "main {\n"
            "    m = new %s();\n"
            "    f = forward(m);\n"
            "    print f.score;\n"
            "    print backward(m).score;\n"
            "    v = viterbi(m);\n"
            "    print v.score;\n"
            "    print v.traceback;\n"
            "}\n",
            g->model_name);
    if (fclose(f) != 0)
        die("cannot write %s", path);
}

/* ---------------------------------------------------------------- sequences */

static double rational_value(Rational v)
{
    return (double)v.numerator / v.denominator;
}

static char sample_symbol(Rng *r, const GenModel *g, int emission)
{
    const Emission *e = &g->emissions[emission];
    int total = 0;
    for (int k = 0; k < g->symbol_count; k++)
        total += e->count[k];
    int pick = rng_range(r, 1, total);
    for (int k = 0; k < g->symbol_count; k++) {
        pick -= e->count[k];
        if (pick <= 0)
            return g->symbols[k];
    }
    return g->symbols[g->symbol_count - 1];
}

/* The next state of a random walk, drawn by weight; -1 at a dead end. */
static const Edge *sample_next_state(Rng *r, const GenModel *g, int p)
{
    const EdgeList *l = &g->out[p];
    double total = 0;
    for (int i = 0; i < l->count; i++)
        total += rational_value(l->edges[i].weight);
    if (total == 0)
        return NULL;
    double pick = rng_uniform(r) * total;
    for (int i = 0; i < l->count; i++) {
        pick -= rational_value(l->edges[i].weight);
        if (pick < 0)
            return &l->edges[i];
    }
    return &l->edges[l->count - 1];
}

static int random_walk(Rng *r, const GenModel *g, int maxlen, char *out)
{
    int length = 0, state = 0;
    for (int step = 0; step < 20 * maxlen + 100 && length < maxlen && state != end_state(g); step++) {
        const Edge *next = sample_next_state(r, g, state);
        if (!next)
            break;
        int emission = next->emission >= 0 ? next->emission : g->emission_of[next->to];
        if (emission >= 0)
            out[length++] = sample_symbol(r, g, emission);
        state = next->to;
    }
    return length;
}

static int random_string(Rng *r, const GenModel *g, int maxlen, char *out)
{
    int length = rng_range(r, 0, maxlen);
    for (int i = 0; i < length; i++)
        out[i] = g->symbols[rng_range(r, 0, g->symbol_count - 1)];
    return length;
}

static void write_record(FILE *f, int number, const char *text, int length, int width, int describe)
{
    fprintf(f, ">seq%d%s\n", number, describe ? " drawn by genmodel" : "");
    for (int i = 0; i < length; i += width)
        fprintf(f, "%.*s\n", length - i < width ? length - i : width, text + i);
}

static void write_sequences(Rng *r, const GenModel *g, const Options *o, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die("cannot write %s", path);
    char *text = malloc(o->maxlen + 1);
    if (!text)
        die("out of memory");
    int widths[] = { 60, 7, 1000 };
    int width = widths[rng_range(r, 0, 2)];
    int empty_one = rng_range(r, 1, o->seqs);
    for (int n = 1; n <= o->seqs; n++) {
        int length = 0;
        if (n != empty_one)
            length = rng_chance(r, 0.5) ? random_walk(r, g, o->maxlen, text) : random_string(r, g, o->maxlen, text);
        write_record(f, n, text, length, width, rng_chance(r, 0.2));
    }
    free(text);
    if (fclose(f) != 0)
        die("cannot write %s", path);
}

/* --------------------------------------------------------------------- main */

static void draw_model(Rng *r, GenModel *g, const Options *o, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    name_model(r, g, seed);
    draw_alphabet(r, g);
    draw_states(r, g, o);
    NamingStyle style = rng_chance(r, 0.55) ? NAMES_PLAIN : (NamingStyle)rng_range(r, 1, 3);
    name_states(r, g, style);
    switch (o->structure) {
    case STRUCTURE_RANDOM:
        add_random_edges(r, g);
        add_spine(r, g);
        break;
    case STRUCTURE_CHAIN: add_chain(r, g, 0); break;
    case STRUCTURE_CYCLE: add_chain(r, g, 1); break;
    case STRUCTURE_PROFILE: add_profile(r, g); break;
    }
    if (!o->no_silent_cycles)
        add_silent_structures(r, g);
    add_odd_corners(r, g);
    if (o->no_silent_cycles)
        remove_silent_cycles(g);
    assign_emissions(r, g);
    name_emissions(g, style);
    weigh_edges(r, g);
    if (o->extreme)
        make_extreme(r, g);
}

static int parse_count(const char *text, const char *what, int lo, int hi)
{
    char *end;
    long value = strtol(text, &end, 10);
    if (*end || value < lo || value > hi)
        die("%s must be %d..%d, not %s", what, lo, hi, text);
    return (int)value;
}

static Structure parse_structure(const char *text)
{
    static const char *const names[] = { "random", "chain", "cycle", "profile" };
    for (int i = 0; i < 4; i++)
        if (strcmp(text, names[i]) == 0)
            return (Structure)i;
    die("--structure must be random, chain, cycle or profile, not %s", text);
    return STRUCTURE_RANDOM;
}

int main(int argc, char **argv)
{
    Options o = { -1, 20, 40, 0, 0, STRUCTURE_RANDOM };
    const char *positional[3];
    int count = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--states") == 0 && i + 1 < argc)
            o.states = parse_count(argv[++i], "--states", 0, MAX_OTHER_STATES);
        else if (strcmp(argv[i], "--seqs") == 0 && i + 1 < argc)
            o.seqs = parse_count(argv[++i], "--seqs", 1, 1000000);
        else if (strcmp(argv[i], "--maxlen") == 0 && i + 1 < argc)
            o.maxlen = parse_count(argv[++i], "--maxlen", 0, 100000000);
        else if (strcmp(argv[i], "--no-silent-cycles") == 0)
            o.no_silent_cycles = 1;
        else if (strcmp(argv[i], "--extreme") == 0)
            o.extreme = 1;
        else if (strcmp(argv[i], "--structure") == 0 && i + 1 < argc)
            o.structure = parse_structure(argv[++i]);
        else if (count < 3 && argv[i][0] != '-')
            positional[count++] = argv[i];
        else
            count = 99;
    }
    if (count != 3) {
        fputs("usage: genmodel SEED OUT.hmm OUT.fa [--states N] [--seqs M] [--maxlen L]\n"
              "                [--structure random|chain|cycle|profile] [--no-silent-cycles]\n"
              "                [--extreme]\n",
              stderr);
        return 2;
    }
    uint64_t seed = strtoull(positional[0], NULL, 10);
    Rng rng = { seed * 0x2545F4914F6CDD1DULL + 1 };
    static GenModel model;
    draw_model(&rng, &model, &o, seed);
    write_model(&rng, &model, positional[1], seed);
    write_sequences(&rng, &model, &o, positional[2]);
    return 0;
}
