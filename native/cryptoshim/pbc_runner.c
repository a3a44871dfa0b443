/* pbc_runner.c - parbench-sigpar-native: a sigpar cell with no Python in the loop.
 *
 *   parbench-sigpar-native --scheme ecdsa --param SHA256 --operation sign --workers 2 \
 *       --warmup 0.25 --duration 2 --window 1.5 --sample-interval 0.25 \
 *       --max-latency-samples 1024 --private-key k.der --public-key p.der \
 *       --message msg.bin [--signature sig.bin] [--cpus "0;1"] --json out.json
 *
 * N POSIX threads each build a signer of their own (pbc_signer.h: keys parsed and
 * contexts prepared outside the timed loop), pin themselves to their planned CPUs
 * (Linux; macOS has no per-core pinning and says so in each worker's pin_note),
 * wait on a barrier with the main thread, then run the same timed loop as sigpar's
 * Python harness (src/parbench/studies/sigpar/harness.py), with the same timeline:
 *
 *     0 .... warmup .... run_start ........................................ run_end
 *                           |<-(d-w)/2->| window start ... window end |<-(d-w)/2->|
 *
 * Every thread calls the operation from 0 to run_end; an operation counts when it
 * completes inside [window_start, window_end). The loop per operation: two monotonic
 * clock reads, the call, one store of the latency, one comparison with the next event;
 * snapshots, window marks and the results kept for the check happen only when an
 * operation completes past the next event time.
 *
 * After the loop, outside the timed part, each thread checks what it measured: a sign
 * thread verifies the signatures it kept; a verify thread checks that every
 * verification it kept succeeded; every thread checks that a signature with one bit
 * flipped is rejected.
 *
 * Output: right after the barrier releases, "started <unix time>" on stdout (the
 * parent marks the energy window from it); at the end, the JSON record of every
 * worker (--json), in the layout the Python harness's workers report.
 * Exit status: 0 measured (the JSON says whether the checks passed); 2 bad arguments;
 * 3 a signer could not be made (bad key, unknown method); 1 anything else.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__APPLE__)
#include <mach/mach.h>
#endif

#include "pbc_signer.h"

#define PBC_KEEP_OUTPUTS 64
#define PBC_MAX_WORKERS 1024
#define PBC_MAX_CPUS 256

static const char *prog = "parbench-sigpar-native";

typedef struct {
    double timestamp;   /* wall clock, seconds since the epoch */
    long ops_total;     /* operations completed since the start barrier */
    long analysis_ops;  /* operations counted in the window so far */
    long rss_bytes;     /* the process's resident memory, -1 when unknown */
} pbc_snapshot;

typedef struct {
    /* what every worker shares (read-only once the threads start) */
    const char *scheme, *param;
    int sign;
    double warmup, duration, window, interval;
    long max_latency_samples;
    int collect_latencies, collect_memory;
    uint8_t *private_key, *public_key, *message, *signature;
    size_t private_key_len, public_key_len, message_len, signature_len;
    struct pbc_barrier *barrier;
} pbc_config;

typedef struct {
    int id;
    const pbc_config *cfg;
    int cpus[PBC_MAX_CPUS];
    int ncpus;
    int pinned;
    char pin_note[160];
    char error[320];
    pthread_t thread;
    /* measured */
    double start_wall;
    long ops_total, window_first, window_stop;   /* -1: not reached */
    double cpu_first, cpu_stop, wall_first, wall_stop;
    double *latencies;
    size_t latencies_cap;
    pbc_snapshot *snapshots;
    size_t nsnapshots, snapshots_cap;
    uint8_t *kept[PBC_KEEP_OUTPUTS];             /* sign: signatures kept for the check */
    size_t kept_len[PBC_KEEP_OUTPUTS];
    int kept_ok[PBC_KEEP_OUTPUTS];               /* verify: whether each kept call succeeded */
    int nkept;
    /* checked after the loop */
    int checked, failed, tamper_rejected;
    double *sample;                              /* window latencies kept, seconds */
    size_t nsample, window_count;
    long rss_sum, rss_n;
} pbc_worker;

