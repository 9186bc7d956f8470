/* test_cli.c -- `ropegrad bench` / `ropegrad check` end to end: the built
 * binary (RG_BINARY_DIR/ropegrad) on small workloads, the JSON it writes
 * parsed back, and every bad-input path: exit 2 with exactly one line on
 * stderr naming the culprit, and no output file left behind. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "ropegrad.h"

static char tmpdir[64];
static char out_path[128], err_path[128];

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Runs `ropegrad ARGS` with stdout/stderr captured; returns the exit code. */
static int run(const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd %s && '%s/ropegrad' %s >%s 2>%s", RG_SOURCE_DIR, RG_BINARY_DIR, args, out_path,
             err_path);
    int st = system(cmd);
    assert_true(st != -1 && WIFEXITED(st));
    return WEXITSTATUS(st);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* Exit 2 and exactly one stderr line containing needle. */
static void expect_usage_error(const char *args, const char *needle)
{
    int code = run(args);
    char *err = slurp(err_path);
    assert_non_null(err);
    print_message("    ropegrad %s\n    -> %d: %s", args, code, err);
    assert_int_equal(code, 2);
    assert_int_equal(count_lines(err), 1);
    assert_non_null(strstr(err, needle));
    free(err);
}

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/rg_cli_XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    snprintf(out_path, sizeof out_path, "%s/stdout", tmpdir);
    snprintf(err_path, sizeof err_path, "%s/stderr", tmpdir);
    return 0;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    assert_non_null(it);
    return it;
}

static int count_dir(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    if (!d) return -1;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* Two small workloads through the CPU backend, default suite found from
 * the executable's location. */
static void test_bench_two_workloads_json(void **state)
{
    char args[512], json_dir[128], json[160];
    snprintf(json_dir, sizeof json_dir, "%s/out", tmpdir);
    assert_int_equal(mkdir(json_dir, 0755), 0);
    snprintf(json, sizeof json, "%s/run.json", json_dir);
    snprintf(args, sizeof args, "bench --workloads 2,4 --backend cpu --iterations 3 --warmup 1 --json %s", json);
    int code = run(args);
    char *out = slurp(out_path), *err = slurp(err_path);
    print_message("%s%s", out ? out : "", err ? err : "");
    assert_int_equal(code, 0);
    assert_non_null(strstr(out, "passed 2/2"));
    assert_non_null(strstr(out, "geometric mean"));
    free(out);
    free(err);
    assert_int_equal(count_dir(json_dir), 1);   /* the file, no temporary left over */

    char *text = slurp(json);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    assert_string_equal(get(root, "suite")->valuestring, "014_rotary_embedding_with_attention_scaling_backward");
    assert_string_equal(get(root, "backend")->valuestring, "cpu");
    assert_string_equal(get(root, "timer")->valuestring, "wall-clock");
    assert_string_equal(get(root, "inputs")->valuestring, "normal");
    assert_int_equal(get(root, "kernel")->valueint, 0);
    assert_int_equal(get(root, "warmup")->valueint, 1);
    assert_int_equal(get(root, "iterations")->valueint, 3);
    assert_int_equal(get(root, "seed")->valueint, 200);
    assert_true(strlen(get(root, "started_at")->valuestring) == 20);
    assert_true(cJSON_IsString(get(root, "cold_l2")) && cJSON_IsString(get(root, "device")));
    const cJSON *env = get(root, "environment");
    assert_string_equal(get(env, "ropegrad_version")->valuestring, ropegrad_version());
    assert_true(get(env, "cpu_threads")->valueint >= 1);
    assert_int_equal(get(env, "sm_clock_mhz_start")->valueint, -1);
    const cJSON *ws = get(root, "workloads");
    assert_int_equal(cJSON_GetArraySize(ws), 2);
    const int idx[2] = {2, 4}, seq[2] = {128, 131};
    for (int i = 0; i < 2; i++) {
        const cJSON *w = cJSON_GetArrayItem(ws, i);
        assert_int_equal(get(w, "index")->valueint, idx[i]);
        assert_int_equal(get(w, "batch_size")->valueint, 1);
        assert_int_equal(get(w, "seq_len")->valueint, seq[i]);
        assert_int_equal(get(w, "head_dim")->valueint, 128);
        assert_true(get(w, "bytes")->valuedouble == seq[i] * (512.0 + 256 + 4) + 256);
        assert_true(cJSON_IsTrue(get(w, "pass")));
        assert_string_equal(get(w, "reason")->valuestring, "");
        assert_true(get(w, "matched_ratio")->valuedouble >= 0.99);
        assert_true(get(w, "max_abs_err")->valuedouble < 1e-3);
        const cJSON *t = get(w, "time_ns");
        double med = get(t, "median")->valuedouble;
        assert_true(med > 0);
        assert_true(get(t, "min")->valuedouble <= med && med <= get(t, "max")->valuedouble);
        assert_int_equal(cJSON_GetArraySize(get(w, "samples_ns")), 3);
        assert_true(fabs(get(w, "gbps")->valuedouble - get(w, "bytes")->valuedouble / med) < 1e-9 * med);
        assert_true(get(w, "sol_ms")->valuedouble > 0);   /* from b200-figures.json */
    }
    const cJSON *sum = get(root, "summary");
    assert_int_equal(get(sum, "passed")->valueint, 2);
    assert_int_equal(get(sum, "total")->valueint, 2);
    assert_true(get(sum, "geomean_ns")->valuedouble > 0 &&
                get(sum, "geomean_ns")->valuedouble <= get(sum, "mean_ns")->valuedouble * (1 + 1e-12));
    cJSON_Delete(root);
}

static void test_check_command(void **state)
{
    int code = run("check --workloads 2 --backend cpu --inputs positions");
    char *out = slurp(out_path);
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
    char *out = slurp(out_path);
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
    snprintf(path, sizeof path, "%s/no/such/dir/run.json", tmpdir);
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
        cmocka_unit_test(test_unknown_option),
        cmocka_unit_test(test_json_into_missing_directory),
        cmocka_unit_test(test_cuda_unavailable),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
