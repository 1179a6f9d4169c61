/* hmmref.c: the plain reference implementation that the differential tests
 * hold every hmmc backend against. It shares no code with the compiler or the
 * runtime on purpose: it has its own small parser for .hmm files, its own
 * FASTA reader, and computes forward, backward and viterbi, posteriors and
 * one Baum-Welch step straight from the definitions in
 * /work/shared/design/language.md (column by column, silent moves solved
 * exactly as a linear system, long double, scaled columns; the E-step is in
 * hmmref_expect.h, posterior output in hmmref_decode.h, the M-step in hmmref_em.h).
 *
 *   hmmref MODEL.hmm SEQS.fa [--model NAME] [--segments]
 *       name<TAB>forward<TAB>backward<TAB>viterbi<TAB>traceback   per record
 *       (name<TAB>INVALID for a record with a symbol outside the alphabet);
 *       --segments adds the viterbi path's segments as a sixth field
 *   hmmref --path MODEL.hmm SEQS.fa TRACEBACKS.tsv [--model NAME]
 *       name<TAB>ln(probability of the given path)   per line of the tsv
 *   hmmref --brute MODEL.hmm SEQS.fa [--model NAME] [--max-moves N]
 *       the same five fields as the first form, by enumerating every path
 *       (backward = forward there); a model with silent cycles needs
 *       --max-moves, and its sums are then truncated at N moves.
 *   hmmref --posterior MODEL.hmm SEQS.fa [--model NAME] [--brute [--max-moves N]]
 *       a line `# states: S1 S2 ...` (declaration order), then per record
 *       name<TAB>forward<TAB>decode<TAB>segments<TAB>probability table, in the
 *       contract's forms (values %.12g; `-` three times for no path or an
 *       empty sequence); the posterior of q at i is the probability that the
 *       i-th emitting move ends in q (a silent destination included).
 *       --brute: the same by enumerating every path.
 *   hmmref --em MODEL.hmm SEQS.fa [--model NAME] [--pseudocount C]
 *              [--viterbi-training | --brute [--max-moves N]] [--counts | --write]
 *       one Baum-Welch iteration as the contract's "Training" says (`fixed`
 *       kept, totals per state and per table kept, zeros kept, no use: kept):
 *         loglik TOTAL                   (the forward total before the step)
 *         viterbi TOTAL                  (--viterbi-training: the viterbi total)
 *         FROM -> TO WEIGHT              (every transition as declared, 0 too)
 *         emission NAME V1 ... VK        (every table, alphabet order)
 *       numbers %.17g. --counts prints the expected uses in their place;
 *       --write prints the whole source file with the model's numbers replaced
 *       (unchanged ones keep their text) and the totals on stderr. Sequences
 *       without a path are left out and named on stderr (exit status 0).
 *       Exit status 4, nothing on stdout: the new weights would make a silent
 *       cycle's sum diverge (the contract's model that cannot be trained).
 *       --viterbi-training counts the uses along the best path; --brute
 *       counts them by enumerating every path.
 *
 * The model is assumed valid (hmmc checks that); anything unexpected stops
 * the program with a message and exit status 2 (3: --brute found too many
 * paths to enumerate). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL_NAME "hmmref"
#include "tool_common.h"

/* ------------------------------------------------------------------ errors */


static char *xstrdup(const char *s)
{
    char *copy = xcalloc(strlen(s) + 1, 1);
    strcpy(copy, s);
    return copy;
}

static char *read_whole_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open %s: %s", path, strerror(errno));
    size_t len = 0, cap = 4096;
    char *text = xcalloc(cap, 1);
    size_t got;
    while ((got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            cap *= 2;
            text = xrealloc(text, cap);
        }
    }
    fclose(f);
    text[len] = '\0';
    return text;
}

/* ------------------------------------------------------------------- lexer */

typedef enum {
    TOK_END,    /* end of the file */
    TOK_IDENT,  /* letter, then letters, digits, '_' */
    TOK_NUMBER, /* 1, 0.95, .5, 1e-5 */
    TOK_QUOTED, /* 'c': a quoted alphabet symbol, text holds the one character */
    TOK_ARROW,  /* -> */
    TOK_PUNCT   /* any other single character: { } [ ] ( ) ; , : = / . */
} TokenKind;

typedef struct {
    TokenKind kind;
    char text[256];
    int line;
    size_t start; /* offset of the token in the source text */
} Token;

typedef struct {
    const char *path;
    const char *src;
    size_t pos;
    int line;
    Token tok;      /* the current token */
    size_t prev_end; /* offset just after the token before the current one */
} Lexer;

static void lex_error(Lexer *lx, const char *what)
{
    die("%s:%d: %s (at '%s')", lx->path, lx->tok.line, what, lx->tok.text);
}

static void skip_space_and_comments(Lexer *lx)
{
    for (;;) {
        char c = lx->src[lx->pos];
        if (c == '\n') {
            lx->line++;
            lx->pos++;
        } else if (isspace((unsigned char)c)) {
            lx->pos++;
        } else if (c == '/' && lx->src[lx->pos + 1] == '/') {
            while (lx->src[lx->pos] && lx->src[lx->pos] != '\n')
                lx->pos++;
        } else if (c == '/' && lx->src[lx->pos + 1] == '*') {
            lx->pos += 2;
            while (lx->src[lx->pos] && !(lx->src[lx->pos] == '*' && lx->src[lx->pos + 1] == '/')) {
                if (lx->src[lx->pos] == '\n')
                    lx->line++;
                lx->pos++;
            }
            if (!lx->src[lx->pos])
                die("%s:%d: unterminated /* comment", lx->path, lx->line);
            lx->pos += 2;
        } else {
            return;
        }
    }
}

static size_t number_length(const char *s)
{
    size_t n = 0;
    while (isdigit((unsigned char)s[n]))
        n++;
    if (s[n] == '.') {
        n++;
        while (isdigit((unsigned char)s[n]))
            n++;
    }
    if (s[n] == 'e' || s[n] == 'E') {
        size_t m = n + 1;
        if (s[m] == '+' || s[m] == '-')
            m++;
        if (isdigit((unsigned char)s[m])) {
            while (isdigit((unsigned char)s[m]))
                m++;
            n = m;
        }
    }
    return n;
}

static void set_token(Lexer *lx, TokenKind kind, size_t length)
{
    if (length >= sizeof lx->tok.text)
        die("%s:%d: token too long", lx->path, lx->line);
    lx->tok.kind = kind;
    memcpy(lx->tok.text, lx->src + lx->pos, length);
    lx->tok.text[length] = '\0';
    lx->tok.line = lx->line;
    lx->tok.start = lx->pos;
    lx->pos += length;
}

static void next_token(Lexer *lx)
{
    lx->prev_end = lx->pos;
    skip_space_and_comments(lx);
    const char *s = lx->src + lx->pos;
    if (!*s) {
        set_token(lx, TOK_END, 0);
    } else if (isalpha((unsigned char)*s)) {
        size_t n = 1;
        while (isalnum((unsigned char)s[n]) || s[n] == '_')
            n++;
        set_token(lx, TOK_IDENT, n);
    } else if (isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) {
        set_token(lx, TOK_NUMBER, number_length(s));
    } else if (*s == '\'') {
        if (!s[1] || s[2] != '\'')
            die("%s:%d: malformed quoted symbol", lx->path, lx->line);
        lx->pos += 1;
        set_token(lx, TOK_QUOTED, 1);
        lx->pos += 1;
    } else if (s[0] == '-' && s[1] == '>') {
        set_token(lx, TOK_ARROW, 2);
    } else {
        set_token(lx, TOK_PUNCT, 1);
    }
}

