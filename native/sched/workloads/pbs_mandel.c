/*
 * pbs_mandel.c - the Mandelbrot workload (see pbs_mandel.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pbs_mandel.h"

/* Escape radius 2^8: a large radius makes the smooth iteration count continuous
 * across the bands of the plain escape time. */
#define PBS_MANDEL_BAILOUT2 65536.0

/* The palette: colours at positions in [0, 1), interpolated linearly and read
 * cyclically (night blue, azure, ivory, amber, oxblood, back to night blue). */
typedef struct pbs_mandel_stop {
    double pos;
    double r, g, b;
} pbs_mandel_stop;

static const pbs_mandel_stop pbs_mandel_palette[] = {
    {0.00, 6, 10, 46},    {0.16, 22, 84, 168}, {0.33, 118, 190, 232},
    {0.45, 246, 244, 220}, {0.60, 250, 178, 52}, {0.78, 156, 40, 22},
    {0.90, 40, 8, 30},     {1.00, 6, 10, 46},
};

static void pbs_mandel_colour(double t, uint8_t *px)
{
    const size_t n = sizeof pbs_mandel_palette / sizeof pbs_mandel_palette[0];
    size_t i = 0;
    while (i + 2 < n && t >= pbs_mandel_palette[i + 1].pos)
        i++;
    const pbs_mandel_stop *lo = &pbs_mandel_palette[i], *hi = &pbs_mandel_palette[i + 1];
    double f = (t - lo->pos) / (hi->pos - lo->pos);
    px[0] = (uint8_t)(lo->r + f * (hi->r - lo->r) + 0.5);
    px[1] = (uint8_t)(lo->g + f * (hi->g - lo->g) + 0.5);
    px[2] = (uint8_t)(lo->b + f * (hi->b - lo->b) + 0.5);
}

void pbs_mandel_default_view(pbs_mandel_params *p, unsigned width, unsigned height,
                             unsigned max_iter)
{
    p->width = width;
    p->height = height;
    p->max_iter = max_iter;
    p->center_x = -0.7453;
    p->center_y = 0.1127;
    p->view_width = 0.0125;
}

void pbs_mandel_render_rect(const pbs_mandel_params *p, uint8_t *rgb, unsigned x0,
                            unsigned y0, unsigned x1, unsigned y1)
{
    const double scale = p->view_width / p->width;
    const double left = p->center_x - 0.5 * p->view_width;
    const double top = p->center_y + 0.5 * scale * p->height;
    for (unsigned y = y0; y < y1; y++) {
        const double cy = top - ((double)y + 0.5) * scale;
        uint8_t *px = rgb + ((size_t)y * p->width + x0) * 3;
        for (unsigned x = x0; x < x1; x++, px += 3) {
            const double cx = left + ((double)x + 0.5) * scale;
            double zx = 0.0, zy = 0.0, zx2 = 0.0, zy2 = 0.0;
            unsigned i = 0;
            while (i < p->max_iter && zx2 + zy2 <= PBS_MANDEL_BAILOUT2) {
                zy = 2.0 * zx * zy + cy;
                zx = zx2 - zy2 + cx;
                zx2 = zx * zx;
                zy2 = zy * zy;
                i++;
            }
            if (i >= p->max_iter) {
                px[0] = px[1] = px[2] = 0; /* inside: black */
                continue;
            }
            /* Smooth iteration count: i + 1 - log2(log|z|). */
            double mu = (double)i + 1.0 - log2(0.5 * log(zx2 + zy2));
            if (mu < 0.0)
                mu = 0.0;
            /* Log scale, so that deep zooms (large counts) still cycle through the
             * palette at a pleasant rate. */
            double t = log1p(mu) * 0.42;
            pbs_mandel_colour(t - floor(t), px);
        }
    }
}

void pbs_mandel_render_seq(const pbs_mandel_params *p, uint8_t *rgb)
{
    pbs_mandel_render_rect(p, rgb, 0, 0, p->width, p->height);
}

typedef struct pbs_mandel_ctx {
    const pbs_mandel_params *p;
    uint8_t *rgb;
    size_t threshold;
} pbs_mandel_ctx;

typedef struct pbs_mandel_job {
    const pbs_mandel_ctx *ctx;
    unsigned x0, y0, x1, y1;
} pbs_mandel_job;

static void pbs_mandel_task(pbs_sched *s, void *arg)
{
    pbs_mandel_job j = *(pbs_mandel_job *)arg;
    free(arg);
    const pbs_mandel_ctx *ctx = j.ctx;
    /* Halve the longer side, spawn one half, keep the other, until small. */
    for (;;) {
        unsigned w = j.x1 - j.x0, h = j.y1 - j.y0;
        if ((size_t)w * h <= ctx->threshold || (w < 2 && h < 2))
            break;
        pbs_mandel_job half = j;
        if (w >= h) {
            half.x0 = j.x0 + w / 2;
            j.x1 = half.x0;
        } else {
            half.y0 = j.y0 + h / 2;
            j.y1 = half.y0;
        }
        pbs_mandel_job *k = malloc(sizeof *k);
        if (k != NULL) {
            *k = half;
            if (pbs_spawn(s, pbs_mandel_task, k) == PBS_OK)
                continue;
            free(k);
        }
        /* Could not spawn: render that half here. */
        pbs_mandel_render_rect(ctx->p, ctx->rgb, half.x0, half.y0, half.x1, half.y1);
    }
    pbs_mandel_render_rect(ctx->p, ctx->rgb, j.x0, j.y0, j.x1, j.y1);
}

int pbs_mandel_render_parallel(pbs_sched *s, const pbs_mandel_params *p, uint8_t *rgb,
                               size_t threshold)
{
    if (threshold < 1)
        return PBS_EINVAL;
    pbs_mandel_ctx ctx = {p, rgb, threshold};
    pbs_mandel_job *root = malloc(sizeof *root);
    if (root == NULL) {
        pbs_mandel_render_seq(p, rgb);
        return PBS_ENOMEM;
    }
    *root = (pbs_mandel_job){&ctx, 0, 0, p->width, p->height};
    int rc = pbs_spawn(s, pbs_mandel_task, root);
    if (rc != PBS_OK) {
        free(root);
        pbs_mandel_render_seq(p, rgb);
        return rc;
    }
    /* ctx lives on this stack frame: pbs_wait() returns only when every task has
     * finished, whatever it returns (see pbs.h). */
    rc = pbs_wait(s);
    return rc;
}

int pbs_mandel_write_ppm(const char *path, const pbs_mandel_params *p,
                         const uint8_t *rgb)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t bytes = (size_t)p->width * p->height * 3;
    int ok = fprintf(f, "P6\n%u %u\n255\n", p->width, p->height) > 0 &&
             fwrite(rgb, 1, bytes, f) == bytes;
    if (fclose(f) != 0)
        ok = 0;
    return ok ? 0 : -1;
}
