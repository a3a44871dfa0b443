/*
 * pbs_sched.c - the public interface: configuration checks, dispatch to the three
 * implementations, counters, names and error strings.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbs_internal.h"

_Thread_local pbs_tls_slot pbs_tls_current;

void pbs_set_msg(char *msg, size_t msg_len, const char *fmt, ...)
{
    if (msg == NULL || msg_len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msg_len, fmt, ap);
    va_end(ap);
}

void pbs_config_default(pbs_config *cfg, pbs_kind kind, unsigned threads)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->kind = kind;
    cfg->threads = threads;
    cfg->backoff_min_ns = PBS_DEFAULT_BACKOFF_MIN_NS;
    cfg->backoff_max_ns = PBS_DEFAULT_BACKOFF_MAX_NS;
    cfg->deque_capacity = PBS_DEFAULT_DEQUE_CAPACITY;
}

int pbs_config_check(const pbs_config *cfg, char *msg, size_t msg_len)
{
    if (cfg == NULL) {
        pbs_set_msg(msg, msg_len, "configuration is NULL");
        return PBS_EINVAL;
    }
    if (pbs_kind_name(cfg->kind) == NULL) {
        pbs_set_msg(msg, msg_len, "kind must be PBS_LIFO, PBS_WS or PBS_WS_SYNC (got %d)",
                    (int)cfg->kind);
        return PBS_EINVAL;
    }
    if (cfg->threads < 1 || cfg->threads > PBS_MAX_THREADS) {
        pbs_set_msg(msg, msg_len, "threads must be between 1 and %u (got %u)",
                    PBS_MAX_THREADS, cfg->threads);
        return PBS_EINVAL;
    }
    if (cfg->backoff_min_ns < 1 || cfg->backoff_min_ns > PBS_BACKOFF_LIMIT_NS) {
        pbs_set_msg(msg, msg_len,
                    "backoff_min_ns must be between 1 and %llu (got %llu)",
                    (unsigned long long)PBS_BACKOFF_LIMIT_NS,
                    (unsigned long long)cfg->backoff_min_ns);
        return PBS_EINVAL;
    }
    if (cfg->backoff_max_ns < cfg->backoff_min_ns ||
        cfg->backoff_max_ns > PBS_BACKOFF_LIMIT_NS) {
        pbs_set_msg(msg, msg_len,
                    "backoff_max_ns must be between backoff_min_ns (%llu) and %llu "
                    "(got %llu)",
                    (unsigned long long)cfg->backoff_min_ns,
                    (unsigned long long)PBS_BACKOFF_LIMIT_NS,
                    (unsigned long long)cfg->backoff_max_ns);
        return PBS_EINVAL;
    }
    size_t cap = cfg->deque_capacity;
    if (cap < PBS_DEQUE_MIN_CAPACITY || cap > PBS_DEQUE_MAX_INITIAL_CAPACITY ||
        (cap & (cap - 1)) != 0) {
        pbs_set_msg(msg, msg_len,
                    "deque_capacity must be a power of two between %u and %u (got %zu)",
                    PBS_DEQUE_MIN_CAPACITY, PBS_DEQUE_MAX_INITIAL_CAPACITY, cap);
        return PBS_EINVAL;
    }
    return PBS_OK;
}

int pbs_base_init(pbs_sched *s, const pbs_sched_ops *ops, const pbs_config *cfg)
{
    s->ops = ops;
    s->cfg = *cfg;
    atomic_init(&s->external_spawned, 0);
    atomic_init(&s->in_wait, false);
    size_t bytes = sizeof(pbs_stats_line) * cfg->threads;
    s->stats = aligned_alloc(PBS_CACHE_LINE, bytes);
    if (s->stats == NULL)
        return PBS_ENOMEM;
    for (unsigned i = 0; i < cfg->threads; i++) {
        atomic_init(&s->stats[i].tasks_executed, 0);
        atomic_init(&s->stats[i].tasks_spawned, 0);
        atomic_init(&s->stats[i].steal_success, 0);
        atomic_init(&s->stats[i].steal_fail_empty, 0);
        atomic_init(&s->stats[i].steal_fail_race, 0);
    }
    return PBS_OK;
}

void pbs_base_release(pbs_sched *s)
{
    free(s->stats);
    s->stats = NULL;
}

int pbs_create(pbs_sched **out, const pbs_config *cfg, char *msg, size_t msg_len)
{
    if (out == NULL) {
        pbs_set_msg(msg, msg_len, "out pointer is NULL");
        return PBS_EINVAL;
    }
    *out = NULL;
    int rc = pbs_config_check(cfg, msg, msg_len);
    if (rc != PBS_OK)
        return rc;
    switch (cfg->kind) {
    case PBS_LIFO:
        return pbs_lifo_create(out, cfg, msg, msg_len);
    case PBS_WS:
        return pbs_ws_create(out, cfg, msg, msg_len);
    case PBS_WS_SYNC:
        return pbs_ws_sync_create(out, cfg, msg, msg_len);
    }
    return PBS_EINVAL; /* unreachable: pbs_config_check() refused the kind */
}

