/*
 * fs_font.h - a tiny built-in bitmap font (5 x 7 pixels per character in a 6 x 8
 * cell, printable ASCII) for fracsteal's on-screen text, so the window needs no font
 * library. Text is drawn into an RGB buffer, scaled by an integer factor.
 */
#ifndef FS_FONT_H
#define FS_FONT_H

#include <stddef.h>
#include <stdint.h>

#define FS_FONT_CELL_W 6
#define FS_FONT_CELL_H 8

typedef struct fs_canvas {
    uint8_t *rgb;           /* width * height * 3 bytes, rows top to bottom */
    unsigned width, height;
} fs_canvas;

/* Pixels a line of text takes at `scale` (no clipping considered). */
unsigned fs_font_text_width(const char *text, unsigned scale);

/* Draw `text` with its top-left corner at (x, y) in colour rgb (R, G, B), clipped to
 * the canvas. Characters outside printable ASCII are drawn as '?'. */
void fs_font_draw(fs_canvas *c, int x, int y, const char *text, unsigned scale,
                  const uint8_t rgb[3]);

/* Darken the rectangle [x, x + w) x [y, y + h) to `keep`/256 of its brightness
 * (a backdrop that keeps text readable on any part of the picture). */
void fs_font_shade(fs_canvas *c, int x, int y, unsigned w, unsigned h, unsigned keep);

#endif /* FS_FONT_H */
