/*
 * fs_headless.c - the scripted mode (see fs_headless.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs_headless.h"
#include "fs_render.h"
#include "fs_scheme.h"
#include "fs_script.h"
#include "pbs_json.h"
#include "pbs_mandel.h"

#define FS_PROG "fracsteal"
#define FS_SCHEMA "fracsteal/1"
#define FS_FRAME_NAME "frame_%04zu.ppm"

typedef struct fs_frame_rec {
    fs_view view;
    fs_frame_stats stats;
    const fs_cmd *cmd;
    bool saved;
} fs_frame_rec;

static int fs_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double fs_median(const fs_frame_rec *fr, size_t n, bool sequential)
{
    double *t = malloc(n * sizeof *t);
    if (t == NULL || n == 0) {
        free(t);
        return -1.0;
    }
    for (size_t i = 0; i < n; i++)
        t[i] = sequential ? fr[i].stats.sequential_s : fr[i].stats.parallel_s;
    qsort(t, n, sizeof *t, fs_cmp_double);
    double m = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    free(t);
    return m;
}

/* Which frames to write: `want` spread evenly over n, first and last included. */
static void fs_pick_saved(fs_frame_rec *fr, size_t n, long want)
{
    if (want < 0 || (size_t)want >= n) {
        for (size_t i = 0; i < n; i++)
            fr[i].saved = true;
        return;
    }
    if (want == 1) {
        fr[n - 1].saved = true;
        return;
    }
    for (long k = 0; k < want; k++)
        fr[(size_t)((double)k * (double)(n - 1) / (double)(want - 1) + 0.5)].saved = true;
}

