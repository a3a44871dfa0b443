/*
 * pbs_quicksort.c - the quicksort workload (see pbs_quicksort.h).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "pbs_prng.h"
#include "pbs_quicksort.h"

/* ---- input and verification --------------------------------------------- */

void pbs_qs_fill_random(uint32_t *a, size_t n, uint64_t seed)
{
    pbs_prng g;
    pbs_prng_seed(&g, seed);
    size_t i = 0;
    for (; i + 1 < n; i += 2) {
        uint64_t r = pbs_prng_next(&g);
        a[i] = (uint32_t)r;
        a[i + 1] = (uint32_t)(r >> 32);
    }
    if (i < n)
        a[i] = (uint32_t)pbs_prng_next(&g);
}

uint64_t pbs_qs_multiset_hash(const uint32_t *a, size_t n)
{
    uint64_t h = (uint64_t)n;
    for (size_t i = 0; i < n; i++)
        h += pbs_mix64(a[i]); /* a sum: independent of the order */
    return h;
}

bool pbs_qs_is_sorted(const uint32_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (a[i - 1] > a[i])
            return false;
    return true;
}

/* ---- sequential kernel ---------------------------------------------------- */

static void pbs_qs_insertion(uint32_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t v = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > v) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

static void pbs_qs_sift_down(uint32_t *a, size_t root, size_t n)
{
    uint32_t v = a[root];
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            break;
        if (child + 1 < n && a[child + 1] > a[child])
            child++;
        if (a[child] <= v)
            break;
        a[root] = a[child];
        root = child;
    }
    a[root] = v;
}

static void pbs_qs_heapsort(uint32_t *a, size_t n)
{
    if (n < 2)
        return;
    for (size_t i = n / 2; i-- > 0;)
        pbs_qs_sift_down(a, i, n);
    for (size_t end = n - 1; end > 0; end--) {
        uint32_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        pbs_qs_sift_down(a, 0, end);
    }
}

static inline uint32_t pbs_qs_med3(uint32_t x, uint32_t y, uint32_t z)
{
    if (x < y)
        return y < z ? y : (x < z ? z : x);
    return x < z ? x : (y < z ? z : y);
}

static uint32_t pbs_qs_pivot(const uint32_t *a, size_t n)
{
    if (n >= 1024) { /* Tukey's ninther */
        size_t s = n / 8;
        return pbs_qs_med3(pbs_qs_med3(a[0], a[s], a[2 * s]),
                           pbs_qs_med3(a[3 * s], a[4 * s], a[5 * s]),
                           pbs_qs_med3(a[6 * s], a[7 * s], a[n - 1]));
    }
    return pbs_qs_med3(a[0], a[n / 2], a[n - 1]);
}

/* Branch-free Lomuto partition: moves the elements for which `x < p` (lt) or
 * `x <= p` (le) to the front and returns their number. The swap is unconditional
 * and the index advances by the comparison result, so random data causes no
 * branch mispredictions. Invariant: a[0, i) pass the test, a[i, j) do not. */
static size_t pbs_qs_partition_lt(uint32_t *a, size_t n, uint32_t p)
{
    size_t i = 0;
    for (size_t j = 0; j < n; j++) {
        uint32_t x = a[j];
        a[j] = a[i];
        a[i] = x;
        i += (x < p);
    }
    return i;
}

static size_t pbs_qs_partition_le(uint32_t *a, size_t n, uint32_t p)
{
    size_t i = 0;
    for (size_t j = 0; j < n; j++) {
        uint32_t x = a[j];
        a[j] = a[i];
        a[i] = x;
        i += (x <= p);
    }
    return i;
}

/* Partition around p, which must be an element of a[0..n). */
static size_t pbs_qs_partition_around(uint32_t *a, size_t n, uint32_t p, size_t *hi)
{
    size_t m = pbs_qs_partition_lt(a, n, p); /* m < n: p itself is not < p */
    if (m > 0) {
        *hi = m;
        return m;
    }
    /* p is the minimum. Gather the copies of p at the front: they are in their
     * final place, and there is at least one, so the range shrinks (this is what
     * keeps many equal keys linear instead of quadratic). */
    *hi = pbs_qs_partition_le(a, n, p);
    return 0;
}

