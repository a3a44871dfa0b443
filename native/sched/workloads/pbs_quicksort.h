/*
 * pbs_quicksort.h - the quicksort workload: input generation, a sequential sort,
 * a parallel sort on any pbs scheduler, and verification.
 *
 * Sequential kernel (pbs_qs_sort_seq): introsort, i.e. quicksort with a pivot from
 * a median of three (ninther above 1024 elements), a branch-free Lomuto partition,
 * insertion sort below PBS_QS_INSERTION elements and heapsort when the recursion
 * gets deeper than 2 log2(n) (so no input makes it quadratic). The same kernel
 * sorts the leaves of every parallel version (pbs, OpenMP), so all sides of a
 * comparison share it.
 *
 * Parallel sort (pbs_qs_sort_parallel): tasks split the array like the sequential
 * quicksort and sort ranges of at most `cutoff` elements with the sequential
 * kernel. The top levels (ranges of at least `par_min` elements, where there are
 * fewer ranges than threads) are partitioned in parallel: the range is cut into
 * chunks partitioned by separate tasks, then the elements on the wrong side of the
 * split are exchanged by separate tasks. The phases are chained by continuation
 * counters (the last task of a phase starts the next), so no task ever blocks.
 */
#ifndef PBS_QUICKSORT_H
#define PBS_QUICKSORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pbs.h"

#define PBS_QS_INSERTION 24           /* insertion sort at or below this length */
#define PBS_QS_DEFAULT_CUTOFF 16384   /* default sequential cutoff (elements) */
#define PBS_QS_DEFAULT_SIZE 104857600 /* the seed's N: 10 * 10 Mi elements */
#define PBS_QS_MAX_CHUNKS 64          /* chunks of one parallel partition, at most */
#define PBS_QS_MIN_CHUNK 32768        /* elements per chunk, at least */

/* Fill a[0..n) with uniformly distributed 32-bit values from SplitMix64(seed). */
void pbs_qs_fill_random(uint32_t *a, size_t n, uint64_t seed);

/* Order-independent checksum of the multiset of values: sum of a 64-bit mix of each
 * value, plus n. Equal for any permutation; different inputs collide with
 * probability about 2^-64. */
uint64_t pbs_qs_multiset_hash(const uint32_t *a, size_t n);

bool pbs_qs_is_sorted(const uint32_t *a, size_t n);

/* Sequential introsort (the kernel described above). */
void pbs_qs_sort_seq(uint32_t *a, size_t n);

/* The kernel with an explicit depth budget: after `depth` partition levels it
 * switches to heapsort (0: heapsort at once). For tests. */
void pbs_qs_sort_seq_budget(uint32_t *a, size_t n, unsigned depth);

/* One partition step of the kernel. Afterwards [0, m) holds the elements to sort on
 * the left, [m, *hi) elements equal to the pivot (already in place, usually empty)
 * and [*hi, n) the elements to sort on the right. Both sides are shorter than n
 * (m < n and *hi >= 1), so recursion always makes progress. Requires n >= 2.
 * Returns m. */
size_t pbs_qs_partition(uint32_t *a, size_t n, size_t *hi);

/* The `par_min` used by pbs_qs_sort_parallel for n elements on `threads` workers:
 * ranges at least this long are partitioned in parallel. SIZE_MAX when threads is 1
 * (a parallel partition only adds work then). */
size_t pbs_qs_parallel_partition_min(size_t n, unsigned threads, size_t cutoff);

/* Sort a[0..n) on scheduler s: spawn the root task and pbs_wait(). cutoff >= 1.
 * Returns PBS_OK or the error of pbs_spawn/pbs_wait (the array is then sorted
 * sequentially, so it is sorted in any case). */
int pbs_qs_sort_parallel(pbs_sched *s, uint32_t *a, size_t n, size_t cutoff);

#endif /* PBS_QUICKSORT_H */
