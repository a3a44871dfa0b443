/* gil_control: the gil study's native control. The seed's chunks of sum(range(n)), each
 * `repeat` times, run sequentially and in POSIX threads with no interpreter in the way:
 * what two (or N) threads gain on this machine at the run length of the study's runs,
 * measured in the same run as the Python runtimes, so that a reader sees whether a
 * runtime or the machine caps a thread speedup.
 *
 * It speaks the worker script's protocol (src/parbench/studies/gil/worker.py):
 *
 *     gil-control WORKER.py SPEC.json OUT.json
 *
 * WORKER.py is ignored (the cell passes it to every runtime). SPEC is the worker's JSON
 * spec; only the keys this program needs are read (kind, workload, chunks, params.n,
 * params.repeat, configs, warmup_runs, repetitions). OUT gets the worker's JSON document:
 * per (execution, workers) point its warm-up and timed runs with wall and CPU seconds and
 * every chunk's result, which parbench checks against sum(range(n)) * repeat.
 *
 * Executions: sequential (every chunk in the main thread) and threads (`workers` threads
 * started and joined inside the timed region, chunks dealt round-robin, as the worker
 * does). Processes and the workloads other than sum_range are reported unavailable.
 *
 * The loop adds every integer below n through an empty asm statement that claims to
 * change the accumulator, so the compiler can neither fold the sum into n(n-1)/2 nor
 * vectorize it: one dependent add per element, as a plain native loop does it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define GC_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define GC_COMPILER "gcc " __VERSION__
#else
#define GC_COMPILER "C"
#endif

#if defined(__linux__)
#define GC_PLATFORM "linux"
#elif defined(__APPLE__)
#define GC_PLATFORM "darwin"
#else
#define GC_PLATFORM "posix"
#endif

#define GC_MAX_CONFIGS 64
#define GC_MAX_CHUNKS 100000

typedef struct {
    char execution[16];
    int workers;
} gc_config;

typedef struct {
    char kind[32];
    char workload[64];
    long chunks, n, repeat, warmup, reps;
    int nconfigs;
    gc_config configs[GC_MAX_CONFIGS];
} gc_spec;

typedef struct {
    double wall, cpu;
    long long *results;
} gc_run;

typedef struct {
    const gc_spec *spec;
    int worker, workers;
    long long *results;
} gc_task;

/* --- reading the spec: the worker's JSON, known keys only ---------------------------- */

static const char *gc_value(const char *text, const char *key) {
    /* the character after `"key":` and its blanks, or NULL */
    char quoted[80];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *at = text;
    while ((at = strstr(at, quoted)) != NULL) {
        const char *p = at + strlen(quoted);
        while (*p == ' ' || *p == '\n' || *p == '\t') p++;
        if (*p == ':') {
            p++;
            while (*p == ' ' || *p == '\n' || *p == '\t') p++;
            return p;
        }
        at = p;
    }
    return NULL;
}

static int gc_long(const char *text, const char *key, long *out) {
    const char *p = gc_value(text, key);
    char *end;
    if (!p) return -1;
    errno = 0;
    *out = strtol(p, &end, 10);
    return (end == p || errno) ? -1 : 0;
}

static int gc_string(const char *text, const char *key, char *out, size_t size) {
    const char *p = gc_value(text, key);
    if (!p || *p != '"') return -1;
    const char *end = strchr(p + 1, '"');
    if (!end || (size_t)(end - p - 1) >= size) return -1;
    memcpy(out, p + 1, (size_t)(end - p - 1));
    out[end - p - 1] = '\0';
    return 0;
}

static int gc_configs(const char *text, gc_spec *spec) {
    /* "configs": [["sequential", 1], ["threads", 2], ...] */
    const char *p = gc_value(text, "configs");
    if (!p || *p != '[') return -1;
    p++;
    spec->nconfigs = 0;
    for (;;) {
        while (*p == ' ' || *p == ',' || *p == '\n') p++;
        if (*p == ']') return 0;
        if (*p != '[' || spec->nconfigs == GC_MAX_CONFIGS) return -1;
        gc_config *c = &spec->configs[spec->nconfigs++];
        const char *q = strchr(p, '"'), *e = q ? strchr(q + 1, '"') : NULL;
        if (!e || (size_t)(e - q - 1) >= sizeof c->execution) return -1;
        memcpy(c->execution, q + 1, (size_t)(e - q - 1));
        c->execution[e - q - 1] = '\0';
        p = strchr(e, ',');
        if (!p) return -1;
        c->workers = (int)strtol(p + 1, (char **)&p, 10);
        p = strchr(p, ']');
        if (!p || c->workers < 1) return -1;
        p++;
    }
}

