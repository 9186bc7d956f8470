/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runs.c -- `ropegrad runs COMMAND`: the options, the checks that apply to
 * every subcommand, and the dispatch to one function per subcommand (runs.h).
 * history, check and regressions go to history.c, push to push.c.
 */
#define _GNU_SOURCE   /* getopt_long */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopt.h"
#include "commands.h"
#include "harness.h"
#include "runs.h"
#include "runs_format.h"

/* ---- runs ------------------------------------------------------------------------ */

static void runs_usage(FILE *f)
{
    fprintf(f, "usage: ropegrad runs COMMAND [ARGS] [--db FILE]\n\n"
               "  list                   a line per run\n"
               "  show ID                the whole record\n"
               "  rank [--evidence E]    runs grouped by comparison key, ranked by their primary statistic's\n"
               "                         95%% interval (overlapping intervals tie: =2; suspect runs after the others)\n"
               "                         (E: measured, replicated or imported: only runs of that evidence)\n"
               "  compare ID [ID2]       per workload side by side (one id: against #1 of its group)\n"
               "  note ID TEXT           attach a note (never changes the evidence level)\n"
               "  replicate ID [--suite DIR]  run the recorded protocol again here and compare\n"
               "  export ID [--out FILE] the manifest (stdout or --out -, or FILE written atomically)\n"
               "  import FILE            verify a manifest made elsewhere (an old one is converted), then\n"
               "                         store it as 'imported' (--trusted-keys: require a trusted signature)\n"
               "                         --published-at DATE --source-rank N[/M]: what its source says of it\n"
               "  import traces.jsonl [--suite DIR | --definition FILE]\n"
               "                         the official SOL-ExecBench evaluator's trace file (sol-execbench -o)\n"
               "                         as one imported run (default suite: the bundled one of its definition)\n"
               "  import-catalog FILE.jsonl[.zst] [--operation NAME]...\n"
               "                         KernelIndex's catalog export: the runs of the bundled suites' operations\n"
               "                         verified and imported with their names (see runs import-catalog --help)\n"
               "  sign ID --key KEY      add an Ed25519 signature over the run digest to a stored run\n"
               "  push URL FILE          send a manifest to an index (ropegrad serve); see runs push --help\n"
               "  cite ID                a citation line\n"
               "  history ID | --group KEY   the primary statistic and each workload over revisions, with intervals\n"
               "  check ID [--against REF] [--threshold PCT] [--alpha A] [--json]\n"
               "                         FAST/SLOW/SAME/UNCLEAR against the previous revision or the line's\n"
               "                         history, judged against the machine's run-to-run noise (exit 0 same or\n"
               "                         faster, 1 slower, 3 unclear; `runs check --help` gives the method)\n"
               "  calibrate [--runs N] [-- BENCH-OPTIONS]\n"
               "                         N back-to-back benchmark runs: the machine's noise, stored for check\n"
               "  regressions [--json]   every line's latest revision checked against its previous one\n\n"
               "  --db FILE              registry (default $ROPEGRAD_DB, else $XDG_DATA_HOME/ropegrad/runs.db,\n"
               "                         else ~/.local/share/ropegrad/runs.db)\n"
               "  --verbose              (replicate) progress on stderr\n"
               "  --json                 one JSON document on stdout, for scripts (every command; export\n"
               "                         writes the manifest itself; docs/record.md lists the keys)\n\n"
               "exit status: 0 ok, 1 a check failed (digest mismatch, replication disagreed), 2 bad usage or input\n");
}

enum { OPT_DB = 1000, OPT_OUT, OPT_VERBOSE, OPT_EVIDENCE, OPT_SUITE, OPT_KEY, OPT_TRUSTED, OPT_JSON, OPT_DEFINITION,
       OPT_PUBLISHED, OPT_SOURCE_RANK };
