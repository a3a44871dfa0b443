/*
 * test_stress.c - many tiny tasks and deep spawn chains, for every scheduler with
 * 1..4 workers, each checked against its sequential count:
 *   flat     a task spawns 1000 spawners that spawn 1000 empty tasks each (1e6);
 *   tree     a full binary tree of tasks of depth 19 (about 1e6 tasks);
 *   chain    task k spawns task k + 1 and a leaf, down to depth 1e5;
 *   fan-out  one task spawns 2e5 tasks in a row while thieves steal from it
 *            (deques start with 2 slots, so they grow under fire).
 * --quick (sanitizer builds) divides the sizes by 4 to 16.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "pbs.h"
#include "pbs_internal.h"
#include "pbs_test.h"

/* Per-worker task counts, each on its own cache line; plain writes by the worker,
 * read by the main thread after pbs_wait(). */
typedef struct padded_count {
    alignas(PBS_CACHE_LINE) uint64_t n;
} padded_count;

static padded_count counts[PBS_TEST_MAX_THREADS];

static void bump(pbs_sched *s)
{
    int me = pbs_worker_index(s);
    PBS_CHECK(me >= 0 && me < PBS_TEST_MAX_THREADS);
    counts[me].n++;
}

static uint64_t total_and_reset(void)
{
    uint64_t t = 0;
    for (int i = 0; i < PBS_TEST_MAX_THREADS; i++) {
        t += counts[i].n;
        counts[i].n = 0;
    }
    return t;
}

static uintptr_t flat_width;

static void leaf(pbs_sched *s, void *arg)
{
    (void)arg;
    bump(s);
}

static void flat_spawner(pbs_sched *s, void *arg)
{
    (void)arg;
    bump(s);
    for (uintptr_t i = 0; i < flat_width; i++)
        PBS_CHECK_EQ(pbs_spawn(s, leaf, NULL), PBS_OK);
}

static void flat_root(pbs_sched *s, void *arg)
{
    (void)arg;
    bump(s);
    for (uintptr_t i = 0; i < flat_width; i++)
        PBS_CHECK_EQ(pbs_spawn(s, flat_spawner, NULL), PBS_OK);
}

static void tree(pbs_sched *s, void *arg)
{
    uintptr_t depth = (uintptr_t)arg;
    bump(s);
    if (depth == 0)
        return;
    PBS_CHECK_EQ(pbs_spawn(s, tree, (void *)(depth - 1)), PBS_OK);
    PBS_CHECK_EQ(pbs_spawn(s, tree, (void *)(depth - 1)), PBS_OK);
}

static void chain(pbs_sched *s, void *arg)
{
    uintptr_t left = (uintptr_t)arg;
    bump(s);
    if (left == 0)
        return;
    PBS_CHECK_EQ(pbs_spawn(s, leaf, NULL), PBS_OK);
    PBS_CHECK_EQ(pbs_spawn(s, chain, (void *)(left - 1)), PBS_OK);
}

static void fan_out(pbs_sched *s, void *arg)
{
    uintptr_t n = (uintptr_t)arg;
    bump(s);
    for (uintptr_t i = 0; i < n; i++)
        PBS_CHECK_EQ(pbs_spawn(s, leaf, NULL), PBS_OK);
}

/* Spawn fn(arg) from outside, wait, compare with the expected task count. */
static void run(pbs_sched *s, pbs_task_fn fn, uintptr_t arg, uint64_t expected,
                uint64_t *cumulative)
{
    PBS_CHECK_EQ(pbs_spawn(s, fn, (void *)arg), PBS_OK);
    PBS_CHECK_EQ(pbs_wait(s), PBS_OK);
    PBS_CHECK_EQ(total_and_reset(), expected);
    *cumulative += expected;
    pbs_worker_stats w[PBS_TEST_MAX_THREADS];
    uint64_t spawned, executed = 0, steals = 0;
    PBS_CHECK_EQ(pbs_stats(s, w, &spawned), PBS_OK);
    for (unsigned i = 0; i < pbs_threads(s); i++) {
        executed += w[i].tasks_executed;
        steals += w[i].steal_success;
    }
    PBS_CHECK_EQ(spawned, *cumulative);
    PBS_CHECK_EQ(executed, *cumulative);
    PBS_CHECK(steals <= executed);
}

static void stress(pbs_kind kind, unsigned threads)
{
    pbs_config cfg;
    pbs_config_default(&cfg, kind, threads);
    cfg.deque_capacity = 2; /* grow early and often */
    pbs_sched *s;
    char msg[PBS_MSG_LEN];
    if (pbs_create(&s, &cfg, msg, sizeof msg) != PBS_OK) {
        fprintf(stderr, "pbs_create: %s\n", msg);
        exit(1);
    }
    const bool q = pbs_test_quick;
    uint64_t cumulative = 0;
    double t0 = pbs_test_now();

    flat_width = q ? 300 : 1000;
    run(s, flat_root, 0, 1 + flat_width + flat_width * flat_width, &cumulative);
    double t1 = pbs_test_now();

    uintptr_t depth = q ? 15 : 19;
    run(s, tree, depth, ((uint64_t)2 << depth) - 1, &cumulative);
    double t2 = pbs_test_now();

    uintptr_t links = q ? 20000 : 100000;
    run(s, chain, links, 2 * (uint64_t)links + 1, &cumulative);
    double t3 = pbs_test_now();

    uintptr_t fan = q ? 50000 : 200000;
    run(s, fan_out, fan, fan + 1, &cumulative);
    double t4 = pbs_test_now();

    pbs_worker_stats w[PBS_TEST_MAX_THREADS];
    PBS_CHECK_EQ(pbs_stats(s, w, NULL), PBS_OK);
    uint64_t ok = 0, empty = 0, lost = 0;
    for (unsigned i = 0; i < threads; i++) {
        ok += w[i].steal_success;
        empty += w[i].steal_fail_empty;
        lost += w[i].steal_fail_race;
    }
    printf("     %-7s %u thr: %9" PRIu64 " tasks  flat %.2fs tree %.2fs chain %.2fs "
           "fan %.2fs  steals ok %" PRIu64 " empty %" PRIu64 " race %" PRIu64 "\n",
           pbs_kind_name(kind), threads, cumulative, t1 - t0, t2 - t1, t3 - t2, t4 - t3,
           ok, empty, lost);
    fflush(stdout);
    pbs_destroy(s);
}

static void test_stress_all(void)
{
    for (int k = 0; k < PBS_TEST_NKINDS; k++)
        for (unsigned t = 1; t <= PBS_TEST_MAX_THREADS; t++)
            stress(pbs_test_kinds[k], t);
}

int main(int argc, char **argv)
{
    pbs_test_init(argc, argv);
    PBS_RUN(test_stress_all);
    return 0;
}
