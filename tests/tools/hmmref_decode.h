/* hmmref_decode.h: hmmref --posterior and --segments: the decode (the state
 * of highest posterior at each position, ties to the state declared first),
 * segments (maximal runs of positions whose emitting move ends in the same
 * state) and the posterior table, in the text forms of the contract
 * (/work/shared/design/language.md, "Meaning"). Included by hmmref.c. */
#ifndef HMMREF_DECODE_H
#define HMMREF_DECODE_H

/* `STATE:FIRST-LAST` or `STATE:I` per run of state_at[0 .. length-1]; `-` if empty. */
static void print_segments(const Model *m, const int *state_at, long length)
{
    if (length == 0)
        fputs("-", stdout);
    for (long first = 0; first < length;) {
        long last = first;
        while (last + 1 < length && state_at[last + 1] == state_at[first])
            last++;
        printf("%s%s:%ld", first ? " " : "", m->states[state_at[first]].name, first + 1);
        if (last > first)
            printf("-%ld", last + 1);
        first = last + 1;
    }
}

/* The destination of each emitting move of a viterbi path (length entries), or NULL if no path. */
static int *viterbi_states_at(const Model *m, const ViterbiResult *r, long length)
{
    if (!r->path_length)
        return NULL;
    int *state_at = xcalloc(length + 1, sizeof(int));
    long position = 0;
    for (int k = 0; k + 1 < r->path_length; k++) {
        const Transition *tr = find_transition(m, r->path[k], r->path[k + 1]);
        if (!tr)
            die("viterbi path uses a missing transition");
        if (move_emission(m, tr) >= 0)
            state_at[position++] = tr->to;
    }
    if (position != length)
        die("viterbi path emits %ld symbols, the sequence has %ld", position, length);
    return state_at;
}

/* The --segments field of the default output: the viterbi path's segments. */
static void print_viterbi_segments(const Model *m, const ViterbiResult *r, long length)
{
    int *state_at = viterbi_states_at(m, r, length);
    if (state_at)
        print_segments(m, state_at, length);
    else
        fputs("-", stdout);
    free(state_at);
}

/* name, forward score, decode, segments, posterior table: one line. */
static void print_posterior_row(const Model *m, const char *name, const Expectation *e, long length)
{
    int n = m->state_count;
    printf("%s\t", name);
    print_score(e->log_p > -INFINITY ? (double)e->log_p : -INFINITY);
    if (e->log_p == -INFINITY || length == 0) {
        fputs("\t-\t-\t-\n", stdout);
        return;
    }
    int *decode = xcalloc(length, sizeof(int));
    for (long i = 0; i < length; i++)
        for (int q = 1; q < n; q++)
            if (e->posterior[(size_t)i * n + q] > e->posterior[(size_t)i * n + decode[i]])
                decode[i] = q;
    putchar('\t');
    for (long i = 0; i < length; i++)
        printf("%s%s", i ? " " : "", m->states[decode[i]].name);
    putchar('\t');
    print_segments(m, decode, length);
    putchar('\t');
    for (long i = 0; i < length; i++)
        for (int q = 0; q < n; q++)
            printf("%s%.12Lg", q ? "," : i ? ";" : "", e->posterior[(size_t)i * n + q]);
    putchar('\n');
    free(decode);
}

static void posterior_records(const Model *m, const RecordList *records, CountMethod method, long max_moves)
{
    Expecter x = make_expecter(m, method, max_moves);
    fputs("# states:", stdout); /* the order of the table's values */
    for (int q = 0; q < m->state_count; q++)
        printf(" %s", m->states[q].name);
    putchar('\n');
    for (int i = 0; i < records->count; i++) {
        const Record *rec = &records->records[i];
        int *codes = encode_record(m, rec);
        if (!codes) {
            printf("%s\tINVALID\n", rec->name);
            continue;
        }
        Expectation e = expect_sequence(&x, codes, rec->length);
        print_posterior_row(m, rec->name, &e, rec->length);
        free_expectation(&e);
        free(codes);
    }
    free_expecter(&x);
    fflush(stdout);
}

#endif
