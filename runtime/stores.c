/* stores.c: the stores of parsed FASTA pieces, kept for the next pieces
 * when their records are done with rather than freed: a fresh store is new
 * memory, a page fault every 4 KB of it, and those faults were a tenth of a
 * GPU run's host time. At most KEPT_BYTES are kept, under a lock (a store
 * is taken or given back a few times a block, from any thread). */
#include "internal.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>

enum { KEPT_STORES = 1024 }; /* a block of 16 threads is 64 pieces */
#define KEPT_BYTES ((size_t)512 << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *kept[KEPT_STORES];
static size_t kept_cap[KEPT_STORES];
static int n_kept;
static size_t kept_bytes;

void *hmmrt_store_take(size_t need)
{
    void *found = NULL;
    pthread_mutex_lock(&lock);
    for (int k = n_kept - 1; k >= 0 && !found; k--)
        if (kept_cap[k] >= need) {
            found = kept[k];
            kept_bytes -= kept_cap[k];
            kept[k] = kept[--n_kept];
            kept_cap[k] = kept_cap[n_kept];
        }
    pthread_mutex_unlock(&lock);
    return found ? found : malloc(need);
}

void hmmrt_store_give_back(void *store)
{
    if (!store)
        return;
    size_t cap = malloc_usable_size(store);
    pthread_mutex_lock(&lock);
    int keep = n_kept < KEPT_STORES && kept_bytes + cap <= KEPT_BYTES;
    if (keep) {
        kept[n_kept] = store;
        kept_cap[n_kept++] = cap;
        kept_bytes += cap;
    }
    pthread_mutex_unlock(&lock);
    if (!keep)
        free(store);
}

void hmmrt_stores_free_kept(void)
{
    pthread_mutex_lock(&lock);
    for (int k = 0; k < n_kept; k++)
        free(kept[k]);
    n_kept = 0;
    kept_bytes = 0;
    pthread_mutex_unlock(&lock);
}
