// profile_data.cpp: runs libhmmrt_gpu's generic profile kernel
// (runtime/gpu/profile_data_kernel.cu, itself, with emulator.h's stand-ins:
// each lane a coroutine, each shuffle and __syncwarp a barrier) on the CPU
// over random profiles and sequences, several groups and blocks sharing a
// batch, and compares every score with the CPU's generic scorer
// (hmmrt_profile_forward, _viterbi): double within 1e-12 x max(1, |score|)
// + 1e-14 nats a symbol, float scores within float's rounding, -inf
// exactly; and scoring only picked sequences (pick: the float kernel's
// marks) gives the same scores and leaves the others alone. Prints "ok ..."
// or "FAIL ..."; exit 1 on a failure.
#include "emulator.h"

// A warp barrier that orders memory: a shuffle of every lane (the emulator
// switches lanes only at barriers, so writes before it are seen after it).
inline void __syncwarp(unsigned mask = 0xffffffffu)
{
    (void)__shfl_sync(mask, 0, 0);
}

#include "profile_data_kernel.cu"

#include "hmmrt_gpu.h"

static hmmrt_profile_kernel_args args;
static void entry(const hmmrt_gpu_batch) { hmmrt_profile_kernel(args); }

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform()
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

struct Profile {
    hmmrt_profile p;
    unsigned char col[8];
    std::vector<double> data;
};

static void make(Profile &r, int M, int n_cols, bool no_exit)
{
    int S = (M + 1 + 7) / 8 * 8;
    r.data.assign((size_t)HMMRT_PT_N * S + 2 * (size_t)n_cols * S + 3 * (size_t)n_cols, 0.0);
    for (int tab = 0; tab < HMMRT_PT_N; tab++)
        for (int k = 1; k <= M; k++)
            r.data[(size_t)tab * S + k] = (tab * S + k) % 11 == 0 ? 0.0 : uniform() * 0.5;
    double *em = r.data.data() + (size_t)HMMRT_PT_N * S;
    for (int c = 0; c < 2 * n_cols; c++)
        for (int k = 1; k <= M; k++)
            em[(size_t)c * S + k] = 0.01 + uniform() * 0.2;
    for (int i = 0; i < 3 * n_cols; i++)
        em[2 * (size_t)n_cols * S + i] = 0.02 + uniform() * 0.1;
    for (int x = 0; x < 6; x++)
        r.col[x] = (unsigned char)(x % n_cols);
    memset(&r.p, 0, sizeof r.p);
    r.p.label = "random";
    r.p.M = M;
    r.p.stride = S;
    r.p.n_cols = n_cols;
    r.p.col = r.col;
    r.p.data = r.data.data();
    for (int s = 0; s < HMMRT_PX_N; s++) {
        r.p.special[s] = 0.1 + uniform() * 0.8;
        r.p.special_lw[s] = -1;
    }
    r.p.special_lw[HMMRT_PX_NN] = r.p.special_lw[HMMRT_PX_JJ] = r.p.special_lw[HMMRT_PX_CC] = 0;
    r.p.special_lw[HMMRT_PX_NB] = r.p.special_lw[HMMRT_PX_JB] = r.p.special_lw[HMMRT_PX_CT] = 1;
    if (no_exit)
        r.p.special[HMMRT_PX_EC] = r.p.special[HMMRT_PX_EJ] = 0.0;
}

