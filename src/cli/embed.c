/* SPDX-License-Identifier: Apache-2.0 */
/* embed.c -- ropegrad_cli_run: bench|check for an in-process implementation (embed.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_impl.h"
#include "commands.h"
#include "embed.h"

/* argv[0..argc): a command and no NULL. 0, or 2 with one line on stderr. */
static int check_argv(const char *fn, int argc, char **argv)
{
    if (argc < 1 || !argv || !argv[0]) {
        fprintf(stderr, "ropegrad: %s: no command\n", fn);
        return 2;
    }
    for (int i = 0; i < argc; i++)
        if (!argv[i]) {
            fprintf(stderr, "ropegrad: %s: argument %d is NULL\n", fn, i);
            return 2;
        }
    return 0;
}

int ropegrad_cli_run(int argc, char **argv, const rg_impl_embedded *impl)
{
    if (check_argv("ropegrad_cli_run", argc, argv)) return 2;
    int timed = !strcmp(argv[0], "bench");
    if (!timed && strcmp(argv[0], "check")) {
        fprintf(stderr, "ropegrad: ropegrad_cli_run: unknown command '%s' (bench or check)\n", argv[0]);
        return 2;
    }
    rg_cli_impl_set_embedded(impl);
    int code = timed ? rg_cmd_bench(argc, argv) : rg_cmd_check(argc, argv);
    rg_cli_impl_set_embedded(NULL);
    fflush(NULL);
    return code;
}

int ropegrad_cli_supervise(int argc, char **argv, int worker_argc, char **worker_argv, const char *impl_path)
{
    if (check_argv("ropegrad_cli_supervise", worker_argc, worker_argv)) return 2;
    char **w = calloc((size_t)worker_argc + 1, sizeof *w);   /* NULL-ended */
    if (!w) {
        fprintf(stderr, "ropegrad: ropegrad_cli_supervise: out of memory\n");
        return 2;
    }
    memcpy(w, worker_argv, (size_t)worker_argc * sizeof *w);
    rg_cli_worker_set_command(w, impl_path);
    int code = ropegrad_cli_run(argc, argv, NULL);
    rg_cli_worker_set_command(NULL, NULL);
    free(w);
    return code;
}

size_t ropegrad_cli_embedded_size(void) { return sizeof(rg_impl_embedded); }

size_t ropegrad_cli_impl_size(void) { return sizeof(ropegrad_impl); }
