// harness.cpp: runs the kernels of one generated .cu (HMMC_KERNELS, its
// path) on the CPU through emulator.h, over the sequences of a FASTA file,
// in float and in double, and writes the scores as the program prints them
// (a header '#name<TAB>LABEL.score...', then a row a sequence), a file for
// each precision; in float, a sequence the kernel marks for scoring again in
// double (nan) takes its double score, as the runtime does. The
// batch is laid out as libhmmrt_gpu lays it out: each sequence's codes from
// a multiple of 16, readable in 16-byte pieces to the end rounded up.
#include "emulator.h"

#include <algorithm>
#include <string>

#include "hmmrt_gpu.h"
#include HMMC_KERNELS

namespace {

struct Sequence {
    std::string name, text;
};

std::vector<Sequence> read_fasta(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "harness: cannot open %s\n", path);
        exit(2);
    }
    std::vector<Sequence> out;
    char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        std::string s(line);
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
            s.pop_back();
        if (!s.empty() && s[0] == '>') {
            size_t from = s.find_first_not_of(" \t", 1);
            size_t to = from == std::string::npos ? from : s.find_first_of(" \t", from);
            out.push_back({from == std::string::npos ? "" : s.substr(from, to - from), ""});
        } else if (!out.empty()) {
            for (char c : s)
                if (c != ' ' && c != '\t')
                    out.back().text += c;
        }
    }
    fclose(f);
    return out;
}

template <typename real>
std::vector<double> run(const hmmc_emulated_call &call, hmmc_emulated_kernel kernel,
                        const std::vector<Sequence> &seqs)
{
    int64_t n = (int64_t)seqs.size();
    std::vector<int64_t> offsets(n), lengths(n), bp_offsets(n);
    int64_t total = 0, cells = 0;
    for (int64_t i = 0; i < n; i++) {
        offsets[i] = total;
        lengths[i] = (int64_t)seqs[i].text.size();
        total += (lengths[i] + 15) / 16 * 16 + 16;
        bp_offsets[i] = cells;
        cells += (lengths[i] + 1) * call.n_states;
    }
    std::vector<uint8_t> codes(total + 16, 0);
    for (int64_t i = 0; i < n; i++)
        for (int64_t p = 0; p < lengths[i]; p++) {
            const char *at = strchr(call.symbols, seqs[i].text[p]);
            if (!at || !seqs[i].text[p]) {
                fprintf(stderr, "harness: %s: '%c' at %lld is not in %s's alphabet\n", seqs[i].name.c_str(),
                        seqs[i].text[p], (long long)p + 1, call.label);
                exit(2);
            }
            codes[offsets[i] + p] = (uint8_t)(at - call.symbols);
        }
    std::vector<real> scores(n);
    std::vector<unsigned char> bp(call.bp_bytes ? (size_t)(cells * call.bp_bytes) : 1);
    hmmrt_gpu_batch b;
    memset(&b, 0, sizeof b);
    b.n = n;
    b.codes = codes.data();
    b.offsets = offsets.data();
    b.lengths = lengths.data();
    b.scores = scores.data();
    b.bp = call.bp_bytes ? bp.data() : nullptr;
    b.bp_offsets = call.bp_bytes ? bp_offsets.data() : nullptr;
    b.use_double = sizeof(real) == sizeof(double);
    unsigned block, grid;
    if (call.shape == HMMC_EMULATE_BLOCK) {
        // the states rounded up to a warp, as the launcher gives at most; the
        // kernel loops when a block has fewer threads than states
        block = std::min((unsigned)(call.threads + 31) / 32 * 32, 256u);
        grid = (unsigned)n;
    } else if (call.shape == HMMC_EMULATE_LANES) {
        block = 32; // several sequences a warp when a sequence takes fewer lanes
        grid = (unsigned)((n + 32 / call.threads - 1) / (32 / call.threads));
    } else {
        block = 32;
        grid = (unsigned)((n + 31) / 32);
    }
    if (n)
        hmmc_emulate(kernel, b, grid, block);
    return std::vector<double>(scores.begin(), scores.end());
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s FASTA FLOAT.tsv DOUBLE.tsv\n", argv[0]);
        return 2;
    }
    std::vector<Sequence> seqs = read_fasta(argv[1]);
    std::vector<const hmmc_emulated_call *> calls;
    std::vector<std::vector<double>> f, d;
    long rescored = 0;
    for (const hmmc_emulated_call *c = hmmc_emulated_calls; c->label; c++) {
        calls.push_back(c);
        f.push_back(run<float>(*c, c->kernel_float, seqs));
        d.push_back(run<double>(*c, c->kernel_double, seqs));
        for (size_t i = 0; i < seqs.size(); i++)
            if (std::isnan(f.back()[i])) { // as the runtime does: scored again in double
                f.back()[i] = d.back()[i];
                rescored++;
            }
    }
    for (int precision = 0; precision < 2; precision++) {
        FILE *out = fopen(argv[2 + precision], "w");
        if (!out) {
            fprintf(stderr, "harness: cannot write %s\n", argv[2 + precision]);
            return 2;
        }
        fprintf(out, "#name");
        for (const hmmc_emulated_call *c : calls)
            fprintf(out, "\t%s.score", c->label);
        fprintf(out, "\n");
        for (size_t i = 0; i < seqs.size(); i++) {
            fprintf(out, "%s", seqs[i].name.c_str());
            for (size_t c = 0; c < calls.size(); c++)
                fprintf(out, "\t%.17g", (precision ? d : f)[c][i]);
            fprintf(out, "\n");
        }
        fclose(out);
    }
    printf("%zu calls, %zu sequences, %ld rescored in double\n", calls.size(), seqs.size(), rescored);
    return 0;
}
