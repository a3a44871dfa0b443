/*
 * pbs_stack.c - mutex-protected task stack of the LIFO scheduler (see pbs_stack.h).
 */
#include <stdlib.h>

#include "pbs_stack.h"

int pbs_stack_init(pbs_stack *st)
{
    if (pthread_mutex_init(&st->mu, NULL) != 0)
        return PBS_ETHREAD;
    if (pthread_cond_init(&st->cv, NULL) != 0) {
        pthread_mutex_destroy(&st->mu);
        return PBS_ETHREAD;
    }
    st->head = NULL;
    st->pending = 0;
    st->sleepers = 0;
    return PBS_OK;
}

void pbs_stack_destroy(pbs_stack *st)
{
    pbs_task_node *n = st->head;
    while (n != NULL) {
        pbs_task_node *next = n->next;
        free(n);
        n = next;
    }
    st->head = NULL;
    pthread_cond_destroy(&st->cv);
    pthread_mutex_destroy(&st->mu);
}

int pbs_stack_push(pbs_stack *st, pbs_task task)
{
    pbs_task_node *n = malloc(sizeof *n); /* outside the lock */
    if (n == NULL)
        return PBS_ENOMEM;
    n->task = task;
    pthread_mutex_lock(&st->mu);
    n->next = st->head;
    st->head = n;
    st->pending++;
    if (st->sleepers > 0)
        pthread_cond_signal(&st->cv);
    pthread_mutex_unlock(&st->mu);
    return PBS_OK;
}

bool pbs_stack_next(pbs_stack *st, unsigned finished, pbs_task *out)
{
    pthread_mutex_lock(&st->mu);
    st->pending -= finished;
    if (finished > 0 && st->pending == 0 && st->sleepers > 0)
        pthread_cond_broadcast(&st->cv); /* batch complete: release every sleeper */
    while (st->head == NULL && st->pending > 0) {
        st->sleepers++;
        pthread_cond_wait(&st->cv, &st->mu);
        st->sleepers--;
    }
    pbs_task_node *n = st->head;
    if (n != NULL)
        st->head = n->next;
    pthread_mutex_unlock(&st->mu);
    if (n == NULL)
        return false; /* pending == 0 */
    *out = n->task;
    free(n);
    return true;
}

uint64_t pbs_stack_pending(pbs_stack *st)
{
    pthread_mutex_lock(&st->mu);
    uint64_t p = st->pending;
    pthread_mutex_unlock(&st->mu);
    return p;
}
