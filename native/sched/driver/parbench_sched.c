/*
 * parbench_sched.c - command-line driver of the native scheduler benchmarks.
 *
 *   parbench-sched quicksort  --scheduler S --threads N --size N [--cutoff N]
 *                             [--seed S] [--reps R] [--backoff-min-ns N]
 *                             [--backoff-max-ns N] [--json PATH]
 *   parbench-sched mandelbrot --scheduler S --threads N --width W --height H
 *                             [--threshold PIXELS] [--max-iter I] [--frames F]
 *                             [--image PATH.ppm] [--backoff-min-ns N]
 *                             [--backoff-max-ns N] [--json PATH]
 *   parbench-sched peers
 *   parbench-sched --help
 *
 * stdout carries only "[NN] Time taken: X.XXXXXX seconds" per repetition / frame
 * (or the output of --help / peers); everything else goes to stderr.
 * Exit status: 0 success; 1 verification failed (or the run could not be carried
 * out: memory, threads, files); 2 bad arguments; 3 requested peer not built.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pbs.h"
#include "pbs_cli.h"
#include "pbs_json.h"
#include "pbs_mandel.h"
#include "pbs_peers.h"
#include "pbs_quicksort.h"

#define PROG "parbench-sched"
#define SCHEMA "parbench-sched/1"

enum { EXIT_VERIFY = 1, EXIT_USAGE = PBS_CLI_EXIT_USAGE, EXIT_NO_PEER = 3 };

#define MAX_SIZE 4294967296ull  /* quicksort elements: 2^32 (16 GiB of input) */
#define MAX_SIDE 65536u         /* mandelbrot width / height */
#define MAX_PIXELS (1ull << 28) /* mandelbrot width * height */
#define MAX_REPS 100000u
#define MAX_ITER 100000000u

static const char usage_text[] =
    "usage:\n"
    "  " PROG " quicksort  --scheduler {sequential,lifo,ws,ws_sync,openmp,tbb,tbb_parallel_sort} --threads N\n"
    "                            --size N [--cutoff N] [--seed S] [--reps R]\n"
    "                            [--backoff-min-ns N] [--backoff-max-ns N] [--json PATH]\n"
    "  " PROG " mandelbrot --scheduler {sequential,lifo,ws,ws_sync} --threads N\n"
    "                            --width W --height H [--threshold PIXELS] [--max-iter I]\n"
    "                            [--frames F] [--image PATH.ppm]\n"
    "                            [--backoff-min-ns N] [--backoff-max-ns N] [--json PATH]\n"
    "  " PROG " peers      print which peer runtimes (openmp, tbb, tbb_parallel_sort) were built, as JSON\n"
    "  " PROG " --help\n"
    "\n"
    "quicksort: sorts --size random 32-bit integers (SplitMix64, --seed, default 42;\n"
    "  the seed's size is 104857600) --reps times (default 1); ranges of at most\n"
    "  --cutoff elements (default 16384) are sorted sequentially. Each result is\n"
    "  verified (sorted, and a permutation of the input) outside the timed section.\n"
    "mandelbrot: renders a W x H image --frames times (default 1), splitting it into\n"
    "  tasks of at most --threshold pixels (default 4096), --max-iter iterations\n"
    "  (default 1000); every frame is compared byte for byte with a sequential\n"
    "  reference render. --image writes the last frame as binary PPM (P6).\n"
    "schedulers: sequential (one thread, --threads 1), lifo (shared stack), ws (work\n"
    "  stealing, workers per run), ws_sync (work stealing, persistent workers),\n"
    "  openmp / tbb (peers: the same quicksort on OpenMP tasks / a TBB task_group),\n"
    "  tbb_parallel_sort (tbb::parallel_sort, another algorithm: a reference); quicksort\n"
    "  only, when built.\n"
    "backoff: idle thieves pause from --backoff-min-ns (default 1000) doubling up to\n"
    "  --backoff-max-ns (default 250000) nanoseconds.\n"
    "\n"
    "stdout: one line per repetition or frame: [NN] Time taken: X.XXXXXX seconds\n"
    "--json PATH: a JSON report (parameters, per-repetition times, verification and\n"
    "  per-worker counters).\n"
    "exit status: 0 ok, 1 verification (or run) failed, 2 bad arguments,\n"
    "  3 requested peer not built.\n";

