/*
 * test_deque.c - the Chase-Lev deque on its own: sequential semantics (LIFO for the
 * owner, FIFO for thieves, growth), then one owner against 1..3 thieves with a tiny
 * initial array so that it grows while being stolen from; every item must be taken
 * exactly once and arrive intact (function pointer and argument of the same push).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "pbs_deque.h"
#include "pbs_test.h"

static void pbs_test_fn_even(pbs_sched *s, void *arg)
{
    (void)s;
    (void)arg;
}

static void pbs_test_fn_odd(pbs_sched *s, void *arg)
{
    (void)s;
    (void)arg;
}

static pbs_task item(uint64_t i)
{
    return (pbs_task){(i & 1) ? pbs_test_fn_odd : pbs_test_fn_even, (void *)(uintptr_t)i};
}

static uint64_t item_id(pbs_task t)
{
    uint64_t i = (uint64_t)(uintptr_t)t.arg;
    /* A torn read would pair the function of one push with the argument of
     * another; the parity encodes which function goes with which argument. */
    PBS_CHECK(t.fn == ((i & 1) ? pbs_test_fn_odd : pbs_test_fn_even));
    return i;
}

static void test_sequential_semantics(void)
{
    pbs_deque q;
    PBS_CHECK_EQ(pbs_deque_init(&q, 2), PBS_OK);
    pbs_task t;
    PBS_CHECK(!pbs_deque_pop(&q, &t));
    PBS_CHECK_EQ(pbs_deque_steal(&q, &t), PBS_STEAL_EMPTY);
    const uint64_t n = 1000;
    for (uint64_t i = 1; i <= n; i++)
        PBS_CHECK_EQ(pbs_deque_push(&q, item(i)), PBS_OK);
    PBS_CHECK(pbs_deque_capacity(&q) >= n);
    PBS_CHECK_EQ(pbs_deque_size_hint(&q), n);
    /* Owner: newest first. */
    for (uint64_t i = n; i > n / 2; i--) {
        PBS_CHECK(pbs_deque_pop(&q, &t));
        PBS_CHECK_EQ(item_id(t), i);
    }
    /* Thief: oldest first. */
    for (uint64_t i = 1; i <= n / 2; i++) {
        PBS_CHECK_EQ(pbs_deque_steal(&q, &t), PBS_STEAL_OK);
        PBS_CHECK_EQ(item_id(t), i);
    }
    PBS_CHECK(!pbs_deque_pop(&q, &t));
    PBS_CHECK_EQ(pbs_deque_steal(&q, &t), PBS_STEAL_EMPTY);
    /* Reuse after emptying, with the last element taken by pop. */
    PBS_CHECK_EQ(pbs_deque_push(&q, item(7)), PBS_OK);
    PBS_CHECK(pbs_deque_pop(&q, &t));
    PBS_CHECK_EQ(item_id(t), 7);
    PBS_CHECK_EQ(pbs_deque_size_hint(&q), 0);
    pbs_deque_destroy(&q);
    PBS_CHECK_EQ(pbs_deque_init(&q, 3), PBS_EINVAL); /* not a power of two */
}

typedef struct race_ctx {
    pbs_deque q;
    uint64_t n;
    _Atomic uint8_t *taken; /* taken[i]: how often item i was obtained */
    atomic_bool owner_done;
    _Atomic uint64_t stolen, races;
} race_ctx;

static void take(race_ctx *c, pbs_task t)
{
    uint64_t i = item_id(t);
    PBS_CHECK(i < c->n);
    /* relaxed: the main thread reads the flags after joining every thread. */
    atomic_fetch_add_explicit(&c->taken[i], 1, memory_order_relaxed);
}

static void *thief_main(void *p)
{
    race_ctx *c = p;
    for (;;) {
        pbs_task t;
        pbs_steal_result r = pbs_deque_steal(&c->q, &t);
        if (r == PBS_STEAL_OK) {
            take(c, t);
            /* relaxed: statistics, read after join. */
            atomic_fetch_add_explicit(&c->stolen, 1, memory_order_relaxed);
        } else if (r == PBS_STEAL_RACE) {
            /* relaxed: statistics, read after join. */
            atomic_fetch_add_explicit(&c->races, 1, memory_order_relaxed);
        } else if (atomic_load(&c->owner_done)) {
            /* Empty after the owner finished: nothing can appear any more. */
            if (pbs_deque_steal(&c->q, &t) == PBS_STEAL_EMPTY)
                break;
        }
    }
    return NULL;
}

static void race(unsigned thieves, uint64_t n)
{
    race_ctx c;
    c.n = n;
    c.taken = calloc(n, sizeof *c.taken);
    PBS_CHECK(c.taken != NULL);
    atomic_init(&c.owner_done, false);
    atomic_init(&c.stolen, 0);
    atomic_init(&c.races, 0);
    PBS_CHECK_EQ(pbs_deque_init(&c.q, 2), PBS_OK);
    pthread_t th[3];
    for (unsigned k = 0; k < thieves; k++)
        PBS_CHECK(pthread_create(&th[k], NULL, thief_main, &c) == 0);
    /* Owner: bursts of pushes, then pops some back (sometimes down to empty, so
     * that pop and steal race for the last element). */
    uint64_t next = 0, x = 88172645463325252ull;
    while (next < n) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t burst = 1 + x % 64;
        for (uint64_t b = 0; b < burst && next < n; b++)
            PBS_CHECK_EQ(pbs_deque_push(&c.q, item(next++)), PBS_OK);
        uint64_t pops = x % 80;
        pbs_task t;
        for (uint64_t b = 0; b < pops && pbs_deque_pop(&c.q, &t); b++)
            take(&c, t);
    }
    pbs_task t;
    while (pbs_deque_pop(&c.q, &t))
        take(&c, t);
    atomic_store(&c.owner_done, true);
    for (unsigned k = 0; k < thieves; k++)
        pthread_join(th[k], NULL);
    for (uint64_t i = 0; i < n; i++) {
        if (atomic_load_explicit(&c.taken[i], memory_order_relaxed) != 1) {
            fprintf(stderr, "item %" PRIu64 " taken %u times\n", i,
                    (unsigned)atomic_load(&c.taken[i]));
            exit(1);
        }
    }
    printf("     %u thieves: %" PRIu64 " items, %" PRIu64 " stolen, %" PRIu64
           " lost races, capacity %zu\n",
           thieves, n, (uint64_t)atomic_load(&c.stolen), (uint64_t)atomic_load(&c.races),
           pbs_deque_capacity(&c.q));
    pbs_deque_destroy(&c.q);
    free(c.taken);
}

static void test_owner_against_thieves(void)
{
    uint64_t n = pbs_test_quick ? 300000 : 2000000;
    for (unsigned thieves = 1; thieves <= 3; thieves++)
        race(thieves, n);
}

int main(int argc, char **argv)
{
    pbs_test_init(argc, argv);
    PBS_RUN(test_sequential_semantics);
    PBS_RUN(test_owner_against_thieves);
    return 0;
}
