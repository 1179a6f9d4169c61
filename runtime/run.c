/* run.c: hmmrt_main, the life of a generated program: the command line, then
 * --help, --version, --sample or the scoring run. */
#include "internal.h"

#include "hmmrt_mpi.h"
#include "input.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <string.h>

/* --help and --version go through stdout: checked like the table. */
static int finish_stdout(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    hmmrt_error("cannot write the output: %s", strerror(errno ? errno : EIO));
    return HMMRT_EXIT_OUTPUT;
}

static int sample(const hmmrt_program *prog, const hmmrt_options *o)
{
    static char block[1 << 20]; /* static: stdout uses it until the exit */
    setvbuf(stdout, block, _IOFBF, sizeof block);
    return hmmrt_sample(prog, o->model, o->sample, o->length, o->seed, o->with_path, stdout);
}

static int dispatch(const hmmrt_program *prog, const hmmrt_options *o)
{
    if (o->help) {
        hmmrt_print_help(stdout, prog);
        return finish_stdout();
    }
    if (o->version) {
        hmmrt_print_version(stdout, prog);
        return finish_stdout();
    }
    if (prog->real_dim > 0 && o->make_db && !o->train) {
        hmmrt_error("--make-db over real observations (alphabet real[%d]) is not implemented "
                    "yet", prog->real_dim);
        return HMMRT_EXIT_USAGE;
    }
    if (o->sample)
        return sample(prog, o);
    if (o->train)
        return hmmrt_train(prog, o);
    if (prog->real_dim > 0)
        return hmmrt_score_real_files(prog, o);
    if (o->make_db)
        return hmmrt_make_db(prog, o);
    return hmmrt_score_files(prog, o);
}

int hmmrt_main(int argc, char **argv, const hmmrt_program *prog)
{
    /* A closed pipe must show as a failed write (EPIPE), not kill us silently. */
    signal(SIGPIPE, SIG_IGN);
    /* ... nor a file size limit (ulimit -f): a failed write (EFBIG), reported */
    signal(SIGXFSZ, SIG_IGN);
    /* Every batch allocates and frees millions of records: keep freed memory
     * for the next batch rather than giving it back to the system and taking
     * page faults to get it again. */
#ifdef M_TRIM_THRESHOLD /* glibc */
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    mallopt(M_TOP_PAD, 64 << 20);
    /* The reader's stores (a few MB each) come from the heap too, not from
     * fresh zeroed pages of their own (setting the above fixes this limit
     * at 128 KB otherwise); 32 MB is the largest glibc takes. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
#endif
    hmmrt_set_progname(argc > 0 ? argv[0] : NULL, prog->name);
    hmmrt_db_expect(prog); /* the reader takes databases made for these alphabets */
    hmmrt_options o;
    int status = hmmrt_parse_options(argc, argv, prog, &o);
    if (status == 0 && o.output && !hmmrt_mpi_launched())
        status = hmmrt_output_to(o.output); /* under mpirun, rank 0's (mpi_run.c) */
    if (status == 0) /* under mpirun: ranks share the input out (mpi_run.c) */
        status = hmmrt_mpi_launched() ? hmmrt_mpi_main(prog, &o, dispatch) : dispatch(prog, &o);
    hmmrt_free_options(&o);
    return status;
}
