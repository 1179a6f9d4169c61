/* build.c: writes the generated sources of a program into a folder (the
 * --emit-dir, or a temporary one removed afterwards) and builds the program
 * with the C compiler ($CC, default cc) against libhmmrt. */
#include "backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A program name usable as a C identifier part and a file name. */
static char *program_name(const char *output)
{
    char *name = strdup(base_name(output));
    if (!name)
        return NULL;
    char *dot = strrchr(name, '.');
    if (dot && dot != name)
        *dot = 0;
    return name;
}

/* Runs argv, waits; returns its exit status, or -1 when it could not start. */
static int run_command(char *const argv[], int verbose)
{
    if (verbose) {
        fprintf(stderr, "hmmc: running");
        for (int i = 0; argv[i]; i++)
            fprintf(stderr, " %s", argv[i]);
        fprintf(stderr, "\n");
    }
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "hmmc: error: cannot run '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int build_c(const char *source, const BuildOptions *o)
{
    const char *cc = getenv("CC");
    if (!cc || !*cc)
        cc = "cc";
    char *include = NULL, *library = NULL;
    if (asprintf(&include, "-I%s/runtime", o->root) < 0 ||
        asprintf(&library, "%s/build/libhmmrt.a", o->root) < 0)
        return -1;
    if (access(library, R_OK) != 0) {
        fprintf(stderr, "hmmc: error: the runtime library %s is missing: run make in %s, or set "
                        "HMMC_ROOT to the hmmc folder\n", library, o->root);
        return -1;
    }
    char *argv[] = {(char *)cc, "-std=c11", "-O2", "-fopenmp", include, (char *)source,
                    library, "-lm", "-o", (char *)o->output, NULL};
    int status = run_command(argv, o->verbose);
    free(include);
    free(library);
    if (status != 0) {
        fprintf(stderr, "hmmc: error: building %s failed (%s exited with %d); this is a bug in "
                        "hmmc: please report it with your model\n", o->output, cc, status);
        return -1;
    }
    return 0;
}

int build_program(const Program *p, const BuildOptions *o)
{
    char temp[] = "/tmp/hmmc-XXXXXX";
    const char *dir = o->emit_dir;
    if (dir) {
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "hmmc: error: cannot create %s: %s\n", dir, strerror(errno));
            return -1;
        }
    } else if (!(dir = mkdtemp(temp))) {
        fprintf(stderr, "hmmc: error: cannot create a temporary folder: %s\n", strerror(errno));
        return -1;
    }
    char *name = program_name(o->output), *source = NULL;
    if (!name || asprintf(&source, "%s/%s.c", dir, name) < 0)
        return -1;
    int result = -1;
    FILE *f = fopen(source, "w");
    if (!f) {
        fprintf(stderr, "hmmc: error: cannot write %s: %s\n", source, strerror(errno));
    } else {
        int written = backend_c_write(p, f, name);
        if (fclose(f) != 0 || written != 0)
            fprintf(stderr, "hmmc: error: cannot write %s: %s\n", source, strerror(errno));
        else
            result = build_c(source, o);
    }
    if (!o->emit_dir) {
        unlink(source);
        rmdir(dir);
    }
    free(source);
    free(name);
    return result;
}
