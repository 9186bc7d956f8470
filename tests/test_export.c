/* SPDX-License-Identifier: Apache-2.0 */
/* test_export.c -- `ropegrad export-solution` end to end: the built binary
 * (RG_BINARY_DIR/ropegrad) writes a solution, which is parsed back. The point
 * of the command is that the submitted kernel is the library's kernel, so the
 * embedded ropegrad_kernels.cuh and ropegrad.h must equal the source tree's
 * files byte for byte (if the embed step ever went stale or copied a
 * different file, this fails). Plus the spec fields the harness reads, the
 * binding's shape, and the bad-input paths: exit 2, one stderr line, no file. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

static tu_scratch sc;   /* the test's directory, and where stdout/stderr go */

/* Runs `ropegrad ARGS` with stdout/stderr captured; returns the exit code. */
static int run(const char *args) { return tu_run_ropegrad(NULL, args, sc.out, sc.err); }

static int setup(void **state) { return tu_scratch_open(&sc, "rg_export"); }

static int teardown(void **state) { return tu_rm_rf(sc.dir); }

/* The content of sources[path == path]; fails if absent or duplicated. */
static const char *source_content(const cJSON *root, const char *path)
{
    const cJSON *src, *found = NULL;
    cJSON_ArrayForEach(src, tu_get(root, "sources"))
    {
        const cJSON *p = tu_get(src, "path");
        assert_true(cJSON_IsString(p));
        if (!strcmp(p->valuestring, path)) {
            assert_null(found);
            found = src;
        }
    }
    if (!found) print_message("no source '%s' in the solution\n", path);
    assert_non_null(found);
    const cJSON *c = tu_get(found, "content");
    assert_true(cJSON_IsString(c));
    return c->valuestring;
}

/* The embedded file equals the source tree's file, byte for byte. */
static void assert_same_as_file(const char *content, const char *rel)
{
    char path[512];
    size_t n;
    snprintf(path, sizeof path, "%s/%s", RG_SOURCE_DIR, rel);
    char *want = tu_slurp(path, &n);
    assert_non_null(want);
    assert_true(n > 100);                      /* a real file, not an empty stand-in */
    assert_int_equal(strlen(content), n);      /* cJSON decoded it; no NUL inside */
    assert_memory_equal(content, want, n);
    free(want);
}

static const char *const expect_strs[][2] = {
    {"target_hardware", "B200"},
    {"target_hardware", "LOCAL"},
    {"languages", "cuda_cpp"},
};

static int array_has(const cJSON *a, const char *s)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, a) if (cJSON_IsString(it) && !strcmp(it->valuestring, s)) return 1;
    return 0;
}

static void check_solution(const cJSON *root, const char *name, const char *author)
{
    assert_string_equal(tu_get(root, "name")->valuestring, name);
    assert_string_equal(tu_get(root, "author")->valuestring, author);

    /* definition = the bundled suite's definition name */
    char path[512];
    snprintf(path, sizeof path, "%s/suites/sol-execbench-014/definition.json", RG_SOURCE_DIR);
    char *dtext = tu_slurp(path, NULL);
    assert_non_null(dtext);
    cJSON *def = cJSON_Parse(dtext);
    free(dtext);
    assert_non_null(def);
    assert_string_equal(tu_get(root, "definition")->valuestring, tu_get(def, "name")->valuestring);

    const cJSON *spec = tu_get(root, "spec");
    for (size_t i = 0; i < sizeof expect_strs / sizeof expect_strs[0]; i++)
        assert_true(array_has(tu_get(spec, expect_strs[i][0]), expect_strs[i][1]));
    assert_int_equal(cJSON_GetArraySize(tu_get(spec, "languages")), 1);
    assert_string_equal(tu_get(spec, "entry_point")->valuestring, "kernel.cu::run");
    assert_string_equal(tu_get(spec, "binding")->valuestring, "torch");
    assert_true(cJSON_IsBool(tu_get(spec, "destination_passing_style")));
    assert_true(cJSON_IsFalse(tu_get(spec, "destination_passing_style")));   /* run() returns the output */
    const cJSON *co = tu_get(spec, "compile_options");
    const cJSON *cuda_cflags = tu_get(co, "cuda_cflags");
    assert_true(array_has(cuda_cflags, "-O3"));
    /* No fast math anywhere: the harness's default CUDA flags include it,
     * which is why compile_options must be explicit. */
    const cJSON *list;
    cJSON_ArrayForEach(list, co)
    {
        const cJSON *flag;
        cJSON_ArrayForEach(flag, list)
        {
            assert_true(cJSON_IsString(flag));
            assert_null(strstr(flag->valuestring, "fast_math"));
            assert_null(strstr(flag->valuestring, "fast-math"));
        }
    }

    assert_int_equal(cJSON_GetArraySize(tu_get(root, "sources")), 4);   /* kernel.cu, ropegrad_kernels.cuh, rope_math.cuh, ropegrad.h */
    assert_same_as_file(source_content(root, "ropegrad_kernels.cuh"), "src/op/kernels.cuh");
    assert_same_as_file(source_content(root, "ropegrad.h"), "include/ropegrad.h");
    assert_same_as_file(source_content(root, "rope_math.cuh"), "src/op/rope_math.cuh");   /* kernels.cuh includes it */
    /* kernels.cuh finds ropegrad.h beside it, as in the source tree */
    assert_non_null(strstr(source_content(root, "ropegrad_kernels.cuh"), "#include \"ropegrad.h\""));

    /* The binding: the definition's input order, the library's launcher on
     * the current stream, and the module the harness imports. */
    const char *cu = source_content(root, "kernel.cu");
    assert_non_null(strstr(cu, "#include <torch/extension.h>"));
    assert_non_null(strstr(cu, "#include <ATen/cuda/CUDAContext.h>"));
    assert_non_null(strstr(cu, "#include \"ropegrad_kernels.cuh\""));
    const char *sig = strstr(cu, "torch::Tensor run(");
    assert_non_null(sig);
    const char *names[] = {"grad_cos", "grad_sin", "emb", "inv_freq_expanded", "attention_scaling"};
    const char *at = sig;
    for (int i = 0; i < 5; i++) {
        const char *p = strstr(at, names[i]);
        assert_non_null(p);
        at = p + strlen(names[i]);
    }
    assert_non_null(strstr(cu, "rg_cuda_launch(&p, 0, at::cuda::getCurrentCUDAStream())"));
    assert_non_null(strstr(cu, "inv_freq_expanded.stride(0)"));
    assert_non_null(strstr(cu, "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)"));
    assert_non_null(strstr(cu, "m.def(\"run\""));
    cJSON_Delete(def);
}

