/*
 * pbs_backoff.h - exponential backoff for idle thieves.
 *
 * Thread use: a pbs_backoff belongs to one thread (the worker that is idle); it
 * holds no shared state. Each failed round of steal attempts calls
 * pbs_backoff_pause(), which waits cur_ns and doubles cur_ns up to max_ns; running
 * a task calls pbs_backoff_reset(). Short pauses (<= PBS_BACKOFF_SPIN_NS) spin with
 * the CPU's pause hint, since a sleep system call costs more than they last;
 * longer ones sleep with nanosleep() so that an idle worker leaves its core to
 * the workers that have work (or to other processes).
 */
#ifndef PBS_BACKOFF_H
#define PBS_BACKOFF_H

#include <stdint.h>

/* Pauses up to this long spin instead of sleeping. */
#define PBS_BACKOFF_SPIN_NS 4000u

typedef struct pbs_backoff {
    uint64_t min_ns;
    uint64_t max_ns;
    uint64_t cur_ns;
} pbs_backoff;

void pbs_backoff_init(pbs_backoff *b, uint64_t min_ns, uint64_t max_ns);

static inline void pbs_backoff_reset(pbs_backoff *b)
{
    b->cur_ns = b->min_ns;
}

/* Wait about cur_ns nanoseconds, then double cur_ns (capped at max_ns). */
void pbs_backoff_pause(pbs_backoff *b);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t pbs_now_ns(void);

/* A hint to the CPU that this thread is spinning. */
static inline void pbs_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif /* PBS_BACKOFF_H */
