/* report.c: error, warning and note messages on standard error, each one line
 * starting with the program's name ("casino: error: ..."). */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static char progname[256] = "";

void hmmrt_set_progname(const char *argv0, const char *fallback)
{
    const char *name = argv0 && *argv0 ? argv0 : fallback;
    if (!name)
        return;
    const char *slash = strrchr(name, '/');
    if (slash && slash[1])
        name = slash + 1;
    snprintf(progname, sizeof progname, "%s", name);
}

void hmmrt_default_progname(const char *name)
{
    if (!progname[0])
        hmmrt_set_progname(name, NULL);
}

const char *hmmrt_progname(void)
{
    return progname[0] ? progname : "hmmrt";
}

/* One write per message, so lines of several messages never mix. */
static void report(const char *kind, const char *fmt, va_list ap)
{
    char line[4096];
    int n = snprintf(line, sizeof line, "%s: %s: ", hmmrt_progname(), kind);
    if (n < 0)
        return;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    hmmrt_progress_clear();
    fprintf(stderr, "%s\n", line);
}

void hmmrt_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("error", fmt, ap);
    va_end(ap);
}

void hmmrt_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("warning", fmt, ap);
    va_end(ap);
}

void hmmrt_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report("note", fmt, ap);
    va_end(ap);
}