static void test_export_to_file(void **state)
{
    char dir[128], file[160], args[512];
    snprintf(dir, sizeof dir, "%s/out", sc.dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(file, sizeof file, "%s/solution.json", dir);
    snprintf(args, sizeof args, "export-solution --out %s", file);
    int code = run(args);
    char *err = tu_slurp(sc.err, NULL);
    print_message("    ropegrad %s -> %d %s", args, code, err ? err : "");
    assert_int_equal(code, 0);
    assert_string_equal(err, "");
    free(err);
    assert_int_equal(tu_count_dir(dir), 1);   /* the file, no temporary left over */

    char *text = tu_slurp(file, NULL);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    check_solution(root, "ropegrad_cuda", "ropegrad");
    cJSON_Delete(root);
}

static void test_export_stdout_name_author(void **state)
{
    int code = run("export-solution --name my_solution --author 'A. Person'");
    assert_int_equal(code, 0);
    char *text = tu_slurp(sc.out, NULL);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    check_solution(root, "my_solution", "A. Person");
    cJSON_Delete(root);
}

/* Exit 2, exactly one stderr line containing needle, nothing on stdout. */
static void expect_usage_error(const char *args, const char *needle)
{
    int code = run(args);
    char *err = tu_slurp(sc.err, NULL), *out = tu_slurp(sc.out, NULL);
    assert_non_null(err);
    assert_non_null(out);
    print_message("    ropegrad %s\n    -> %d: %s", args, code, err);
    assert_int_equal(code, 2);
    assert_int_equal(tu_count_lines(err), 1);
    assert_non_null(strstr(err, needle));
    assert_string_equal(out, "");
    free(err);
    free(out);
}

static void test_export_bad_input(void **state)
{
    char args[512], missing[160], file[200];
    snprintf(missing, sizeof missing, "%s/no/such/dir", sc.dir);
    snprintf(file, sizeof file, "%s/solution.json", missing);
    snprintf(args, sizeof args, "export-solution --out %s", file);
    expect_usage_error(args, "no/such/dir/solution.json");
    struct stat st;
    char parent[200];
    snprintf(parent, sizeof parent, "%s/no", sc.dir);
    assert_int_not_equal(stat(file, &st), 0);     /* no file */
    assert_int_not_equal(stat(parent, &st), 0);   /* and no directory made for it */

    expect_usage_error("export-solution --bogus", "--bogus");
    expect_usage_error("export-solution --out", "--out");
    expect_usage_error("export-solution extra", "extra");
    expect_usage_error("export-solution --out ''", "--out");
    expect_usage_error("export-solution --name ''", "--name");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_to_file),
        cmocka_unit_test(test_export_stdout_name_author),
        cmocka_unit_test(test_export_bad_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
