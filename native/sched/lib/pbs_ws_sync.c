/*
 * pbs_ws_sync.c - PBS_WS_SYNC: the work-stealing engine of pbs_ws.c with
 * persistent workers.
 *
 * pbs_create() starts the workers; they never stop between batches. When no task
 * is pending they sleep on work_cv (no spinning between frames); an outside
 * pbs_spawn() wakes them. pbs_wait() blocks the caller on done_cv until pending
 * is 0, i.e. until every submitted task and every task spawned by tasks is done,
 * so a caller can submit and wait for frame after frame with the same threads
 * (the seed's wait_for_threads). pbs_destroy() waits, then sets `stop` and joins.
 *
 * Lost wake-ups are excluded by the usual rule: the condition (pending, stop) is
 * changed before the mutex is taken by the side that signals, and re-checked with
 * the mutex held by the side that sleeps.
 */
#include <stdlib.h>
#include <string.h>

#include "pbs_ws.h"

bool pbs_ws_sync_sleep(pbs_ws *ws)
{
    pthread_mutex_lock(&ws->mu);
    /* relaxed: the mutex orders this load after any outside spawn's increment
     * (made before that spawner took mu in pbs_ws_sync_wake); task results need no
     * ordering here, this worker only decides whether to sleep. */
    while (!ws->stop && atomic_load_explicit(&ws->pending, memory_order_relaxed) == 0) {
        ws->sleepers++;
        pthread_cond_wait(&ws->work_cv, &ws->mu);
        ws->sleepers--;
    }
    bool keep_running = !ws->stop;
    pthread_mutex_unlock(&ws->mu);
    return keep_running;
}

void pbs_ws_sync_wake(pbs_ws *ws)
{
    pthread_mutex_lock(&ws->mu);
    if (ws->sleepers > 0)
        pthread_cond_broadcast(&ws->work_cv);
    pthread_mutex_unlock(&ws->mu);
}

void pbs_ws_sync_notify_done(pbs_ws *ws)
{
    pthread_mutex_lock(&ws->mu);
    pthread_cond_broadcast(&ws->done_cv);
    pthread_mutex_unlock(&ws->mu);
}

static int pbs_ws_sync_wait(pbs_sched *s)
{
    pbs_ws *ws = (pbs_ws *)s;
    pthread_mutex_lock(&ws->mu);
    /* acquire: pairs with the release decrements in pbs_ws_execute, so when we
     * read 0 the effects of every task of the batch are visible to the caller. */
    while (atomic_load_explicit(&ws->pending, memory_order_acquire) != 0)
        pthread_cond_wait(&ws->done_cv, &ws->mu);
    pthread_mutex_unlock(&ws->mu);
    return PBS_OK;
}

static void pbs_ws_sync_stop(pbs_ws *ws, unsigned started)
{
    pthread_mutex_lock(&ws->mu);
    ws->stop = true;
    pthread_cond_broadcast(&ws->work_cv);
    pthread_mutex_unlock(&ws->mu);
    pbs_ws_join(ws, started);
}

static void pbs_ws_sync_destroy(pbs_sched *s)
{
    pbs_ws *ws = (pbs_ws *)s;
    pbs_ws_sync_wait(s);
    pbs_ws_sync_stop(ws, ws->base.cfg.threads);
    pbs_ws_release(ws);
    free(ws);
}

static const pbs_sched_ops pbs_ws_sync_ops = {
    .spawn = pbs_ws_spawn,
    .wait = pbs_ws_sync_wait,
    .destroy = pbs_ws_sync_destroy,
};

int pbs_ws_sync_create(pbs_sched **out, const pbs_config *cfg, char *msg,
                       size_t msg_len)
{
    pbs_ws *ws = aligned_alloc(PBS_CACHE_LINE, sizeof *ws);
    if (ws == NULL) {
        pbs_set_msg(msg, msg_len,
                    "out of memory creating a synchronizing work-stealing scheduler");
        return PBS_ENOMEM;
    }
    memset(ws, 0, sizeof *ws);
    int rc = pbs_ws_init(ws, &pbs_ws_sync_ops, cfg, true, msg, msg_len);
    if (rc != PBS_OK) {
        free(ws);
        return rc;
    }
    unsigned started = 0;
    rc = pbs_ws_start(ws, &started);
    if (rc != PBS_OK) {
        pbs_ws_sync_stop(ws, started);
        pbs_ws_release(ws);
        free(ws);
        pbs_set_msg(msg, msg_len, "could only start %u of %u worker threads", started,
                    cfg->threads);
        return rc;
    }
    *out = &ws->base;
    return PBS_OK;
}
