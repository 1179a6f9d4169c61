/* fb_device.c: a model as written (runtime/fb.h) on the device for the
 * forward-backward kernel (fb_kernel.cu): its tables, its numbers in float,
 * and the kernel's shape. --train's E-step (fb_gpu.c) and posterior calls
 * (chunks.c) each keep one. */
#include "fb_device.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int hmmrt_fb_device_fail(char *err, size_t errlen, cudaError_t e, const char *what)
{
    snprintf(err, errlen, "%s failed: %s", what, cudaGetErrorString(e));
    return -1;
}

void *hmmrt_fb_device_alloc(hmmrt_fb_device *d, size_t bytes, char *err, size_t errlen)
{
    if (d->n_owned == d->cap_owned) {
        int cap = d->cap_owned ? 2 * d->cap_owned : 32;
        void **owned = realloc(d->owned, (size_t)cap * sizeof *owned);
        if (!owned) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        d->owned = owned;
        d->cap_owned = cap;
    }
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 8);
    if (e != cudaSuccess) {
        char what[96];
        snprintf(what, sizeof what, "cudaMalloc of %.1f MiB", (double)bytes / (1 << 20));
        hmmrt_fb_device_fail(err, errlen, e, what);
        return NULL;
    }
    d->owned[d->n_owned++] = p;
    return p;
}

void *hmmrt_fb_device_upload(hmmrt_fb_device *d, const void *host, size_t bytes, char *err,
                             size_t errlen)
{
    void *p = hmmrt_fb_device_alloc(d, bytes, err, errlen);
    if (p && bytes) {
        cudaError_t e = cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
            hmmrt_fb_device_fail(err, errlen, e, "cudaMemcpy of the model");
            return NULL;
        }
    }
    return p;
}

/* The components of fb in levels: a component's level is one more than the
 * highest of the components its silent moves come from. */
static int make_levels(const hmmrt_fb *fb, int **level_start, int **level_comp, int *n_levels)
{
    int *level = calloc((size_t)fb->n_comps + 1, sizeof *level);
    *level_start = NULL;
    *level_comp = malloc(((size_t)fb->n_comps + 1) * sizeof **level_comp);
    if (!level || !*level_comp) {
        free(level);
        return -1;
    }
    int top = -1;
    for (int c = 0; c < fb->n_comps; c++) { /* components come in dependency order */
        for (int k = fb->comp_start[c]; k < fb->comp_start[c + 1]; k++) {
            int v = fb->comp_state[k];
            for (int j = fb->in_start[v]; j < fb->in_start[v + 1]; j++) {
                int from = fb->comp_of[fb->moves[fb->in[j]].from];
                if (from >= 0 && level[from] + 1 > level[c])
                    level[c] = level[from] + 1;
            }
        }
        if (level[c] > top)
            top = level[c];
    }
    *n_levels = top + 1;
    *level_start = calloc((size_t)*n_levels + 2, sizeof **level_start);
    if (!*level_start) {
        free(level);
        return -1;
    }
    for (int c = 0; c < fb->n_comps; c++)
        (*level_start)[level[c] + 1]++;
    for (int l = 0; l < *n_levels; l++)
        (*level_start)[l + 1] += (*level_start)[l];
    int *next = malloc(((size_t)*n_levels + 1) * sizeof *next);
    if (!next) {
        free(level);
        return -1;
    }
    memcpy(next, *level_start, (size_t)*n_levels * sizeof *next);
    for (int c = 0; c < fb->n_comps; c++)
        (*level_comp)[next[level[c]]++] = c;
    free(next);
    free(level);
    return 0;
}

const char *hmmrt_fb_device_unsuitable(const hmmrt_fb *fb)
{
    if (fb->n > HMMRT_FB_GPU_MAX_STATES)
        return "more states than the GPU kernel keeps in shared memory";
    if (fb->max_comp > HMMRT_FB_GPU_MAX_CYCLE)
        return "a silent cycle larger than the GPU kernel holds";
    return NULL;
}

/* Each state's emission table when the model can take the dense form
 * (hmmrt_fb_gpu_tables.dense): at most HMMRT_FB_GPU_DENSE_MAX states, and
 * the live emitting moves into each state all of one table. NULL otherwise. */
