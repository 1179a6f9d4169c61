/* output_file.c: --output FILE: the table written to a file the program opens
 * itself, not to standard output (under mpirun, rank 0's own file: nothing
 * of it goes through mpirun's forwarding, so a "# incomplete" line written as
 * the job is killed is not lost with it; docs/scale-out.md). */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int hmmrt_output_to(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
        hmmrt_error("--output %s: cannot write it: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return HMMRT_EXIT_OUTPUT;
    }
    close(fd);
    return 0;
}
