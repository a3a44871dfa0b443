/*
 * pbs_deque.c - Chase-Lev work-stealing deque (see pbs_deque.h for the contract).
 *
 * Memory orders follow Lê et al., PPoPP 2013, Fig. 1 ("Correct and Efficient
 * Work-Stealing for Weak Memory Models"), with two deliberate changes, each
 * explained where it stands:
 *
 *  1. Lê et al. publish a push with `atomic_thread_fence(release)` followed by a
 *     relaxed store of bottom, and write bottom relaxed in take (our pop). We use
 *     release stores of bottom everywhere instead.
 *     Push: the same guarantee, restricted to the one store that matters; and
 *     ThreadSanitizer does not model fences (with the fence form our tsan tests
 *     report false data races on task arguments; with the release store they are
 *     clean).
 *     Pop: a thief may read the bottom written by pop rather than by a push. Lê et
 *     al.'s proof then relies on the C11 rule that later stores by the same thread
 *     continue the release sequence headed by the push; C++20 removed that rule
 *     (P0982R1, "Weaken release sequences"). With a release store the thief
 *     synchronises with the pop itself, which is sequenced after every earlier
 *     push, so the argument does not depend on that rule.
 *     On x86-64 a release store is an ordinary MOV, so neither change costs
 *     anything there (on AArch64 it is an STLR instead of an STR).
 *  2. Lê et al. load the array pointer with memory_order_consume in steal; compilers
 *     implement consume as acquire, so we write acquire.
 *
 * Task slots hold the function pointer and the argument as two relaxed atomics. A
 * thief may read a slot that the owner is overwriting only after the element in it
 * was taken by someone else; its CAS on top then fails and it discards what it read
 * (see pbs_deque_steal), so a torn pair is never used.
 */
#include <stdlib.h>

#include "pbs_deque.h"

typedef struct pbs_deque_slot {
    _Atomic(pbs_task_fn) fn;
    _Atomic(void *) arg;
} pbs_deque_slot;

struct pbs_deque_array {
    size_t mask;                   /* capacity - 1; capacity is a power of two */
    pbs_deque_array *next_retired; /* owner only: link in pbs_deque.retired */
    pbs_deque_slot slots[];
};

static pbs_deque_array *pbs_deque_array_new(size_t capacity)
{
    pbs_deque_array *a = malloc(sizeof *a + capacity * sizeof(pbs_deque_slot));
    if (a == NULL)
        return NULL;
    a->mask = capacity - 1;
    a->next_retired = NULL;
    for (size_t i = 0; i < capacity; i++) {
        atomic_init(&a->slots[i].fn, NULL);
        atomic_init(&a->slots[i].arg, NULL);
    }
    return a;
}

/* Slot accessors. Every caller states why relaxed is enough at its call site; the
 * orders used inside are the ones passed in. */
static inline void pbs_slot_store(pbs_deque_array *a, int64_t i, pbs_task t)
{
    pbs_deque_slot *s = &a->slots[(size_t)i & a->mask];
    /* relaxed: callers publish the slot with a later release store (bottom, or
     * the array pointer); see pbs_deque_push and pbs_deque_grow. */
    atomic_store_explicit(&s->fn, t.fn, memory_order_relaxed);
    atomic_store_explicit(&s->arg, t.arg, memory_order_relaxed);
}

static inline pbs_task pbs_slot_load(pbs_deque_array *a, int64_t i)
{
    pbs_deque_slot *s = &a->slots[(size_t)i & a->mask];
    pbs_task t;
    /* relaxed: callers have already synchronised with the store that published
     * the slot (owner: its own earlier write; thief: acquire loads of bottom and
     * array), and a thief validates the value with its CAS on top. */
    t.fn = atomic_load_explicit(&s->fn, memory_order_relaxed);
    t.arg = atomic_load_explicit(&s->arg, memory_order_relaxed);
    return t;
}

