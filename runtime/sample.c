/* sample.c: the sampler behind --sample (hmmrt_sample): draws sequences from
 * a model as written, with a seeded xoshiro256** generator, and writes them
 * as FASTA. */
#include "fb.h"
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    RESIDUES_PER_LINE = 60,
    MAX_SYMBOLS_UNTIL_END = 10000000, /* without --length: a draw longer than this fails */
    MAX_SILENT_MOVES = 1000000        /* silent moves in a row before a draw fails */
};

/* ---- random numbers: xoshiro256**, seeded through splitmix64 ------------- */
typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static void rng_seed(rng *g, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(rng *g)
{
    uint64_t *s = g->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in [0, 1). */
static double rng_uniform(rng *g)
{
    return (double)(rng_next(g) >> 11) * 0x1.0p-53;
}

/* ---- the sampler ---------------------------------------------------------- */
typedef struct sampler {
    const hmmrt_model *model;
    const char *alphabet;
    int n_symbols;
    int *first_move;      /* moves of state s: by_state[first_move[s] .. first_move[s+1]) */
    int *by_state;        /* indexes into model->moves, grouped by the state they leave */
    rng rng;
    hmmrt_buf residues, path;
    int real_dim;         /* > 0: observations of real_dim reals, one line each in residues */
    int64_t emitted;      /* symbols or observations drawn so far */
} sampler;

static int usable_weight(double w)
{
    return isfinite(w) && w > 0;
}

static int index_moves(sampler *s)
{
    const hmmrt_model *m = s->model;
    s->first_move = calloc((size_t)m->n_states + 1, sizeof *s->first_move);
    s->by_state = malloc(((size_t)m->n_moves + 1) * sizeof *s->by_state);
    if (!s->first_move || !s->by_state)
        return -1;
    for (int j = 0; j < m->n_moves; j++)
        s->first_move[m->moves[j].from + 1]++;
    for (int st = 0; st < m->n_states; st++)
        s->first_move[st + 1] += s->first_move[st];
    int *next = calloc((size_t)m->n_states + 1, sizeof *next);
    if (!next)
        return -1;
    memcpy(next, s->first_move, (size_t)m->n_states * sizeof *next);
    for (int j = 0; j < m->n_moves; j++)
        s->by_state[next[m->moves[j].from]++] = j;
    free(next);
    return 0;
}

static int move_allowed(const sampler *s, const hmmrt_model_move *mv, int before_length)
{
    return usable_weight(mv->weight) && !(before_length && mv->to == s->model->end);
}

/* A move out of state drawn in proportion to the weights, or -1 if none is
 * allowed; before_length excludes moves into the end state. */
static int pick_move(sampler *s, int state, int before_length)
{
    const hmmrt_model_move *moves = s->model->moves;
    double total = 0;
    int last = -1;
    for (int k = s->first_move[state]; k < s->first_move[state + 1]; k++)
        if (move_allowed(s, &moves[s->by_state[k]], before_length)) {
            total += moves[s->by_state[k]].weight;
            last = s->by_state[k];
        }
    if (last < 0)
        return -1;
    double u = rng_uniform(&s->rng) * total;
    for (int k = s->first_move[state]; k < s->first_move[state + 1]; k++) {
        const hmmrt_model_move *mv = &moves[s->by_state[k]];
        if (move_allowed(s, mv, before_length) && (u -= mv->weight) < 0)
            return s->by_state[k];
    }
    return last; /* rounding left u just above 0 */
}

/* A symbol drawn in proportion to an emission row, or -1 if all are 0. */
static int draw_symbol(sampler *s, int emission)
{
    const double *row = s->model->emissions + (size_t)emission * (size_t)s->n_symbols;
    double total = 0;
    int last = -1;
    for (int k = 0; k < s->n_symbols; k++)
        if (usable_weight(row[k])) {
            total += row[k];
            last = k;
        }
    if (last < 0)
        return -1;
    double u = rng_uniform(&s->rng) * total;
    for (int k = 0; k < s->n_symbols; k++)
        if (usable_weight(row[k]) && (u -= row[k]) < 0)
            return k;
    return last;
}

static const char *state_name(const sampler *s, int state)
{
    return s->model->state_names[state];
}

static void add_to_path(sampler *s, int state, int with_path)
{
    if (!with_path)
        return;
    if (s->path.len > 0)
        hmmrt_buf_putc(&s->path, ' ');
    hmmrt_buf_puts(&s->path, state_name(s, state));
}

static int no_move_error(const sampler *s, int state, int64_t emitted, int64_t length)
{
    const char *model = s->model->name;
    if (length > 0)
        hmmrt_error("sampling model %s: state %s has no move to take after %lld of the %lld "
                    "symbols asked (moves into %s wait for the last symbol): try another --length",
                    model, state_name(s, state), (long long)emitted, (long long)length,
                    state_name(s, s->model->end));
    else
        hmmrt_error("sampling model %s: state %s has no move out, and the end state %s was "
                    "not reached", model, state_name(s, state), state_name(s, s->model->end));
    return HMMRT_EXIT_INPUT;
}

static double uniform_of(void *g)
{
    return rng_uniform(g);
}

/* A real observation from the move's density, as a line of the text form
 * (17 significant digits: read back, it is the same double). */
static int draw_observation(sampler *s, const hmmrt_model_move *mv)
{
    double x[s->real_dim];
    if (hmmrt_density_draw(&s->model->densities->d[mv->emission], s->real_dim, uniform_of,
                           &s->rng, x) != 0) {
        hmmrt_error("sampling model %s: the move %s -> %s emits from a mixture whose weights "
                    "are all 0", s->model->name, state_name(s, mv->from), state_name(s, mv->to));
        return HMMRT_EXIT_INPUT;
    }
    for (int i = 0; i < s->real_dim; i++) {
        char v[32];
        snprintf(v, sizeof v, "%s%.17g", i ? " " : "", x[i]);
        hmmrt_buf_puts(&s->residues, v);
    }
    hmmrt_buf_putc(&s->residues, '\n');
    return 0;
}

/* Takes move j: its state joins the path, its emission (if any) a symbol. */
static int take_move(sampler *s, int j, int with_path, int *silent_run)
{
    const hmmrt_model_move *mv = &s->model->moves[j];
    add_to_path(s, mv->to, with_path);
    if (mv->emission < 0) {
        if (++*silent_run <= MAX_SILENT_MOVES)
            return 0;
        hmmrt_error("sampling model %s: %d silent moves in a row at state %s: its silent "
                    "moves go round without emitting", s->model->name, MAX_SILENT_MOVES,
                    state_name(s, mv->to));
        return HMMRT_EXIT_INPUT;
    }
    *silent_run = 0;
    s->emitted++;
    if (s->real_dim)
        return draw_observation(s, mv);
    int symbol = draw_symbol(s, mv->emission);
    if (symbol < 0) {
        hmmrt_error("sampling model %s: the move %s -> %s emits from a row of weights that "
                    "are all 0", s->model->name, state_name(s, mv->from), state_name(s, mv->to));
        return HMMRT_EXIT_INPUT;
    }
    hmmrt_buf_putc(&s->residues, s->alphabet[symbol]);
    return 0;
}

/* Draws one sequence into s->residues (and s->path): 0 or an exit status. */
static int draw_sequence(sampler *s, int64_t length, int with_path)
{
    const hmmrt_model *m = s->model;
    hmmrt_buf_reset(&s->residues);
    hmmrt_buf_reset(&s->path);
    s->emitted = 0;
    int state = m->start, silent_run = 0;
    add_to_path(s, state, with_path);
    for (;;) {
        int64_t emitted = s->emitted;
        if (length > 0 ? emitted == length : state == m->end)
            return 0;
        int j = pick_move(s, state, length > 0);
        if (j < 0)
            return no_move_error(s, state, emitted, length);
        int status = take_move(s, j, with_path, &silent_run);
        if (status)
            return status;
        if (hmmrt_buf_take_failure()) {
            hmmrt_error("out of memory while sampling model %s", m->name);
            return HMMRT_EXIT_INTERNAL;
        }
        if (length == 0 && s->emitted > MAX_SYMBOLS_UNTIL_END) {
            hmmrt_error("sampling model %s: the end state was not reached after %d symbols: "
                        "pass --length L to draw sequences of L symbols",
                        m->name, MAX_SYMBOLS_UNTIL_END);
            return HMMRT_EXIT_INPUT;
        }
        state = m->moves[j].to;
    }
}

static void write_record(const sampler *s, long number, int with_path, FILE *out)
{
    fprintf(out, ">sample%ld", number);
    if (with_path)
        fprintf(out, " path=%s", s->path.len ? s->path.data : "");
    fputc('\n', out);
    if (s->real_dim) { /* one observation a line already */
        if (s->residues.len)
            fwrite(s->residues.data, 1, s->residues.len, out);
        return;
    }
    for (size_t at = 0; at < s->residues.len; at += RESIDUES_PER_LINE) {
        size_t n = s->residues.len - at;
        fwrite(s->residues.data + at, 1, n < RESIDUES_PER_LINE ? n : RESIDUES_PER_LINE, out);
        fputc('\n', out);
    }
}

static int check_written(FILE *out)
{
    if (!ferror(out) && fflush(out) == 0)
        return 0;
    hmmrt_error("cannot write the output: %s", strerror(errno ? errno : EIO));
    return HMMRT_EXIT_OUTPUT;
}

static int check_model(const hmmrt_program *prog, int model)
{
    if (model < 0 || model >= prog->n_models) {
        hmmrt_error("no model number %d to sample: the program has %d", model, prog->n_models);
        return HMMRT_EXIT_USAGE;
    }
    const hmmrt_model *m = &prog->models[model];
    for (int j = 0; j < m->n_moves; j++)
        if (m->moves[j].from < 0 || m->moves[j].from >= m->n_states || m->moves[j].to < 0 ||
            m->moves[j].to >= m->n_states) {
            hmmrt_error("model %s: move %d joins states that do not exist", m->name, j);
            return HMMRT_EXIT_INTERNAL;
        }
    return 0;
}

static void free_sampler(sampler *s)
{
    free(s->first_move);
    free(s->by_state);
    hmmrt_buf_free(&s->residues);
    hmmrt_buf_free(&s->path);
}

int hmmrt_sample(const hmmrt_program *prog, int model, long n, int64_t length, uint64_t seed,
                 int with_path, FILE *out)
{
    hmmrt_default_progname(prog->name); /* when hmmrt_main has not named it */
    int status = check_model(prog, model);
    if (status)
        return status;
    sampler s = {.model = &prog->models[model]};
    hmmrt_model listed = *s.model;
    hmmrt_model_move *made = NULL;
    if (!listed.moves && listed.dense) {
        made = hmmrt_dense_moves(&listed, &listed.n_moves);
        if (!made) {
            hmmrt_error("out of memory while sampling model %s", listed.name);
            return HMMRT_EXIT_INTERNAL;
        }
        listed.moves = made;
        s.model = &listed;
    }
    s.alphabet = prog->alphabets[s.model->alphabet];
    s.n_symbols = (int)strlen(s.alphabet);
    s.real_dim = s.model->densities ? prog->real_dim : 0;
    rng_seed(&s.rng, seed);
    if (index_moves(&s) != 0) {
        hmmrt_error("out of memory while sampling model %s", s.model->name);
        status = HMMRT_EXIT_INTERNAL;
    }
    for (long i = 0; i < n && !status; i++) {
        status = draw_sequence(&s, length, with_path);
        if (!status) {
            write_record(&s, i + 1, with_path, out);
            if (ferror(out))
                status = check_written(out);
        }
    }
    int flushed = status == HMMRT_EXIT_OUTPUT ? 0 : check_written(out);
    free_sampler(&s);
    free(made);
    return flushed ? flushed : status;
}
