/*
 * pbs_mandel.h - the Mandelbrot workload: an escape-time render with smooth
 * (continuous) colouring, sequential and parallel (recursive splitting of the
 * rectangle into tasks until a piece has at most `threshold` pixels).
 *
 * Both renders call the same function for every pixel (pbs_mandel_render_rect), so
 * the parallel image is byte-identical to the sequential one; the Makefile also
 * compiles this file with -ffp-contract=off so that no fused multiply-add can make
 * two call sites round differently.
 */
#ifndef PBS_MANDEL_H
#define PBS_MANDEL_H

#include <stddef.h>
#include <stdint.h>

#include "pbs.h"

#define PBS_MANDEL_DEFAULT_THRESHOLD 4096 /* pixels per leaf task (64 x 64) */
#define PBS_MANDEL_DEFAULT_MAX_ITER 1000

typedef struct pbs_mandel_params {
    unsigned width, height; /* pixels */
    unsigned max_iter;      /* iterations before a point counts as inside */
    double center_x, center_y;
    double view_width;      /* width of the picture in the complex plane */
} pbs_mandel_params;

/* The default view (the "seahorse valley" between the main cardioid and the
 * period-2 bulb) at the given size. */
void pbs_mandel_default_view(pbs_mandel_params *p, unsigned width, unsigned height,
                             unsigned max_iter);

/* Render pixels [x0, x1) x [y0, y1) into rgb (width * height * 3 bytes, rows top to
 * bottom, R G B per pixel). */
void pbs_mandel_render_rect(const pbs_mandel_params *p, uint8_t *rgb, unsigned x0,
                            unsigned y0, unsigned x1, unsigned y1);

/* The whole image on the calling thread. */
void pbs_mandel_render_seq(const pbs_mandel_params *p, uint8_t *rgb);

/* The whole image as tasks on s (spawn the root, pbs_wait). threshold >= 1. */
int pbs_mandel_render_parallel(pbs_sched *s, const pbs_mandel_params *p, uint8_t *rgb,
                               size_t threshold);

/* Write rgb as a binary PPM (P6). 0 on success, -1 with errno set on failure. */
int pbs_mandel_write_ppm(const char *path, const pbs_mandel_params *p,
                         const uint8_t *rgb);

#endif /* PBS_MANDEL_H */
