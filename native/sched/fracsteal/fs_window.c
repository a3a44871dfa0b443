/*
 * fs_window.c - the interactive window (see fs_window.h).
 *
 * The picture goes to the window surface with SDL_BlitSurface (which converts RGB24
 * to the surface's format) and SDL_UpdateWindowSurface: no scaling, no GPU, so what
 * the window shows is the rendered frame pixel for pixel (the window test compares
 * it with the scripted mode's frame of the same view).
 */
#include <SDL.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_font.h"
#include "fs_render.h"
#include "fs_scheme.h"
#include "fs_view.h"
#include "fs_window.h"

#define FS_PROG "fracsteal"
/* How often an idle window looks for events: 100 times a second (measured: about
 * half a percent of a core). */
#define FS_IDLE_POLL_MS 10

typedef struct fs_session {
    const fs_window_opts *o;
    fs_view view;
    bool compare;        /* render sequentially too (key s) */
    bool help;           /* show the keys (key h) */
    bool running;
    bool dirty;          /* the view changed: render */
    bool redraw;         /* only the presentation changed: recolour and draw */
    SDL_Window *window;
} fs_session;

/* Where +/- and the wheel zoom toward: the pixel under the mouse, or the middle. */
static void fs_cursor(const fs_session *s, double *px, double *py)
{
    int mx, my;
    SDL_GetMouseState(&mx, &my);
    if (SDL_GetMouseFocus() == s->window && mx >= 0 && my >= 0 &&
        (unsigned)mx < s->o->width && (unsigned)my < s->o->height) {
        *px = mx + 0.5;
        *py = my + 0.5;
    } else {
        *px = 0.5 * s->o->width;
        *py = 0.5 * s->o->height;
    }
}

static void fs_zoom(fs_session *s, double factor)
{
    double px, py;
    fs_cursor(s, &px, &py);
    if (fs_view_zoom_at(&s->view, s->o->width, s->o->height, factor, px, py))
        s->dirty = true;
}

static void fs_key(fs_session *s, const SDL_KeyboardEvent *k)
{
    const unsigned w = s->o->width, h = s->o->height;
    const bool shift = (k->keysym.mod & KMOD_SHIFT) != 0;
    switch (k->keysym.sym) {
    case SDLK_LEFT:
        fs_view_move(&s->view, w, h, -FS_MOVE_STEP, 0.0);
        s->dirty = true;
        break;
    case SDLK_RIGHT:
        fs_view_move(&s->view, w, h, FS_MOVE_STEP, 0.0);
        s->dirty = true;
        break;
    case SDLK_UP:
        fs_view_move(&s->view, w, h, 0.0, -FS_MOVE_STEP);
        s->dirty = true;
        break;
    case SDLK_DOWN:
        fs_view_move(&s->view, w, h, 0.0, FS_MOVE_STEP);
        s->dirty = true;
        break;
    case SDLK_PLUS:
    case SDLK_EQUALS: /* the + key without shift on most layouts */
    case SDLK_KP_PLUS:
        fs_zoom(s, FS_ZOOM_STEP);
        break;
    case SDLK_MINUS:
    case SDLK_KP_MINUS:
        fs_zoom(s, 1.0 / FS_ZOOM_STEP);
        break;
    case SDLK_RIGHTBRACKET:
        fs_view_more_iterations(&s->view);
        s->dirty = true;
        break;
    case SDLK_LEFTBRACKET:
        fs_view_fewer_iterations(&s->view);
        s->dirty = true;
        break;
    case SDLK_c:
        s->view.scheme = (s->view.scheme + (shift ? FS_SCHEME_COUNT - 1 : 1)) % FS_SCHEME_COUNT;
        s->redraw = true;
        break;
    case SDLK_s:
        s->compare = !s->compare;
        if (s->compare)
            s->dirty = true; /* measure the sequential render of this view now */
        else
            s->redraw = true;
        break;
    case SDLK_r:
    case SDLK_HOME: {
        unsigned scheme = s->view.scheme;
        fs_view_home(&s->view, s->o->max_iter);
        s->view.scheme = scheme;
        s->dirty = true;
        break;
    }
    case SDLK_h:
    case SDLK_F1:
        s->help = !s->help;
        s->redraw = true;
        break;
    case SDLK_q:
    case SDLK_ESCAPE:
        s->running = false;
        break;
    default:
        break;
    }
}

