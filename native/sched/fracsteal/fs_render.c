/*
 * fs_render.c - frames on the persistent ws_sync scheduler (see fs_render.h).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs_render.h"
#include "fs_scheme.h"
#include "pbs_mandel.h"

double fs_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int fs_renderer_init(fs_renderer *r, unsigned threads, unsigned width, unsigned height,
                     size_t threshold, char *msg, size_t msg_len)
{
    memset(r, 0, sizeof *r);
    r->threads = threads;
    r->threshold = threshold;
    r->width = width;
    r->height = height;
    const size_t bytes = (size_t)width * height * 3;
    r->frame = malloc(bytes);
    r->reference = malloc(bytes);
    r->before = calloc(threads, sizeof *r->before);
    r->after = calloc(threads, sizeof *r->after);
    if (r->frame == NULL || r->reference == NULL || r->before == NULL || r->after == NULL) {
        snprintf(msg, msg_len, "cannot allocate two %ux%u frames", width, height);
        fs_renderer_free(r);
        return PBS_ENOMEM;
    }
    /* touch every page now, so that the first frame's time is not page faults */
    memset(r->frame, 0, bytes);
    memset(r->reference, 0, bytes);
    pbs_config cfg;
    pbs_config_default(&cfg, PBS_WS_SYNC, threads);
    int rc = pbs_create(&r->sched, &cfg, msg, msg_len);
    if (rc != PBS_OK)
        fs_renderer_free(r);
    return rc;
}

void fs_renderer_free(fs_renderer *r)
{
    pbs_destroy(r->sched);
    free(r->frame);
    free(r->reference);
    free(r->before);
    free(r->after);
    memset(r, 0, sizeof *r);
}

static uint64_t fs_sum(const pbs_worker_stats *w, unsigned n, size_t offset)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < n; i++)
        total += *(const uint64_t *)((const char *)&w[i] + offset);
    return total;
}

#define FS_DELTA(field)                                                                  \
    (fs_sum(r->after, r->threads, offsetof(pbs_worker_stats, field)) -                  \
     fs_sum(r->before, r->threads, offsetof(pbs_worker_stats, field)))

int fs_render_frame(fs_renderer *r, const fs_view *v, bool sequential, fs_frame_stats *out)
{
    pbs_mandel_params p;
    fs_view_params(v, r->width, r->height, &p);
    memset(out, 0, sizeof *out);
    uint64_t spawned_before = 0, spawned_after = 0;
    pbs_stats(r->sched, r->before, &spawned_before);
    /* untimed: a frame that renders nothing cannot pass as the previous one */
    memset(r->frame, 0, (size_t)r->width * r->height * 3);

    double t0 = fs_now_s();
    int rc = pbs_mandel_render_parallel(r->sched, &p, r->frame, r->threshold);
    out->parallel_s = fs_now_s() - t0;

    pbs_stats(r->sched, r->after, &spawned_after);
    out->tasks_spawned = spawned_after - spawned_before;
    out->tasks_executed = FS_DELTA(tasks_executed);
    out->steal_success = FS_DELTA(steal_success);
    out->steal_fail_empty = FS_DELTA(steal_fail_empty);
    out->steal_fail_race = FS_DELTA(steal_fail_race);

    out->sequential_s = -1.0;
    if (sequential) {
        /* clear first: a reference that renders nothing must not match by accident */
        memset(r->reference, 0, (size_t)r->width * r->height * 3);
        t0 = fs_now_s();
        pbs_mandel_render_seq(&p, r->reference);
        out->sequential_s = fs_now_s() - t0;
        out->compared = true;
        out->identical = memcmp(r->frame, r->reference, (size_t)r->width * r->height * 3) == 0;
    }
    return rc;
}

void fs_frame_line(char *buf, size_t len, unsigned long index, unsigned threads,
                   const fs_frame_stats *st, const fs_view *v)
{
    char seq[96] = "";
    if (st->compared)
        snprintf(seq, sizeof seq, ", sequential %.6f s (%.2fx, %s)", st->sequential_s,
                 st->parallel_s > 0 ? st->sequential_s / st->parallel_s : 0.0,
                 st->identical ? "identical" : "DIFFERS");
    snprintf(buf, len,
             "frame %lu: parallel %.6f s on %u thread%s%s; view %.17g %.17g %.17g, "
             "%u iterations, scheme %s",
             index, st->parallel_s, threads, threads == 1 ? "" : "s", seq, v->center_x,
             v->center_y, v->width, v->max_iter,
             v->scheme < FS_SCHEME_COUNT ? fs_scheme_names[v->scheme] : "?");
}
