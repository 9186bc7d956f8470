/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli.c -- `ropegrad bench` / `ropegrad check` end to end: the built
 * binary (RG_BINARY_DIR/ropegrad) on small workloads, the JSON it writes
 * parsed back, and every bad-input path: exit 2 with exactly one line on
 * stderr naming the culprit, and no output file left behind. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ropegrad.h"
#include "test_util.h"

static tu_scratch sc;   /* the test's directory, and where stdout/stderr go */

/* Runs `ropegrad ARGS` from the source tree with stdout/stderr captured;
 * returns the exit code. */
static int run(const char *args) { return tu_run_ropegrad(RG_SOURCE_DIR, args, sc.out, sc.err); }

/* Exit 2 and exactly one stderr line containing needle. */
static void expect_usage_error(const char *args, const char *needle)
{
    int code = run(args);
    char *err = tu_slurp(sc.err, NULL);
    assert_non_null(err);
    /* (cmocka's asserts are not noreturn: GCC still sees a NULL err here.) */
    print_message("    ropegrad %s\n    -> %d: %s", args, code, err ? err : "");
    assert_int_equal(code, 2);
    assert_int_equal(tu_count_lines(err), 1);
    assert_non_null(strstr(err, needle));
    free(err);
}

static int setup(void **state) { return tu_scratch_open(&sc, "rg_cli"); }

static int teardown(void **state) { return tu_rm_rf(sc.dir); }

/* Two small workloads through the CPU backend, default suite found from
 * the executable's location. */
static void test_bench_two_workloads_json(void **state)
{
    char args[512], json_dir[128], json[160];
    snprintf(json_dir, sizeof json_dir, "%s/out", sc.dir);
    assert_int_equal(mkdir(json_dir, 0755), 0);
    snprintf(json, sizeof json, "%s/run.json", json_dir);
    snprintf(args, sizeof args, "bench --workloads 2,4 --backend cpu --iterations 3 --warmup 1 --json %s", json);
    int code = run(args);
    char *out = tu_slurp(sc.out, NULL), *err = tu_slurp(sc.err, NULL);
    print_message("%s%s", out ? out : "", err ? err : "");
    assert_int_equal(code, 0);
    assert_non_null(strstr(out, "passed 2/2"));
    assert_non_null(strstr(out, "geometric mean"));
    free(out);
    free(err);
    assert_int_equal(tu_count_dir(json_dir), 1);   /* the file, no temporary left over */

    char *text = tu_slurp(json, NULL);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    assert_string_equal(tu_get(root, "suite")->valuestring, "014_rotary_embedding_with_attention_scaling_backward");
    assert_string_equal(tu_get(root, "backend")->valuestring, "cpu");
    assert_string_equal(tu_get(root, "timer")->valuestring, "wall-clock");
    assert_string_equal(tu_get(root, "inputs")->valuestring, "normal");
    assert_int_equal(tu_get(root, "kernel")->valueint, 0);
    assert_int_equal(tu_get(root, "warmup")->valueint, 1);
    assert_int_equal(tu_get(root, "iterations")->valueint, 3);
    assert_int_equal(tu_get(root, "seed")->valueint, 200);
    assert_true(strlen(tu_get(root, "started_at")->valuestring) == 20);
    assert_true(cJSON_IsString(tu_get(root, "cold_l2")) && cJSON_IsString(tu_get(root, "device")));
    const cJSON *env = tu_get(root, "environment");
    assert_string_equal(tu_get(env, "ropegrad_version")->valuestring, ropegrad_version());
    assert_true(tu_get(env, "cpu_threads")->valueint >= 1);
    assert_int_equal(tu_get(env, "sm_clock_mhz_start")->valueint, -1);
    const cJSON *ws = tu_get(root, "workloads");
    assert_int_equal(cJSON_GetArraySize(ws), 2);
    const int idx[2] = {2, 4}, seq[2] = {128, 131};
    for (int i = 0; i < 2; i++) {
        const cJSON *w = cJSON_GetArrayItem(ws, i);
        assert_int_equal(tu_get(w, "index")->valueint, idx[i]);
        assert_int_equal(tu_get(w, "batch_size")->valueint, 1);
        assert_int_equal(tu_get(w, "seq_len")->valueint, seq[i]);
        assert_int_equal(tu_get(w, "head_dim")->valueint, 128);
        assert_true(tu_get(w, "bytes")->valuedouble == seq[i] * (512.0 + 256 + 4) + 256);
        assert_true(cJSON_IsTrue(tu_get(w, "pass")));
        assert_string_equal(tu_get(w, "reason")->valuestring, "");
        assert_true(tu_get(w, "matched_ratio")->valuedouble >= 0.99);
        assert_true(tu_get(w, "max_abs_err")->valuedouble < 1e-3);
        const cJSON *t = tu_get(w, "time_ns");
        double med = tu_get(t, "median")->valuedouble;
        assert_true(med > 0);
        assert_true(tu_get(t, "min")->valuedouble <= med && med <= tu_get(t, "max")->valuedouble);
        assert_int_equal(cJSON_GetArraySize(tu_get(w, "samples_ns")), 3);
        assert_true(fabs(tu_get(w, "gbps")->valuedouble - tu_get(w, "bytes")->valuedouble / med) < 1e-9 * med);
        assert_true(tu_get(w, "sol_ms")->valuedouble > 0);   /* from b200-figures.json */
    }
    const cJSON *sum = tu_get(root, "summary");
    assert_int_equal(tu_get(sum, "passed")->valueint, 2);
    assert_int_equal(tu_get(sum, "total")->valueint, 2);
    assert_true(tu_get(sum, "geomean_ns")->valuedouble > 0 &&
                tu_get(sum, "geomean_ns")->valuedouble <= tu_get(sum, "mean_ns")->valuedouble * (1 + 1e-12));
    cJSON_Delete(root);
}

