/* gpu_leave.c: ends a GPU run without waiting for CUDA's teardown. Giving
 * the driver's context back takes 0.1 to 0.2 s at exit, after the last row
 * is out; a child process that keeps the driver's files open takes it on
 * itself, and the program exits at once with its status. Not on a device in
 * an exclusive compute mode (the next program would find it taken) nor with
 * HMMRT_GPU_FULL_TEARDOWN set (compute-sanitizer's leak check wants it). */
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int leavable, never;

void hmmrt_gpu_teardown_leavable(int yes)
{
    leavable = yes && !never;
}

void hmmrt_gpu_never_leave(void)
{
    never = 1;
    leavable = 0;
}

/* The descriptors that are not the NVIDIA driver's, into fds (at most max);
 * how many, or -1 when they cannot be listed. */
static int other_descriptors(int *fds, int max)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0, self = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || fd == self)
            continue;
        char link[64] = "";
        ssize_t len = readlinkat(self, e->d_name, link, sizeof link - 1);
        link[len > 0 ? len : 0] = '\0';
        if (strncmp(link, "/dev/nvidia", 11) != 0)
            fds[n++] = (int)fd;
    }
    closedir(d);
    return e ? -1 : n; /* more than max: do not leave */
}

void hmmrt_exit_leaving_gpu(int status)
{
    enum { MAX_FDS = 4096 };
    static int fds[MAX_FDS];
    const char *full = getenv("HMMRT_GPU_FULL_TEARDOWN");
    if (!leavable || (full && *full && strcmp(full, "0") != 0))
        return;
    if (fflush(stdout) != 0 || fflush(stderr) != 0)
        return;
    int n = other_descriptors(fds, MAX_FDS), gone[2];
    if (n < 0 || pipe(gone) != 0)
        return;
    pid_t child = fork();
    if (child < 0) { /* no process to be had: tear down here */
        close(gone[0]);
        close(gone[1]);
        return;
    }
    if (child == 0) {
        /* only system calls from here: the child of a threaded process */
        for (int k = 0; k < n; k++)
            close(fds[k]); /* the output's readers see its end now */
        close(gone[1]);
        char byte;
        while (read(gone[0], &byte, 1) != 0 && errno == EINTR)
            ;      /* the end of the pipe: this program has exited */
        _exit(0); /* the last holder of the driver's files: its context goes */
    }
    _exit(status);
}
