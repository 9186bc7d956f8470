/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_failed.c -- issue 24 point 13, through the built binary:
 *   - `bench --record` of a run with a failing workload stores a run with
 *     status failed, the failing workload marked (pass false, no timings)
 *     and a manifest that verifies; exit 1 (main refused to record it);
 *   - `bench --record` of a run whose every workload failed (nothing timed)
 *     stores it as failed, shown "not timed" with the reason, refused by
 *     `runs replicate` with one line; exit 1 (refused before);
 *   - `check --record` and `check --manifest` record the checks (nothing
 *     timed): passed (exit 0, "correctness only", not ranked) or failed
 *     (exit 1) (refused before);
 *   - --baseline (missing, a FIFO, not a baseline) and --db "" are one line
 *     and exit 2 before the suite runs (--progress would have printed a
 *     line per workload);
 *   - `verify --trusted-keys` with a missing, empty or FIFO value is one line
 *     on stderr before any digest is computed (nothing on stdout). */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include "test_record_fixture.h"
#include "test_util.h"

static char dir[400], out_text[1 << 16], err_text[1 << 14];

static int rg_in_dir(const char *args)
{
    return tu_run_prefixed(dir, "timeout 120", out_text, sizeof out_text, err_text, sizeof err_text, args);
}

/* dir/fails: the test suite with tolerances no bf16 result meets on its
 * first workload, so workload 0 fails its check and workload 1 passes. */
static int setup(void **state)
{
    (void)state;
    fx_path(dir, sizeof dir, "record-failed");
    if (tu_fresh_dir(dir)) return -1;
    char cmd[1600];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && cp -r '%s/tests/data/suite_ok' fails && sed -i '1s/\"max_atol\": 1e-05, \"max_rtol\": 1e-05/"
             "\"max_atol\": 1e-30, \"max_rtol\": 1e-30/' fails/workload.jsonl && grep -q 1e-30 fails/workload.jsonl && "
             "cp -r fails all_fail && sed -i 's/\"max_atol\": 1e-05, \"max_rtol\": 1e-05/"
             "\"max_atol\": 1e-30, \"max_rtol\": 1e-30/' all_fail/workload.jsonl",
             dir, RG_SOURCE_DIR);
    if (tu_system(cmd)) return -1;
    if (mkfifo(tu_path_in(dir, "fifo"), 0600)) return -1;
    return fx_write_manifest(tu_path_in(dir, "m.json"), "NVIDIA H200", 1, 1.0, 1);
}
static int teardown(void **state)
{
    (void)state;
    return tu_rm_rf(dir);
}

#define BENCH "bench --suite fails --backend cpu --iterations 2 --warmup 0 --quiet"

static void test_failed_run_recorded(void **state)
{
    (void)state;
    int rc = rg_in_dir(BENCH " --record --db r.db --manifest f.json");
    if (rc != 1) fail_msg("bench --record of a failing run: exit %d (wanted 1): %s", rc, err_text);
    TU_EXPECT_OK(rg_in_dir("runs list --json --db r.db"), err_text);
    cJSON *list = cJSON_Parse(out_text);
    assert_int_equal(cJSON_GetArraySize(list), 1);
    const cJSON *run = cJSON_GetArrayItem(list, 0);
    assert_string_equal(cJSON_GetObjectItem(run, "status")->valuestring, "failed");
    assert_int_equal((int)cJSON_GetObjectItem(run, "passed")->valuedouble, 1);
    assert_int_equal((int)cJSON_GetObjectItem(run, "total")->valuedouble, 2);
    cJSON_Delete(list);
    /* The failing workload is marked, with its reason and without timings. */
    TU_EXPECT_OK(rg_in_dir("verify f.json"), err_text);
    char *text = tu_slurp(tu_path_in(dir, "f.json"), NULL);
    assert_non_null(text);
    cJSON *m = cJSON_Parse(text);
    free(text);
    assert_non_null(m);
    const cJSON *rows = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "run"), "spec"),
                                                                "ropegrad"),
                                            "workloads");
    const cJSON *w0 = cJSON_GetArrayItem(rows, 0), *w1 = cJSON_GetArrayItem(rows, 1);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(w0, "pass")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(w0, "median")));
    assert_non_null(strstr(cJSON_GetObjectItem(w0, "reason")->valuestring, "matched ratio"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(w1, "pass")));
    assert_true(cJSON_GetObjectItem(w1, "median")->valuedouble > 0);
    cJSON_Delete(m);
    TU_EXPECT_OK(rg_in_dir("runs show 1 --db r.db"), err_text);
    assert_non_null(strstr(out_text, "|  failed  |"));
    assert_non_null(strstr(out_text, "NO (")); /* workload 0's row */
}

