/*
 * pbs_peer_tbb.cpp - the TBB peer: tbb::parallel_sort from oneTBB (Debian package
 * libtbb-dev). Compiled only when the Makefile finds TBB; pbs_peer_tbb_stub.c
 * stands in for it otherwise.
 */
#include <cstdint>
#include <exception>

#include <tbb/global_control.h>
#include <tbb/parallel_sort.h>
#include <tbb/version.h>

#include "pbs_peers.h"

#define PBS_STR2(x) #x
#define PBS_STR(x) PBS_STR2(x)

extern "C" bool pbs_peer_tbb_available(void)
{
    return true;
}

extern "C" const char *pbs_peer_tbb_note(void)
{
    return "built with oneTBB " PBS_STR(TBB_VERSION_MAJOR) "." PBS_STR(
        TBB_VERSION_MINOR) " (-ltbb): tbb::parallel_sort, its own grain size, "
                           "no cutoff";
}

extern "C" int pbs_peer_tbb_sort(uint32_t *a, size_t n, unsigned threads)
{
    try {
        // Limits the whole process to `threads` threads while `limit` lives.
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        tbb::parallel_sort(a, a + n);
    } catch (const std::exception &) {
        return -1;
    }
    return 0;
}
