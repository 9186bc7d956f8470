/* SPDX-License-Identifier: Apache-2.0 */
/* test_record_failed.c -- issue 24 point 13, through the built binary:
 *   - `bench --record` of a run with a failing workload stores a run with
 *     status failed, the failing workload marked (pass false, no timings)
 *     and a manifest that verifies; exit 1 (main refused to record it);
 *   - --baseline (missing, a FIFO, not a baseline), --db "" and `check
 *     --record` are one line and exit 2 before the suite runs (--progress
 *     would have printed a line per workload);
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
    /* Every workload failed: nothing was timed; refused with one line, nothing stored. */
    rc = rg_in_dir("bench --suite all_fail --backend cpu --iterations 2 --warmup 0 --quiet --record --db r.db");
    assert_int_equal(rc, 2);
    assert_non_null(strstr(err_text, "no workload passed"));
    TU_EXPECT_OK(rg_in_dir("runs list --json --db r.db"), err_text);
    list = cJSON_Parse(out_text);
    assert_int_equal(cJSON_GetArraySize(list), 1);
    cJSON_Delete(list);
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
        {"check --suite fails --backend cpu --progress --record --db r.db", "bench --record"},
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
        cmocka_unit_test_setup_teardown(test_options_checked_before_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verify_trusted_keys_first, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
