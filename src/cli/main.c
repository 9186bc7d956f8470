/* SPDX-License-Identifier: Apache-2.0 */
/* main.c -- `ropegrad COMMAND ...`: dispatch to one file per command. */
#define _POSIX_C_SOURCE 200809L   /* SIGXFSZ */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "harness.h"
#include "ropegrad.h"
#include "sol_check.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"bench", rg_cmd_bench, "run the suite: check every workload, then time it"},
    {"check", rg_cmd_check, "run the suite: correctness only"},
    {"verify", rg_cmd_verify, "recompute every digest of a manifest (and check its signatures)"},
    {"runs", rg_cmd_runs, "the local registry: list, show, rank, compare, history, check, regressions, note, replicate, export, import, sign, cite, push"},
    {"report", rg_cmd_report, "one self-contained HTML page for a recorded run"},
    {"migrate", rg_cmd_migrate, "convert old manifest files (ManifestBundle) to the KernelIndex envelope"},
    {"keygen", rg_cmd_keygen, "a new Ed25519 key pair for signing runs"},
    {"export-solution", rg_cmd_export_solution, "a SOL-ExecBench solution built from the library's kernel source"},
    {"serve", rg_cmd_serve, "the registry as a website (HTTP, with a push API)"},
    {"site", rg_cmd_site, "the registry as static web pages"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: ropegrad COMMAND [options]   (ropegrad COMMAND --help for its options)\n\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-16s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\nropegrad %s\n", ropegrad_version());
}

int main(int argc, char **argv)
{
    /* A write past the file size limit (ulimit -f) then fails with EFBIG, which every command says in
     * one line (a full disk likewise), instead of the signal killing the process mid-write. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("ropegrad %s\n", ropegrad_version());
        return 0;
    }
    /* The index's own T_SOL reads the bundled suites through the harness. */
    rg_sol_set_suites(rg_suite_bundled);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "ropegrad: unknown command '%s' (try ropegrad --help)\n", argv[1]);
    return 2;
}