static int *dense_tables(const hmmrt_fb *fb)
{
    if (fb->n > HMMRT_FB_GPU_DENSE_MAX)
        return NULL;
    int *table = malloc(((size_t)fb->n + 1) * sizeof *table);
    if (!table)
        return NULL;
    for (int q = 0; q < fb->n; q++)
        table[q] = -1;
    for (int i = 0; i < fb->n_moves; i++) {
        const hmmrt_model_move *mv = &fb->moves[i];
        if (mv->emission < 0 || !fb->live[i])
            continue;
        if (table[mv->to] >= 0 && table[mv->to] != mv->emission) {
            free(table);
            return NULL;
        }
        table[mv->to] = mv->emission;
    }
    return table;
}

/* The slots of the HMM forms: each emitting state with a table (tables_of,
 * NULL: none), in the order of the states. Returns how many. */
static int hmm_slots(const hmmrt_fb *fb, const int *tables_of, int *slot)
{
    int emitting = 0;
    for (int q = 0; q < fb->n; q++)
        slot[q] = tables_of && q != fb->start && q != fb->end && tables_of[q] >= 0 ? emitting++
                                                                                  : -1;
    return emitting;
}

/* The moves of the HMM forms by slot (N a row): 1 when every live move is
 * start -> q, p -> q or q -> end (or start -> end) between slots p and q,
 * emitting exactly when it ends in a slot; 0 otherwise. */
static int hmm_moves(const hmmrt_fb *fb, const int *slot, int N, int *move_a, int *move_initial,
                     int *move_final, int *move_empty)
{
    for (int v = 0; v < N * N; v++)
        move_a[v] = -1;
    for (int q = 0; q < N; q++)
        move_initial[q] = move_final[q] = -1;
    *move_empty = -1;
    for (int i = 0; i < fb->n_moves; i++) {
        const hmmrt_model_move *mv = &fb->moves[i];
        if (!fb->live[i])
            continue;
        int from = mv->from == fb->start ? -2 : slot[mv->from];
        int to = mv->to == fb->end ? -2 : slot[mv->to];
        if (from == -1 || to == -1 || (mv->emission >= 0) != (to >= 0))
            return 0; /* a silent state between, or an emitting move into the end */
        if (from == -2 && to == -2)
            *move_empty = i;
        else if (from == -2)
            move_initial[to] = i;
        else if (to == -2)
            move_final[from] = i;
        else
            move_a[from * N + to] = i;
    }
    return 1;
}

/* The HMM form (hmmrt_fb_hmm) when fb takes it: the shape hmm_moves
 * accepts, at most HMMRT_FB_HMM_MAX_STATES emitting states, N x KB <= 64.
 * Fills the structure and move indexes into h (h->N stays 0 otherwise); the
 * numbers come with set_numbers. */
static void find_hmm_form(const hmmrt_fb *fb, const int *tables_of, hmmrt_fb_hmm *h)
{
    memset(h, 0, sizeof *h);
    int *slot = malloc((size_t)fb->n * sizeof *slot);
    if (!slot)
        return;
    int emitting = hmm_slots(fb, tables_of, slot);
    int N = emitting <= 2 ? 2 : emitting <= 4 ? 4 : 8;
    int KB = fb->K <= 4 ? 4 : fb->K <= 8 ? 8 : fb->K <= 16 ? 16 : 32;
    int ok = emitting > 0 && emitting <= HMMRT_FB_HMM_MAX_STATES && fb->K <= 32 && N * KB <= 64 &&
             hmm_moves(fb, slot, N, h->move_a, h->move_initial, h->move_final, &h->move_empty);
    for (int q = 0; q < HMMRT_FB_HMM_MAX_STATES; q++)
        h->state_of[q] = h->table_of[q] = -1;
    if (ok) {
        for (int q = 0; q < fb->n; q++)
            if (slot[q] >= 0) {
                h->state_of[slot[q]] = q;
                h->table_of[slot[q]] = tables_of[q];
            }
        h->N = N;
        h->KB = KB;
    }
    free(slot);
}

/* The wide HMM form (hmmrt_fb_wide) when fb takes it and the HMM form does
 * not: the shape hmm_moves accepts, at most HMMRT_FB_WIDE_MAX_STATES
 * emitting states. Uploads the slots' states, tables and moves, keeps the
 * moves on the host for set_numbers and makes room for the numbers; 0 (also
 * when fb is not in the form: wide.N stays 0), or -1 after a message. */