static double now_mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_wall(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now_thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The process's resident memory now, in bytes; -1 where this system does not say.
 * Linux: /proc/self/statm (pages). macOS: task_info's resident_size (getrusage only
 * gives the peak, not the current value the snapshots track). */
static long rss_bytes(void) {
#if defined(__linux__)
    FILE *f = fopen("/proc/self/statm", "r");
    long size, resident;
    if (!f)
        return -1;
    int n = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    return n == 2 ? resident * sysconf(_SC_PAGESIZE) : -1;
#elif defined(__APPLE__)
    mach_task_basic_info_data_t info;
    mach_msg_type_number_t count = MACH_TASK_BASIC_INFO_COUNT;
    if (task_info(mach_task_self(), MACH_TASK_BASIC_INFO, (task_info_t)&info, &count) != KERN_SUCCESS)
        return -1;
    return (long)info.resident_size;
#else
    return -1;
#endif
}

/* --- the start barrier ------------------------------------------------------------------
 * pthread_barrier_t is an optional part of POSIX that macOS does not provide, so the
 * runner has its own: a mutex, a condition variable and a generation count. Every
 * thread's writes before pbc_barrier_wait happen before every thread's reads after it:
 * the last thread in takes the mutex after all the others released it, and each waiter
 * takes it again before it returns (the mutex orders memory; no atomics here). The
 * generation tells a woken waiter that its round is over, so spurious wake-ups and a
 * reused barrier are both safe. */

typedef struct pbc_barrier {
    pthread_mutex_t mutex;
    pthread_cond_t released;
    unsigned count, waiting, generation;
} pbc_barrier;

static int pbc_barrier_init(pbc_barrier *b, unsigned count) {
    int rc = pthread_mutex_init(&b->mutex, NULL);
    if (rc)
        return rc;
    rc = pthread_cond_init(&b->released, NULL);
    if (rc) {
        pthread_mutex_destroy(&b->mutex);
        return rc;
    }
    b->count = count;
    b->waiting = 0;
    b->generation = 0;
    return 0;
}

static void pbc_barrier_wait(pbc_barrier *b) {
    pthread_mutex_lock(&b->mutex);
    unsigned generation = b->generation;
    if (++b->waiting == b->count) {
        b->waiting = 0;
        b->generation++;
        pthread_cond_broadcast(&b->released);
    } else {
        while (generation == b->generation)
            pthread_cond_wait(&b->released, &b->mutex);
    }
    pthread_mutex_unlock(&b->mutex);
}

static void pbc_barrier_destroy(pbc_barrier *b) {
    pthread_cond_destroy(&b->released);
    pthread_mutex_destroy(&b->mutex);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "%s: out of memory (%zu bytes)\n", prog, n);
        exit(1);
    }
    return p;
}

static void *xrealloc(void *p, size_t n) {
    p = realloc(p, n);
    if (!p) {
        fprintf(stderr, "%s: out of memory (%zu bytes)\n", prog, n);
        exit(1);
    }
    return p;
}

/* --- the events of the timed loop (the Python harness's _Events) ------------------- */

typedef struct {
    double window_start, window_end, run_end, next_sample;
} pbc_events;

static double next_event_time(const pbc_events *e, const pbc_worker *w) {
    double t = e->next_sample < e->run_end ? e->next_sample : e->run_end;
    if (w->window_first < 0 && e->window_start < t)
        t = e->window_start;
    else if (w->window_first >= 0 && w->window_stop < 0 && e->window_end < t)
        t = e->window_end;
    return t;
}

static long counted(const pbc_worker *w, long n) {
    if (w->window_first < 0)
        return 0;
    return (w->window_stop < 0 ? n : w->window_stop) - w->window_first;
}

