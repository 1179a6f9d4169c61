// harness.cpp: runs the kernels of one generated program on the CPU through
// emulator.h, over the sequences of a FASTA file, in float and in double,
// and writes the scores as the program prints them (a header
// '#name<TAB>LABEL.score...', then a row a sequence), a file for each
// precision; in float, a sequence the kernel marks for scoring again in
// double (nan) takes its double score, as the runtime does. Built with the
// program's .cu (HMMC_KERNELS, its path) and its .c (program.c): the calls
// are the program's table of GPU calls, each run through its own launcher
// (c<index>_launch); a call whose kernels are not emulated (the dense
// shape's) is left out. The batch is laid out as libhmmrt_gpu lays it out:
// each sequence's codes from a multiple of 16, readable in 16-byte pieces
// to the end rounded up.
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

// The scores of one call in one precision; false when its kernels are not emulated.
template <typename real>
bool run(const hmmrt_gpu_call &call, const char *symbols, const std::vector<Sequence> &seqs,
         std::vector<double> &out)
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
            const char *at = strchr(symbols, seqs[i].text[p]);
            if (!at || !seqs[i].text[p]) {
                fprintf(stderr, "harness: %s: '%c' at %lld is not in %s's alphabet\n", seqs[i].name.c_str(),
                        seqs[i].text[p], (long long)p + 1, call.label);
                exit(2);
            }
            codes[offsets[i] + p] = (uint8_t)(at - symbols);
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
    const int status = call.launch(&b);
    if (status == HMMC_NOT_EMULATED)
        return false;
    if (status != 0) {
        fprintf(stderr, "harness: %s: the launcher failed (%d)\n", call.label, status);
        exit(2);
    }
    out.assign(scores.begin(), scores.end());
    return true;
}

} // namespace

// The program's hmmrt_main (program.c): runs the program's GPU calls.
extern "C" int hmmc_emulated_main(int argc, char **argv, const hmmrt_program *prog)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s FASTA FLOAT.tsv DOUBLE.tsv\n", argv[0]);
        return 2;
    }
    std::vector<Sequence> seqs = read_fasta(argv[1]);
    std::vector<const hmmrt_gpu_call *> calls;
    std::vector<std::vector<double>> f, d;
    long rescored = 0;
    for (int k = 0; prog->gpu && k < prog->gpu->n_calls; k++) {
        const hmmrt_gpu_call *c = &prog->gpu->calls[k];
        if (c->posterior) /* libhmmrt_gpu's kernel, not the .cu's: tests/gpu/posterior-check */
            continue;
        const char *symbols = prog->alphabets[c->alphabet];
        std::vector<double> in_float, in_double;
        if (!run<float>(*c, symbols, seqs, in_float) || !run<double>(*c, symbols, seqs, in_double))
            continue;
        calls.push_back(c);
        f.push_back(in_float);
        d.push_back(in_double);
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
        for (const hmmrt_gpu_call *c : calls)
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

extern "C" int hmmc_program_main(int argc, char **argv);

int main(int argc, char **argv) { return hmmc_program_main(argc, argv); }
