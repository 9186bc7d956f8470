/* SPDX-License-Identifier: Apache-2.0 */
/*
 * history.c -- `ropegrad runs history`, `ropegrad runs check` and
 * `ropegrad runs regressions`.
 *
 * Thin: parse the arguments, call src/record/stats/rank.h, print. runs.c's
 * rg_cmd_runs hands these two subcommands over (they have their own options).
 * Exit codes: 0 ok (check: no workload SLOW), 1 check found a SLOW workload,
 * 2 bad usage or input (one line on stderr).
 */
#define _GNU_SOURCE   /* getopt_long */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopt.h"
#include "commands.h"
#include "gate.h"
#include "rank.h"
#include "record.h"
#include "rg_term.h"
#include "runs.h"
#include "runs_check.h"
#include "runs_format.h"



/* A number from an option: finite, in [lo, hi]. */
static int parse_num(const char *cmd, const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) {
        rg_term_printf(stderr, "ropegrad runs %s: %s '%.40s': expected a number in [%g, %g]\n", cmd, opt, s, lo, hi);
        return 2;
    }
    *out = v;
    return 0;
}


static int open_registry(const char *cmd, const char *db, rg_registry **g)
{
    char err[RG_ERRLEN];
    if (rg_registry_open(rg_registry_path(db), 0, g, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad runs %s: %s\n", cmd, err);
        return 2;
    }
    return 0;
}

/* ---- history ------------------------------------------------------------------- */

/* One line's history: the primary statistic, then each workload's median. */
static int print_line(rg_registry *g, const rg_ranked *e, size_t n)
{
    char b[300], c[96];
    const rg_run_row *r0 = &e[0].row;
    if (r0->backend[0]) snprintf(c, sizeof c, "%.15s kernel %d (%.40s)", r0->backend, r0->kernel, r0->kernel_name);
    else snprintf(c, sizeof c, "source %.60s", r0->source);
    tprintf("line: %s, group %.19s  %s on %s (%s)\n", c, r0->comparison_key,
           r0->definition, r0->device, r0->primary_statistic);
    tprintf("  %5s  %-24s  %-22s  %-36s  %-10s  %s\n", "id", "observed", "revision", "primary [95% interval]",
           "evidence", "flags");
    for (size_t i = 0; i < n; i++) {
        if (rg_untimed_label(e[i].row.status, e[i].row.primary_ns, NULL, b, sizeof b))
            rg_cli_interval(b, sizeof b, e[i].iv.est, e[i].iv.lo, e[i].iv.hi, e[i].iv.known);
        tprintf("  %5lld  %-24.24s  %-22.22s  %-*s  %-10s  %s%s%s\n", (long long)e[i].row.id,
               e[i].row.observed_at, e[i].revision, rg_cli_w(b, 36), b, e[i].row.evidence,
               strcmp(e[i].row.status, "passed") ? "FAILED " : "", e[i].suspect ? "SUSPECT: " : "",
               e[i].suspect ? e[i].suspect_why : "");
    }
    /* Per workload: the median and its 95% distribution-free interval in each run. */
    tprintf("  per workload: median [95%% interval of the median], oldest first\n");
    rg_manifest *m = calloc(n, sizeof *m);
    if (!m) {
        rg_term_printf(stderr, "ropegrad runs history: out of memory\n");
        return 2;
    }
    char err[RG_ERRLEN];
    for (size_t i = 0; i < n; i++)
        if (rg_registry_get(g, e[i].row.id, NULL, &m[i], err, sizeof err)) {
            rg_term_printf(stderr, "ropegrad runs history: %s\n", err);
            for (size_t k = 0; k < i; k++) rg_manifest_free(&m[k]);
            free(m);
            return 2;
        }
    if (!m[n - 1].n_workloads) tprintf("    (no per-workload figures in these records)\n");
    for (size_t w = 0; w < m[n - 1].n_workloads; w++) {
        const rg_mf_workload *ref = &m[n - 1].workloads[w];
        tprintf("    #%-3d", ref->index);
        for (size_t i = 0; i < n; i++) {
            const rg_mf_workload *x = rg_manifest_find_workload(&m[i], ref, w);
            double lo, hi;
            if (!x) tprintf("  run %lld: -", (long long)e[i].row.id);
            else if (!isfinite(x->median)) tprintf("  run %lld: not timed", (long long)e[i].row.id);
            else {
                int known = x->n_samples && x->n_samples < 1000000 &&
                            !rg_median_interval(x->samples, (int)x->n_samples, RG_STATS_CONF, &lo, &hi);
                tprintf("  run %lld: %s", (long long)e[i].row.id,
                        rg_cli_interval(b, sizeof b, x->median, known ? lo : NAN, known ? hi : NAN, known));
            }
        }
        tprintf("\n");
    }
    for (size_t i = 0; i < n; i++) rg_manifest_free(&m[i]);
    free(m);
    tprintf("\n");
    return 0;
}

static int history(rg_registry *g, const char *group, int64_t id, int json)
{
    char err[RG_ERRLEN];
    rg_run_row *rows;
    size_t nr;
    if (rg_registry_list(g, &rows, &nr, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad runs history: %s\n", err);
        return 2;
    }
    /* The runs whose lines are shown: run id's, or every line of the group. */
    int64_t *want = calloc(nr ? nr : 1, sizeof *want);
    char *seen = calloc(nr ? nr : 1, 1);
    size_t nw = 0;
    const char *key = NULL;
    for (size_t i = 0; i < nr && want && group; i++)
        if (!strncmp(rows[i].comparison_key, group, strlen(group))) {
            if (key && strcmp(key, rows[i].comparison_key)) {
                rg_term_printf(stderr, "ropegrad runs history: --group '%.80s' names more than one comparison group\n", group);
                free(rows), free(want), free(seen);
                return 2;
            }
            key = rows[i].comparison_key;
            want[nw++] = rows[i].id;
        }
    if (!group && want) want[nw++] = id;
    int rc = 0;
    if (!want || !seen) {
        rg_term_printf(stderr, "ropegrad runs history: out of memory\n");
        rc = 2;
    } else if (group && !nw) {
        rg_term_printf(stderr, "ropegrad runs history: no comparison group starts with '%.80s'\n", group);
        rc = 2;
    } else if (!json) {
        tprintf("method: %s\n\n", RG_RANK_METHOD);
    }
    cJSON *doc = json && !rc ? cJSON_CreateObject() : NULL, *lines = doc ? cJSON_CreateArray() : NULL;
    int oom = json && !rc && (!doc || !lines || !cJSON_AddItemToObject(doc, "lines", lines) ||
                              !cJSON_AddStringToObject(doc, "method", RG_RANK_METHOD));
    for (size_t i = 0; i < nw && !rc; i++) {
        size_t at = 0;
        while (at < nr && rows[at].id != want[i]) at++;
        if (at < nr && seen[at]) continue;
        rg_ranked *e;
        size_t n;
        int r = rg_registry_line(g, want[i], &e, &n, err, sizeof err);
        if (r) {
            rg_term_printf(stderr, "ropegrad runs history: %s\n", err);
            rc = 2;
            break;
        }
        for (size_t k = 0; k < n; k++)
            for (size_t j = 0; j < nr; j++)
                if (rows[j].id == e[k].row.id) seen[j] = 1;
        if (n && json && !oom) {
            int lr = rg_history_line_json(g, e, n, lines);
            if (lr == 2) rg_term_printf(stderr, "ropegrad runs history: a run of the line cannot be read\n"), rc = 2;
            oom |= lr == 1;
        } else if (n && !json) {
            rc = print_line(g, e, n);
        }
        free(e);
    }
    free(rows), free(want), free(seen);
    if (json && !rc) return rg_runs_emit_json("history", doc, oom);
    cJSON_Delete(doc);
    return rc;
}

/* ---- check ------------------------------------------------------------------------ */

/* Whether run id timed nothing (a failed run, or `check`): 0 with its label
 * in buf (untimed.c) and *failed set, 1 when it was timed, 2 on error
 * (said on stderr). */
static int timed_nothing(rg_registry *g, int64_t id, char *buf, size_t n, int *failed)
{
    char err[RG_ERRLEN];
    rg_run_row row;
    rg_manifest m;
    if (rg_registry_get(g, id, &row, &m, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad runs check: %s\n", err);
        return 2;
    }
    int rc = rg_untimed_label(row.status, row.primary_ns, rg_manifest_first_failure(&m), buf, n);
    *failed = strcmp(row.status, "passed") != 0;
    rg_manifest_free(&m);
    return rc;
}

static int check(rg_registry *g, int64_t id, int64_t against, double threshold, double alpha, double z_threshold,
                 int json)
{
    char err[RG_ERRLEN], a[300];
    int failed, t = timed_nothing(g, id, a, sizeof a, &failed);
    if (t == 2) return 2;
    if (t == 0) return rg_check_untimed(id, a, failed, json);   /* a failed run fails the check */
    int64_t base = against;
    if (!base) {
        int hrc = rg_check_history_rule(g, id, z_threshold, threshold, json);
        if (hrc >= 0) return hrc;
        if (rg_registry_previous_revision(g, id, &base, err, sizeof err)) {
            rg_term_printf(stderr, "ropegrad runs check: %s\n", err);
            return 2;
        }
        if (!base) return rg_check_no_baseline(id, json);
    }
    if (base == id) {
        rg_term_printf(stderr, "ropegrad runs check: run #%lld cannot be its own baseline\n", (long long)id);
        return 2;
    }
    if ((t = timed_nothing(g, base, a, sizeof a, &failed)) != 1) {
        if (!t)
            rg_term_printf(stderr, "ropegrad runs check: the baseline run #%lld timed nothing (%s): give --against "
                                   "a timed run\n", (long long)base, a);
        return 2;
    }
    return rg_check_pair(g, id, base, against != 0, threshold, alpha, json);
}

#define RG_CHECK_MAX_REPEATS 64

/* "ID,ID,..." into ids (at most RG_CHECK_MAX_REPEATS, distinct): 0, or 2 with one line on stderr. */
static int parse_id_list(const char *what, const char *s, int64_t *ids, size_t *n)
{
    char buf[1024];
    if (strlen(s) >= sizeof buf) {
        rg_term_printf(stderr, "ropegrad runs check: %s: too long a list of run ids\n", what);
        return 2;
    }
    snprintf(buf, sizeof buf, "%s", s);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == RG_CHECK_MAX_REPEATS) {
            rg_term_printf(stderr, "ropegrad runs check: %s: at most %d runs\n", what, RG_CHECK_MAX_REPEATS);
            return 2;
        }
        if (rg_cli_parse_run_id("runs check", tok, &ids[*n])) return 2;
        for (size_t i = 0; i < *n; i++)
            if (ids[i] == ids[*n]) {
                rg_term_printf(stderr, "ropegrad runs check: %s: run #%lld is listed twice\n", what, (long long)ids[i]);
                return 2;
            }
        (*n)++;
    }
    if (!*n || s[strlen(s) - 1] == ',' || s[0] == ',' || strstr(s, ",,")) {
        rg_term_printf(stderr, "ropegrad runs check: %s: '%s' is not a comma-separated list of run ids\n", what, s);
        return 2;
    }
    return 0;
}

/* runs check B1,B2,... --against A1,A2,...: every run timed; a failed run under test fails the check. */
static int check_repeated(rg_registry *g, const char *runs_s, const char *against_s, double threshold, int json)
{
    int64_t runs[RG_CHECK_MAX_REPEATS], bases[RG_CHECK_MAX_REPEATS];
    size_t nr, nb;
    if (!against_s) {
        rg_term_printf(stderr, "ropegrad runs check: several runs are checked against --against REF,REF,...\n");
        return 2;
    }
    if (parse_id_list("the runs", runs_s, runs, &nr) || parse_id_list("--against", against_s, bases, &nb)) return 2;
    char a[300];
    int failed;
    for (size_t i = 0; i < nr; i++) {
        for (size_t j = 0; j < nb; j++)
            if (runs[i] == bases[j]) {
                rg_term_printf(stderr, "ropegrad runs check: run #%lld cannot be its own baseline\n", (long long)runs[i]);
                return 2;
            }
        int t = timed_nothing(g, runs[i], a, sizeof a, &failed);
        if (t != 1) return t == 2 ? 2 : rg_check_untimed(runs[i], a, failed, json);
    }
    for (size_t j = 0; j < nb; j++) {
        int t = timed_nothing(g, bases[j], a, sizeof a, &failed);
        if (t != 1) {
            if (!t)
                rg_term_printf(stderr, "ropegrad runs check: the baseline run #%lld timed nothing (%s): give timed "
                                       "runs to --against\n", (long long)bases[j], a);
            return 2;
        }
    }
    return rg_check_repeated(g, runs, nr, bases, nb, threshold, json);
}

/* ---- regressions ------------------------------------------------------------------ */

static int regressions(rg_registry *g, int json, double threshold, double alpha)
{
    char err[RG_ERRLEN];
    rg_regression *r;
    size_t n;
    if (rg_registry_regressions(g, alpha, threshold, 1, &r, &n, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad runs regressions: %s\n", err);
        return 2;
    }
    int rc = n ? 1 : 0;
    if (json) {
        char *text = rg_regressions_json(r, n, alpha, threshold, err, sizeof err);
        if (!text) {
            rg_term_printf(stderr, "ropegrad runs regressions: %s\n", err);
            rc = 2;
        } else {
            fputs(text, stdout);
            free(text);
        }
    } else {
        tprintf("regressions of the latest revision of each line (threshold %.3g%%, alpha %.3g)\nmethod: %s\n\n",
               100 * threshold, alpha, RG_CHECK_METHOD);
        if (!n) tprintf("none\n");
        for (size_t i = 0; i < n; i++) {
            tprintf("run #%lld (%s) vs #%lld (%s): %s on %s, %s: %d SLOW of %zu workloads:", (long long)r[i].run_id,
                   r[i].revision, (long long)r[i].base_id, r[i].base_revision, r[i].line,
                   r[i].device, r[i].definition, r[i].n_slow, r[i].n_rows);
            for (size_t k = 0; k < r[i].n_rows; k++)
                if (r[i].rows[k].verdict == RG_VERDICT_SLOW)
                    tprintf(" #%d %.3fx [%.3f, %.3f]", r[i].rows[k].index, r[i].rows[k].shift.ratio, r[i].rows[k].shift.lo,
                           r[i].rows[k].shift.hi);
            tprintf("\n");
        }
    }
    rg_regressions_free(r, n);
    return rc;
}

/* `ropegrad runs history|check|regressions ...`: argv[0] is the subcommand. */
/* --help of runs history, check or regressions. */
static void usage(int is_check, int is_reg)
{
    if (is_reg)
        tprintf("usage: ropegrad runs regressions [--json] [--threshold PCT] [--alpha A] [--db FILE]\n\n"
               "For every implementation line, its latest run checked against the previous revision (as\n"
               "`runs check`); lists the lines with a SLOW workload (--json: the feed the index serves).\n"
               "exit status: 0 none, 1 a regression, 2 bad usage or input\n");
    else if (is_check)
        tprintf("usage: ropegrad runs check ID [--against REF] [--threshold PCT] [--alpha A] [--z Z] [--json]\n"
               "                          [--db FILE]\n"
               "       ropegrad runs check ID,ID,... --against REF,REF,... [--threshold PCT] [--json] [--db FILE]\n\n"
               "With %d or more earlier credible runs in its line (same comparison group, implementation,\n"
               "backend and kernel; passed, not suspect, not recorded on a busy machine) and no --against:\n"
               "run ID's primary figure against the distribution of theirs (the latest %d): SLOW (FAST) when\n"
               "its z-score is above Z (below -Z) and it is more than t slower (faster) than their mean.\n"
               "Otherwise against one baseline: the latest earlier run of its line that measured another\n"
               "revision, or --against REF. The ratio of the two primary figures is judged against the\n"
               "machine's run-to-run noise sigma: SLOW (FAST) only when it is more than t slower (faster)\n"
               "and beyond exp(k sqrt(2) sigma), k the one-sided 99.9%% Student t quantile; UNCLEAR between.\n"
               "sigma comes from the machine's history (%d or more pairs of back-to-back runs of the same\n"
               "code), else its calibration (`ropegrad runs calibrate`), else the default %.0f%%.\n"
               "Per workload: the Hodges-Lehmann ratio of the samples with a %.0f%% distribution-free\n"
               "interval and a two-sided Mann-Whitney U test, SLOW (FAST) only when p < alpha and the whole\n"
               "interval lies beyond both 1+t and the noise band. A CPU run during which other processes\n"
               "used %.0f%% of the CPUs or more, or steal %.0f%% (older records: a load average at or above half\n"
               "the CPUs at its start), is UNCLEAR, never SLOW. Defaults: --threshold %.0f (percent, t),\n"
               "--alpha %g, --z %g. --json: one JSON document (docs/record.md).\n"
               "Several runs against several baseline runs, recorded interleaved (A B A B ...): the ratio of\n"
               "the geometric means of their figures against exp(k sqrt(1/n + 1/m) sigma), n and m the two\n"
               "sides' runs; per workload the same rule on the runs' medians. A slowdown one pair leaves\n"
               "UNCLEAR on a noisy machine is decided by more pairs.\n"
               "exit status: 0 same or faster, 1 slower (a regression) or a failed run, 3 unclear,\n"
               "2 bad usage or input\n",
               RG_GATE_MIN_HISTORY, RG_GATE_LOOKBACK, RG_NOISE_MIN_PAIRS, 100 * RG_NOISE_DEFAULT, 100 * RG_STATS_CONF,
               100 * RG_GATE_BUSY_OTHER, 100 * RG_GATE_BUSY_STEAL, 100 * RG_STATS_THRESHOLD, RG_STATS_ALPHA, RG_GATE_Z);
    else
        tprintf("usage: ropegrad runs history ID | --group KEY [--json] [--db FILE]\n\n"
               "The primary statistic (with its %.0f%% interval) and each workload's median (with its\n"
               "interval) over the runs of an implementation line, oldest first, with the revision each\n"
               "measured (git commit when built from a checkout, else the implementation digest).\n"
               "ID: the line of that run; --group KEY (a prefix of the comparison key): every line of it.\n"
               "--json: one JSON document {method, lines: [{runs, workloads}]} (docs/record.md).\n",
               100 * RG_STATS_CONF);
}

/* The options and npos run ids that go together for sub (history, check or
 * regressions): 0, or 2 with one line on stderr. */
static int check_usage(const char *sub, int npos, const char *group, const char *against_s, int json, int have_t,
                       int have_a, int have_z)
{
    int is_check = !strcmp(sub, "check"), is_reg = !strcmp(sub, "regressions");
    if (is_reg && (group || against_s || npos != 0)) {
        rg_term_printf(stderr, "ropegrad runs regressions: expected no run id, --group or --against (usage: ropegrad runs "
                        "regressions [--json] [--threshold PCT] [--alpha A])\n");
        return 2;
    }
    if (is_check && (group || npos != 1)) {
        rg_term_printf(stderr, "ropegrad runs check: expected one run id and no --group (usage: ropegrad runs check ID "
                        "[--against REF] [--threshold PCT] [--alpha A])\n");
        return 2;
    }
    if (!is_check && have_z) {
        rg_term_printf(stderr, "ropegrad runs %s: --z only applies to check\n", sub);
        return 2;
    }
    if (!is_check && !is_reg && (against_s || have_t || have_a || (group ? npos != 0 : npos != 1))) {
        rg_term_printf(stderr, "ropegrad runs history: expected one run id or --group KEY, and no check options (usage: "
                        "ropegrad runs history ID | --group KEY)\n");
        return 2;
    }
    if (group && (!group[0] || strlen(group) > 80)) {
        rg_term_printf(stderr, "ropegrad runs history: --group needs a comparison key or a prefix of one\n");
        return 2;
    }
    return 0;
}

int rg_cmd_runs_history_check(int argc, char **argv)
{
    enum { OPT_DB = 1000, OPT_GROUP, OPT_AGAINST, OPT_THRESHOLD, OPT_ALPHA, OPT_JSON, OPT_Z };
    static const struct option longopts[] = {{"db", required_argument, NULL, OPT_DB},
                                             {"group", required_argument, NULL, OPT_GROUP},
                                             {"against", required_argument, NULL, OPT_AGAINST},
                                             {"threshold", required_argument, NULL, OPT_THRESHOLD},
                                             {"alpha", required_argument, NULL, OPT_ALPHA},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"z", required_argument, NULL, OPT_Z},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *sub = argv[0], *db = NULL, *group = NULL, *against_s = NULL;
    int is_check = !strcmp(sub, "check"), is_reg = !strcmp(sub, "regressions"), json = 0;
    double threshold = RG_STATS_THRESHOLD, alpha = RG_STATS_ALPHA, z_threshold = RG_GATE_Z, pct;
    int have_t = 0, have_a = 0, have_z = 0;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_DB:
            if (rg_cli_db_option(is_check ? "runs check" : is_reg ? "runs regressions" : "runs history", optarg, &db))
                return 2;
            break;
        case OPT_GROUP: group = optarg; break;
        case OPT_AGAINST: against_s = optarg; break;
        case OPT_JSON: json = 1; break;
        case OPT_THRESHOLD:
            if (parse_num(sub, "--threshold", optarg, 0, 1000, &pct)) return 2;
            threshold = pct / 100, have_t = 1;
            break;
        case OPT_Z:
            if (parse_num(sub, "--z", optarg, 0.1, 100, &z_threshold)) return 2;
            have_z = 1;
            break;
        case OPT_ALPHA:
            if (parse_num(sub, "--alpha", optarg, 1e-12, 0.5, &alpha)) return 2;
            have_a = 1;
            break;
        case 'h':
            usage(is_check, is_reg);
            return 0;
        case ':': rg_term_printf(stderr, "ropegrad runs %s: %s needs a value\n", sub, argv[optind - 1]); return 2;
        default: rg_term_printf(stderr, "ropegrad runs %s: unknown option '%s' (try --help)\n", sub, argv[optind - 1]); return 2;
        }
    }
    int npos = argc - optind;
    if (check_usage(sub, npos, group, against_s, json, have_t, have_a, have_z)) return 2;
    int64_t id = 0, against = 0;
    int repeated = is_check && npos == 1 && (strchr(argv[optind], ',') || (against_s && strchr(against_s, ',')));
    if (repeated) {
        rg_registry *g;
        if (open_registry(sub, db, &g)) return 2;
        int rc = check_repeated(g, argv[optind], against_s, threshold, json);
        rg_registry_close(g);
        return rc;
    }
    if (npos == 1 && rg_cli_parse_run_id(is_check ? "runs check" : "runs history", argv[optind], &id)) return 2;
    if (against_s && rg_cli_parse_run_id(is_check ? "runs check" : "runs history", against_s, &against)) return 2;
    rg_registry *g;
    if (open_registry(sub, db, &g)) return 2;
    int rc = is_check ? check(g, id, against, threshold, alpha, z_threshold, json)
             : is_reg ? regressions(g, json, threshold, alpha)
                      : history(g, group, id, json);
    rg_registry_close(g);
    return rc;
}
