/* main.c: the hmmc command: parses the options (usage()), checks -o and
 * --emit-dir before anything is read (check_output), then runs the steps:
 * the front end (pipeline.c), or --import-hmmer (import/); the target's
 * layout and plans (pipeline.c) and the build (build.c: generate and compile). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/arena.h"
#include "codegen/backend.h"
#include "codegen/c/backend_c_rows.h"
#include "support/diag.h"
#include "import/hmmer_header.h"
#include "import/import_hmmer.h"
#include "driver/build.h"
#include "driver/pipeline.h"
#include "support/source.h"

enum { EXIT_OK = 0, EXIT_PROGRAM_ERRORS = 1, EXIT_USAGE = 2, EXIT_BUILD = 3 };

typedef struct Options {
    const char *input, *output, *target, *emit_dir, *dump_after;
    const char *import_hmmer; /* --import-hmmer FILE: main() imports it, nothing else */
    HmmerMode hmmer_mode;     /* --hmmer-mode */
    int check, verbose, no_fold;
    CShape c_shape;
    ProfileDataMode profile_data; /* --profile-data */
} Options;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hmmc MODEL.hmm -o PROGRAM [options]\n"
            "       hmmc MODEL.hmm --check | --dump-after=PASS\n"
            "       hmmc --import-hmmer HMMERFILE > MODEL.hmm\n"
            "\n"
            "Compiles a .hmm model and its main block into PROGRAM, which scores FASTA\n"
            "sequences: PROGRAM [options] SEQFILE...  (PROGRAM --help says more).\n"
            "\n"
            "options:\n"
            "  -o PROGRAM          the program to build\n"
            "  --target=cuda       CUDA kernels, with the C path as fallback (the default\n"
            "                      when nvcc is on PATH and the GPU runtime is built)\n"
            "  --target=c          C only (double precision, OpenMP threads)\n"
            "  --emit-dir DIR      keep the generated sources in DIR\n"
            "  --check             check the model and main, build nothing\n"
            "  --dump-after=PASS   print the IR after PASS and stop; PASS is ");
    pipeline_list_stages(out);
    fprintf(out,
            "\n"
            "  --no-fold           keep every silent state (no folding)\n"
            "  --c-shape=SHAPE     the C code of every call: straight (a statement per move),\n"
            "                      table (moves in tables, for large models) or auto (the\n"
            "                      default: by size; -v says which and why)\n"
            "  --profile-data=MODE profiles as data for libhmmrt's generic profile scorer\n"
            "                      (and libhmmrt_gpu's generic kernel with --target=cuda)\n"
            "                      instead of code specialised to each: auto\n"
            "                      (the default: in a program of two profiles or more, as\n"
            "                      --import-hmmer writes a file of many models), on, off;\n"
            "                      -v says which path each call takes\n"
            "  --import-hmmer FILE print a .hmm program for the profile HMM in FILE, and stop\n"
            "                      (with -v: the header lines it keeps): a HMMER3/a to 3/f\n"
            "                      file scores as hmmsearch does (local, multihit, its length\n"
            "                      model and null model; hmmsearch --max --nonull2's scores),\n"
            "                      a HMMER2.0 file as hmm2search --null2\n"
            "  --hmmer-mode=MODE   with --import-hmmer: local (HMMER3 files' default),\n"
            "                      unilocal (HMMER3's local mode of one domain a sequence),\n"
            "                      uniglocal (its glocal mode of one domain: hmmsim --s's)\n"
            "                      or glocal (a HMMER3 file converted as hmmconvert -2 does\n"
            "                      and scored as hmm2search --null2: HMMER2 files' only mode)\n"
            "  -v, --verbose       say what each pass decided and how the program is built\n"
            "  --help, --version\n"
            "\n"
            "exit status: 0 built (or checked), 1 errors in the model file, 2 bad command\n"
            "line (also an -o that names a folder, a file in a missing or read-only folder,\n"
            "a device, or a file hmmc reads), 3 the build failed (or hmmc ran out of\n"
            "memory), 128+N stopped by signal N\n"
            "(SIGINT, SIGTERM, SIGHUP: the C compiler is stopped and nothing is left behind).\n"
            "environment: CC (the C compiler, default cc), HMMC_ROOT (the hmmc folder, where\n"
            "runtime/ and build/libhmmrt.a are; default: the folder above this hmmc's bin/),\n"
            "TMPDIR (where the build's temporary folder goes; default /tmp).\n");
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "hmmc: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(hmmc --help lists the options)\n");
    return EXIT_USAGE;
}

