/*
 * pbs_cli.c - the command-line conventions parbench-sched and fracsteal share (see
 * pbs_cli.h).
 */
#include "pbs_cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *cli_prog = "pbs";

void pbs_cli_init(const char *prog)
{
    cli_prog = prog;
}

void pbs_cli_die_usage(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", cli_prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s: see '%s --help'\n", cli_prog, cli_prog);
    exit(PBS_CLI_EXIT_USAGE);
}

static void parse_uint_value(pbs_cli_opt *o, const char *text)
{
    const char *p = text;
    while (*p == ' ')
        p++;
    if (*p == '-') {
        /* A negative number: say what is allowed rather than "not a number". */
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end != p && *end == '\0' && errno == 0)
            pbs_cli_die_usage("--%s must be >= %llu (got %lld)", o->name,
                              (unsigned long long)o->min, v);
        pbs_cli_die_usage("--%s must be a non-negative integer (got '%s')", o->name, text);
    }
    if (*p < '0' || *p > '9')
        pbs_cli_die_usage("--%s must be a non-negative integer (got '%s')", o->name, text);
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (*end != '\0')
        pbs_cli_die_usage("--%s must be a non-negative integer (got '%s')", o->name, text);
    if (errno == ERANGE)
        pbs_cli_die_usage("--%s must be <= %llu (got %s)", o->name, (unsigned long long)o->max,
                          text);
    if (v < o->min)
        pbs_cli_die_usage("--%s must be >= %llu (got %llu)", o->name,
                          (unsigned long long)o->min, v);
    if (v > o->max)
        pbs_cli_die_usage("--%s must be <= %llu (got %llu)", o->name,
                          (unsigned long long)o->max, v);
    o->u = v;
}

static pbs_cli_opt *find_len(pbs_cli_opt *opts, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
            return &opts[i];
    return NULL;
}

pbs_cli_opt *pbs_cli_find(pbs_cli_opt *opts, size_t n, const char *name)
{
    return find_len(opts, n, name, strlen(name));
}

void pbs_cli_parse(const char *cmd, int argc, char **argv, pbs_cli_opt *opts, size_t n)
{
    const char *for_cmd = cmd != NULL ? " for " : "", *cmd_name = cmd != NULL ? cmd : "";
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0)
            pbs_cli_die_usage("unexpected argument '%s'%s%s", arg, for_cmd, cmd_name);
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        pbs_cli_opt *o = find_len(opts, n, name, len);
        if (o == NULL)
            pbs_cli_die_usage("unknown option '--%.*s'%s%s", (int)len, name, for_cmd, cmd_name);
        const char *value;
        if (eq != NULL) {
            value = eq + 1;
        } else {
            if (i + 1 >= argc)
                pbs_cli_die_usage("--%s needs a value", o->name);
            value = argv[++i];
        }
        if (o->kind == PBS_CLI_UINT)
            parse_uint_value(o, value);
        else if (*value == '\0')
            pbs_cli_die_usage("--%s must not be empty", o->name);
        else
            o->s = value;
        o->seen = true;
    }
    for (size_t i = 0; i < n; i++)
        if (opts[i].required && !opts[i].seen)
            pbs_cli_die_usage("%s needs --%s", cmd != NULL ? cmd : cli_prog, opts[i].name);
}
