/*
 * pbs.h - public interface of the parbench task scheduler library.
 *
 * One interface, three implementations (pbs_kind):
 *   PBS_LIFO     one shared stack (mutex + condition variable) that every worker
 *                pushes to and pops from (pbs_stack.c, pbs_lifo.c);
 *   PBS_WS       one Chase-Lev deque per worker, idle workers steal from the top of
 *                a victim's deque (pbs_deque.c, pbs_ws.c); workers are started by
 *                pbs_wait() and leave when every task is done;
 *   PBS_WS_SYNC  the same work-stealing engine with persistent workers that are
 *                started by pbs_create(), sleep between batches and are stopped by
 *                pbs_destroy(); pbs_wait() only blocks the caller (pbs_ws_sync.c).
 *
 * Life cycle (every kind):
 *
 *     pbs_config cfg;
 *     pbs_config_default(&cfg, PBS_WS, 4);
 *     pbs_sched *s;
 *     char msg[PBS_MSG_LEN];
 *     if (pbs_create(&s, &cfg, msg, sizeof msg) != PBS_OK) { puts(msg); ... }
 *     pbs_spawn(s, root_task, root_arg);   // from the caller ...
 *     pbs_wait(s);                         // ... run until every task is done
 *     pbs_spawn(s, root_task, other_arg);  // batches may follow each other
 *     pbs_wait(s);
 *     pbs_destroy(s);
 *
 * A task is a function pointer and an argument. A running task may spawn further
 * tasks with pbs_spawn(sched, ...) on the scheduler it receives; pbs_wait() returns
 * only when those are done as well.
 *
 * Who may call what:
 *   pbs_create, pbs_destroy      any thread that is not a worker of that scheduler;
 *   pbs_spawn                    workers (from inside tasks) and outside threads;
 *   pbs_wait                     an outside thread (a worker gets PBS_ESTATE); for
 *                                PBS_LIFO and PBS_WS, one outside thread at a time
 *                                (a second concurrent caller gets PBS_ESTATE);
 *   pbs_stats                    any thread, any time (a snapshot, see below).
 *
 * Every public symbol is prefixed pbs_ / PBS_.
 */
#ifndef PBS_H
#define PBS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes; every function that can fail returns one of these. */
enum {
    PBS_OK = 0,
    PBS_EINVAL = -1,   /* a parameter is outside its allowed range */
    PBS_ENOMEM = -2,   /* out of memory */
    PBS_ETHREAD = -3,  /* pthread_create (or another pthread call) failed */
    PBS_ESTATE = -4    /* the call is not allowed from this thread / in this state */
};

/* Limits checked by pbs_config_check(). */
#define PBS_MAX_THREADS 256u
#define PBS_BACKOFF_LIMIT_NS 1000000000ull /* 1 s: largest allowed backoff cap */
#define PBS_DEQUE_MIN_CAPACITY 2u
#define PBS_DEQUE_MAX_INITIAL_CAPACITY (1u << 24)

/* Defaults used by pbs_config_default(). */
#define PBS_DEFAULT_BACKOFF_MIN_NS 1000ull   /* first idle pause: 1 microsecond */
#define PBS_DEFAULT_BACKOFF_MAX_NS 250000ull /* pauses double up to 250 microseconds */
#define PBS_DEFAULT_DEQUE_CAPACITY 256u

/* Size of the buffer that receives an error message (enough for any message). */
#define PBS_MSG_LEN 256

typedef enum pbs_kind {
    PBS_LIFO = 1,
    PBS_WS = 2,
    PBS_WS_SYNC = 3
} pbs_kind;

typedef struct pbs_sched pbs_sched;

/* A task. It runs on a worker of `sched` and may call pbs_spawn(sched, ...). */
typedef void (*pbs_task_fn)(pbs_sched *sched, void *arg);

typedef struct pbs_config {
    pbs_kind kind;
    unsigned threads;          /* number of workers, 1 .. PBS_MAX_THREADS */
    uint64_t backoff_min_ns;   /* first pause of an idle thief, >= 1 */
    uint64_t backoff_max_ns;   /* cap of the doubling pauses, backoff_min_ns .. 1 s */
    size_t deque_capacity;     /* initial slots of each deque: a power of two,
                                  PBS_DEQUE_MIN_CAPACITY .. PBS_DEQUE_MAX_INITIAL_CAPACITY;
                                  deques grow past it on demand */
} pbs_config;

/* Per-worker counters. Each worker writes only its own; see pbs_stats(). */
typedef struct pbs_worker_stats {
    uint64_t tasks_executed;
    uint64_t tasks_spawned;    /* spawned by tasks that ran on this worker */
    uint64_t steal_success;
    uint64_t steal_fail_empty; /* the victim's deque was empty */
    uint64_t steal_fail_race;  /* lost the race for the victim's top task */
} pbs_worker_stats;

/* Fill *cfg with the defaults for `kind` and `threads` (no validation). */
void pbs_config_default(pbs_config *cfg, pbs_kind kind, unsigned threads);

/* PBS_OK if *cfg is valid, otherwise PBS_EINVAL and, when msg is not NULL, a
 * message naming the offending field, its value and the allowed range. */
int pbs_config_check(const pbs_config *cfg, char *msg, size_t msg_len);

/* Create a scheduler. On failure *out is NULL and msg (if not NULL) says why. */
int pbs_create(pbs_sched **out, const pbs_config *cfg, char *msg, size_t msg_len);

/* Submit a task. From inside a task of `s` the task goes to the worker's own deque
 * (or the shared stack for PBS_LIFO); from any other thread it is queued for the
 * workers and runs during the current or next pbs_wait(). */
int pbs_spawn(pbs_sched *s, pbs_task_fn fn, void *arg);

/* Block until every submitted task, and every task they spawned, has finished.
 * Writes made by those tasks happen-before pbs_wait() returns. Whatever it returns,
 * no task is left when it returns: PBS_ETHREAD means that PBS_LIFO / PBS_WS could
 * start only some of the worker threads (or none, and the caller ran the batch
 * itself as worker 0), so the batch ran on fewer threads than configured;
 * PBS_ESTATE means the caller is a worker of s, or (PBS_LIFO, PBS_WS) another
 * thread is already in pbs_wait(); nothing was waited for then. */
int pbs_wait(pbs_sched *s);

/* Wait for outstanding work, stop the workers, free everything. NULL is ignored. */
void pbs_destroy(pbs_sched *s);

/* Counters: `per_worker` receives pbs_threads(s) entries (may be NULL),
 * *tasks_spawned the number of pbs_spawn() calls that succeeded (may be NULL).
 * After pbs_wait() returned, tasks_executed and tasks_spawned are exact; steal
 * failures of PBS_WS_SYNC workers that are still looking for work may be a little
 * behind (a snapshot). */
int pbs_stats(const pbs_sched *s, pbs_worker_stats *per_worker, uint64_t *tasks_spawned);

unsigned pbs_threads(const pbs_sched *s);
pbs_kind pbs_sched_kind(const pbs_sched *s);

/* Index 0 .. threads-1 of the calling worker of `s`, or -1 if the caller is not one. */
int pbs_worker_index(const pbs_sched *s);

/* "lifo", "ws", "ws_sync"; NULL for an unknown kind. */
const char *pbs_kind_name(pbs_kind kind);
/* Parse a kind name; PBS_EINVAL if unknown. */
int pbs_kind_parse(const char *name, pbs_kind *out);

/* A short English description of an error code. */
const char *pbs_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif /* PBS_H */
