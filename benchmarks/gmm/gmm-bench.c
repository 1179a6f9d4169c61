/* gmm-bench.c: seed paper 003's shape through hmmc's GPU path over real
 * observations (libhmmrt_gpu: runtime/gpu/real_gpu.c, the path a program
 * compiled with --target=cuda takes): S states, each a mixture of G
 * distinct full-covariance gaussians over D reals, every state entered
 * from the start, a loop, a step on and an exit to the end (left to right);
 * F frames in utterances of U. The model is made in memory: written as
 * text it would be 2 GB of covariances, more than hmmc compiles today.
 * Prints the GPU path's --timing report, the wall time of the scoring call
 * (packing, transfers, kernels, scores back), 1/RTF at 100 frames/s, GFLOPS
 * by the paper's count, and checks the first utterances against the CPU
 * path's engine (runtime/fb.c over runtime/gaussian.c) within the float
 * contract.
 * --modes runs the scoring once per emission product named (a list of
 * HMMRT_REAL_PRODUCT values, default for the path's own choice; a name
 * ending in ? is shown without its check counting), the CPU path's scores
 * computed once; each mode's line gives its worst checked utterance as a
 * fraction of the float contract's tolerance.
 *   gmm-bench [-S 5000] [-G 16] [-D 36] [-F 1000000] [-U 1000] [-c 2] [--double]
 *             [--modes default,fp32,tf32x3,tf32x2?]
 *             [--write-npz FILE] (the frames, for the peers: benchmarks/gmm/peers.py) */
