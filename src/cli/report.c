/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report.c -- `ropegrad report ID --html FILE`: the index's run page for a
 * recorded run, as one self-contained HTML file.
 */
#define _GNU_SOURCE   /* getopt_long */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopt.h"
#include "commands.h"
#include "record.h"
#include "runs_format.h"
#include "site.h"

static const char report_help[] =
    "usage: ropegrad report ID --html FILE [--base-url URL] [--db FILE]\n\n"
    "One self-contained HTML page (inline SVG and CSS, no network, no script) for a recorded run.\n"
    "It links to no other page, unless --base-url names a served index (http://host:port):\n"
    "then its links go to that index's pages.\n";

int rg_cmd_report(int argc, char **argv)
{
    const char *db = NULL, *html = NULL, *base_url = NULL;
    const rg_cli_value_option opts[] = {{"db", &db}, {"html", &html}, {"base-url", &base_url}};
    int h = rg_cli_value_options(argc, argv, "report", opts, sizeof opts / sizeof opts[0], report_help);
    if (h >= 0) return h;
    if (optind != argc - 1 || !html) {
        rg_term_printf(stderr, "ropegrad report: expected one run id and --html FILE (usage: ropegrad report ID --html FILE)\n");
        return 2;
    }
    int64_t id;
    if (rg_cli_parse_run_id("report", argv[optind], &id)) return 2;
    char err[RG_ERRLEN];
    rg_registry *g;
    if (rg_registry_open(rg_registry_path(db), 0, &g, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad report: %s\n", err);
        return 2;
    }
    /* The index's run page (src/index/: one renderer for report, site and serve). */
    char *page = rg_report_page(g, id, base_url, err, sizeof err);
    int rc = 2;
    if (!page || rg_cli_write_output(html, page, strlen(page), err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad report: %s\n", err);
    } else {
        if (!rg_cli_is_stdout(html)) tprintf("report of run #%lld written to %s\n", (long long)id, html);
        rc = 0;
    }
    free(page);
    rg_registry_close(g);
    return rc;
}
