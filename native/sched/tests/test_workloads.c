/*
 * test_workloads.c - the workloads against trusted references:
 *   the sequential quicksort kernel and the parallel quicksort (every scheduler,
 *   1..4 workers, with and without parallel partitions) against qsort() on random,
 *   sorted, reversed, equal-key, few-distinct-key and sawtooth inputs;
 *   the checksum and sortedness checks the driver relies on;
 *   the parallel Mandelbrot render against the sequential one, byte for byte, on
 *   odd sizes and thresholds, several frames per scheduler; the PPM writer.
 */
#include <stdint.h>
#include <unistd.h>

#include "pbs.h"
#include "pbs_mandel.h"
#include "pbs_prng.h"
#include "pbs_quicksort.h"
#include "pbs_test.h"

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

enum pattern { RANDOM, SORTED, REVERSED, EQUAL, FEW, SAWTOOTH, NPATTERNS };
static const char *const pattern_names[] = {"random", "sorted",   "reversed",
                                            "equal",  "few-keys", "sawtooth"};

static void fill(uint32_t *a, size_t n, enum pattern p, uint64_t seed)
{
    pbs_qs_fill_random(a, n, seed);
    for (size_t i = 0; i < n; i++) {
        switch (p) {
        case RANDOM:
            break;
        case SORTED:
            a[i] = (uint32_t)i * 3u;
            break;
        case REVERSED:
            a[i] = (uint32_t)(n - i);
            break;
        case EQUAL:
            a[i] = 42;
            break;
        case FEW:
            a[i] %= 4;
            break;
        case SAWTOOTH:
            a[i] = (uint32_t)(i % 1000);
            break;
        default:
            break;
        }
    }
}

static uint32_t *reference(const uint32_t *a, size_t n)
{
    uint32_t *r = malloc(n * sizeof *r + 1);
    PBS_CHECK(r != NULL);
    memcpy(r, a, n * sizeof *r);
    qsort(r, n, sizeof *r, cmp_u32);
    return r;
}

static void test_checks(void)
{
    uint32_t a[6] = {5, 1, 4, 1, 3, 9};
    uint32_t b[6] = {1, 1, 3, 4, 5, 9};
    PBS_CHECK(!pbs_qs_is_sorted(a, 6));
    PBS_CHECK(pbs_qs_is_sorted(b, 6));
    PBS_CHECK(pbs_qs_is_sorted(b, 0));
    PBS_CHECK_EQ(pbs_qs_multiset_hash(a, 6), pbs_qs_multiset_hash(b, 6));
    b[2] = 2; /* still sorted, no longer a permutation */
    PBS_CHECK(pbs_qs_multiset_hash(a, 6) != pbs_qs_multiset_hash(b, 6));
    b[2] = 3;
    b[5] = 1; /* duplicate one value, drop another */
    PBS_CHECK(pbs_qs_multiset_hash(a, 6) != pbs_qs_multiset_hash(b, 6));
    /* The generator is deterministic. */
    uint32_t x[5], y[5];
    pbs_qs_fill_random(x, 5, 7);
    pbs_qs_fill_random(y, 5, 7);
    PBS_CHECK(memcmp(x, y, sizeof x) == 0);
    pbs_qs_fill_random(y, 5, 8);
    PBS_CHECK(memcmp(x, y, sizeof x) != 0);
}

static void test_partition_step(void)
{
    const size_t sizes[] = {2, 3, 10, 100, 5000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int p = 0; p < NPATTERNS; p++) {
            size_t n = sizes[si];
            uint32_t *a = malloc(n * sizeof *a);
            fill(a, n, (enum pattern)p, n);
            size_t hi, m = pbs_qs_partition(a, n, &hi);
            PBS_CHECK(m <= hi && hi <= n);
            PBS_CHECK(m < n && hi >= 1); /* both sides shorter than n */
            /* left <= middle (all equal) <= right */
            uint32_t lmax = 0, rmin = UINT32_MAX;
            for (size_t i = 0; i < m; i++)
                lmax = a[i] > lmax ? a[i] : lmax;
            for (size_t i = hi; i < n; i++)
                rmin = a[i] < rmin ? a[i] : rmin;
            for (size_t i = m; i < hi; i++) {
                PBS_CHECK(a[i] == a[m]);
                PBS_CHECK(m == 0 || lmax <= a[i]);
                PBS_CHECK(hi == n || a[i] <= rmin);
            }
            PBS_CHECK(m == 0 || hi == n || lmax <= rmin);
            free(a);
        }
    }
}

static void test_sequential_kernel(void)
{
    const size_t sizes[] = {0, 1, 2, 3, 24, 25, 100, 1000, 65537};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int p = 0; p < NPATTERNS; p++) {
            size_t n = sizes[si];
            uint32_t *a = malloc(n * sizeof *a + 1);
            fill(a, n, (enum pattern)p, 1000 + n);
            uint32_t *r = reference(a, n);
            uint32_t *h = malloc(n * sizeof *h + 1);
            memcpy(h, a, n * sizeof *h);
            pbs_qs_sort_seq(a, n);
            PBS_CHECK(memcmp(a, r, n * sizeof *a) == 0);
            pbs_qs_sort_seq_budget(h, n, 0); /* heapsort path */
            PBS_CHECK(memcmp(h, r, n * sizeof *h) == 0);
            free(a);
            free(r);
            free(h);
        }
    }
}

static pbs_sched *make(pbs_kind kind, unsigned threads)
{
    pbs_config cfg;
    pbs_config_default(&cfg, kind, threads);
    pbs_sched *s;
    char msg[PBS_MSG_LEN];
    if (pbs_create(&s, &cfg, msg, sizeof msg) != PBS_OK) {
        fprintf(stderr, "pbs_create: %s\n", msg);
        exit(1);
    }
    return s;
}