/* Reads "--name=value" or "--name value"; returns the value or NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] == 0 && *i + 1 < argc)
        return argv[++*i];
    return NULL;
}

/* --hmmer-mode=V; 0 for an unknown mode. */
static int hmmer_mode(const char *v, Options *o)
{
    if (strcmp(v, "local") == 0)
        o->hmmer_mode = HMMER_MODE_LOCAL;
    else if (strcmp(v, "glocal") == 0)
        o->hmmer_mode = HMMER_MODE_GLOCAL;
    else if (strcmp(v, "unilocal") == 0)
        o->hmmer_mode = HMMER_MODE_UNILOCAL;
    else if (strcmp(v, "uniglocal") == 0)
        o->hmmer_mode = HMMER_MODE_UNIGLOCAL;
    else
        return 0;
    return 1;
}

static int parse_options(int argc, char **argv, Options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(EXIT_OK);
        } else if (strcmp(a, "--version") == 0) {
            printf("hmmc %s\n", HMMC_VERSION);
            exit(EXIT_OK);
        } else if (strcmp(a, "-o") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == 0)
                return usage_error("%s needs a program name", a);
            o->output = argv[++i];
        } else if ((v = option_value(argc, argv, &i, "--target"))) {
            o->target = v;
        } else if ((v = option_value(argc, argv, &i, "--emit-dir"))) {
            o->emit_dir = v;
        } else if ((v = option_value(argc, argv, &i, "--hmmer-mode"))) {
            if (!hmmer_mode(v, o))
                return usage_error("unknown HMMER mode '%s': use --hmmer-mode=local, unilocal, "
                                   "uniglocal or glocal", v);
        } else if ((v = option_value(argc, argv, &i, "--import-hmmer"))) {
            o->import_hmmer = v; /* of the options after it only -v and --hmmer-mode are
                                    read; no check below */
            for (int j = i + 1; j < argc; j++)
                if (strcmp(argv[j], "-v") == 0 || strcmp(argv[j], "--verbose") == 0)
                    o->verbose = 1;
                else if ((v = option_value(argc, argv, &j, "--hmmer-mode")) && !hmmer_mode(v, o))
                    return usage_error("unknown HMMER mode '%s': use --hmmer-mode=local, "
                                       "unilocal, uniglocal or glocal", v);
            return EXIT_OK;
        } else if (strcmp(a, "--import-hmmer") == 0) {
            return usage_error("%s needs a file: hmmc --import-hmmer HMMERFILE > MODEL.hmm", a);
        } else if ((v = option_value(argc, argv, &i, "--dump-after"))) {
            o->dump_after = v;
        } else if (strcmp(a, "--check") == 0) {
            o->check = 1;
        } else if (strcmp(a, "--no-fold") == 0) {
            o->no_fold = 1;
        } else if ((v = option_value(argc, argv, &i, "--c-shape"))) {
            if (strcmp(v, "auto") == 0)
                o->c_shape = C_SHAPE_AUTO;
            else if (strcmp(v, "straight") == 0)
                o->c_shape = C_SHAPE_STRAIGHT;
            else if (strcmp(v, "table") == 0)
                o->c_shape = C_SHAPE_TABLE;
            else
                return usage_error("unknown C shape '%s': use --c-shape=auto, straight or table", v);
        } else if ((v = option_value(argc, argv, &i, "--profile-data"))) {
            if (strcmp(v, "auto") == 0)
                o->profile_data = PROFILE_DATA_AUTO;
            else if (strcmp(v, "on") == 0)
                o->profile_data = PROFILE_DATA_ON;
            else if (strcmp(v, "off") == 0)
                o->profile_data = PROFILE_DATA_OFF;
            else
                return usage_error("unknown mode '%s': use --profile-data=auto, on or off", v);
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            o->verbose = 1;
        } else if (a[0] == '-' && a[1] != 0) {
            return usage_error("unknown option '%s'", a);
        } else if (o->input) {
            return usage_error("one model file at a time; '%s' is a second", a);
        } else {
            o->input = a;
        }
    }
    if (!o->input)
        return usage_error("%sno model file given", "");
    if (o->target && strcmp(o->target, "c") != 0 && strcmp(o->target, "cuda") != 0)
        return usage_error("unknown target '%s': use --target=cuda or --target=c", o->target);
    if (o->dump_after && !pipeline_knows_stage(o->dump_after))
        return usage_error("unknown pass '%s' for --dump-after (hmmc --help lists them)",
                           o->dump_after);
    if (!o->output && !o->check && !o->dump_after)
        return usage_error("%sno output given: add -o PROGRAM (or --check to only check)", "");
    return EXIT_OK;
}