static int token_is(const Lexer *lx, const char *text)
{
    return lx->tok.kind != TOK_END && lx->tok.kind != TOK_QUOTED && strcmp(lx->tok.text, text) == 0;
}

static void expect(Lexer *lx, const char *text)
{
    if (!token_is(lx, text)) {
        char what[300];
        snprintf(what, sizeof what, "expected '%s'", text);
        lex_error(lx, what);
    }
    next_token(lx);
}

static char *expect_identifier(Lexer *lx)
{
    if (lx->tok.kind != TOK_IDENT)
        lex_error(lx, "expected a name");
    char *name = xstrdup(lx->tok.text);
    next_token(lx);
    return name;
}

/* An alphabet symbol: bare (one letter or digit) or quoted. */
static char expect_symbol(Lexer *lx)
{
    int bare = (lx->tok.kind == TOK_IDENT || lx->tok.kind == TOK_NUMBER) && strlen(lx->tok.text) == 1;
    if (!bare && lx->tok.kind != TOK_QUOTED)
        lex_error(lx, "expected an alphabet symbol");
    char symbol = lx->tok.text[0];
    next_token(lx);
    return symbol;
}

static long double expect_plain_number(Lexer *lx)
{
    if (lx->tok.kind != TOK_NUMBER)
        lex_error(lx, "expected a number");
    char *end;
    long double value = strtold(lx->tok.text, &end);
    if (*end)
        lex_error(lx, "malformed number");
    next_token(lx);
    return value;
}

#include "hmmref_length.h"

/* NUMBER or NUMBER / NUMBER */
static long double expect_probability(Lexer *lx)
{
    long double value = expect_plain_number(lx);
    if (token_is(lx, "/")) {
        next_token(lx);
        long double denominator = expect_plain_number(lx);
        if (denominator == 0)
            lex_error(lx, "division by zero");
        value /= denominator;
    }
    if (!(value >= 0) || isinf(value))
        lex_error(lx, "weight must be finite and >= 0");
    return value;
}

/* ------------------------------------------------------------------- model */

typedef struct {
    char *name;
    char *emission_name; /* NULL: silent */
    int emission;        /* index into Model.emissions, -1: silent */
} State;

typedef struct {
    char *name;
    int is_dict;      /* { sym: p } form: symbols not named get 0 */
    int count;        /* entries as written */
    char *symbols;    /* dict form: symbol of each entry */
    long double *raw; /* values as written */
    size_t *span_start, *span_end; /* where each value is written in the source */
    int fixed;        /* `fixed`: training keeps the values */
    long double *value; /* value per alphabet symbol, filled by resolve_model */
    long double *log_value; /* ln of value (for viterbi) */
} Emission;

typedef struct {
    char *from_name, *to_name, *emission_name;
    int from, to;
    int emission;       /* index of the transition's own emission, -1: none */
    long double weight; /* > 0 */
    long double log_weight;
    int fixed;          /* `fixed`: training keeps the weight */
    int decl;           /* index in Model.declared */
    char *length_expr;  /* `(EXPR)` of L as written (hmmref_length.h), or NULL */
    size_t span_start, span_end; /* where the weight is written in the source */
} Transition;

typedef struct {
    char *name;
    int alphabet_size;
    char alphabet[256];
    int symbol_index[256]; /* character -> alphabet index, -1 if not a symbol */
    char *start_name, *end_name;
    int start, end;
    int state_count;
    State *states;
    int emission_count;
    Emission *emissions;
    int transition_count;
    Transition *transitions; /* those that exist: weight > 0, on a complete path */
    int declared_count;
    Transition *declared;    /* every transition as written, weight 0 included */
    int length_weights;      /* transitions written (EXPR) of L: set_length sets them */
} Model;

typedef struct {
    const char *path;
    const char *text; /* the whole source, for --em --write */
    int model_count;
    Model *models;
    int main_new_count;
    char *main_new_names[64]; /* models named by `new X(` in main */
} SourceFile;

static void parse_alphabet(Lexer *lx, Model *m)
{
    if (m->alphabet_size)
        lex_error(lx, "second alphabet");
    expect(lx, "[");
    for (;;) {
        char symbol = expect_symbol(lx);
        if (m->alphabet_size >= 255)
            lex_error(lx, "alphabet too large");
        m->alphabet[m->alphabet_size++] = symbol;
        if (!token_is(lx, ","))
            break;
        next_token(lx);
    }
    expect(lx, "]");
    expect(lx, ";");
}

static void add_state(Model *m, char *name, char *emission_name)
{
    m->states = xrealloc(m->states, (m->state_count + 1) * sizeof *m->states);
    m->states[m->state_count++] = (State){ name, emission_name, -1 };
}

static void parse_state(Lexer *lx, Model *m)
{
    char *name = expect_identifier(lx);
    char *emission_name = NULL;
    if (token_is(lx, "emits")) {
        next_token(lx);
        emission_name = expect_identifier(lx);
    }
    expect(lx, ";");
    add_state(m, name, emission_name);
}

/* Reads one value of an emission and remembers where it is written. */
static void add_emission_entry(Lexer *lx, Emission *e, char symbol)
{
    e->symbols = xrealloc(e->symbols, e->count + 1);
    e->raw = xrealloc(e->raw, (e->count + 1) * sizeof *e->raw);
    e->span_start = xrealloc(e->span_start, (e->count + 1) * sizeof *e->span_start);
    e->span_end = xrealloc(e->span_end, (e->count + 1) * sizeof *e->span_end);
    e->symbols[e->count] = symbol;
    e->span_start[e->count] = lx->tok.start;
    e->raw[e->count] = expect_probability(lx);
    e->span_end[e->count] = lx->prev_end;
    e->count++;
}

static void parse_emission(Lexer *lx, Model *m)
{
    Emission e = { 0 };
    e.name = expect_identifier(lx);
    expect(lx, "=");
    if (token_is(lx, "[")) {
        next_token(lx);
        for (;;) {
            add_emission_entry(lx, &e, 0);
            if (!token_is(lx, ","))
                break;
            next_token(lx);
        }
        expect(lx, "]");
    } else {
        e.is_dict = 1;
        expect(lx, "{");
        while (!token_is(lx, "}")) {
            char symbol = expect_symbol(lx);
            expect(lx, ":");
            add_emission_entry(lx, &e, symbol);
            if (!token_is(lx, ","))
                break;
            next_token(lx);
        }
        expect(lx, "}");
    }
    if (token_is(lx, "fixed")) {
        e.fixed = 1;
        next_token(lx);
    }
    expect(lx, ";");
    m->emissions = xrealloc(m->emissions, (m->emission_count + 1) * sizeof *m->emissions);
    m->emissions[m->emission_count++] = e;
}