/* Handle every event due at `now`, when the n-th operation has just completed with
 * `out` (a signature) or `ok` (a verification). Returns the next event time, or a
 * negative number when the run is over. */
static double fire(pbc_events *e, pbc_worker *w, double now, long n, const uint8_t *out, size_t out_len, int ok) {
    if (w->window_first < 0 && now >= e->window_start) {
        /* this operation completed inside the window: the first one counted */
        w->window_first = n - 1;
        w->cpu_first = now_thread_cpu();
        w->wall_first = now;
    }
    if (w->window_first >= 0 && w->window_stop < 0 && now >= e->window_end) {
        /* this operation completed after the window: counting stops before it */
        w->window_stop = n - 1;
        w->cpu_stop = now_thread_cpu();
        w->wall_stop = now;
    }
    if (now >= e->next_sample || now >= e->run_end) {
        if (w->nsnapshots == w->snapshots_cap) {
            w->snapshots_cap = w->snapshots_cap ? 2 * w->snapshots_cap : 64;
            w->snapshots = xrealloc(w->snapshots, w->snapshots_cap * sizeof *w->snapshots);
        }
        long rss = w->cfg->collect_memory ? rss_bytes() : -1;
        w->snapshots[w->nsnapshots++] = (pbc_snapshot){now_wall(), n, counted(w, n), rss};
        if (rss >= 0) {
            w->rss_sum += rss;
            w->rss_n++;
        }
        if (w->nkept < PBC_KEEP_OUTPUTS) {
            if (out) {
                w->kept[w->nkept] = xmalloc(out_len);
                memcpy(w->kept[w->nkept], out, out_len);
                w->kept_len[w->nkept] = out_len;
            }
            w->kept_ok[w->nkept] = ok;
            w->nkept++;
        }
        while (e->next_sample <= now)
            e->next_sample += w->cfg->interval;
    }
    if (now >= e->run_end)
        return -1.0;
    return next_event_time(e, w);
}

/* --- one worker ---------------------------------------------------------------------- */

/* Pin the calling thread to its planned CPUs. Linux only: macOS has no way to bind a
 * thread to a core (its affinity tags are hints the scheduler may ignore, and Apple
 * silicon ignores them), so there the worker runs unpinned and its pin_note says why. */
static void pin(pbc_worker *w) {
    if (w->ncpus == 0)
        return;
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < w->ncpus; i++)
        CPU_SET(w->cpus[i], &set);
    int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (rc == 0)
        w->pinned = 1;
    else
        snprintf(w->pin_note, sizeof w->pin_note, "pthread_setaffinity_np failed: %s", strerror(rc));
#elif defined(__APPLE__)
    snprintf(w->pin_note, sizeof w->pin_note,
             "macOS has no per-core pinning (affinity tags are only hints); the thread ran unpinned");
#else
    snprintf(w->pin_note, sizeof w->pin_note, "pinning is implemented for Linux only; the thread ran unpinned");
#endif
}

static void push_latency(pbc_worker *w, long n, double latency) {
    if ((size_t)n >= w->latencies_cap) {
        w->latencies_cap = w->latencies_cap ? 2 * w->latencies_cap : 65536;
        w->latencies = xrealloc(w->latencies, w->latencies_cap * sizeof *w->latencies);
    }
    w->latencies[n] = latency;
}

static void run_loop(pbc_worker *w, pbc_signer *s) {
    const pbc_config *c = w->cfg;
    size_t cap = pbc_max_signature(s);
    uint8_t *sig = xmalloc(cap);
    w->start_wall = now_wall();
    double t0 = now_mono();
    pbc_events e = {t0 + c->warmup + (c->duration - c->window) / 2, 0, t0 + c->warmup + c->duration, t0 + c->interval};
    e.window_end = e.window_start + c->window;
    double next = next_event_time(&e, w);
    long n = 0;
    for (;;) {
        size_t len = cap;
        double a = now_mono();
        int rc = c->sign ? pbc_sign(s, c->message, c->message_len, sig, &len)
                         : pbc_verify(s, c->message, c->message_len, c->signature, c->signature_len);
        double b = now_mono();
        if (rc == PBC_ERROR) {
            snprintf(w->error, sizeof w->error, "operation %ld failed: %s", n + 1, pbc_signer_error(s));
            break;
        }
        if (c->collect_latencies)
            push_latency(w, n, b - a);
        n++;
        if (b >= next) {
            next = fire(&e, w, b, n, c->sign ? sig : NULL, len, rc == PBC_OK);
            if (next < 0)
                break;
        }
    }
    w->ops_total = n;
    free(sig);
}