/* ---- small helpers -------------------------------------------------------- */

static void die_run(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die_run(const char *fmt, ...)
{
    va_list ap;
    fputs(PROG ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(EXIT_VERIFY);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *xmalloc(size_t bytes, const char *what)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        die_run("cannot allocate %zu bytes for %s", bytes, what);
    return p;
}

static void print_time(unsigned threads, double seconds)
{
    printf("[%02u] Time taken: %.6f seconds\n", threads, seconds);
    fflush(stdout);
}

/* ---- schedulers ----------------------------------------------------------- */

typedef enum sched_choice {
    SCHED_SEQUENTIAL,
    SCHED_PBS, /* lifo, ws, ws_sync */
    SCHED_OPENMP,
    SCHED_TBB,              /* the OpenMP peer's quicksort on a tbb::task_group */
    SCHED_TBB_PARALLEL_SORT /* tbb::parallel_sort: a reference, another algorithm */
} sched_choice;

typedef struct sched_sel {
    const char *name;
    sched_choice choice;
    pbs_kind kind; /* SCHED_PBS */
} sched_sel;

static sched_sel parse_scheduler(const char *name, bool allow_peers)
{
    sched_sel sel = {name, SCHED_SEQUENTIAL, PBS_WS};
    if (strcmp(name, "sequential") == 0)
        return sel;
    if (pbs_kind_parse(name, &sel.kind) == PBS_OK) {
        sel.choice = SCHED_PBS;
        return sel;
    }
    if (allow_peers && strcmp(name, "openmp") == 0) {
        sel.choice = SCHED_OPENMP;
        return sel;
    }
    if (allow_peers && strcmp(name, "tbb") == 0) {
        sel.choice = SCHED_TBB;
        return sel;
    }
    if (allow_peers && strcmp(name, "tbb_parallel_sort") == 0) {
        sel.choice = SCHED_TBB_PARALLEL_SORT;
        return sel;
    }
    if (allow_peers)
        pbs_cli_die_usage("--scheduler must be one of sequential, lifo, ws, ws_sync, openmp, tbb, "
                          "tbb_parallel_sort "
                  "(got '%s')",
                  name);
    pbs_cli_die_usage("--scheduler must be one of sequential, lifo, ws, ws_sync for mandelbrot "
              "(got '%s')",
              name);
}

static void check_peer_built(const sched_sel *sel)
{
    if (sel->choice == SCHED_OPENMP && !pbs_peer_openmp_available()) {
        fprintf(stderr,
                PROG ": scheduler 'openmp' is not available in this binary: %s\n",
                pbs_peer_openmp_note());
        exit(EXIT_NO_PEER);
    }
    if ((sel->choice == SCHED_TBB || sel->choice == SCHED_TBB_PARALLEL_SORT) &&
        !pbs_peer_tbb_available()) {
        fprintf(stderr, PROG ": scheduler '%s' is not available in this binary: %s\n",
                sel->name, pbs_peer_tbb_note());
        exit(EXIT_NO_PEER);
    }
}

static void check_common(const sched_sel *sel, uint64_t threads, uint64_t bmin,
                         uint64_t bmax)
{
    if (sel->choice == SCHED_SEQUENTIAL && threads != 1)
        pbs_cli_die_usage("--threads must be 1 for --scheduler sequential (got %llu)",
                  (unsigned long long)threads);
    if (bmax < bmin)
        pbs_cli_die_usage("--backoff-max-ns must be >= --backoff-min-ns (%llu) (got %llu)",
                  (unsigned long long)bmin, (unsigned long long)bmax);
}

static pbs_sched *create_pbs(const sched_sel *sel, unsigned threads, uint64_t bmin,
                             uint64_t bmax)
{
    pbs_config cfg;
    pbs_config_default(&cfg, sel->kind, threads);
    cfg.backoff_min_ns = bmin;
    cfg.backoff_max_ns = bmax;
    pbs_sched *s;
    char msg[PBS_MSG_LEN];
    int rc = pbs_create(&s, &cfg, msg, sizeof msg);
    if (rc == PBS_EINVAL)
        pbs_cli_die_usage("%s", msg);
    if (rc != PBS_OK)
        die_run("cannot create the %s scheduler: %s", sel->name, msg);
    return s;
}

/* Counter snapshot of a pbs scheduler (or nothing for the others). */
typedef struct counters {
    bool known_spawned; /* false: null in JSON */
    uint64_t spawned;
    unsigned nworkers;  /* 0: empty per_worker list */
    pbs_worker_stats *w;
} counters;

static void counters_snapshot(pbs_sched *s, counters *c)
{
    c->known_spawned = true;
    c->nworkers = pbs_threads(s);
    c->w = xmalloc(sizeof *c->w * c->nworkers, "counters");
    pbs_stats(s, c->w, &c->spawned);
}

/* after -= before, field by field. */
static void counters_delta(counters *after, const counters *before)
{
    after->spawned -= before->spawned;
    for (unsigned i = 0; i < after->nworkers; i++) {
        after->w[i].tasks_executed -= before->w[i].tasks_executed;
        after->w[i].tasks_spawned -= before->w[i].tasks_spawned;
        after->w[i].steal_success -= before->w[i].steal_success;
        after->w[i].steal_fail_empty -= before->w[i].steal_fail_empty;
        after->w[i].steal_fail_race -= before->w[i].steal_fail_race;
    }
}

static void counters_json(pbs_json *j, const counters *c)
{
    pbs_json_begin_object(j, "counters");
    if (c->known_spawned)
        pbs_json_u64(j, "tasks_spawned", c->spawned);
    else
        pbs_json_null(j, "tasks_spawned");
    pbs_json_begin_array(j, "per_worker");
    for (unsigned i = 0; i < c->nworkers; i++) {
        pbs_json_begin_object(j, NULL);
        pbs_json_u64(j, "worker", i);
        pbs_json_u64(j, "tasks_executed", c->w[i].tasks_executed);
        pbs_json_u64(j, "steal_success", c->w[i].steal_success);
        pbs_json_u64(j, "steal_fail_empty", c->w[i].steal_fail_empty);
        pbs_json_u64(j, "steal_fail_race", c->w[i].steal_fail_race);
        pbs_json_end_object(j);
    }
    pbs_json_end_array(j);
    pbs_json_end_object(j);
}

static FILE *open_json(const char *path)
{
    if (path == NULL)
        return NULL;
    FILE *f = fopen(path, "w");
    if (f == NULL)
        die_run("cannot write --json %s: %s", path, strerror(errno));
    return f;
}

static void close_json(FILE *f, const char *path)
{
    if (f != NULL && fclose(f) != 0)
        die_run("cannot write --json %s: %s", path, strerror(errno));
}

static const char *peer_note(const sched_sel *sel)
{
    if (sel->choice == SCHED_OPENMP)
        return pbs_peer_openmp_note();
    if (sel->choice == SCHED_TBB)
        return pbs_peer_tbb_note();
    if (sel->choice == SCHED_TBB_PARALLEL_SORT)
        return pbs_peer_tbb_sort_note();
    return NULL;
}

/* ---- quicksort ------------------------------------------------------------ */

typedef struct qs_rep {
    double time_s;
    bool sorted, permutation;
    counters c;
} qs_rep;

static int cmd_quicksort(int argc, char **argv)
{
    pbs_cli_opt opts[] = {
        {"scheduler", PBS_CLI_STR, 0, 0, true, false, 0, NULL},
        {"threads", PBS_CLI_UINT, 1, PBS_MAX_THREADS, true, false, 0, NULL},
        {"size", PBS_CLI_UINT, 1, MAX_SIZE, true, false, 0, NULL},
        {"cutoff", PBS_CLI_UINT, 1, MAX_SIZE, false, false, PBS_QS_DEFAULT_CUTOFF, NULL},
        {"seed", PBS_CLI_UINT, 0, UINT64_MAX, false, false, 42, NULL},
        {"reps", PBS_CLI_UINT, 1, MAX_REPS, false, false, 1, NULL},
        {"backoff-min-ns", PBS_CLI_UINT, 1, PBS_BACKOFF_LIMIT_NS, false, false,
         PBS_DEFAULT_BACKOFF_MIN_NS, NULL},
        {"backoff-max-ns", PBS_CLI_UINT, 1, PBS_BACKOFF_LIMIT_NS, false, false,
         PBS_DEFAULT_BACKOFF_MAX_NS, NULL},
        {"json", PBS_CLI_STR, 0, 0, false, false, 0, NULL},
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    pbs_cli_parse("quicksort", argc, argv, opts, nopts);
    sched_sel sel = parse_scheduler(opts[0].s, true);
    unsigned threads = (unsigned)opts[1].u;
    size_t n = (size_t)opts[2].u;
    size_t cutoff = (size_t)opts[3].u;
    uint64_t seed = opts[4].u;
    unsigned reps = (unsigned)opts[5].u;
    uint64_t bmin = opts[6].u, bmax = opts[7].u;
    const char *json_path = opts[8].s;
    check_common(&sel, threads, bmin, bmax);
    check_peer_built(&sel);

    FILE *jf = open_json(json_path); /* fail before the run, not after it */
    uint32_t *input = xmalloc(n * sizeof *input, "the input array");
    uint32_t *work = xmalloc(n * sizeof *work, "the working array");
    pbs_qs_fill_random(input, n, seed);
    const uint64_t input_hash = pbs_qs_multiset_hash(input, n);

    pbs_sched *s = NULL;
    if (sel.choice == SCHED_PBS)
        s = create_pbs(&sel, threads, bmin, bmax);

    qs_rep *r = xmalloc(sizeof *r * reps, "the results");
    bool all_ok = true;
    for (unsigned rep = 0; rep < reps; rep++) {
        memcpy(work, input, n * sizeof *work); /* untimed; also faults pages in */
        counters before = {0};
        r[rep].c = (counters){0};
        if (s != NULL)
            counters_snapshot(s, &before);
        uint64_t peer_tasks = 0;
        int rc = 0;
        double t0 = now_s();
        switch (sel.choice) {
        case SCHED_SEQUENTIAL:
            pbs_qs_sort_seq(work, n);
            break;
        case SCHED_PBS:
            rc = pbs_qs_sort_parallel(s, work, n, cutoff);
            break;
        case SCHED_OPENMP:
            rc = pbs_peer_openmp_quicksort(work, n, cutoff, threads, &peer_tasks);
            break;
        case SCHED_TBB:
            rc = pbs_peer_tbb_quicksort(work, n, cutoff, threads, &peer_tasks);
            break;
        case SCHED_TBB_PARALLEL_SORT:
            rc = pbs_peer_tbb_sort(work, n, threads);
            break;
        }
        double t1 = now_s();
        if (rc != 0)
            fprintf(stderr, PROG ": warning: repetition %u: the %s sort reported: %s\n",
                    rep, sel.name,
                    sel.choice == SCHED_PBS ? pbs_strerror(rc) : "failure");
        r[rep].time_s = t1 - t0;
        print_time(threads, r[rep].time_s);
        /* Verification, untimed. */
        r[rep].sorted = pbs_qs_is_sorted(work, n);
        r[rep].permutation = pbs_qs_multiset_hash(work, n) == input_hash;
        if (!r[rep].sorted || !r[rep].permutation) {
            all_ok = false;
            fprintf(stderr, PROG ": verification failed in repetition %u: %s\n", rep,
                    !r[rep].sorted ? "the output is not sorted"
                                   : "the output is not a permutation of the input");
        }
        switch (sel.choice) {
        case SCHED_SEQUENTIAL:
            r[rep].c.known_spawned = true;
            r[rep].c.spawned = 0;
            break;
        case SCHED_PBS:
            counters_snapshot(s, &r[rep].c);
            counters_delta(&r[rep].c, &before);
            break;
        case SCHED_OPENMP:
            r[rep].c.known_spawned = true;
            r[rep].c.spawned = peer_tasks;
            break;
        case SCHED_TBB:
            r[rep].c.known_spawned = true;
            r[rep].c.spawned = peer_tasks;
            break;
        case SCHED_TBB_PARALLEL_SORT:
            r[rep].c.known_spawned = false;
            break;
        }
        free(before.w);
    }

    if (jf != NULL) {
        pbs_json j;
        pbs_json_init(&j, jf);
        pbs_json_begin_object(&j, NULL);
        pbs_json_str(&j, "schema", SCHEMA);
        pbs_json_str(&j, "workload", "quicksort");
        pbs_json_str(&j, "scheduler", sel.name);
        pbs_json_u64(&j, "threads", threads);
        pbs_json_u64(&j, "size", n);
        pbs_json_u64(&j, "cutoff", cutoff);
        pbs_json_u64(&j, "seed", seed);
        pbs_json_u64(&j, "repetitions", reps);
        pbs_json_u64(&j, "backoff_min_ns", bmin);
        pbs_json_u64(&j, "backoff_max_ns", bmax);
        if (sel.choice == SCHED_PBS) {
            size_t pm = pbs_qs_parallel_partition_min(n, threads, cutoff);
            if (pm == SIZE_MAX)
                pbs_json_null(&j, "parallel_partition_min");
            else
                pbs_json_u64(&j, "parallel_partition_min", pm);
        } else {
            pbs_json_null(&j, "parallel_partition_min");
        }
        pbs_json_str(&j, "peer_note", peer_note(&sel));
        pbs_json_begin_array(&j, "reps");
        for (unsigned rep = 0; rep < reps; rep++) {
            pbs_json_begin_object(&j, NULL);
            pbs_json_u64(&j, "rep", rep);
            pbs_json_f64(&j, "time_s", r[rep].time_s);
            pbs_json_bool(&j, "verified", r[rep].sorted && r[rep].permutation);
            pbs_json_bool(&j, "sorted", r[rep].sorted);
            pbs_json_bool(&j, "permutation", r[rep].permutation);
            counters_json(&j, &r[rep].c);
            pbs_json_end_object(&j);
        }
        pbs_json_end_array(&j);
        pbs_json_bool(&j, "verified", all_ok);
        pbs_json_end_object(&j);
        close_json(jf, json_path);
    }

    for (unsigned rep = 0; rep < reps; rep++)
        free(r[rep].c.w);
    free(r);
    pbs_destroy(s);
    free(work);
    free(input);
    return all_ok ? 0 : EXIT_VERIFY;
}

/* ---- mandelbrot ----------------------------------------------------------- */

typedef struct mb_frame {
    double time_s;
    bool matches;
    counters c;
} mb_frame;

static int cmd_mandelbrot(int argc, char **argv)
{
    pbs_cli_opt opts[] = {
        {"scheduler", PBS_CLI_STR, 0, 0, true, false, 0, NULL},
        {"threads", PBS_CLI_UINT, 1, PBS_MAX_THREADS, true, false, 0, NULL},
        {"width", PBS_CLI_UINT, 1, MAX_SIDE, true, false, 0, NULL},
        {"height", PBS_CLI_UINT, 1, MAX_SIDE, true, false, 0, NULL},
        {"threshold", PBS_CLI_UINT, 1, MAX_PIXELS, false, false, PBS_MANDEL_DEFAULT_THRESHOLD,
         NULL},
        {"max-iter", PBS_CLI_UINT, 1, MAX_ITER, false, false, PBS_MANDEL_DEFAULT_MAX_ITER,
         NULL},
        {"frames", PBS_CLI_UINT, 1, MAX_REPS, false, false, 1, NULL},
        {"image", PBS_CLI_STR, 0, 0, false, false, 0, NULL},
        {"backoff-min-ns", PBS_CLI_UINT, 1, PBS_BACKOFF_LIMIT_NS, false, false,
         PBS_DEFAULT_BACKOFF_MIN_NS, NULL},
        {"backoff-max-ns", PBS_CLI_UINT, 1, PBS_BACKOFF_LIMIT_NS, false, false,
         PBS_DEFAULT_BACKOFF_MAX_NS, NULL},
        {"json", PBS_CLI_STR, 0, 0, false, false, 0, NULL},
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    pbs_cli_parse("mandelbrot", argc, argv, opts, nopts);
    sched_sel sel = parse_scheduler(opts[0].s, false);
    unsigned threads = (unsigned)opts[1].u;
    unsigned width = (unsigned)opts[2].u, height = (unsigned)opts[3].u;
    size_t threshold = (size_t)opts[4].u;
    unsigned max_iter = (unsigned)opts[5].u;
    unsigned frames = (unsigned)opts[6].u;
    const char *image_path = opts[7].s;
    uint64_t bmin = opts[8].u, bmax = opts[9].u;
    const char *json_path = opts[10].s;
    check_common(&sel, threads, bmin, bmax);
    if ((uint64_t)width * height > MAX_PIXELS)
        pbs_cli_die_usage("--width * --height must be <= %llu pixels (got %llu)",
                  (unsigned long long)MAX_PIXELS, (unsigned long long)width * height);

    FILE *jf = open_json(json_path); /* fail before the run, not after it */
    pbs_mandel_params p;
    pbs_mandel_default_view(&p, width, height, max_iter);
    size_t bytes = (size_t)width * height * 3;
    uint8_t *ref = xmalloc(bytes, "the reference image");
    uint8_t *img = xmalloc(bytes, "the image");

    /* Sequential reference, untimed as far as the frames are concerned. */
    memset(ref, 0, bytes);
    double t0 = now_s();
    pbs_mandel_render_seq(&p, ref);
    double seq_time = now_s() - t0;
    fprintf(stderr, PROG ": sequential reference render: %.6f seconds\n", seq_time);

    pbs_sched *s = NULL;
    if (sel.choice == SCHED_PBS)
        s = create_pbs(&sel, threads, bmin, bmax);

    mb_frame *fr = xmalloc(sizeof *fr * frames, "the results");
    bool all_match = true;
    for (unsigned f = 0; f < frames; f++) {
        memset(img, 0, bytes); /* untimed: a frame that renders nothing cannot pass */
        counters before = {0};
        fr[f].c = (counters){0};
        if (s != NULL)
            counters_snapshot(s, &before);
        int rc = 0;
        t0 = now_s();
        if (s != NULL)
            rc = pbs_mandel_render_parallel(s, &p, img, threshold);
        else
            pbs_mandel_render_seq(&p, img);
        double t1 = now_s();
        if (rc != 0)
            fprintf(stderr, PROG ": warning: frame %u: the %s render reported: %s\n", f,
                    sel.name, pbs_strerror(rc));
        fr[f].time_s = t1 - t0;
        print_time(threads, fr[f].time_s);
        fr[f].matches = memcmp(img, ref, bytes) == 0;
        if (!fr[f].matches) {
            all_match = false;
            fprintf(stderr, PROG ": verification failed: frame %u differs from the "
                            "sequential render\n",
                    f);
        }
        if (s != NULL) {
            counters_snapshot(s, &fr[f].c);
            counters_delta(&fr[f].c, &before);
        } else {
            fr[f].c.known_spawned = true;
            fr[f].c.spawned = 0;
        }
        free(before.w);
    }

    if (image_path != NULL && pbs_mandel_write_ppm(image_path, &p, img) != 0)
        die_run("cannot write --image %s: %s", image_path, strerror(errno));

    if (jf != NULL) {
        pbs_json j;
        pbs_json_init(&j, jf);
        pbs_json_begin_object(&j, NULL);
        pbs_json_str(&j, "schema", SCHEMA);
        pbs_json_str(&j, "workload", "mandelbrot");
        pbs_json_str(&j, "scheduler", sel.name);
        pbs_json_u64(&j, "threads", threads);
        pbs_json_u64(&j, "width", width);
        pbs_json_u64(&j, "height", height);
        pbs_json_u64(&j, "threshold", threshold);
        pbs_json_u64(&j, "max_iter", max_iter);
        pbs_json_u64(&j, "frame_count", frames);
        pbs_json_f64(&j, "center_x", p.center_x);
        pbs_json_f64(&j, "center_y", p.center_y);
        pbs_json_f64(&j, "view_width", p.view_width);
        pbs_json_u64(&j, "backoff_min_ns", bmin);
        pbs_json_u64(&j, "backoff_max_ns", bmax);
        pbs_json_str(&j, "image", image_path);
        pbs_json_f64(&j, "sequential_time_s", seq_time);
        pbs_json_begin_array(&j, "frames");
        for (unsigned f = 0; f < frames; f++) {
            pbs_json_begin_object(&j, NULL);
            pbs_json_u64(&j, "frame", f);
            pbs_json_f64(&j, "time_s", fr[f].time_s);
            pbs_json_bool(&j, "matches_sequential", fr[f].matches);
            pbs_json_end_object(&j);
        }
        pbs_json_end_array(&j);
        pbs_json_begin_array(&j, "reps");
        for (unsigned f = 0; f < frames; f++) {
            pbs_json_begin_object(&j, NULL);
            pbs_json_u64(&j, "rep", f);
            pbs_json_f64(&j, "time_s", fr[f].time_s);
            pbs_json_bool(&j, "verified", fr[f].matches);
            counters_json(&j, &fr[f].c);
            pbs_json_end_object(&j);
        }
        pbs_json_end_array(&j);
        pbs_json_bool(&j, "matches_sequential", all_match);
        pbs_json_bool(&j, "verified", all_match);
        pbs_json_end_object(&j);
        close_json(jf, json_path);
    }

    for (unsigned f = 0; f < frames; f++)
        free(fr[f].c.w);
    free(fr);
    pbs_destroy(s);
    free(img);
    free(ref);
    return all_match ? 0 : EXIT_VERIFY;
}

/* ---- peers ---------------------------------------------------------------- */

static int cmd_peers(int argc, char **argv)
{
    (void)argv;
    if (argc > 0)
        pbs_cli_die_usage("peers takes no arguments");
    pbs_json j;
    pbs_json_init(&j, stdout);
    pbs_json_begin_object(&j, NULL);
    pbs_json_begin_object(&j, "openmp");
    pbs_json_bool(&j, "available", pbs_peer_openmp_available());
    pbs_json_str(&j, "note", pbs_peer_openmp_note());
    pbs_json_end_object(&j);
    pbs_json_begin_object(&j, "tbb");
    pbs_json_bool(&j, "available", pbs_peer_tbb_available());
    pbs_json_str(&j, "note", pbs_peer_tbb_note());
    pbs_json_end_object(&j);
    pbs_json_begin_object(&j, "tbb_parallel_sort");
    pbs_json_bool(&j, "available", pbs_peer_tbb_available());
    pbs_json_str(&j, "note", pbs_peer_tbb_sort_note());
    pbs_json_end_object(&j);
    pbs_json_end_object(&j);
    return 0;
}

int main(int argc, char **argv)
{
    pbs_cli_init(PROG);
    if (argc < 2) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
    }
    if (strcmp(cmd, "quicksort") == 0)
        return cmd_quicksort(argc - 2, argv + 2);
    if (strcmp(cmd, "mandelbrot") == 0)
        return cmd_mandelbrot(argc - 2, argv + 2);
    if (strcmp(cmd, "peers") == 0)
        return cmd_peers(argc - 2, argv + 2);
    pbs_cli_die_usage("unknown command '%s' (expected quicksort, mandelbrot or peers)", cmd);
}