static const struct option longopts[] = {{"db", required_argument, NULL, OPT_DB},
                                         {"out", required_argument, NULL, OPT_OUT},
                                         {"verbose", no_argument, NULL, OPT_VERBOSE},
                                         {"evidence", required_argument, NULL, OPT_EVIDENCE},
                                         {"suite", required_argument, NULL, OPT_SUITE},
                                         {"key", required_argument, NULL, OPT_KEY},
                                         {"trusted-keys", required_argument, NULL, OPT_TRUSTED},
                                         {"json", no_argument, NULL, OPT_JSON},
                                         {"definition", required_argument, NULL, OPT_DEFINITION},
                                         {"published-at", required_argument, NULL, OPT_PUBLISHED},
                                         {"source-rank", required_argument, NULL, OPT_SOURCE_RANK},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

/* The subcommands this file dispatches, with their positional arguments. */
static const struct {
    const char *name;
    int min, max;   /* positional arguments after the subcommand */
    const char *args;
} subs[] = {{"list", 0, 0, ""},          {"show", 1, 1, "ID"},     {"rank", 0, 0, ""},
            {"compare", 1, 2, "ID [ID2]"}, {"note", 2, 2, "ID TEXT"}, {"replicate", 1, 1, "ID"},
            {"export", 1, 1, "ID"},       {"import", 1, 1, "FILE"}, {"cite", 1, 1, "ID"},
            {"sign", 1, 1, "ID --key KEY"}};

/* history, check and regressions have their own options (history.c), push
 * too (push.c): 1 with *rc set when argv names one of them and it ran. */
static int handed_over(int argc, char **argv, int *rc)
{
    /* The first word that is neither an option nor an option's value names the command. */
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            for (size_t k = 0; k < sizeof longopts / sizeof longopts[0] - 1; k++)
                if (longopts[k].has_arg == required_argument && !strncmp(argv[i], "--", 2) &&
                    !strcmp(argv[i] + 2, longopts[k].name)) {
                    i++;   /* its value (argv[argc] is NULL when the value is missing: stop looking) */
                    break;
                }
            continue;
        }
        if (!strcmp(argv[i], "history") || !strcmp(argv[i], "check") || !strcmp(argv[i], "regressions")) {
            char *sub = argv[i];
            memmove(argv + 2, argv + 1, (size_t)(i - 1) * sizeof *argv);   /* the options before it follow it */
            argv[1] = sub;
            *rc = rg_cmd_runs_history_check(argc - 1, argv + 1);
            return 1;
        }
        break;
    }
    if (argc > 1 && !strcmp(argv[1], "push")) {
        *rc = rg_cmd_runs_push(argc - 1, argv + 1);   /* push.c */
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "import-catalog")) {
        *rc = rg_cmd_runs_import_catalog(argc - 1, argv + 1);   /* runs_import_catalog.c */
        return 1;
    }
    if (argc > 1 && !strcmp(argv[1], "calibrate")) {
        *rc = rg_cmd_runs_calibrate(argc - 1, argv + 1);   /* runs_calibrate.c */
        return 1;
    }
    return 0;
}

/* The options into *x: -1 to go on, else the exit code (0 after --help). */
static int parse_options(int argc, char **argv, runs_ctx *x)
{
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_DB:
            if (rg_cli_db_option("runs", optarg, &x->db)) return 2;
            break;
        case OPT_OUT: x->out = optarg; break;
        case OPT_VERBOSE: x->verbose = 1; break;
        case OPT_EVIDENCE: x->evidence = optarg; break;
        case OPT_SUITE: x->suite = optarg; break;
        case OPT_KEY: x->key = optarg; break;
        case OPT_TRUSTED: x->trusted = optarg; break;
        case OPT_JSON: x->json = 1; break;
        case OPT_DEFINITION: x->definition = optarg; break;
        case OPT_PUBLISHED: x->published_at = optarg; break;
        case OPT_SOURCE_RANK: x->source_rank = optarg; break;
        case 'h': runs_usage(stdout); return 0;
        case ':': rg_term_printf(stderr, "ropegrad runs: %s needs a value\n", argv[optind - 1]); return 2;
        default: rg_term_printf(stderr, "ropegrad runs: unknown option '%s' (try --help)\n", argv[optind - 1]); return 2;
        }
    }
    return -1;
}