static int find_wide_form(hmmrt_fb_device *d, const hmmrt_fb *fb, const int *tables_of,
                          char *err, size_t errlen)
{
    hmmrt_fb_wide *w = &d->job.t.wide;
    memset(w, 0, sizeof *w);
    size_t n = (size_t)fb->n;
    int *slot = malloc(n * sizeof *slot);
    int emitting = slot ? hmm_slots(fb, tables_of, slot) : 0;
    int N = emitting <= 32 ? 32 : 64;
    int *moves = emitting > 0 && emitting <= HMMRT_FB_WIDE_MAX_STATES
                     ? malloc(((size_t)N * N + 3 * N) * sizeof *moves) : NULL;
    int *tables = malloc((2 * (size_t)N + n) * sizeof *tables);
    int ok = slot && moves && tables &&
             hmm_moves(fb, slot, N, moves, moves + N * N, moves + N * N + N, &w->move_empty);
    int rc = 0;
    if (ok) {
        int *states = tables + N, *other = states + N, n_other = 0;
        for (int q = 0; q < N; q++)
            tables[q] = states[q] = -1;
        for (int q = 0; q < fb->n; q++) {
            if (slot[q] >= 0)
                states[slot[q]] = q, tables[slot[q]] = tables_of[q];
            else
                other[n_other++] = q;
        }
        w->n_other = n_other;
        size_t nm = (size_t)N * N + 2 * N;
        ok = (w->moves = hmmrt_fb_device_upload(d, moves, nm * sizeof(int), err, errlen)) &&
             (w->table_of = hmmrt_fb_device_upload(d, tables, (size_t)N * sizeof(int), err,
                                                   errlen)) &&
             (w->state_of = hmmrt_fb_device_upload(d, states, (size_t)N * sizeof(int), err,
                                                   errlen)) &&
             (w->other = hmmrt_fb_device_upload(d, other, (size_t)(n_other + 1) * sizeof(int),
                                                err, errlen)) &&
             (d->wide_numbers = hmmrt_fb_device_alloc(d, (nm + (size_t)fb->K * N) * sizeof(float),
                                                      err, errlen));
        if (ok) {
            memcpy(moves + nm, tables, (size_t)N * sizeof *moves); /* set_numbers reads them */
            w->numbers = d->wide_numbers;
            w->N = N;
            d->wide_moves = moves;
            moves = NULL;
        } else {
            memset(w, 0, sizeof *w);
            rc = -1;
        }
    }
    free(slot), free(moves), free(tables);
    return rc;
}

/* Lanes a sequence, threads a block, and where the counts gather: a small
 * model's sequences go to groups of 4 to 32 lanes of a warp, a larger one's
 * to a block; the groups stay resident and walk the sequences. */
static void choose_shape(hmmrt_fb_device *d, const hmmrt_fb *fb, int posterior, int device)
{
    hmmrt_fb_gpu_job *j = &d->job;
    int n = fb->n;
    j->group = n <= 4 ? 4 : n <= 8 ? 8 : n <= 16 ? 16 : n <= 32 ? 32 : 0;
    int lanes = j->group ? j->group : ((n + 31) / 32 * 32 > 256 ? 256 : (n + 31) / 32 * 32);
    j->block = j->group ? 128 : lanes;
    int per_block = j->group ? j->block / j->group : 1;
    size_t column = (size_t)lanes * (size_t)((n + lanes - 1) / lanes) * sizeof(float);
    size_t own = (2 * column + (j->group ? 0 : 64 * sizeof(float)) + 7) / 8 * 8;
    size_t nn = j->t.dense ? (size_t)n * (size_t)n : 0;
    /* a posterior call counts nothing */
    size_t counts = posterior ? 0 : ((size_t)fb->n_moves + d->values + nn) * sizeof(double);
    j->block_bytes = (2 * nn * sizeof(float) + 7) / 8 * 8;
    j->counts_in_shared = !posterior &&
                          j->block_bytes + (own + counts) * (size_t)per_block <= 160 * 1024;
    if (j->t.dense && !posterior && !j->counts_in_shared) {
        /* the dense form counts in shared memory only */
        j->t.dense = 0;
        nn = 0;
        j->block_bytes = 0;
        counts = ((size_t)fb->n_moves + d->values) * sizeof(double);
        j->counts_in_shared = (own + counts) * (size_t)per_block <= 160 * 1024;
    }
    j->group_bytes = own + (j->counts_in_shared ? counts : 0);
    int sms = 132;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    d->per_block = per_block;
    d->resident_blocks = (int64_t)sms * (j->group ? 16 : 2048 / j->block);
    if (j->t.hmm.N) { /* a thread a sequence; nothing in dynamic shared memory */
        j->block = 128;
        j->group = 1;
        j->block_bytes = j->group_bytes = 0;
        j->counts_in_shared = 0;
        d->per_block = j->block;
        d->resident_blocks = (int64_t)sms * 16;
    }
    if (j->t.wide.N) { /* a block of N threads a sequence, its counts in shared memory */
        const int N = j->t.wide.N;
        j->block = N;
        j->group = 0;
        j->block_bytes = hmmrt_fb_wide_shared_bytes(N, fb->K, posterior);
        j->group_bytes = 0;
        j->counts_in_shared = 0;
        d->per_block = 1;
        d->resident_blocks = (int64_t)sms * hmmrt_fb_wide_blocks_per_sm(N, fb->K, posterior);
    }
    /* the HMM form's records: N values and the exponent, in whole float4s */
    int record = j->t.hmm.N ? (j->t.hmm.N + 1 + 3) / 4 * 4 : j->t.wide.N;
    d->column = record > n ? record : n;
}

