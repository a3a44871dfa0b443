/*
 * fs_script.c - reading, checking and replaying scripts (see fs_script.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_scheme.h"
#include "fs_script.h"

#define FS_LINE_MAX 1024
#define FS_MAX_TOKENS 8

static const char fs_commands_allowed[] =
    "view, iterations, scheme, frame, move, drag, zoom, zoomto, repeat";

typedef struct fs_parse {
    const char *path;
    unsigned line;
    unsigned w, h;
    char *msg;
    size_t msg_len;
} fs_parse;

static int fs_fail(fs_parse *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fs_fail(fs_parse *ps, const char *fmt, ...)
{
    int n = snprintf(ps->msg, ps->msg_len, "%s:%u: ", ps->path, ps->line);
    if (n >= 0 && (size_t)n < ps->msg_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->msg + n, ps->msg_len - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int fs_number(fs_parse *ps, const char *cmd, const char *what, const char *tok,
                     double *out)
{
    char *end;
    errno = 0;
    double v = strtod(tok, &end);
    if (end == tok || *end != '\0' || errno == ERANGE || !isfinite(v))
        return fs_fail(ps, "%s: %s must be a finite number (got '%s')", cmd, what, tok);
    *out = v;
    return 0;
}

static int fs_count(fs_parse *ps, const char *cmd, const char *what, const char *tok,
                    unsigned lo, unsigned hi, unsigned *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(tok, &end, 10);
    if (end == tok || *end != '\0' || errno == ERANGE || v < (long long)lo ||
        v > (long long)hi)
        return fs_fail(ps, "%s: %s must be an integer from %u to %u (got '%s')", cmd, what,
                       lo, hi, tok);
    *out = (unsigned)v;
    return 0;
}

static int fs_arity(fs_parse *ps, const char *cmd, int got, int lo, int hi,
                    const char *usage)
{
    if (got < lo || got > hi)
        return fs_fail(ps, "%s takes %s (got %d argument%s)", cmd, usage, got,
                       got == 1 ? "" : "s");
    return 0;
}

static int fs_width_ok(fs_parse *ps, const char *cmd, double width)
{
    if (!(width >= FS_MIN_WIDTH && width <= FS_MAX_WIDTH))
        return fs_fail(ps, "%s: WIDTH must be between %g and %g (got %g)", cmd, FS_MIN_WIDTH,
                       FS_MAX_WIDTH, width);
    return 0;
}

/* One command from its tokens (after any `repeat N`). */
static int fs_parse_command(fs_parse *ps, char **tok, int ntok, fs_cmd *c)
{
    const char *cmd = tok[0];
    const int nargs = ntok - 1;
    if (strcmp(cmd, "view") == 0) {
        c->kind = FS_CMD_VIEW;
        if (fs_arity(ps, cmd, nargs, 3, 3, "CX CY WIDTH") ||
            fs_number(ps, cmd, "CX", tok[1], &c->arg[0]) ||
            fs_number(ps, cmd, "CY", tok[2], &c->arg[1]) ||
            fs_number(ps, cmd, "WIDTH", tok[3], &c->arg[2]) || fs_width_ok(ps, cmd, c->arg[2]))
            return -1;
    } else if (strcmp(cmd, "iterations") == 0) {
        c->kind = FS_CMD_ITERATIONS;
        if (fs_arity(ps, cmd, nargs, 1, 1, "N") ||
            fs_count(ps, cmd, "N", tok[1], 1, FS_MAX_ITER, &c->count))
            return -1;
    } else if (strcmp(cmd, "scheme") == 0) {
        c->kind = FS_CMD_SCHEME;
        if (fs_arity(ps, cmd, nargs, 1, 1, "NAME"))
            return -1;
        int k = fs_scheme_parse(tok[1]);
        if (k < 0)
            return fs_fail(ps, "scheme: unknown scheme '%s'; allowed: seahorse, ember, "
                               "glacier, orchid, mono",
                           tok[1]);
        c->count = (unsigned)k;
    } else if (strcmp(cmd, "frame") == 0) {
        c->kind = FS_CMD_FRAME;
        if (fs_arity(ps, cmd, nargs, 0, 0, "no arguments"))
            return -1;
    } else if (strcmp(cmd, "move") == 0 || strcmp(cmd, "drag") == 0) {
        c->kind = cmd[0] == 'm' ? FS_CMD_MOVE : FS_CMD_DRAG;
        if (fs_arity(ps, cmd, nargs, 2, 2, "DX DY") ||
            fs_number(ps, cmd, "DX", tok[1], &c->arg[0]) ||
            fs_number(ps, cmd, "DY", tok[2], &c->arg[1]))
            return -1;
    } else if (strcmp(cmd, "zoom") == 0) {
        c->kind = FS_CMD_ZOOM;
        if (nargs != 1 && nargs != 3)
            return fs_arity(ps, cmd, nargs, 1, 1, "F or F X Y");
        if (fs_number(ps, cmd, "F", tok[1], &c->arg[0]))
            return -1;
        if (!(c->arg[0] > 0.0))
            return fs_fail(ps, "zoom: F must be > 0 (> 1 zooms in, < 1 out) (got %s)", tok[1]);
        c->at_point = nargs == 3;
        if (c->at_point) {
            if (fs_number(ps, cmd, "X", tok[2], &c->arg[1]) ||
                fs_number(ps, cmd, "Y", tok[3], &c->arg[2]))
                return -1;
            if (!(c->arg[1] >= 0 && c->arg[1] < ps->w && c->arg[2] >= 0 && c->arg[2] < ps->h))
                return fs_fail(ps, "zoom: the pixel (%s, %s) is outside the %ux%u picture; "
                                   "allowed: 0 <= X < %u, 0 <= Y < %u",
                               tok[2], tok[3], ps->w, ps->h, ps->w, ps->h);
        }
    } else if (strcmp(cmd, "zoomto") == 0) {
        c->kind = FS_CMD_ZOOMTO;
        if (fs_arity(ps, cmd, nargs, 4, 4, "CX CY WIDTH N") ||
            fs_number(ps, cmd, "CX", tok[1], &c->arg[0]) ||
            fs_number(ps, cmd, "CY", tok[2], &c->arg[1]) ||
            fs_number(ps, cmd, "WIDTH", tok[3], &c->arg[2]) ||
            fs_width_ok(ps, cmd, c->arg[2]) ||
            fs_count(ps, cmd, "N", tok[4], 1, FS_SCRIPT_MAX_REPEAT, &c->count))
            return -1;
    } else if (strcmp(cmd, "repeat") == 0) {
        return fs_fail(ps, "repeat: a repeated command cannot be another repeat");
    } else {
        return fs_fail(ps, "unknown command '%s'; allowed: %s", cmd, fs_commands_allowed);
    }
    return 0;
}

