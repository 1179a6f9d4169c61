/* hits_domains.c: the domains of a hit, from the viterbi traceback of the
 * searched model: each B .. E stretch of the best path is one domain, with
 * its residues (the emitting moves between B and E) and its match states.
 * Its score is HMMER3's domain score with that stretch as the envelope: the
 * forward score of the stretch alone in the model's configuration for the
 * whole sequence's length L, plus the N and C loops of the L - Ld residues
 * outside it (docs/hmmer.md, "Domains"). */
#include "hits.h"

#include "fb.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hmmrt_path_model {
    const hmmrt_model *m;
    int K;              /* symbols of the model's alphabet */
    int *by_name;       /* state indexes in order of their names */
    int *out_start;     /* moves out of s: out[out_start[s] .. out_start[s + 1] - 1] */
    int *out;           /* move indexes, by destination within a state */
    int begin, end_state; /* B and E */
    /* forward over a stretch (fb.h), its length-dependent weights set for
     * each sequence's length: S -> N, N -> N, N -> B, J -> J, J -> B, C -> C,
     * C -> T */
    hmmrt_fb *fb;
    int sn, nn, nb, jj, jb, cc, ct;
    int ec, ej;           /* E -> C and E -> J: unihit for nhmmer's scores, then as written */
    int N, J, C;          /* the states of the length model (J: -1 when there is none) */
    int *match;           /* match[k - 1]: the state Mk, k = 1 .. n_match */
    int n_match;
    double ec_w, ej_w;
    hmmrt_scratch scratch;
};

static const hmmrt_model *sort_model; /* qsort's context: one sort at a time */

static int by_name(const void *a, const void *b)
{
    return strcmp(sort_model->state_names[*(const int *)a],
                  sort_model->state_names[*(const int *)b]);
}

static int by_destination(const void *a, const void *b)
{
    int x = sort_model->moves[*(const int *)a].to, y = sort_model->moves[*(const int *)b].to;
    return (x > y) - (x < y);
}