/* The hmmc folder: $HMMC_ROOT, else the folder above the one holding this program. */
static char *find_root(void)
{
    const char *env = getenv("HMMC_ROOT");
    if (env && *env)
        return xstrdup(env);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return xstrdup(".");
    exe[n] = 0;
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
    }
    return xstrdup(exe[0] ? exe : "/");
}

/* Whether path is the file st (the same device and inode). */
static int same_file(const char *path, const struct stat *st)
{
    struct stat other;
    return stat(path, &other) == 0 && other.st_dev == st->st_dev && other.st_ino == st->st_ino;
}

/* The file among those hmmc reads to build that out (stat'ed) is, or NULL:
 * the model, the runtime libraries and headers, hmmc itself. */
static char *read_file_that_is(const struct stat *out, const Options *o, const char *root)
{
    if (same_file(o->input, out))
        return xstrdup(o->input);
    if (same_file("/proc/self/exe", out))
        return xstrdup("hmmc itself");
    char *path = NULL;
    const char *libraries[] = {"libhmmrt.a", "libhmmrt_gpu.a"};
    for (int i = 0; i < 2; i++) {
        path = xasprintf("%s/" HMMC_BUILD_DIR "/%s", root, libraries[i]);
        if (same_file(path, out))
            return path;
        free(path);
    }
    path = xasprintf("%s/runtime", root);
    DIR *runtime = opendir(path);
    free(path);
    for (struct dirent *e; runtime && (e = readdir(runtime));) {
        path = xasprintf("%s/runtime/%s", root, e->d_name);
        if (e->d_name[0] != '.' && same_file(path, out)) {
            closedir(runtime);
            return path;
        }
        free(path);
    }
    if (runtime)
        closedir(runtime);
    return NULL;
}

/* A program name for the examples of messages: the model's, less .hmm. */
static char *example_name(const char *input)
{
    const char *slash = strrchr(input, '/');
    char *name = xstrdup(slash ? slash + 1 : input);
    char *dot = strrchr(name, '.');
    if (dot && dot != name)
        *dot = 0;
    return name;
}

/* Checks, before anything is built, that -o names a file hmmc can write
 * and may replace; EXIT_USAGE with a message if not. */