static void test_parallel_quicksort(void)
{
    /* 300000 elements with cutoff 1000 take the parallel-partition path from 2
     * threads on (par_min = max(1.5 n / threads, 65536, 4 cutoff)). */
    const size_t big = pbs_test_quick ? 150000 : 300000;
    const size_t sizes[] = {0, 1, 1000, 5001, big};
    for (int k = 0; k < PBS_TEST_NKINDS; k++) {
        for (unsigned t = 1; t <= PBS_TEST_MAX_THREADS; t++) {
            pbs_sched *s = make(pbs_test_kinds[k], t);
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                for (int p = 0; p < NPATTERNS; p++) {
                    size_t n = sizes[si];
                    if (pbs_test_quick && n == big && p != RANDOM && p != EQUAL &&
                        p != FEW)
                        continue;
                    uint32_t *a = malloc(n * sizeof *a + 1);
                    fill(a, n, (enum pattern)p, 77 + n + (uint64_t)p);
                    uint32_t *r = reference(a, n);
                    uint64_t before;
                    pbs_stats(s, NULL, &before);
                    PBS_CHECK_EQ(pbs_qs_sort_parallel(s, a, n, 1000), PBS_OK);
                    if (memcmp(a, r, n * sizeof *a) != 0) {
                        fprintf(stderr, "%s, %u threads, n=%zu, %s: wrong result\n",
                                pbs_kind_name(pbs_test_kinds[k]), t, n,
                                pattern_names[p]);
                        exit(1);
                    }
                    /* Counters add up after each sort. */
                    pbs_worker_stats w[PBS_TEST_MAX_THREADS];
                    uint64_t spawned, executed = 0;
                    pbs_stats(s, w, &spawned);
                    for (unsigned i = 0; i < t; i++)
                        executed += w[i].tasks_executed;
                    PBS_CHECK_EQ(executed, spawned);
                    PBS_CHECK(n <= 1 || spawned > before);
                    free(a);
                    free(r);
                }
            }
            pbs_destroy(s);
        }
    }
    PBS_CHECK_EQ(pbs_qs_parallel_partition_min(1000000, 1, 100), SIZE_MAX);
    PBS_CHECK_EQ(pbs_qs_parallel_partition_min(1000000, 2, 100), 750000);
}

static void test_mandelbrot_matches_sequential(void)
{
    const unsigned dims[][2] = {{1, 1}, {7, 3}, {64, 48}, {203, 101}};
    const size_t thresholds[] = {1, 7, 4096};
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
        pbs_mandel_params p;
        pbs_mandel_default_view(&p, dims[d][0], dims[d][1], pbs_test_quick ? 100 : 400);
        size_t bytes = (size_t)p.width * p.height * 3;
        uint8_t *ref = malloc(bytes), *img = malloc(bytes);
        pbs_mandel_render_seq(&p, ref);
        for (int k = 0; k < PBS_TEST_NKINDS; k++) {
            for (unsigned t = 1; t <= 3; t++) {
                pbs_sched *s = make(pbs_test_kinds[k], t);
                for (size_t th = 0; th < sizeof thresholds / sizeof thresholds[0]; th++) {
                    for (int frame = 0; frame < 2; frame++) {
                        memset(img, 0xAB, bytes);
                        PBS_CHECK_EQ(pbs_mandel_render_parallel(s, &p, img, thresholds[th]),
                                     PBS_OK);
                        PBS_CHECK(memcmp(img, ref, bytes) == 0);
                    }
                }
                pbs_destroy(s);
            }
        }
        free(ref);
        free(img);
    }
}

static void test_mandelbrot_image(void)
{
    pbs_mandel_params p;
    pbs_mandel_default_view(&p, 32, 20, 200);
    uint8_t img[32 * 20 * 3];
    pbs_mandel_render_seq(&p, img);
    /* Not a flat image: the palette is actually used. */
    int distinct = 0;
    for (size_t i = 3; i < sizeof img; i += 3)
        distinct += memcmp(img + i, img, 3) != 0;
    PBS_CHECK(distinct > 0);
    char path[] = "/tmp/pbs_test_ppm_XXXXXX";
    int fd = mkstemp(path);
    PBS_CHECK(fd >= 0);
    close(fd);
    PBS_CHECK_EQ(pbs_mandel_write_ppm(path, &p, img), 0);
    FILE *f = fopen(path, "rb");
    PBS_CHECK(f != NULL);
    char head[16] = "";
    size_t got = fread(head, 1, 13, f);
    PBS_CHECK_EQ(got, 13);
    PBS_CHECK(memcmp(head, "P6\n32 20\n255\n", 13) == 0);
    uint8_t back[sizeof img];
    PBS_CHECK_EQ(fread(back, 1, sizeof back, f), sizeof back);
    PBS_CHECK(memcmp(back, img, sizeof img) == 0);
    fclose(f);
    unlink(path);
    PBS_CHECK_EQ(pbs_mandel_write_ppm("/nonexistent-dir/x.ppm", &p, img), -1);
}

int main(int argc, char **argv)
{
    pbs_test_init(argc, argv);
    PBS_RUN(test_checks);
    PBS_RUN(test_partition_step);
    PBS_RUN(test_sequential_kernel);
    PBS_RUN(test_parallel_quicksort);
    PBS_RUN(test_mandelbrot_matches_sequential);
    PBS_RUN(test_mandelbrot_image);
    return 0;
}
