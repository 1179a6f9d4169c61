/* real_driver.c: the GPU path over real observations run on the CPU: its
 * host half (runtime/gpu/real_gpu.c: chunks, pinned packing, the column
 * carried from chunk to chunk) with the CUDA calls it makes stood in for
 * here (device memory is host memory), and its kernels
 * (runtime/gpu/real_kernel.cu) run by tests/emulate/emulator.h; their scores
 * against the program's own CPU path, in float and double, at several chunk
 * sizes. The program (HMMC_PROGRAM, built by hmmc --target=c) hands its
 * hmmrt_program to real_driver_main. Run by tests/emulate/real-driver. */
#include "hmmrt.h"
#include "hmmrt_gpu.h"
#include "real_read.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int real_driver_main(int argc, char **argv, const hmmrt_program *prog);
#define main hmmc_program_main
#define hmmrt_main real_driver_main
#include HMMC_PROGRAM
#undef main
#undef hmmrt_main

int main(int argc, char **argv) { return hmmc_program_main(argc, argv); }

#include "real_cuda_stubs.c" /* the CUDA runtime, stood in for */

/* ---- the check ------------------------------------------------------------------------ */

/* The real calls of prog as backend_cuda_real.c writes them, from each
 * column's label ("posterior(NAME).segments"): what computes it and its kind. */
static int real_calls_of(const hmmrt_program *prog, hmmrt_real_gpu_call *calls)
{
    static const struct { const char *alg, *attr; int viterbi, what, out; } kinds[] = {
        {"forward", "score", 0, HMMRT_RG_SCORE, HMMRT_OUT_SCORE},
        {"viterbi", "score", 1, HMMRT_RG_SCORE, HMMRT_OUT_SCORE},
        {"viterbi", "traceback", 1, HMMRT_RG_PATH, HMMRT_OUT_TRACEBACK},
        {"viterbi", "segments", 1, HMMRT_RG_PATH, HMMRT_OUT_SEGMENTS},
        {"backward", "score", 0, HMMRT_RG_BACKWARD, HMMRT_OUT_SCORE},
        {"posterior", "score", 0, HMMRT_RG_SCORE, HMMRT_OUT_SCORE},
        {"posterior", "decode", 0, HMMRT_RG_POSTERIOR, HMMRT_OUT_DECODE},
        {"posterior", "segments", 0, HMMRT_RG_POSTERIOR, HMMRT_OUT_SEGMENTS},
        {"posterior", "probability&", 0, HMMRT_RG_POSTERIOR, HMMRT_OUT_TABLE},
    };
    for (int c = 0; c < prog->n_columns; c++) {
        const char *label = prog->columns[c].label, *open = strchr(label, '(');
        const char *close = open ? strchr(open, ')') : NULL;
        if (!close || close[1] != '.')
            return -1;
        calls[c] = (hmmrt_real_gpu_call){-1, 0, c, -1, 0};
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            if (strlen(kinds[k].alg) == (size_t)(open - label) &&
                strncmp(label, kinds[k].alg, (size_t)(open - label)) == 0 &&
                strcmp(close + 2, kinds[k].attr) == 0)
                calls[c] = (hmmrt_real_gpu_call){-1, kinds[k].viterbi, c, kinds[k].what,
                                                 kinds[k].out};
        const char *name = open + 1;
        for (int m = 0; m < prog->n_models; m++)
            if (strlen(prog->models[m].name) == (size_t)(close - name) &&
                strncmp(prog->models[m].name, name, (size_t)(close - name)) == 0)
                calls[c].model = m;
        if (calls[c].model < 0 || calls[c].what < 0)
            return -1;
    }
    return prog->n_columns;
}

/* A viterbi traceback ("b s0 s1 z") or segments ("s0:1 s1:2-3") of L
 * positions as each position's state into path: 0, or -1. */