static int check_output(const Options *o, const char *root)
{
    const char *out = o->output;
    char *name = example_name(o->input);
    int status = EXIT_USAGE;
    char *folder = xstrdup(out), *slash = strrchr(folder, '/');
    if (slash)
        slash[slash == folder] = 0; /* "/x" -> "/" */
    else
        strcpy(folder, ".");
    struct stat st, dir;
    if (stat(out, &st) == 0) {
        char *read = NULL;
        if (S_ISDIR(st.st_mode)) {
            fprintf(stderr, "hmmc: error: -o %s is a folder: name the program's file in it, e.g. "
                            "-o %s%s%s\n", out, out, out[strlen(out) - 1] == '/' ? "" : "/", name);
            goto done;
        }
        if (!S_ISREG(st.st_mode)) {
            fprintf(stderr, "hmmc: error: -o %s is not a regular file (a device, pipe or socket), "
                            "which hmmc would replace: name a file for the program, e.g. -o %s\n",
                    out, name);
            goto done;
        }
        if ((read = read_file_that_is(&st, o, root))) {
            if (strcmp(read, o->input) == 0)
                fprintf(stderr, "hmmc: error: -o %s is the model file itself: the program would "
                                "replace it; name another file, e.g. -o %s\n", out, name);
            else if (strcmp(read, "hmmc itself") == 0)
                fprintf(stderr, "hmmc: error: -o %s is hmmc itself: name another file for the "
                                "program, e.g. -o %s\n", out, name);
            else if (strcmp(read, out) == 0)
                fprintf(stderr, "hmmc: error: -o %s is a file that hmmc reads to build the "
                                "program: name another file, e.g. -o %s\n", out, name);
            else
                fprintf(stderr, "hmmc: error: -o %s is %s, which hmmc reads to build the "
                                "program: name another file, e.g. -o %s\n", out, read, name);
            free(read);
            goto done;
        }
    }
    if (stat(folder, &dir) != 0) {
        if (errno == ENOENT)
            fprintf(stderr, "hmmc: error: -o %s: the folder %s does not exist: create it "
                            "(mkdir -p %s) or name a file in a folder that exists\n",
                    out, folder, folder);
        else
            fprintf(stderr, "hmmc: error: -o %s: cannot reach the folder %s: %s\n", out, folder,
                    strerror(errno));
        goto done;
    }
    if (!S_ISDIR(dir.st_mode)) {
        fprintf(stderr, "hmmc: error: -o %s: %s is not a folder: name a file in a folder\n", out,
                folder);
        goto done;
    }
    if (access(folder, W_OK | X_OK) != 0) {
        fprintf(stderr, "hmmc: error: -o %s: cannot write in the folder %s (%s): name a file in a "
                        "folder you can write\n", out, folder, strerror(errno));
        goto done;
    }
    /* the generated sources in --emit-dir are read by the C compiler */
    struct stat emit;
    if (o->emit_dir && stat(o->emit_dir, &emit) == 0 && S_ISDIR(emit.st_mode) &&
        emit.st_dev == dir.st_dev && emit.st_ino == dir.st_ino) {
        const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
        char *program = example_name(base);
        size_t n = program ? strlen(program) : 0;
        int clash = program && (strcmp(base, "program.o") == 0 || strcmp(base, "kernels.o") == 0 ||
                                strcmp(base, "ptxas.log") == 0 ||
                                (strncmp(base, program, n) == 0 &&
                                 (strcmp(base + n, ".c") == 0 || strcmp(base + n, ".cu") == 0)));
        free(program);
        if (clash) {
            fprintf(stderr, "hmmc: error: -o %s is a file that hmmc writes in --emit-dir %s and "
                            "the C compiler reads: name the program another file, e.g. -o %s/%s\n",
                    out, o->emit_dir, o->emit_dir, name);
            goto done;
        }
    }
    status = EXIT_OK;
done:
    free(name);
    free(folder);
    return status;
}