static void test_check_command(void **state)
{
    int code = run("check --workloads 2 --backend cpu --inputs positions");
    char *out = tu_slurp(sc.out, NULL);
    print_message("%s", out ? out : "");
    assert_int_equal(code, 0);
    assert_non_null(strstr(out, "passed 1/1"));
    free(out);
    /* check takes no timing options */
    expect_usage_error("check --iterations 3", "--iterations");
}

static void test_help(void **state)
{
    assert_int_equal(run("bench --help"), 0);
    char *out = tu_slurp(sc.out, NULL);
    assert_non_null(strstr(out, "--workloads"));
    free(out);
}

static void test_malformed_suite(void **state)
{
    expect_usage_error("bench --backend cpu --suite tests/data/suite_bad_json", "suite_bad_json/workload.jsonl:3:");
    expect_usage_error("check --backend cpu --suite tests/data/suite_missing_field", "'axes.batch_size'");
    expect_usage_error("bench --suite tests/data/suite_no_definition", "definition.json");
}

static void test_unknown_workload(void **state)
{
    expect_usage_error("bench --backend cpu --workloads 2,99", "99");
    expect_usage_error("bench --backend cpu --workloads 2,x", "--workloads");
}

static void test_unknown_backend(void **state)
{
    expect_usage_error("bench --backend tpu --workloads 2", "tpu");
}

/* 014 ships kernel 0 and 12 only: any other version is one line naming the
 * development tester, whatever the backend. */
static void test_dev_kernel_refused(void **state)
{
    expect_usage_error("bench --kernel 3 --workloads 2", " dev/");
    expect_usage_error("bench --backend cpu --kernel 13 --workloads 2", " dev/");
}

static void test_unknown_option(void **state)
{
    expect_usage_error("bench --frobnicate", "--frobnicate");
    expect_usage_error("bench --iterations", "--iterations");   /* missing value */
    expect_usage_error("bench --iterations 0", "--iterations");
    expect_usage_error("bench stray", "stray");
}

static void test_json_into_missing_directory(void **state)
{
    char args[256], path[160];
    snprintf(path, sizeof path, "%s/no/such/dir/run.json", sc.dir);
    snprintf(args, sizeof args, "bench --backend cpu --workloads 2 --iterations 1 --warmup 0 --json %s", path);
    expect_usage_error(args, "does not exist");
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0);
}

static void test_cuda_unavailable(void **state)
{
    if (ropegrad_cuda_available()) {
        print_message("    a GPU is usable here: the 'cuda unavailable' path cannot be exercised\n");
        skip();
    }
    expect_usage_error("bench --backend cuda --workloads 2", "cuda");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bench_two_workloads_json),
        cmocka_unit_test(test_check_command),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_malformed_suite),
        cmocka_unit_test(test_unknown_workload),
        cmocka_unit_test(test_unknown_backend),
        cmocka_unit_test(test_dev_kernel_refused),
        cmocka_unit_test(test_unknown_option),
        cmocka_unit_test(test_json_into_missing_directory),
        cmocka_unit_test(test_cuda_unavailable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
