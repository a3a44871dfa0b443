/*
 * pbs_deque.h - Chase-Lev work-stealing deque of tasks, with the C11 memory orders
 * of N. M. Lê, A. Pop, A. Cohen and F. Zappa Nardelli, "Correct and Efficient
 * Work-Stealing for Weak Memory Models", PPoPP 2013 (Lê et al. below), and the
 * growable circular array of D. Chase and Y. Lev, "Dynamic Circular Work-Stealing
 * Deque", SPAA 2005.
 *
 * Which thread may call what:
 *   pbs_deque_init, pbs_deque_destroy   the owner, while no thief can reach the deque;
 *   pbs_deque_push, pbs_deque_pop       the owner only (one thread), bottom end;
 *   pbs_deque_steal                     any thread (thieves), top end;
 *   pbs_deque_size_hint                 any thread (a racy estimate).
 *
 * Example (owner `w`, thief `v`):
 *
 *     pbs_deque q;  pbs_deque_init(&q, 64);
 *     w: pbs_deque_push(&q, (pbs_task){fn, arg});
 *     w: pbs_task t; if (pbs_deque_pop(&q, &t)) t.fn(s, t.arg);    // newest first
 *     v: pbs_task t; if (pbs_deque_steal(&q, &t) == PBS_STEAL_OK)   // oldest first
 *            t.fn(s, t.arg);
 *     pbs_deque_destroy(&q);
 *
 * Memory reclamation: when the owner grows the array, the old array is put on a
 * per-deque retired list instead of being freed, because a thief that loaded the
 * old pointer may still read a slot from it. The retired arrays are freed by
 * pbs_deque_destroy(), when no thief runs any more. Since the array doubles, all
 * retired arrays together are smaller than the live one.
 */
#ifndef PBS_DEQUE_H
#define PBS_DEQUE_H

#include <stdbool.h>
#include <stddef.h>

#include "pbs_internal.h"

/* Private: the circular array (defined in pbs_deque.c). */
typedef struct pbs_deque_array pbs_deque_array;

typedef enum pbs_steal_result {
    PBS_STEAL_OK = 0,    /* *out holds the stolen task */
    PBS_STEAL_EMPTY = 1, /* the deque looked empty */
    PBS_STEAL_RACE = 2   /* another thief or the owner took the top task first */
} pbs_steal_result;

/*
 * top and bottom are indices that only grow (except bottom, which the owner moves
 * back and forth by one in pop). The tasks are the indices [top, bottom).
 * top is written by thieves (CAS) and bottom by the owner, so they live on
 * different cache lines; array sits with bottom since both are read together by
 * thieves and written only by the owner.
 */
typedef struct pbs_deque {
    alignas(PBS_CACHE_LINE) _Atomic int64_t top;
    alignas(PBS_CACHE_LINE) _Atomic int64_t bottom;
    _Atomic(pbs_deque_array *) array;
    pbs_deque_array *retired; /* owner only: arrays replaced by a grow */
} pbs_deque;

static_assert(offsetof(pbs_deque, bottom) == PBS_CACHE_LINE,
              "top and bottom must be on different cache lines");
static_assert(sizeof(pbs_deque) == 2 * PBS_CACHE_LINE,
              "a deque must occupy exactly two cache lines");

/* capacity: initial number of slots, a power of two >= 2. */
int pbs_deque_init(pbs_deque *q, size_t capacity);
void pbs_deque_destroy(pbs_deque *q);

/* Owner: push at the bottom; PBS_ENOMEM if the array had to grow and could not. */
int pbs_deque_push(pbs_deque *q, pbs_task task);

/* Owner: pop the newest task; false if the deque is empty. */
bool pbs_deque_pop(pbs_deque *q, pbs_task *out);

/* Any thread: take the oldest task. */
pbs_steal_result pbs_deque_steal(pbs_deque *q, pbs_task *out);

/* Any thread: bottom - top as seen now (may be stale, never negative). */
size_t pbs_deque_size_hint(pbs_deque *q);

/* Owner (or after all threads stopped): current number of slots. */
size_t pbs_deque_capacity(pbs_deque *q);

#endif /* PBS_DEQUE_H */
