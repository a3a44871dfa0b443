/*
 * pbs_inject.h - injection queue of the work-stealing schedulers: tasks spawned by
 * threads that are not workers (the caller of pbs_spawn outside any task) cannot
 * go into a Chase-Lev deque, whose bottom end belongs to its owner alone, so they
 * are queued here (FIFO, one mutex) and idle workers pick them up.
 *
 * `count` mirrors the length of the list so that idle workers can see that the
 * queue is empty without taking the lock; it is only written with `mu` held.
 *
 * Which thread may call what:
 *   pbs_inject_init, pbs_inject_destroy   one thread, when no worker runs;
 *   pbs_inject_push, pbs_inject_take      any thread.
 */
#ifndef PBS_INJECT_H
#define PBS_INJECT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "pbs_internal.h"

typedef struct pbs_inject {
    alignas(PBS_CACHE_LINE) _Atomic size_t count; /* read without the lock */
    pthread_mutex_t mu;
    pbs_task_node *head; /* oldest */
    pbs_task_node *tail; /* newest */
} pbs_inject;

static_assert(sizeof(pbs_inject) % PBS_CACHE_LINE == 0,
              "the injection queue must occupy whole cache lines");

int pbs_inject_init(pbs_inject *q);
/* Frees tasks that were never taken. */
void pbs_inject_destroy(pbs_inject *q);
int pbs_inject_push(pbs_inject *q, pbs_task task);
/* Take the oldest task; false if the queue is (or looks) empty. */
bool pbs_inject_take(pbs_inject *q, pbs_task *out);

#endif /* PBS_INJECT_H */
