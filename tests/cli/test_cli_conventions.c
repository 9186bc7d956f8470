/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_conventions.c -- the CLI conventions of issue 12, each through the
 * built binary: '-' for stdout (--json, --html, --out), workload ranges and
 * --list, --progress and --quiet, --format md|csv|json, `check` without
 * timing lines, `runs list --json`, the XDG default registry (with
 * ROPEGRAD_DB and --db overriding), and the load average of CPU runs (recorded,
 * and a warning when the machine is busy). The range parser is also tested
 * on its own (src/cli/cliopt.c is compiled into this test). */
#define _DEFAULT_SOURCE   /* getloadavg */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cliopt.h"
#include "test_record_fixture.h"
#include "test_util.h"

static char dir[400];
static char out_text[1 << 18], err_text[1 << 14];
#define rg(...) tu_run_captured(dir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)
/* The bench and check runs below take one correctness round (--rounds 1): the
 * conventions tested here do not depend on the rounds (test_reward_hack tests
 * those), and ten float64 rounds a call made this test the slowest. */

/* `env ENV ropegrad ARGS` in dir, captured like rg(). */
static int rg_with_env(const char *envspec, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && env %s '%s' %s > out.txt 2> err.txt", dir, envspec, TU_BIN, args);
    int rc = tu_system(cmd);
    char p[600];
    snprintf(p, sizeof p, "%s/out.txt", dir);
    tu_read_into(p, out_text, sizeof out_text);
    snprintf(p, sizeof p, "%s/err.txt", dir);
    tu_read_into(p, err_text, sizeof err_text);
    return rc;
}

#define EXPECT_OK(rc) TU_EXPECT_OK(rc, err_text)
#define EXPECT_ONE_LINE_ERROR(rc, needle) TU_EXPECT_ONE_LINE_ERROR(rc, err_text, needle)

static int setup(void **state)
{
    fx_path(dir, sizeof dir, "conventions");
    return tu_fresh_dir(dir);
}
static int teardown(void **state) { return tu_rm_rf(dir); }