static unsigned fs_cmd_frames(const fs_cmd *c)
{
    switch (c->kind) {
    case FS_CMD_FRAME:
    case FS_CMD_MOVE:
    case FS_CMD_DRAG:
    case FS_CMD_ZOOM:
        return 1;
    case FS_CMD_ZOOMTO:
        return c->count;
    default:
        return 0;
    }
}

static int fs_parse_line(fs_parse *ps, char *line, fs_script *s)
{
    char *hash = strchr(line, '#');
    if (hash != NULL)
        *hash = '\0';
    char *tok[FS_MAX_TOKENS + 1];
    int ntok = 0;
    for (char *p = strtok(line, " \t\r\n"); p != NULL; p = strtok(NULL, " \t\r\n")) {
        if (ntok == FS_MAX_TOKENS)
            return fs_fail(ps, "too many words on one line (at most %d)", FS_MAX_TOKENS);
        tok[ntok++] = p;
    }
    if (ntok == 0)
        return 0;
    fs_cmd c;
    memset(&c, 0, sizeof c);
    c.line = ps->line;
    c.repeat = 1;
    /* the line as written, single-spaced */
    size_t used = 0;
    for (int i = 0; i < ntok && used + 1 < sizeof c.text; i++) {
        int n = snprintf(c.text + used, sizeof c.text - used, "%s%s", i ? " " : "", tok[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    int first = 0;
    if (strcmp(tok[0], "repeat") == 0) {
        if (ntok < 3)
            return fs_fail(ps, "repeat takes N COMMAND... (got %d argument%s)", ntok - 1,
                           ntok == 2 ? "" : "s");
        if (fs_count(ps, "repeat", "N", tok[1], 1, FS_SCRIPT_MAX_REPEAT, &c.repeat))
            return -1;
        first = 2;
    }
    if (fs_parse_command(ps, tok + first, ntok - first, &c))
        return -1;
    size_t frames = (size_t)fs_cmd_frames(&c) * c.repeat;
    if (s->frames + frames > FS_SCRIPT_MAX_FRAMES)
        return fs_fail(ps, "the script would render more than %u frames", FS_SCRIPT_MAX_FRAMES);
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 32;
        fs_cmd *grown = realloc(s->cmds, cap * sizeof *grown);
        if (grown == NULL)
            return fs_fail(ps, "out of memory");
        s->cmds = grown;
        s->cap = cap;
    }
    s->cmds[s->n++] = c;
    s->frames += frames;
    return 0;
}

int fs_script_load(const char *path, unsigned w, unsigned h, fs_script *s, char *msg,
                   size_t msg_len)
{
    memset(s, 0, sizeof *s);
    fs_parse ps = {path, 0, w, h, msg, msg_len};
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(msg, msg_len, "%s: cannot read the script: %s", path, strerror(errno));
        return -1;
    }
    char line[FS_LINE_MAX];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        ps.line++;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            rc = fs_fail(&ps, "line longer than %d characters", FS_LINE_MAX - 2);
            break;
        }
        rc = fs_parse_line(&ps, line, s);
    }
    if (rc == 0 && ferror(f)) {
        snprintf(msg, msg_len, "%s: cannot read the script: %s", path, strerror(errno));
        rc = -1;
    }
    fclose(f);
    if (rc == 0 && s->frames == 0) {
        snprintf(msg, msg_len, "%s: the script renders no frame; a frame comes from frame, "
                               "move, drag, zoom or zoomto",
                 path);
        rc = -1;
    }
    if (rc != 0)
        fs_script_free(s);
    return rc;
}

