/*
 * pbs_test.h - a tiny test harness for the C tests: checks that stay active with
 * NDEBUG, a --quick flag for the sanitizer runs, and a per-case progress line.
 */
#ifndef PBS_TEST_H
#define PBS_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bool pbs_test_quick; /* smaller sizes (sanitizer builds) */

#define PBS_CHECK(cond)                                                                 \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

#define PBS_CHECK_EQ(a, b)                                                              \
    do {                                                                                \
        uint64_t pbs_a_ = (uint64_t)(a), pbs_b_ = (uint64_t)(b);                        \
        if (pbs_a_ != pbs_b_) {                                                         \
            fprintf(stderr, "%s:%d: check failed: %s == %s (%" PRIu64 " != %" PRIu64 ")\n", \
                    __FILE__, __LINE__, #a, #b, pbs_a_, pbs_b_);                        \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static inline void pbs_test_init(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            pbs_test_quick = true;
        } else {
            fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
            exit(2);
        }
    }
}

static inline double pbs_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Run one case and print its name and duration. */
#define PBS_RUN(fn)                                                                     \
    do {                                                                                \
        double pbs_t0_ = pbs_test_now();                                                \
        fn();                                                                           \
        printf("ok   %-44s %7.3f s\n", #fn, pbs_test_now() - pbs_t0_);                  \
        fflush(stdout);                                                                 \
    } while (0)

static const pbs_kind pbs_test_kinds[] = {PBS_LIFO, PBS_WS, PBS_WS_SYNC};
#define PBS_TEST_NKINDS 3
#define PBS_TEST_MAX_THREADS 4 /* every test runs with 1 .. 4 workers */

#endif /* PBS_TEST_H */