size_t pbs_qs_partition(uint32_t *a, size_t n, size_t *hi)
{
    return pbs_qs_partition_around(a, n, pbs_qs_pivot(a, n), hi);
}

static unsigned pbs_qs_depth_budget(size_t n)
{
    unsigned d = 0;
    while (n > 1) {
        n >>= 1;
        d++;
    }
    return 2 * d + 2;
}

static void pbs_qs_introsort(uint32_t *a, size_t n, unsigned depth)
{
    while (n > PBS_QS_INSERTION) {
        if (depth == 0) {
            pbs_qs_heapsort(a, n);
            return;
        }
        depth--;
        size_t hi;
        size_t m = pbs_qs_partition(a, n, &hi);
        /* Recurse into the smaller side, loop on the larger: O(log n) stack. */
        if (m < n - hi) {
            pbs_qs_introsort(a, m, depth);
            a += hi;
            n -= hi;
        } else {
            pbs_qs_introsort(a + hi, n - hi, depth);
            n = m;
        }
    }
    pbs_qs_insertion(a, n);
}

void pbs_qs_sort_seq_budget(uint32_t *a, size_t n, unsigned depth)
{
    pbs_qs_introsort(a, n, depth);
}

void pbs_qs_sort_seq(uint32_t *a, size_t n)
{
    pbs_qs_introsort(a, n, pbs_qs_depth_budget(n));
}

/* ---- parallel sort on a pbs scheduler ------------------------------------- */

#define PBS_QS_SWAP_GRAIN 65536 /* exchanged elements per swap task, at least */
#define PBS_QS_SAMPLES 63       /* pivot of a parallel partition: median of these */

typedef struct pbs_qs_ctx {
    size_t cutoff;   /* ranges at most this long are sorted sequentially */
    size_t par_min;  /* ranges at least this long are partitioned in parallel */
    unsigned chunks; /* chunks per parallel partition (before the size limit) */
} pbs_qs_ctx;

typedef struct pbs_qs_job {
    const pbs_qs_ctx *ctx;
    uint32_t *a;
    size_t n;
    unsigned depth; /* remaining partition levels before heapsort */
} pbs_qs_job;

typedef struct pbs_qs_ppart pbs_qs_ppart;

/* Argument of a chunk or swap task: which piece of which partition. */
typedef struct pbs_qs_piece {
    pbs_qs_ppart *pp;
    unsigned index;
} pbs_qs_piece;

/*
 * One parallel partition of a[0..n) around `pivot`:
 *   phase 1: chunk c = [begin(c), begin(c+1)) is partitioned by its own task,
 *            lt[c] elements < pivot end up at its front;
 *   then     split = sum of lt[]: the final boundary. Elements >= pivot left of
 *            split ("left misplaced") and elements < pivot right of it ("right
 *            misplaced") are equally many (`misplaced`); each chunk contributes at
 *            most one contiguous run of each kind (lbeg/rbeg, prefix counts
 *            lpre/rpre);
 *   phase 2: swap task j exchanges the k-th left misplaced element with the k-th
 *            right misplaced one for k in its share of [0, misplaced);
 *   then     [0, split) < pivot <= [split, n): sort both sides.
 * `remaining` counts the unfinished tasks of the current phase plus one reference
 * held by the task launching the phase; whoever brings it to 0 runs the next step.
 */
struct pbs_qs_ppart {
    const pbs_qs_ctx *ctx;
    uint32_t *a;
    size_t n;
    unsigned depth;
    uint32_t pivot;
    unsigned nchunks;
    unsigned nswap;
    size_t split;
    size_t misplaced;
    _Atomic unsigned remaining;
    size_t lt[PBS_QS_MAX_CHUNKS];
    size_t lbeg[PBS_QS_MAX_CHUNKS];
    size_t lpre[PBS_QS_MAX_CHUNKS + 1];
    size_t rbeg[PBS_QS_MAX_CHUNKS];
    size_t rpre[PBS_QS_MAX_CHUNKS + 1];
    pbs_qs_piece pieces[PBS_QS_MAX_CHUNKS];
};

