/*
 * pbs_ws.h - private: the work-stealing engine shared by PBS_WS (pbs_ws.c) and
 * PBS_WS_SYNC (pbs_ws_sync.c).
 *
 * Each worker owns a Chase-Lev deque (pbs_deque.c). A worker pops its own newest
 * task; when its deque is empty it takes a task from the injection queue
 * (pbs_inject.c, tasks spawned by outside threads) or steals the oldest task of
 * other workers, trying every other worker once per round from a random start.
 * After a round without success it backs off exponentially (pbs_backoff.c).
 *
 * Termination: `pending` counts tasks spawned and not yet finished. A task's spawns
 * are counted before it finishes, so pending == 0 means no task exists anywhere
 * and none can appear except from outside. PBS_WS workers then leave (pbs_wait
 * joins them); PBS_WS_SYNC workers sleep on work_cv until an outside spawn or
 * pbs_destroy() wakes them.
 */
#ifndef PBS_WS_H
#define PBS_WS_H

#include <pthread.h>
#include <stdbool.h>

#include "pbs_backoff.h"
#include "pbs_deque.h"
#include "pbs_inject.h"
#include "pbs_internal.h"

typedef struct pbs_ws pbs_ws;

typedef struct pbs_ws_worker {
    pbs_deque deque; /* two lines: top (thieves), bottom + array (owner) */
    /* Third line: touched only by the owning worker (and by the thread that
     * starts / joins it). */
    alignas(PBS_CACHE_LINE) pbs_ws *ws;
    pthread_t thread;
    uint64_t rng; /* xorshift state for victim selection */
    pbs_backoff backoff;
    unsigned index;
    bool started;
} pbs_ws_worker;

static_assert(sizeof(pbs_ws_worker) == 3 * PBS_CACHE_LINE,
              "a worker must occupy exactly three cache lines");

struct pbs_ws {
    pbs_sched base; /* first: a pbs_ws * is a pbs_sched * */
    bool persistent;         /* PBS_WS_SYNC */
    pbs_ws_worker *workers;  /* base.cfg.threads, cache-line aligned */
    /* Written by every spawn and every task completion: its own line. */
    alignas(PBS_CACHE_LINE) _Atomic int64_t pending;
    alignas(PBS_CACHE_LINE) pbs_inject inject;
    /* PBS_WS_SYNC only: sleeping between batches, waiting for a batch, stopping.
     * All three fields below are accessed with mu held. */
    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* pending became > 0, or stop was set */
    pthread_cond_t done_cv; /* pending became 0 */
    unsigned sleepers;
    bool stop;
};

static_assert(offsetof(pbs_ws, pending) % PBS_CACHE_LINE == 0 &&
                  offsetof(pbs_ws, inject) == offsetof(pbs_ws, pending) + PBS_CACHE_LINE,
              "pending must sit alone on its cache line");

/* Set up / tear down everything but the threads. */
int pbs_ws_init(pbs_ws *ws, const pbs_sched_ops *ops, const pbs_config *cfg,
                bool persistent, char *msg, size_t msg_len);
void pbs_ws_release(pbs_ws *ws);

/* Start every worker thread; on failure the ones started are left running and
 * *started says how many (the caller stops and joins them). */
int pbs_ws_start(pbs_ws *ws, unsigned *started);
void pbs_ws_join(pbs_ws *ws, unsigned started);

/* pbs_sched_ops.spawn of both kinds. */
int pbs_ws_spawn(pbs_sched *s, pbs_task_fn fn, void *arg);

/* PBS_WS_SYNC hooks used by the engine (pbs_ws_sync.c). */
bool pbs_ws_sync_sleep(pbs_ws *ws);       /* false: stop requested */
void pbs_ws_sync_wake(pbs_ws *ws);        /* an outside spawn raised pending */
void pbs_ws_sync_notify_done(pbs_ws *ws); /* pending just reached 0 */

#endif /* PBS_WS_H */
