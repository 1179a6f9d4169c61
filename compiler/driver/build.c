/* build.c: writes the generated sources of a program into a folder and
 * builds the program with the C compiler (and nvcc) against libhmmrt;
 * stopped by a signal, it leaves nothing behind. */

/* The folder is the --emit-dir, or a temporary one in $TMPDIR, removed
 * afterwards; the C compiler is $CC (default cc, with the extra flags of
 * $HMMC_CFLAGS). The program is linked into a temporary file beside the
 * output and renamed to it at the end, so a failed or killed build leaves no
 * partial program. Each tool runs in a process group of its own; on SIGINT,
 * SIGTERM or SIGHUP hmmc stops that group, removes its temporary folder and
 * file, and exits with 128 + the signal (build_catch_signals). */
#include "driver/build.h"

#include "codegen/backend.h"
#include "codegen/backend_dense.h"
#include "codegen/c/backend_c_profile.h"
#include "codegen/cuda/cuda_plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What a signal handler must undo; written with the signals blocked. */
static volatile sig_atomic_t running_group; /* the running tool's process group, or 0 */
static char cleanup_dir[PATH_MAX];          /* the temporary folder, or "" */
static char cleanup_output[PATH_MAX];       /* the temporary program, or "" */

static const int caught_signals[] = {SIGINT, SIGTERM, SIGHUP};
enum { N_CAUGHT = sizeof caught_signals / sizeof caught_signals[0] };

