/*
 * pbs_peer_tbb_stub.c - stands in for pbs_peer_tbb.cpp when TBB is not installed.
 */
#include "pbs_peers.h"

bool pbs_peer_tbb_available(void)
{
    return false;
}

const char *pbs_peer_tbb_note(void)
{
    return "not built: TBB headers or library not found; install " PBS_PEER_TBB_PACKAGE " and rebuild";
}

const char *pbs_peer_tbb_sort_note(void)
{
    return pbs_peer_tbb_note();
}

int pbs_peer_tbb_quicksort(uint32_t *a, size_t n, size_t cutoff, unsigned threads,
                           uint64_t *tasks_spawned)
{
    (void)a;
    (void)n;
    (void)cutoff;
    (void)threads;
    (void)tasks_spawned;
    return -1;
}

int pbs_peer_tbb_sort(uint32_t *a, size_t n, unsigned threads)
{
    (void)a;
    (void)n;
    (void)threads;
    return -1;
}
