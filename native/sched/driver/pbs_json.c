/*
 * pbs_json.c - minimal streaming JSON writer (see pbs_json.h).
 */
#include <math.h>
#include <string.h>

#include "pbs_json.h"

void pbs_json_init(pbs_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->has_items[0] = false;
}

static void pbs_json_string_body(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* Comma, indentation and key before a value. */
static void pbs_json_prefix(pbs_json *j, const char *key)
{
    if (j->has_items[j->depth])
        fputc(',', j->f);
    if (j->depth > 0) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    j->has_items[j->depth] = true;
    if (key != NULL) {
        pbs_json_string_body(j->f, key);
        fputs(": ", j->f);
    }
}

static void pbs_json_open(pbs_json *j, const char *key, char c)
{
    pbs_json_prefix(j, key);
    fputc(c, j->f);
    if (j->depth + 1 < PBS_JSON_MAX_DEPTH)
        j->depth++;
    j->has_items[j->depth] = false;
}

static void pbs_json_close(pbs_json *j, char c)
{
    bool had = j->has_items[j->depth];
    if (j->depth > 0)
        j->depth--;
    if (had) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(c, j->f);
    if (j->depth == 0)
        fputc('\n', j->f);
}

void pbs_json_begin_object(pbs_json *j, const char *key)
{
    pbs_json_open(j, key, '{');
}

void pbs_json_end_object(pbs_json *j)
{
    pbs_json_close(j, '}');
}

void pbs_json_begin_array(pbs_json *j, const char *key)
{
    pbs_json_open(j, key, '[');
}

void pbs_json_end_array(pbs_json *j)
{
    pbs_json_close(j, ']');
}

void pbs_json_str(pbs_json *j, const char *key, const char *value)
{
    pbs_json_prefix(j, key);
    if (value == NULL)
        fputs("null", j->f);
    else
        pbs_json_string_body(j->f, value);
}

void pbs_json_u64(pbs_json *j, const char *key, uint64_t value)
{
    pbs_json_prefix(j, key);
    fprintf(j->f, "%llu", (unsigned long long)value);
}

void pbs_json_f64(pbs_json *j, const char *key, double value)
{
    pbs_json_prefix(j, key);
    if (!isfinite(value)) {
        fputs("null", j->f);
        return;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%.9g", value);
    /* Keep it a float for readers that distinguish (Python's json): 2 -> 2.0. */
    if (strpbrk(buf, ".eE") == NULL)
        strcat(buf, ".0");
    fputs(buf, j->f);
}

void pbs_json_bool(pbs_json *j, const char *key, bool value)
{
    pbs_json_prefix(j, key);
    fputs(value ? "true" : "false", j->f);
}

void pbs_json_null(pbs_json *j, const char *key)
{
    pbs_json_prefix(j, key);
    fputs("null", j->f);
}
