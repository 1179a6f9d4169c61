/* hmmref_em.h: hmmref --em: one Baum-Welch (or --viterbi-training) iteration
 * exactly as the contract's "Training" section says: expected uses summed over
 * the sequences, then per state its non-fixed transitions, and per non-fixed
 * emission table its values, proportional to uses + pseudocount with their
 * total kept; zeros stay 0; no expected use keeps the values. Prints the new
 * numbers (or the uses, --counts) or the whole source rewritten (--write). */
#ifndef HMMREF_EM_H
#define HMMREF_EM_H

typedef enum { EM_NUMBERS, EM_COUNTS, EM_WRITE } EmOutput;

/* The E-step summed over the sequences. */
typedef struct {
    long double log_p, viterbi;    /* totals over the sequences used */
    long double *declared_uses;    /* per Model.declared */
    long double *emission_uses;    /* emission_count x alphabet_size */
} Totals;

static Totals sum_expectations(const Model *m, const RecordList *records, CountMethod method, long max_moves)
{
    int k = m->alphabet_size;
    Totals t = { 0, 0, xcalloc(m->declared_count, sizeof(long double)),
                 xcalloc((size_t)m->emission_count * k, sizeof(long double)) };
    Expecter x = make_expecter(m, method, max_moves);
    for (int i = 0; i < records->count; i++) {
        const Record *rec = &records->records[i];
        int *codes = encode_record(m, rec);
        if (!codes) {
            fprintf(stderr, "hmmref: %s: a symbol outside the alphabet; left out\n", rec->name);
            continue;
        }
        Expectation e = expect_sequence(&x, codes, rec->length);
        if (e.log_p == -INFINITY) {
            fprintf(stderr, "hmmref: %s: no path; left out\n", rec->name);
        } else {
            t.log_p += e.log_p;
            t.viterbi += e.viterbi;
            for (int j = 0; j < m->transition_count; j++)
                t.declared_uses[m->transitions[j].decl] += e.transition_uses[j];
            for (size_t j = 0; j < (size_t)m->emission_count * k; j++)
                t.emission_uses[j] += e.emission_uses[j];
        }
        free_expectation(&e);
        free(codes);
    }
    free_expecter(&x);
    return t;
}

/* Re-weights values[0 .. count-1] in proportion to
 * uses + pseudocount, keeping their total; zeros stay 0; no use keeps them. */
static void reweigh(long double *values, const long double *uses, int count, long double pseudocount)
{
    long double total = 0, used = 0, shares = 0;
    for (int j = 0; j < count; j++)
        if (values[j] > 0) {
            total += values[j];
            used += uses[j];
            shares += uses[j] + pseudocount;
        }
    if (used == 0 || shares == 0)
        return;
    for (int j = 0; j < count; j++)
        if (values[j] > 0)
            values[j] = total * (uses[j] + pseudocount) / shares;
}

/* The M-step: new weights per Model.declared, new values per emission x symbol. */
static void maximise(const Model *m, const Totals *t, long double pseudocount, long double *weights,
                     long double *values)
{
    int k = m->alphabet_size, d = m->declared_count;
    long double *w = xcalloc(d, sizeof *w), *u = xcalloc(d, sizeof *u);
    for (int j = 0; j < d; j++)
        weights[j] = m->declared[j].weight;
    for (int q = 0; q < m->state_count; q++) {
        int count = 0, *which = xcalloc(d, sizeof(int));
        for (int j = 0; j < d; j++)
            if (m->declared[j].from == q && !m->declared[j].fixed) {
                which[count] = j;
                w[count] = m->declared[j].weight;
                u[count++] = t->declared_uses[j];
            }
        reweigh(w, u, count, pseudocount);
        for (int c = 0; c < count; c++)
            weights[which[c]] = w[c];
        free(which);
    }
    for (int e = 0; e < m->emission_count; e++) {
        for (int s = 0; s < k; s++)
            values[(size_t)e * k + s] = m->emissions[e].value[s];
        if (!m->emissions[e].fixed)
            reweigh(values + (size_t)e * k, t->emission_uses + (size_t)e * k, k, pseudocount);
    }
    free(w);
    free(u);
}

/* Whether the new weights keep every silent cycle's sum finite: I - S over
 * the silent states (every transition as declared) is still an M-matrix. */
