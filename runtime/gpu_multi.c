/* gpu_multi.c: the GPUs a scoring run uses: one (--device N, the default) or
 * several of this host (--devices all|LIST). With several, the run starts
 * once the first listed has opened (CUDA makes contexts one after another:
 * four take a second); the others join at the first batch after theirs.
 * Each batch's sequences are dealt out, longest first, to the open device
 * with the fewest residues so far, and every device scores its part on a
 * thread of its own through the one-device driver, which writes only its
 * sequences' rows: the printer gets one scored batch, in input order, as
 * from one GPU. */
#include "score_run.h"

#include "hmmrt_gpu.h"

#include <stdlib.h>
#include <string.h>

typedef struct opening_one {
    struct hmmrt_gpus *g;
    const hmmrt_program *prog;
    int k, use_double;
    char why[1024];
    pthread_t thread;
    int running; /* a thread opens it ... */
    int done;    /* ... and has finished (atomic) */
    int joined;  /* its thread is joined: dev[k] is open, or it failed */
} opening_one;

struct hmmrt_gpus {
    const hmmrt_gpu_program *gp; /* the driver's functions */
    int n;
    int devices[HMMRT_MAX_DEVICES];
    void *dev[HMMRT_MAX_DEVICES];
    opening_one opening[HMMRT_MAX_DEVICES];
    int wait_all; /* HMMRT_DEVICES_WAIT=1: every batch waits for every opening (tests) */
    /* several: each device's part of the batch */
    unsigned char *skip[HMMRT_MAX_DEVICES];
    int64_t *order[HMMRT_MAX_DEVICES];
    int64_t n_part[HMMRT_MAX_DEVICES];
    int64_t *own_order;          /* the batch's order, when the caller gave none */
    int64_t cap;                 /* sequences the arrays hold */
    int64_t residues[HMMRT_MAX_DEVICES]; /* dealt so far (--timing) */
    int64_t sequences[HMMRT_MAX_DEVICES];
    double busy[HMMRT_MAX_DEVICES];      /* seconds each spent on its parts */
};

/* ---- opening ------------------------------------------------------------------- */

