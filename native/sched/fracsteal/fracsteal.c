/*
 * fracsteal.c - the seed's interactive fractal explorer: the Mandelbrot set rendered
 * frame by frame on the synchronizing work-stealing scheduler (PBS_WS_SYNC), in an
 * SDL2 window or, with --script, headlessly.
 *
 *   fracsteal [--width W] [--height H] [--threads N] [--max-iter I]
 *             [--threshold PIXELS] [--scheme NAME]
 *   fracsteal --script FILE [--out DIR] [--save-frames N] [--json PATH] [same options]
 *   fracsteal --help
 *
 * Built twice from the same sources (native/sched/fracsteal/Makefile): `fracsteal`
 * with the window (FS_WITH_SDL2=1, needs Debian's libsdl2-dev) and
 * `fracsteal-headless` without it, which runs scripts everywhere.
 *
 * Exit status: 0 ok; 1 a frame differed from the sequential render, or the run
 * could not be carried out (memory, threads, files, no display); 2 bad arguments or
 * script; 3 a window was asked of a build without SDL2.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs_headless.h"
#include "fs_scheme.h"
#include "fs_view.h"
#include "pbs.h"
#include "pbs_mandel.h"

#if FS_WITH_SDL2
#include "fs_window.h"
#endif

#define FS_PROG "fracsteal"
#define FS_MAX_SIDE 16384u
#define FS_MAX_PIXELS (1ull << 26) /* 64 Mi pixels: two frames of 192 MiB */

enum { FS_EXIT_RUN = 1, FS_EXIT_USAGE = 2, FS_EXIT_NO_WINDOW = 3 };

static void fs_usage(FILE *f)
{
    fputs("usage:\n"
          "  " FS_PROG " [--width W] [--height H] [--threads N] [--max-iter I]\n"
          "            [--threshold PIXELS] [--scheme NAME]\n"
          "  " FS_PROG " --script FILE [--out DIR] [--save-frames N] [--json PATH]\n"
          "            [--width W] [--height H] [--threads N] [--max-iter I] ...\n"
          "  " FS_PROG " --help\n"
          "\n"
          "Explores the Mandelbrot set in a window. Every frame is rendered by tasks on the\n"
          "synchronizing work-stealing scheduler (ws_sync of native/sched): one persistent\n"
          "scheduler, one wait per frame; a task halves its rectangle until it has at most\n"
          "--threshold pixels, as in the sched study's Mandelbrot benchmark. The frame time\n"
          "is shown on screen; press s to see the sequential render's time beside it.\n"
          "\n"
          "options:\n"
          "  --width W, --height H   picture size in pixels (default 960 x 540)\n"
          "  --threads N             worker threads (default: the online CPUs)\n"
          "  --max-iter I            iterations per point (default 1000)\n"
          "  --threshold PIXELS      pixels per leaf task (default 4096)\n"
          "  --scheme NAME           colour scheme: seahorse, ember, glacier, orchid, mono\n"
          "  --script FILE           no window: render the moves and zooms of FILE, each\n"
          "                          frame also sequentially, compared byte for byte\n"
          "  --out DIR               scripted mode: write the frames (PPM) and frames.csv\n"
          "  --save-frames N         scripted mode: write only N frames, spread evenly\n"
          "  --json PATH             scripted mode: a JSON report of every frame\n"
          "\n"
          "keys and mouse (window):\n",
          f);
    for (unsigned i = 0; i < fs_key_help_count; i++)
        fprintf(f, "  %s\n", fs_key_help[i]);
    fputs("\n"
          "script commands (one per line, # starts a comment; see native/sched/README.md):\n"
          "  view CX CY WIDTH | iterations N | scheme NAME | frame | move DX DY\n"
          "  drag DX DY | zoom F [X Y] | zoomto CX CY WIDTH N | repeat N COMMAND\n"
          "\n"
          "exit status: 0 ok, 1 a frame differed from the sequential render (or the run\n"
          "  failed), 2 bad arguments or script, 3 no window in this build (no SDL2).\n",
          f);
}

