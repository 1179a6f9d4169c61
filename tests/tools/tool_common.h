/* tool_common.h: what the test tools (hmmref, genmodel) share: die() prints
 * "TOOL_NAME: message" and exits with status 2, and allocation that dies when
 * memory runs out. Define TOOL_NAME before including it. */
#ifndef HMMC_TOOL_COMMON_H
#define HMMC_TOOL_COMMON_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(TOOL_NAME ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

static void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        die("out of memory");
    return p;
}

static void *xrealloc(void *p, size_t size)
{
    p = realloc(p, size ? size : 1);
    if (!p)
        die("out of memory");
    return p;
}

#endif