void hmmrt_fb_device_shape(const hmmrt_fb_device *d, char *buf, size_t len)
{
    const hmmrt_fb_gpu_job *j = &d->job;
    if (j->t.hmm.N)
        snprintf(buf, len, "the HMM form: a thread a sequence, the columns in registers (%d "
                 "emitting states, alphabet up to %d)", j->t.hmm.N, j->t.hmm.KB);
    else if (j->t.wide.N)
        snprintf(buf, len, "the wide HMM form: a block of %d threads a sequence, a thread a "
                 "state, its row of the matrix in registers, %lld blocks", j->t.wide.N,
                 (long long)d->resident_blocks);
    else if (j->group)
        snprintf(buf, len, "a sequence to %d lanes of a warp, blocks of %d%s", j->group,
                 j->block, j->t.dense ? ", dense form" : "");
    else
        snprintf(buf, len, "a sequence to a block of %d%s", j->block,
                 j->t.dense ? ", dense form" : "");
}

int hmmrt_fb_device_grid(const hmmrt_fb_device *d, int64_t n_seqs)
{
    int64_t needed = (n_seqs + d->per_block - 1) / d->per_block;
    return (int)(needed < d->resident_blocks ? (needed > 0 ? needed : 1) : d->resident_blocks);
}

void hmmrt_fb_device_close(hmmrt_fb_device *d)
{
    for (int i = 0; i < d->n_owned; i++)
        cudaFree(d->owned[i]);
    free(d->owned);
    free(d->host_params);
    free(d->wide_moves);
    memset(d, 0, sizeof *d);
}

