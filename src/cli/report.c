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

int rg_cmd_report(int argc, char **argv)
{
    enum { OPT_DB = 1000, OPT_HTML, OPT_BASE };
    static const struct option longopts[] = {{"db", required_argument, NULL, OPT_DB},
                                             {"html", required_argument, NULL, OPT_HTML},
                                             {"base-url", required_argument, NULL, OPT_BASE},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *db = NULL, *html = NULL, *base_url = NULL;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_DB: db = optarg; break;
        case OPT_HTML: html = optarg; break;
        case OPT_BASE: base_url = optarg; break;
        case 'h':
            tprintf("usage: ropegrad report ID --html FILE [--base-url URL] [--db FILE]\n\n"
                   "One self-contained HTML page (inline SVG and CSS, no network, no script) for a recorded run.\n"
                   "It links to no other page, unless --base-url names a served index (http://host:port):\n"
                   "then its links go to that index's pages.\n");
            return 0;
        case ':': rg_term_printf(stderr, "ropegrad report: %s needs a value\n", argv[optind - 1]); return 2;
        default: rg_term_printf(stderr, "ropegrad report: unknown option '%s' (try --help)\n", argv[optind - 1]); return 2;
        }
    }
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
