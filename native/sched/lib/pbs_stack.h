/*
 * pbs_stack.h - the shared task stack of the LIFO scheduler: a linked list
 * protected by one mutex, with a condition variable for idle workers and the count
 * of unfinished tasks used for termination.
 *
 * Why a mutex and not a lock-free Treiber stack: a correct Treiber stack needs an
 * answer to ABA (a tagged head updated with a double-width CAS, or indices with a
 * generation count) and to memory reclamation (hazard pointers or epochs, since a
 * popper dereferences head->next of a node another thread may just have freed).
 * Idle workers would also have to spin or back off instead of sleeping. The LIFO
 * scheduler is the baseline of the study: one lock that every push and pop goes
 * through is exactly the contention it is meant to show, and with the mutex each
 * node is owned by one thread at a time, so nodes are freed as soon as they are
 * popped with no reclamation scheme at all. Every field below is accessed with
 * `mu` held, so no atomics are needed.
 *
 * Which thread may call what:
 *   pbs_stack_init, pbs_stack_destroy   one thread, when no worker runs;
 *   pbs_stack_push                      any thread;
 *   pbs_stack_next                      workers;
 *   pbs_stack_pending                   any thread.
 */
#ifndef PBS_STACK_H
#define PBS_STACK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "pbs_internal.h"

typedef struct pbs_stack {
    pthread_mutex_t mu;
    pthread_cond_t cv;    /* a task was pushed, or pending reached 0 */
    pbs_task_node *head;  /* top of the stack (most recent push) */
    uint64_t pending;     /* tasks pushed and not yet finished */
    unsigned sleepers;    /* workers blocked on cv */
} pbs_stack;

int pbs_stack_init(pbs_stack *st);
/* Frees nodes that were never popped. */
void pbs_stack_destroy(pbs_stack *st);

/* Push a task (counts it as pending) and wake one sleeping worker. */
int pbs_stack_push(pbs_stack *st, pbs_task task);

/* Worker: first record that `finished` (0 or 1) tasks completed, then pop the most
 * recent task into *out, sleeping while the stack is empty but some task is still
 * running (it may push more). Returns false once no task is pending: the batch is
 * complete and the worker should leave. Completion and the next pop share one
 * lock acquisition. */
bool pbs_stack_next(pbs_stack *st, unsigned finished, pbs_task *out);

/* Tasks pushed and not yet finished. */
uint64_t pbs_stack_pending(pbs_stack *st);

#endif /* PBS_STACK_H */
