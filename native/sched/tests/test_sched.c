/*
 * test_sched.c - the public interface of the three schedulers, each with 1..4
 * workers: parameter checks and their messages, spawning from outside and from
 * tasks, pbs_wait() semantics (including visibility of plain writes, which
 * ThreadSanitizer checks in the tsan build), counters that add up, several batches
 * per scheduler, concurrent outside spawners (PBS_WS_SYNC), destroy with pending
 * work, and the exponential backoff.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "pbs.h"
#include "pbs_backoff.h"
#include "pbs_test.h"

/* ---- helpers ----------------------------------------------------------------- */

static pbs_sched *make(pbs_kind kind, unsigned threads)
{
    pbs_config cfg;
    pbs_config_default(&cfg, kind, threads);
    pbs_sched *s = NULL;
    char msg[PBS_MSG_LEN] = "";
    int rc = pbs_create(&s, &cfg, msg, sizeof msg);
    if (rc != PBS_OK) {
        fprintf(stderr, "pbs_create(%s, %u): %s\n", pbs_kind_name(kind), threads, msg);
        exit(1);
    }
    return s;
}

/* Sum of the counters; checks the invariants every scheduler must keep. */
static uint64_t check_counters(pbs_sched *s, uint64_t expected_tasks)
{
    unsigned n = pbs_threads(s);
    pbs_worker_stats w[PBS_TEST_MAX_THREADS];
    uint64_t spawned = 0, executed = 0, steals = 0;
    PBS_CHECK_EQ(pbs_stats(s, w, &spawned), PBS_OK);
    for (unsigned i = 0; i < n; i++) {
        executed += w[i].tasks_executed;
        steals += w[i].steal_success;
        if (pbs_sched_kind(s) == PBS_LIFO) {
            PBS_CHECK_EQ(w[i].steal_success, 0);
            PBS_CHECK_EQ(w[i].steal_fail_empty, 0);
            PBS_CHECK_EQ(w[i].steal_fail_race, 0);
        }
    }
    PBS_CHECK_EQ(spawned, expected_tasks);
    PBS_CHECK_EQ(executed, expected_tasks);
    PBS_CHECK(steals <= executed);
    return executed;
}

/* ---- parameter checks ------------------------------------------------------ */

static void expect_refused(pbs_config cfg, const char *field, const char *got)
{
    char msg[PBS_MSG_LEN] = "";
    PBS_CHECK_EQ(pbs_config_check(&cfg, msg, sizeof msg), PBS_EINVAL);
    if (strstr(msg, field) == NULL || strstr(msg, got) == NULL) {
        fprintf(stderr, "message '%s' should name '%s' and '%s'\n", msg, field, got);
        exit(1);
    }
    pbs_sched *s = (pbs_sched *)&cfg; /* any non-NULL value: must be reset */
    char msg2[PBS_MSG_LEN] = "";
    PBS_CHECK_EQ(pbs_create(&s, &cfg, msg2, sizeof msg2), PBS_EINVAL);
    PBS_CHECK(s == NULL);
    PBS_CHECK(strcmp(msg, msg2) == 0);
}

static void test_bad_parameters(void)
{
    pbs_config cfg;
    pbs_config_default(&cfg, PBS_WS, 2);
    PBS_CHECK_EQ(pbs_config_check(&cfg, NULL, 0), PBS_OK);
    pbs_config c = cfg;
    c.threads = 0;
    expect_refused(c, "threads", "(got 0)");
    c = cfg;
    c.threads = PBS_MAX_THREADS + 1;
    expect_refused(c, "threads", "(got 257)");
    c = cfg;
    c.kind = (pbs_kind)0;
    expect_refused(c, "kind", "(got 0)");
    c = cfg;
    c.backoff_min_ns = 0;
    expect_refused(c, "backoff_min_ns", "(got 0)");
    c = cfg;
    c.backoff_max_ns = cfg.backoff_min_ns - 1;
    expect_refused(c, "backoff_max_ns", "(got 999)");
    c = cfg;
    c.deque_capacity = 0;
    expect_refused(c, "deque_capacity", "(got 0)");
    c = cfg;
    c.deque_capacity = 48;
    expect_refused(c, "deque_capacity", "(got 48)");
    /* Names and errors. */
    pbs_kind k;
    PBS_CHECK_EQ(pbs_kind_parse("ws_sync", &k), PBS_OK);
    PBS_CHECK_EQ(k, PBS_WS_SYNC);
    PBS_CHECK_EQ(pbs_kind_parse("fifo", &k), PBS_EINVAL);
    PBS_CHECK(strcmp(pbs_kind_name(PBS_LIFO), "lifo") == 0);
    PBS_CHECK(strcmp(pbs_strerror(PBS_ENOMEM), "out of memory") == 0);
    PBS_CHECK_EQ(pbs_spawn(NULL, NULL, NULL), PBS_EINVAL);
    pbs_destroy(NULL);
}

