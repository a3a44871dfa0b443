/*
 * pbs_inject.c - injection queue for tasks spawned from outside the workers
 * (see pbs_inject.h).
 */
#include <stdlib.h>

#include "pbs_inject.h"

int pbs_inject_init(pbs_inject *q)
{
    if (pthread_mutex_init(&q->mu, NULL) != 0)
        return PBS_ETHREAD;
    atomic_init(&q->count, 0);
    q->head = NULL;
    q->tail = NULL;
    return PBS_OK;
}

void pbs_inject_destroy(pbs_inject *q)
{
    pbs_task_node *n = q->head;
    while (n != NULL) {
        pbs_task_node *next = n->next;
        free(n);
        n = next;
    }
    q->head = q->tail = NULL;
    pthread_mutex_destroy(&q->mu);
}

int pbs_inject_push(pbs_inject *q, pbs_task task)
{
    pbs_task_node *n = malloc(sizeof *n);
    if (n == NULL)
        return PBS_ENOMEM;
    n->task = task;
    n->next = NULL;
    pthread_mutex_lock(&q->mu);
    if (q->tail != NULL)
        q->tail->next = n;
    else
        q->head = n;
    q->tail = n;
    /* relaxed: count is only a hint for lock-free emptiness checks; the list
     * itself is handed over by the mutex. A reader that sees a stale 0 backs off
     * and looks again (the scheduler's pending count keeps it looking). */
    atomic_store_explicit(&q->count,
                          atomic_load_explicit(&q->count, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    pthread_mutex_unlock(&q->mu);
    return PBS_OK;
}

bool pbs_inject_take(pbs_inject *q, pbs_task *out)
{
    /* relaxed: a hint only, see pbs_inject_push; the decision is re-made under
     * the lock. */
    if (atomic_load_explicit(&q->count, memory_order_relaxed) == 0)
        return false;
    pthread_mutex_lock(&q->mu);
    pbs_task_node *n = q->head;
    if (n != NULL) {
        q->head = n->next;
        if (q->head == NULL)
            q->tail = NULL;
        /* relaxed: written with mu held (sole writer at a time), a hint for
         * readers, as above. */
        atomic_store_explicit(&q->count,
                              atomic_load_explicit(&q->count, memory_order_relaxed) - 1,
                              memory_order_relaxed);
    }
    pthread_mutex_unlock(&q->mu);
    if (n == NULL)
        return false;
    *out = n->task;
    free(n);
    return true;
}