static void parse_transition(Lexer *lx, Model *m, char *from_name)
{
    Transition t = { 0 };
    t.from_name = from_name;
    expect(lx, "->");
    t.to_name = expect_identifier(lx);
    t.span_start = lx->tok.start;
    if (token_is(lx, "(")) { /* a length-dependent weight: its text, evaluated per sequence */
        for (int depth = 0;;) {
            if (lx->tok.kind == TOK_END)
                lex_error(lx, "unclosed length-dependent weight");
            depth += token_is(lx, "(") - token_is(lx, ")");
            next_token(lx);
            if (depth == 0)
                break;
        }
        size_t n = lx->prev_end - t.span_start;
        t.length_expr = xcalloc(n + 1, 1);
        memcpy(t.length_expr, lx->src + t.span_start, n);
        t.length_expr[n] = '\0';
        t.weight = length_value(t.length_expr, 1); /* checked; set_length sets it */
        t.weight = 1;
        m->length_weights++;
    } else {
        t.weight = expect_probability(lx);
    }
    t.span_end = lx->prev_end;
    for (int word = 0; word < 2; word++) { /* `fixed` before or after `emits EM` */
        if (token_is(lx, "emits") && !t.emission_name) {
            next_token(lx);
            t.emission_name = expect_identifier(lx);
        } else if (token_is(lx, "fixed") && !t.fixed) {
            t.fixed = 1;
            next_token(lx);
        }
    }
    expect(lx, ";");
    t.decl = m->declared_count;
    m->declared = xrealloc(m->declared, (m->declared_count + 1) * sizeof *m->declared);
    m->declared[m->declared_count++] = t;
    if (t.weight == 0)
        return; /* a transition of weight 0 does not exist */
    m->transitions = xrealloc(m->transitions, (m->transition_count + 1) * sizeof *m->transitions);
    m->transitions[m->transition_count++] = t;
}

static void parse_declaration(Lexer *lx, Model *m)
{
    if (lx->tok.kind != TOK_IDENT)
        lex_error(lx, "expected a declaration");
    char *word = expect_identifier(lx);
    if (strcmp(word, "alphabet") == 0) {
        parse_alphabet(lx, m);
    } else if (strcmp(word, "startstate") == 0) {
        m->start_name = expect_identifier(lx);
        expect(lx, ";");
        add_state(m, xstrdup(m->start_name), NULL);
    } else if (strcmp(word, "endstate") == 0) {
        m->end_name = expect_identifier(lx);
        expect(lx, ";");
        add_state(m, xstrdup(m->end_name), NULL);
    } else if (strcmp(word, "state") == 0) {
        parse_state(lx, m);
    } else if (strcmp(word, "emission") == 0) {
        parse_emission(lx, m);
    } else {
        parse_transition(lx, m, word);
        return; /* the name is kept by the transition */
    }
    free(word);
}

static void parse_hmm_block(Lexer *lx, SourceFile *file)
{
    Model m = { 0 };
    m.name = expect_identifier(lx);
    if (token_is(lx, "scores")) /* `hmm NAME scores {`: changes no number */
        next_token(lx);
    expect(lx, "{");
    while (!token_is(lx, "}")) {
        if (lx->tok.kind == TOK_END)
            lex_error(lx, "unterminated hmm block");
        parse_declaration(lx, &m);
    }
    next_token(lx);
    file->models = xrealloc(file->models, (file->model_count + 1) * sizeof *file->models);
    file->models[file->model_count++] = m;
}

/* Skips main { ... } by brace matching, remembering every `new NAME`. */
static void skip_main_block(Lexer *lx, SourceFile *file)
{
    expect(lx, "{");
    int depth = 1;
    int after_new = 0;
    while (depth > 0) {
        if (lx->tok.kind == TOK_END)
            lex_error(lx, "unterminated main block");
        if (after_new && lx->tok.kind == TOK_IDENT && file->main_new_count < 64)
            file->main_new_names[file->main_new_count++] = xstrdup(lx->tok.text);
        after_new = lx->tok.kind == TOK_IDENT && strcmp(lx->tok.text, "new") == 0;
        if (token_is(lx, "{"))
            depth++;
        if (token_is(lx, "}"))
            depth--;
        next_token(lx);
    }
}

static SourceFile parse_source(const char *path)
{
    SourceFile file = { 0 };
    Lexer lx = { path, read_whole_file(path), 0, 1, { 0 }, 0 };
    file.path = path;
    file.text = lx.src;
    next_token(&lx);
    while (lx.tok.kind != TOK_END) {
        if (token_is(&lx, "hmm")) {
            next_token(&lx);
            parse_hmm_block(&lx, &file);
        } else if (token_is(&lx, "main")) {
            next_token(&lx);
            skip_main_block(&lx, &file);
        } else {
            lex_error(&lx, "expected 'hmm' or 'main'");
        }
    }
    return file;
}

/* ------------------------------------------------ resolving names in a model */

static int find_state(const Model *m, const char *name)
{
    for (int i = 0; i < m->state_count; i++)
        if (strcmp(m->states[i].name, name) == 0)
            return i;
    die("model %s: unknown state %s", m->name, name);
    return -1;
}

static int find_emission(const Model *m, const char *name)
{
    for (int i = 0; i < m->emission_count; i++)
        if (strcmp(m->emissions[i].name, name) == 0)
            return i;
    die("model %s: unknown emission %s", m->name, name);
    return -1;
}

static void resolve_emission_values(const Model *m, Emission *e)
{
    e->value = xcalloc(m->alphabet_size, sizeof *e->value);
    e->log_value = xcalloc(m->alphabet_size, sizeof *e->log_value);
    if (!e->is_dict) {
        if (e->count != m->alphabet_size)
            die("model %s: emission %s has %d values, alphabet has %d", m->name, e->name, e->count,
                m->alphabet_size);
        for (int k = 0; k < e->count; k++)
            e->value[k] = e->raw[k];
    } else {
        for (int k = 0; k < e->count; k++) {
            int symbol = m->symbol_index[(unsigned char)e->symbols[k]];
            if (symbol < 0)
                die("model %s: emission %s names symbol '%c' outside the alphabet", m->name, e->name,
                    e->symbols[k]);
            e->value[symbol] = e->raw[k];
        }
    }
    for (int k = 0; k < m->alphabet_size; k++)
        e->log_value[k] = logl(e->value[k]);
}

static void resolve_model(Model *m)
{
    if (!m->alphabet_size || !m->start_name || !m->end_name)
        die("model %s: needs an alphabet, a start state and an end state", m->name);
    for (int c = 0; c < 256; c++)
        m->symbol_index[c] = -1;
    for (int k = 0; k < m->alphabet_size; k++)
        m->symbol_index[(unsigned char)m->alphabet[k]] = k;
    for (int i = 0; i < m->emission_count; i++)
        resolve_emission_values(m, &m->emissions[i]);
    for (int i = 0; i < m->state_count; i++)
        if (m->states[i].emission_name)
            m->states[i].emission = find_emission(m, m->states[i].emission_name);
    m->start = find_state(m, m->start_name);
    m->end = find_state(m, m->end_name);
    for (int i = 0; i < m->transition_count; i++) {
        Transition *t = &m->transitions[i];
        t->from = find_state(m, t->from_name);
        t->to = find_state(m, t->to_name);
        t->emission = t->emission_name ? find_emission(m, t->emission_name) : -1;
        t->log_weight = logl(t->weight);
        if (t->emission >= 0 && m->states[t->to].emission >= 0)
            die("model %s: emitting transition into emitting state %s", m->name, t->to_name);
    }
    for (int i = 0; i < m->declared_count; i++) {
        Transition *t = &m->declared[i];
        t->from = find_state(m, t->from_name);
        t->to = find_state(m, t->to_name);
        t->emission = t->emission_name ? find_emission(m, t->emission_name) : -1;
    }
}