/* The state called name (len bytes), or -1. */
static int find_state(const hmmrt_path_model *pm, const char *name, size_t len)
{
    int lo = 0, hi = pm->m->n_states - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const char *s = pm->m->state_names[pm->by_name[mid]];
        int c = strncmp(s, name, len);
        if (c == 0)
            c = s[len] != '\0';
        if (c == 0)
            return pm->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* The move from -> to, or -1. */
static int find_move(const hmmrt_path_model *pm, int from, int to)
{
    int lo = pm->out_start[from], hi = pm->out_start[from + 1] - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, t = pm->m->moves[pm->out[mid]].to;
        if (t == to)
            return pm->out[mid];
        if (t < to)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

hmmrt_path_model *hmmrt_path_model_new(const hmmrt_model *m, const char *alphabet)
{
    if (!m->moves)
        return NULL;
    hmmrt_path_model *pm = calloc(1, sizeof *pm);
    if (!pm)
        return NULL;
    pm->m = m;
    pm->K = (int)strlen(alphabet);
    pm->by_name = malloc((size_t)m->n_states * sizeof *pm->by_name);
    pm->out_start = calloc((size_t)m->n_states + 1, sizeof *pm->out_start);
    pm->out = malloc((size_t)(m->n_moves > 0 ? m->n_moves : 1) * sizeof *pm->out);
    if (!pm->by_name || !pm->out_start || !pm->out) {
        hmmrt_path_model_free(pm);
        return NULL;
    }
    for (int s = 0; s < m->n_states; s++)
        pm->by_name[s] = s;
    for (int k = 0; k < m->n_moves; k++)
        pm->out_start[m->moves[k].from + 1]++;
    for (int s = 0; s < m->n_states; s++)
        pm->out_start[s + 1] += pm->out_start[s];
    int *fill = calloc((size_t)m->n_states, sizeof *fill);
    if (!fill) {
        hmmrt_path_model_free(pm);
        return NULL;
    }
    for (int k = 0; k < m->n_moves; k++) {
        int from = m->moves[k].from;
        pm->out[pm->out_start[from] + fill[from]++] = k;
    }
    free(fill);
    sort_model = m;
    qsort(pm->by_name, (size_t)m->n_states, sizeof *pm->by_name, by_name);
    for (int s = 0; s < m->n_states; s++)
        qsort(pm->out + pm->out_start[s], (size_t)(pm->out_start[s + 1] - pm->out_start[s]),
              sizeof *pm->out, by_destination);
    pm->begin = find_state(pm, "B", 1);
    pm->end_state = find_state(pm, "E", 1);
    int S = m->start, N = find_state(pm, "N", 1), C = find_state(pm, "C", 1);
    int J = find_state(pm, "J", 1), T = m->end;
    pm->N = N;
    pm->J = J;
    pm->C = C;
    pm->match = malloc((size_t)m->n_states * sizeof *pm->match);
    if (!pm->match) {
        hmmrt_path_model_free(pm);
        return NULL;
    }
    for (char name[32];; pm->n_match++) {
        int len = snprintf(name, sizeof name, "M%d", pm->n_match + 1);
        int q = find_state(pm, name, (size_t)len);
        if (q < 0)
            break;
        pm->match[pm->n_match] = q;
    }
    pm->sn = N >= 0 ? find_move(pm, S, N) : -1;
    pm->nn = N >= 0 ? find_move(pm, N, N) : -1;
    pm->nb = N >= 0 && pm->begin >= 0 ? find_move(pm, N, pm->begin) : -1;
    pm->jj = J >= 0 ? find_move(pm, J, J) : -1;
    pm->jb = J >= 0 && pm->begin >= 0 ? find_move(pm, J, pm->begin) : -1;
    pm->cc = C >= 0 ? find_move(pm, C, C) : -1;
    pm->ct = C >= 0 ? find_move(pm, C, T) : -1;
    pm->ec = C >= 0 && pm->end_state >= 0 ? find_move(pm, pm->end_state, C) : -1;
    pm->ej = J >= 0 && pm->end_state >= 0 ? find_move(pm, pm->end_state, J) : -1;
    char err[256];
    if (pm->sn < 0 || pm->nn < 0 || pm->nb < 0 || pm->end_state < 0 || pm->cc < 0 || pm->ct < 0 ||
        pm->ec < 0 || !(pm->fb = hmmrt_fb_new(m, pm->K, err, sizeof err))) {
        hmmrt_path_model_free(pm); /* not an import's profile */
        return NULL;
    }
    pm->ec_w = pm->fb->w[pm->ec];
    pm->ej_w = pm->ej >= 0 ? pm->fb->w[pm->ej] : 0.0;
    return pm;
}

void hmmrt_path_model_free(hmmrt_path_model *pm)
{
    if (!pm)
        return;
    free(pm->by_name);
    free(pm->out_start);
    free(pm->out);
    free(pm->match);
    if (pm->fb)
        hmmrt_fb_free(pm->fb);
    hmmrt_scratch_free(&pm->scratch);
    free(pm);
}

double hmmrt_hits_lnP(double bits, double tau, double lambda)
{
    return bits <= tau ? 0.0 : -lambda * (bits - tau);
}

/* Forward over the Ld codes x with the weights set in pm->fb: ln P, NaN when
 * memory runs out. */
static double forward_stretch(hmmrt_path_model *pm, const uint8_t *x, int64_t Ld)
{
    hmmrt_fb *fb = pm->fb;
    char err[256];
    if (hmmrt_fb_close_cycles(fb, err, sizeof err) != 0)
        return NAN;
    double *scratch = hmmrt_scratch_get(&pm->scratch, hmmrt_fb_scratch(fb, Ld) * sizeof *scratch);
    if (!scratch)
        return NAN;
    return hmmrt_fb_run(fb, x, Ld, scratch, NULL, NULL, NULL);
}

/* The weights of the model's own configuration for length L: multihit
 * (nj = 1: loops L / (L + 3)), or unihit where it has no J (--hmmer-mode=
 * unilocal; nj = 0: L / (L + 2)). */
static void set_own_configuration(hmmrt_path_model *pm, int64_t L)
{
    hmmrt_fb *fb = pm->fb;
    double nj = pm->J >= 0 ? 1.0 : 0.0;
    double l = (double)L, loop = l / (l + 2.0 + nj), move = (2.0 + nj) / (l + 2.0 + nj);
    fb->w[pm->sn] = exp(l * log1p(1.0 / l) + log(l + 1.0));
    fb->w[pm->nn] = fb->w[pm->cc] = loop;
    fb->w[pm->nb] = fb->w[pm->ct] = move;
    if (pm->jj >= 0 && pm->jb >= 0) {
        fb->w[pm->jj] = loop;
        fb->w[pm->jb] = move;
    }
    fb->w[pm->ec] = pm->ec_w;
    if (pm->ej >= 0)
        fb->w[pm->ej] = pm->ej_w;
}

/* The weights of the unihit configuration for length L, as HMMER rescores
 * an envelope (p7_oprofile_ReconfigUnihit): E -> C 1, E -> J 0, loops
 * L / (L + 2), moves 2 / (L + 2); S -> N 1 (no null model). */
static void set_unihit(hmmrt_path_model *pm, int64_t L)
{
    hmmrt_fb *fb = pm->fb;
    double l = (double)L, loop = l / (l + 2.0), move = 2.0 / (l + 2.0);
    fb->w[pm->sn] = 1.0;
    fb->w[pm->nn] = fb->w[pm->cc] = loop;
    fb->w[pm->nb] = fb->w[pm->ct] = move;
    if (pm->jj >= 0 && pm->jb >= 0) {
        fb->w[pm->jj] = loop;
        fb->w[pm->jb] = move;
    }
    fb->w[pm->ec] = 1.0;
    if (pm->ej >= 0)
        fb->w[pm->ej] = 0.0;
}

/* HMMER3's domain score (p7_pipeline, rescore_isolated_domain) with the
 * residues [from, to] (1-based) of x as the envelope, in bits: the forward
 * score of the envelope alone with the model unihit for the whole
 * sequence's length L (S -> N divides the null model of L out), plus
 * L - Ld loops of L / (L + 3) for the residues outside it (p7_pipeline's).
 * NaN when memory runs out. */
static double envelope_bits(hmmrt_path_model *pm, const uint8_t *x, int64_t L, int64_t from,
                            int64_t to)
{
    double l = (double)L;
    int64_t Ld = to - from + 1;
    set_unihit(pm, L);
    pm->fb->w[pm->sn] = exp(l * log1p(1.0 / l) + log(l + 1.0)); /* the null model of L */
    double env = forward_stretch(pm, x + from - 1, Ld);
    return (env + (double)(L - Ld) * log(l / (l + 3.0))) / M_LN2;
}

/* The alignment of an envelope from the posteriors: the stretch that holds
 * the most expected residues of the domain less those outside it (the
 * largest sum of 2 mocc - 1, where mocc is the probability that a residue
 * is the model's, not N, J or C's), as HMMER's optimal accuracy alignment
 * sums posteriors; its ends' most probable match states. */
static void posterior_alignment(const hmmrt_path_model *pm, const double *post, size_t ns,
                                int64_t L, hmmrt_envelope *env)
{
    double best = -INFINITY, run = 0;
    int64_t run_from = env->from;
    for (int64_t i = env->from; i <= env->to; i++) {
        const double *p = post + ((size_t)i - 1) * ns;
        double mocc = 1.0 - p[pm->N] - (pm->J >= 0 ? p[pm->J] : 0.0) - p[pm->C];
        if (run <= 0) {
            run = 0;
            run_from = i;
        }
        run += 2.0 * mocc - 1.0;
        if (run > best) {
            best = run;
            env->ali_from = run_from;
            env->ali_to = i;
        }
    }
    for (int end = 0; end < 2; end++) {
        const double *p = post + ((size_t)(end ? env->ali_to : env->ali_from) - 1) * ns;
        long k_best = 0;
        for (int k = 0; k < pm->n_match; k++)
            if (k_best == 0 || p[pm->match[k]] > p[pm->match[k_best - 1]])
                k_best = k + 1;
        if (end)
            env->hmm_to = k_best;
        else
            env->hmm_from = k_best;
    }
    (void)L;
}

const double *hmmrt_unihit_posterior(hmmrt_path_model *pm, const uint8_t *x, int64_t L,
                                     int64_t from, int64_t to, size_t *n_states)
{
    hmmrt_fb *fb = pm->fb;
    set_unihit(pm, L);
    char err[256];
    int64_t Ld = to - from + 1;
    if (hmmrt_fb_close_cycles(fb, err, sizeof err) != 0)
        return NULL;
    double *scratch = hmmrt_scratch_get(&pm->scratch, hmmrt_fb_scratch(fb, Ld) * sizeof *scratch);
    if (!scratch)
        return NULL;
    double *post = NULL;
    if (hmmrt_fb_run(fb, x + from - 1, Ld, scratch, NULL, NULL, &post) == -INFINITY)
        return NULL;
    *n_states = (size_t)fb->n;
    return post;
}

const hmmrt_fb *hmmrt_path_fb(const hmmrt_path_model *pm) { return pm->fb; }

int hmmrt_path_traceback(hmmrt_path_model *pm, const uint8_t *x, int64_t L, hmmrt_buf *tb)
{
    hmmrt_fb *fb = pm->fb;
    set_own_configuration(pm, L);
    char err[256];
    if (hmmrt_fb_close_cycles(fb, err, sizeof err) != 0)
        return -1;
    size_t bytes = hmmrt_fb_viterbi_scratch(fb, L);
    size_t n_path = ((size_t)L + 1) * (size_t)fb->n + 1;
    char *scratch = hmmrt_scratch_get(&pm->scratch, bytes + n_path * sizeof(int));
    if (!scratch)
        return -1;
    int *path = (int *)(scratch + (bytes + sizeof(int) - 1) / sizeof(int) * sizeof(int));
    int64_t n = 0;
    if (hmmrt_fb_viterbi_path(fb, x, L, scratch, path, &n) == -INFINITY)
        return 1;
    hmmrt_buf_reset(tb);
    hmmrt_buf_puts(tb, pm->m->state_names[pm->m->start]);
    for (int64_t k = n - 1; k >= 0; k--) {
        hmmrt_buf_putc(tb, ' ');
        hmmrt_buf_puts(tb, pm->m->state_names[fb->moves[path[k]].to]);
    }
    hmmrt_buf_putc(tb, '\0');
    tb->len--;
    return hmmrt_buf_take_failure() ? -1 : 0;
}

/* HMMER's thresholds of domain definition (p7_domaindef.c): rt1 starts a
 * region, rt2 bounds it. */
#define RT1 0.25
#define RT2 0.10

int hmmrt_find_envelopes(hmmrt_path_model *pm, const uint8_t *x, int64_t L, hmmrt_envelope **out,
                         int *n)
{
    hmmrt_fb *fb = pm->fb;
    *out = NULL;
    *n = 0;
    set_own_configuration(pm, L);
    char err[256];
    if (hmmrt_fb_close_cycles(fb, err, sizeof err) != 0)
        return -1;
    size_t ns = (size_t)fb->n;
    double *scratch = hmmrt_scratch_get(&pm->scratch, hmmrt_fb_scratch(fb, L) * sizeof *scratch);
    if (!scratch)
        return -1;
    double *post = NULL;
    if (hmmrt_fb_run(fb, x, L, scratch, NULL, NULL, &post) == -INFINITY || !post)
        return 0;
    /* residue i (1-based) emitted by the loop of N, J or C: post[(i - 1) * ns + q] */
#define LOOP(q, i) ((q) >= 0 && (i) >= 1 && (i) <= L ? post[((size_t)(i) - 1) * ns + (size_t)(q)] : 0.0)
    int cap = 0, triggered = 0;
    int64_t start = -1;
    for (int64_t j = 1; j <= L; j++) {
        double mocc = 1.0 - LOOP(pm->N, j) - LOOP(pm->J, j) - LOOP(pm->C, j);
        if (!triggered) {
            /* B before residue j: N -> B, and J -> B taken as the drop of J's loop */
            double jb = LOOP(pm->J, j - 1) - LOOP(pm->J, j);
            double b = (j == 1 ? 1.0 : LOOP(pm->N, j - 1)) - LOOP(pm->N, j) + (jb > 0 ? jb : 0);
            if (mocc - b < RT2)
                start = j;
            else if (start == -1)
                start = j;
            if (mocc >= RT1)
                triggered = 1;
            continue;
        }
        /* E after residue j: E -> C, and E -> J taken as the rise of J's loop */
        double ej = LOOP(pm->J, j + 1) - LOOP(pm->J, j);
        double e = (j == L ? 1.0 : LOOP(pm->C, j + 1)) - LOOP(pm->C, j) + (ej > 0 ? ej : 0);
        if (mocc - e < RT2) {
            if (*n == cap) {
                int c = cap ? 2 * cap : 4;
                hmmrt_envelope *grown = realloc(*out, (size_t)c * sizeof *grown);
                if (!grown) {
                    free(*out);
                    *out = NULL;
                    *n = 0;
                    return -1;
                }
                *out = grown;
                cap = c;
            }
            hmmrt_envelope env = {start, j, 0, 0, 0, 0};
            posterior_alignment(pm, post, ns, L, &env);
            (*out)[(*n)++] = env;
            start = -1;
            triggered = 0;
        }
    }
#undef LOOP
    return 0;
}

/* nhmmer's score of a hit whose envelope is the residues [from, to] of x
 * (p7_pli_postDomainDef_LongTarget without null2): the forward score of the
 * envelope alone with the model unihit (E -> C 1, E -> J 0) and its length
 * model set for the envelope's length Ld (loops Ld / (Ld + 2), moves
 * 2 / (Ld + 2)), no null model; then the entry and exit moved to nhmmer's
 * window length W (2 ln(2 / (W + 2)) for 2 ln(2 / (Ld + 2))), the Ld - Lali
 * loops of the envelope outside the alignment (Lali residues) replaced by
 * max(W, Ld) - Lali loops of W / (W + 2), less the null model of a window
 * of max(W, Ld) residues; in bits. NaN when memory runs out. */
double hmmrt_nhmmer_bits(hmmrt_path_model *pm, const uint8_t *x, int64_t from, int64_t to,
                         int64_t ali_len, long W)
{
    int64_t Ld = to - from + 1;
    double ali = (double)ali_len;
    double ld = (double)Ld, w = (double)W;
    double loop = ld / (ld + 2.0), move = 2.0 / (ld + 2.0);
    set_unihit(pm, Ld);
    double env = forward_stretch(pm, x + from - 1, Ld);
    if (isnan(env))
        return NAN;
    double n = w > ld ? w : ld; /* the window nhmmer scores the hit in */
    double null = n * log(n / (n + 1.0)) + log(1.0 / (n + 1.0));
    double sc = env - 2.0 * log(move) + 2.0 * log(2.0 / (w + 2.0)) - (ld - ali) * log(loop) +
                (n - ali) * log(w / (w + 2.0));
    return (sc - null) / M_LN2;
}

/* k of a match state's name "Mk", or -1. */
static long match_number(const char *name)
{
    if (name[0] != 'M' || name[1] < '0' || name[1] > '9')
        return -1;
    return strtol(name + 1, NULL, 10);
}

static int add_domain(hmmrt_domain **out, int *n, int *cap, const hmmrt_domain *d)
{
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 4;
        hmmrt_domain *grown = realloc(*out, (size_t)c * sizeof *grown);
        if (!grown)
            return -1;
        *out = grown;
        *cap = c;
    }
    (*out)[(*n)++] = *d;
    return 0;
}

int hmmrt_find_domains(hmmrt_path_model *pm, const char *traceback, const uint8_t *codes,
                       int64_t L, int score, hmmrt_domain **out, int *n)
{
    const hmmrt_model *m = pm->m;
    int cap = 0;
    *out = NULL;
    *n = 0;
    int prev = -1, inside = 0;
    int64_t pos = 0, emitted = 0; /* residues so far; in the current domain */
    hmmrt_domain d = {0};
    for (const char *t = traceback; *t;) {
        size_t len = strcspn(t, " ");
        int s = find_state(pm, t, len);
        t += len + (t[len] == ' ');
        if (s < 0)
            goto broken;
        if (prev >= 0) {
            int k = find_move(pm, prev, s);
            if (k < 0)
                goto broken;
            if (m->moves[k].emission >= 0) {
                if (pos >= L)
                    goto broken;
                if (inside) {
                    if (!emitted)
                        d.ali_from = pos + 1;
                    d.ali_to = pos + 1;
                    emitted++;
                }
                pos++;
            }
        }
        long k = inside ? match_number(m->state_names[s]) : -1;
        if (k > 0) {
            if (!d.hmm_from)
                d.hmm_from = k;
            d.hmm_to = k;
        }
        if (s == pm->begin) {
            inside = 1;
            emitted = 0;
            d = (hmmrt_domain){0};
        } else if (s == pm->end_state && inside) {
            inside = 0;
            if (emitted > 0 && add_domain(out, n, &cap, &d) != 0)
                goto out_of_memory;
        }
        prev = s;
    }
    if (pos != L)
        goto broken;
    for (int i = 0; score && i < *n; i++) {
        hmmrt_domain *dom = &(*out)[i];
        dom->bits = envelope_bits(pm, codes, L, dom->ali_from, dom->ali_to);
        if (isnan(dom->bits))
            goto out_of_memory;
    }
    return 0;
out_of_memory:
    free(*out);
    *out = NULL;
    *n = 0;
    return -1;
broken: /* the domains found before the traceback stopped making sense go too */
    free(*out);
    *out = NULL;
    *n = 0;
    return -2;
}
