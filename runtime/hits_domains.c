/* hits_domains.c: the domains of a hit, from the viterbi traceback of the
 * searched model: each B .. E stretch of the best path is one domain, with
 * its residues (the emitting moves between B and E), its match states, and
 * its score alone: the path's own weights and emissions from B to E, plus
 * HMMER3's length model and null model for a sequence of L residues that
 * holds this domain only (docs/hmmer.md, "Domains"). */
#include "hits.h"

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
    double ln_e_to_c;   /* ln of E -> C */
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
    int c = find_state(pm, "C", 1);
    int ec = pm->end_state >= 0 && c >= 0 ? find_move(pm, pm->end_state, c) : -1;
    if (pm->begin < 0 || ec < 0) { /* not an import's profile */
        hmmrt_path_model_free(pm);
        return NULL;
    }
    pm->ln_e_to_c = log(m->moves[ec].weight);
    return pm;
}

void hmmrt_path_model_free(hmmrt_path_model *pm)
{
    if (!pm)
        return;
    free(pm->by_name);
    free(pm->out_start);
    free(pm->out);
    free(pm);
}

double hmmrt_hits_lnP(double bits, double tau, double lambda)
{
    return bits <= tau ? 0.0 : -lambda * (bits - tau);
}

/* The rest of a one-domain path of a sequence of L residues whose domain
 * emits Ld of them, in nats: S -> N (the null model's length divided out:
 * ((L + 1) / L)^L (L + 1)), L - Ld loops of N and C (L / (L + 3)), N -> B and
 * C -> T (3 / (L + 3) each), E -> C. */
static double flanks(const hmmrt_path_model *pm, int64_t L, int64_t Ld)
{
    double l = (double)L;
    return l * log1p(1.0 / l) + log(l + 1.0) + (double)(L - Ld) * log(l / (l + 3.0)) +
           2.0 * log(3.0 / (l + 3.0)) + pm->ln_e_to_c;
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

int hmmrt_find_domains(const hmmrt_path_model *pm, const char *traceback, const uint8_t *codes,
                       int64_t L, hmmrt_domain **out, int *n)
{
    const hmmrt_model *m = pm->m;
    int cap = 0;
    *out = NULL;
    *n = 0;
    int prev = -1, inside = 0;
    int64_t pos = 0, emitted = 0; /* residues so far; in the current domain */
    double path = 0;              /* the current domain's ln weights and emissions */
    hmmrt_domain d = {0};
    for (const char *t = traceback; *t;) {
        size_t len = strcspn(t, " ");
        int s = find_state(pm, t, len);
        t += len + (t[len] == ' ');
        if (s < 0)
            return -2;
        if (prev >= 0) {
            int k = find_move(pm, prev, s);
            if (k < 0)
                return -2;
            const hmmrt_model_move *mv = &m->moves[k];
            double w = inside ? log(mv->weight) : 0;
            if (mv->emission >= 0) {
                if (pos >= L)
                    return -2;
                if (inside) {
                    w += log(m->emissions[(size_t)mv->emission * (size_t)pm->K + codes[pos]]);
                    if (!emitted)
                        d.ali_from = pos + 1;
                    d.ali_to = pos + 1;
                    emitted++;
                }
                pos++;
            }
            path += w;
        }
        long k = inside ? match_number(m->state_names[s]) : -1;
        if (k > 0) {
            if (!d.hmm_from)
                d.hmm_from = k;
            d.hmm_to = k;
        }
        if (s == pm->begin) {
            inside = 1;
            path = 0;
            emitted = 0;
            d = (hmmrt_domain){0};
        } else if (s == pm->end_state && inside) {
            inside = 0;
            d.bits = (path + flanks(pm, L, emitted)) / M_LN2;
            if (emitted > 0 && add_domain(out, n, &cap, &d) != 0) {
                free(*out);
                *out = NULL;
                *n = 0;
                return -1;
            }
        }
        prev = s;
    }
    return pos == L ? 0 : -2;
}
