/*
 * pbs_peer_tbb.cpp - the TBB peers, from oneTBB (Debian package libtbb-dev). Compiled
 * only when the Makefile finds TBB; pbs_peer_tbb_stub.c stands in for it otherwise.
 *
 *   pbs_peer_tbb_quicksort   the same recursive quicksort as the OpenMP peer, on a
 *                            tbb::task_group: sequential partition at every level, one
 *                            task per left part, the same kernel and cutoff as the pbs
 *                            schedulers. The like-for-like peer (scheduler "tbb").
 *   pbs_peer_tbb_sort        tbb::parallel_sort: another algorithm (its own splitting and
 *                            grain size, no cutoff), kept as a separately labelled
 *                            reference (scheduler "tbb_parallel_sort").
 */
#include <atomic>
#include <cstdint>
#include <exception>

#include <tbb/global_control.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#include <tbb/version.h>

#include "pbs_peers.h"
extern "C" {
#include "pbs_quicksort.h" /* a C header: the kernel the pbs schedulers and OpenMP share */
}

#define PBS_STR2(x) #x
#define PBS_STR(x) PBS_STR2(x)
#define PBS_TBB_VERSION "oneTBB " PBS_STR(TBB_VERSION_MAJOR) "." PBS_STR(TBB_VERSION_MINOR)

extern "C" bool pbs_peer_tbb_available(void)
{
    return true;
}

extern "C" const char *pbs_peer_tbb_note(void)
{
    return "built with " PBS_TBB_VERSION " (-ltbb): tbb::task_group, sequential partition "
           "at every level, same kernel and cutoff as ws";
}

extern "C" const char *pbs_peer_tbb_sort_note(void)
{
    return "built with " PBS_TBB_VERSION " (-ltbb): tbb::parallel_sort, its own algorithm "
           "and grain size, no cutoff (a reference, not the same quicksort)";
}

namespace {

// The task count is only read after the task group's wait(), which synchronizes with
// every task's end, so relaxed increments suffice: the count needs atomicity, not
// ordering.
void tbb_qs(tbb::task_group &g, uint32_t *a, size_t n, size_t cutoff,
            std::atomic<uint64_t> &tasks)
{
    while (n > cutoff) {
        size_t hi;
        size_t m = pbs_qs_partition(a, n, &hi);
        if (m > 1) {
            tasks.fetch_add(1, std::memory_order_relaxed);
            g.run([&g, a, m, cutoff, &tasks] { tbb_qs(g, a, m, cutoff, tasks); });
        }
        a += hi;
        n -= hi;
    }
    pbs_qs_sort_seq(a, n);
}

} // namespace

extern "C" int pbs_peer_tbb_quicksort(uint32_t *a, size_t n, size_t cutoff, unsigned threads,
                                      uint64_t *tasks_spawned)
{
    try {
        std::atomic<uint64_t> tasks{0};
        // An arena of exactly `threads` slots: the calling thread and threads - 1 workers.
        tbb::task_arena arena(static_cast<int>(threads));
        arena.execute([&] {
            tbb::task_group g;
            tbb_qs(g, a, n, cutoff, tasks);
            g.wait();
        });
        if (tasks_spawned != nullptr)
            *tasks_spawned = tasks.load(std::memory_order_relaxed);
    } catch (const std::exception &) {
        return -1;
    }
    return 0;
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
