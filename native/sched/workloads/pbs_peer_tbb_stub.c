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

int pbs_peer_tbb_sort(uint32_t *a, size_t n, unsigned threads)
{
    (void)a;
    (void)n;
    (void)threads;
    return -1;
}
