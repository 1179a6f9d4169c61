/* timing.c: the clock of the runtime and the breakdown that --timing prints
 * at the end of a scoring run: reading, mapping, scoring, formatting and
 * writing, each in seconds and symbols per second; and the count of sums
 * done again in long double. */
#include "internal.h"

#include <stdatomic.h>
#include <time.h>

static atomic_llong long_double_sums;

void hmmrt_count_long_double(void)
{
    atomic_fetch_add_explicit(&long_double_sums, 1, memory_order_relaxed);
}

long long hmmrt_long_double_sums(void)
{
    return atomic_load(&long_double_sums);
}

double hmmrt_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double hmmrt_thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void print_phase(FILE *out, const char *phase, double seconds, int64_t symbols)
{
    if (symbols > 0 && seconds > 0)
        fprintf(out, "  %-36s %10.3f %12.3g\n", phase, seconds, (double)symbols / seconds);
    else
        fprintf(out, "  %-36s %10.3f %12s\n", phase, seconds, "-");
}

void hmmrt_print_timing(FILE *out, const hmmrt_run_timing *t)
{
    fprintf(out, "%s: timing: %lld sequences read (%lld symbols), %lld scored (%lld symbols)\n",
            hmmrt_progname(), (long long)t->sequences_read, (long long)t->symbols_read,
            (long long)t->sequences_scored, (long long)t->symbols_scored);
    fprintf(out, "  %-36s %10s %12s\n", "phase", "seconds", "symbols/s");
    if (!t->fused)
        print_phase(out, "opening the GPU (overlaps reading)", t->opening, 0);
    print_phase(out, "reading (overlaps the rest)", t->reading, t->symbols_read);
    if (t->reader[HMMRT_READER_PARSING] > 0) {
        print_phase(out, "  of which reading blocks", t->reader[HMMRT_READER_BLOCKS], t->symbols_read);
        print_phase(out, "    CPU s of its threads (summed)", t->reader[HMMRT_READER_BLOCKS_CPU], 0);
        print_phase(out, "  of which parsing", t->reader[HMMRT_READER_PARSING],
                    t->symbols_read);
        print_phase(out, "    CPU s of its threads (summed)", t->reader[HMMRT_READER_PARSING_CPU],
                    0);
        print_phase(out, "  of which handing records over", t->reader[HMMRT_READER_HANDING],
                    t->symbols_read);
        double rest = t->reading - t->reader[HMMRT_READER_BLOCKS] -
                      t->reader[HMMRT_READER_PARSING] - t->reader[HMMRT_READER_HANDING];
        print_phase(out, "  of which the rest (into the batch)", rest > 0 ? rest : 0, 0);
    }
    char scoring[128];
    if (t->fused) {
        snprintf(scoring, sizeof scoring, "map+score+format (%s)", t->scorer);
        print_phase(out, scoring, t->scoring, t->symbols_scored);
    } else {
        snprintf(scoring, sizeof scoring, "scoring (%s)", t->scorer);
        print_phase(out, "mapping, ordering by length", t->mapping, t->symbols_scored);
        char staged[64];
        snprintf(staged, sizeof staged, "  of which mapping+staging (%lld/%lld)",
                 (long long)t->staged_batches, (long long)t->mapped_batches);
        print_phase(out, "  of which placing (page-locked)", t->mapping_parts[0], 0);
        print_phase(out, t->staged_batches ? staged : "  of which mapping", t->mapping_parts[1],
                    t->symbols_scored);
        print_phase(out, "  of which ordering by length", t->mapping_parts[2], 0);
        print_phase(out, scoring, t->scoring, t->symbols_scored);
        print_phase(out, "formatting", t->formatting, t->symbols_scored);
    }
    print_phase(out, "writing", t->writing, t->symbols_scored);
    print_phase(out, "  of which checking names", t->writing_parts[0], 0);
    print_phase(out, "  of which rows into the buffer", t->writing_parts[1], 0);
    print_phase(out, "  of which writing the buffer out", t->writing_parts[2], 0);
    print_phase(out, t->fused ? "waiting for input" : "waiting (GPU, reader, printer)", t->waiting, 0);
    if (!t->fused) {
        double opening = t->waiting - t->waiting_reader - t->waiting_printer;
        print_phase(out, "  of which for the GPU to open", opening > 0 ? opening : 0, 0);
        print_phase(out, "  of which for the next batch (reader)", t->waiting_reader, 0);
        print_phase(out, "  of which for the printer", t->waiting_printer, 0);
    }
    print_phase(out, "total, end to end", t->total, t->symbols_scored);
    fflush(out);
}