/* Leaves out the transitions of states that no complete path visits (not
 * reachable from the start, or not reaching the end): no score changes, but
 * such a state no longer shares a scaled column with the live ones. A dead
 * end whose self-loop weighs 1e266 grew 1e4788 times larger than the path
 * that ends within 18 positions, and the end's value left long double's
 * range (a genmodel --extreme model, issue 21). */
static void drop_dead_transitions(Model *m)
{
    char *from_start = xcalloc(m->state_count, 1), *to_end = xcalloc(m->state_count, 1);
    from_start[m->start] = to_end[m->end] = 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < m->transition_count; i++) {
            const Transition *t = &m->transitions[i];
            if (t->weight > 0 && from_start[t->from] && !from_start[t->to])
                from_start[t->to] = changed = 1;
            if (t->weight > 0 && to_end[t->to] && !to_end[t->from])
                to_end[t->from] = changed = 1;
        }
    }
    int kept = 0;
    for (int i = 0; i < m->transition_count; i++) {
        const Transition *t = &m->transitions[i];
        if (from_start[t->from] && to_end[t->from] && from_start[t->to] && to_end[t->to])
            m->transitions[kept++] = *t;
    }
    m->transition_count = kept;
    free(from_start);
    free(to_end);
}

static Model *choose_model(SourceFile *file, const char *wanted)
{
    if (!wanted && file->main_new_count > 0) {
        wanted = file->main_new_names[0];
        for (int i = 1; i < file->main_new_count; i++)
            if (strcmp(file->main_new_names[i], wanted) != 0)
                die("main uses several models; choose one with --model NAME");
    }
    if (!wanted && file->model_count != 1)
        die("the file holds %d models; choose one with --model NAME", file->model_count);
    for (int i = 0; i < file->model_count; i++)
        if (!wanted || strcmp(file->models[i].name, wanted) == 0) {
            resolve_model(&file->models[i]);
            drop_dead_transitions(&file->models[i]);
            return &file->models[i];
        }
    die("no model named %s", wanted);
    return NULL;
}

/* The emission a transition's move uses: its own, or its destination's; -1 if silent. */
static int move_emission(const Model *m, const Transition *t)
{
    return t->emission >= 0 ? t->emission : m->states[t->to].emission;
}

static int is_silent_state(const Model *m, int state)
{
    return m->states[state].emission < 0;
}

/* ------------------------------------------------------------------- FASTA */

typedef struct {
    char *name;
    char *text; /* the symbols, white space removed */
    long length;
} Record;

typedef struct {
    int count;
    Record *records;
} RecordList;

static void append_char(Record *r, long *cap, char c)
{
    if (r->length + 2 > *cap) {
        *cap = *cap ? *cap * 2 : 64;
        r->text = xrealloc(r->text, *cap);
    }
    r->text[r->length++] = c;
    r->text[r->length] = '\0';
}

static char *first_word(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = 0;
    while (s[n] && !isspace((unsigned char)s[n]))
        n++;
    char *word = xcalloc(n + 1, 1);
    memcpy(word, s, n);
    return word;
}

static RecordList read_fasta(const char *path)
{
    RecordList list = { 0, NULL };
    char *text = read_whole_file(path);
    long cap = 0;
    for (char *line = text; *line;) {
        char *eol = strchr(line, '\n');
        if (eol)
            *eol = '\0';
        if (line[0] == '>') {
            list.records = xrealloc(list.records, (list.count + 1) * sizeof *list.records);
            list.records[list.count++] = (Record){ first_word(line + 1), xcalloc(1, 1), 0 };
            cap = 1;
        } else {
            for (char *c = line; *c; c++) {
                if (isspace((unsigned char)*c))
                    continue;
                if (!list.count)
                    die("%s: sequence text before the first '>'", path);
                append_char(&list.records[list.count - 1], &cap, *c);
            }
        }
        if (!eol)
            break;
        line = eol + 1;
    }
    free(text);
    return list;
}

/* Maps a record to alphabet indexes; returns NULL if a symbol is not in the alphabet. */
static int *encode_record(const Model *m, const Record *r)
{
    int *codes = xcalloc(r->length + 1, sizeof *codes);
    for (long i = 0; i < r->length; i++) {
        codes[i] = m->symbol_index[(unsigned char)r->text[i]];
        if (codes[i] < 0) {
            free(codes);
            return NULL;
        }
    }
    return codes;
}

/* ------------------------------------------- dense linear algebra, long double */

/* The non-zero entries of one triangle of the factors, by line: line k
 * holds entries start[k] .. start[k+1]-1 (index of the other coordinate, value). */
typedef struct {
    int *start;
    int *index;
    long double *value;
} SparseTriangle;

/* An n x n matrix factored as A = L U by Gaussian elimination (no pivoting:
 * see factor_matrix); the factors overwrite the matrix.
 * The solves use the non-zero entries only (the same arithmetic as the dense
 * loops, without the products with 0), which keeps large profile models fast. */
typedef struct {
    int n;
    long double *a; /* row-major */
    SparseTriangle lower; /* by column k: rows r > k with L[r][k] != 0 */
    SparseTriangle upper; /* by row k: columns c > k with U[k][c] != 0 */
} Factored;

/* Collects a triangle's non-zero entries; `lower` picks L by column, else U by row. */
static SparseTriangle collect_triangle(const long double *a, int n, int lower)
{
    SparseTriangle t = { xcalloc(n + 1, sizeof(int)), NULL, NULL };
    int count = 0;
    for (int pass = 0; pass < 2; pass++) {
        count = 0;
        for (int k = 0; k < n; k++) {
            t.start[k] = count;
            for (int other = k + 1; other < n; other++) {
                long double v = lower ? a[other * n + k] : a[k * n + other];
                if (v == 0)
                    continue;
                if (pass == 1) {
                    t.index[count] = other;
                    t.value[count] = v;
                }
                count++;
            }
        }
        t.start[n] = count;
        if (pass == 0) {
            t.index = xcalloc(count, sizeof(int));
            t.value = xcalloc(count, sizeof(long double));
        }
    }
    return t;
}

/* Gaussian elimination in place, no pivoting (factor_matrix says why);
 * returns the first pivot that is not > 0 (a silent cycle whose sum
 * diverges: I - S is then no M-matrix), or -1 when every pivot is. */
static int eliminate(long double *a, int n)
{
    for (int k = 0; k < n; k++) {
        if (!(a[k * n + k] > 0))
            return k;
        for (int r = k + 1; r < n; r++) {
            if (a[r * n + k] == 0)
                continue;
            long double factor = a[r * n + k] / a[k * n + k];
            a[r * n + k] = factor;
            for (int c = k + 1; c < n; c++)
                a[r * n + c] -= factor * a[k * n + c];
        }
    }
    return -1;
}

/* LU without pivoting: I - S is an M-matrix (S >= 0, its walks' sums
 * converge), so every pivot is positive and no update subtracts across signs
 * off the diagonal. That also makes the factors follow a diagonal scaling of
 * the matrix exactly (weights 1e300 into a state and 1e-300 out of it), where
 * partial pivoting would pick rows by their scale and lose every digit. */