/* The index of subcommand sub in subs[] given npos words (itself included),
 * or -1 with one line on stderr (unknown, or the wrong number of arguments). */
static int find_sub(const char *sub, int npos)
{
    int which = -1;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(sub, subs[i].name)) which = (int)i;
    if (which < 0) {
        rg_term_printf(stderr, "ropegrad runs: unknown command '%s' (try ropegrad runs --help)\n", sub);
        return -1;
    }
    if (npos - 1 < subs[which].min || npos - 1 > subs[which].max) {
        rg_term_printf(stderr, "ropegrad runs %s: expected %s (usage: ropegrad runs %s %s)\n", sub,
                subs[which].args[0] ? subs[which].args : "no arguments", sub, subs[which].args);
        return -1;
    }
    return which;
}

/* Options that only one subcommand takes, --evidence's value and sign's
 * --key: 0, or 2 with one line on stderr. */
static int check_options(const runs_ctx *x, const char *sub)
{
    const struct {
        const char *value, *option, *only;
    } scoped[] = {{x->out, "--out", "export"},   {x->evidence, "--evidence", "rank"},
                  {x->suite, "--suite", strcmp(sub, "import") ? "replicate" : "import"},
                  {x->definition, "--definition", "import"},
                  {x->published_at, "--published-at", "import"}, {x->source_rank, "--source-rank", "import"},
                  {x->key, "--key", "sign"},     {x->trusted, "--trusted-keys", "import"}};
    for (size_t i = 0; i < sizeof scoped / sizeof scoped[0]; i++)
        if (scoped[i].value && strcmp(sub, scoped[i].only)) {
            rg_term_printf(stderr, "ropegrad runs %s: %s only applies to %s\n", sub, scoped[i].option, scoped[i].only);
            return 2;
        }
    if (x->evidence && strcmp(x->evidence, RG_EVIDENCE_MEASURED) && strcmp(x->evidence, RG_EVIDENCE_REPLICATED) &&
        strcmp(x->evidence, RG_EVIDENCE_IMPORTED)) {
        rg_term_printf(stderr, "ropegrad runs rank: --evidence '%.40s': expected measured, replicated or imported\n",
                x->evidence);
        return 2;
    }
    if (rg_runs_import_facts_check(x)) return 2;
    if (!strcmp(sub, "sign") && !x->key) {
        rg_term_printf(stderr, "ropegrad runs sign: --key KEY is required (a private key from `ropegrad keygen`)\n");
        return 2;
    }
    return 0;
}

static int cmd_note(runs_ctx *x, int64_t id, const char *text)
{
    int rc = rg_registry_add_note(x->g, id, text, x->err, sizeof x->err) ? 2 : 0;
    if (rc) rg_term_printf(stderr, "ropegrad runs note: %s\n", x->err);
    else if (x->json) {
        cJSON *o = cJSON_CreateObject();
        rc = rg_runs_emit_json("note", o, !o || !cJSON_AddNumberToObject(o, "run", (double)id) ||
                                              !cJSON_AddStringToObject(o, "kind", "note") ||
                                              !cJSON_AddBoolToObject(o, "evidence_unchanged", 1));
    } else tprintf("note added to run #%lld (evidence unchanged)\n", (long long)id);
    return rc;
}