int pbs_spawn(pbs_sched *s, pbs_task_fn fn, void *arg)
{
    if (s == NULL || fn == NULL)
        return PBS_EINVAL;
    return s->ops->spawn(s, fn, arg);
}

int pbs_wait(pbs_sched *s)
{
    if (s == NULL)
        return PBS_EINVAL;
    if (pbs_self_index(s) >= 0)
        return PBS_ESTATE; /* a worker waiting for itself would never return */
    return s->ops->wait(s);
}

void pbs_destroy(pbs_sched *s)
{
    if (s == NULL)
        return;
    s->ops->destroy(s);
}

int pbs_stats(const pbs_sched *s, pbs_worker_stats *per_worker, uint64_t *tasks_spawned)
{
    if (s == NULL)
        return PBS_EINVAL;
    uint64_t spawned = 0;
    for (unsigned i = 0; i < s->cfg.threads; i++) {
        const pbs_stats_line *l = &s->stats[i];
        pbs_worker_stats w;
        /* relaxed (all five): counters are independent statistics; the reader
         * needs no ordering between them. Exactness after pbs_wait() comes from
         * the happens-before edge pbs_wait() establishes (see pbs_stat_add). */
        w.tasks_executed = atomic_load_explicit(&l->tasks_executed, memory_order_relaxed);
        w.tasks_spawned = atomic_load_explicit(&l->tasks_spawned, memory_order_relaxed);
        w.steal_success = atomic_load_explicit(&l->steal_success, memory_order_relaxed);
        w.steal_fail_empty =
            atomic_load_explicit(&l->steal_fail_empty, memory_order_relaxed);
        w.steal_fail_race = atomic_load_explicit(&l->steal_fail_race, memory_order_relaxed);
        spawned += w.tasks_spawned;
        if (per_worker != NULL)
            per_worker[i] = w;
    }
    /* relaxed: same argument as above; a plain statistic. */
    spawned += atomic_load_explicit(&s->external_spawned, memory_order_relaxed);
    if (tasks_spawned != NULL)
        *tasks_spawned = spawned;
    return PBS_OK;
}

unsigned pbs_threads(const pbs_sched *s)
{
    return s->cfg.threads;
}

pbs_kind pbs_sched_kind(const pbs_sched *s)
{
    return s->cfg.kind;
}

int pbs_worker_index(const pbs_sched *s)
{
    return pbs_self_index(s);
}

const char *pbs_kind_name(pbs_kind kind)
{
    switch (kind) {
    case PBS_LIFO:
        return "lifo";
    case PBS_WS:
        return "ws";
    case PBS_WS_SYNC:
        return "ws_sync";
    }
    return NULL;
}

int pbs_kind_parse(const char *name, pbs_kind *out)
{
    static const pbs_kind kinds[] = {PBS_LIFO, PBS_WS, PBS_WS_SYNC};
    if (name == NULL)
        return PBS_EINVAL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (strcmp(name, pbs_kind_name(kinds[i])) == 0) {
            *out = kinds[i];
            return PBS_OK;
        }
    }
    return PBS_EINVAL;
}

const char *pbs_strerror(int code)
{
    switch (code) {
    case PBS_OK:
        return "success";
    case PBS_EINVAL:
        return "invalid parameter";
    case PBS_ENOMEM:
        return "out of memory";
    case PBS_ETHREAD:
        return "could not create or synchronise a thread";
    case PBS_ESTATE:
        return "call not allowed from this thread or in this state";
    }
    return "unknown error";
}