static void factor_matrix(Factored *f)
{
    int bad = eliminate(f->a, f->n);
    if (bad >= 0)
        die("silent system: pivot %d is %Lg, not > 0: a silent cycle does not converge", bad,
            f->a[bad * f->n + bad]);
    f->lower = collect_triangle(f->a, f->n, 1);
    f->upper = collect_triangle(f->a, f->n, 0);
}

/* Solves A x = b in place (b becomes x) with the factors of A. */
static void solve_factored(const Factored *f, long double *b)
{
    int n = f->n;
    for (int k = 0; k < n; k++) /* L y = b, column by column */
        if (b[k] != 0)
            for (int e = f->lower.start[k]; e < f->lower.start[k + 1]; e++)
                b[f->lower.index[e]] -= f->lower.value[e] * b[k];
    for (int k = n - 1; k >= 0; k--) { /* U x = y, row by row */
        for (int e = f->upper.start[k]; e < f->upper.start[k + 1]; e++)
            b[k] -= f->upper.value[e] * b[f->upper.index[e]];
        b[k] /= f->a[k * n + k];
    }
}

static void free_factored(Factored *f)
{
    free(f->a);
    free(f->lower.start);
    free(f->lower.index);
    free(f->lower.value);
    free(f->upper.start);
    free(f->upper.index);
    free(f->upper.value);
}

/* The silent part of a model: silent states numbered 0..count-1 and the
 * matrix I - S over them (S[i][j] = weight of the silent move i -> j). */
typedef struct {
    int count;
    int *index_of_state; /* state -> silent index, -1 for emitting states */
    int *state_of_index;
} SilentStates;

static SilentStates find_silent_states(const Model *m)
{
    SilentStates s = { 0, xcalloc(m->state_count, sizeof(int)), xcalloc(m->state_count, sizeof(int)) };
    for (int q = 0; q < m->state_count; q++) {
        s.index_of_state[q] = is_silent_state(m, q) ? s.count : -1;
        if (is_silent_state(m, q))
            s.state_of_index[s.count++] = q;
    }
    return s;
}

/* Factors I - S (transposed when `transpose`) over the silent states. */
static Factored factor_silent_system(const Model *m, const SilentStates *s, int transpose)
{
    int n = s->count;
    Factored f = { n, xcalloc((size_t)n * n, sizeof(long double)), { 0 }, { 0 } };
    for (int i = 0; i < n; i++)
        f.a[i * n + i] = 1;
    for (int t = 0; t < m->transition_count; t++) {
        const Transition *tr = &m->transitions[t];
        int from = s->index_of_state[tr->from], to = s->index_of_state[tr->to];
        if (move_emission(m, tr) >= 0 || from < 0 || to < 0)
            continue;
        if (transpose)
            f.a[to * n + from] -= tr->weight;
        else
            f.a[from * n + to] -= tr->weight;
    }
    factor_matrix(&f);
    return f;
}

/* Which silent states can hold a non-zero value after solving: those with a
 * non-zero right-hand side and those reached from them by silent moves
 * (followed backwards when `backwards`). Values outside it are exactly 0;
 * the solve may leave rounding residue there, which would turn an impossible
 * sequence into a tiny probability, so it is cleared. */
static void clear_unsupported(const Model *m, const SilentStates *s, const long double *rhs_before,
                              long double *solution, int backwards)
{
    char *support = xcalloc(s->count, 1);
    for (int i = 0; i < s->count; i++)
        support[i] = rhs_before[i] != 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int t = 0; t < m->transition_count; t++) {
            const Transition *tr = &m->transitions[t];
            int from = s->index_of_state[tr->from], to = s->index_of_state[tr->to];
            if (move_emission(m, tr) >= 0 || from < 0 || to < 0)
                continue;
            int source = backwards ? to : from, target = backwards ? from : to;
            if (support[source] && !support[target])
                support[target] = changed = 1;
        }
    }
    long double largest = 0;
    for (int i = 0; i < s->count; i++)
        if (support[i] && solution[i] > largest)
            largest = solution[i];
    for (int i = 0; i < s->count; i++) {
        if (!support[i])
            solution[i] = 0;
        else if (solution[i] < 0 && solution[i] > -1e-15L * largest)
            solution[i] = 0;
        else if (solution[i] < 0)
            die("the silent system gave a negative value (%Lg): numerically unstable model", solution[i]);
    }
    free(support);
}

/* Solves the silent system of one column: rhs becomes the solution. */
static void solve_silent_column(const Model *m, const SilentStates *s, const Factored *system,
                                long double *rhs, int backwards)
{
    long double *rhs_before = xcalloc(s->count, sizeof(long double));
    memcpy(rhs_before, rhs, s->count * sizeof(long double));
    solve_factored(system, rhs);
    clear_unsupported(m, s, rhs_before, rhs, backwards);
    free(rhs_before);
}

/* ----------------------------------------------------------------- forward */

/* Scales a column to sum 1; returns ln of the scale, -inf if the column is all zero. */
static long double normalise_column(long double *column, int n)
{
    long double sum = 0;
    for (int q = 0; q < n; q++)
        sum += column[q];
    if (sum == 0)
        return -INFINITY;
    for (int q = 0; q < n; q++)
        column[q] /= sum;
    return logl(sum);
}

/* Completes forward column f (holding the arrivals by emitting moves, or the
 * start) with the silent moves of the same column: f = a + f S. */
static void close_forward_column(const Model *m, const SilentStates *s, const Factored *system,
                                 long double *f, long double *rhs)
{
    for (int i = 0; i < s->count; i++)
        rhs[i] = f[s->state_of_index[i]];
    for (int t = 0; t < m->transition_count; t++) {
        const Transition *tr = &m->transitions[t];
        if (move_emission(m, tr) < 0 && s->index_of_state[tr->from] < 0)
            rhs[s->index_of_state[tr->to]] += f[tr->from] * tr->weight;
    }
    solve_silent_column(m, s, system, rhs, 0);
    for (int i = 0; i < s->count; i++)
        f[s->state_of_index[i]] = rhs[i];
}

/* Keeps column i of a forward or backward pass (scaled to sum 1) at
 * table[i * n] and the ln of its scale at log_scales[i]; unused when NULL. */
static void keep_column(long double *table, long double *log_scales, long i, const long double *column,
                        int n, long double log_scale)
{
    if (!table)
        return;
    memcpy(table + (size_t)i * n, column, n * sizeof *column);
    log_scales[i] = log_scale;
}

/* `system`: I - S factored transposed (factor_silent_system(m, s, 1)).
 * `table`, `log_scales`: NULL, or room for the length + 1 columns (keep_column). */
