/* mpi_dl.c: Open MPI, loaded at run time (dlopen of libmpi.so.40) when mpirun
 * started the program (OMPI_COMM_WORLD_SIZE in its environment): a program
 * builds and runs where MPI is not installed, and the same file runs under
 * mpirun where it is. Only the few calls the runtime makes, with Open MPI's
 * handles (its ABI: MPI_COMM_WORLD is &ompi_mpi_comm_world, and so on). */
#include "hmmrt_mpi.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *mpi_handle; /* MPI_Comm, MPI_Datatype, MPI_Op: pointers in Open MPI */

static int (*init_thread)(int *, char ***, int, int *);
static int (*comm_rank)(mpi_handle, int *);
static int (*comm_size)(mpi_handle, int *);
static int (*send_fn)(const void *, int, mpi_handle, int, int, mpi_handle);
static int (*recv_fn)(void *, int, mpi_handle, int, int, mpi_handle, void *);
static int (*bcast_fn)(void *, int, mpi_handle, int, mpi_handle);
static int (*allreduce_fn)(const void *, void *, int, mpi_handle, mpi_handle, mpi_handle);
static int (*finalize_fn)(void);
static mpi_handle world, byte_type, int_type, long_long_type, op_max, op_sum;

static int started, rank, size = 1;

enum { MPI_THREAD_FUNNELED_OMPI = 1, CHUNK = 1 << 30 };

int hmmrt_mpi_launched(void)
{
    const char *n = getenv("OMPI_COMM_WORLD_SIZE");
    return n && *n;
}

static void *symbol(void *lib, const char *name, int *missing)
{
    void *p = dlsym(lib, name);
    *missing |= p == NULL;
    return p;
}

int hmmrt_mpi_start(char *why, size_t whylen)
{
    /* HMMRT_LIBMPI: another library file (one outside the linker's path) */
    const char *asked = getenv("HMMRT_LIBMPI");
    const char *name = asked && *asked ? asked : "libmpi.so.40";
    /* RTLD_GLOBAL: Open MPI's own components (dlopen'd by libmpi) link against it */
    void *lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        snprintf(why, whylen, "mpirun started this program (OMPI_COMM_WORLD_SIZE=%s), but "
                 "Open MPI's library cannot be loaded: %s; install Open MPI (Debian: apt-get "
                 "install openmpi-bin) on every node, or run the program without mpirun",
                 getenv("OMPI_COMM_WORLD_SIZE"), dlerror());
        return -1;
    }
    int missing = 0;
    init_thread = (int (*)(int *, char ***, int, int *))symbol(lib, "MPI_Init_thread", &missing);
    comm_rank = (int (*)(mpi_handle, int *))symbol(lib, "MPI_Comm_rank", &missing);
    comm_size = (int (*)(mpi_handle, int *))symbol(lib, "MPI_Comm_size", &missing);
    send_fn = (int (*)(const void *, int, mpi_handle, int, int, mpi_handle))symbol(
        lib, "MPI_Send", &missing);
    recv_fn = (int (*)(void *, int, mpi_handle, int, int, mpi_handle, void *))symbol(
        lib, "MPI_Recv", &missing);
    bcast_fn = (int (*)(void *, int, mpi_handle, int, mpi_handle))symbol(lib, "MPI_Bcast",
                                                                           &missing);
    allreduce_fn = (int (*)(const void *, void *, int, mpi_handle, mpi_handle, mpi_handle))
        symbol(lib, "MPI_Allreduce", &missing);
    finalize_fn = (int (*)(void))symbol(lib, "MPI_Finalize", &missing);
    world = symbol(lib, "ompi_mpi_comm_world", &missing);
    byte_type = symbol(lib, "ompi_mpi_byte", &missing);
    int_type = symbol(lib, "ompi_mpi_int", &missing);
    op_max = symbol(lib, "ompi_mpi_op_max", &missing);
    long_long_type = symbol(lib, "ompi_mpi_long_long_int", &missing);
    op_sum = symbol(lib, "ompi_mpi_op_sum", &missing);
    if (missing) {
        snprintf(why, whylen, "%s is not Open MPI's library (it lacks MPI_Init_thread or "
                 "ompi_mpi_comm_world): the program runs under Open MPI's mpirun only", name);
        return -1;
    }
    int provided = 0; /* MPI is called from the main thread only */
    if (init_thread(NULL, NULL, MPI_THREAD_FUNNELED_OMPI, &provided) != 0 ||
        comm_rank(world, &rank) != 0 || comm_size(world, &size) != 0) {
        snprintf(why, whylen, "MPI_Init_thread failed");
        return -1;
    }
    started = 1;
    return 0;
}

int hmmrt_mpi_rank(void)
{
    return rank;
}

int hmmrt_mpi_size(void)
{
    return size;
}

int hmmrt_mpi_active(void)
{
    return started && size > 1;
}

/* Messages of more than 2^31 - 1 bytes go in pieces of 1 GB. */
int hmmrt_mpi_send(const void *data, size_t n, int to, int tag)
{
    const char *p = data;
    do {
        int piece = n > CHUNK ? CHUNK : (int)n;
        if (send_fn(p, piece, byte_type, to, tag, world) != 0)
            return -1;
        p += piece;
        n -= (size_t)piece;
    } while (n > 0);
    return 0;
}

int hmmrt_mpi_recv(void *data, size_t n, int from, int tag)
{
    char *p = data;
    do {
        int piece = n > CHUNK ? CHUNK : (int)n;
        if (recv_fn(p, piece, byte_type, from, tag, world, NULL) != 0) /* MPI_STATUS_IGNORE */
            return -1;
        p += piece;
        n -= (size_t)piece;
    } while (n > 0);
    return 0;
}

int hmmrt_mpi_bcast(void *data, size_t n, int root)
{
    char *p = data;
    do {
        int piece = n > CHUNK ? CHUNK : (int)n;
        if (bcast_fn(p, piece, byte_type, root, world) != 0)
            return -1;
        p += piece;
        n -= (size_t)piece;
    } while (n > 0);
    return 0;
}

int hmmrt_mpi_max_int(int *value)
{
    int in = *value;
    return allreduce_fn(&in, value, 1, int_type, op_max, world) == 0 ? 0 : -1;
}

int hmmrt_mpi_sum_i64(int64_t *value)
{
    long long in = (long long)*value, out = 0;
    if (allreduce_fn(&in, &out, 1, long_long_type, op_sum, world) != 0)
        return -1;
    *value = (int64_t)out;
    return 0;
}

void hmmrt_mpi_finish(void)
{
    if (started)
        finalize_fn();
    started = 0;
}