/* `ropegrad ARGS` succeeds and its output holds needle and no "nan". */
static void shows(const char *args, const char *needle)
{
    TU_EXPECT_OK(rg_in_dir(args), err_text);
    if (!strstr(out_text, needle) || strstr(out_text, "nan"))
        fail_msg("ropegrad %s: wanted '%s' and no 'nan' in:\n%s", args, needle, out_text);
}

/* Every workload failed: nothing was timed, and the run is recorded as failed. */
static void test_all_failed_run_recorded(void **state)
{
    (void)state;
    int rc = rg_in_dir("bench --suite all_fail --backend cpu --iterations 2 --warmup 0 --quiet --record --db r.db "
                       "--manifest a.json");
    if (rc != 1) fail_msg("bench --record of an all-failed run: exit %d (wanted 1): %s", rc, err_text);
    TU_EXPECT_OK(rg_in_dir("verify a.json"), err_text);
    TU_EXPECT_OK(rg_in_dir("runs list --json --db r.db"), err_text);
    cJSON *list = cJSON_Parse(out_text);
    assert_int_equal(cJSON_GetArraySize(list), 1);
    const cJSON *run = cJSON_GetArrayItem(list, 0);
    assert_string_equal(cJSON_GetObjectItem(run, "status")->valuestring, "failed");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(run, "primary_ns")));
    assert_int_equal((int)cJSON_GetObjectItem(run, "passed")->valuedouble, 0);
    assert_non_null(strstr(cJSON_GetObjectItem(run, "not_timed")->valuestring, "failed: matched ratio"));
    cJSON_Delete(list);
    shows("runs list --db r.db", "not timed");
    shows("runs show 1 --db r.db", "Primary measurement  not timed: failed: matched ratio");
    shows("runs show 1 --db r.db", "not ranked (failed: matched ratio");
    shows("runs rank --db r.db", "failed, not timed");
    rc = rg_in_dir("runs replicate 1 --db r.db --suite all_fail");
    if (rc != 2 || tu_count_lines(err_text) != 1 || !strstr(err_text, "timed nothing"))
        fail_msg("runs replicate of an untimed run: exit %d, stderr '%s' (wanted exit 2, one line)", rc, err_text);
    /* `runs check`: a failed run with no times fails the check; it is no baseline. */
    rc = rg_in_dir("runs check 1 --db r.db");
    if (rc != 1 || !strstr(out_text, "timed nothing (failed: matched ratio") || strstr(out_text, "nan"))
        fail_msg("runs check of an all-failed run: exit %d, stdout '%s' (wanted exit 1)", rc, out_text);
    rc = rg_in_dir("bench --suite fails --backend cpu --iterations 2 --warmup 0 --quiet --record --db r.db");
    assert_int_equal(rc, 1);
    rc = rg_in_dir("runs check 2 --against 1 --db r.db");
    if (rc != 2 || tu_count_lines(err_text) != 1 || !strstr(err_text, "baseline run #1 timed nothing"))
        fail_msg("runs check --against an untimed run: exit %d, stderr '%s' (wanted exit 2, one line)", rc, err_text);
}

