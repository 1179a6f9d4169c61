// emulator.cpp: the scheduler behind emulator.h, and the launch that a
// call's launcher (hmmc_launch) makes on the CPU. A block's threads are
// coroutines that run in turn until each has finished or waits at a
// barrier; then every barrier whose threads have all arrived is released,
// and the turns go on. When none can be released, the kernel's
// synchronisation is wrong (or it would hang on a GPU): the run stops.
#include "emulator.h"

#include <algorithm>
#include <string>

#include "hmmrt_gpu.h"
#include "hmmrt_kernel.cuh"

hmmc_dim threadIdx, blockIdx, blockDim, gridDim;

namespace {

const size_t STACK_BYTES = 256 * 1024; // a thread's locals: a profile lane holds a few KB

struct Thread {
    ucontext_t context;
    std::vector<char> stack;
    bool done = false, waiting = false;
    hmmc_barrier_kind kind = HMMC_SHUFFLE;
    unsigned mask = 0;
    uint64_t offer = 0;
    uint64_t *out = nullptr;
};

struct Block {
    std::vector<Thread> threads;
    ucontext_t scheduler;
    unsigned current = 0;
    hmmc_emulated_kernel kernel = nullptr;
    const hmmrt_gpu_batch *batch = nullptr;
};

Block *running;

void thread_main()
{
    running->kernel(*running->batch);
    running->threads[running->current].done = true;
}

const char *kind_name(hmmc_barrier_kind k)
{
    return k == HMMC_SHUFFLE ? "a shuffle" : k == HMMC_VOTE ? "a vote" : "__syncthreads";
}

// Releases the barrier that thread t waits at, if every thread it names has
// arrived at the same one; fails when one of them has exited.
bool try_release(Block &b, unsigned t)
{
    Thread &first = b.threads[t];
    std::vector<unsigned> members;
    if (first.kind == HMMC_SYNCTHREADS) {
        for (unsigned u = 0; u < b.threads.size(); u++) {
            if (b.threads[u].done)
                continue;
            if (!b.threads[u].waiting || b.threads[u].kind != HMMC_SYNCTHREADS)
                return false;
            members.push_back(u);
        }
    } else {
        unsigned warp = t / 32;
        if (!(first.mask >> (t % 32) & 1u)) {
            threadIdx.x = t;
            hmmc_emulation_fails("a warp operation whose mask leaves out the calling lane");
        }
        for (unsigned l = 0; l < 32; l++) {
            if (!(first.mask >> l & 1u))
                continue;
            unsigned u = warp * 32 + l;
            if (u >= b.threads.size() || b.threads[u].done) {
                threadIdx.x = t;
                hmmc_emulation_fails(("lane " + std::to_string(l) + ", named in the mask of " +
                                      kind_name(first.kind) + ", has exited")
                                         .c_str());
            }
            const Thread &o = b.threads[u];
            if (!o.waiting || o.kind != first.kind || o.mask != first.mask)
                return false;
            members.push_back(u);
        }
    }
    uint64_t offers[1024] = {0};
    for (unsigned u : members)
        offers[first.kind == HMMC_SYNCTHREADS ? u : u % 32] = b.threads[u].offer;
    size_t n = first.kind == HMMC_SYNCTHREADS ? b.threads.size() : 32;
    for (unsigned u : members) {
        memcpy(b.threads[u].out, offers, n * sizeof offers[0]);
        b.threads[u].waiting = false;
    }
    return true;
}

void run_block(Block &b)
{
    for (;;) {
        for (unsigned t = 0; t < b.threads.size(); t++) {
            Thread &th = b.threads[t];
            if (th.done || th.waiting)
                continue;
            b.current = t;
            threadIdx = {t, 0, 0};
            swapcontext(&b.scheduler, &th.context);
        }
        bool all_done = true, released = false;
        for (unsigned t = 0; t < b.threads.size(); t++) {
            all_done &= b.threads[t].done;
            if (b.threads[t].waiting && try_release(b, t))
                released = true;
        }
        if (all_done)
            return;
        if (!released) {
            for (unsigned t = 0; t < b.threads.size(); t++)
                if (b.threads[t].waiting)
                    fprintf(stderr, "emulate: thread %u waits at %s (mask %08x)\n", t,
                            kind_name(b.threads[t].kind), b.threads[t].mask);
            threadIdx.x = 0;
            hmmc_emulation_fails("the threads wait at barriers that can never complete");
        }
    }
}

} // namespace

unsigned hmmc_lane_id() { return threadIdx.x % 32; }

void hmmc_emulation_fails(const char *what)
{
    fprintf(stderr, "emulate: block %u, thread %u: %s\n", blockIdx.x, threadIdx.x, what);
    exit(3);
}

void hmmc_emulated_barrier(hmmc_barrier_kind kind, unsigned mask, uint64_t mine, uint64_t *all)
{
    Block &b = *running;
    unsigned t = b.current;
    Thread &th = b.threads[t];
    th.waiting = true;
    th.kind = kind;
    th.mask = mask;
    th.offer = mine;
    th.out = all;
    swapcontext(&th.context, &b.scheduler);
    threadIdx = {t, 0, 0}; // the scheduler set another thread's while this one waited
}

void hmmc_emulate(hmmc_emulated_kernel kernel, const hmmrt_gpu_batch &batch, unsigned grid, unsigned block)
{
    Block b;
    b.kernel = kernel;
    b.batch = &batch;
    b.threads.resize(block);
    for (Thread &th : b.threads)
        th.stack.resize(STACK_BYTES);
    running = &b;
    blockDim = {block, 1, 1};
    gridDim = {grid, 1, 1};
    for (unsigned g = 0; g < grid; g++) {
        blockIdx = {g, 0, 0};
        for (Thread &th : b.threads) {
            th.done = th.waiting = false;
            getcontext(&th.context);
            th.context.uc_stack.ss_sp = th.stack.data();
            th.context.uc_stack.ss_size = th.stack.size();
            th.context.uc_link = &b.scheduler;
            makecontext(&th.context, thread_main, 0);
        }
        run_block(b);
    }
    running = nullptr;
}

// The blocks are smaller than a GPU's (fewer coroutines a block): a warp a
// block for a thread or lanes a sequence (several sequences a warp when a
// sequence takes fewer lanes); a block a sequence takes the states rounded
// up to a warp, at most 256, as the launcher gives at most (the kernel loops
// when a block has fewer threads than states).
int hmmc_emulate_launch(const hmmc_launch_shape &shape, hmmc_kernel kernel, const hmmrt_gpu_batch *b)
{
    unsigned block, grid;
    if (shape.kind == HMMC_LAUNCH_BLOCK) {
        block = std::min((unsigned)(shape.states + 31) / 32 * 32, 256u);
        grid = (unsigned)b->n;
    } else if (shape.kind == HMMC_LAUNCH_LANES) {
        block = 32;
        grid = (unsigned)((b->n + 32 / shape.lanes - 1) / (32 / shape.lanes));
    } else {
        block = 32;
        grid = (unsigned)((b->n + 31) / 32);
    }
    hmmc_emulate(kernel, *b, grid, block);
    return 0;
}