static int cmd_replicate(runs_ctx *x, int64_t id)
{
    int64_t rid;
    int agreed;
    char suite[4096];
    if (x->suite) snprintf(suite, sizeof suite, "%s", x->suite);
    else rg_cli_default_suite(suite, sizeof suite);
    const rg_replicate_runner harness = {rg_suite_load, rg_run_suite};
    char *report = NULL;
    size_t report_len = 0;
    FILE *out = x->json ? open_memstream(&report, &report_len) : stdout;   /* --json: the report becomes a field */
    if (!out) {
        rg_term_printf(stderr, "ropegrad runs replicate: out of memory\n");
        return 2;
    }
    int rc = rg_record_replicate(x->g, id, suite, &harness, x->verbose, out, &rid, &agreed, x->err, sizeof x->err);
    if (x->json) fclose(out);
    if (rc) rg_term_printf(stderr, "ropegrad runs replicate: %s\n", x->err);
    else if (x->json) {
        cJSON *o = cJSON_CreateObject(), *lines = o ? cJSON_AddArrayToObject(o, "report") : NULL;
        int oom = !o || !lines || !cJSON_AddNumberToObject(o, "original", (double)id) ||
                  !cJSON_AddNumberToObject(o, "replica", (double)rid) || !cJSON_AddBoolToObject(o, "agreed", agreed);
        for (char *line = report, *nl; !oom && line && *line; line = nl ? nl + 1 : NULL) {   /* one string a line */
            if ((nl = strchr(line, '\n'))) *nl = 0;
            cJSON *l = cJSON_CreateString(rg_term(line));
            oom |= !l || !cJSON_AddItemToArray(lines, l);
        }
        rc = rg_runs_emit_json("replicate", o, oom);
        if (!rc) rc = agreed ? 0 : 1;
    } else rc = agreed ? 0 : 1;
    free(report);
    return rc;
}

/* Subcommand sub on the open registry (ids parsed, pos[0] the subcommand). */
static int dispatch(runs_ctx *x, const char *sub, int64_t id, int64_t id2, char **pos)
{
    if (!strcmp(sub, "list")) return x->json ? rg_runs_list_json(x) : rg_runs_list(x);
    if (!strcmp(sub, "show")) return x->json ? rg_runs_show_json(x, id) : rg_runs_show(x, id);
    if (!strcmp(sub, "rank")) return x->json ? rg_runs_rank_json(x) : rg_runs_rank(x);
    if (!strcmp(sub, "compare")) return x->json ? rg_runs_compare_json(x, id, id2) : rg_runs_compare(x, id, id2);
    if (!strcmp(sub, "export")) return rg_runs_export(x, id);   /* the manifest: JSON already */
    if (!strcmp(sub, "cite")) return x->json ? rg_runs_cite_json(x, id) : rg_runs_cite(x, id);
    if (!strcmp(sub, "sign")) return rg_runs_sign(x, id);
    if (!strcmp(sub, "note")) return cmd_note(x, id, pos[2]);
    return cmd_replicate(x, id);
}

int rg_cmd_runs(int argc, char **argv)
{
    int rc;
    if (handed_over(argc, argv, &rc)) return rc;
    runs_ctx x = {0};
    if ((rc = parse_options(argc, argv, &x)) >= 0) return rc;
    int npos = argc - optind;
    char **pos = argv + optind;
    if (npos < 1) {
        runs_usage(stderr);
        return 2;
    }
    const char *sub = pos[0];
    int which = find_sub(sub, npos);
    if (which < 0 || check_options(&x, sub)) return 2;
    if (!strcmp(sub, "import")) {
        rc = rg_runs_import(&x, pos[1]);
        rg_registry_close(x.g);
        return rc;
    }
    int64_t id = 0, id2 = 0;
    if (subs[which].min >= 1 && rg_cli_parse_run_id(sub, pos[1], &id)) return 2;
    if (!strcmp(sub, "compare") && npos == 3 && rg_cli_parse_run_id(sub, pos[2], &id2)) return 2;
    if (rg_runs_open_db(&x, 0)) return 2;
    rc = dispatch(&x, sub, id, id2, pos);
    rg_registry_close(x.g);
    return rc;
}
