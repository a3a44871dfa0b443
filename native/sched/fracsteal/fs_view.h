/*
 * fs_view.h - what fracsteal shows: a window on the complex plane, its iteration
 * limit and its colour scheme, and the moves that change it.
 *
 * The window and the scripted mode share these functions: an arrow key and a script's
 * `move` line, a mouse drag and `drag`, the wheel or +/- and `zoom` call the same code,
 * so a script replays exactly what a user did (tests compare the two byte for byte).
 *
 * Pixel coordinates are those of pbs_mandel_render_rect: x to the right, y down, the
 * centre of pixel (x, y) at left + (x + 0.5) * scale, top - (y + 0.5) * scale, where
 * scale = width / picture width in pixels.
 *
 * Every public symbol starts with fs_ / FS_.
 */
#ifndef FS_VIEW_H
#define FS_VIEW_H

#include <stdbool.h>

#include "pbs_mandel.h"

/* The explorer's first view: the whole set. */
#define FS_HOME_CENTER_X (-0.75)
#define FS_HOME_CENTER_Y 0.0
#define FS_HOME_WIDTH 3.5

/* Widths allowed: below 1e-13 doubles no longer tell neighbouring pixels apart at
 * the sizes a screen has; above 16 the set is a dot. Zooms stop at the limits. */
#define FS_MIN_WIDTH 1e-13
#define FS_MAX_WIDTH 16.0

/* Iteration limits: the keys halve and double within [FS_MIN_KEY_ITER, FS_MAX_ITER];
 * a script or the command line may set anything in [1, FS_MAX_ITER]. */
#define FS_MIN_KEY_ITER 16u
#define FS_MAX_ITER 100000000u

/* One arrow-key press moves the view by this fraction of its width or height, one
 * wheel notch or +/- press zooms by this factor. */
#define FS_MOVE_STEP 0.1
#define FS_ZOOM_STEP 1.25

typedef struct fs_view {
    double center_x, center_y; /* the point at the middle of the picture */
    double width;              /* width of the picture in the complex plane */
    unsigned max_iter;         /* iterations before a point counts as inside */
    unsigned scheme;           /* index into fs_scheme_names (fs_scheme.h) */
} fs_view;

/* The first view (the whole set) with the given iteration limit and scheme 0. */
void fs_view_home(fs_view *v, unsigned max_iter);

/* The parameters of pbs_mandel_render_* for this view at w x h pixels. */
void fs_view_params(const fs_view *v, unsigned w, unsigned h, pbs_mandel_params *p);

/* The point of the plane under pixel position (px, py) (fractional positions
 * allowed; (x + 0.5, y + 0.5) is the centre of pixel (x, y)). */
void fs_view_point(const fs_view *v, unsigned w, unsigned h, double px, double py,
                   double *x, double *y);

/* Arrow keys / `move`: shift by dx view widths to the right and dy view heights
 * down (so the picture moves the other way). */
void fs_view_move(fs_view *v, unsigned w, unsigned h, double dx, double dy);

/* Mouse drag / `drag`: the point under the cursor follows the cursor, which moved
 * by (dx, dy) pixels. */
void fs_view_drag(fs_view *v, unsigned w, double dx, double dy);

/* Zoom by `factor` (> 1 in, < 1 out) about the point (x, y) of the plane, which
 * stays where it is in the picture. The width stays within the limits (the factor
 * is reduced to reach the limit); false when it could not change at all. */
bool fs_view_zoom_about(fs_view *v, double factor, double x, double y);

/* Wheel, +/- / `zoom`: zoom toward the cursor at pixel position (px, py). */
bool fs_view_zoom_at(fs_view *v, unsigned w, unsigned h, double factor, double px,
                     double py);

/* `zoomto`: step `step` (1 .. steps) of a glide from `from` to the view (x, y,
 * width): a zoom about the one point of the plane that stays in place from the
 * first view to the last, so the glide is what a user zooming toward a fixed cursor
 * sees. Step `steps` is the target view exactly. Only centre and width change. */
void fs_view_glide(const fs_view *from, double x, double y, double width,
                   unsigned step, unsigned steps, fs_view *out);

/* Iterations: double / halve within [FS_MIN_KEY_ITER, FS_MAX_ITER]. */
void fs_view_more_iterations(fs_view *v);
void fs_view_fewer_iterations(fs_view *v);

/* The window's keys and mouse, one line each, for --help and the on-screen help. */
extern const char *const fs_key_help[];
extern const unsigned fs_key_help_count;

/* How far the view is zoomed in, against the first view's width. */
double fs_view_magnification(const fs_view *v);

#endif /* FS_VIEW_H */
