/*
 * pbs_internal.h - private structures shared by the scheduler implementations.
 * Not installed, not part of the public interface (pbs.h).
 */
#ifndef PBS_INTERNAL_H
#define PBS_INTERNAL_H

#include <assert.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pbs.h"

/* Size of a cache line on the machines we target (x86-64, most AArch64). Fields
 * written by different threads are kept on different lines so that one worker's
 * writes never invalidate the line another worker is reading or writing. */
#define PBS_CACHE_LINE 64

/* A task by value: what pbs_spawn() received. */
typedef struct pbs_task {
    pbs_task_fn fn;
    void *arg;
} pbs_task;

/* A task in a linked list (the LIFO stack, the injection queue). */
typedef struct pbs_task_node {
    pbs_task task;
    struct pbs_task_node *next;
} pbs_task_node;

/*
 * One worker's counters, alone on a cache line. Only the owning worker writes them
 * (single writer), so an increment is a relaxed load plus a relaxed store, not a
 * locked read-modify-write; readers (pbs_stats) load them relaxed.
 */
typedef struct pbs_stats_line {
    alignas(PBS_CACHE_LINE) _Atomic uint64_t tasks_executed;
    _Atomic uint64_t tasks_spawned;
    _Atomic uint64_t steal_success;
    _Atomic uint64_t steal_fail_empty;
    _Atomic uint64_t steal_fail_race;
} pbs_stats_line;

static_assert(sizeof(pbs_stats_line) == PBS_CACHE_LINE,
              "one worker's counters must fill exactly one cache line");
static_assert(alignof(pbs_stats_line) == PBS_CACHE_LINE,
              "counter lines must start on a cache-line boundary");

/* Add d to a counter that only the calling thread writes. */
static inline void pbs_stat_add(_Atomic uint64_t *counter, uint64_t d)
{
    /* relaxed (both): this thread is the only writer, so the load sees the latest
     * value and the store cannot lose an update; the counter publishes nothing
     * else, so it needs no ordering with other memory. Exact values are
     * guaranteed to readers by the happens-before edge of pbs_wait() (pending
     * counter release/acquire, or pthread_join), not by this store. */
    uint64_t v = atomic_load_explicit(counter, memory_order_relaxed);
    atomic_store_explicit(counter, v + d, memory_order_relaxed);
}

typedef struct pbs_sched_ops {
    int (*spawn)(pbs_sched *s, pbs_task_fn fn, void *arg);
    int (*wait)(pbs_sched *s);
    void (*destroy)(pbs_sched *s);
} pbs_sched_ops;

/* Common head of every scheduler; each implementation embeds it first. */
struct pbs_sched {
    const pbs_sched_ops *ops;
    pbs_config cfg;
    pbs_stats_line *stats;              /* cfg.threads lines, cache-line aligned */
    _Atomic uint64_t external_spawned;  /* pbs_spawn() calls from outside threads */
    atomic_bool in_wait;                /* PBS_LIFO / PBS_WS: a pbs_wait() is running */
};

/* The scheduler and worker index of the calling thread ({NULL, 0} outside). */
typedef struct pbs_tls_slot {
    pbs_sched *sched;
    unsigned index;
} pbs_tls_slot;

extern _Thread_local pbs_tls_slot pbs_tls_current;

/* Index of the calling thread if it is a worker of s, else -1. */
static inline int pbs_self_index(const pbs_sched *s)
{
    return pbs_tls_current.sched == s ? (int)pbs_tls_current.index : -1;
}

/* Count one spawn, by worker `self` (>= 0) or by an outside thread (self < 0). */
static inline void pbs_count_spawn(pbs_sched *s, int self)
{
    if (self >= 0) {
        pbs_stat_add(&s->stats[self].tasks_spawned, 1);
    } else {
        /* relaxed: several outside threads may spawn at once, so this is an atomic
         * RMW, but it publishes nothing; pbs_wait()/join order it for readers. */
        atomic_fetch_add_explicit(&s->external_spawned, 1, memory_order_relaxed);
    }
}

/* Initialise / release the common head (allocates the counter lines). */
int pbs_base_init(pbs_sched *s, const pbs_sched_ops *ops, const pbs_config *cfg);
void pbs_base_release(pbs_sched *s);

/* Write a formatted message into msg (if not NULL). */
void pbs_set_msg(char *msg, size_t msg_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Constructors of the three implementations (cfg already checked). */
int pbs_lifo_create(pbs_sched **out, const pbs_config *cfg, char *msg, size_t msg_len);
int pbs_ws_create(pbs_sched **out, const pbs_config *cfg, char *msg, size_t msg_len);
int pbs_ws_sync_create(pbs_sched **out, const pbs_config *cfg, char *msg, size_t msg_len);

#endif /* PBS_INTERNAL_H */
