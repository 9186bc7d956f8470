/* SPDX-License-Identifier: Apache-2.0 */
/*
 * site.c -- `ropegrad site --out DIR`: the whole index as static files
 * (src/index/site.c, the server's renderer).
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cliopt.h"
#include "commands.h"
#include "rg_term.h"
#include "record.h"
#include "site.h"

static const char site_help[] =
    "usage: ropegrad site --out DIR [--db FILE]\n\n"
    "Writes the index as static files any web server can host: index.html,\n"
    "problems/*.html, runs/ID.html, runs/ID.json (the stored manifest bytes) and\n"
    "compare/FIRST/ID.html, rendered as `ropegrad serve` renders them.\n";

int rg_cmd_site(int argc, char **argv)
{
    const char *db = NULL, *out = NULL;
    const rg_cli_value_option opts[] = {{"db", &db}, {"out", &out}};
    int h = rg_cli_value_options(argc, argv, "site", opts, sizeof opts / sizeof opts[0], site_help);
    if (h >= 0) return h;
    if (optind != argc || !out || !*out) {
        rg_term_printf(stderr, "ropegrad site: expected --out DIR (usage: ropegrad site --out DIR [--db FILE])\n");
        return 2;
    }
    if (!strcmp(out, "-")) {
        rg_term_printf(stderr, "ropegrad site: --out -: the site is a folder of files, not one stream (give --out DIR)\n");
        return 2;
    }
    char err[1024];
    rg_registry *g;
    if (rg_registry_open(rg_registry_path(db), 0, &g, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad site: %s\n", err);
        return 2;
    }
    size_t files;
    int rc = rg_site_write(g, out, &files, err, sizeof err);
    rg_registry_close(g);
    if (rc) {
        rg_term_printf(stderr, "ropegrad site: %s\n", err);
        return 2;
    }
    rg_term_printf(stdout, "site: %zu files written under %s\n", files, out);
    return 0;
}