static int gc_read_spec(const char *path, gc_spec *spec) {
    FILE *fh = fopen(path, "r");
    if (!fh) return -1;
    static char text[1 << 16];
    size_t got = fread(text, 1, sizeof text - 1, fh);
    fclose(fh);
    text[got] = '\0';
    memset(spec, 0, sizeof *spec);
    if (gc_string(text, "kind", spec->kind, sizeof spec->kind) || gc_string(text, "workload", spec->workload,
                                                                            sizeof spec->workload) ||
        gc_long(text, "chunks", &spec->chunks) || gc_long(text, "warmup_runs", &spec->warmup) ||
        gc_long(text, "repetitions", &spec->reps) || gc_configs(text, spec))
        return -1;
    if (strcmp(spec->kind, "sum_range") == 0 && (gc_long(text, "n", &spec->n) || gc_long(text, "repeat", &spec->repeat)))
        return -1;
    return (spec->chunks < 1 || spec->chunks > GC_MAX_CHUNKS || spec->warmup < 0 || spec->reps < 1) ? -1 : 0;
}

/* --- the work -------------------------------------------------------------------------- */

static long long gc_chunk(long n, long repeat) {
    long long total = 0;
    for (long r = 0; r < repeat; r++) {
        for (long i = 0; i < n; i++) {
            total += i;
            __asm__ volatile("" : "+r"(total)); /* the compiler may not fold or vectorize the sum */
        }
    }
    return total;
}

static void *gc_worker(void *arg) {
    gc_task *t = arg;
    for (long i = t->worker; i < t->spec->chunks; i += t->workers)
        t->results[i] = gc_chunk(t->spec->n, t->spec->repeat);
    return NULL;
}

