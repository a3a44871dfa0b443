/*
 * fs_scheme.h - colour schemes of fracsteal.
 *
 * The frame is rendered by the sched study's Mandelbrot workload (pbs_mandel.c), whose
 * palette is scheme 0, "seahorse"; that render is what is timed and compared with the
 * sequential render. A scheme recolours a copy of it for display and for the saved
 * frames: points inside the set (pure black, which the palette never produces) stay
 * black, every other pixel is mapped by a scheme of its own (a gradient over the
 * palette colour's luminance, which runs dark - bright - dark once per palette cycle,
 * or a rotation of its channels). Recolouring is a table lookup per pixel, about a
 * millisecond per megapixel, and not part of the frame time.
 */
#ifndef FS_SCHEME_H
#define FS_SCHEME_H

#include <stddef.h>
#include <stdint.h>

#define FS_SCHEME_COUNT 5u

/* "seahorse", "ember", "glacier", "orchid", "mono". */
extern const char *const fs_scheme_names[FS_SCHEME_COUNT];

/* Index of a scheme name, or -1. */
int fs_scheme_parse(const char *name);

/* Recolour `pixels` RGB pixels from src (the workload's palette) into dst (may be
 * src). */
void fs_scheme_apply(unsigned scheme, const uint8_t *src, uint8_t *dst, size_t pixels);

#endif /* FS_SCHEME_H */
