/*
 * pbs_ws.c - the work-stealing engine (see pbs_ws.h) and the PBS_WS life cycle:
 * pbs_wait() starts one thread per worker, the workers run until every task is
 * done, pbs_wait() joins them. The next pbs_wait() starts new threads.
 */
#include <stdlib.h>
#include <string.h>

#include "pbs_ws.h"

static inline uint64_t pbs_ws_rand(pbs_ws_worker *w)
{
    /* xorshift64 (Marsaglia 2003): fast, good enough to pick victims. */
    uint64_t x = w->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    w->rng = x;
    return x;
}

/* Run one task on worker w, then count it as finished. */
static void pbs_ws_execute(pbs_ws *ws, pbs_ws_worker *w, pbs_task t)
{
    t.fn(&ws->base, t.arg);
    pbs_stat_add(&ws->base.stats[w->index].tasks_executed, 1);
    /* release: everything this task did (its writes, its spawns' increments of
     * pending and of the counters) happens-before any acquire load that reads the
     * 0 this decrement (or a later one) produces: decrements are read-modify-writes,
     * so they all belong to one release sequence. The reader is pbs_wait (through
     * a worker's exit and pthread_join, or directly in PBS_WS_SYNC). No acquire
     * is needed here: this thread reads nothing the other tasks published. */
    if (atomic_fetch_sub_explicit(&ws->pending, 1, memory_order_release) == 1 &&
        ws->persistent)
        pbs_ws_sync_notify_done(ws);
}

/* One round of looking for work outside the own deque. */
static bool pbs_ws_find_work(pbs_ws *ws, pbs_ws_worker *w, pbs_task *out)
{
    if (pbs_inject_take(&ws->inject, out))
        return true;
    unsigned n = ws->base.cfg.threads;
    if (n == 1)
        return false;
    pbs_stats_line *st = &ws->base.stats[w->index];
    unsigned first = (unsigned)(pbs_ws_rand(w) % (n - 1));
    for (unsigned k = 0; k < n - 1; k++) {
        /* Every worker other than w, starting at a random one. */
        unsigned v = (w->index + 1 + (first + k) % (n - 1)) % n;
        pbs_deque *victim = &ws->workers[v].deque;
        for (;;) {
            pbs_steal_result r = pbs_deque_steal(victim, out);
            if (r == PBS_STEAL_OK) {
                pbs_stat_add(&st->steal_success, 1);
                return true;
            }
            if (r == PBS_STEAL_EMPTY) {
                pbs_stat_add(&st->steal_fail_empty, 1);
                break;
            }
            /* Lost a race: the victim had work a moment ago, try it again. */
            pbs_stat_add(&st->steal_fail_race, 1);
        }
    }
    return false;
}

static void *pbs_ws_worker_main(void *p)
{
    pbs_ws_worker *w = p;
    pbs_ws *ws = w->ws;
    pbs_tls_current = (pbs_tls_slot){&ws->base, w->index};
    pbs_backoff_reset(&w->backoff);
    for (;;) {
        pbs_task t;
        if (pbs_deque_pop(&w->deque, &t) || pbs_ws_find_work(ws, w, &t)) {
            pbs_ws_execute(ws, w, t);
            pbs_backoff_reset(&w->backoff);
            continue;
        }
        /* acquire: pairs with the release decrements in pbs_ws_execute; reading 0
         * means every task has finished and its effects are visible to us (and,
         * through pthread_join, to the thread in pbs_wait). */
        if (atomic_load_explicit(&ws->pending, memory_order_acquire) == 0) {
            if (!ws->persistent)
                break;
            if (!pbs_ws_sync_sleep(ws))
                break;
            pbs_backoff_reset(&w->backoff);
            continue;
        }
        /* Work exists somewhere (a task is running and may spawn): back off. */
        pbs_backoff_pause(&w->backoff);
    }
    pbs_tls_current = (pbs_tls_slot){NULL, 0};
    return NULL;
}

int pbs_ws_spawn(pbs_sched *s, pbs_task_fn fn, void *arg)
{
    pbs_ws *ws = (pbs_ws *)s;
    int self = pbs_self_index(s);
    /* relaxed: the increment must precede the decrement that finishes this task in
     * pending's modification order, and it does: the task reaches the worker that
     * runs it through the deque (release/acquire on bottom) or the injection
     * queue (mutex), which orders this increment before that worker's decrement.
     * A spawning task still holds its own unit of pending, so nobody can see a
     * false 0 in between. An outside spawn that must wake sleeping PBS_WS_SYNC
     * workers is ordered by the mutex taken in pbs_ws_sync_wake. */
    atomic_fetch_add_explicit(&ws->pending, 1, memory_order_relaxed);
    int rc;
    if (self >= 0)
        rc = pbs_deque_push(&ws->workers[self].deque, (pbs_task){fn, arg});
    else
        rc = pbs_inject_push(&ws->inject, (pbs_task){fn, arg});
    if (rc != PBS_OK) {
        /* release: undoing our own increment; if this returns pending to 0 it
         * plays the role of a task completion (see pbs_ws_execute). */
        if (atomic_fetch_sub_explicit(&ws->pending, 1, memory_order_release) == 1 &&
            ws->persistent)
            pbs_ws_sync_notify_done(ws);
        return rc;
    }
    pbs_count_spawn(s, self);
    if (self < 0 && ws->persistent)
        pbs_ws_sync_wake(ws);
    return PBS_OK;
}

