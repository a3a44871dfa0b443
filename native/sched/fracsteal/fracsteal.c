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
/* sysconf(_SC_NPROCESSORS_ONLN) is not POSIX: glibc declares it under the Makefile's
 * -D_POSIX_C_SOURCE, macOS hides it unless _DARWIN_C_SOURCE asks for its extensions. */
#if defined(__APPLE__) && !defined(_DARWIN_C_SOURCE)
#define _DARWIN_C_SOURCE
#endif
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
#include "pbs_cli.h"
#include "pbs_mandel.h"

#if FS_WITH_SDL2
#include "fs_window.h"
#endif

#define FS_PROG "fracsteal"
#define FS_MAX_SIDE 16384u
#define FS_MAX_PIXELS (1ull << 26) /* 64 Mi pixels: two frames of 192 MiB */

enum { FS_EXIT_RUN = 1, FS_EXIT_USAGE = PBS_CLI_EXIT_USAGE, FS_EXIT_NO_WINDOW = 3 };

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

static unsigned fs_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    return n > (long)PBS_MAX_THREADS ? PBS_MAX_THREADS : (unsigned)n;
}

int main(int argc, char **argv)
{
    pbs_cli_init(FS_PROG);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fs_usage(stdout);
            return 0;
        }
    }
    /* u: the default where the option is not given */
    pbs_cli_opt opts[] = {
        {"width", PBS_CLI_UINT, 1, FS_MAX_SIDE, false, false, 960, NULL},
        {"height", PBS_CLI_UINT, 1, FS_MAX_SIDE, false, false, 540, NULL},
        {"threads", PBS_CLI_UINT, 1, PBS_MAX_THREADS, false, false, fs_default_threads(), NULL},
        {"max-iter", PBS_CLI_UINT, 1, FS_MAX_ITER, false, false, PBS_MANDEL_DEFAULT_MAX_ITER, NULL},
        {"threshold", PBS_CLI_UINT, 1, FS_MAX_PIXELS, false, false, PBS_MANDEL_DEFAULT_THRESHOLD,
         NULL},
        {"scheme", PBS_CLI_STR, 0, 0, false, false, 0, NULL},
        {"script", PBS_CLI_STR, 0, 0, false, false, 0, NULL},
        /* the scripted mode's own options: refused without --script */
        {"out", PBS_CLI_STR, 0, 0, false, false, 0, NULL},
        {"json", PBS_CLI_STR, 0, 0, false, false, 0, NULL},
        {"save-frames", PBS_CLI_UINT, 0, 1000000, false, false, 0, NULL},
    };
    const size_t nopts = sizeof opts / sizeof opts[0];
    pbs_cli_parse(NULL, argc - 1, argv + 1, opts, nopts);
    fs_headless_opts o = {
        .width = (unsigned)opts[0].u,
        .height = (unsigned)opts[1].u,
        .threads = (unsigned)opts[2].u,
        .max_iter = (unsigned)opts[3].u,
        .threshold = (size_t)opts[4].u,
        .scheme = 0,
        .script_path = opts[6].s,
        .out_dir = opts[7].s,
        .json_path = opts[8].s,
        .save_frames = opts[9].seen ? (long)opts[9].u : -1,
    };
    if (opts[5].seen) {
        int k = fs_scheme_parse(opts[5].s);
        if (k < 0)
            pbs_cli_die_usage("--scheme must be one of seahorse, ember, glacier, orchid, mono "
                              "(got '%s')",
                              opts[5].s);
        o.scheme = (unsigned)k;
    }
    const char *scripted_only = NULL;
    for (size_t i = 7; i < nopts; i++)
        if (opts[i].seen)
            scripted_only = opts[i].name;
    if ((unsigned long long)o.width * o.height > FS_MAX_PIXELS)
        pbs_cli_die_usage("--width * --height must be <= %llu pixels (got %llu)",
                          (unsigned long long)FS_MAX_PIXELS,
                          (unsigned long long)o.width * o.height);
    if (o.script_path != NULL)
        return fs_headless_run(&o);
    if (scripted_only != NULL)
        pbs_cli_die_usage("--%s needs --script (it belongs to the scripted mode)", scripted_only);
#if FS_WITH_SDL2
    fs_window_opts w = {o.width, o.height, o.threads, o.max_iter, o.scheme, o.threshold};
    return fs_window_run(&w);
#else
    fprintf(stderr,
            FS_PROG ": this build has no window: it was built without SDL2. Install it\n"
            "  (Debian/Ubuntu: sudo apt-get install libsdl2-dev; macOS: brew install sdl2) and\n"
            "  build the explorer with\n"
            "  make -C native/sched/fracsteal; the scripted mode works here: " FS_PROG
            " --script FILE\n");
    return FS_EXIT_NO_WINDOW;
#endif
}