static void fs_die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void fs_die_usage(const char *fmt, ...)
{
    va_list ap;
    fputs(FS_PROG ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n" FS_PROG ": see '" FS_PROG " --help'\n", stderr);
    exit(FS_EXIT_USAGE);
}

static unsigned long long fs_uint(const char *name, const char *text, unsigned long long lo,
                                  unsigned long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0')
        fs_die_usage("--%s must be an integer (got '%s')", name, text);
    if (errno == ERANGE)
        fs_die_usage("--%s must be between %llu and %llu (got %s)", name, lo, hi, text);
    if (v < (long long)lo)
        fs_die_usage("--%s must be >= %llu (got %lld)", name, lo, v);
    if ((unsigned long long)v > hi)
        fs_die_usage("--%s must be <= %llu (got %lld)", name, hi, v);
    return (unsigned long long)v;
}

static unsigned fs_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    return n > (long)PBS_MAX_THREADS ? PBS_MAX_THREADS : (unsigned)n;
}

int main(int argc, char **argv)
{
    fs_headless_opts o = {
        .script_path = NULL,
        .out_dir = NULL,
        .json_path = NULL,
        .save_frames = -1,
        .threads = fs_default_threads(),
        .width = 960,
        .height = 540,
        .max_iter = PBS_MANDEL_DEFAULT_MAX_ITER,
        .scheme = 0,
        .threshold = PBS_MANDEL_DEFAULT_THRESHOLD,
    };
    const char *scripted_only = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fs_usage(stdout);
            return 0;
        }
        if (strncmp(arg, "--", 2) != 0)
            fs_die_usage("unexpected argument '%s'", arg);
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        char key[32];
        if (len >= sizeof key)
            fs_die_usage("unknown option '--%.*s'", (int)len, name);
        memcpy(key, name, len);
        key[len] = '\0';
        const char *value;
        if (eq != NULL) {
            value = eq + 1;
        } else {
            if (i + 1 >= argc)
                fs_die_usage("--%s needs a value", key);
            value = argv[++i];
        }
        if (strcmp(key, "width") == 0)
            o.width = (unsigned)fs_uint(key, value, 1, FS_MAX_SIDE);
        else if (strcmp(key, "height") == 0)
            o.height = (unsigned)fs_uint(key, value, 1, FS_MAX_SIDE);
        else if (strcmp(key, "threads") == 0)
            o.threads = (unsigned)fs_uint(key, value, 1, PBS_MAX_THREADS);
        else if (strcmp(key, "max-iter") == 0)
            o.max_iter = (unsigned)fs_uint(key, value, 1, FS_MAX_ITER);
        else if (strcmp(key, "threshold") == 0)
            o.threshold = (size_t)fs_uint(key, value, 1, FS_MAX_PIXELS);
        else if (strcmp(key, "scheme") == 0) {
            int k = fs_scheme_parse(value);
            if (k < 0)
                fs_die_usage("--scheme must be one of seahorse, ember, glacier, orchid, mono "
                             "(got '%s')",
                             value);
            o.scheme = (unsigned)k;
        } else if (strcmp(key, "script") == 0)
            o.script_path = value;
        else if (strcmp(key, "out") == 0)
            o.out_dir = value, scripted_only = "--out";
        else if (strcmp(key, "json") == 0)
            o.json_path = value, scripted_only = "--json";
        else if (strcmp(key, "save-frames") == 0)
            o.save_frames = (long)fs_uint(key, value, 0, 1000000), scripted_only = "--save-frames";
        else
            fs_die_usage("unknown option '--%s'", key);
    }
    if ((unsigned long long)o.width * o.height > FS_MAX_PIXELS)
        fs_die_usage("--width * --height must be <= %llu pixels (got %llu)",
                     (unsigned long long)FS_MAX_PIXELS, (unsigned long long)o.width * o.height);
    if (o.script_path != NULL)
        return fs_headless_run(&o);
    if (scripted_only != NULL)
        fs_die_usage("%s needs --script (it belongs to the scripted mode)", scripted_only);
#if FS_WITH_SDL2
    fs_window_opts w = {o.width, o.height, o.threads, o.max_iter, o.scheme, o.threshold};
    return fs_window_run(&w);
#else
    fprintf(stderr,
            FS_PROG ": this build has no window: it was built without SDL2. Install it\n"
            "  (Debian/Ubuntu: sudo apt-get install libsdl2-dev) and build the explorer with\n"
            "  make -C native/sched/fracsteal; the scripted mode works here: " FS_PROG
            " --script FILE\n");
    return FS_EXIT_NO_WINDOW;
#endif
}
