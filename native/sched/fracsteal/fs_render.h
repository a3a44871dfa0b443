/*
 * fs_render.h - fracsteal's frames: one persistent synchronizing work-stealing
 * scheduler (PBS_WS_SYNC) for the whole session, one wait per frame.
 *
 * A frame is the sched study's Mandelbrot workload: pbs_mandel_render_parallel()
 * spawns the root task, which halves the longer side of its rectangle until a piece
 * has at most `threshold` pixels (the same recursive split as the benchmark), then
 * pbs_wait()s once; the workers sleep between frames. On request the same view is
 * also rendered sequentially (pbs_mandel_render_seq, the seed's render_mandelbrot)
 * and compared byte for byte with the parallel frame.
 */
#ifndef FS_RENDER_H
#define FS_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pbs.h"
#include "fs_view.h"

typedef struct fs_renderer {
    pbs_sched *sched;         /* PBS_WS_SYNC, created once */
    unsigned threads;
    size_t threshold;         /* pixels per leaf task */
    unsigned width, height;   /* pixels */
    uint8_t *frame;           /* the parallel render, in the workload's palette */
    uint8_t *reference;       /* the sequential render of the same view */
    pbs_worker_stats *before, *after;
} fs_renderer;

typedef struct fs_frame_stats {
    double parallel_s;        /* the timed parallel render */
    double sequential_s;      /* the timed sequential render; < 0 when not rendered */
    bool compared;            /* whether the sequential render ran */
    bool identical;           /* parallel == sequential byte for byte (if compared) */
    uint64_t tasks_spawned;   /* during this frame */
    uint64_t tasks_executed;
    uint64_t steal_success;
    uint64_t steal_fail_empty;
    uint64_t steal_fail_race;
} fs_frame_stats;

/* Start the scheduler's workers and allocate the frames. PBS_OK, or an error code
 * and a message in msg. */
int fs_renderer_init(fs_renderer *r, unsigned threads, unsigned width, unsigned height,
                     size_t threshold, char *msg, size_t msg_len);

/* Stop the workers and free everything; safe on a zeroed or failed renderer. */
void fs_renderer_free(fs_renderer *r);

/* Render `v` into r->frame (timed), and when `sequential` also into r->reference
 * (timed) and compare. PBS_OK, or the scheduler's error (the frame is then rendered
 * sequentially, so it is still whole). */
int fs_render_frame(fs_renderer *r, const fs_view *v, bool sequential, fs_frame_stats *out);

/* One line that describes a frame, the same in the window and in the scripted mode:
 * "frame 3: parallel 0.081234 s on 2 threads, sequential 0.301234 s (3.71x,
 * identical); view -0.75 0 3.5, 1000 iterations, scheme seahorse" (the sequential
 * part only when it was rendered; the view with 17 significant digits, so that the
 * line names the view exactly). */
void fs_frame_line(char *buf, size_t len, unsigned long index, unsigned threads,
                   const fs_frame_stats *st, const fs_view *v);

/* Seconds of CLOCK_MONOTONIC. */
double fs_now_s(void);

#endif /* FS_RENDER_H */