static void fs_event(fs_session *s, const SDL_Event *e)
{
    switch (e->type) {
    case SDL_QUIT: /* also SIGINT / SIGTERM: SDL turns them into SDL_QUIT */
        s->running = false;
        break;
    case SDL_KEYDOWN:
        fs_key(s, &e->key);
        break;
    case SDL_MOUSEWHEEL: {
        int notches = e->wheel.y;
        if (e->wheel.direction == SDL_MOUSEWHEEL_FLIPPED)
            notches = -notches;
        for (; notches > 0; notches--)
            fs_zoom(s, FS_ZOOM_STEP);
        for (; notches < 0; notches++)
            fs_zoom(s, 1.0 / FS_ZOOM_STEP);
        break;
    }
    case SDL_MOUSEMOTION:
        if (e->motion.state & SDL_BUTTON_LMASK) {
            fs_view_drag(&s->view, s->o->width, e->motion.xrel, e->motion.yrel);
            s->dirty = true;
        }
        break;
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_EXPOSED ||
            e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED)
            s->redraw = true;
        break;
    default:
        break;
    }
}

/* The frame in its colour scheme, with the frame times (and the keys) on top. */
static void fs_overlay(const fs_session *s, const fs_frame_stats *st, fs_canvas *c)
{
    const unsigned scale = c->width >= 800 ? 2 : 1;
    const unsigned line_h = (FS_FONT_CELL_H + 2) * scale, margin = 5 * scale;
    char lines[4 + 16][96];
    unsigned n = 0;
    snprintf(lines[n++], sizeof lines[0], "parallel   %.4f s  ws_sync, %u thread%s",
             st->parallel_s, s->o->threads, s->o->threads == 1 ? "" : "s");
    if (s->compare && st->compared)
        snprintf(lines[n++], sizeof lines[0], "sequential %.4f s  %.2fx faster%s",
                 st->sequential_s, st->sequential_s / st->parallel_s,
                 st->identical ? "" : "  DIFFERS");
    else
        snprintf(lines[n++], sizeof lines[0], "sequential (press s)");
    snprintf(lines[n++], sizeof lines[0], "zoom %.3gx  %u iterations  %s",
             fs_view_magnification(&s->view), s->view.max_iter,
             fs_scheme_names[s->view.scheme]);
    if (s->help) {
        for (unsigned i = 0; i < fs_key_help_count && n < sizeof lines / sizeof lines[0]; i++)
            snprintf(lines[n++], sizeof lines[0], "%s", fs_key_help[i]);
    } else {
        snprintf(lines[n++], sizeof lines[0], "h: keys");
    }
    unsigned box_w = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned tw = fs_font_text_width(lines[i], scale);
        box_w = tw > box_w ? tw : box_w;
    }
    fs_font_shade(c, 0, 0, box_w + 2 * margin, n * line_h + 2 * margin - 2 * scale, 80);
    static const uint8_t white[3] = {255, 255, 255};
    for (unsigned i = 0; i < n; i++)
        fs_font_draw(c, (int)margin, (int)(margin + i * line_h), lines[i], scale, white);
}