#include "fb.h"
#include "hmmrt.h"
#include "hmmrt_gpu.h"
#include "real_read.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    long S = 5000, G = 16, D = 36, F = 1000000, U = 1000, check = 2;
    int use_double = 0;
    const char *npz = NULL, *params = NULL, *modes = "default";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--double")) { use_double = 1; continue; }
        if (!strcmp(a, "--write-npz")) { npz = v; i++; continue; }
        if (!strcmp(a, "--write-params")) { params = v; i++; continue; }
        if (!strcmp(a, "--modes") && *v) { modes = v; i++; continue; }
        long *to = !strcmp(a, "-S") ? &S : !strcmp(a, "-G") ? &G : !strcmp(a, "-D") ? &D
                 : !strcmp(a, "-F") ? &F : !strcmp(a, "-U") ? &U : !strcmp(a, "-c") ? &check : NULL;
        if (!to || !*v) {
            fprintf(stderr, "usage: gmm-bench [-S states] [-G gaussians a state] [-D reals] "
                            "[-F frames] [-U frames an utterance] [-c utterances checked] "
                            "[--double] [--write-npz FILE] [--write-params FILE] [--modes LIST]\n");
            return 2;
        }
        *to = atol(v);
        i++;
    }
    if (S < 1 || G < 1 || D < 1 || D > 64 || F < 1 || U < 1) {
        fprintf(stderr, "gmm-bench: S, G, F, U >= 1 and 1 <= D <= 64\n");
        return 2;
    }
    const long n_g = S * G, n = S + 2;
    double t0 = now();
    /* the gaussians: mean in [-2, 2), C = L L^T with L lower, diagonal 0.5..1.5 */
    double *mean = malloc((size_t)n_g * D * sizeof *mean);
    double *factor = calloc((size_t)n_g * D * D, sizeof *factor);
    hmmrt_gaussian *gs = malloc((size_t)n_g * sizeof *gs);
    const hmmrt_gaussian **parts = malloc((size_t)n_g * sizeof *parts);
    double *logw = malloc((size_t)n_g * sizeof *logw);
    hmmrt_density *dens = malloc((size_t)S * sizeof *dens);
    if (!mean || !factor || !gs || !parts || !logw || !dens) {
        fprintf(stderr, "gmm-bench: out of memory for the model\n");
        return 1;
    }
    for (long j = 0; j < n_g; j++) {
        double *m = mean + (size_t)j * D, *L = factor + (size_t)j * D * D, lsum = 0;
        for (long i = 0; i < D; i++) {
            m[i] = 4 * uniform() - 2;
            for (long k = 0; k < i; k++)
                L[i * D + k] = 0.2 * uniform() - 0.1;
            L[i * D + i] = 0.5 + uniform();
            lsum += log(L[i * D + i]);
        }
        gs[j] = (hmmrt_gaussian){0, m, L, -0.5 * D * log(2 * M_PI) - lsum};
        parts[j] = &gs[j];
    }
    for (long s = 0; s < S; s++) {
        double total = 0;
        for (long k = 0; k < G; k++)
            total += (logw[s * G + k] = 0.5 + uniform());
        for (long k = 0; k < G; k++)
            logw[s * G + k] = log(logw[s * G + k] / total);
        dens[s] = (hmmrt_density){(int)G, parts + s * G, logw + s * G};
    }
    hmmrt_densities ds = {(int)D, (int)S, dens};
    /* moves: start (0) -> every state 1/S; state q (1..S): loop 0.6, on 0.39
     * (the last: loop 0.99), end (S + 1) 0.01 */
    hmmrt_model_move *moves = malloc((size_t)(4 * S + 1) * sizeof *moves);
    long nm = 0;
    for (long s = 0; s < S; s++)
        moves[nm++] = (hmmrt_model_move){0, (int)(s + 1), (int)s, 1.0 / (double)S};
    for (long s = 0; s < S; s++) {
        moves[nm++] = (hmmrt_model_move){(int)(s + 1), (int)(s + 1), (int)s, s + 1 < S ? 0.6 : 0.99};
        if (s + 1 < S)
            moves[nm++] = (hmmrt_model_move){(int)(s + 1), (int)(s + 2), (int)(s + 1), 0.39};
        moves[nm++] = (hmmrt_model_move){(int)(s + 1), (int)(S + 1), -1, 0.01};
    }
    double *ones = malloc((size_t)S * sizeof *ones);
    const char **names = malloc((size_t)n * sizeof *names);
    for (long s = 0; s < S; s++)
        ones[s] = 1;
    for (long q = 0; q < n; q++)
        names[q] = "q";
    hmmrt_model model = {.name = "gmm", .n_states = (int)n, .state_names = names, .start = 0,
                         .end = (int)(S + 1), .n_moves = (int)nm, .moves = moves,
                         .n_emissions = (int)S, .emissions = ones, .densities = &ds};
    /* the frames: each utterance walks the states, each frame near a
     * gaussian of its state */
    const long n_utt = (F + U - 1) / U;
    double *obs = malloc((size_t)F * D * sizeof *obs);
    hmmrt_real_seq *seqs = calloc((size_t)n_utt, sizeof *seqs);
    char (*utt_names)[32] = malloc((size_t)n_utt * 32);
    if (!obs || !seqs || !utt_names) {
        fprintf(stderr, "gmm-bench: out of memory for %ld frames\n", F);
        return 1;
    }
    for (long u = 0; u < n_utt; u++) {
        long first = u * U, len = first + U <= F ? U : F - first, state = (long)(uniform() * S);
        snprintf(utt_names[u], 32, "u%ld", u);
        seqs[u] = (hmmrt_real_seq){utt_names[u], obs + (size_t)first * D, len, 0};
        for (long i = 0; i < len; i++) {
            if (uniform() < 0.3 && state + 1 < S)
                state++;
            const double *m = mean + (size_t)(state * G + (long)(uniform() * G)) * D;
            for (long d = 0; d < D; d++)
                obs[(size_t)(first + i) * D + d] = m[d] + 1.2 * (uniform() - 0.5);
        }
    }
    hmmrt_real_file file = {seqs, n_utt, 0, 0};
    fprintf(stderr, "gmm-bench: %ld states x %ld full-covariance gaussians (D = %ld): %ld "
                    "gaussians; %ld frames in %ld utterances; made in %.1f s\n",
            S, G, D, n_g, F, n_utt, now() - t0);
    if (npz) { /* the frames as float32, one .npy a file per utterance is too many: one array */
        FILE *o = fopen(npz, "wb");
        char head[128];
        int len = snprintf(head, sizeof head, "{'descr': '<f4', 'fortran_order': False, "
                                              "'shape': (%ld, %ld), }", F, D);
        int pad = 64 - (10 + len + 1) % 64;
        fwrite("\x93NUMPY\x01\x00", 1, 8, o);
        unsigned short hl = (unsigned short)(len + pad + 1);
        fwrite(&hl, 2, 1, o);
        fwrite(head, 1, (size_t)len, o);
        for (int k = 0; k < pad; k++)
            fputc(' ', o);
        fputc('\n', o);
        for (size_t k = 0; k < (size_t)F * D; k++) {
            float x = (float)obs[k];
            fwrite(&x, 4, 1, o);
        }
        fclose(o);
    }
    if (params) { /* means, factors and log weights as raw doubles, for the peers */
        FILE *o = fopen(params, "wb");
        fwrite(mean, sizeof *mean, (size_t)n_g * D, o);
        fwrite(factor, sizeof *factor, (size_t)n_g * D * D, o);
        fwrite(logw, sizeof *logw, (size_t)n_g, o);
        fclose(o);
    }
    /* the program the GPU path sees: one forward score */
    static const hmmrt_column columns[] = {{.label = "forward(gmm).score", .kind = HMMRT_FIELD_SCORE}};
    static const hmmrt_real_gpu_call calls[] = {{0, 0, 0}};
    hmmrt_gpu_program gp = {.n_real_calls = 1, .real_calls = calls};
    hmmrt_program prog = {.name = "gmm", .target = "cuda", .n_columns = 1, .columns = columns,
                          .n_models = 1, .models = &model, .gpu = &gp, .real_dim = (int)D};
    char err[2048];
    /* the first utterances' scores on the CPU path's engine, once for every mode */
    double *want = calloc((size_t)(check > 0 ? check : 1), sizeof *want);
    hmmrt_fb *fb = check > 0 ? hmmrt_fb_new(&model, 1, err, sizeof err) : NULL;
    if (check > 0 && !fb) {
        fprintf(stderr, "gmm-bench: the CPU path's engine: %s\n", err);
        return 1;
    }
    check = check < n_utt ? check : n_utt;
    double c0 = now();
    for (long u = 0; u < check; u++) {
        const long L = seqs[u].length;
        double *scratch = calloc(hmmrt_fb_scratch(fb, L), sizeof *scratch);
        double *rows = malloc((size_t)L * S * sizeof *rows);
        /* hmmrt_real_rows' rows, a frame a thread (80,000 gaussians a frame) */
        long long k = 0;
#pragma omp parallel for reduction(+ : k) schedule(dynamic, 4)
        for (long i = 0; i < L; i++)
            k += hmmrt_density_probs(&ds, seqs[u].obs + (size_t)i * D, rows + (size_t)i * S);
        const long double shift = k * 0.693147180559945309417232121458176568L;
        double w = hmmrt_fb_run_rows(fb, rows, L, scratch, NULL, NULL, NULL);
        want[u] = w == -INFINITY ? w : (double)(w + shift);
        free(scratch);
        free(rows);
    }
    if (check > 0)
        fprintf(stderr, "gmm-bench: %ld utterances scored on the CPU path in %.1f s\n", check,
                now() - c0);
    /* the paper's count: per gaussian 5 flops an off-diagonal covariance
     * element, 4 a diagonal one; 9 a log-add of a state's parts */
    const double flops = (double)F * ((double)n_g * (4.0 * D + 5.0 * D * (D - 1)) + 9.0 * S * (G - 1));
    hmmrt_value *values = calloc((size_t)n_utt, sizeof *values);
    unsigned char *done = calloc((size_t)n_utt, 1);
    int bad = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", modes);
    for (char *mode = strtok(list, ","); mode; mode = strtok(NULL, ",")) {
        const size_t ml = strlen(mode);
        const int informational = ml > 0 && mode[ml - 1] == '?';
        if (informational)
            mode[ml - 1] = 0;
        if (strcmp(mode, "default") == 0)
            unsetenv("HMMRT_REAL_PRODUCT");
        else
            setenv("HMMRT_REAL_PRODUCT", mode, 1);
        double o0 = now();
        void *g = hmmrt_real_gpu_open(&prog, 0, use_double, err, sizeof err);
        if (!g) {
            fprintf(stderr, "gmm-bench: %s: %s\n", mode, err);
            return 1;
        }
        const double opened = now() - o0;
        memset(done, 0, (size_t)n_utt);
        double s0 = now();
        if (hmmrt_real_gpu_score(g, &file, values, done, err, sizeof err) != 0) {
            fprintf(stderr, "gmm-bench: %s: %s\n", mode, err);
            return 1;
        }
        const double wall = now() - s0;
        printf("gmm-bench: ---- %s, HMMRT_REAL_PRODUCT=%s%s\n", use_double ? "double" : "float", mode,
               informational ? " (shown, not required to keep the contract)" : "");
        hmmrt_real_gpu_report(g, stdout);
        hmmrt_real_gpu_close(g);
        /* the first utterances against the CPU path's engine */
        double worst = 0;
        int failed = 0;
        for (long u = 0; u < check; u++) {
            const long L = seqs[u].length;
            const double got = values[u].score, m = fabs(want[u]) > 1 ? fabs(want[u]) : 1;
            const double tol = use_double ? 1e-10 * m + 1e-12 * L : 1e-5 * m + 1e-8 * L;
            const int ok = done[u] && (got == want[u] || fabs(got - want[u]) <= tol);
            const double frac = got == want[u] ? 0 : fabs(got - want[u]) / tol;
            failed += !ok;
            worst = frac > worst || frac != frac ? frac : worst;
            printf("gmm-bench: check %s: GPU %.10g, CPU path %.10g: %s (%.3g of the "
                       "tolerance)\n", seqs[u].name, got, want[u], ok ? "ok" : "FAIL", frac);
        }
        if (!informational)
            bad += failed;
        printf("gmm-bench: %s %s: %ld states x %ld gaussians, D = %ld, %ld frames: opening %.2f s "
               "(the model packed and copied), scoring %.3f s: 1/RTF %.0f at 100 frames/s "
               "(transfers included), %.0f GFLOPS by the paper's count; worst of %ld utterances "
               "against the CPU path: %.3g of the float contract's tolerance (%s)\n",
               use_double ? "double" : "float", mode, S, G, D, F, opened, wall,
               (double)F / 100.0 / wall, flops / wall * 1e-9, check, worst,
               failed ? "FAIL" : "ok");
    }
    return bad ? 1 : 0;
}
