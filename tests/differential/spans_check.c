/* spans_check.c: checks the training tables of a generated program (built
 * by tests/differential/spans with GENERATED naming the generated C file):
 * the program's source_text is the .hmm file byte for byte, and for every
 * trainable model of main each move's span holds the text of its weight and
 * each emission value's span the text of that value (a left-out symbol: 0),
 * in the order libhmmrt numbers the moves (a dense model's: hmmrt_dense_moves). */
#define main generated_main
#include GENERATED
#undef main
#include "fb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number a span's text denotes: NUMBER or NUMBER / NUMBER. */
static double value_of(const char *text, int64_t begin, int64_t end, int *ok)
{
    char buf[256];
    size_t n = (size_t)(end - begin);
    *ok = end > begin && n < sizeof buf;
    if (!*ok)
        return 0;
    memcpy(buf, text + begin, n);
    buf[n] = 0;
    char *rest;
    double v = strtod(buf, &rest);
    while (*rest == ' ' || *rest == '\t' || *rest == '\n')
        rest++;
    if (*rest == '/') {
        double d = strtod(rest + 1, &rest);
        v /= d;
    }
    while (*rest == ' ' || *rest == '\t' || *rest == '\n')
        rest++;
    *ok = rest != buf && *rest == 0;
    return v;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-13 * fabs(b); }

int main(int argc, char **argv)
{
    const hmmrt_program *prog = &program;
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        return 2;
    static char src[1 << 26];
    size_t len = fread(src, 1, sizeof src, f);
    fclose(f);
    int bad = 0, checked = 0;
    if (!prog->source_text || (size_t)prog->source_length != len ||
        memcmp(prog->source_text, src, len) != 0) {
        printf("source_text is not %s\n", argv[1]);
        return 1;
    }
    for (int i = 0; i < prog->n_models; i++) {
        const hmmrt_model *m = &prog->models[i];
        if (!m->move_span)
            continue;
        int n = m->n_moves;
        const hmmrt_model_move *moves = m->moves;
        hmmrt_model_move *made = NULL;
        if (m->dense)
            moves = made = hmmrt_dense_moves(m, &n);
        for (int j = 0; j < n; j++, checked++) {
            int ok;
            double w = value_of(prog->source_text, m->move_span[j].begin, m->move_span[j].end, &ok);
            if (!ok || !close_to(w, moves[j].weight)) {
                if (bad++ < 5)
                    printf("model %s, move %d (%s -> %s, weight %.17g): its span holds '%.*s'\n",
                           m->name, j, m->state_names[moves[j].from], m->state_names[moves[j].to],
                           moves[j].weight, (int)(m->move_span[j].end - m->move_span[j].begin),
                           prog->source_text + m->move_span[j].begin);
            }
        }
        int K = (int)strlen(prog->alphabets[m->alphabet]);
        for (int e = 0; e < m->n_emissions; e++)
            for (int k = 0; k < K; k++, checked++) {
                const hmmrt_span *s = &m->emission_span[e * K + k];
                double want = m->emissions[e * K + k], v = 0;
                int ok = 1;
                if (s->begin >= 0)
                    v = value_of(prog->source_text, s->begin, s->end, &ok);
                if (!ok || !(v == want || close_to(v, want))) {
                    if (bad++ < 5)
                        printf("model %s, emission %d, symbol %d (value %.17g): its span is "
                               "[%lld, %lld)\n", m->name, e, k, want, (long long)s->begin,
                               (long long)s->end);
                }
            }
        free(made);
    }
    printf("%d numbers, %d wrong\n", checked, bad);
    return bad != 0 || checked == 0;
}
