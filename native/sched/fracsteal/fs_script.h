/*
 * fs_script.h - fracsteal's scripts: a sequence of moves and zooms, one command per
 * line, replayed headlessly (fs_headless.c). Each command does what a key or the
 * mouse does in the window (fs_view.h), so a script replays a session.
 *
 *   # a comment; blank lines are ignored
 *   view CX CY WIDTH        set the view: centre and width in the complex plane
 *   iterations N            set the iteration limit (1 .. 100000000)
 *   scheme NAME             set the colour scheme (seahorse, ember, glacier, orchid, mono)
 *   frame                   render the current view                          (1 frame)
 *   move DX DY              arrow keys: DX view widths right, DY view heights
 *                           down, then render                                (1 frame)
 *   drag DX DY              mouse drag by DX, DY pixels, then render         (1 frame)
 *   zoom F [X Y]            wheel / + / -: zoom by F (> 1 in, < 1 out) toward
 *                           pixel X, Y under the mouse (0 <= X < width; default:
 *                           the middle of the picture)                       (1 frame)
 *   zoomto CX CY WIDTH N    glide to the view in N frames, zooming about the one
 *                           point that stays in place                        (N frames)
 *   repeat N COMMAND...     the command N times (not another repeat)
 *
 * Commands that do not render (view, iterations, scheme) take effect at the next
 * frame. Every public symbol starts with fs_ / FS_.
 */
#ifndef FS_SCRIPT_H
#define FS_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include "fs_view.h"

#define FS_SCRIPT_MAX_REPEAT 100000u
#define FS_SCRIPT_MAX_FRAMES 1000000u
#define FS_SCRIPT_TEXT_LEN 120

typedef enum fs_cmd_kind {
    FS_CMD_VIEW,
    FS_CMD_ITERATIONS,
    FS_CMD_SCHEME,
    FS_CMD_FRAME,
    FS_CMD_MOVE,
    FS_CMD_DRAG,
    FS_CMD_ZOOM,
    FS_CMD_ZOOMTO
} fs_cmd_kind;

typedef struct fs_cmd {
    fs_cmd_kind kind;
    unsigned line;                  /* 1-based line of the file */
    unsigned repeat;                /* 1, or N of `repeat N ...` */
    double arg[3];                  /* view/zoomto: x y width; move/drag: dx dy;
                                       zoom: factor x y */
    unsigned count;                 /* iterations: N; scheme: index; zoomto: steps */
    bool at_point;                  /* zoom: X Y were given */
    char text[FS_SCRIPT_TEXT_LEN];  /* the line as written, comment and blanks cut */
} fs_cmd;

typedef struct fs_script {
    fs_cmd *cmds;
    size_t n, cap;
    size_t frames;                  /* frames the script renders */
} fs_script;

/* Read and check a script for pictures of w x h pixels. 0, or -1 with a message
 * "PATH:LINE: what is wrong; what is allowed" in msg. */
int fs_script_load(const char *path, unsigned w, unsigned h, fs_script *s, char *msg,
                   size_t msg_len);

void fs_script_free(fs_script *s);

/* Replays a script frame by frame. */
typedef struct fs_player {
    const fs_script *script;
    unsigned w, h;
    size_t cmd;          /* current command */
    unsigned rep;        /* repetitions of it done */
    unsigned step;       /* zoomto: steps of the current repetition done */
    fs_view view;        /* the view now */
    fs_view glide_from;  /* zoomto: where the glide started */
} fs_player;

void fs_player_start(fs_player *p, const fs_script *s, unsigned w, unsigned h,
                     const fs_view *first);

/* Apply commands up to and including the next one that renders; *view is the view
 * to render and *cmd the command that asked for it. false when the script is done. */
bool fs_player_next(fs_player *p, fs_view *view, const fs_cmd **cmd);

#endif /* FS_SCRIPT_H */
