/*
 * pbs_cli.h - the command-line conventions parbench-sched and fracsteal share.
 *
 * Options are `--name VALUE` or `--name=VALUE`, described by a table of pbs_cli_opt:
 * an unsigned integer checked against its range, or a non-empty string. Every
 * mistake stops the program with one usage error that names the option, the bad value
 * and what is allowed:
 *
 *   PROG: --threads must be >= 1 (got 0)
 *   PROG: see 'PROG --help'
 *
 * and exit status 2 (PBS_CLI_EXIT_USAGE). pbs_cli_init names the program once, before
 * anything else here is used.
 */
#ifndef PBS_CLI_H
#define PBS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { PBS_CLI_EXIT_USAGE = 2 };

typedef enum pbs_cli_kind { PBS_CLI_UINT, PBS_CLI_STR } pbs_cli_kind;

typedef struct pbs_cli_opt {
    const char *name; /* without the leading "--" */
    pbs_cli_kind kind;
    uint64_t min, max; /* PBS_CLI_UINT: allowed range */
    bool required;
    /* filled in by pbs_cli_parse */
    bool seen;
    uint64_t u;
    const char *s;
} pbs_cli_opt;

/* The program's name in every message (a string that outlives the program's use). */
void pbs_cli_init(const char *prog);

/* A usage error: "PROG: <message>", the pointer to --help, exit 2. */
void pbs_cli_die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Parses argv[0 .. argc-1] against opts[0 .. n-1]; `cmd` (a subcommand, or NULL) is
 * named in the errors about unexpected arguments and missing required options. */
void pbs_cli_parse(const char *cmd, int argc, char **argv, pbs_cli_opt *opts, size_t n);

/* The option called `name` in the table (NULL if there is none). */
pbs_cli_opt *pbs_cli_find(pbs_cli_opt *opts, size_t n, const char *name);

#endif