static int path_of(const hmmrt_model *m, const char *text, int segments, int64_t L, int *path)
{
    char *copy = strdup(text), *save = NULL;
    int64_t at = 0;
    int ok = copy != NULL, first = 1;
    for (char *w = copy ? strtok_r(copy, " ", &save) : NULL; ok && w; w = strtok_r(NULL, " ", &save)) {
        char *colon = segments ? strchr(w, ':') : NULL;
        long a = 0, b = 0;
        if (segments) {
            if (!colon)
                break;
            *colon = 0;
            a = strtol(colon + 1, &colon, 10);
            b = *colon == '-' ? strtol(colon + 1, NULL, 10) : a;
        }
        int q = -1;
        for (int k = 0; k < m->n_states; k++)
            if (strcmp(m->state_names[k], w) == 0)
                q = k;
        ok = q >= 0;
        if (!segments) { /* the start and the end are no position's */
            if (!first && q != m->end && at < L)
                path[at++] = q;
            first = 0;
            continue;
        }
        for (long i = a; ok && i <= b; i++)
            ok = i >= 1 && i <= L ? (path[i - 1] = q, 1) : 0;
        at = b;
    }
    free(copy);
    return ok && at == L ? 0 : -1;
}

/* A path's own ln score over observations x (its best moves), in double. */
static double path_score(const hmmrt_model *m, const double *x, const int *path, int64_t L)
{
    const hmmrt_densities *ds = m->densities;
    double total = 0, *row = malloc(((size_t)ds->n + 1) * sizeof *row);
    int from = m->start;
    for (int64_t i = 0; row && i <= L; i++) {
        const int to = i < L ? path[i] : m->end;
        double best = -INFINITY;
        if (i < L)
            hmmrt_density_logs(ds, x + (size_t)i * ds->D, row);
        for (int k = 0; k < m->n_moves; k++) {
            const hmmrt_model_move *mv = &m->moves[k];
            if (mv->from == from && mv->to == to && mv->weight > 0 && (mv->emission >= 0) == (i < L)) {
                const double c = log(mv->weight) + (i < L ? row[mv->emission] : 0);
                best = c > best ? c : best;
            }
        }
        total += best;
        from = to;
    }
    free(row);
    return total;
}

/* Whether two viterbi paths (texts) over x tie: their own scores within the
 * float contract. */
static int paths_tie(const hmmrt_model *m, const char *a, const char *b, int segments,
                     const double *x, int64_t L)
{
    int *pa = malloc(((size_t)L + 1) * sizeof *pa), *pb = malloc(((size_t)L + 1) * sizeof *pb);
    int tie = pa && pb && path_of(m, a, segments, L, pa) == 0 && path_of(m, b, segments, L, pb) == 0;
    if (tie) {
        const double sa = path_score(m, x, pa, L), sb = path_score(m, x, pb, L);
        tie = fabs(sa - sb) <= 1e-5 * (fabs(sb) > 1 ? fabs(sb) : 1) + 1e-8 * (double)L;
    }
    free(pa), free(pb);
    return tie;
}

/* A table of posteriors ("a,b;c,d") against the CPU's within tol a value. */
static int same_table(const char *got, const char *want, double tol)
{
    while (*got && *want) {
        char *g_end, *w_end;
        double a = strtod(got, &g_end), b = strtod(want, &w_end);
        if (g_end == got || w_end == want || !(fabs(a - b) <= tol) || *g_end != *w_end)
            return 0;
        got = *g_end ? g_end + 1 : g_end;
        want = *w_end ? w_end + 1 : w_end;
    }
    return *got == *want;
}