typedef void (*pbs_qs_step)(pbs_sched *s, pbs_qs_ppart *pp);

static void pbs_qs_range(pbs_sched *s, const pbs_qs_ctx *ctx, uint32_t *a, size_t n,
                         unsigned depth, bool allow_par);

static void pbs_qs_task(pbs_sched *s, void *arg)
{
    pbs_qs_job j = *(pbs_qs_job *)arg;
    free(arg);
    pbs_qs_range(s, j.ctx, j.a, j.n, j.depth, true);
}

/* Sort a[0..n) in a new task, or right here if no task can be spawned. */
static void pbs_qs_spawn_range(pbs_sched *s, const pbs_qs_ctx *ctx, uint32_t *a,
                               size_t n, unsigned depth)
{
    if (n <= 1)
        return;
    pbs_qs_job *j = malloc(sizeof *j);
    if (j != NULL) {
        *j = (pbs_qs_job){ctx, a, n, depth};
        if (pbs_spawn(s, pbs_qs_task, j) == PBS_OK)
            return;
        free(j);
    }
    pbs_qs_introsort(a, n, depth);
}

/* Drop one reference of the current phase; the last one runs `next`. */
static void pbs_qs_arrive(pbs_sched *s, pbs_qs_ppart *pp, pbs_qs_step next)
{
    /* acq_rel: release publishes this task's share (its partitioned chunk and
     * lt[] entry, or its swaps) to whoever finishes the phase; acquire lets the
     * finisher, which reads lt[] and then sorts the halves, see every other task's
     * share. Decrements are read-modify-writes, so the finisher synchronises with
     * all of them. */
    if (atomic_fetch_sub_explicit(&pp->remaining, 1, memory_order_acq_rel) == 1)
        next(s, pp);
}

/* Start `count` tasks fn(piece i); the launcher holds one extra reference so that
 * pp stays alive while it is still spawning (a piece run inline, or one finishing
 * early on another worker, could otherwise complete the phase and free pp). */
static void pbs_qs_launch(pbs_sched *s, pbs_qs_ppart *pp, unsigned count,
                          pbs_task_fn fn, pbs_qs_step next)
{
    /* relaxed: no task of this phase exists yet (the previous phase is over);
     * pbs_spawn publishes this store to the tasks spawned below (release store of
     * the deque's bottom, or the LIFO stack's mutex), and this launcher's own
     * decrement is sequenced after it. */
    atomic_store_explicit(&pp->remaining, count + 1, memory_order_relaxed);
    for (unsigned i = 0; i < count; i++) {
        pp->pieces[i] = (pbs_qs_piece){pp, i};
        if (pbs_spawn(s, fn, &pp->pieces[i]) != PBS_OK)
            fn(s, &pp->pieces[i]); /* cannot spawn: run it here */
    }
    pbs_qs_arrive(s, pp, next);
}

static inline size_t pbs_qs_chunk_begin(const pbs_qs_ppart *pp, unsigned c)
{
    return (size_t)((uint64_t)pp->n * c / pp->nchunks);
}

static void pbs_qs_after_swaps(pbs_sched *s, pbs_qs_ppart *pp)
{
    const pbs_qs_ctx *ctx = pp->ctx;
    uint32_t *a = pp->a;
    size_t n = pp->n, split = pp->split;
    unsigned depth = pp->depth - 1;
    free(pp);
    pbs_qs_spawn_range(s, ctx, a, split, depth);
    pbs_qs_range(s, ctx, a + split, n - split, depth, true);
}