/* ---- spawning and waiting -------------------------------------------------- */

typedef struct tree_ctx {
    _Atomic uint64_t nodes;
    int *marks;          /* plain writes by tasks, read after pbs_wait */
    _Atomic int bad_index;
} tree_ctx;

typedef struct tree_arg {
    tree_ctx *ctx;
    unsigned depth;
    size_t id;
} tree_arg;

static tree_arg *tree_args; /* one per node, preallocated: node id -> argument */

static void tree_task(pbs_sched *s, void *p)
{
    tree_arg *a = p;
    int me = pbs_worker_index(s);
    if (me < 0 || (unsigned)me >= pbs_threads(s))
        atomic_store(&a->ctx->bad_index, 1);
    /* relaxed: a count read after pbs_wait(), which orders it. */
    atomic_fetch_add_explicit(&a->ctx->nodes, 1, memory_order_relaxed);
    a->ctx->marks[a->id] = 1; /* plain write: pbs_wait must publish it */
    if (a->depth == 0)
        return;
    for (size_t c = 1; c <= 2; c++) {
        size_t child = 2 * a->id + c;
        tree_args[child] = (tree_arg){a->ctx, a->depth - 1, child};
        PBS_CHECK_EQ(pbs_spawn(s, tree_task, &tree_args[child]), PBS_OK);
    }
}

/* A full binary tree of tasks of the given depth, rooted from outside. */
static void run_tree(pbs_sched *s, unsigned depth, uint64_t *expected)
{
    size_t nodes = ((size_t)2 << depth) - 1;
    tree_ctx ctx;
    atomic_init(&ctx.nodes, 0);
    atomic_init(&ctx.bad_index, 0);
    ctx.marks = calloc(nodes, sizeof *ctx.marks);
    tree_args = calloc(nodes, sizeof *tree_args);
    PBS_CHECK(ctx.marks != NULL && tree_args != NULL);
    tree_args[0] = (tree_arg){&ctx, depth, 0};
    PBS_CHECK_EQ(pbs_spawn(s, tree_task, &tree_args[0]), PBS_OK);
    PBS_CHECK_EQ(pbs_wait(s), PBS_OK);
    PBS_CHECK_EQ(atomic_load(&ctx.nodes), nodes);
    PBS_CHECK_EQ(atomic_load(&ctx.bad_index), 0);
    for (size_t i = 0; i < nodes; i++)
        PBS_CHECK_EQ(ctx.marks[i], 1);
    *expected += nodes;
    check_counters(s, *expected);
    free(ctx.marks);
    free(tree_args);
    tree_args = NULL;
}

static void test_trees_and_batches(void)
{
    for (int k = 0; k < PBS_TEST_NKINDS; k++) {
        for (unsigned t = 1; t <= PBS_TEST_MAX_THREADS; t++) {
            pbs_sched *s = make(pbs_test_kinds[k], t);
            PBS_CHECK_EQ(pbs_worker_index(s), -1);
            PBS_CHECK_EQ(pbs_wait(s), PBS_OK); /* nothing to do */
            uint64_t expected = 0;
            check_counters(s, 0);
            /* Several batches on one scheduler (frames, for PBS_WS_SYNC). */
            for (unsigned batch = 0; batch < 5; batch++)
                run_tree(s, pbs_test_quick ? 8 : 12, &expected);
            pbs_destroy(s);
        }
    }
}

static _Atomic uint64_t flat_count;

static void count_task(pbs_sched *s, void *arg)
{
    (void)s;
    (void)arg;
    /* relaxed: read after pbs_wait() / pbs_destroy(), which order it. */
    atomic_fetch_add_explicit(&flat_count, 1, memory_order_relaxed);
}

static void test_outside_spawns(void)
{
    for (int k = 0; k < PBS_TEST_NKINDS; k++) {
        for (unsigned t = 1; t <= PBS_TEST_MAX_THREADS; t++) {
            pbs_sched *s = make(pbs_test_kinds[k], t);
            atomic_store(&flat_count, 0);
            for (int i = 0; i < 1000; i++)
                PBS_CHECK_EQ(pbs_spawn(s, count_task, NULL), PBS_OK);
            PBS_CHECK_EQ(pbs_wait(s), PBS_OK);
            PBS_CHECK_EQ(atomic_load(&flat_count), 1000);
            check_counters(s, 1000);
            pbs_destroy(s);
        }
    }
}

static _Atomic int wait_from_task_rc;

static void wait_from_task(pbs_sched *s, void *arg)
{
    (void)arg;
    atomic_store(&wait_from_task_rc, pbs_wait(s));
}

static void test_wait_from_a_worker_is_refused(void)
{
    for (int k = 0; k < PBS_TEST_NKINDS; k++) {
        pbs_sched *s = make(pbs_test_kinds[k], 2);
        atomic_store(&wait_from_task_rc, 12345);
        PBS_CHECK_EQ(pbs_spawn(s, wait_from_task, NULL), PBS_OK);
        PBS_CHECK_EQ(pbs_wait(s), PBS_OK);
        PBS_CHECK_EQ(atomic_load(&wait_from_task_rc), (uint64_t)(int64_t)PBS_ESTATE);
        pbs_destroy(s);
    }
}