// Scores n sequences (lengths 0 .. 300, 16-byte aligned as the driver lays
// them out) under r with the emulated kernel, grid x block threads, and
// checks them. Returns the failures.
static int check(const char *name, const Profile &r, int viterbi, int use_double, int n,
                 unsigned grid, unsigned block)
{
    std::vector<int64_t> lengths(n), offsets(n);
    std::vector<uint8_t> codes;
    std::vector<double> lw(2 * (size_t)n);
    for (int j = 0; j < n; j++) {
        lengths[j] = j == 0 ? 0 : 1 + (int64_t)(uniform() * 300);
        offsets[j] = (int64_t)codes.size();
        for (int64_t i = 0; i < lengths[j]; i++)
            codes.push_back((uint8_t)(uniform() * 6));
        while (codes.size() % 16)
            codes.push_back(0);
        lw[2 * j] = (double)lengths[j] / (lengths[j] + 3.0);
        lw[2 * j + 1] = 3.0 / (lengths[j] + 3.0);
    }
    codes.resize(codes.size() + 16);
    std::vector<double> scores_d(n), rows((size_t)grid * block / 32 * 6 * r.p.stride);
    std::vector<float> scores_f(n);
    memset(&args, 0, sizeof args);
    args.tables = r.p.data;
    args.col = r.p.col;
    memcpy(args.special, r.p.special, sizeof args.special);
    memcpy(args.special_lw, r.p.special_lw, sizeof args.special_lw);
    args.M = r.p.M;
    args.stride = r.p.stride;
    args.n_cols = r.p.n_cols;
    args.viterbi = viterbi;
    args.n_lw = 2;
    args.use_double = use_double;
    args.lw = lw.data();
    args.codes = codes.data();
    args.offsets = offsets.data();
    args.lengths = lengths.data();
    args.n = n;
    args.scores = use_double ? (void *)scores_d.data() : (void *)scores_f.data();
    args.rows = rows.data();
    hmmrt_gpu_batch unused;
    memset(&unused, 0, sizeof unused);
    hmmc_emulate(entry, unused, grid, block);
    hmmrt_scratch scratch = {NULL, 0};
    int failures = 0;
    for (int j = 0; j < n; j++) {
        double want, got = use_double ? scores_d[j] : (double)scores_f[j];
        (viterbi ? hmmrt_profile_viterbi : hmmrt_profile_forward)(
            &r.p, &lw[2 * j], codes.data() + offsets[j], lengths[j], &scratch, &want);
        double tol = use_double ? 1e-12 * fmax(1.0, fabs(want)) + 1e-14 * (double)lengths[j]
                                : 1e-6 * fmax(1.0, fabs(want));
        bool same = std::isinf(want) || std::isinf(got) ? want == got : fabs(got - want) <= tol;
        if (!same && failures++ < 3)
            printf("FAIL %s %s %s: sequence %d (L %lld): kernel %.17g, generic scorer %.17g\n",
                   name, viterbi ? "viterbi" : "forward", use_double ? "double" : "float", j,
                   (long long)lengths[j], got, want);
    }
    if (!use_double) {
        /* again on every other sequence only (pick: as after the float kernel's
         * marks), the others' scores left as they were */
        std::vector<int64_t> pick;
        for (int j = 1; j < n; j += 2)
            pick.push_back(j);
        int picked = (int)pick.size();
        std::vector<float> again(n, -2.0f);
        args.scores = again.data();
        args.pick = pick.data();
        args.picked = &picked;
        hmmc_emulate(entry, unused, grid, block);
        args.pick = NULL;
        args.picked = NULL;
        for (int j = 0; j < n; j++)
            if (j % 2 ? !(again[j] == scores_f[j] || (std::isnan(again[j]) && std::isnan(scores_f[j])))
                      : again[j] != -2.0f) {
                if (failures++ < 3)
                    printf("FAIL %s %s: picked scoring: sequence %d: %.9g, scored whole %.9g\n", name,
                           viterbi ? "viterbi" : "forward", j, again[j], scores_f[j]);
            }
    }
    hmmrt_scratch_free(&scratch);
    return failures;
}

int main()
{
    static const int Ms[] = {1, 31, 32, 33, 70, 130};
    int failures = 0, runs = 0;
    for (int M : Ms)
        for (int no_exit = 0; no_exit <= (M == 70); no_exit++) {
            Profile r;
            make(r, M, 4, no_exit);
            char name[64];
            snprintf(name, sizeof name, "M=%d%s", M, no_exit ? " (no way to C)" : "");
            for (int viterbi = 0; viterbi <= 1; viterbi++)
                for (int use_double = 0; use_double <= 1; use_double++) {
                    failures += check(name, r, viterbi, use_double, 11, 2, 64);
                    runs++;
                }
        }
    if (failures)
        return 1;
    printf("ok profile-data kernel: %d emulated launches (11 sequences, 2 blocks of 2 groups) "
           "equal the CPU's generic scorer\n", runs);
    return 0;
}