int fs_window_run(const fs_window_opts *o)
{
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        fprintf(stderr, FS_PROG ": cannot open a window: %s (is DISPLAY set? the scripted "
                        "mode needs no display: " FS_PROG " --script FILE)\n",
                SDL_GetError());
        return 1;
    }
    fs_session s = {.o = o, .running = true, .dirty = true};
    fs_view_home(&s.view, o->max_iter);
    s.view.scheme = o->scheme;
    s.window = SDL_CreateWindow("fracsteal - Mandelbrot on ws_sync", SDL_WINDOWPOS_CENTERED,
                                SDL_WINDOWPOS_CENTERED, (int)o->width, (int)o->height, 0);
    uint8_t *shown = malloc((size_t)o->width * o->height * 3);
    SDL_Surface *picture = NULL;
    fs_renderer r;
    char msg[PBS_MSG_LEN];
    int status = 0;
    if (s.window == NULL) {
        fprintf(stderr, FS_PROG ": cannot open a window: %s\n", SDL_GetError());
        status = 1;
    } else if (shown == NULL ||
               (picture = SDL_CreateRGBSurfaceWithFormatFrom(
                    shown, (int)o->width, (int)o->height, 24, (int)(o->width * 3),
                    SDL_PIXELFORMAT_RGB24)) == NULL) {
        fprintf(stderr, FS_PROG ": cannot allocate the picture: %s\n", SDL_GetError());
        status = 1;
    } else if (fs_renderer_init(&r, o->threads, o->width, o->height, o->threshold, msg,
                                sizeof msg) != PBS_OK) {
        fprintf(stderr, FS_PROG ": cannot start the scheduler: %s\n", msg);
        status = 1;
    }
    if (status != 0) {
        SDL_FreeSurface(picture);
        free(shown);
        if (s.window)
            SDL_DestroyWindow(s.window);
        SDL_Quit();
        return status;
    }
    fprintf(stderr, FS_PROG ": %ux%u, %u thread%s on ws_sync; press h for the keys\n",
            o->width, o->height, o->threads, o->threads == 1 ? "" : "s");

    fs_frame_stats st = {0};
    unsigned long frames = 0;
    char line[512];
    while (s.running) {
        SDL_Event e;
        if (!s.dirty && !s.redraw) {
            /* Idle: poll every few milliseconds rather than SDL_WaitEvent. On X11,
             * SDL 2.26 wakes a waiting SDL_WaitEvent with an event sent through a
             * second X connection; at quit it can reach the window after the window
             * was destroyed, and the X error (BadWindow) ends the process. */
            while (!SDL_PollEvent(&e))
                SDL_Delay(FS_IDLE_POLL_MS);
            fs_event(&s, &e);
        }
        while (s.running && SDL_PollEvent(&e))
            fs_event(&s, &e);
        if (!s.running)
            break;
        if (s.dirty) {
            int rc = fs_render_frame(&r, &s.view, s.compare, &st);
            if (rc != PBS_OK)
                fprintf(stderr, FS_PROG ": warning: the scheduler reported: %s\n",
                        pbs_strerror(rc));
            s.dirty = false;
            s.redraw = true;
            fs_frame_line(line, sizeof line, frames++, o->threads, &st, &s.view);
        } else {
            line[0] = '\0';
        }
        if (s.redraw) {
            fs_scheme_apply(s.view.scheme, r.frame, shown, (size_t)o->width * o->height);
            fs_canvas canvas = {shown, o->width, o->height};
            fs_overlay(&s, &st, &canvas);
            SDL_Surface *screen = SDL_GetWindowSurface(s.window);
            if (screen == NULL || SDL_BlitSurface(picture, NULL, screen, NULL) != 0 ||
                SDL_UpdateWindowSurface(s.window) != 0)
                fprintf(stderr, FS_PROG ": warning: cannot draw: %s\n", SDL_GetError());
            s.redraw = false;
        }
        if (line[0] != '\0') { /* after the frame is on screen */
            printf("%s\n", line);
            fflush(stdout);
        }
    }
    fs_renderer_free(&r);
    SDL_FreeSurface(picture);
    free(shown);
    SDL_DestroyWindow(s.window);
    SDL_Quit();
    return 0;
}
