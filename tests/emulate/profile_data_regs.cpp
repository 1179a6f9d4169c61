// profile_data_regs.cpp: runs the float kernel of profiles as data
// (runtime/gpu/profile_data_regs.cuh, through the library's own tables of
// instances, with emulator.h's stand-ins: each lane a coroutine, each shuffle
// a barrier) on the CPU and compares every score with the CPU's generic scorer
// (hmmrt_profile_forward, _viterbi) within the float contract, 1e-5 x max(1,
// |score|) + 1e-8 nats a symbol, -inf exactly. A NaN or -inf where the scorer
// has a finite score is the kernel's mark for "score again in double": the
// test counts those, requires none on the imported models and some on a
// profile built to underflow float. Profiles: the imported models of a
// generated program (profile_models.c: HMMER3 and HMMER2 imports, M up to
// 1,100 and more) on random proteins, homologs made from each model's
// consensus, one sequence of 10,500 residues and an empty one; and random
// profiles of every lane count. Prints "ok ..." or "FAIL ..."; exit 1 on a failure.
#include "emulator.h"

#include "profile_data_regs.cuh"

#include "profile_data_regs_forward.cu"
#include "profile_data_regs_small.cu"
#include "profile_data_regs_viterbi.cu"
#include "profile_data_regs_viterbi_long.cu"

extern "C" const hmmrt_profile *const hmmc_test_profiles[];

typedef void (*regs_kernel)(const hmmrt_pd_regs_args);
static hmmrt_pd_regs_args args;
static regs_kernel chosen;
static void entry(const hmmrt_gpu_batch) { chosen(args); }