int real_driver_main(int argc, char **argv, const hmmrt_program *prog)
{
    if (argc > 1 && strcmp(argv[1], "--gpu-train") == 0) {
        /* the program's own run (PROG --train ...) with the E-step over real
         * observations on the emulated GPU (runtime/gpu/real_train_gpu.c) */
        static hmmrt_gpu_program gp;
        gp = (hmmrt_gpu_program){.real_train_open = hmmrt_real_train_open,
                                 .real_train_expect = hmmrt_real_train_expect,
                                 .real_train_describe = hmmrt_real_train_describe,
                                 .real_train_close = hmmrt_real_train_close};
        static hmmrt_program copy;
        copy = *prog;
        copy.gpu = &gp;
        argv[1] = argv[0];
        return hmmrt_main(argc - 1, argv + 1, &copy);
    }
    if (argc < 2) {
        fprintf(stderr, "usage: real_driver OBSERVATIONS\n");
        return 2;
    }
    hmmrt_real_file f;
    char err[2048];
    if (hmmrt_real_read(argv[1], prog->real_dim, &f, err, sizeof err) != 0) {
        fprintf(stderr, "real-driver: %s\n", err);
        return 2;
    }
    hmmrt_real_gpu_call calls[64];
    const int n_calls = prog->n_columns <= 64 ? real_calls_of(prog, calls) : -1;
    if (n_calls <= 0) {
        fprintf(stderr, "real-driver: a column the GPU path over real observations does not compute\n");
        return 2;
    }
    const int nc = prog->n_columns;
    hmmrt_value *want = calloc((size_t)f.n * nc, sizeof *want), *got = calloc((size_t)f.n * nc, sizeof *got);
    unsigned char *done = calloc((size_t)f.n + 1, 1);
    hmmrt_scratch scratch = {0};
    for (int64_t i = 0; i < f.n; i++) {
        hmmrt_seq seq = {.name = f.seqs[i].name, .length = f.seqs[i].length, .index = i,
                         .obs = f.seqs[i].obs};
        if (prog->score_cpu(&seq, want + i * nc, &scratch) != 0)
            return 2;
    }
    hmmrt_gpu_program gp = {.n_real_calls = n_calls, .real_calls = calls};
    hmmrt_program copy = *prog;
    copy.gpu = &gp;
    int failed = 0, checked = 0, texts = 0, differ_float = 0, beyond = 0, ties = 0;
    /* (double, frames a chunk ("": the path's own), the emission pass) */
    static const struct { int use_double; const char *frames, *product; } runs[] = {
        {0, "1", "direct"}, {0, "7", "direct"}, {0, "", "direct"}, {0, "7", "gemm"},
        {0, "", "gemm"},    {0, "7", "tf32x3"}, {0, "", "fp32"},    {1, "1", "direct"},
        {1, "7", "direct"}, {1, "", ""},
    };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++)
        {
            const int use_double = runs[r].use_double;
            if (*runs[r].frames)
                setenv("HMMRT_REAL_FRAMES", runs[r].frames, 1);
            else
                unsetenv("HMMRT_REAL_FRAMES");
            if (*runs[r].product)
                setenv("HMMRT_REAL_PRODUCT", runs[r].product, 1);
            else
                unsetenv("HMMRT_REAL_PRODUCT");
            void *g = hmmrt_real_gpu_open(&copy, 0, use_double, err, sizeof err);
            if (!g) {
                printf("FAIL real-driver: open: %s\n", err);
                return 1;
            }
            memset(done, 0, (size_t)f.n + 1);
            for (int64_t v = 0; v < f.n * nc; v++)
                got[v].score = NAN;
            if (hmmrt_real_gpu_score(g, &f, got, done, err, sizeof err) != 0) {
                printf("FAIL real-driver: score: %s\n", err);
                return 1;
            }
            char said[4096] = "";
            FILE *report = fmemopen(said, sizeof said - 1, "w");
            hmmrt_real_gpu_report(g, report);
            fclose(report);
            hmmrt_real_gpu_close(g);
            const int product = *runs[r].product && strcmp(runs[r].product, "direct") != 0;
            if (product != (strstr(said, "matrix product") != NULL)) {
                printf("FAIL real-driver: HMMRT_REAL_PRODUCT=%s, but: %s", runs[r].product, said);
                failed++;
            }
            /* backward, posteriors or paths: chunks one at a time, and said so */
            int columns = 0;
            for (int c = 0; c < n_calls; c++)
                columns |= calls[c].what != HMMRT_RG_SCORE;
            if (columns != (strstr(said, "one at a time") != NULL) ||
                columns != (strstr(said, "backward, posteriors and paths") != NULL) ||
                !columns != (strstr(said, "two in flight") != NULL)) {
                printf("FAIL real-driver: --timing does not say how its chunks ran (%s): %s",
                       columns ? "one at a time" : "two in flight", said);
                failed++;
            }
            for (int64_t i = 0; i < f.n; i++) {
                if (!done[i]) {
                    int huge = 0;
                    for (int64_t k = 0; k < f.seqs[i].length * prog->real_dim; k++)
                        huge |= !(fabs(f.seqs[i].obs[k]) < 1e15);
                    /* whole sequences for backward, posteriors and paths: one longer
                     * than a chunk is the CPU's too */
                    int whole = 0;
                    for (int c = 0; c < n_calls; c++)
                        whole |= calls[c].what != HMMRT_RG_SCORE;
                    if (f.seqs[i].length == 0 || (huge && (!use_double || whole)) ||
                        (whole && *runs[r].frames && f.seqs[i].length > atol(runs[r].frames)))
                        continue; /* left to the CPU */
                    printf("FAIL real-driver: sequence %s not scored\n", f.seqs[i].name);
                    failed++;
                    continue;
                }
                for (int c = 0; c < nc; c++) {
                    if (prog->columns[c].kind == HMMRT_FIELD_TEXT) {
                        /* the table within 1e-6 (double: its printed rounding) or 1e-5
                         * (float); decodes, segments and paths the same in double; in
                         * float a viterbi path may be another of the same score (a tie:
                         * a tied model's states share emissions), and decodes the same
                         * but for near-ties (at most 1 in 20) */
                        const hmmrt_buf *ga = &got[i * nc + c].text, *wb = &want[i * nc + c].text;
                        const char *a = ga->len ? ga->data : "", *b = wb->len ? wb->data : "";
                        int table = strstr(prog->columns[c].label, "probability&") != NULL;
                        int same = table ? same_table(a, b, use_double ? 1e-6 : 1e-5)
                                         : strcmp(a, b) == 0;
                        texts++;
                        const int vit = strncmp(prog->columns[c].label, "viterbi(", 8) == 0;
                        if (!same && !use_double && vit &&
                            paths_tie(&prog->models[calls[c].model], a, b,
                                      strstr(prog->columns[c].label, ".segments") != NULL,
                                      f.seqs[i].obs, f.seqs[i].length)) {
                            ties++; /* another best path, its score the same in float */
                            continue;
                        }
                        if (!same && !use_double && !table) {
                            differ_float++;
                            continue;
                        }
                        if (!same) {
                            failed++;
                            printf("FAIL real-driver: %s %s (%s, chunks of %s frames): %.200s, "
                                   "the CPU %.200s\n", f.seqs[i].name, prog->columns[c].label,
                                   use_double ? "double" : "float",
                                   *runs[r].frames ? runs[r].frames : "the default", a, b);
                        }
                        continue;
                    }
                    double a = got[i * nc + c].score, b = want[i * nc + c].score;
                    double L = (double)f.seqs[i].length, m = fabs(b) > 1 ? fabs(b) : 1;
                    double tol = use_double ? 1e-10 * m + 1e-12 * L : 1e-5 * m + 1e-8 * L;
                    /* -inf exactly; but where the CPU path's scaled columns cannot hold
                     * a density's range (its "beyond what a long double holds"
                     * warning: -inf though the model gives the sequence a path) the
                     * path in logs may give the finite value */
                    int same = (a == b) || (b != -INFINITY && fabs(a - b) <= tol);
                    if (!same && b == -INFINITY && isfinite(a) &&
                        prog->columns[c].possible_from > 0 &&
                        L >= prog->columns[c].possible_from) {
                        same = 1;
                        beyond++;
                    }
                    checked++;
                    if (!same) {
                        failed++;
                        printf("FAIL real-driver: %s %s (%s, chunks of %s frames, %s): %.12g, "
                               "the CPU %.12g (tolerance %.3g)\n", f.seqs[i].name,
                               prog->columns[c].label, use_double ? "double" : "float",
                               *runs[r].frames ? runs[r].frames : "the default",
                               *runs[r].product ? runs[r].product : "its own choice", a, b, tol);
                    }
                }
            }
        }
    if (differ_float * 20 > texts) {
        printf("FAIL real-driver: %d of %d decodes, segments and paths differ in float\n",
               differ_float, texts);
        failed++;
    }
    printf("%s real-driver: %d scores (%d finite where the CPU path's range gives -inf) and %d "
           "columns of text (in float %d other best paths of the same score, %d others "
           "differing) of %lld sequences, float and double, chunks of 1, 7 frames and the "
           "default, direct and matrix-product emission passes\n",
           failed ? "FAIL" : "ok", checked, beyond, texts, ties, differ_float, (long long)f.n);
    return failed ? 1 : 0;
}
