/*
 * pbs_peer_openmp.c - the OpenMP-tasks quicksort peer. Compiled with -fopenmp when
 * the compiler supports it; without it (_OPENMP undefined) only the stubs remain.
 */
#include "pbs_peers.h"
#include "pbs_quicksort.h"

#ifdef _OPENMP
#include <omp.h>
#include <stdio.h>

#define PBS_STR2(x) #x
#define PBS_STR(x) PBS_STR2(x)

bool pbs_peer_openmp_available(void)
{
    return true;
}

const char *pbs_peer_openmp_note(void)
{
    return "built with -fopenmp (_OPENMP " PBS_STR(_OPENMP) "): OpenMP tasks, "
           "sequential partition at every level, same kernel and cutoff as ws";
}

static void pbs_omp_qs(uint32_t *a, size_t n, size_t cutoff, uint64_t *tasks)
{
    while (n > cutoff) {
        size_t hi;
        size_t m = pbs_qs_partition(a, n, &hi);
        if (m > 1) {
            /* Counting the task: an atomic add per task, a few thousand in all. */
#pragma omp atomic
            (*tasks)++;
#pragma omp task firstprivate(a, m, cutoff, tasks)
            pbs_omp_qs(a, m, cutoff, tasks);
        }
        a += hi;
        n -= hi;
    }
    pbs_qs_sort_seq(a, n);
}

int pbs_peer_openmp_quicksort(uint32_t *a, size_t n, size_t cutoff, unsigned threads,
                              uint64_t *tasks_spawned)
{
    uint64_t tasks = 0;
#pragma omp parallel num_threads((int)threads) shared(tasks)
#pragma omp single nowait
    pbs_omp_qs(a, n, cutoff, &tasks);
    /* The implicit barrier at the end of the parallel region waits for all tasks. */
    if (tasks_spawned != NULL)
        *tasks_spawned = tasks;
    return 0;
}

#else /* !_OPENMP */

bool pbs_peer_openmp_available(void)
{
    return false;
}

const char *pbs_peer_openmp_note(void)
{
    return "not built: the compiler did not accept OpenMP; install " PBS_PEER_OPENMP_PACKAGE
           " and rebuild";
}

int pbs_peer_openmp_quicksort(uint32_t *a, size_t n, size_t cutoff, unsigned threads,
                              uint64_t *tasks_spawned)
{
    (void)a;
    (void)n;
    (void)cutoff;
    (void)threads;
    (void)tasks_spawned;
    return -1;
}

#endif
