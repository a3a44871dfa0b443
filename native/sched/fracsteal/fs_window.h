/*
 * fs_window.h - fracsteal's SDL2 window (compiled only where SDL2 is installed).
 *
 * Events are drained before each frame, so that a burst of key repeats or mouse
 * motion becomes one render of where the user ended up, never a queue of stale
 * frames. A frame is rendered only when the view changed; a colour scheme or the
 * help only recolours and redraws the last frame. After each frame is on screen,
 * stdout gets its line (fs_frame_line), so a script or a test can follow the session.
 */
#ifndef FS_WINDOW_H
#define FS_WINDOW_H

#include <stddef.h>

typedef struct fs_window_opts {
    unsigned width, height, threads, max_iter, scheme;
    size_t threshold;
} fs_window_opts;

/* Run the window until the user quits; the process exit status. */
int fs_window_run(const fs_window_opts *o);

#endif /* FS_WINDOW_H */