int pbs_deque_init(pbs_deque *q, size_t capacity)
{
    if (capacity < 2 || (capacity & (capacity - 1)) != 0)
        return PBS_EINVAL;
    pbs_deque_array *a = pbs_deque_array_new(capacity);
    if (a == NULL)
        return PBS_ENOMEM;
    atomic_init(&q->top, 0);
    atomic_init(&q->bottom, 0);
    atomic_init(&q->array, a);
    q->retired = NULL;
    return PBS_OK;
}

void pbs_deque_destroy(pbs_deque *q)
{
    /* relaxed: destroy runs after every thief has stopped (threads joined), which
     * already orders all their accesses before this point. */
    free(atomic_load_explicit(&q->array, memory_order_relaxed));
    atomic_store_explicit(&q->array, NULL, memory_order_relaxed);
    pbs_deque_array *r = q->retired;
    while (r != NULL) {
        pbs_deque_array *next = r->next_retired;
        free(r);
        r = next;
    }
    q->retired = NULL;
}

/* Owner: replace the full array `old` (live indices within [t, b)) by one twice as
 * large. Returns the new array, or NULL if out of memory (old stays in place). */
static pbs_deque_array *pbs_deque_grow(pbs_deque *q, pbs_deque_array *old, int64_t t,
                                       int64_t b)
{
    pbs_deque_array *a = pbs_deque_array_new(2 * (old->mask + 1));
    if (a == NULL)
        return NULL;
    /* Indices below the real top may already be stolen; copying them is harmless
     * because a thief can only claim an index >= the current top. */
    for (int64_t i = t; i < b; i++)
        pbs_slot_store(a, i, pbs_slot_load(old, i));
    /* Retire, do not free: a thief that loaded `old` may still read a slot of it.
     * The old array is never written again, and the slots a thief can still claim
     * hold the same tasks in both arrays. */
    old->next_retired = q->retired;
    q->retired = old;
    /* release: a thief that loads this pointer with acquire (pbs_deque_steal) then
     * sees the copied slots and the new mask. Thieves also reach the new array
     * through the release store of bottom in the push that follows. */
    atomic_store_explicit(&q->array, a, memory_order_release);
    return a;
}

int pbs_deque_push(pbs_deque *q, pbs_task task)
{
    /* relaxed: only the owner (this thread) writes bottom, so it reads its own
     * latest value without synchronisation. */
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    /* acquire (Lê et al.): synchronises with the thieves' CAS on top. Seeing
     * top > i means the thief that took element i read slot i before its CAS, so
     * our reuse of that slot (for index i + capacity) comes after its read. */
    int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
    /* relaxed: only the owner writes the array pointer. */
    pbs_deque_array *a = atomic_load_explicit(&q->array, memory_order_relaxed);
    if (b - t > (int64_t)a->mask) {
        a = pbs_deque_grow(q, a, t, b);
        if (a == NULL)
            return PBS_ENOMEM;
    }
    pbs_slot_store(a, b, task);
    /* release (Lê et al.: release fence + relaxed store, see the file comment):
     * the slot contents, the array a grow may just have installed, and everything
     * the spawning task wrote before pbs_spawn() (the task's argument) happen-before
     * any thief's acquire load of bottom that reads b + 1 or a later value. */
    atomic_store_explicit(&q->bottom, b + 1, memory_order_release);
    return PBS_OK;
}