static double forward_score(const Model *m, const SilentStates *s, const Factored *system, const int *codes,
                            long length, long double *table, long double *log_scales)
{
    int n = m->state_count;
    long double *previous = xcalloc(n, sizeof(long double));
    long double *current = xcalloc(n, sizeof(long double));
    long double *rhs = xcalloc(s->count, sizeof(long double));
    current[m->start] = 1;
    close_forward_column(m, s, system, current, rhs);
    long double log_scale = normalise_column(current, n);
    keep_column(table, log_scales, 0, current, n, log_scale);
    for (long i = 1; i <= length && log_scale > -INFINITY; i++) {
        long double *swap = previous;
        previous = current;
        current = swap;
        memset(current, 0, n * sizeof *current);
        for (int t = 0; t < m->transition_count; t++) {
            const Transition *tr = &m->transitions[t];
            int e = move_emission(m, tr);
            if (e >= 0)
                current[tr->to] += previous[tr->from] * tr->weight * m->emissions[e].value[codes[i - 1]];
        }
        close_forward_column(m, s, system, current, rhs);
        log_scale += normalise_column(current, n);
        keep_column(table, log_scales, i, current, n, log_scale);
    }
    long double score = log_scale > -INFINITY ? log_scale + logl(current[m->end]) : -INFINITY;
    free(previous);
    free(current);
    free(rhs);
    return (double)score;
}

/* ---------------------------------------------------------------- backward */

/* Completes backward column b (holding what the emitting moves out of each
 * state reach, or the end) with the silent moves: b = c + S b. */
static void close_backward_column(const Model *m, const SilentStates *s, const Factored *system,
                                  long double *b, long double *rhs)
{
    for (int i = 0; i < s->count; i++)
        rhs[i] = b[s->state_of_index[i]];
    solve_silent_column(m, s, system, rhs, 1);
    for (int i = 0; i < s->count; i++)
        b[s->state_of_index[i]] = rhs[i];
    for (int t = 0; t < m->transition_count; t++) {
        const Transition *tr = &m->transitions[t];
        if (move_emission(m, tr) < 0 && s->index_of_state[tr->from] < 0)
            b[tr->from] += tr->weight * b[tr->to];
    }
}

/* `system`: I - S factored as it is (factor_silent_system(m, s, 0)), on its own
 * so that forward and backward share no computed numbers. */
static double backward_score(const Model *m, const SilentStates *s, const Factored *system, const int *codes,
                             long length, long double *table, long double *log_scales)
{
    int n = m->state_count;
    long double *next = xcalloc(n, sizeof(long double));
    long double *current = xcalloc(n, sizeof(long double));
    long double *rhs = xcalloc(s->count, sizeof(long double));
    current[m->end] = 1;
    close_backward_column(m, s, system, current, rhs);
    long double log_scale = normalise_column(current, n);
    keep_column(table, log_scales, length, current, n, log_scale);
    for (long i = length - 1; i >= 0 && log_scale > -INFINITY; i--) {
        long double *swap = next;
        next = current;
        current = swap;
        memset(current, 0, n * sizeof *current);
        for (int t = 0; t < m->transition_count; t++) {
            const Transition *tr = &m->transitions[t];
            int e = move_emission(m, tr);
            if (e >= 0)
                current[tr->from] += tr->weight * m->emissions[e].value[codes[i]] * next[tr->to];
        }
        close_backward_column(m, s, system, current, rhs);
        log_scale += normalise_column(current, n);
        keep_column(table, log_scales, i, current, n, log_scale);
    }
    long double score = log_scale > -INFINITY ? log_scale + logl(current[m->start]) : -INFINITY;
    free(next);
    free(current);
    free(rhs);
    return (double)score;
}

/* ----------------------------------------------------------------- viterbi */

typedef struct {
    int state; /* predecessor state, -1: none */
    long column;
} BackPointer;

typedef struct {
    double score;
    int path_length; /* states on the best path, 0 when there is none */
    int *path;
} ViterbiResult;

/* Relaxes the silent moves of one column to a fixed point (Bellman-Ford). */
static void relax_silent_moves(const Model *m, long column, long double *v, BackPointer *bp)
{
    for (int round = 0;; round++) {
        if (round > m->state_count + 1)
            die("viterbi relaxation does not settle: a silent cycle with product >= 1?");
        int changed = 0;
        for (int t = 0; t < m->transition_count; t++) {
            const Transition *tr = &m->transitions[t];
            if (move_emission(m, tr) >= 0 || v[tr->from] == -INFINITY)
                continue;
            long double candidate = v[tr->from] + tr->log_weight;
            if (candidate > v[tr->to]) {
                v[tr->to] = candidate;
                bp[tr->to] = (BackPointer){ tr->from, column };
                changed = 1;
            }
        }
        if (!changed)
            return;
    }
}

static void follow_back_pointers(const Model *m, BackPointer **bp, long length, ViterbiResult *r)
{
    int cap = 16;
    r->path = xcalloc(cap, sizeof(int));
    int state = m->end;
    long column = length;
    for (;;) {
        if (r->path_length == cap) {
            cap *= 2;
            r->path = xrealloc(r->path, cap * sizeof(int));
        }
        r->path[r->path_length++] = state;
        if (state == m->start && column == 0)
            break;
        BackPointer p = bp[column][state];
        if (p.state < 0 || r->path_length > (length + 1) * (m->state_count + 1))
            die("broken viterbi back pointers");
        state = p.state;
        column = p.column;
    }
    for (int i = 0, j = r->path_length - 1; i < j; i++, j--) {
        int tmp = r->path[i];
        r->path[i] = r->path[j];
        r->path[j] = tmp;
    }
}

static ViterbiResult viterbi(const Model *m, const int *codes, long length)
{
    int n = m->state_count;
    ViterbiResult r = { -INFINITY, 0, NULL };
    long double *previous = xcalloc(n, sizeof(long double));
    long double *current = xcalloc(n, sizeof(long double));
    BackPointer **bp = xcalloc(length + 1, sizeof *bp);
    for (long i = 0; i <= length; i++) {
        bp[i] = xcalloc(n, sizeof **bp);
        for (int q = 0; q < n; q++)
            bp[i][q].state = -1;
    }
    for (int q = 0; q < n; q++)
        current[q] = -INFINITY;
    current[m->start] = 0;
    relax_silent_moves(m, 0, current, bp[0]);
    for (long i = 1; i <= length; i++) {
        long double *swap = previous;
        previous = current;
        current = swap;
        for (int q = 0; q < n; q++)
            current[q] = -INFINITY;
        for (int t = 0; t < m->transition_count; t++) {
            const Transition *tr = &m->transitions[t];
            int e = move_emission(m, tr);
            long double value = e >= 0 ? m->emissions[e].value[codes[i - 1]] : 0;
            if (e < 0 || value == 0 || previous[tr->from] == -INFINITY)
                continue;
            long double candidate = previous[tr->from] + tr->log_weight + m->emissions[e].log_value[codes[i - 1]];
            if (candidate > current[tr->to]) {
                current[tr->to] = candidate;
                bp[i][tr->to] = (BackPointer){ tr->from, i - 1 };
            }
        }
        relax_silent_moves(m, i, current, bp[i]);
    }
    if (current[m->end] > -INFINITY) {
        r.score = (double)current[m->end];
        follow_back_pointers(m, bp, length, &r);
    }
    for (long i = 0; i <= length; i++)
        free(bp[i]);
    free(bp);
    free(previous);
    free(current);
    return r;
}

/* ---------------------------------------------- brute-force path enumeration */

typedef struct {
    const Model *m;
    const int *codes;
    long length;
    long max_moves;        /* paths longer than this are not followed */
    long double sum;       /* total weight of the complete paths seen */
    long double best;      /* largest weight seen */
    int *path, path_length;
    int *best_path, best_length;
    long long visited;
    int *moves;            /* transition of each move on the current path */
    /* When not NULL, every complete path adds its weight here (not divided
     * by the sum): to the destination of its i-th emitting move at
     * posterior[(i-1) * states], to each transition per use, to each
     * (emission table, symbol) per emitting move. */
    long double *posterior, *transition_uses, *emission_uses;
} BruteSearch;