static void *open_one(void *arg)
{
    opening_one *o = arg;
    o->g->dev[o->k] = o->g->gp->open(o->prog, o->g->devices[o->k], o->use_double, o->why,
                                     sizeof o->why);
    __atomic_store_n(&o->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Joins device k's opening when it has finished (or wait); a device that
 * did not open is named once. */
static void join_one(hmmrt_gpus *g, int k, int wait)
{
    opening_one *o = &g->opening[k];
    if (o->joined || (!wait && !__atomic_load_n(&o->done, __ATOMIC_ACQUIRE)))
        return;
    if (o->running)
        pthread_join(o->thread, NULL);
    o->joined = 1;
    if (!g->dev[k] && k > 0)
        hmmrt_warning("GPU %d of --devices did not open (%s): the run goes on without it",
                      g->devices[k], o->why);
}

static void join_openings(hmmrt_gpus *g, int wait)
{
    for (int k = 1; k < g->n; k++)
        join_one(g, k, wait);
}

/* The devices to open: --device's, --devices' or all there are. */
static void list_devices(hmmrt_gpus *g, const hmmrt_options *o)
{
    if (o->n_devices == 0) { /* --device N (under mpirun maybe the rank's: driver.c) */
        g->n = 1;
        g->devices[0] = o->device;
        return;
    }
    if (o->n_devices > 0) {
        g->n = o->n_devices;
        memcpy(g->devices, o->devices, (size_t)g->n * sizeof *g->devices);
        return;
    }
    int count = g->gp->device_count ? g->gp->device_count() : 0;
    if (count <= 0) {
        g->n = 1; /* device 0's opening says why there is none */
        g->devices[0] = 0;
        return;
    }
    g->n = count < HMMRT_MAX_DEVICES ? count : HMMRT_MAX_DEVICES;
    for (int k = 0; k < g->n; k++)
        g->devices[k] = k;
}

hmmrt_gpus *hmmrt_gpus_open(const hmmrt_program *prog, const hmmrt_options *o, int use_double,
                            char *err, size_t errlen)
{
    hmmrt_gpus *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    g->gp = prog->gpu;
    list_devices(g, o);
    if (g->n == 1) {
        g->dev[0] = g->gp->open(prog, g->devices[0], use_double, err, errlen);
        if (!g->dev[0]) {
            free(g);
            return NULL;
        }
        return g;
    }
    /* every opening starts now; the run waits for the first device's alone */
    const char *wait = getenv("HMMRT_DEVICES_WAIT");
    g->wait_all = wait && strcmp(wait, "1") == 0;
    for (int k = 0; k < g->n; k++) {
        opening_one *one = &g->opening[k];
        *one = (opening_one){.g = g, .prog = prog, .k = k, .use_double = use_double};
        one->running = pthread_create(&one->thread, NULL, open_one, one) == 0;
        if (!one->running)
            open_one(one);
    }
    join_one(g, 0, 1);
    if (!g->dev[0]) { /* no GPU to start on: the CPU scores, as with --device */
        snprintf(err, errlen, "GPU %d of --devices: %s", g->devices[0], g->opening[0].why);
        hmmrt_gpus_close(g);
        return NULL;
    }
    if (g->wait_all)
        join_openings(g, 1);
    return g;
}

void hmmrt_gpus_close(hmmrt_gpus *g)
{
    if (!g)
        return;
    if (g->n > 1)
        for (int k = 0; k < g->n; k++) /* quietly: the run is over */
            if (!g->opening[k].joined && g->opening[k].running)
                pthread_join(g->opening[k].thread, NULL);
    for (int k = 0; k < g->n; k++) {
        if (g->dev[k])
            g->gp->close(g->dev[k]);
        free(g->skip[k]);
        free(g->order[k]);
    }
    free(g->own_order);
    free(g);
}

int hmmrt_gpus_count(const hmmrt_gpus *g)
{
    return g ? g->n : 0;
}

/* ---- one batch ------------------------------------------------------------------ */

static int grow(hmmrt_gpus *g, int64_t n)
{
    if (n <= g->cap)
        return 0;
    int64_t cap = n > 2 * g->cap ? n : 2 * g->cap;
    for (int k = 0; k < g->n; k++) {
        unsigned char *s = realloc(g->skip[k], (size_t)cap);
        if (s)
            g->skip[k] = s;
        int64_t *o = realloc(g->order[k], (size_t)cap * sizeof *o);
        if (o)
            g->order[k] = o;
        if (!s || !o)
            return -1;
    }
    int64_t *own = realloc(g->own_order, (size_t)cap * sizeof *own);
    if (!own)
        return -1;
    g->own_order = own;
    g->cap = cap;
    return 0;
}

/* Deals the batch's sequences out: longest first, each to the device with
 * the fewest residues of this batch so far (a sequence counts 32 more, for
 * its row's fixed cost); a device's part keeps the batch's order. */
static void deal(hmmrt_gpus *g, const hmmrt_gpu_input *in, const int64_t *order, int64_t m)
{
    int64_t load[HMMRT_MAX_DEVICES] = {0};
    int open[HMMRT_MAX_DEVICES], n_open = 0;
    for (int k = 0; k < g->n; k++) {
        memset(g->skip[k], 1, (size_t)in->n);
        g->n_part[k] = 0;
        if (g->opening[k].joined && g->dev[k])
            open[n_open++] = k;
    }
    for (int64_t j = 0; j < m; j++) {
        int64_t i = order[j];
        int best = open[0];
        for (int o = 1; o < n_open; o++)
            if (load[open[o]] < load[best])
                best = open[o];
        load[best] += in->lengths[i] + 32;
        g->skip[best][i] = 0;
        g->order[best][g->n_part[best]++] = i;
        g->residues[best] += in->lengths[i];
        g->sequences[best]++;
    }
}

typedef struct scoring_one {
    hmmrt_gpus *g;
    hmmrt_gpu_input in;
    int k, status;
    char err[2048];
    pthread_t thread;
    int running;
} scoring_one;

static void *score_one(void *arg)
{
    scoring_one *s = arg;
    double started = hmmrt_seconds();
    s->status = s->g->gp->score(s->g->dev[s->k], &s->in, s->err, sizeof s->err);
    s->g->busy[s->k] += hmmrt_seconds() - started;
    return NULL;
}

int hmmrt_gpus_score(hmmrt_gpus *g, const hmmrt_gpu_input *in, char *err, size_t errlen)
{
    if (g->n == 1)
        return g->gp->score(g->dev[0], in, err, errlen);
    if (grow(g, in->n) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    join_openings(g, g->wait_all);
    const int64_t *order = in->order;
    int64_t m = in->n_ordered;
    if (!order) {
        m = hmmrt_order_by_length(in->lengths, in->skip, in->n, g->own_order);
        order = g->own_order;
    }
    deal(g, in, order, m);
    scoring_one ones[HMMRT_MAX_DEVICES];
    for (int k = 0; k < g->n; k++) {
        ones[k] = (scoring_one){.g = g, .in = *in, .k = k};
        ones[k].in.skip = g->skip[k];
        ones[k].in.order = g->order[k];
        ones[k].in.n_ordered = g->n_part[k];
    }
    /* device 0 on this thread, the others on threads of their own */
    for (int k = 1; k < g->n; k++)
        if (g->n_part[k] > 0)
            ones[k].running = pthread_create(&ones[k].thread, NULL, score_one, &ones[k]) == 0;
    for (int k = 0; k < g->n; k++)
        if (g->n_part[k] > 0 && !ones[k].running)
            score_one(&ones[k]);
    int status = 0;
    for (int k = 0; k < g->n; k++) {
        if (ones[k].running)
            pthread_join(ones[k].thread, NULL);
        if (ones[k].status != 0 && status == 0) {
            snprintf(err, errlen, "on device %d: %s", g->devices[k], ones[k].err);
            status = ones[k].status;
        }
    }
    return status;
}

void hmmrt_gpus_report(const hmmrt_gpus *g, FILE *out)
{
    if (g->n == 1) {
        g->gp->report(g->dev[0], out);
        return;
    }
    fprintf(out, "  --devices: %d GPUs, each batch dealt out by residues\n", g->n);
    for (int k = 0; k < g->n; k++) {
        const char *state = !g->opening[k].joined ? ", still opening when the last batch was dealt"
                            : !g->dev[k]          ? ", did not open"
                                                  : "";
        fprintf(out, "  GPU %d: %lld sequences, %lld residues, %.3f s busy%s\n", g->devices[k],
                (long long)g->sequences[k], (long long)g->residues[k], g->busy[k], state);
        if (g->opening[k].joined && g->dev[k])
            g->gp->report(g->dev[k], out);
    }
}