static void pbs_qs_swap_task(pbs_sched *s, void *arg)
{
    pbs_qs_piece *piece = arg;
    pbs_qs_ppart *pp = piece->pp;
    uint64_t m = pp->misplaced;
    size_t k = (size_t)(m * piece->index / pp->nswap);
    size_t to = (size_t)(m * (piece->index + 1) / pp->nswap);
    unsigned cl = 0, cr = 0;
    while (k < to) {
        while (pp->lpre[cl + 1] <= k)
            cl++;
        while (pp->rpre[cr + 1] <= k)
            cr++;
        size_t end = to;
        if (pp->lpre[cl + 1] < end)
            end = pp->lpre[cl + 1];
        if (pp->rpre[cr + 1] < end)
            end = pp->rpre[cr + 1];
        uint32_t *x = pp->a + pp->lbeg[cl] + (k - pp->lpre[cl]);
        uint32_t *y = pp->a + pp->rbeg[cr] + (k - pp->rpre[cr]);
        for (size_t i = 0; i < end - k; i++) {
            uint32_t t = x[i];
            x[i] = y[i];
            y[i] = t;
        }
        k = end;
    }
    pbs_qs_arrive(s, pp, pbs_qs_after_swaps);
}

static void pbs_qs_after_chunks(pbs_sched *s, pbs_qs_ppart *pp)
{
    size_t split = 0;
    for (unsigned c = 0; c < pp->nchunks; c++)
        split += pp->lt[c];
    if (split == 0) {
        /* Nothing is < pivot: the pivot is the minimum (many equal keys). No
         * element left its chunk, so hand the range to the sequential step, which
         * deals with equal keys. */
        const pbs_qs_ctx *ctx = pp->ctx;
        uint32_t *a = pp->a;
        size_t n = pp->n;
        unsigned depth = pp->depth;
        free(pp);
        pbs_qs_range(s, ctx, a, n, depth, false);
        return;
    }
    pp->split = split;
    pp->lpre[0] = pp->rpre[0] = 0;
    for (unsigned c = 0; c < pp->nchunks; c++) {
        size_t b = pbs_qs_chunk_begin(pp, c), e = pbs_qs_chunk_begin(pp, c + 1);
        size_t mid = b + pp->lt[c]; /* [b, mid) < pivot <= [mid, e) */
        size_t lo = mid, hi = e < split ? e : split;
        pp->lbeg[c] = lo;
        pp->lpre[c + 1] = pp->lpre[c] + (hi > lo ? hi - lo : 0);
        lo = b > split ? b : split;
        hi = mid;
        pp->rbeg[c] = lo;
        pp->rpre[c + 1] = pp->rpre[c] + (hi > lo ? hi - lo : 0);
    }
    pp->misplaced = pp->lpre[pp->nchunks]; /* == rpre[nchunks] */
    if (pp->misplaced == 0) {
        pbs_qs_after_swaps(s, pp);
        return;
    }
    size_t nswap = pp->misplaced / PBS_QS_SWAP_GRAIN;
    if (nswap < 1)
        nswap = 1;
    if (nswap > pp->nchunks)
        nswap = pp->nchunks;
    pp->nswap = (unsigned)nswap;
    pbs_qs_launch(s, pp, pp->nswap, pbs_qs_swap_task, pbs_qs_after_swaps);
}

static void pbs_qs_chunk_task(pbs_sched *s, void *arg)
{
    pbs_qs_piece *piece = arg;
    pbs_qs_ppart *pp = piece->pp;
    unsigned c = piece->index;
    size_t b = pbs_qs_chunk_begin(pp, c), e = pbs_qs_chunk_begin(pp, c + 1);
    pp->lt[c] = pbs_qs_partition_lt(pp->a + b, e - b, pp->pivot);
    pbs_qs_arrive(s, pp, pbs_qs_after_chunks);
}

/* Start a parallel partition of a[0..n); false if it cannot (then the caller
 * partitions sequentially). */
