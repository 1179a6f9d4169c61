/* gpu_multi.c: the GPUs a scoring run uses: one (--device N, the default) or
 * several of this host (--devices all|LIST). With several, each batch's
 * sequences are dealt out, longest first, to the device with the fewest
 * residues so far, and every device scores its part on a thread of its own
 * through the one-device driver, which writes only its sequences' rows: the
 * printer gets one scored batch, in input order, as from one GPU. */
#include "score_run.h"

#include "hmmrt_gpu.h"

#include <stdlib.h>
#include <string.h>

struct hmmrt_gpus {
    const hmmrt_gpu_program *gp; /* the driver's functions */
    int n;
    int devices[HMMRT_MAX_DEVICES];
    void *dev[HMMRT_MAX_DEVICES];
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

typedef struct opening_one {
    hmmrt_gpus *g;
    const hmmrt_program *prog;
    int k, use_double;
    char why[1024];
    pthread_t thread;
    int running;
} opening_one;

static void *open_one(void *arg)
{
    opening_one *o = arg;
    o->g->dev[o->k] = o->g->gp->open(o->prog, o->g->devices[o->k], o->use_double, o->why,
                                     sizeof o->why);
    return NULL;
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
    /* contexts are made at the same time on every device */
    opening_one *ones = calloc((size_t)g->n, sizeof *ones);
    if (!ones) {
        snprintf(err, errlen, "out of memory");
        free(g);
        return NULL;
    }
    for (int k = 0; k < g->n; k++) {
        ones[k] = (opening_one){.g = g, .prog = prog, .k = k, .use_double = use_double};
        ones[k].running = pthread_create(&ones[k].thread, NULL, open_one, &ones[k]) == 0;
        if (!ones[k].running)
            open_one(&ones[k]);
    }
    int failed = -1;
    for (int k = 0; k < g->n; k++) {
        if (ones[k].running)
            pthread_join(ones[k].thread, NULL);
        if (!g->dev[k] && failed < 0)
            failed = k;
    }
    if (failed >= 0) /* every device asked for, or none: no silent fewer */
        snprintf(err, errlen, "GPU %d of --devices: %s", g->devices[failed], ones[failed].why);
    free(ones);
    if (failed >= 0) {
        hmmrt_gpus_close(g);
        return NULL;
    }
    return g;
}

void hmmrt_gpus_close(hmmrt_gpus *g)
{
    if (!g)
        return;
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
    for (int k = 0; k < g->n; k++) {
        memset(g->skip[k], 1, (size_t)in->n);
        g->n_part[k] = 0;
    }
    for (int64_t j = 0; j < m; j++) {
        int64_t i = order[j];
        int best = 0;
        for (int k = 1; k < g->n; k++)
            if (load[k] < load[best])
                best = k;
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
        fprintf(out, "  GPU %d: %lld sequences, %lld residues, %.3f s busy\n", g->devices[k],
                (long long)g->sequences[k], (long long)g->residues[k], g->busy[k]);
        g->gp->report(g->dev[k], out);
    }
}