/* --emit-dir must be a folder, or a new one in a folder that exists. */
static int check_emit_dir(const char *emit_dir)
{
    struct stat st;
    if (stat(emit_dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return EXIT_OK;
        fprintf(stderr, "hmmc: error: --emit-dir %s is not a folder: name a folder to keep the "
                        "generated sources in (hmmc creates it)\n", emit_dir);
        return EXIT_USAGE;
    }
    char *folder = xstrdup(emit_dir), *slash = strrchr(folder, '/');
    while (slash && slash > folder && slash[1] == 0) { /* "d/" */
        *slash = 0;
        slash = strrchr(folder, '/');
    }
    if (slash)
        slash[slash == folder] = 0;
    else
        strcpy(folder, ".");
    int status = EXIT_OK;
    if (stat(folder, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "hmmc: error: --emit-dir %s: the folder %s does not exist: create it "
                        "(mkdir -p %s) or name a folder in one that exists\n",
                emit_dir, folder, folder);
        status = EXIT_USAGE;
    }
    free(folder);
    return status;
}

/* cuda when nvcc is found and the GPU runtime was built, else c. */
static const char *default_target(const char *root)
{
    char *home = cuda_home(), *gpu_lib = NULL;
    if (home)
        gpu_lib = xasprintf("%s/" HMMC_BUILD_DIR "/libhmmrt_gpu.a", root);
    int ok = home && access(gpu_lib, R_OK) == 0;
    free(home);
    free(gpu_lib);
    return ok ? "cuda" : "c";
}

static int compile(const Options *o)
{
    size_t len;
    char *src = source_load(o->input, &len); /* mapped: stream.c gives back its pages */
    if (!src)
        return EXIT_PROGRAM_ERRORS;
    Arena arena;
    arena_init(&arena);
    Diag diag;
    diag_init(&diag, o->input, src, len, stderr);
    int status = EXIT_PROGRAM_ERRORS;
    const char *hmmer = hmmer_file_format(src, len); /* a HMMER file: one error, not 15 */
    if (hmmer) {
        size_t n = strlen(hmmer);
        diag_error(&diag, (Loc){1, 1, 1, (int)n}, "this is a %s profile HMM file, not a .hmm "
                   "model: import it first with `hmmc --import-hmmer %s > MODEL.hmm`", hmmer,
                   o->input);
        goto done;
    }
    if (o->verbose) { /* an import's HMMER header lines (docs/hmmer.md) */
        HmmerMeta meta = {0};
        int lines = hmmer_meta_read(src, len, &meta);
        if (lines > 0)
            hmmer_meta_write(stderr, "hmmc: hmmer:", &meta);
        else if (lines < 0)
            fprintf(stderr, "hmmc: note: %s:%d: this `// hmmer:` line's value cannot be read "
                    "(as --import-hmmer writes it: docs/hmmer.md)\n", o->input, -lines);
        hmmer_meta_free(&meta);
    }

    PipelineOptions po = {.dump_after = o->dump_after, .dump = stdout,
                          .verbose = o->verbose ? stderr : NULL, .no_fold = o->no_fold,
                          .c_shape = o->c_shape, .profile_data = o->profile_data};
    Program *p;
    PipelineResult result = pipeline_run(&arena, &diag, o->input, src, len, &po, &p);
    if (result != PIPELINE_PLANNED) {
        status = result == PIPELINE_DUMPED ? EXIT_OK : EXIT_PROGRAM_ERRORS;
        goto done;
    }
    if (!c_rows_check(p, &diag)) /* `// hmmc: rows per model`: main's prints per model */
        goto done;
    if (o->check && !o->dump_after) {
        status = EXIT_OK;
        goto done;
    }
    /* --dump-after=plan without --target dumps the plans of both sides (a
     * CUDA program's), whatever this machine's default target is */
    char *root = find_root();
    const char *target = o->target ? o->target : o->dump_after ? "cuda" : default_target(root);
    if (o->verbose && !o->dump_after)
        fprintf(stderr, "hmmc: target %s\n", target);
    po.gpu = strcmp(target, "cuda") == 0;
    Plans plans;
    result = pipeline_plan_target(p, &po, &plans);
    if (result == PIPELINE_PLANNED) {
        BuildOptions b = {target, o->output, o->emit_dir, root, o->verbose};
        status = build_program(p, &plans, &b) == 0 ? EXIT_OK : EXIT_BUILD;
    } else {
        status = EXIT_OK; /* dumped */
    }
    free(root);
done:
    arena_free(&arena);
    source_free(src, len);
    return status;
}

int main(int argc, char **argv)
{
    Options o = {0};
    int status = parse_options(argc, argv, &o);
    if (status != EXIT_OK)
        return status;
    if (o.import_hmmer)
        return import_hmmer(o.import_hmmer, stdout, o.hmmer_mode, o.verbose ? stderr : NULL);
    if (!o.check && !o.dump_after) {
        char *root = find_root();
        status = o.emit_dir ? check_emit_dir(o.emit_dir) : EXIT_OK;
        if (status == EXIT_OK)
            status = check_output(&o, root);
        free(root);
        if (status != EXIT_OK)
            return status;
    }
    build_catch_signals();
    return compile(&o);
}