/* One bit flipped in the middle byte: what the Python harness tampers with. */
static int tampered_rejected(pbc_signer *s, const pbc_config *c, const uint8_t *sig, size_t len) {
    if (len == 0)
        return 0;
    uint8_t *t = xmalloc(len);
    memcpy(t, sig, len);
    t[len / 2] ^= 0x01;
    int rc = pbc_verify(s, c->message, c->message_len, t, len);
    free(t);
    return rc == PBC_INVALID;
}

static void check(pbc_worker *w, pbc_signer *s) {
    const pbc_config *c = w->cfg;
    w->checked = w->nkept;
    if (c->sign) {
        for (int i = 0; i < w->nkept; i++)
            if (pbc_verify(s, c->message, c->message_len, w->kept[i], w->kept_len[i]) != PBC_OK)
                w->failed++;
        if (w->nkept)
            w->tamper_rejected = tampered_rejected(s, c, w->kept[w->nkept - 1], w->kept_len[w->nkept - 1]);
        else
            w->tamper_rejected = tampered_rejected(s, c, c->signature, c->signature_len);
    } else {
        for (int i = 0; i < w->nkept; i++)
            if (!w->kept_ok[i])
                w->failed++;
        w->tamper_rejected = tampered_rejected(s, c, c->signature, c->signature_len);
    }
}

/* splitmix64: the seeded generator of the latency sample */
static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* At most max_latency_samples of the window's latencies, uniformly without replacement
 * (a partial Fisher-Yates shuffle of the window's slice, seeded by the worker id). */
static void sample_window(pbc_worker *w) {
    if (!w->cfg->collect_latencies || w->window_first < 0 || w->window_stop < 0)
        return;
    size_t count = (size_t)(w->window_stop - w->window_first);
    double *slice = w->latencies + w->window_first;
    size_t k = count < (size_t)w->cfg->max_latency_samples ? count : (size_t)w->cfg->max_latency_samples;
    uint64_t state = (uint64_t)w->id;
    for (size_t i = 0; i < k; i++) {
        size_t j = i + (size_t)(splitmix64(&state) % (count - i));
        double tmp = slice[i];
        slice[i] = slice[j];
        slice[j] = tmp;
    }
    w->window_count = count;
    w->sample = slice;
    w->nsample = k;
}

static void *worker_main(void *arg) {
    pbc_worker *w = arg;
    const pbc_config *c = w->cfg;
    char err[256];
    pin(w);
    pbc_signer *s = pbc_signer_new(c->scheme, c->param, c->private_key, c->private_key_len, c->public_key,
                                   c->public_key_len, err, sizeof err);
    if (!s)
        snprintf(w->error, sizeof w->error, "cannot make the signer: %s", err);
    /* every thread reaches the barrier, so that a failed one never blocks the others */
    pbc_barrier_wait(c->barrier);
    if (!s)
        return NULL;
    run_loop(w, s);
    if (!w->error[0]) {
        check(w, s);
        sample_window(w);
    }
    pbc_signer_free(s);
    return NULL;
}

/* --- arguments and files ------------------------------------------------------------- */

static void usage(FILE *out) {
    fprintf(out,
            "usage: %s --scheme rsa-pss|ecdsa|eddsa|liboqs [--param P] --operation sign|verify\n"
            "       --workers N --warmup SEC --duration SEC --window SEC --sample-interval SEC\n"
            "       --max-latency-samples K [--no-latencies] [--no-memory]\n"
            "       --private-key FILE --public-key FILE --message FILE [--signature FILE]\n"
            "       [--cpus 'LIST;LIST;...'] --json OUT\n"
            "Runs one sigpar cell with N POSIX threads; see the comment at the top of pbc_runner.c.\n",
            prog);
}

static void bad(const char *fmt, const char *value, const char *allowed) {
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, value);
    if (allowed)
        fprintf(stderr, "; allowed: %s", allowed);
    fputc('\n', stderr);
    exit(2);
}