static void test_destroy_runs_pending_work(void)
{
    for (int k = 0; k < PBS_TEST_NKINDS; k++) {
        for (unsigned t = 1; t <= PBS_TEST_MAX_THREADS; t++) {
            pbs_sched *s = make(pbs_test_kinds[k], t);
            atomic_store(&flat_count, 0);
            for (int i = 0; i < 100; i++)
                PBS_CHECK_EQ(pbs_spawn(s, count_task, NULL), PBS_OK);
            pbs_destroy(s); /* no pbs_wait: destroy must finish the work first */
            PBS_CHECK_EQ(atomic_load(&flat_count), 100);
        }
    }
}

/* PBS_WS_SYNC: several outside threads spawn while the workers run and the main
 * thread waits; then the workers sleep between batches. */
typedef struct spawner_arg {
    pbs_sched *s;
    int n;
} spawner_arg;

static void *spawner_main(void *p)
{
    spawner_arg *a = p;
    for (int i = 0; i < a->n; i++)
        PBS_CHECK_EQ(pbs_spawn(a->s, count_task, NULL), PBS_OK);
    return NULL;
}

static void test_sync_concurrent_outside_spawners(void)
{
    for (unsigned t = 1; t <= PBS_TEST_MAX_THREADS; t++) {
        pbs_sched *s = make(PBS_WS_SYNC, t);
        atomic_store(&flat_count, 0);
        uint64_t expected = 0;
        for (int round = 0; round < 10; round++) {
            pthread_t th[3];
            spawner_arg a = {s, pbs_test_quick ? 200 : 2000};
            for (int i = 0; i < 3; i++)
                PBS_CHECK(pthread_create(&th[i], NULL, spawner_main, &a) == 0);
            for (int i = 0; i < 3; i++)
                pthread_join(th[i], NULL);
            PBS_CHECK_EQ(pbs_wait(s), PBS_OK);
            expected += 3 * (uint64_t)a.n;
            PBS_CHECK_EQ(atomic_load(&flat_count), expected);
            check_counters(s, expected);
        }
        pbs_destroy(s);
    }
}

/* Frame loop of the seed's fractal viewer: submit, wait, read the result, repeat. */
static int frame_buf[256];

static void frame_task(pbs_sched *s, void *arg)
{
    (void)s;
    uintptr_t v = (uintptr_t)arg;
    frame_buf[v & 255] = (int)(v >> 8);
}

static void test_sync_frames(void)
{
    for (unsigned t = 1; t <= PBS_TEST_MAX_THREADS; t++) {
        pbs_sched *s = make(PBS_WS_SYNC, t);
        for (int frame = 1; frame <= 50; frame++) {
            for (uintptr_t i = 0; i < 256; i++)
                PBS_CHECK_EQ(pbs_spawn(s, frame_task, (void *)(((uintptr_t)frame << 8) | i)),
                             PBS_OK);
            PBS_CHECK_EQ(pbs_wait(s), PBS_OK);
            for (int i = 0; i < 256; i++)
                PBS_CHECK_EQ(frame_buf[i], frame); /* plain reads after wait */
        }
        check_counters(s, 50 * 256);
        pbs_destroy(s);
    }
}

static void test_backoff(void)
{
    pbs_backoff b;
    pbs_backoff_init(&b, 1000, 8000);
    PBS_CHECK_EQ(b.cur_ns, 1000);
    uint64_t t0 = pbs_now_ns();
    pbs_backoff_pause(&b);
    PBS_CHECK(pbs_now_ns() - t0 >= 1000);
    PBS_CHECK_EQ(b.cur_ns, 2000);
    pbs_backoff_pause(&b);
    pbs_backoff_pause(&b);
    PBS_CHECK_EQ(b.cur_ns, 8000);
    t0 = pbs_now_ns();
    pbs_backoff_pause(&b); /* a sleep of 8 us */
    PBS_CHECK(pbs_now_ns() - t0 >= 8000);
    PBS_CHECK_EQ(b.cur_ns, 8000); /* capped */
    pbs_backoff_reset(&b);
    PBS_CHECK_EQ(b.cur_ns, 1000);
}

int main(int argc, char **argv)
{
    pbs_test_init(argc, argv);
    PBS_RUN(test_bad_parameters);
    PBS_RUN(test_backoff);
    PBS_RUN(test_outside_spawns);
    PBS_RUN(test_trees_and_batches);
    PBS_RUN(test_wait_from_a_worker_is_refused);
    PBS_RUN(test_destroy_runs_pending_work);
    PBS_RUN(test_sync_concurrent_outside_spawners);
    PBS_RUN(test_sync_frames);
    return 0;
}