static regs_kernel find(int G, int S, int viterbi)
{
    const hmmrt_pd_regs_instance *const tables[] = {hmmrt_pd_regs_small, hmmrt_pd_regs_forward,
                                                    hmmrt_pd_regs_viterbi, hmmrt_pd_regs_viterbi_long};
    for (const hmmrt_pd_regs_instance *t : tables)
        for (int i = 0; t[i].kernel; i++)
            if (t[i].G == G && t[i].S == S && t[i].viterbi == viterbi)
                return (regs_kernel)t[i].kernel;
    return NULL;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double uniform()
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

struct Batch {
    std::vector<int64_t> lengths, offsets;
    std::vector<uint8_t> codes;
    void add(const std::vector<uint8_t> &x)
    {
        lengths.push_back((int64_t)x.size());
        offsets.push_back((int64_t)codes.size());
        codes.insert(codes.end(), x.begin(), x.end());
        while (codes.size() % 16)
            codes.push_back(0);
    }
};

// HMMER3's length model, as every HMMER3 import writes it (lw[0..2]); a
// profile without length-dependent weights reads none.
static void length_weights(int64_t L, double lw[3])
{
    lw[0] = pow(((double)L + 1.0) / (double)L, (double)L) * ((double)L + 1.0);
    lw[1] = (double)L / ((double)L + 3.0);
    lw[2] = 3.0 / ((double)L + 3.0);
}

struct Outcome {
    int failures = 0, marked = 0, scored = 0;
};

// Scores the batch under p with the float kernel, and checks each score.
static void check(const char *name, const hmmrt_profile *p, int viterbi, const Batch &b,
                  Outcome &out)
{
    int G, S;
    if (!hmmrt_pd_regs_shape(p->M, viterbi, &G, &S)) {
        printf("FAIL %s: no float kernel shape for M %d\n", name, p->M);
        out.failures++;
        return;
    }
    chosen = find(G, S, viterbi);
    if (!chosen) {
        printf("FAIL %s: the library holds no kernel for G %d, S %d\n", name, G, S);
        out.failures++;
        return;
    }
    std::vector<float> w(hmmrt_pd_regs_weights(G, S)), em(hmmrt_pd_regs_emissions(p, G, S) + 1);
    std::vector<float> loops(3 * (size_t)p->n_cols + 1);
    if (hmmrt_pd_regs_tables(p, viterbi, G, S, w.data(), em.data(), loops.data()) != 0) {
        printf("FAIL %s: weights below float's range\n", name);
        out.failures++;
        return;
    }
    const int64_t n = (int64_t)b.lengths.size();
    std::vector<double> lw(3 * (size_t)n);
    for (int64_t j = 0; j < n; j++)
        length_weights(b.lengths[j], &lw[3 * j]);
    std::vector<float> scores(n);
    std::vector<uint8_t> codes = b.codes;
    codes.resize(codes.size() + 16);
    memset(&args, 0, sizeof args);
    args.w = w.data();
    args.em = em.data();
    args.loops = loops.data();
    args.col = p->col;
    args.n_cols = p->n_cols;
    memcpy(args.special, p->special, sizeof args.special);
    memcpy(args.special_lw, p->special_lw, sizeof args.special_lw);
    args.n_lw = 3;
    args.lw = lw.data();
    args.codes = codes.data();
    args.offsets = b.offsets.data();
    args.lengths = b.lengths.data();
    args.n = n;
    args.scores = scores.data();
    const unsigned block = 64, per_block = block / G;
    hmmrt_gpu_batch unused;
    memset(&unused, 0, sizeof unused);
    hmmc_emulate(entry, unused, (unsigned)((n + per_block - 1) / per_block), block);
    hmmrt_scratch scratch = {NULL, 0};
    for (int64_t j = 0; j < n; j++) {
        double want, got = scores[j];
        (viterbi ? hmmrt_profile_viterbi : hmmrt_profile_forward)(p, &lw[3 * j], codes.data() + b.offsets[j],
                                                                  b.lengths[j], &scratch, &want);
        out.scored++;
        if (std::isfinite(want) && (std::isnan(got) || got == -INFINITY)) {
            out.marked++;
            continue;
        }
        double tol = 1e-5 * fmax(1.0, fabs(want)) + 1e-8 * (double)b.lengths[j];
        bool same = std::isinf(want) || std::isinf(got) ? want == got : fabs(got - want) <= tol;
        if (!same && out.failures++ < 5)
            printf("FAIL %s %s (G %d, S %d): sequence %lld (L %lld): kernel %.9g, generic scorer %.12g\n",
                   name, viterbi ? "viterbi" : "forward", G, S, (long long)j, (long long)b.lengths[j], got,
                   want);
    }
    hmmrt_scratch_free(&scratch);
}

// A code for column c of p (the first symbol that reads it).
static uint8_t code_of(const hmmrt_profile *p, int c)
{
    for (int x = 0; x < 256; x++)
        if (p->col[x] == c)
            return (uint8_t)x;
    return 0;
}

// Random residues (codes 0..19: the amino acids of an import's alphabet).
static std::vector<uint8_t> random_protein(int64_t L)
{
    std::vector<uint8_t> x((size_t)L);
    for (auto &c : x)
        c = (uint8_t)(uniform() * 20);
    return x;
}

// A homolog: nodes from..to of p's consensus (each node's likeliest match
// residue), 15% of them mutated, between random flanks.
static std::vector<uint8_t> homolog(const hmmrt_profile *p, int from, int to, int flank)
{
    std::vector<uint8_t> x = random_protein(flank);
    const double *match = p->data + (size_t)HMMRT_PT_N * p->stride;
    for (int k = from; k <= to; k++) {
        int best = 0;
        for (int c = 1; c < p->n_cols; c++)
            if (match[(size_t)c * p->stride + k] > match[(size_t)best * p->stride + k])
                best = c;
        x.push_back(uniform() < 0.15 ? (uint8_t)(uniform() * 20) : code_of(p, best));
    }
    std::vector<uint8_t> tail = random_protein(flank);
    x.insert(x.end(), tail.begin(), tail.end());
    return x;
}

static int imported(int &longest)
{
    int failures = 0, profiles = 0, doubles = 0;
    for (int i = 0; hmmc_test_profiles[i]; i++) {
        const hmmrt_profile *p = hmmc_test_profiles[i];
        Batch b, h; /* b: no homolog (none may be marked); h: homologs */
        b.add({});
        for (int s = 0; s < 12; s++)
            b.add(random_protein(1 + (int64_t)(uniform() * 400)));
        b.add(random_protein(10500));
        std::vector<uint8_t> wild(300); /* every symbol: degenerate codes, '*' */
        for (auto &c : wild)
            c = (uint8_t)(uniform() * 53);
        b.add(wild);
        for (int s = 0; s < 6; s++) {
            int from = 1 + (int)(uniform() * p->M / 3), to = p->M - (int)(uniform() * p->M / 3);
            h.add(homolog(p, from, to, (int)(uniform() * 60)));
        }
        h.add(homolog(p, 1, p->M, 5));
        for (int viterbi = 0; viterbi <= 1; viterbi++) {
            int G, S;
            std::vector<float> w, em, loops;
            if (hmmrt_pd_regs_shape(p->M, viterbi, &G, &S)) {
                w.resize(hmmrt_pd_regs_weights(G, S));
                em.resize(hmmrt_pd_regs_emissions(p, G, S) + 1);
                loops.resize(3 * (size_t)p->n_cols + 1);
            }
            if (!hmmrt_pd_regs_shape(p->M, viterbi, &G, &S) ||
                hmmrt_pd_regs_tables(p, viterbi, G, S, w.data(), em.data(), loops.data()) != 0) {
                doubles++; /* the double kernel's (tests/emulate/profile_data.cpp) */
                printf("note %s %s: the double kernel's (M %d: weights below float's range or "
                       "beyond the shapes)\n", p->label, viterbi ? "viterbi" : "forward", p->M);
                continue;
            }
            Outcome o, oh;
            char name[96];
            snprintf(name, sizeof name, "%s (M %d)", p->label, p->M);
            check(name, p, viterbi, b, o);
            check(name, p, viterbi, h, oh);
            failures += o.failures + oh.failures;
            if (o.marked) {
                printf("FAIL %s %s: %d of %d sequences without a homolog marked for double "
                       "(expected none)\n", name, viterbi ? "viterbi" : "forward", o.marked, o.scored);
                failures++;
            }
            if (oh.marked) /* a long alignment leaves N and B, and every node they feed, 2^-214 behind */
                printf("note %s %s: %d of %d homologs marked for double (as the specialised kernel "
                       "marks them)\n", name, viterbi ? "viterbi" : "forward", oh.marked, oh.scored);
        }
        profiles++;
        longest = p->M > longest ? p->M : longest;
    }
    printf("note %d imported profiles (%d calls on the double kernel)\n", profiles, doubles);
    return failures;
}

struct Random {
    hmmrt_profile p;
    unsigned char col[256];
    std::vector<double> data;
};

// A random profile of M nodes over 6 symbols in 4 columns; with `tiny`, node
// 1's entry and match emissions so small (normal floats) that its match
// state falls below float's normal range at every residue: the kernel must
// mark the sequences.
static void make(Random &r, int M, bool tiny)
{
    int S = (M + 1 + 7) / 8 * 8, n_cols = 4;
    r.data.assign((size_t)HMMRT_PT_N * S + 2 * (size_t)n_cols * S + 3 * (size_t)n_cols, 0.0);
    for (int tab = 0; tab < HMMRT_PT_N; tab++)
        for (int k = 1; k <= M; k++)
            r.data[(size_t)tab * S + k] = (tab * S + k) % 11 == 0 ? 0.0 : 0.05 + uniform() * 0.3;
    double *em = r.data.data() + (size_t)HMMRT_PT_N * S;
    for (int c = 0; c < 2 * n_cols; c++)
        for (int k = 1; k <= M; k++)
            em[(size_t)c * S + k] = 0.3 + uniform() * 1.5;
    for (int i = 0; i < 3 * n_cols; i++)
        em[2 * (size_t)n_cols * S + i] = 1.0; /* as an import's: float's loops are exact */
    if (tiny) { /* M1 = B 1e-33 1e-36: B is 2^81 to 2^97, so M1 is below 2^-126 but not 0 */
        r.data[(size_t)HMMRT_PT_ENTRY * S + 1] = 1e-33;
        for (int c = 0; c < n_cols; c++)
            em[(size_t)c * S + 1] = 1e-36;
    }
    memset(r.col, 0, sizeof r.col);
    for (int x = 0; x < 6; x++)
        r.col[x] = (unsigned char)(x % n_cols);
    memset(&r.p, 0, sizeof r.p);
    r.p.label = tiny ? "random-underflow" : "random";
    r.p.M = M;
    r.p.stride = S;
    r.p.n_cols = n_cols;
    r.p.col = r.col;
    r.p.data = r.data.data();
    for (int s = 0; s < HMMRT_PX_N; s++) {
        r.p.special[s] = 0.2 + uniform() * 0.6;
        r.p.special_lw[s] = -1;
    }
    r.p.special_lw[HMMRT_PX_NN] = r.p.special_lw[HMMRT_PX_JJ] = r.p.special_lw[HMMRT_PX_CC] = 1;
    r.p.special_lw[HMMRT_PX_NB] = r.p.special_lw[HMMRT_PX_JB] = r.p.special_lw[HMMRT_PX_CT] = 2;
}

static int random_profiles()
{
    static const int Ms[] = {1, 7, 8, 9, 33, 80, 81, 130, 160, 161, 300, 577};
    int failures = 0, runs = 0, marked = 0, scored = 0;
    for (int M : Ms) {
        Random r;
        make(r, M, false);
        Batch b;
        for (int j = 0; j < 9; j++) {
            std::vector<uint8_t> x((size_t)(j == 0 ? 0 : 1 + (int64_t)(uniform() * 200)));
            for (auto &c : x)
                c = (uint8_t)(uniform() * 6);
            b.add(x);
        }
        char name[64];
        snprintf(name, sizeof name, "random M=%d", M);
        for (int viterbi = 0; viterbi <= 1; viterbi++) {
            Outcome o;
            check(name, &r.p, viterbi, b, o);
            failures += o.failures;
            runs++;
            marked += o.marked, scored += o.scored;
        }
    }
    /* N's loop (weights below 1 here) leaves N, and what it feeds, far below the
     * column sum on long sequences: marked, as the specialised kernel marks them */
    if (marked * 4 > scored) {
        printf("FAIL random profiles: %d of %d sequences marked for double (expected few)\n", marked,
               scored);
        failures++;
    }
    Random r;
    make(r, 40, true);
    Batch b;
    for (int j = 0; j < 8; j++) {
        std::vector<uint8_t> x((size_t)(20 + (int64_t)(uniform() * 100)));
        for (auto &c : x)
            c = (uint8_t)(uniform() * 6);
        b.add(x);
    }
    Outcome o;
    check("random-underflow M=40", &r.p, 0, b, o);
    failures += o.failures;
    if (o.marked != o.scored) {
        printf("FAIL random-underflow M=40 forward: %d of %d sequences marked for double (expected "
               "all: their delete states fall below float's range)\n", o.marked, o.scored);
        failures++;
    }
    /* a forward weight below float's normal range, or a loop emission float
     * rounds: the layout leaves the profile to the double kernel */
    for (int what = 0; what < 2; what++) {
        Random q;
        make(q, 50, false);
        if (what == 0)
            q.data[(size_t)HMMRT_PT_ENTRY * q.p.stride + 7] = 1e-40;
        else
            q.data[(size_t)HMMRT_PT_N * q.p.stride + 2 * (size_t)q.p.n_cols * q.p.stride] = 0.1;
        int G, S;
        hmmrt_pd_regs_shape(q.p.M, 0, &G, &S);
        std::vector<float> w(hmmrt_pd_regs_weights(G, S)), em(hmmrt_pd_regs_emissions(&q.p, G, S)),
            loops(3 * (size_t)q.p.n_cols);
        if (hmmrt_pd_regs_tables(&q.p, 0, G, S, w.data(), em.data(), loops.data()) != 1) {
            printf("FAIL random M=50: %s, but the float kernel's layout takes it\n",
                   what == 0 ? "an entry of 1e-40" : "a loop emission of 0.1");
            failures++;
        }
    }
    printf("note %d random profiles of M = 1 to 577 (G 8, 16, 32), forward and viterbi: %d of %d "
           "sequences marked for double; the underflowing one: %d of %d\n", runs / 2, marked, scored,
           o.marked, o.scored);
    return failures;
}

int main()
{
    int longest = 0;
    int failures = random_profiles() + imported(longest);
    if (failures)
        return 1;
    printf("ok profile-data float kernel: emulated scores within the float contract of the CPU's "
           "generic scorer (imported profiles up to M %d, a sequence of 10,500 residues)\n", longest);
    return 0;
}