/* Adds a complete path of weight `weight` to the sums kept per use. */
static void add_path_uses(BruteSearch *b, long double weight)
{
    const Model *m = b->m;
    long position = 0;
    for (int k = 0; k + 1 < b->path_length; k++) {
        const Transition *tr = &m->transitions[b->moves[k]];
        b->transition_uses[b->moves[k]] += weight;
        int e = move_emission(m, tr);
        if (e < 0)
            continue;
        b->emission_uses[(size_t)e * m->alphabet_size + b->codes[position]] += weight;
        b->posterior[(size_t)position * m->state_count + tr->to] += weight;
        position++;
    }
}

static void enumerate_paths(BruteSearch *b, int state, long position, long double weight)
{
    if (++b->visited > 30000000LL) {
        fprintf(stderr, "hmmref: --brute: too many paths; use a smaller model or shorter sequences\n");
        exit(3);
    }
    b->path[b->path_length++] = state;
    if (state == b->m->end && position == b->length) {
        b->sum += weight;
        if (b->posterior)
            add_path_uses(b, weight);
        if (weight > b->best) {
            b->best = weight;
            b->best_length = b->path_length;
            memcpy(b->best_path, b->path, b->path_length * sizeof(int));
        }
    }
    if (b->path_length <= b->max_moves) {
        for (int t = 0; t < b->m->transition_count; t++) {
            const Transition *tr = &b->m->transitions[t];
            if (tr->from != state)
                continue;
            int e = move_emission(b->m, tr);
            b->moves[b->path_length - 1] = t;
            if (e < 0) {
                enumerate_paths(b, tr->to, position, weight * tr->weight);
            } else if (position < b->length) {
                long double value = b->m->emissions[e].value[b->codes[position]];
                if (value > 0)
                    enumerate_paths(b, tr->to, position + 1, weight * tr->weight * value);
            }
        }
    }
    b->path_length--;
}

/* Whether the silent moves between silent states form a cycle (colouring DFS). */
static int silent_cycle_from(const Model *m, int state, char *colour)
{
    colour[state] = 1;
    for (int t = 0; t < m->transition_count; t++) {
        const Transition *tr = &m->transitions[t];
        if (tr->from != state || move_emission(m, tr) >= 0)
            continue;
        if (colour[tr->to] == 1 || (colour[tr->to] == 0 && silent_cycle_from(m, tr->to, colour)))
            return 1;
    }
    colour[state] = 2;
    return 0;
}

static int has_silent_cycle(const Model *m)
{
    char *colour = xcalloc(m->state_count, 1);
    int found = 0;
    for (int q = 0; q < m->state_count && !found; q++)
        if (colour[q] == 0)
            found = silent_cycle_from(m, q, colour);
    free(colour);
    return found;
}

/* `uses`: NULL, or the three sums of BruteSearch to fill (zeroed by the
 * caller); they are divided by the sum over all paths at the end, so that
 * they hold posteriors and expected uses. */
static ViterbiResult brute_force(const Model *m, const int *codes, long length, long max_moves,
                                 double *forward, long double *uses[3])
{
    long bound = max_moves > 0 ? max_moves : (length + 1) * (m->state_count + 1);
    BruteSearch b = { m, codes, length, bound, 0, 0, xcalloc(bound + 2, sizeof(int)), 0,
                      xcalloc(bound + 2, sizeof(int)), 0, 0, xcalloc(bound + 2, sizeof(int)),
                      uses ? uses[0] : NULL, uses ? uses[1] : NULL, uses ? uses[2] : NULL };
    enumerate_paths(&b, m->start, 0, 1);
    free(b.moves);
    if (uses && b.sum > 0) {
        size_t sizes[3] = { (size_t)length * m->state_count, (size_t)m->transition_count,
                            (size_t)m->emission_count * m->alphabet_size };
        for (int k = 0; k < 3; k++)
            for (size_t j = 0; j < sizes[k]; j++)
                uses[k][j] /= b.sum;
    }
    ViterbiResult r = { -INFINITY, 0, NULL };
    *forward = b.sum > 0 ? (double)logl(b.sum) : -INFINITY;
    if (b.best > 0) {
        r.score = (double)logl(b.best);
        r.path = b.best_path;
        r.path_length = b.best_length;
    } else {
        free(b.best_path);
    }
    free(b.path);
    return r;
}

/* ------------------------------------------------------------------ output */

static void print_score(double score)
{
    if (score == -INFINITY)
        fputs("-inf", stdout);
    else if (isnan(score) || isinf(score))
        die("score is %f", score);
    else
        printf("%.12f", score);
}

static void print_path(const Model *m, const ViterbiResult *r)
{
    if (!r->path_length)
        fputs("-", stdout);
    for (int i = 0; i < r->path_length; i++)
        printf("%s%s", i ? " " : "", m->states[r->path[i]].name);
}

static void print_viterbi_segments(const Model *m, const ViterbiResult *r, long length);

/* `length` >= 0: also the viterbi path's segments (--segments). */
static void print_row(const char *name, double forward, double backward, const Model *m,
                      const ViterbiResult *r, long length)
{
    printf("%s\t", name);
    print_score(forward);
    putchar('\t');
    print_score(backward);
    putchar('\t');
    print_score(r->score);
    putchar('\t');
    print_path(m, r);
    if (length >= 0) {
        putchar('\t');
        print_viterbi_segments(m, r, length);
    }
    putchar('\n');
}

/* Every length-dependent weight at length L. */
static void set_length(Model *m, long L)
{
    for (int i = 0; i < m->transition_count; i++) {
        Transition *t = &m->transitions[i];
        if (!t->length_expr)
            continue;
        t->weight = length_value(t->length_expr, (long double)L);
        if (!(t->weight >= 0) || isinf(t->weight))
            die("the weight %s is not finite and >= 0 at L = %ld", t->length_expr, L);
        t->log_weight = logl(t->weight);
    }
}

static void score_records(Model *m, const RecordList *records, int brute, long max_moves, int segments)
{
    SilentStates silent = find_silent_states(m);
    if (brute && max_moves <= 0 && has_silent_cycle(m))
        die("--brute: the model has silent cycles; give --max-moves N");
    Factored forward_system = factor_silent_system(m, &silent, 1);
    Factored backward_system = factor_silent_system(m, &silent, 0);
    for (int i = 0; i < records->count; i++) {
        const Record *rec = &records->records[i];
        int *codes = encode_record(m, rec);
        if (!codes) {
            printf("%s\tINVALID\n", rec->name);
            continue;
        }
        if (m->length_weights) { /* the weights, and the silent systems, of this length */
            set_length(m, rec->length);
            free_factored(&forward_system);
            free_factored(&backward_system);
            forward_system = factor_silent_system(m, &silent, 1);
            backward_system = factor_silent_system(m, &silent, 0);
        }
        if (brute) {
            double sum;
            ViterbiResult r = brute_force(m, codes, rec->length, max_moves, &sum, NULL);
            print_row(rec->name, sum, sum, m, &r, segments ? rec->length : -1);
            free(r.path);
        } else {
            double forward = forward_score(m, &silent, &forward_system, codes, rec->length, NULL, NULL);
            double backward = backward_score(m, &silent, &backward_system, codes, rec->length, NULL, NULL);
            ViterbiResult r = viterbi(m, codes, rec->length);
            print_row(rec->name, forward, backward, m, &r, segments ? rec->length : -1);
            free(r.path);
        }
        free(codes);
    }
    free_factored(&forward_system);
    free_factored(&backward_system);
    fflush(stdout);
}