int hmmrt_fb_device_open(hmmrt_fb_device *d, const hmmrt_fb *fb, int posterior, int device,
                         char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    const char *why = hmmrt_fb_device_unsuitable(fb);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    hmmrt_fb_gpu_tables *t = &d->job.t;
    t->n = fb->n, t->K = fb->K, t->start = fb->start, t->end = fb->end;
    t->n_moves = fb->n_moves, t->n_emissions = fb->n_emissions, t->n_silent = fb->n_silent;
    d->values = (size_t)fb->n_emissions * (size_t)fb->K;
    size_t nm = (size_t)fb->n_moves, n1 = (size_t)fb->n + 1;
    int *from = malloc((nm + 1) * sizeof *from), *to = malloc((nm + 1) * sizeof *to);
    int *em = malloc((nm + 1) * sizeof *em), *key = malloc((nm + 1) * sizeof *key);
    int *in_start = calloc(n1, sizeof *in_start), *in = malloc((nm + 1) * sizeof *in);
    int *level_start = NULL, *level_comp = NULL, n_levels = 0;
    int64_t *closure_at = malloc(((size_t)fb->n_comps + 1) * sizeof *closure_at);
    int ok = from && to && em && key && in_start && in && closure_at &&
             make_levels(fb, &level_start, &level_comp, &n_levels) == 0;
    if (ok) {
        /* emitting moves by destination, for the forward kernel's pull */
        for (size_t i = 0; i < nm; i++) {
            from[i] = fb->moves[i].from, to[i] = fb->moves[i].to, em[i] = fb->moves[i].emission;
            if (em[i] >= 0 && fb->live[i])
                in_start[to[i] + 1]++;
        }
        for (int s = 0; s < fb->n; s++)
            in_start[s + 1] += in_start[s];
        memcpy(key, in_start, (size_t)fb->n * sizeof *key);
        for (size_t i = 0; i < nm; i++)
            if (em[i] >= 0 && fb->live[i])
                in[key[to[i]]++] = (int)i;
        for (int c = 0; c < fb->n_comps; c++) {
            closure_at[c] = fb->closure_at[c] == (size_t)-1 ? -1 : (int64_t)fb->closure_at[c];
            size_t m = (size_t)(fb->comp_start[c + 1] - fb->comp_start[c]);
            if (closure_at[c] >= 0 && fb->closure_at[c] + m * m > d->closure_cells)
                d->closure_cells = fb->closure_at[c] + m * m;
        }
        t->n_levels = n_levels;
    }
    size_t ni = sizeof(int), cs = (size_t)fb->n_comps + 1;
#define UP(field, host, bytes) (ok = ok && ((t->field = hmmrt_fb_device_upload(d, host, bytes, err, errlen)) != NULL))
    UP(move_from, from, nm * ni);
    UP(move_to, to, nm * ni);
    UP(move_emission, em, nm * ni);
    UP(emit_in_start, in_start, n1 * ni);
    UP(emit_in, in, nm * ni);
    UP(emit_out_start, fb->emit_out_start, n1 * ni);
    UP(emit_out, fb->emit_out, nm * ni);
    UP(silent, fb->silent, (size_t)fb->n_silent * ni);
    UP(level_start, level_start, ((size_t)n_levels + 1) * ni);
    UP(level_comp, level_comp, cs * ni);
    UP(comp_start, fb->comp_start, cs * ni);
    UP(comp_state, fb->comp_state, n1 * ni);
    UP(closure_at, closure_at, cs * sizeof(int64_t));
    UP(in_start, fb->in_start, n1 * ni);
    UP(in, fb->in, nm * ni);
    UP(out_start, fb->out_start, n1 * ni);
    UP(out, fb->out, nm * ni);
#undef UP
    free(from), free(to), free(em), free(key), free(in_start), free(in);
    free(level_start), free(level_comp), free(closure_at);
    size_t params = nm + d->values + d->closure_cells;
    d->host_params = ok ? malloc((params + 1) * sizeof *d->host_params) : NULL;
    ok = ok && d->host_params;
    ok = ok && (d->w = hmmrt_fb_device_alloc(d, (params + 1) * sizeof(float), err, errlen)) != NULL;
    if (ok) {
        d->e = d->w + nm;
        d->closure = d->e + d->values;
        t->w = d->w, t->e = d->e, t->closure = d->closure;
    }
    int *tables_of = ok ? dense_tables(fb) : NULL;
    find_hmm_form(fb, tables_of, &d->job.t.hmm);
    if (ok && !d->job.t.hmm.N && find_wide_form(d, fb, tables_of, err, errlen) != 0)
        ok = 0;
    if (tables_of) {
        size_t nn = (size_t)fb->n * (size_t)fb->n;
        d->matrix = hmmrt_fb_device_alloc(d, 2 * nn * sizeof(float), err, errlen);
        d->job.t.state_emission = d->matrix
            ? hmmrt_fb_device_upload(d, tables_of, (size_t)fb->n * sizeof(int), err, errlen) : NULL;
        if (d->matrix && d->job.t.state_emission) {
            d->job.t.dense = 1;
            d->job.t.w_matrix = d->matrix;
            d->job.t.w_transposed = d->matrix + nn;
        }
        free(tables_of);
        err[0] = '\0'; /* without the dense form the kernel walks the move lists */
    }
    if (!ok) {
        if (!err[0])
            snprintf(err, errlen, "out of memory");
        hmmrt_fb_device_close(d);
        return -1;
    }
    d->job.posterior = posterior;
    d->job.col_stride = 1;
    choose_shape(d, fb, posterior, device);
    hmmrt_fb_wide *w = &d->job.t.wide;
    if (w->N && !posterior &&
        !(w->block_counts = hmmrt_fb_device_alloc(
              d, (size_t)d->resident_blocks * (size_t)w->N * (size_t)w->N * sizeof(double), err,
              errlen))) {
        hmmrt_fb_device_close(d);
        return -1;
    }
    return 0;
}