static double parse_seconds(const char *name, const char *v, int positive) {
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end || x < 0 || (positive && x <= 0)) {
        char buf[96];
        snprintf(buf, sizeof buf, "%s %%s is not a number of seconds", name);
        bad(buf, v, positive ? "> 0" : ">= 0");
    }
    return x;
}

static long parse_count(const char *name, const char *v, long lo, long hi) {
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi) {
        char buf[96], range[64];
        snprintf(buf, sizeof buf, "%s %%s is out of range", name);
        snprintf(range, sizeof range, "%ld..%ld", lo, hi);
        bad(buf, v, range);
    }
    return x;
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot read %s: %s\n", prog, path, strerror(errno));
        exit(2);
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = xmalloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = xrealloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

/* "0,1;2;" -> per-worker CPU lists (worker i gets list i % count; empty = unpinned) */
static void parse_cpus(const char *spec, pbc_worker *workers, int n) {
    char *copy = strdup(spec), *save = NULL;
    int lists = 0;
    int cpus[PBC_MAX_WORKERS][8];
    int ncpus[PBC_MAX_WORKERS] = {0};
    for (char *item = strtok_r(copy, ";", &save); item && lists < PBC_MAX_WORKERS; item = strtok_r(NULL, ";", &save)) {
        char *save2 = NULL;
        for (char *c = strtok_r(item, ",", &save2); c && ncpus[lists] < 8; c = strtok_r(NULL, ",", &save2))
            cpus[lists][ncpus[lists]++] = (int)parse_count("--cpus entry", c, 0, PBC_MAX_CPUS - 1);
        lists++;
    }
    free(copy);
    for (int i = 0; i < n && lists; i++) {
        workers[i].ncpus = ncpus[i % lists];
        memcpy(workers[i].cpus, cpus[i % lists], sizeof(int) * (size_t)workers[i].ncpus);
    }
}

