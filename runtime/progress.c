/* progress.c: the progress line on standard error (sequences and residues
 * done, elapsed seconds, rate), rewritten in place with '\r' at most four
 * times a second and erased at the end. */
#include "internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define REDRAW_SECONDS 0.25

/* One progress line per process, like the one standard error it is drawn on. */
static struct {
    int enabled;
    double started, last_drawn;
    int drawn_width; /* characters on the line now, 0 when it is clear */
    atomic_llong sequences, residues;
} progress;

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void hmmrt_progress_start(int enabled)
{
    progress.enabled = enabled;
    progress.started = progress.last_drawn = now_seconds();
    progress.drawn_width = 0;
    atomic_store(&progress.sequences, 0);
    atomic_store(&progress.residues, 0);
}

void hmmrt_progress_add(int64_t sequences, int64_t residues)
{
    if (!progress.enabled)
        return;
    atomic_fetch_add_explicit(&progress.sequences, sequences, memory_order_relaxed);
    atomic_fetch_add_explicit(&progress.residues, residues, memory_order_relaxed);
}

static void draw(double now)
{
    double elapsed = now - progress.started;
    long long sequences = atomic_load(&progress.sequences);
    long long residues = atomic_load(&progress.residues);
    double rate = elapsed > 0 ? (double)sequences / elapsed : 0;
    char line[256];
    int width = snprintf(line, sizeof line, "%lld sequences, %lld residues, %.1f s, %.0f sequences/s",
                         sequences, residues, elapsed, rate);
    /* Pad with blanks over what a longer previous line left. */
    fprintf(stderr, "\r%s%*s", line, progress.drawn_width > width ? progress.drawn_width - width : 0, "");
    fflush(stderr);
    progress.drawn_width = width;
    progress.last_drawn = now;
}

void hmmrt_progress_poll(void)
{
    if (!progress.enabled)
        return;
    double now = now_seconds();
    if (now - progress.last_drawn >= REDRAW_SECONDS)
        draw(now);
}

void hmmrt_progress_clear(void)
{
    if (!progress.enabled || progress.drawn_width == 0)
        return;
    fprintf(stderr, "\r%*s\r", progress.drawn_width, "");
    fflush(stderr);
    progress.drawn_width = 0;
    progress.last_drawn = 0; /* draw again at the next poll */
}

void hmmrt_progress_finish(void)
{
    hmmrt_progress_clear();
    progress.enabled = 0;
}
