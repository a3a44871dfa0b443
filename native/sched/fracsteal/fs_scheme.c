/*
 * fs_scheme.c - colour schemes (see fs_scheme.h).
 */
#include <string.h>

#include "fs_scheme.h"

const char *const fs_scheme_names[FS_SCHEME_COUNT] = {
    "seahorse", "ember", "glacier", "orchid", "mono",
};

int fs_scheme_parse(const char *name)
{
    for (unsigned i = 0; i < FS_SCHEME_COUNT; i++)
        if (strcmp(name, fs_scheme_names[i]) == 0)
            return (int)i;
    return -1;
}

typedef struct fs_stop {
    int pos; /* luminance 0 .. 255 */
    int r, g, b;
} fs_stop;

/* Gradients over luminance, first stop at 0, last at 255. */
static const fs_stop fs_ember[] = {
    {0, 20, 0, 4}, {70, 120, 10, 8}, {150, 230, 90, 10}, {215, 255, 200, 60}, {255, 255, 252, 235},
};
static const fs_stop fs_glacier[] = {
    {0, 2, 8, 32}, {80, 10, 70, 120}, {160, 40, 170, 200}, {220, 170, 235, 245}, {255, 250, 255, 255},
};
static const fs_stop fs_mono[] = {
    {0, 16, 16, 16}, {255, 245, 245, 245},
};

static void fs_gradient_table(const fs_stop *stops, size_t n, uint8_t table[256][3])
{
    size_t i = 0;
    for (int lum = 0; lum < 256; lum++) {
        while (i + 2 < n && lum > stops[i + 1].pos)
            i++;
        const fs_stop *lo = &stops[i], *hi = &stops[i + 1];
        const int span = hi->pos - lo->pos, at = lum - lo->pos;
        table[lum][0] = (uint8_t)(lo->r + (hi->r - lo->r) * at / span);
        table[lum][1] = (uint8_t)(lo->g + (hi->g - lo->g) * at / span);
        table[lum][2] = (uint8_t)(lo->b + (hi->b - lo->b) * at / span);
    }
}

void fs_scheme_apply(unsigned scheme, const uint8_t *src, uint8_t *dst, size_t pixels)
{
    if (scheme == 0 || scheme >= FS_SCHEME_COUNT) {
        if (dst != src)
            memcpy(dst, src, pixels * 3);
        return;
    }
    if (scheme == 3) { /* orchid: rotate the channels, blue -> red -> green -> blue */
        for (size_t i = 0; i < pixels; i++) {
            const uint8_t r = src[3 * i], g = src[3 * i + 1], b = src[3 * i + 2];
            dst[3 * i] = b;
            dst[3 * i + 1] = r;
            dst[3 * i + 2] = g;
        }
        return;
    }
    uint8_t table[256][3];
    if (scheme == 1)
        fs_gradient_table(fs_ember, sizeof fs_ember / sizeof fs_ember[0], table);
    else if (scheme == 2)
        fs_gradient_table(fs_glacier, sizeof fs_glacier / sizeof fs_glacier[0], table);
    else
        fs_gradient_table(fs_mono, sizeof fs_mono / sizeof fs_mono[0], table);
    for (size_t i = 0; i < pixels; i++) {
        const unsigned r = src[3 * i], g = src[3 * i + 1], b = src[3 * i + 2];
        if ((r | g | b) == 0) { /* inside the set */
            dst[3 * i] = dst[3 * i + 1] = dst[3 * i + 2] = 0;
            continue;
        }
        const unsigned lum = (77 * r + 150 * g + 29 * b) >> 8; /* Rec. 601 weights */
        dst[3 * i] = table[lum][0];
        dst[3 * i + 1] = table[lum][1];
        dst[3 * i + 2] = table[lum][2];
    }
}