static int fs_write_csv(const char *dir, const fs_frame_rec *fr, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/frames.csv", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "frame,line,command,center_x,center_y,view_width,magnification,max_iter,"
               "scheme,parallel_time_s,sequential_time_s,speedup,identical,image\n");
    for (size_t i = 0; i < n; i++) {
        const fs_frame_rec *r = &fr[i];
        char image[64] = "";
        if (r->saved)
            snprintf(image, sizeof image, FS_FRAME_NAME, i);
        fprintf(f, "%zu,%u,\"%s\",%.17g,%.17g,%.17g,%.9g,%u,%s,%.9f,%.9f,%.4f,%s,%s\n", i,
                r->cmd->line, r->cmd->text, r->view.center_x, r->view.center_y,
                r->view.width, fs_view_magnification(&r->view), r->view.max_iter,
                fs_scheme_names[r->view.scheme], r->stats.parallel_s, r->stats.sequential_s,
                r->stats.sequential_s / r->stats.parallel_s,
                r->stats.identical ? "true" : "false", image);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static void fs_write_json(FILE *jf, const fs_headless_opts *o, const fs_frame_rec *fr,
                          size_t n, double par_med, double seq_med, bool verified)
{
    pbs_json j;
    pbs_json_init(&j, jf);
    pbs_json_begin_object(&j, NULL);
    pbs_json_str(&j, "schema", FS_SCHEMA);
    pbs_json_str(&j, "scheduler", "ws_sync");
    pbs_json_u64(&j, "threads", o->threads);
    pbs_json_u64(&j, "width", o->width);
    pbs_json_u64(&j, "height", o->height);
    pbs_json_u64(&j, "threshold", o->threshold);
    pbs_json_u64(&j, "max_iter", o->max_iter);
    pbs_json_str(&j, "script", o->script_path);
    pbs_json_str(&j, "out_dir", o->out_dir);
    pbs_json_u64(&j, "frame_count", n);
    pbs_json_begin_array(&j, "frames");
    for (size_t i = 0; i < n; i++) {
        const fs_frame_rec *r = &fr[i];
        char image[64];
        snprintf(image, sizeof image, FS_FRAME_NAME, i);
        pbs_json_begin_object(&j, NULL);
        pbs_json_u64(&j, "frame", i);
        pbs_json_u64(&j, "line", r->cmd->line);
        pbs_json_str(&j, "command", r->cmd->text);
        pbs_json_f64(&j, "center_x", r->view.center_x);
        pbs_json_f64(&j, "center_y", r->view.center_y);
        pbs_json_f64(&j, "view_width", r->view.width);
        pbs_json_f64(&j, "magnification", fs_view_magnification(&r->view));
        pbs_json_u64(&j, "max_iter", r->view.max_iter);
        pbs_json_str(&j, "scheme", fs_scheme_names[r->view.scheme]);
        pbs_json_f64(&j, "parallel_time_s", r->stats.parallel_s);
        pbs_json_f64(&j, "sequential_time_s", r->stats.sequential_s);
        pbs_json_bool(&j, "identical", r->stats.identical);
        pbs_json_str(&j, "image", r->saved && o->out_dir ? image : NULL);
        pbs_json_begin_object(&j, "counters");
        pbs_json_u64(&j, "tasks_spawned", r->stats.tasks_spawned);
        pbs_json_u64(&j, "tasks_executed", r->stats.tasks_executed);
        pbs_json_u64(&j, "steal_success", r->stats.steal_success);
        pbs_json_u64(&j, "steal_fail_empty", r->stats.steal_fail_empty);
        pbs_json_u64(&j, "steal_fail_race", r->stats.steal_fail_race);
        pbs_json_end_object(&j);
        pbs_json_end_object(&j);
    }
    pbs_json_end_array(&j);
    pbs_json_f64(&j, "parallel_median_s", par_med);
    pbs_json_f64(&j, "sequential_median_s", seq_med);
    pbs_json_f64(&j, "speedup", seq_med / par_med);
    pbs_json_bool(&j, "verified", verified);
    pbs_json_end_object(&j);
    fputc('\n', jf);
}

int fs_headless_run(const fs_headless_opts *o)
{
    char msg[512];
    fs_script script;
    if (fs_script_load(o->script_path, o->width, o->height, &script, msg, sizeof msg) != 0) {
        fprintf(stderr, FS_PROG ": %s\n", msg);
        return 2;
    }
    /* files first: fail before the long work, not after it */
    FILE *jf = NULL;
    if (o->json_path != NULL && (jf = fopen(o->json_path, "w")) == NULL) {
        fprintf(stderr, FS_PROG ": cannot write --json %s: %s\n", o->json_path, strerror(errno));
        fs_script_free(&script);
        return 1;
    }
    if (o->out_dir != NULL && mkdir(o->out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, FS_PROG ": cannot create --out %s: %s\n", o->out_dir, strerror(errno));
        if (jf)
            fclose(jf);
        fs_script_free(&script);
        return 1;
    }
    fs_frame_rec *fr = calloc(script.frames, sizeof *fr);
    uint8_t *shown = malloc((size_t)o->width * o->height * 3);
    fs_renderer r;
    int status = 0;
    if (fr == NULL || shown == NULL) {
        fprintf(stderr, FS_PROG ": out of memory for %zu frames\n", script.frames);
        status = 1;
    } else if (fs_renderer_init(&r, o->threads, o->width, o->height, o->threshold, msg,
                                sizeof msg) != PBS_OK) {
        fprintf(stderr, FS_PROG ": cannot start the scheduler: %s\n", msg);
        status = 1;
    }
    if (status != 0) {
        free(fr);
        free(shown);
        if (jf)
            fclose(jf);
        fs_script_free(&script);
        return status;
    }

    fs_pick_saved(fr, script.frames, o->out_dir ? o->save_frames : 0);
    fs_view first;
    fs_view_home(&first, o->max_iter);
    first.scheme = o->scheme;
    fs_player player;
    fs_player_start(&player, &script, o->width, o->height, &first);
    bool verified = true;
    size_t n = 0;
    char line[512];
    while (n < script.frames && fs_player_next(&player, &fr[n].view, &fr[n].cmd)) {
        fs_frame_rec *rec = &fr[n];
        int rc = fs_render_frame(&r, &rec->view, true, &rec->stats);
        if (rc != PBS_OK)
            fprintf(stderr, FS_PROG ": warning: frame %zu: the scheduler reported: %s\n", n,
                    pbs_strerror(rc));
        fs_frame_line(line, sizeof line, (unsigned long)n, o->threads, &rec->stats, &rec->view);
        printf("%s\n", line);
        fflush(stdout);
        if (!rec->stats.identical) {
            verified = false;
            fprintf(stderr, FS_PROG ": verification failed: frame %zu (line %u: %s) differs "
                            "from the sequential render\n",
                    n, rec->cmd->line, rec->cmd->text);
        }
        if (rec->saved) {
            char path[4096];
            snprintf(path, sizeof path, "%s/" FS_FRAME_NAME, o->out_dir, n);
            pbs_mandel_params p;
            fs_view_params(&rec->view, o->width, o->height, &p);
            fs_scheme_apply(rec->view.scheme, r.frame, shown, (size_t)o->width * o->height);
            if (pbs_mandel_write_ppm(path, &p, shown) != 0) {
                fprintf(stderr, FS_PROG ": cannot write %s: %s\n", path, strerror(errno));
                status = 1;
                break;
            }
        }
        n++;
    }
    fs_renderer_free(&r);

    double par_med = fs_median(fr, n, false), seq_med = fs_median(fr, n, true);
    if (status == 0) {
        printf("Frame time, parallel (pbs_mandel_render_parallel on ws_sync, %u thread%s): "
               "%.6f s (median of %zu frames)\n",
               o->threads, o->threads == 1 ? "" : "s", par_med, n);
        printf("Frame time, sequential (pbs_mandel_render_seq): %.6f s (median of %zu "
               "frames)\n",
               seq_med, n);
        if (seq_med >= par_med)
            printf("Parallel version is %.2f times faster than the sequential version\n",
                   seq_med / par_med);
        else
            printf("Parallel version is %.2f times slower than the sequential version\n",
                   par_med / seq_med);
        fflush(stdout);
    }
    if (status == 0 && o->out_dir != NULL && fs_write_csv(o->out_dir, fr, n) != 0) {
        fprintf(stderr, FS_PROG ": cannot write %s/frames.csv: %s\n", o->out_dir,
                strerror(errno));
        status = 1;
    }
    if (jf != NULL) {
        if (status == 0)
            fs_write_json(jf, o, fr, n, par_med, seq_med, verified);
        if (fclose(jf) != 0 && status == 0) {
            fprintf(stderr, FS_PROG ": cannot write --json %s: %s\n", o->json_path,
                    strerror(errno));
            status = 1;
        }
    }
    free(fr);
    free(shown);
    fs_script_free(&script);
    if (status == 0 && !verified)
        status = 1;
    return status;
}
