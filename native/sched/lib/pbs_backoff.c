/*
 * pbs_backoff.c - exponential backoff for idle thieves (see pbs_backoff.h).
 */
#include <errno.h>
#include <time.h>

#include "pbs_backoff.h"

void pbs_backoff_init(pbs_backoff *b, uint64_t min_ns, uint64_t max_ns)
{
    b->min_ns = min_ns;
    b->max_ns = max_ns < min_ns ? min_ns : max_ns;
    b->cur_ns = min_ns;
}

uint64_t pbs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void pbs_backoff_pause(pbs_backoff *b)
{
    uint64_t ns = b->cur_ns;
    if (ns <= PBS_BACKOFF_SPIN_NS) {
        uint64_t deadline = pbs_now_ns() + ns;
        while (pbs_now_ns() < deadline)
            pbs_cpu_relax();
    } else {
        struct timespec req = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
        while (nanosleep(&req, &req) != 0 && errno == EINTR) {
        }
    }
    uint64_t next = ns * 2;
    b->cur_ns = next > b->max_ns ? b->max_ns : next;
}