static double gc_clock(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int gc_run_once(const gc_spec *spec, const gc_config *c, gc_run *run) {
    run->results = calloc((size_t)spec->chunks, sizeof *run->results);
    if (!run->results) return -1;
    double cpu0 = gc_clock(CLOCK_PROCESS_CPUTIME_ID);
    double t0 = gc_clock(CLOCK_MONOTONIC);
    if (strcmp(c->execution, "sequential") == 0) {
        for (long i = 0; i < spec->chunks; i++) run->results[i] = gc_chunk(spec->n, spec->repeat);
    } else {
        pthread_t threads[1024];
        gc_task tasks[1024];
        int workers = c->workers > 1024 ? 1024 : c->workers;
        int started = 0;
        for (; started < workers; started++) {
            tasks[started] = (gc_task){spec, started, workers, run->results};
            if (pthread_create(&threads[started], NULL, gc_worker, &tasks[started]) != 0) break;
        }
        /* every thread that started is joined, also when a later one could not start */
        for (int w = 0; w < started; w++) pthread_join(threads[w], NULL);
        if (started < workers) return -1;
    }
    run->wall = gc_clock(CLOCK_MONOTONIC) - t0;
    run->cpu = gc_clock(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    return 0;
}

static void gc_free(gc_run *runs, long count) {
    for (long i = 0; i < count; i++) free(runs[i].results);
    free(runs);
}

static double gc_cpu_step(void) {
    /* the smallest step seen between distinct readings of the CPU clock (at most 0.25 s) */
    double best = -1, end = gc_clock(CLOCK_MONOTONIC) + 0.25, last = gc_clock(CLOCK_PROCESS_CPUTIME_ID);
    int seen = 0;
    while (seen < 5 && gc_clock(CLOCK_MONOTONIC) < end) {
        double now = gc_clock(CLOCK_PROCESS_CPUTIME_ID);
        if (now != last) {
            if (best < 0 || now - last < best) best = now - last;
            last = now;
            seen++;
        }
    }
    return best;
}

/* --- the output ------------------------------------------------------------------------ */

static void gc_print_runs(FILE *out, const gc_spec *spec, gc_run *runs, long count) {
    fputc('[', out);
    for (long r = 0; r < count; r++) {
        fprintf(out, "%s{\"rep\": %ld, \"wall_sec\": %.9f, \"cpu_sec\": %.9f, \"jit_sec\": null, \"results\": [",
                r ? ", " : "", r, runs[r].wall, runs[r].cpu);
        for (long i = 0; i < spec->chunks; i++) fprintf(out, "%s%lld", i ? ", " : "", runs[r].results[i]);
        fputs("]}", out);
    }
    fputc(']', out);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: gil-control WORKER.py SPEC.json OUT.json\n");
        return 2;
    }
    gc_spec spec;
    if (gc_read_spec(argv[2], &spec) != 0) {
        fprintf(stderr, "gil-control: cannot read the spec %s (kind, workload, chunks, params.n, params.repeat, "
                        "configs, warmup_runs, repetitions)\n", argv[2]);
        return 2;
    }
    int sum = strcmp(spec.kind, "sum_range") == 0;
    long total = spec.warmup + spec.reps;
    gc_run *runs = calloc((size_t)(spec.nconfigs * total), sizeof *runs);
    if (!runs) return 1;
    /* warm-up rounds, then the timed runs round-robin over the points, as the worker does */
    for (long k = 0; k < total && sum; k++)
        for (int c = 0; c < spec.nconfigs; c++)
            if (strcmp(spec.configs[c].execution, "processes") != 0 &&
                gc_run_once(&spec, &spec.configs[c], &runs[c * total + k]) != 0) {
                fprintf(stderr, "gil-control: a run failed to start its threads\n");
                gc_free(runs, (long)spec.nconfigs * total);
                return 1;
            }
    double step = gc_cpu_step();
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
#ifdef __linux__
    cpu_set_t set; /* the CPUs this process may run on (a cpuset or taskset may hold fewer) */
    if (sched_getaffinity(0, sizeof set, &set) == 0) cores = CPU_COUNT(&set);
#endif
    FILE *out = fopen(argv[3], "w");
    if (!out) {
        fprintf(stderr, "gil-control: cannot write %s\n", argv[3]);
        gc_free(runs, (long)spec.nconfigs * total);
        return 1;
    }
    fprintf(out, "{\"worker_version\": 3, \"workload\": \"%s\", \"kind\": \"%s\", \"runtime\": {"
                 "\"implementation\": \"native\", \"version\": \"%s\", \"sys_version\": \"C, POSIX threads\", "
                 "\"executable\": \"%s\", \"platform\": \"%s\", \"host_version\": null, \"gil_enabled\": false, "
                 "\"free_threaded_build\": null, \"python_gil_env\": null, \"cores_available\": %d, "
                 "\"cpu_count\": %ld}, \"wall_clock\": \"clock_gettime(CLOCK_MONOTONIC)\", "
                 "\"cpu_clock\": \"clock_gettime(CLOCK_PROCESS_CPUTIME_ID)\", \"jit_clock\": null, "
                 "\"cpu_clock_resolution_sec\": ",
            spec.workload, spec.kind, GC_COMPILER, argv[0], GC_PLATFORM, cores, sysconf(_SC_NPROCESSORS_ONLN));
    if (step > 0) fprintf(out, "%.9f", step); else fputs("null", out);
    fprintf(out, ", \"children_cpu_resolution_sec\": null, \"warmup_rounds\": %ld, \"jit_quiet\": null, "
                 "\"start_method\": null, \"configs\": [", spec.warmup);
    for (int c = 0; c < spec.nconfigs; c++) {
        const char *why = !sum ? "the native control implements only the sum_range workloads"
                          : strcmp(spec.configs[c].execution, "processes") == 0
                              ? "the native control measures threads only"
                              : NULL;
        fprintf(out, "%s{\"execution\": \"%s\", \"workers\": %d, \"status\": \"%s\", \"reason\": ", c ? ", " : "",
                spec.configs[c].execution, spec.configs[c].workers, why ? "unavailable" : "ok");
        if (why) fprintf(out, "\"%s\"", why); else fputs("null", out);
        fputs(", \"warmup\": ", out);
        gc_print_runs(out, &spec, &runs[c * total], why ? 0 : spec.warmup);
        fputs(", \"runs\": ", out);
        gc_print_runs(out, &spec, &runs[c * total + spec.warmup], why ? 0 : spec.reps);
        fputc('}', out);
    }
    fputs("]}\n", out);
    int rc = fclose(out) == 0 ? 0 : 1;
    gc_free(runs, (long)spec.nconfigs * total);
    return rc;
}