bool pbs_deque_pop(pbs_deque *q, pbs_task *out)
{
    /* relaxed (both): bottom and array are written only by the owner (us). */
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed) - 1;
    pbs_deque_array *a = atomic_load_explicit(&q->array, memory_order_relaxed);
    /* release (Lê et al.: relaxed): reserve index b before looking at top. Release
     * so that a thief whose acquire load of bottom reads this value still
     * synchronises with all our earlier pushes (file comment, point 1). */
    atomic_store_explicit(&q->bottom, b, memory_order_release);
    /* seq_cst fence (Lê et al.): store-load barrier. It orders the store of bottom
     * above before the load of top below; together with the seq_cst fence in
     * pbs_deque_steal (between its loads of top and bottom) either that thief sees
     * our decremented bottom, or we see its top, so the two of us can never both
     * take the same last element without going through the CAS below. */
    atomic_thread_fence(memory_order_seq_cst);
    /* relaxed (Lê et al.): the fence above provides the ordering; if the value is
     * stale the CAS below (for the last element) re-checks it. */
    int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed);
    if (t > b) {
        /* Empty: undo the reservation. release: as for the store above. */
        atomic_store_explicit(&q->bottom, b + 1, memory_order_release);
        return false;
    }
    pbs_task task = pbs_slot_load(a, b);
    if (t == b) {
        /* The last element: thieves may be claiming it too; whoever advances top
         * from t to t + 1 owns it. seq_cst on success (Lê et al.): the CAS must be
         * part of the single total order with the fences and the thieves' CAS.
         * relaxed on failure: we then only learn that a thief owns the element
         * and we read nothing that it published. */
        bool won = atomic_compare_exchange_strong_explicit(
            &q->top, &t, t + 1, memory_order_seq_cst, memory_order_relaxed);
        /* Either way the deque is now empty with top == b + 1: restore bottom.
         * release: as for the stores above. */
        atomic_store_explicit(&q->bottom, b + 1, memory_order_release);
        if (!won)
            return false;
    }
    *out = task;
    return true;
}

pbs_steal_result pbs_deque_steal(pbs_deque *q, pbs_task *out)
{
    /* acquire (Lê et al.): synchronises with the CAS that installed this value of
     * top (a thief or the owner that took element t - 1), so the loads below
     * cannot see a state older than the one that CAS left behind. */
    int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
    /* seq_cst fence (Lê et al.): pairs with the fence in pbs_deque_pop (see there):
     * orders our load of top before our load of bottom in the single total order,
     * so that we cannot combine an old top with a bottom the owner has already
     * decremented past the element we are about to claim. */
    atomic_thread_fence(memory_order_seq_cst);
    /* acquire (Lê et al.): synchronises with the owner's release stores of bottom:
     * if we see bottom > t, the push of element t (its slot, the array it went
     * into, and the task's argument) happens-before what we do next. */
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_acquire);
    if (t >= b)
        return PBS_STEAL_EMPTY;
    /* acquire (Lê et al.: consume): pairs with the release store in
     * pbs_deque_grow, so the slots and mask of this array are visible. Loaded
     * after bottom, so it is at least the array that element t was pushed into,
     * or a larger copy of it; older arrays stay allocated (retired list). */
    pbs_deque_array *a = atomic_load_explicit(&q->array, memory_order_acquire);
    pbs_task task = pbs_slot_load(a, t);
    /* Claim element t. seq_cst on success (Lê et al.): this CAS competes with the
     * owner's CAS in pbs_deque_pop and must take part in the same total order as
     * the fences. relaxed on failure: we return RACE and discard `task` (possibly a
     * torn or reused slot), so nothing read here is used. */
    if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1,
                                                 memory_order_seq_cst,
                                                 memory_order_relaxed))
        return PBS_STEAL_RACE;
    *out = task;
    return PBS_STEAL_OK;
}

size_t pbs_deque_size_hint(pbs_deque *q)
{
    /* relaxed (both): an estimate used only to choose whom to try first; the
     * real decision is taken by pbs_deque_steal with the proper orders. */
    int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed);
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    return b > t ? (size_t)(b - t) : 0;
}

size_t pbs_deque_capacity(pbs_deque *q)
{
    /* relaxed: called by the owner (sole writer) or after the workers stopped. */
    return atomic_load_explicit(&q->array, memory_order_relaxed)->mask + 1;
}