static void block_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < N_CAUGHT; i++)
        sigaddset(&set, caught_signals[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

static void restore_signals(const sigset_t *old) { sigprocmask(SIG_SETMASK, old, NULL); }

/* Removes every entry of a flat folder, then the folder, with calls that
 * are safe in a signal handler (no opendir: it allocates). */
static void remove_folder_now(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        char entries[4096] __attribute__((aligned(8)));
        long n;
        while ((n = syscall(SYS_getdents64, fd, entries, sizeof entries)) > 0) {
            for (long at = 0; at < n;) {
                const char *name = entries + at + 19; /* d_ino 8, d_off 8, d_reclen 2, d_type 1 */
                unsigned short length;
                memcpy(&length, entries + at + 16, sizeof length);
                if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
                    unlinkat(fd, name, 0);
                at += length;
            }
        }
        close(fd);
    }
    rmdir(path);
}

/* SIGINT, SIGTERM, SIGHUP: the running tool's group gets the same signal
 * (compilers remove their own temporary files on it) and 2 s to end, then
 * SIGKILL, and 2 s more until nothing of it is left to write; then what
 * hmmc made is removed and it exits. */
static void on_signal(int sig)
{
    pid_t group = running_group;
    if (group > 0) {
        struct timespec tick = {0, 10 * 1000 * 1000};
        kill(-group, sig);
        for (int i = 0; i < 200 && waitpid(group, NULL, WNOHANG) == 0; i++)
            nanosleep(&tick, NULL);
        kill(-group, SIGKILL);
        for (int i = 0; i < 200; i++) {
            waitpid(group, NULL, WNOHANG);
            if (kill(-group, 0) != 0)
                break;
            nanosleep(&tick, NULL);
        }
    }
    if (cleanup_output[0])
        unlink(cleanup_output);
    if (cleanup_dir[0])
        remove_folder_now(cleanup_dir);
    _exit(128 + sig);
}

/* Out of memory (fatal_out_of_memory): what hmmc made is removed, as on a signal. */
static void on_out_of_memory(void)
{
    if (cleanup_output[0])
        unlink(cleanup_output);
    if (cleanup_dir[0])
        remove_folder_now(cleanup_dir);
}

void build_catch_signals(void)
{
    fatal_out_of_memory_hook(on_out_of_memory);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    for (int i = 0; i < N_CAUGHT; i++)
        sigaddset(&action.sa_mask, caught_signals[i]);
    for (int i = 0; i < N_CAUGHT; i++) {
        struct sigaction old;
        /* a signal ignored by whoever started hmmc (nohup, a background job) stays ignored */
        if (sigaction(caught_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(caught_signals[i], &action, NULL);
    }
}

/* Sets (or, with NULL, clears) a path the handler removes. */
static void set_cleanup(char *slot, const char *path)
{
    sigset_t old;
    block_signals(&old);
    if (path)
        snprintf(slot, PATH_MAX, "%s", path);
    else
        slot[0] = 0;
    restore_signals(&old);
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A program name usable as a C identifier part and a file name. */
static char *program_name(const char *output)
{
    char *name = xstrdup(base_name(output));
    char *dot = strrchr(name, '.');
    if (dot && dot != name)
        *dot = 0;
    return name;
}

/* A command line under construction, as long as it needs to be (argv grows,
 * NULL-terminated); extra holds the split $HMMC_CFLAGS. */
typedef struct Command {
    char **argv;
    int argc, cap;
    char *extra;
} Command;

static void command_add(Command *c, const char *arg)
{
    if (c->argc + 2 > c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->argv = xrealloc(c->argv, sizeof(char *) * (size_t)c->cap);
    }
    if (arg)
        c->argv[c->argc++] = (char *)arg;
    c->argv[c->argc] = NULL;
}

static void command_free(Command *c)
{
    free(c->argv);
    free(c->extra);
    *c = (Command){.argc = 0};
}

/* Appends the words of $HMMC_CFLAGS (split at blanks): flags such as
 * -fsanitize=address for every compile and link of a generated program. */
static void command_add_extra_flags(Command *c)
{
    const char *env = getenv("HMMC_CFLAGS");
    if (!env || !*env)
        return;
    free(c->extra);
    c->extra = xstrdup(env);
    char *save = NULL;
    for (char *w = strtok_r(c->extra, " \t", &save); w;
         w = strtok_r(NULL, " \t", &save))
        command_add(c, w);
}

/* A command starting with the C compiler ($CC, default cc) and "-std=c11 -O2
 * -fopenmp", then $HMMC_CFLAGS; c is empty (new or command_free'd). */
static void command_start_cc(Command *c)
{
    const char *cc = getenv("CC");
    command_add(c, cc && *cc ? cc : "cc");
    command_add(c, "-std=c11");
    command_add(c, "-O2");
    command_add(c, "-fopenmp");
    command_add_extra_flags(c);
}

/* Runs argv, waits; returns its exit status, or -1 when it could not start.
 * With errors_to, its standard error goes into that file. */
static int run_command_to(char *const argv[], int verbose, const char *errors_to)
{
    if (verbose) {
        fprintf(stderr, "hmmc: running");
        for (int i = 0; argv[i]; i++)
            fprintf(stderr, " %s", argv[i]);
        fprintf(stderr, "\n");
    }
    /* signals stay blocked until the child is in its own group and
     * running_group names it, so that a signal now stops it too */
    sigset_t old;
    block_signals(&old);
    pid_t pid = fork();
    if (pid < 0) {
        restore_signals(&old);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        for (int i = 0; i < N_CAUGHT; i++) {
            struct sigaction now;
            if (sigaction(caught_signals[i], NULL, &now) == 0 && now.sa_handler == on_signal)
                signal(caught_signals[i], SIG_DFL);
        }
        restore_signals(&old);
        /* the tools' own temporary files go into hmmc's folder, which is
         * removed whatever happens to them */
        if (cleanup_dir[0])
            setenv("TMPDIR", cleanup_dir, 1);
        if (errors_to && !freopen(errors_to, "w", stderr))
            _exit(127);
        execvp(argv[0], argv);
        fprintf(stderr, "hmmc: error: cannot run '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    running_group = pid;
    restore_signals(&old);
    int status;
    pid_t waited;
    while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    running_group = 0;
    if (waited < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_command(char *const argv[], int verbose) { return run_command_to(argv, verbose, NULL); }

/* The whole of a small file, malloc'd, or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = 2 * (len + n + 1);
            text = xrealloc(text, cap);
        }
        memcpy(text + len, chunk, n);
        len += n;
    }
    fclose(f);
    if (text)
        text[len] = 0;
    return text ? text : xstrdup("");
}

static int build_failed(const BuildOptions *o, const char *tool, int status)
{
    fprintf(stderr, "hmmc: error: building %s failed (%s exited with %d); this is a bug in "
                    "hmmc: please report it with your model\n", o->output, tool, status);
    return -1;
}

/* The CUDA toolkit folder: $CUDA_HOME, else the folder above the nvcc on
 * PATH, else /usr/local/cuda when it holds bin/nvcc. */
char *cuda_home(void)
{
    const char *env = getenv("CUDA_HOME");
    if (env && *env)
        return xstrdup(env);
    const char *path = getenv("PATH");
    if (!path)
        path = "";
    char *copy = xstrdup(path), *save = NULL, *found = NULL;
    for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
        char *nvcc = xasprintf("%s/nvcc", dir), real[4096];
        if (access(nvcc, X_OK) == 0 && realpath(nvcc, real)) {
            char *slash = strrchr(real, '/');
            if (slash)
                *slash = 0;
            slash = strrchr(real, '/');
            if (slash)
                *slash = 0;
            found = xstrdup(real);
        }
        free(nvcc);
    }
    free(copy);
    if (!found && access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
        found = xstrdup("/usr/local/cuda");
    return found;
}

/* Compiles the .c and .cu sources and links them with both runtime libraries. */
static int build_cuda(const Program *p, const Plans *plans, const char *c_source,
                      const char *cu_source, const char *dir, const char *program,
                      const BuildOptions *o)
{
    char *home = cuda_home();
    if (!home) {
        fprintf(stderr, "hmmc: error: --target=cuda needs nvcc on PATH (or CUDA_HOME); use "
                        "--target=c to build for the CPU\n");
        return -1;
    }
    char *include = xasprintf("-I%s/runtime", o->root);
    char *lib = xasprintf("%s/" HMMC_BUILD_DIR "/libhmmrt.a", o->root);
    char *gpu_lib = xasprintf("%s/" HMMC_BUILD_DIR "/libhmmrt_gpu.a", o->root);
    char *c_obj = xasprintf("%s/program.o", dir), *cu_obj = xasprintf("%s/kernels.o", dir);
    char *nvcc = xasprintf("%s/bin/nvcc", home), *cuda_lib = xasprintf("-L%s/lib64", home);
    char *ptxas_log = xasprintf("%s/ptxas.log", dir);
    Command c = {.argc = 0};
    int result = -1;
    if (access(gpu_lib, R_OK) != 0) {
        fprintf(stderr, "hmmc: error: the GPU runtime %s is missing: run make in %s (with nvcc "
                        "on PATH)\n", gpu_lib, o->root);
        goto done;
    }
    command_start_cc(&c);
    command_add(&c, include);
    command_add(&c, "-c");
    command_add(&c, c_source);
    command_add(&c, "-o");
    command_add(&c, c_obj);
    int status = run_command(c.argv, o->verbose);
    if (status != 0) {
        build_failed(o, c.argv[0], status);
        goto done;
    }
    command_free(&c);
    /* sm_90 machine code for Hopper, and PTX that newer GPUs compile at load;
     * ptxas's level by what the kernels are (cuda_ptxas_level) */
    const char *why_level = NULL;
    int level = cuda_ptxas_level(p, plans->gpu, &why_level);
    if (o->verbose)
        fprintf(stderr, "hmmc: %s\n", why_level);
    char *compile_cu[] = {nvcc, "-O3", "-std=c++14", "-gencode", "arch=compute_90,code=sm_90",
                          "-gencode", "arch=compute_90,code=compute_90", include, "-c",
                          (char *)cu_source, "-o", cu_obj,
                          level == 1 ? "-Xptxas=-O1" : "-Xptxas=-O3",
                          o->verbose ? "-Xptxas=-v" : NULL, NULL};
    /* -v: ptxas's report (registers, shared memory) is echoed and read for
     * the plan of every kernel */
    status = run_command_to(compile_cu, o->verbose, o->verbose ? ptxas_log : NULL);
    if (o->verbose) {
        char *log = slurp(ptxas_log);
        if (log) {
            fputs(log, stderr);
            if (status == 0)
                cuda_report_plan(p, plans->layout, plans->gpu, log, stderr);
        }
        free(log);
        unlink(ptxas_log);
    }
    if (status != 0) {
        build_failed(o, "nvcc", status);
        goto done;
    }
    command_start_cc(&c);
    const char *link[] = {c_obj, cu_obj, gpu_lib, lib, cuda_lib, "-lcudart_static", "-lstdc++",
                          "-ldl", "-lrt", "-lpthread", "-lz", "-lm", "-o", program, NULL};
    for (size_t i = 0; i < sizeof link / sizeof link[0] && link[i]; i++)
        command_add(&c, link[i]);
    status = run_command(c.argv, o->verbose);
    if (status != 0) {
        build_failed(o, c.argv[0], status);
        goto done;
    }
    result = 0;
done:
    command_free(&c);
    if (!o->emit_dir) {
        if (c_obj)
            unlink(c_obj);
        if (cu_obj)
            unlink(cu_obj);
    }
    free(include), free(lib), free(gpu_lib), free(c_obj), free(cu_obj), free(nvcc);
    free(cuda_lib), free(ptxas_log), free(home);
    return result;
}

static int build_c(const Program *p, const char *source, const char *program,
                   const BuildOptions *o)
{
    char *include = xasprintf("-I%s/runtime", o->root);
    char *library = xasprintf("%s/" HMMC_BUILD_DIR "/libhmmrt.a", o->root);
    if (access(library, R_OK) != 0) {
        fprintf(stderr, "hmmc: error: the runtime library %s is missing: run make in %s, or set "
                        "HMMC_ROOT to the hmmc folder\n", library, o->root);
        free(include);
        free(library);
        return -1;
    }
    Command c = {.argc = 0};
    command_start_cc(&c);
    /* -ldl: OpenBLAS for dense models is loaded at run time (openblas_dl.c) */
    const char *args[] = {include, source, library, "-lz", "-ldl", "-lm", "-o", program, NULL};
    for (size_t i = 0; i < sizeof args / sizeof args[0] && args[i]; i++)
        command_add(&c, args[i]);
    int status = run_command(c.argv, o->verbose);
    free(include);
    free(library);
    if (status != 0)
        build_failed(o, c.argv[0], status);
    command_free(&c);
    return status != 0 ? -1 : 0;
}

/* Writes one generated source; 0 or -1 with a message. */
static int write_source(const char *path, const Program *p, const Plans *plans,
                        const char *name, int cuda_part, const char *data_prefix)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "hmmc: error: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    /* written into memory first, then to the file with long tables wrapped */
    char *text = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&text, &size);
    if (!m)
        fatal_out_of_memory();
    int written = cuda_part ? backend_cuda_write(p, plans, m, name)
                            : backend_c_write(p, plans, m, name, data_prefix);
    if (fclose(m) != 0 || written != 0)
        fatal_out_of_memory(); /* a stream in memory fails only for want of it */
    written = emit_wrap(f, text, size);
    free(text);
    if (fclose(f) != 0 || written != 0) {
        fprintf(stderr, "hmmc: error: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The temporary program beside output: ".NAME.hmmc-PID" in its folder
 * (NAME cut to fit a file name), malloc'd. */
static char *temporary_program(const char *output)
{
    const char *base = base_name(output);
    int folder = (int)(base - output), keep = (int)strlen(base);
    if (keep > 200)
        keep = 200;
    return xasprintf("%.*s.%.*s.hmmc-%ld", folder, output, keep, base, (long)getpid());
}

int build_program(const Program *p, const Plans *plans, const BuildOptions *o)
{
    /* the temporary folder: in $TMPDIR (where the C compiler puts its own), else /tmp */
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir || strlen(tmpdir) > PATH_MAX - 32)
        tmpdir = "/tmp";
    char temp[PATH_MAX];
    snprintf(temp, sizeof temp, "%s/hmmc-XXXXXX", tmpdir);
    const char *dir = o->emit_dir;
    if (dir) {
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "hmmc: error: cannot create %s: %s\n", dir, strerror(errno));
            return -1;
        }
    } else {
        sigset_t old;
        block_signals(&old);
        dir = mkdtemp(temp);
        if (dir)
            snprintf(cleanup_dir, sizeof cleanup_dir, "%s", dir);
        restore_signals(&old);
        if (!dir) {
            fprintf(stderr, "hmmc: error: cannot create a temporary folder in %s: %s (set "
                            "TMPDIR to a folder you can write)\n", tmpdir, strerror(errno));
            return -1;
        }
    }
    int cuda = strcmp(o->target, "cuda") == 0;
    char *absolute = realpath(dir, NULL);
    if (!absolute) {
        if (errno == ENOMEM)
            fatal_out_of_memory();
        fprintf(stderr, "hmmc: error: cannot find the folder %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char *name = program_name(o->output), *program = temporary_program(o->output);
    char *source = xasprintf("%s/%s.c", dir, name), *cu_source = xasprintf("%s/%s.cu", dir, name);
    char *prefix = xasprintf("%s/%s", absolute, name);
    set_cleanup(cleanup_output, program);
    int profiles = c_profile_needs_data(p, plans);
    int result = -1, data = dense_needs_data(p) || profiles;
    if (data && strpbrk(prefix, "\"\\\n")) {
        fprintf(stderr, "hmmc: error: the folder %s holds a quote, backslash or newline in its "
                        "path, which the assembler cannot read: choose another (--emit-dir)\n",
                absolute);
    } else if ((!data || dense_write_data(p, prefix) == 0) &&
               (!profiles || c_profile_write_data(p, plans, prefix) == 0) &&
               write_source(source, p, plans, name, 0, prefix) == 0 &&
               (!cuda || write_source(cu_source, p, plans, name, 1, prefix) == 0)) {
        result = cuda ? build_cuda(p, plans, source, cu_source, dir, program, o)
                      : build_c(p, source, program, o);
    }
    if (result == 0 && rename(program, o->output) != 0) {
        fprintf(stderr, "hmmc: error: cannot put the program in place as %s (from %s): %s\n",
                o->output, program, strerror(errno));
        result = -1;
    }
    if (result != 0)
        unlink(program);
    set_cleanup(cleanup_output, NULL);
    if (!o->emit_dir) {
        unlink(source);
        if (cuda)
            unlink(cu_source);
        if (data)
            dense_remove_data(p, prefix);
        if (profiles)
            c_profile_remove_data(p, prefix);
        remove_folder_now(dir);
        set_cleanup(cleanup_dir, NULL);
    }
    free(program);
    free(source);
    free(cu_source);
    free(prefix);
    free(absolute);
    free(name);
    return result;
}