/* The wide form's numbers: the matrix, the initial and final weights by slot
 * (zeros where no move is), then the emission values of each slot's table. */
static int set_wide_numbers(hmmrt_fb_device *d, const hmmrt_fb *fb, char *err, size_t errlen)
{
    hmmrt_fb_wide *w = &d->job.t.wide;
    const int N = w->N, K = fb->K;
    size_t nm = (size_t)N * N + 2 * N, count = nm + (size_t)K * N;
    float *v = malloc(count * sizeof *v);
    const int *tables = d->wide_moves + nm;
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < nm; i++)
        v[i] = d->wide_moves[i] >= 0 ? (float)fb->w[d->wide_moves[i]] : 0.0f;
    for (int k = 0; k < K; k++)
        for (int q = 0; q < N; q++)
            v[nm + (size_t)k * N + q] = tables[q] >= 0 ? (float)fb->e[(size_t)tables[q] * K + k]
                                                       : 0.0f;
    w->empty = w->move_empty >= 0 ? (float)fb->w[w->move_empty] : 0.0f;
    cudaError_t ce = cudaMemcpy(d->wide_numbers, v, count * sizeof *v, cudaMemcpyHostToDevice);
    free(v);
    if (ce != cudaSuccess)
        return hmmrt_fb_device_fail(err, errlen, ce, "cudaMemcpy of the model's numbers");
    return 0;
}

int hmmrt_fb_device_set_numbers(hmmrt_fb_device *d, const hmmrt_fb *fb, char *err, size_t errlen)
{
    size_t nm = (size_t)fb->n_moves, params = nm + d->values + d->closure_cells;
    for (size_t i = 0; i < nm; i++)
        d->host_params[i] = (float)fb->w[i];
    for (size_t i = 0; i < d->values; i++)
        d->host_params[nm + i] = (float)fb->e[i];
    for (size_t i = 0; i < d->closure_cells; i++)
        d->host_params[nm + d->values + i] = (float)fb->closure[i];
    cudaError_t ce = cudaMemcpy(d->w, d->host_params, params * sizeof(float),
                                cudaMemcpyHostToDevice);
    if (ce != cudaSuccess)
        return hmmrt_fb_device_fail(err, errlen, ce, "cudaMemcpy of the model's numbers");
    hmmrt_fb_hmm *h = &d->job.t.hmm;
    for (int v = 0; h->N && v < h->N * h->N; v++)
        h->a[v] = h->move_a[v] >= 0 ? (float)fb->w[h->move_a[v]] : 0.0f;
    for (int q = 0; h->N && q < h->N; q++) {
        h->initial[q] = h->move_initial[q] >= 0 ? (float)fb->w[h->move_initial[q]] : 0.0f;
        h->final[q] = h->move_final[q] >= 0 ? (float)fb->w[h->move_final[q]] : 0.0f;
    }
    h->empty = h->move_empty >= 0 ? (float)fb->w[h->move_empty] : 0.0f;
    if (d->job.t.wide.N && set_wide_numbers(d, fb, err, errlen) != 0)
        return -1;
    if (d->job.t.dense) {
        size_t n = (size_t)fb->n, nn = n * n;
        float *m = calloc(2 * nn, sizeof *m);
        if (!m) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < nm; i++) {
            const hmmrt_model_move *mv = &fb->moves[i];
            if (mv->emission >= 0 && fb->live[i]) {
                m[(size_t)mv->from * n + (size_t)mv->to] = (float)fb->w[i];
                m[nn + (size_t)mv->to * n + (size_t)mv->from] = (float)fb->w[i];
            }
        }
        ce = cudaMemcpy(d->matrix, m, 2 * nn * sizeof(float), cudaMemcpyHostToDevice);
        free(m);
        if (ce != cudaSuccess)
            return hmmrt_fb_device_fail(err, errlen, ce, "cudaMemcpy of the model's matrix");
    }
    return 0;
}