int pbs_ws_init(pbs_ws *ws, const pbs_sched_ops *ops, const pbs_config *cfg,
                bool persistent, char *msg, size_t msg_len)
{
    unsigned n = cfg->threads;
    ws->persistent = persistent;
    ws->workers = NULL;
    atomic_init(&ws->pending, 0);
    ws->sleepers = 0;
    ws->stop = false;
    int rc = pbs_base_init(&ws->base, ops, cfg);
    if (rc != PBS_OK)
        goto fail;
    ws->workers = aligned_alloc(PBS_CACHE_LINE, sizeof(pbs_ws_worker) * n);
    if (ws->workers == NULL) {
        rc = PBS_ENOMEM;
        goto fail_base;
    }
    memset(ws->workers, 0, sizeof(pbs_ws_worker) * n);
    unsigned ready = 0;
    for (; ready < n; ready++) {
        pbs_ws_worker *w = &ws->workers[ready];
        rc = pbs_deque_init(&w->deque, cfg->deque_capacity);
        if (rc != PBS_OK)
            goto fail_deques;
        w->ws = ws;
        w->index = ready;
        w->started = false;
        /* Any non-zero seed works; spread them so workers pick different victims. */
        w->rng = 0x9E3779B97F4A7C15ull * (ready + 1);
        pbs_backoff_init(&w->backoff, cfg->backoff_min_ns, cfg->backoff_max_ns);
    }
    rc = pbs_inject_init(&ws->inject);
    if (rc != PBS_OK)
        goto fail_deques;
    if (pthread_mutex_init(&ws->mu, NULL) != 0) {
        rc = PBS_ETHREAD;
        goto fail_inject;
    }
    if (pthread_cond_init(&ws->work_cv, NULL) != 0) {
        rc = PBS_ETHREAD;
        goto fail_mu;
    }
    if (pthread_cond_init(&ws->done_cv, NULL) != 0) {
        rc = PBS_ETHREAD;
        goto fail_work_cv;
    }
    return PBS_OK;

fail_work_cv:
    pthread_cond_destroy(&ws->work_cv);
fail_mu:
    pthread_mutex_destroy(&ws->mu);
fail_inject:
    pbs_inject_destroy(&ws->inject);
fail_deques:
    for (unsigned i = 0; i < ready; i++)
        pbs_deque_destroy(&ws->workers[i].deque);
    free(ws->workers);
    ws->workers = NULL;
fail_base:
    pbs_base_release(&ws->base);
fail:
    pbs_set_msg(msg, msg_len, "could not create a work-stealing scheduler: %s",
                pbs_strerror(rc));
    return rc;
}

void pbs_ws_release(pbs_ws *ws)
{
    pthread_cond_destroy(&ws->done_cv);
    pthread_cond_destroy(&ws->work_cv);
    pthread_mutex_destroy(&ws->mu);
    pbs_inject_destroy(&ws->inject);
    for (unsigned i = 0; i < ws->base.cfg.threads; i++)
        pbs_deque_destroy(&ws->workers[i].deque);
    free(ws->workers);
    ws->workers = NULL;
    pbs_base_release(&ws->base);
}

int pbs_ws_start(pbs_ws *ws, unsigned *started)
{
    unsigned n = ws->base.cfg.threads;
    unsigned i = 0;
    for (; i < n; i++) {
        pbs_ws_worker *w = &ws->workers[i];
        if (pthread_create(&w->thread, NULL, pbs_ws_worker_main, w) != 0)
            break;
        w->started = true;
    }
    *started = i;
    return i == n ? PBS_OK : PBS_ETHREAD;
}

void pbs_ws_join(pbs_ws *ws, unsigned started)
{
    for (unsigned i = 0; i < started; i++) {
        pthread_join(ws->workers[i].thread, NULL);
        ws->workers[i].started = false;
    }
}

/* ---- PBS_WS life cycle --------------------------------------------------- */

static int pbs_ws_wait(pbs_sched *s)
{
    pbs_ws *ws = (pbs_ws *)s;
    /* acquire: pairs with the release decrements; 0 means the last batch is
     * complete and its effects are visible, so there is nothing to run. */
    if (atomic_load_explicit(&ws->pending, memory_order_acquire) == 0)
        return PBS_OK;
    /* The workers are started here, so two concurrent waits would start two sets
     * of threads on the same workers: refuse the second. */
    if (atomic_exchange(&s->in_wait, true))
        return PBS_ESTATE;
    unsigned started = 0;
    int rc = pbs_ws_start(ws, &started);
    /* Workers leave only when pending is 0, so with at least one of them the
     * batch completes (on fewer threads if some could not be started). With none,
     * the caller runs the batch itself as worker 0. */
    if (started == 0)
        pbs_ws_worker_main(&ws->workers[0]);
    pbs_ws_join(ws, started);
    atomic_store(&s->in_wait, false);
    return rc;
}

static void pbs_ws_destroy(pbs_sched *s)
{
    pbs_ws *ws = (pbs_ws *)s;
    pbs_ws_wait(s);
    pbs_ws_release(ws);
    free(ws);
}

static const pbs_sched_ops pbs_ws_ops = {
    .spawn = pbs_ws_spawn,
    .wait = pbs_ws_wait,
    .destroy = pbs_ws_destroy,
};

int pbs_ws_create(pbs_sched **out, const pbs_config *cfg, char *msg, size_t msg_len)
{
    pbs_ws *ws = aligned_alloc(PBS_CACHE_LINE, sizeof *ws);
    if (ws == NULL) {
        pbs_set_msg(msg, msg_len, "out of memory creating a work-stealing scheduler");
        return PBS_ENOMEM;
    }
    memset(ws, 0, sizeof *ws);
    int rc = pbs_ws_init(ws, &pbs_ws_ops, cfg, false, msg, msg_len);
    if (rc != PBS_OK) {
        free(ws);
        return rc;
    }
    *out = &ws->base;
    return PBS_OK;
}
