/*
 * fs_view.c - the view and its moves (see fs_view.h).
 */
#include <math.h>

#include "fs_view.h"

const char *const fs_key_help[] = {
    "arrow keys     move by a tenth of the view",
    "mouse drag     move the picture with the mouse",
    "wheel, + / -   zoom in / out toward the mouse (x1.25)",
    "] / [          double / halve the iterations",
    "c / C          next / previous colour scheme",
    "s              also render sequentially: time and speedup",
    "r, Home        back to the whole set",
    "h, F1          show / hide this help",
    "q, Esc         quit",
};
const unsigned fs_key_help_count = sizeof fs_key_help / sizeof fs_key_help[0];

void fs_view_home(fs_view *v, unsigned max_iter)
{
    v->center_x = FS_HOME_CENTER_X;
    v->center_y = FS_HOME_CENTER_Y;
    v->width = FS_HOME_WIDTH;
    v->max_iter = max_iter;
    v->scheme = 0;
}

void fs_view_params(const fs_view *v, unsigned w, unsigned h, pbs_mandel_params *p)
{
    p->width = w;
    p->height = h;
    p->max_iter = v->max_iter;
    p->center_x = v->center_x;
    p->center_y = v->center_y;
    p->view_width = v->width;
}

void fs_view_point(const fs_view *v, unsigned w, unsigned h, double px, double py,
                   double *x, double *y)
{
    /* the same mapping as pbs_mandel_render_rect */
    const double scale = v->width / w;
    *x = v->center_x - 0.5 * v->width + px * scale;
    *y = v->center_y + 0.5 * scale * h - py * scale;
}

void fs_view_move(fs_view *v, unsigned w, unsigned h, double dx, double dy)
{
    v->center_x += dx * v->width;
    v->center_y -= dy * v->width * h / w;
}

void fs_view_drag(fs_view *v, unsigned w, double dx, double dy)
{
    const double scale = v->width / w;
    v->center_x -= dx * scale;
    v->center_y += dy * scale;
}

bool fs_view_zoom_about(fs_view *v, double factor, double x, double y)
{
    if (!(factor > 0.0) || !isfinite(factor))
        return false;
    double width = v->width / factor;
    if (width < FS_MIN_WIDTH)
        width = FS_MIN_WIDTH;
    if (width > FS_MAX_WIDTH)
        width = FS_MAX_WIDTH;
    if (width == v->width)
        return false;
    const double keep = width / v->width; /* 1 / the factor actually applied */
    v->center_x = x + (v->center_x - x) * keep;
    v->center_y = y + (v->center_y - y) * keep;
    v->width = width;
    return true;
}

bool fs_view_zoom_at(fs_view *v, unsigned w, unsigned h, double factor, double px,
                     double py)
{
    double x, y;
    fs_view_point(v, w, h, px, py, &x, &y);
    return fs_view_zoom_about(v, factor, x, y);
}

void fs_view_glide(const fs_view *from, double x, double y, double width,
                   unsigned step, unsigned steps, fs_view *out)
{
    *out = *from;
    if (step >= steps) {
        out->center_x = x;
        out->center_y = y;
        out->width = width;
        return;
    }
    const double t = (double)step / steps;
    const double r = width / from->width;
    if (fabs(1.0 - r) < 1e-9) {
        /* no zoom: a straight pan */
        out->center_x = from->center_x + (x - from->center_x) * t;
        out->center_y = from->center_y + (y - from->center_y) * t;
        return;
    }
    /* The fixed point f of the zoom that takes the first view to the last:
     * target = f + (start - f) * r, so f = (target - start * r) / (1 - r). At
     * width w_t = w_0 r^t the centre is f + (start - f) * r^t. */
    const double fx = (x - from->center_x * r) / (1.0 - r);
    const double fy = (y - from->center_y * r) / (1.0 - r);
    const double k = pow(r, t);
    out->center_x = fx + (from->center_x - fx) * k;
    out->center_y = fy + (from->center_y - fy) * k;
    out->width = from->width * k;
}

void fs_view_more_iterations(fs_view *v)
{
    v->max_iter = v->max_iter >= FS_MAX_ITER / 2 ? FS_MAX_ITER : v->max_iter * 2;
    if (v->max_iter < FS_MIN_KEY_ITER)
        v->max_iter = FS_MIN_KEY_ITER;
}

void fs_view_fewer_iterations(fs_view *v)
{
    if (v->max_iter > FS_MIN_KEY_ITER) /* a lower limit set by a script stays */
        v->max_iter = v->max_iter / 2 < FS_MIN_KEY_ITER ? FS_MIN_KEY_ITER : v->max_iter / 2;
}

double fs_view_magnification(const fs_view *v)
{
    return FS_HOME_WIDTH / v->width;
}