/* --- JSON output --------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_number_or_null(FILE *f, int have, double x) {
    if (have)
        fprintf(f, "%.9g", x);
    else
        fputs("null", f);
}

static void write_worker(FILE *f, const pbc_worker *w) {
    int window = w->window_first >= 0 && w->window_stop >= 0;
    fprintf(f, "{\"worker_id\": %d, ", w->id);
    if (w->error[0]) {
        fputs("\"error\": ", f);
        json_string(f, w->error);
        fputs("}", f);
        return;
    }
    fputs("\"pinned_cpus\": [", f);
    for (int i = 0; w->pinned && i < w->ncpus; i++)
        fprintf(f, "%s%d", i ? ", " : "", w->cpus[i]);
    fputs("], \"pin_note\": ", f);
    if (w->pin_note[0])
        json_string(f, w->pin_note);
    else
        fputs("null", f);
    fprintf(f, ", \"ops_total\": %ld, \"analysis_ops\": %ld, ", w->ops_total,
            window ? w->window_stop - w->window_first : 0L);
    fputs("\"cpu_time_window_sec\": ", f);
    json_number_or_null(f, window, w->cpu_stop - w->cpu_first);
    fputs(", \"wall_window_sec\": ", f);
    json_number_or_null(f, window, w->wall_stop - w->wall_first);
    fputs(", \"cpu_utilization\": ", f);
    json_number_or_null(f, window && w->wall_stop > w->wall_first,
                        (w->cpu_stop - w->cpu_first) / (w->wall_stop - w->wall_first));
    fputs(", \"avg_rss_bytes\": ", f);
    json_number_or_null(f, w->rss_n > 0, w->rss_n ? (double)w->rss_sum / (double)w->rss_n : 0);
    fprintf(f, ", \"window_latency_count\": %zu, \"latencies_ms\": [", w->window_count);
    for (size_t i = 0; i < w->nsample; i++)
        fprintf(f, "%s%.9g", i ? ", " : "", w->sample[i] * 1e3);
    fputs("], \"snapshots\": [", f);
    for (size_t i = 0; i < w->nsnapshots; i++) {
        const pbc_snapshot *s = &w->snapshots[i];
        fprintf(f, "%s{\"timestamp\": %.6f, \"ops_total\": %ld, \"analysis_ops\": %ld, \"rss_bytes\": ",
                i ? ", " : "", s->timestamp, s->ops_total, s->analysis_ops);
        if (s->rss_bytes >= 0)
            fprintf(f, "%ld}", s->rss_bytes);
        else
            fputs("null}", f);
    }
    fprintf(f, "], \"start_wall\": %.6f, \"correctness\": {\"checked\": %d, \"failed\": %d, "
               "\"tamper_rejected\": %s}}",
            w->start_wall, w->checked, w->failed, w->tamper_rejected ? "true" : "false");
}

static int write_json(const char *path, const pbc_worker *workers, int n, const char *library, double started) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, tmp, strerror(errno));
        return 0;
    }
    fputs("{\"runner\": \"parbench-sigpar-native\", \"library\": ", f);
    json_string(f, library);
    fprintf(f, ", \"started_wall\": %.6f, \"workers\": [\n", started);
    for (int i = 0; i < n; i++) {
        write_worker(f, &workers[i]);
        fputs(i + 1 < n ? ",\n" : "\n", f);
    }
    fputs("]}\n", f);
    int ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
        return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    pbc_config c = {.collect_latencies = 1, .collect_memory = 1, .max_latency_samples = 1024,
                    .warmup = -1, .duration = -1, .window = -1, .interval = -1};
    const char *operation = NULL, *json = NULL, *cpus = "";
    const char *private_path = NULL, *public_path = NULL, *message_path = NULL, *signature_path = NULL;
    long workers_n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--no-latencies")) {
            c.collect_latencies = 0;
            continue;
        }
        if (!strcmp(a, "--no-memory")) {
            c.collect_memory = 0;
            continue;
        }
        if (i + 1 >= argc)
            bad("%s needs a value", a, NULL);
        const char *v = argv[++i];
        if (!strcmp(a, "--scheme")) c.scheme = v;
        else if (!strcmp(a, "--param")) c.param = v;
        else if (!strcmp(a, "--operation")) operation = v;
        else if (!strcmp(a, "--workers")) workers_n = parse_count("--workers", v, 1, PBC_MAX_WORKERS);
        else if (!strcmp(a, "--warmup")) c.warmup = parse_seconds("--warmup", v, 0);
        else if (!strcmp(a, "--duration")) c.duration = parse_seconds("--duration", v, 1);
        else if (!strcmp(a, "--window")) c.window = parse_seconds("--window", v, 1);
        else if (!strcmp(a, "--sample-interval")) c.interval = parse_seconds("--sample-interval", v, 1);
        else if (!strcmp(a, "--max-latency-samples")) c.max_latency_samples = parse_count("--max-latency-samples", v, 1, 100000000);
        else if (!strcmp(a, "--private-key")) private_path = v;
        else if (!strcmp(a, "--public-key")) public_path = v;
        else if (!strcmp(a, "--message")) message_path = v;
        else if (!strcmp(a, "--signature")) signature_path = v;
        else if (!strcmp(a, "--cpus")) cpus = v;
        else if (!strcmp(a, "--json")) json = v;
        else bad("unknown option %s", a, "see --help");
    }
    if (!c.scheme) bad("%s--scheme is required", "", "rsa-pss, ecdsa, eddsa, liboqs");
    if (!operation || (strcmp(operation, "sign") && strcmp(operation, "verify")))
        bad("--operation %s is not allowed", operation ? operation : "(missing)", "sign, verify");
    c.sign = !strcmp(operation, "sign");
    if (!workers_n) bad("%s--workers is required", "", ">= 1");
    if (c.warmup < 0 || c.duration < 0 || c.window < 0 || c.interval < 0)
        bad("%s--warmup, --duration, --window and --sample-interval are required", "", NULL);
    if (c.window > c.duration) {
        char v[64];
        snprintf(v, sizeof v, "%g", c.window);
        bad("--window %s is longer than --duration", v, "0 < window <= duration");
    }
    if (!private_path || !public_path || !message_path || !json)
        bad("%s--private-key, --public-key, --message and --json are required", "", NULL);
    if (!c.sign && !signature_path) bad("%s--signature is required to verify", "", NULL);
    c.private_key = read_file(private_path, &c.private_key_len);
    c.public_key = read_file(public_path, &c.public_key_len);
    c.message = read_file(message_path, &c.message_len);
    if (signature_path)
        c.signature = read_file(signature_path, &c.signature_len);

    /* check the keys once here, so that a bad key is one clear error, not N */
    char err[256];
    pbc_signer *probe = pbc_signer_new(c.scheme, c.param, c.private_key, c.private_key_len, c.public_key,
                                       c.public_key_len, err, sizeof err);
    if (!probe) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 3;
    }
    char library[96];
    snprintf(library, sizeof library, "%s", pbc_signer_library(probe));
    if (!signature_path) {
        /* the tamper check needs a signature even before the loop made one */
        c.signature_len = pbc_max_signature(probe);
        c.signature = xmalloc(c.signature_len);
        if (pbc_sign(probe, c.message, c.message_len, c.signature, &c.signature_len) != PBC_OK) {
            fprintf(stderr, "%s: %s\n", prog, pbc_signer_error(probe));
            return 3;
        }
    }
    pbc_signer_free(probe);

    int n = (int)workers_n;
    pbc_worker *workers = calloc((size_t)n, sizeof *workers);
    if (!workers) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 1;
    }
    parse_cpus(cpus, workers, n);
    pbc_barrier barrier;
    int brc = pbc_barrier_init(&barrier, (unsigned)n + 1);
    if (brc) {
        fprintf(stderr, "%s: cannot make the start barrier: %s\n", prog, strerror(brc));
        return 1;
    }
    c.barrier = &barrier;
    for (int i = 0; i < n; i++) {
        workers[i].id = i;
        workers[i].cfg = &c;
        workers[i].window_first = workers[i].window_stop = -1;
        int rc = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
        if (rc) {
            fprintf(stderr, "%s: cannot start thread %d: %s\n", prog, i, strerror(rc));
            return 1;
        }
    }
    pbc_barrier_wait(&barrier);
    double started = now_wall();
    printf("started %.6f\n", started);
    fflush(stdout);
    for (int i = 0; i < n; i++)
        pthread_join(workers[i].thread, NULL);
    pbc_barrier_destroy(&barrier);

    int ok = write_json(json, workers, n, library, started);
    long total = 0;
    for (int i = 0; i < n; i++)
        total += workers[i].ops_total;
    printf("finished %ld operations in %d threads\n", total, n);
    for (int i = 0; i < n; i++) {
        free(workers[i].latencies);
        free(workers[i].snapshots);
        for (int k = 0; k < workers[i].nkept; k++)
            free(workers[i].kept[k]);
    }
    free(workers);
    free(c.private_key);
    free(c.public_key);
    free(c.message);
    free(c.signature);
    return ok ? 0 : 1;
}
