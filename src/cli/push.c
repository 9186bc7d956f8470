/* SPDX-License-Identifier: Apache-2.0 */
/*
 * push.c -- `ropegrad runs push URL FILE`: send a manifest to an index
 * (src/index/push.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopt.h"
#include "commands.h"
#include "rg_term.h"
#include "push.h"
#include "strict_json.h"

static const char push_help[] =
    "usage: ropegrad runs push URL FILE [--token-file FILE]\n\n"
    "Sends a manifest to the index at URL (POST URL/api/runs), which verifies it as\n"
    "`runs import` does and stores it as 'imported'. The write token comes from\n"
    "--token-file, else $ROPEGRAD_TOKEN.\n";

int rg_cmd_runs_push(int argc, char **argv)
{
    const char *token_file = NULL;
    const rg_cli_value_option opts[] = {{"token-file", &token_file}};
    int h = rg_cli_value_options(argc, argv, "runs push", opts, sizeof opts / sizeof opts[0], push_help);
    if (h >= 0) return h;
    if (argc - optind != 2) {
        rg_term_printf(stderr, "ropegrad runs push: expected URL FILE (usage: ropegrad runs push URL FILE)\n");
        return 2;
    }
    char err[1024], tok[512] = "";
    size_t n;
    if (token_file) {
        char *t = rg_read_secret_file(token_file, sizeof tok - 1, &n, err, sizeof err);
        if (!t) {
            rg_term_printf(stderr, "ropegrad runs push: %s\n", err);
            return 2;
        }
        while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' ')) t[--n] = 0;
        snprintf(tok, sizeof tok, "%s", t);
        free(t);
    } else if (getenv("ROPEGRAD_TOKEN")) {
        snprintf(tok, sizeof tok, "%s", getenv("ROPEGRAD_TOKEN"));
    }
    char *body = rg_read_file_bounded(argv[optind + 1], 64u << 20, &n, err, sizeof err);
    if (!body) {
        rg_term_printf(stderr, "ropegrad runs push: %s\n", err);
        return 2;
    }
    long status;
    char reply[1024];
    int rc = rg_push(argv[optind], body, n, *tok ? tok : NULL, &status, reply, sizeof reply, err, sizeof err);
    free(body);
    if (rc) {
        rg_term_printf(stderr, "ropegrad runs %s\n", err);
        return 2;
    }
    rg_term_printf(stdout, "%s: %s (HTTP %ld) %s\n", argv[optind + 1], status == 201 ? "stored" : "already there", status, reply);
    return 0;
}