void fs_script_free(fs_script *s)
{
    free(s->cmds);
    memset(s, 0, sizeof *s);
}

void fs_player_start(fs_player *p, const fs_script *s, unsigned w, unsigned h,
                     const fs_view *first)
{
    memset(p, 0, sizeof *p);
    p->script = s;
    p->w = w;
    p->h = h;
    p->view = *first;
}

bool fs_player_next(fs_player *p, fs_view *view, const fs_cmd **cmd)
{
    while (p->cmd < p->script->n) {
        const fs_cmd *c = &p->script->cmds[p->cmd];
        if (p->rep >= c->repeat) {
            p->cmd++;
            p->rep = 0;
            p->step = 0;
            continue;
        }
        bool renders = true;
        switch (c->kind) {
        case FS_CMD_VIEW:
            p->view.center_x = c->arg[0];
            p->view.center_y = c->arg[1];
            p->view.width = c->arg[2];
            renders = false;
            break;
        case FS_CMD_ITERATIONS:
            p->view.max_iter = c->count;
            renders = false;
            break;
        case FS_CMD_SCHEME:
            p->view.scheme = c->count;
            renders = false;
            break;
        case FS_CMD_FRAME:
            break;
        case FS_CMD_MOVE:
            fs_view_move(&p->view, p->w, p->h, c->arg[0], c->arg[1]);
            break;
        case FS_CMD_DRAG:
            fs_view_drag(&p->view, p->w, c->arg[0], c->arg[1]);
            break;
        case FS_CMD_ZOOM:
            /* toward the centre of pixel (X, Y), as the window does for the pixel
             * under the mouse; without a pixel, toward the middle of the picture */
            fs_view_zoom_at(&p->view, p->w, p->h, c->arg[0],
                            c->at_point ? c->arg[1] + 0.5 : 0.5 * p->w,
                            c->at_point ? c->arg[2] + 0.5 : 0.5 * p->h);
            break;
        case FS_CMD_ZOOMTO:
            if (p->step == 0)
                p->glide_from = p->view;
            p->step++;
            fs_view_glide(&p->glide_from, c->arg[0], c->arg[1], c->arg[2], p->step, c->count,
                          &p->view);
            if (p->step < c->count) { /* more frames of this glide follow */
                *view = p->view;
                *cmd = c;
                return true;
            }
            p->step = 0;
            break;
        }
        p->rep++;
        if (renders) {
            *view = p->view;
            *cmd = c;
            return true;
        }
    }
    return false;
}