/* --------------------------------------------------- probability of a path */

static const Transition *find_transition(const Model *m, int from, int to)
{
    for (int t = 0; t < m->transition_count; t++)
        if (m->transitions[t].from == from && m->transitions[t].to == to)
            return &m->transitions[t];
    return NULL;
}

static const Record *find_record(const RecordList *records, const char *name)
{
    for (int i = 0; i < records->count; i++)
        if (strcmp(records->records[i].name, name) == 0)
            return &records->records[i];
    return NULL;
}

/* ln of the weight of the path written as state names in `states` (modified). */
static double path_log_probability(const Model *m, const Record *rec, char *states)
{
    int *codes = encode_record(m, rec);
    if (!codes)
        die("%s: symbol outside the alphabet", rec->name);
    long double log_weight = 0;
    long position = 0;
    int previous = -1;
    for (char *word = strtok(states, " "); word; word = strtok(NULL, " ")) {
        int state = find_state(m, word);
        if (previous < 0 && state != m->start)
            die("%s: the path does not begin in the start state", rec->name);
        if (previous >= 0) {
            const Transition *tr = find_transition(m, previous, state);
            if (!tr)
                die("%s: the path uses a missing transition %s -> %s", rec->name,
                    m->states[previous].name, word);
            log_weight += logl(tr->weight);
            int e = move_emission(m, tr);
            if (e >= 0) {
                if (position >= rec->length)
                    die("%s: the path emits more symbols than the sequence has", rec->name);
                log_weight += logl(m->emissions[e].value[codes[position++]]);
            }
        }
        previous = state;
    }
    if (previous != m->end)
        die("%s: the path does not finish in the end state", rec->name);
    if (position != rec->length)
        die("%s: the path emits %ld symbols, the sequence has %ld", rec->name, position, rec->length);
    free(codes);
    return (double)log_weight;
}

/* Scores one tsv line `name<TAB>state state ...` (modified in place); the
 * length-dependent weights are taken at the sequence's length. */
static void score_path_line(Model *m, const RecordList *records, const char *tsv_path, char *line)
{
    char *tab = strchr(line, '\t');
    if (!tab)
        die("%s: a line without a tab: %s", tsv_path, line);
    *tab = '\0';
    const Record *rec = find_record(records, line);
    if (!rec)
        die("%s: no sequence named %s", tsv_path, line);
    if (m->length_weights)
        set_length(m, rec->length);
    double score = strcmp(tab + 1, "-") == 0 ? -INFINITY : path_log_probability(m, rec, tab + 1);
    printf("%s\t", line);
    print_score(score);
    putchar('\n');
}

static void score_paths(Model *m, const RecordList *records, const char *tsv_path)
{
    char *text = read_whole_file(tsv_path);
    for (char *line = text; *line;) {
        char *eol = strchr(line, '\n');
        if (eol)
            *eol = '\0';
        if (line[0] != '#' && line[0] != '\0')
            score_path_line(m, records, tsv_path, line);
        if (!eol)
            break;
        line = eol + 1;
    }
    free(text);
}

#include "hmmref_expect.h"
#include "hmmref_decode.h"
#include "hmmref_em.h"

/* -------------------------------------------------------------------- main */

static void usage(void)
{
    fputs("usage: hmmref MODEL.hmm SEQS.fa [--model NAME] [--segments]\n"
          "       hmmref --path MODEL.hmm SEQS.fa TRACEBACKS.tsv [--model NAME]\n"
          "       hmmref --brute MODEL.hmm SEQS.fa [--model NAME] [--max-moves N] [--segments]\n"
          "       hmmref --posterior MODEL.hmm SEQS.fa [--model NAME] [--brute [--max-moves N]]\n"
          "       hmmref --em MODEL.hmm SEQS.fa [--model NAME] [--pseudocount C]\n"
          "              [--viterbi-training | --brute [--max-moves N]] [--counts | --write]\n",
          stderr);
    exit(2);
}

static long double number_option(const char *option, const char *text)
{
    char *end;
    errno = 0;
    long double value = strtold(text, &end);
    if (*end || end == text || errno || !(value >= 0) || isinf(value))
        die("%s %s: give a finite number >= 0", option, text);
    return value;
}

int main(int argc, char **argv)
{
    const char *files[3] = { NULL, NULL, NULL };
    int file_count = 0, path_mode = 0, brute = 0, posterior = 0, em = 0, viterbi_training = 0, segments = 0;
    EmOutput em_output = EM_NUMBERS;
    const char *model_name = NULL;
    long max_moves = 0;
    long double pseudocount = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--path") == 0)
            path_mode = 1;
        else if (strcmp(argv[i], "--brute") == 0)
            brute = 1;
        else if (strcmp(argv[i], "--posterior") == 0)
            posterior = 1;
        else if (strcmp(argv[i], "--em") == 0)
            em = 1;
        else if (strcmp(argv[i], "--viterbi-training") == 0)
            viterbi_training = 1;
        else if (strcmp(argv[i], "--segments") == 0)
            segments = 1;
        else if (strcmp(argv[i], "--counts") == 0)
            em_output = EM_COUNTS;
        else if (strcmp(argv[i], "--write") == 0)
            em_output = EM_WRITE;
        else if (strcmp(argv[i], "--pseudocount") == 0 && i + 1 < argc)
            pseudocount = number_option(argv[i], argv[i + 1]), i++;
        else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
            model_name = argv[++i];
        else if (strcmp(argv[i], "--max-moves") == 0 && i + 1 < argc)
            max_moves = atol(argv[++i]);
        else if (argv[i][0] == '-' && argv[i][1] == '-')
            usage();
        else if (file_count < 3)
            files[file_count++] = argv[i];
        else
            usage();
    }
    if (file_count != (path_mode ? 3 : 2) || path_mode + posterior + em > 1 || (path_mode && brute))
        usage();
    if ((viterbi_training || em_output != EM_NUMBERS || pseudocount > 0) && !em)
        usage();
    if ((viterbi_training && brute) || (segments && (em || posterior || path_mode)))
        usage();
    SourceFile source = parse_source(files[0]);
    Model *m = choose_model(&source, model_name);
    if (m->length_weights && (posterior || em))
        die("model %s has length-dependent weights: only scoring (with or without --brute) "
            "and --path take them", m->name);
    RecordList records = read_fasta(files[1]);
    CountMethod method = brute ? COUNT_BRUTE : viterbi_training ? COUNT_VITERBI : COUNT_EXACT;
    if (path_mode)
        score_paths(m, &records, files[2]);
    else if (posterior)
        posterior_records(m, &records, method, max_moves);
    else if (em)
        em_step(&source, m, &records, method, max_moves, pseudocount, em_output);
    else
        score_records(m, &records, brute, max_moves, segments);
    return 0;
}