static const char *at(const char *name)
{
    static char p[4][600];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static int exists(const char *name) { return access(at(name), F_OK) == 0; }

static void import_fixtures(const char *db)
{
    for (int i = 1; i <= 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%d.json", i);
        assert_int_equal(fx_write_manifest(at(name), "", i, 1.0 + i, i), 0);
        EXPECT_OK(rg("runs import %s --db %s", name, db));
    }
}

/* ---- '-' means stdout ------------------------------------------------------------ */

static void test_dash_is_stdout(void **state)
{
    EXPECT_OK(rg("bench --backend cpu --workloads 1 --iterations 2 --warmup 0 --json - --rounds 1"));
    cJSON *j = cJSON_Parse(out_text);   /* stdout is the JSON document alone */
    if (!j) fail_msg("stdout is not JSON: %.300s", out_text);
    assert_int_equal(cJSON_GetArraySize(tu_get(j, "workloads")), 1);
    cJSON_Delete(j);
    assert_non_null(strstr(err_text, "passed 1/1"));   /* the table went to stderr */

    import_fixtures("t.db");
    EXPECT_OK(rg("runs export 1 --out - --db t.db"));
    j = cJSON_Parse(out_text);
    assert_non_null(j);
    assert_non_null(cJSON_GetObjectItemCaseSensitive(j, "run"));   /* the KernelIndex envelope */
    cJSON_Delete(j);
    EXPECT_OK(rg("report 1 --html - --db t.db"));
    assert_non_null(strstr(out_text, "<html"));
    assert_null(strstr(out_text, "written to"));
    EXPECT_OK(rg("export-solution --out -"));
    j = cJSON_Parse(out_text);
    assert_non_null(j);
    assert_non_null(cJSON_GetObjectItemCaseSensitive(j, "sources"));
    cJSON_Delete(j);
    assert_false(exists("-"));   /* no file named '-' anywhere */
    /* Two JSON documents on one stdout: refused. */
    EXPECT_ONE_LINE_ERROR(rg("bench --backend cpu --workloads 1 --json - --format json"), "--format json");
}

/* ---- workload ranges and --list --------------------------------------------------- */

static void test_parse_ranges(void **state)
{
    int *v;
    size_t n;
    char err[256];
    assert_int_equal(rg_cli_parse_ranges("--workloads", "0-3,14", &v, &n, err, sizeof err), 0);
    assert_int_equal(n, 5);
    int want[] = {0, 1, 2, 3, 14};
    assert_memory_equal(v, want, sizeof want);
    free(v);
    assert_int_equal(rg_cli_parse_ranges("--workloads", "7", &v, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(v[0], 7);
    free(v);
    assert_int_equal(rg_cli_parse_ranges("--workloads", "5-5,2", &v, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    free(v);
    static const char *const bad[] = {"", "3-1", "1-", "-2", "a", "0-3,", ",1", "1,,2", "1 - 2", "0-999999999",
                                      "99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = (int *)1;
        if (!rg_cli_parse_ranges("--workloads", bad[i], &v, &n, err, sizeof err))
            fail_msg("'%s' was accepted", bad[i]);
        assert_null(v);
        assert_non_null(strstr(err, "--workloads"));
    }
}

/* ---- commands whose options all take a value (rg_cli_value_options) ---------------- */

static void test_value_options(void **state)
{
    const char *db = NULL, *out = NULL;
    const rg_cli_value_option opts[] = {{"db", &db}, {"out", &out}};
    char a0[] = "site", a1[] = "--out", a2[] = "one", a3[] = "ARG", a4[] = "--db=x.db", a5[] = "--out", a6[] = "two";
    char *argv[] = {a0, a1, a2, a3, a4, a5, a6, NULL};
    assert_int_equal(rg_cli_value_options(7, argv, "site", opts, 2, "help\n"), -1);
    assert_string_equal(out, "two");   /* the last one given wins */
    assert_string_equal(db, "x.db");
    assert_int_equal(optind, 6);       /* operands permuted after the options */
    assert_string_equal(argv[optind], "ARG");

    char b1[] = "--db", b2[] = "--bogus", b3[] = "-x";
    char *missing[] = {a0, b1, NULL}, *unknown[] = {a0, b2, NULL}, *short_unknown[] = {a0, b3, NULL};
    assert_int_equal(rg_cli_value_options(2, missing, "site", opts, 2, "help\n"), 2);
    assert_int_equal(rg_cli_value_options(2, unknown, "site", opts, 2, "help\n"), 2);
    assert_int_equal(rg_cli_value_options(2, short_unknown, "site", opts, 2, "help\n"), 2);

    /* A bad table is refused, not followed. */
    const rg_cli_value_option nameless[] = {{NULL, &db}}, nowhere[] = {{"db", NULL}};
    char *none[] = {a0, NULL};
    assert_int_equal(rg_cli_value_options(1, none, "site", nameless, 1, "help\n"), 2);
    assert_int_equal(rg_cli_value_options(1, none, "site", nowhere, 1, "help\n"), 2);
    assert_int_equal(rg_cli_value_options(1, none, "site", NULL, 1, "help\n"), 2);
    assert_int_equal(rg_cli_value_options(1, none, "site", opts, RG_CLI_MAX_VALUE_OPTIONS + 1, "help\n"), 2);
    assert_int_equal(rg_cli_value_options(1, NULL, "site", opts, 2, "help\n"), 2);
    assert_int_equal(rg_cli_value_options(1, none, "site", opts, 2, NULL), 2);
    assert_int_equal(rg_cli_value_options(1, none, "site", opts, 2, "help\n"), -1);   /* no options: go on */
}

/* The commands parsed by rg_cli_value_options, through the binary: --help on
 * stdout, one line on stderr for a missing value or an unknown option. */
static void test_value_option_commands(void **state)
{
    static const struct {
        const char *cmd, *opt, *usage;
    } c[] = {{"report", "--html", "usage: ropegrad report ID --html FILE"},
             {"site", "--out", "usage: ropegrad site --out DIR"},
             {"verify", "--trusted-keys", "usage: ropegrad verify FILE"},
             {"runs push", "--token-file", "usage: ropegrad runs push URL FILE"}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        EXPECT_OK(rg("%s --help", c[i].cmd));
        assert_non_null(strstr(out_text, c[i].usage));
        char want[200];
        snprintf(want, sizeof want, "ropegrad %s: %s needs a value", c[i].cmd, c[i].opt);
        EXPECT_ONE_LINE_ERROR(rg("%s %s", c[i].cmd, c[i].opt), want);
        snprintf(want, sizeof want, "ropegrad %s: unknown option '--bogus' (try --help)", c[i].cmd);
        EXPECT_ONE_LINE_ERROR(rg("%s --bogus", c[i].cmd), want);
    }
}

static void test_ranges_and_list(void **state)
{
    EXPECT_OK(rg("check --backend cpu --workloads 0-2,5 --format csv --rounds 1"));
    assert_int_equal(tu_count_lines(out_text), 5);   /* header + 0,1,2,5 */
    assert_non_null(strstr(out_text, "\n0,32,256,"));
    assert_non_null(strstr(out_text, "\n5,"));
    assert_null(strstr(out_text, "\n3,"));
    EXPECT_ONE_LINE_ERROR(rg("check --backend cpu --workloads 3-1"), "--workloads");
    EXPECT_ONE_LINE_ERROR(rg("check --backend cpu --workloads 0-99"), "index 16");   /* past the suite's 16 */
    EXPECT_OK(rg("bench --list"));
    assert_int_equal(tu_count_lines(out_text), 17);   /* header + the suite's 16 workloads */
    assert_non_null(strstr(out_text, "80418e26-ee3d-5ceb-b175-0a7b83f1f47a"));
    assert_null(strstr(out_text, "passed"));          /* nothing was run */
}

/* ---- progress, quiet, formats, check ------------------------------------------------ */

static void test_progress_and_quiet(void **state)
{
    /* stderr is a file here, not a terminal: no progress unless asked. */
    EXPECT_OK(rg("check --workloads 0,1 --rounds 1"));
    assert_null(strstr(err_text, "[1/2]"));
    EXPECT_OK(rg("check --workloads 0,1 --progress --rounds 1"));
    assert_non_null(strstr(err_text, "[1/2] workload 0"));
    assert_non_null(strstr(err_text, "[2/2] workload 1"));
    EXPECT_OK(rg("check --workloads 0,1 --quiet --rounds 1"));   /* --backend auto: not even its note */
    assert_string_equal(err_text, "");
    assert_non_null(strstr(out_text, "passed 2/2"));
}

static void test_formats(void **state)
{
    EXPECT_OK(rg("bench --backend cpu --workloads 1,2 --iterations 2 --warmup 0 --format md --quiet --rounds 1"));
    assert_true(!strncmp(out_text, "| workload | B | S | time_us | GB/s | max_abs_err |", 50));
    assert_non_null(strstr(out_text, "\n|---:|"));
    assert_int_equal(tu_count_lines(out_text), 4);
    EXPECT_OK(rg("bench --backend cpu --workloads 1 --iterations 2 --warmup 0 --format json --quiet --record --db f.db --rounds 1"));
    cJSON *j = cJSON_Parse(out_text);   /* stdout is the document alone: the "recorded as" note is on stderr */
    if (!j) fail_msg("stdout is not JSON: %.300s", out_text);
    cJSON_Delete(j);
    assert_non_null(strstr(err_text, "recorded as run 1"));
    EXPECT_OK(rg("bench --backend cpu --workloads 1 --iterations 2 --warmup 0 --format csv --quiet --rounds 1"));
    assert_true(!strncmp(out_text, "workload,B,S,time_us,GB/s,", 26));
    EXPECT_ONE_LINE_ERROR(rg("bench --format yaml"), "--format");
}

static void test_check_prints_no_timing(void **state)
{
    EXPECT_OK(rg("check --backend cpu --workloads 0 --rounds 1"));
    const char *timing[] = {"time_us", "GB/s", "mean of per-workload", "geometric mean", "timer ", "iterations"};
    for (size_t i = 0; i < sizeof timing / sizeof timing[0]; i++)
        if (strstr(out_text, timing[i])) fail_msg("check printed '%s':\n%s", timing[i], out_text);
    assert_non_null(strstr(out_text, "passed 1/1"));
    EXPECT_OK(rg("bench --backend cpu --workloads 0 --iterations 2 --warmup 0 --rounds 1"));
    assert_non_null(strstr(out_text, "time_us"));
    assert_non_null(strstr(out_text, "geometric mean"));
}

/* ---- runs list --json --------------------------------------------------------------- */

static void test_runs_list_json(void **state)
{
    import_fixtures("t.db");
    EXPECT_OK(rg("runs list --json --db t.db"));
    cJSON *j = cJSON_Parse(out_text);
    if (!cJSON_IsArray(j)) fail_msg("not a JSON array: %.300s", out_text);
    assert_int_equal(cJSON_GetArraySize(j), 2);
    const cJSON *r = cJSON_GetArrayItem(j, 1);
    assert_int_equal((int)tu_get(r, "id")->valuedouble, 2);
    assert_string_equal(tu_get(r, "evidence")->valuestring, "imported");
    assert_string_equal(tu_get(r, "kernel_name")->valuestring, "variant-2");
    assert_true(cJSON_IsNumber(tu_get(r, "geomean_ns")));
    assert_true(cJSON_IsNull(tu_get(r, "replicates_of")));
    cJSON_Delete(j);
    /* replicate --json: a run imported from elsewhere measured no protocol here to repeat: one line, exit 2. */
    EXPECT_ONE_LINE_ERROR(rg("runs replicate 1 --json --db t.db"), "ropegrad runs replicate:");
    /* --json on every other subcommand: one JSON document each, with its documented keys (docs/record.md). */
    static const struct { const char *args, *keys[4]; } docs[] = {
        {"runs show 1 --json --db t.db", {"run", "workloads", "notes", "harness"}},
        {"runs cite 2 --json --db t.db", {"run", "run_digest", "observed_at", "accessed"}},
        {"runs rank --json --db t.db", {"method", "groups", NULL}},
        {"runs compare 1 2 --json --db t.db", {"a", "b", "workloads", "primary_ratio"}},
        {"runs compare 2 --json --db t.db", {"a", "b", NULL}},
        {"runs history 1 --json --db t.db", {"method", "lines", NULL}},
        {"runs check 2 --against 1 --json --db t.db", {"run", "rule", "verdict", "exit"}},
        {"runs regressions --json --db t.db", {"regressions", NULL}},
        {"runs note 1 hello --json --db t.db", {"run", "kind", "evidence_unchanged", NULL}},
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        int rc = rg("%s", docs[i].args);
        if (rc != 0 && rc != 1 && rc != 3) fail_msg("%s: exit %d: %s", docs[i].args, rc, err_text);
        cJSON *d = cJSON_Parse(out_text);
        if (!d) fail_msg("%s: not one JSON document: %.300s", docs[i].args, out_text);
        for (int k = 0; k < 4 && docs[i].keys[k]; k++)
            if (!cJSON_GetObjectItem(d, docs[i].keys[k])) fail_msg("%s: no \"%s\"", docs[i].args, docs[i].keys[k]);
        cJSON_Delete(d);
    }
    /* Text: times in the unit that fits (rg_cli_time), never an exponent. */
    const char *text_cmds[] = {"runs history 1 --db t.db", "runs rank --db t.db", "runs show 1 --db t.db"};
    for (size_t i = 0; i < sizeof text_cmds / sizeof text_cmds[0]; i++) {
        assert_int_equal(rg("%s", text_cmds[i]), 0);
        if ((!strstr(out_text, " \xC2\xB5s") && !strstr(out_text, " ms")) || strstr(out_text, "e+0") || strstr(out_text, " us "))
            fail_msg("%s: times not in µs/ms:\n%s%s", text_cmds[i], out_text, err_text);
    }
}

/* ---- the default registry (XDG) ----------------------------------------------------- */

static void test_xdg_registry(void **state)
{
    const char *rec = "bench --backend cpu --workloads 1 --iterations 1 --warmup 0 --quiet --record --rounds 1";
    char e[1400];
    /* $XDG_DATA_HOME/ropegrad/runs.db, folders made 0700. */
    snprintf(e, sizeof e, "-u ROPEGRAD_DB XDG_DATA_HOME='%s' HOME='%s'", at("xdg"), at("home"));
    EXPECT_OK(rg_with_env(e, rec));
    assert_true(exists("xdg/ropegrad/runs.db"));
    assert_false(exists("home/.local"));
    struct stat st;
    assert_int_equal(stat(at("xdg/ropegrad"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    EXPECT_OK(rg_with_env(e, "runs list"));
    assert_non_null(strstr(out_text, "measured"));
    /* No XDG_DATA_HOME, or a relative one (the spec says to ignore it): ~/.local/share. */
    snprintf(e, sizeof e, "-u ROPEGRAD_DB -u XDG_DATA_HOME HOME='%s'", at("home"));
    EXPECT_OK(rg_with_env(e, rec));
    snprintf(e, sizeof e, "-u ROPEGRAD_DB XDG_DATA_HOME=relative HOME='%s'", at("home"));
    EXPECT_OK(rg_with_env(e, rec));
    assert_true(exists("home/.local/share/ropegrad/runs.db"));
    assert_false(exists("relative"));
    snprintf(e, sizeof e, "-u ROPEGRAD_DB XDG_DATA_HOME= HOME='%s'", at("home"));
    EXPECT_OK(rg_with_env(e, "runs list --json"));
    cJSON *j = cJSON_Parse(out_text);
    assert_int_equal(cJSON_GetArraySize(j), 2);
    cJSON_Delete(j);
    /* ROPEGRAD_DB overrides XDG; --db overrides ROPEGRAD_DB. */
    snprintf(e, sizeof e, "ROPEGRAD_DB=env.db XDG_DATA_HOME='%s'", at("xdg2"));
    EXPECT_OK(rg_with_env(e, rec));
    assert_true(exists("env.db"));
    char with_db[256];
    snprintf(with_db, sizeof with_db, "%s --db opt.db", rec);
    EXPECT_OK(rg_with_env(e, with_db));
    assert_true(exists("opt.db"));
    assert_false(exists("xdg2"));
}

/* ---- the load average of CPU runs ---------------------------------------------------- */

static void test_load_average(void **state)
{
    EXPECT_OK(rg("bench --backend cpu --workloads 1 --iterations 2 --warmup 0 --json r.json --manifest m.json --rounds 1 "
                 "--record --db t.db"));
    char *text = tu_slurp(at("r.json"), NULL);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    const cJSON *env = tu_get(j, "environment");
    double load = tu_get(env, "load_average_1m")->valuedouble;
    int cpus = (int)tu_get(env, "online_cpus")->valuedouble;
    assert_true(load >= 0);
    assert_int_equal(cpus, (int)sysconf(_SC_NPROCESSORS_ONLN));
    /* What other processes and steal took over the run (cpu_share.h): within the machine. */
    double other = tu_get(env, "other_cpus")->valuedouble, steal = tu_get(env, "steal_cpus")->valuedouble;
    assert_true(other >= 0 && other <= cpus + 0.5 && steal >= 0 && steal <= cpus + 0.5);
    assert_true(tu_get(env, "share_seconds")->valuedouble > 0);
    cJSON_Delete(j);
    text = tu_slurp(at("m.json"), NULL);
    assert_non_null(strstr(text, "\"loadAverage1m\""));
    assert_non_null(strstr(text, "\"otherCpus\""));
    assert_non_null(strstr(text, "\"stealCpus\""));
    free(text);
    EXPECT_OK(rg("verify m.json"));
    /* The warning follows the load, read here too: asserted only when the load
     * is clearly on one side of half the CPUs (it moves while we look). */
    double now[1];
    int threshold_side = 0;
    if (getloadavg(now, 1) == 1 && (now[0] - 0.5 * cpus > 0.3 || 0.5 * cpus - now[0] > 0.3)) {
        EXPECT_OK(rg("bench --backend cpu --workloads 1 --iterations 2 --warmup 0 --rounds 1"));
        threshold_side = now[0] > 0.5 * cpus ? 1 : -1;
        print_message("    load %.2f on %d CPUs: warning %s\n", now[0], cpus, threshold_side > 0 ? "expected" : "not expected");
        if (threshold_side > 0) assert_non_null(strstr(err_text, "warning: the machine was busy (load average"));
        else assert_null(strstr(err_text, "busy"));
    }
    /* check is not timed: never a warning; a CUDA run records no load (not checkable here). */
    EXPECT_OK(rg("check --backend cpu --workloads 1 --rounds 1"));
    assert_null(strstr(err_text, "busy"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dash_is_stdout, setup, teardown),
        cmocka_unit_test(test_parse_ranges),
        cmocka_unit_test(test_value_options),
        cmocka_unit_test_setup_teardown(test_value_option_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranges_and_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_progress_and_quiet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_formats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_prints_no_timing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_runs_list_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_xdg_registry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_average, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
