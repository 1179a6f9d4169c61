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

/* The real calls of prog: every column a forward or viterbi score, its model
 * named in the label ("forward(NAME).score"). */
static int real_calls_of(const hmmrt_program *prog, hmmrt_real_gpu_call *calls)
{
    for (int c = 0; c < prog->n_columns; c++) {
        const char *label = prog->columns[c].label;
        int viterbi = strncmp(label, "viterbi(", 8) == 0;
        if (!viterbi && strncmp(label, "forward(", 8) != 0)
            return -1;
        const char *name = label + 8, *close = strchr(name, ')');
        calls[c] = (hmmrt_real_gpu_call){-1, viterbi, c};
        for (int m = 0; m < prog->n_models && close; m++)
            if (strlen(prog->models[m].name) == (size_t)(close - name) &&
                strncmp(prog->models[m].name, name, (size_t)(close - name)) == 0)
                calls[c].model = m;
        if (calls[c].model < 0 || strcmp(close, ").score") != 0)
            return -1;
    }
    return prog->n_columns;
}

int real_driver_main(int argc, char **argv, const hmmrt_program *prog)
{
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
        fprintf(stderr, "real-driver: the program's columns are not all forward and viterbi scores\n");
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
    int failed = 0, checked = 0;
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
            for (int64_t i = 0; i < f.n; i++) {
                if (!done[i]) {
                    int huge = 0;
                    for (int64_t k = 0; k < f.seqs[i].length * prog->real_dim; k++)
                        huge |= !(fabs(f.seqs[i].obs[k]) < 1e15);
                    if (f.seqs[i].length == 0 || (huge && !use_double))
                        continue; /* left to the CPU */
                    printf("FAIL real-driver: sequence %s not scored\n", f.seqs[i].name);
                    failed++;
                    continue;
                }
                for (int c = 0; c < nc; c++) {
                    double a = got[i * nc + c].score, b = want[i * nc + c].score;
                    double L = (double)f.seqs[i].length, m = fabs(b) > 1 ? fabs(b) : 1;
                    double tol = use_double ? 1e-10 * m + 1e-12 * L : 1e-5 * m + 1e-8 * L;
                    int same = (a == b) || fabs(a - b) <= tol; /* -inf: exactly */
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
    printf("%s real-driver: %d scores of %lld sequences, float and double, chunks of 1, 7 "
           "frames and the default, direct and matrix-product emission passes\n",
           failed ? "FAIL" : "ok", checked, (long long)f.n);
    return failed ? 1 : 0;
}
