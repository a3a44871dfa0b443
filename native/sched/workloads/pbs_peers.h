/*
 * pbs_peers.h - quicksorts of other runtimes, compared with the pbs schedulers in
 * the same binary. Each is compiled only when the machine has the runtime (the
 * Makefile probes for it); otherwise a stub reports it as unavailable.
 *
 *   OpenMP  gcc -fopenmp (Apple clang: -Xpreprocessor -fopenmp with Homebrew's libomp);
 *           a plain OpenMP-task quicksort: sequential partition at
 *           every level (also the top one), one task per left part, the same
 *           sequential kernel and cutoff as the pbs quicksort.
 *   TBB     oneTBB (C++, Debian package libtbb-dev or Homebrew's tbb, -ltbb): the OpenMP
 *           peer's quicksort on a tbb::task_group (the like-for-like peer), and
 *           tbb::parallel_sort, another algorithm with its own grain size and no
 *           cutoff, as a separately labelled reference.
 */
#ifndef PBS_PEERS_H
#define PBS_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What to install when a peer is missing, in the words of the platform's package manager */
#if defined(__APPLE__)
#define PBS_PEER_OPENMP_PACKAGE "Homebrew's libomp (brew install libomp; Apple clang has no OpenMP runtime)"
#define PBS_PEER_TBB_PACKAGE "Homebrew's tbb (brew install tbb)"
#else
#define PBS_PEER_OPENMP_PACKAGE "the Debian package libgcc-12-dev (omp.h and libgomp for gcc -fopenmp)"
#define PBS_PEER_TBB_PACKAGE "the Debian package libtbb-dev"
#endif

bool pbs_peer_openmp_available(void);
/* A sentence on how the peer was built, or why it was not. */
const char *pbs_peer_openmp_note(void);
/* Sort a[0..n) with `threads` OpenMP threads; *tasks_spawned receives the number of
 * OpenMP tasks created. 0 on success, -1 if not built. */
int pbs_peer_openmp_quicksort(uint32_t *a, size_t n, size_t cutoff, unsigned threads,
                              uint64_t *tasks_spawned);

bool pbs_peer_tbb_available(void);
const char *pbs_peer_tbb_note(void);
const char *pbs_peer_tbb_sort_note(void);
/* Sort a[0..n) with the OpenMP peer's quicksort on a tbb::task_group in an arena of
 * `threads` threads; *tasks_spawned receives the number of tasks created.
 * 0 on success, -1 if not built or TBB failed. */
int pbs_peer_tbb_quicksort(uint32_t *a, size_t n, size_t cutoff, unsigned threads,
                           uint64_t *tasks_spawned);
/* Sort a[0..n) with tbb::parallel_sort limited to `threads` threads (the reference).
 * 0 on success, -1 if not built or TBB failed. */
int pbs_peer_tbb_sort(uint32_t *a, size_t n, unsigned threads);

#ifdef __cplusplus
}
#endif

#endif /* PBS_PEERS_H */