static int silent_part_converges(const Model *m, const long double *weights)
{
    SilentStates s = find_silent_states(m);
    int n = s.count;
    long double *a = xcalloc((size_t)n * n, sizeof *a);
    for (int i = 0; i < n; i++)
        a[i * n + i] = 1;
    for (int j = 0; j < m->declared_count; j++) {
        const Transition *tr = &m->declared[j];
        int from = s.index_of_state[tr->from], to = s.index_of_state[tr->to];
        if (move_emission(m, tr) < 0 && from >= 0 && to >= 0)
            a[from * n + to] -= weights[j];
    }
    int converges = eliminate(a, n) < 0;
    free(a);
    free(s.index_of_state);
    free(s.state_of_index);
    return converges;
}

static void print_numbers(const Model *m, const long double *weights, const long double *values)
{
    for (int j = 0; j < m->declared_count; j++)
        printf("%s -> %s %.17g\n", m->declared[j].from_name, m->declared[j].to_name, (double)weights[j]);
    for (int e = 0; e < m->emission_count; e++) {
        printf("emission %s", m->emissions[e].name);
        for (int s = 0; s < m->alphabet_size; s++)
            printf(" %.17g", (double)values[(size_t)e * m->alphabet_size + s]);
        putchar('\n');
    }
}

/* One number to write back: where it stands in the source and its new value. */
typedef struct {
    size_t start, end;
    long double old_value, new_value;
} Replacement;

static int by_start(const void *a, const void *b)
{
    size_t x = ((const Replacement *)a)->start, y = ((const Replacement *)b)->start;
    return x < y ? -1 : x > y;
}

/* The whole source with the model's numbers replaced (a number that did not
 * change keeps its text, `1/6` included). */
static void write_source(const SourceFile *file, const Model *m, const long double *weights,
                         const long double *values)
{
    int count = 0, k = m->alphabet_size;
    for (int e = 0; e < m->emission_count; e++)
        count += m->emissions[e].count;
    Replacement *r = xcalloc(count + m->declared_count, sizeof *r);
    count = 0;
    for (int j = 0; j < m->declared_count; j++)
        r[count++] = (Replacement){ m->declared[j].span_start, m->declared[j].span_end, m->declared[j].weight,
                                    weights[j] };
    for (int e = 0; e < m->emission_count; e++) {
        const Emission *em = &m->emissions[e];
        for (int j = 0; j < em->count; j++) {
            int s = em->is_dict ? m->symbol_index[(unsigned char)em->symbols[j]] : j;
            r[count++] = (Replacement){ em->span_start[j], em->span_end[j], em->raw[j], values[(size_t)e * k + s] };
        }
    }
    qsort(r, count, sizeof *r, by_start);
    size_t at = 0;
    for (int j = 0; j < count; j++) {
        fwrite(file->text + at, 1, r[j].start - at, stdout);
        if (r[j].new_value == r[j].old_value)
            fwrite(file->text + r[j].start, 1, r[j].end - r[j].start, stdout);
        else
            printf("%.17g", (double)r[j].new_value);
        at = r[j].end;
    }
    fputs(file->text + at, stdout);
    free(r);
}

static void em_step(const SourceFile *file, const Model *m, const RecordList *records, CountMethod method,
                    long max_moves, long double pseudocount, EmOutput output)
{
    int k = m->alphabet_size;
    Totals t = sum_expectations(m, records, method, max_moves);
    long double *weights = xcalloc(m->declared_count, sizeof *weights);
    long double *values = xcalloc((size_t)m->emission_count * k, sizeof *values);
    maximise(m, &t, pseudocount, weights, values);
    if (output != EM_COUNTS && !silent_part_converges(m, weights)) {
        fprintf(stderr, "hmmref: --em: the updated weights make a silent cycle's sum diverge "
                        "(its product reaches 1): this step cannot train the model\n");
        exit(4);
    }
    FILE *report = output == EM_WRITE ? stderr : stdout;
    fprintf(report, "loglik %.17g\n", (double)t.log_p);
    if (method == COUNT_VITERBI)
        fprintf(report, "viterbi %.17g\n", (double)t.viterbi);
    if (output == EM_COUNTS) {
        print_numbers(m, t.declared_uses, t.emission_uses);
    } else {
        if (output == EM_WRITE)
            write_source(file, m, weights, values);
        else
            print_numbers(m, weights, values);
    }
    free(weights);
    free(values);
    free(t.declared_uses);
    free(t.emission_uses);
    fflush(stdout);
}

#endif
