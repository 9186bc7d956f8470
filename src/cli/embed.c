/* SPDX-License-Identifier: Apache-2.0 */
/* embed.c -- ropegrad_cli_run: bench|check for an in-process implementation (embed.h). */
#include <stdio.h>
#include <string.h>

#include "bench_impl.h"
#include "commands.h"
#include "embed.h"

int ropegrad_cli_run(int argc, char **argv, const rg_impl_embedded *impl)
{
    if (argc < 1 || !argv || !argv[0]) {
        fprintf(stderr, "ropegrad: ropegrad_cli_run: no command\n");
        return 2;
    }
    for (int i = 0; i < argc; i++)
        if (!argv[i]) {
            fprintf(stderr, "ropegrad: ropegrad_cli_run: argument %d is NULL\n", i);
            return 2;
        }
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

size_t ropegrad_cli_embedded_size(void) { return sizeof(rg_impl_embedded); }

size_t ropegrad_cli_impl_size(void) { return sizeof(ropegrad_impl); }