/* `check --record` and `check --manifest`: the checks recorded, nothing timed. */
static void test_check_recorded(void **state)
{
    (void)state;
    TU_EXPECT_OK(rg_in_dir("check --suite " RG_SOURCE_DIR "/tests/data/suite_ok --backend cpu --quiet --record "
                           "--db c.db --manifest c.json"),
                 err_text);
    TU_EXPECT_OK(rg_in_dir("verify c.json"), err_text);
    int rc = rg_in_dir("check --suite fails --backend cpu --quiet --record --db c.db --manifest f.json");
    if (rc != 1) fail_msg("check --record of a failing run: exit %d (wanted 1): %s", rc, err_text);
    TU_EXPECT_OK(rg_in_dir("verify f.json"), err_text);
    TU_EXPECT_OK(rg_in_dir("runs list --json --db c.db"), err_text);
    cJSON *list = cJSON_Parse(out_text);
    assert_int_equal(cJSON_GetArraySize(list), 2);
    const cJSON *ok = cJSON_GetArrayItem(list, 0), *bad = cJSON_GetArrayItem(list, 1);
    assert_string_equal(cJSON_GetObjectItem(ok, "status")->valuestring, "passed");
    assert_string_equal(cJSON_GetObjectItem(ok, "not_timed")->valuestring, "correctness only (not timed)");
    assert_string_equal(cJSON_GetObjectItem(bad, "status")->valuestring, "failed");
    assert_int_equal((int)cJSON_GetObjectItem(bad, "passed")->valuedouble, 1);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(bad, "primary_ns")));
    cJSON_Delete(list);
    shows("runs show 1 --db c.db", "not ranked (correctness only (not timed)); 0 ranked runs");
    shows("runs rank --db c.db", "correctness only (not timed)");
    if (!strstr(out_text, "unranked")) fail_msg("runs rank: no 'unranked' in:\n%s", out_text);
    shows("runs history 1 --db c.db", "run 1: not timed");
    shows("runs check 1 --db c.db", "run #1 timed nothing (correctness only (not timed)): no times to check");
    /* The manifest says why no latency: the protocol timed nothing. */
    char *text = tu_slurp(tu_path_in(dir, "c.json"), NULL);
    assert_non_null(text);
    cJSON *m = cJSON_Parse(text);
    free(text);
    const cJSON *ms = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "protocol"), "spec"), "measurement");
    assert_int_equal((int)cJSON_GetObjectItem(ms, "iterations")->valuedouble, 0);
    cJSON_Delete(m);
}

static void test_options_checked_before_the_run(void **state)
{
    (void)state;
    static const struct {
        const char *args, *needle;
    } bad[] = {
        {"bench --suite fails --backend cpu --progress --baseline missing.json", "--baseline: missing.json"},
        {"bench --suite fails --backend cpu --progress --baseline fifo", "not a regular file"},
        {"bench --suite fails --backend cpu --progress --baseline fails/definition.json", "--baseline"},
        {"bench --suite fails --backend cpu --progress --record --db ''", "--db: empty path"},
        {"check --suite fails --backend cpu --progress --baseline missing.json", "--baseline"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = rg_in_dir(bad[i].args);
        if (rc != 2 || tu_count_lines(err_text) != 1 || !strstr(err_text, bad[i].needle) || strstr(out_text, "passed"))
            fail_msg("ropegrad %s: exit %d, stderr '%s', stdout '%.200s' (wanted exit 2 and one line with '%s' before "
                     "any work)",
                     bad[i].args, rc, err_text, out_text, bad[i].needle);
    }
    assert_int_equal(access(tu_path_in(dir, "r.db"), F_OK), -1);
}

static void test_verify_trusted_keys_first(void **state)
{
    (void)state;
    static const char *const bad[] = {"verify m.json --trusted-keys missing", "verify m.json --trusted-keys ''",
                                      "verify m.json --trusted-keys fifo"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = rg_in_dir(bad[i]);
        if (rc != 2 || tu_count_lines(err_text) != 1 || *out_text)
            fail_msg("ropegrad %s: exit %d, stderr '%s', stdout '%.200s' (wanted exit 2, one line, no digests)", bad[i],
                     rc, err_text, out_text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_failed_run_recorded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_all_failed_run_recorded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_recorded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_options_checked_before_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verify_trusted_keys_first, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