static bool pbs_qs_ppart_start(pbs_sched *s, const pbs_qs_ctx *ctx, uint32_t *a,
                               size_t n, unsigned depth)
{
    unsigned nchunks = ctx->chunks;
    if (n / nchunks < PBS_QS_MIN_CHUNK)
        nchunks = (unsigned)(n / PBS_QS_MIN_CHUNK);
    if (nchunks < 2)
        return false;
    pbs_qs_ppart *pp = malloc(sizeof *pp);
    if (pp == NULL)
        return false;
    uint32_t sample[PBS_QS_SAMPLES];
    for (size_t i = 0; i < PBS_QS_SAMPLES; i++)
        sample[i] = a[i * (n / PBS_QS_SAMPLES) + n / (2 * PBS_QS_SAMPLES)];
    pbs_qs_insertion(sample, PBS_QS_SAMPLES);
    pp->ctx = ctx;
    pp->a = a;
    pp->n = n;
    pp->depth = depth;
    pp->pivot = sample[PBS_QS_SAMPLES / 2];
    pp->nchunks = nchunks;
    pp->nswap = 0;
    pp->split = 0;
    pp->misplaced = 0;
    pbs_qs_launch(s, pp, nchunks, pbs_qs_chunk_task, pbs_qs_after_chunks);
    return true;
}

/* The body of a quicksort task: split a[0..n) until it is at most cutoff long,
 * spawning the left parts, then sort the rest sequentially. */
static void pbs_qs_range(pbs_sched *s, const pbs_qs_ctx *ctx, uint32_t *a, size_t n,
                         unsigned depth, bool allow_par)
{
    while (n > ctx->cutoff && depth > 0) {
        if (allow_par && n >= ctx->par_min && pbs_qs_ppart_start(s, ctx, a, n, depth))
            return;
        allow_par = true;
        depth--;
        size_t hi;
        size_t m = pbs_qs_partition(a, n, &hi);
        pbs_qs_spawn_range(s, ctx, a, m, depth);
        a += hi;
        n -= hi;
    }
    pbs_qs_introsort(a, n, depth);
}

size_t pbs_qs_parallel_partition_min(size_t n, unsigned threads, size_t cutoff)
{
    if (threads <= 1)
        return SIZE_MAX;
    /* Parallel partitions pay off only while there are fewer ranges than threads:
     * 1.5 n / threads selects the top level for 2 threads, two levels for 4... */
    size_t m = n / threads + n / (2 * (size_t)threads);
    size_t floor_chunks = 2 * (size_t)PBS_QS_MIN_CHUNK;
    size_t floor_cutoff = cutoff > SIZE_MAX / 4 ? SIZE_MAX : 4 * cutoff;
    if (m < floor_chunks)
        m = floor_chunks;
    if (m < floor_cutoff)
        m = floor_cutoff;
    return m;
}

int pbs_qs_sort_parallel(pbs_sched *s, uint32_t *a, size_t n, size_t cutoff)
{
    if (cutoff < 1)
        return PBS_EINVAL;
    if (n <= 1)
        return PBS_OK;
    unsigned threads = pbs_threads(s);
    /* The context must outlive every task: pbs_wait() returns only when all of
     * them have finished, whatever it returns (see pbs.h). */
    pbs_qs_ctx *ctx = malloc(sizeof *ctx);
    pbs_qs_job *root = malloc(sizeof *root);
    if (ctx == NULL || root == NULL) {
        free(ctx);
        free(root);
        pbs_qs_sort_seq(a, n);
        return PBS_ENOMEM;
    }
    ctx->cutoff = cutoff;
    ctx->par_min = pbs_qs_parallel_partition_min(n, threads, cutoff);
    /* Several chunks per thread, so that a thread that is slowed down (another
     * process on its core) does not hold up the whole partition. */
    unsigned chunks = 8 * threads;
    ctx->chunks = chunks > PBS_QS_MAX_CHUNKS ? PBS_QS_MAX_CHUNKS : chunks;
    *root = (pbs_qs_job){ctx, a, n, pbs_qs_depth_budget(n)};
    int rc = pbs_spawn(s, pbs_qs_task, root);
    if (rc != PBS_OK) {
        free(root);
        free(ctx);
        pbs_qs_sort_seq(a, n);
        return rc;
    }
    rc = pbs_wait(s);
    free(ctx);
    return rc;
}
