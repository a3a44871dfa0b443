/*
 * fs_headless.h - fracsteal's scripted mode: a script (fs_script.h) rendered
 * offscreen, no window and no SDL needed.
 *
 * Every frame is rendered in parallel (timed), then sequentially (timed) and compared
 * byte for byte; stdout gets one line per frame (fs_frame_line) and the seed's
 * summary (median frame times and how many times faster the parallel render is).
 * With an output folder, the frames (binary PPM, in the frame's colour scheme) and
 * frames.csv (one row per frame: view, times, whether identical) go there; with a
 * JSON path, a report of everything (schema "fracsteal/1", see README.md).
 *
 * Exit status: 0 every frame identical; 1 a frame differed (every frame is still
 * rendered and written) or the run could not be carried out (memory, threads,
 * files); 2 the script is wrong (message "fracsteal: PATH:LINE: ...").
 */
#ifndef FS_HEADLESS_H
#define FS_HEADLESS_H

#include <stddef.h>

typedef struct fs_headless_opts {
    const char *script_path;
    const char *out_dir;    /* NULL: write no frames and no CSV */
    const char *json_path;  /* NULL: no JSON report */
    long save_frames;       /* frames to write, spread evenly, first and last
                               included; < 0: all */
    unsigned threads, width, height, max_iter, scheme;
    size_t threshold;
} fs_headless_opts;

int fs_headless_run(const fs_headless_opts *o);

#endif /* FS_HEADLESS_H */
