/* SPDX-License-Identifier: Apache-2.0 */
/* test_export.c -- `ropegrad export-solution` end to end, for each op with a
 * solution (011, 012, 014): the built binary (RG_BINARY_DIR/ropegrad) writes
 * a solution, which is parsed back. The point of the command is that the
 * submitted kernel is the library's kernel, so the embedded kernel header
 * (each op folder's kernels.cuh), rope_math.cuh and
 * ropegrad.h must equal the source tree's files byte for byte (if the embed
 * step ever went stale or copied a different file, this fails). Plus the
 * definition (read from the suite's definition.json, not from the op table),
 * the spec fields the harness reads, the binding's shape (the definition's
 * inputs in order, the op's launcher and no other), and the bad-input paths:
 * exit 2, one stderr line, no file. */
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

static void expect_usage_error(const char *args, const char *needle);

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

/* What each op's solution must be, written down here independently of the
 * op table (src/harness/op_*.c) so that a wrong row fails. */
typedef struct expect_op {
    const char *suite;     /* suite folder, relative to the source tree */
    const char *header;    /* the kernel header's name in the solution ... */
    const char *from;      /* ... and the source-tree file it must equal */
    const char *launch;    /* the call the binding must make */
} expect_op;

static const expect_op ops[] = {
    {"suites/011-rope_forward", "ropegrad_rope_forward_kernels.cuh", "src/op/rope_forward/kernels.cuh",
     "rg_rope_forward_launch(&p, at::cuda::getCurrentCUDAStream())"},
    {"suites/012-cos_sin", "ropegrad_cos_sin_kernels.cuh", "src/op/cos_sin/kernels.cuh",
     "rg_cos_sin_launch_kernel(&p, rg_solution_kernel, at::cuda::getCurrentCUDAStream())"},
    {"suites/014-rope_backward", "ropegrad_kernels.cuh", "src/op/rope_backward/kernels.cuh",
     "rg_cuda_launch(&p, 0, at::cuda::getCurrentCUDAStream())"},
};
#define N_OPS (sizeof ops / sizeof ops[0])
static const char *const launchers[] = {"rg_rope_forward_launch(", "rg_cos_sin_launch_kernel(", "rg_cuda_launch("};

/* The JSON file at path, parsed (the test fails when it is not). */
static cJSON *parse_file(const char *path)
{
    char *text = tu_slurp(path, NULL);
    if (!text) print_message("cannot read %s\n", path);
    assert_non_null(text);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    return root;
}

static cJSON *load_definition(const expect_op *e)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s/definition.json", RG_SOURCE_DIR, e->suite);
    return parse_file(path);
}

/* export-solution --suite <op i's suite> --out SC/<sub><i>/solution.json (the
 * folder made first); file receives that path. Returns the exit status. */
static int export_op(size_t i, const char *sub, char *file, size_t filelen)
{
    char dir[200], args[1024];
    snprintf(dir, sizeof dir, "%s/%s%zu", sc.dir, sub, i);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(file, filelen, "%s/solution.json", dir);
    snprintf(args, sizeof args, "export-solution --suite %s/%s --out %s", RG_SOURCE_DIR, ops[i].suite, file);
    return run(args);
}

static void check_solution(const cJSON *root, const expect_op *e, const char *name, const char *author)
{
    assert_string_equal(tu_get(root, "name")->valuestring, name);
    assert_string_equal(tu_get(root, "author")->valuestring, author);

    /* definition = the suite's definition name */
    cJSON *def = load_definition(e);
    assert_string_equal(tu_get(root, "definition")->valuestring, tu_get(def, "name")->valuestring);

    const cJSON *spec = tu_get(root, "spec");
    for (size_t i = 0; i < sizeof expect_strs / sizeof expect_strs[0]; i++)
        assert_true(array_has(tu_get(spec, expect_strs[i][0]), expect_strs[i][1]));
    assert_int_equal(cJSON_GetArraySize(tu_get(spec, "languages")), 1);
    assert_string_equal(tu_get(spec, "entry_point")->valuestring, "kernel.cu::run");
    assert_string_equal(tu_get(spec, "binding")->valuestring, "torch");
    assert_true(cJSON_IsBool(tu_get(spec, "destination_passing_style")));
    assert_true(cJSON_IsFalse(tu_get(spec, "destination_passing_style")));   /* run() returns the outputs */
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

    assert_int_equal(cJSON_GetArraySize(tu_get(root, "sources")), 4);   /* kernel.cu, the kernel header, rope_math.cuh, ropegrad.h */
    const char *kernels = source_content(root, e->header);
    assert_same_as_file(kernels, e->from);
    assert_same_as_file(source_content(root, "ropegrad.h"), "include/ropegrad.h");
    assert_same_as_file(source_content(root, "rope_math.cuh"), "src/op/rope_math.cuh");   /* the kernel header includes it */
    /* the kernel header finds its includes beside it, as in the source tree */
    assert_non_null(strstr(kernels, "#include \"ropegrad.h\""));
    assert_non_null(strstr(kernels, "#include \"rope_math.cuh\""));

    /* The binding: the definition's inputs in order (tensors, then the
     * scalar as a double), the op's launcher (defined in the shipped header)
     * on the current stream and no other op's, and the module the harness
     * imports with the definition's argument names. */
    const char *cu = source_content(root, "kernel.cu");
    assert_non_null(strstr(cu, "#include <torch/extension.h>"));
    assert_non_null(strstr(cu, "#include <ATen/cuda/CUDAContext.h>"));
    char inc[128];
    snprintf(inc, sizeof inc, "#include \"%s\"", e->header);
    assert_non_null(strstr(cu, inc));
    const int n_out = cJSON_GetArraySize(tu_get(def, "outputs"));
    const char *sig = strstr(cu, n_out == 1 ? "\ntorch::Tensor run(" : "\nstd::tuple<torch::Tensor, torch::Tensor> run(");
    assert_non_null(sig);
    const char *body = strstr(sig, ")\n{\n"), *module = strstr(cu, "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)");
    assert_non_null(body);
    assert_non_null(module);
    const char *at = sig, *arg_at = module;
    const cJSON *in;
    int n_in = 0;
    cJSON_ArrayForEach(in, tu_get(def, "inputs"))
    {
        char param[128], arg[128];
        const int scalar = cJSON_IsNull(tu_get(in, "shape"));
        snprintf(param, sizeof param, "%s %s", scalar ? "double" : "torch::Tensor", in->string);
        const char *p = strstr(at, param);
        if (!p || p > body) print_message("run() lacks parameter '%s' in the definition's order\n", param);
        assert_true(p && p < body);
        at = p + strlen(param);
        snprintf(arg, sizeof arg, "pybind11::arg(\"%s\")", in->string);
        p = strstr(arg_at, arg);
        assert_non_null(p);
        arg_at = p + strlen(arg);
        n_in++;
    }
    assert_true(n_in >= 2);
    assert_int_equal(strchr(sig, ')') - sig, body - sig);   /* nothing after the last parameter */
    assert_non_null(strstr(cu, e->launch));
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        char def_line[128];
        if (!strncmp(e->launch, launchers[i], strlen(launchers[i]))) {
            snprintf(def_line, sizeof def_line, "static cudaError_t %s", launchers[i]);
            assert_non_null(strstr(kernels, def_line));   /* the shipped header defines it */
        } else {
            assert_null(strstr(cu, launchers[i]));        /* another op's launcher */
        }
    }
    assert_non_null(strstr(cu, "at::cuda::getCurrentCUDAStream()"));
    assert_non_null(strstr(module, "m.def(\"run\""));
    if (strstr(e->from, "src/op/rope_backward/kernels.cuh")) assert_non_null(strstr(cu, "inv_freq_expanded.stride(0)"));
    cJSON_Delete(def);
}

/* export-solution --suite <each op's suite> --out FILE: a valid solution, no temporary left over. */
static void test_export_to_file(void **state)
{
    for (size_t i = 0; i < N_OPS; i++) {
        char file[240];
        int code = export_op(i, "out", file, sizeof file);
        char *err = tu_slurp(sc.err, NULL);
        print_message("    ropegrad export-solution --suite %s -> %d %s\n", ops[i].suite, code, err ? err : "");
        assert_int_equal(code, 0);
        assert_string_equal(err, "");
        free(err);
        char dir[240];
        snprintf(dir, sizeof dir, "%s/out%zu", sc.dir, i);
        assert_int_equal(tu_count_dir(dir), 1);   /* the file, no temporary left over */
        cJSON *root = parse_file(file);
        check_solution(root, &ops[i], "ropegrad_cuda", "ropegrad");
        cJSON_Delete(root);
    }
}

/* --kernel N: 012's solution runs the kernel version named (the constant its
 * launcher takes), named after it by default; 0 is the default's text; other
 * ops' solutions and unknown versions are refused with one line, no file. */
static void test_export_kernel(void **state)
{
    char args[512];
    snprintf(args, sizeof args, "export-solution --suite %s/suites/012-cos_sin --kernel 1", RG_SOURCE_DIR);
    assert_int_equal(run(args), 0);
    cJSON *root = parse_file(sc.out);
    check_solution(root, &ops[1], "ropegrad_cuda_fast", "ropegrad");
    const char *cu = source_content(root, "kernel.cu");
    assert_non_null(strstr(cu, "static const int rg_solution_kernel = 1;"));
    assert_null(strstr(cu, "rg_solution_kernel = 0"));
    assert_non_null(strstr(tu_get(root, "description")->valuestring, "Kernel 1 (fast)."));
    cJSON_Delete(root);

    snprintf(args, sizeof args, "export-solution --suite %s/suites/012-cos_sin --kernel 1 --name mine", RG_SOURCE_DIR);
    assert_int_equal(run(args), 0);
    root = parse_file(sc.out);
    check_solution(root, &ops[1], "mine", "ropegrad");
    cJSON_Delete(root);

    snprintf(args, sizeof args, "export-solution --suite %s/suites/012-cos_sin --kernel 0", RG_SOURCE_DIR);
    assert_int_equal(run(args), 0);
    root = parse_file(sc.out);
    check_solution(root, &ops[1], "ropegrad_cuda", "ropegrad");
    assert_non_null(strstr(source_content(root, "kernel.cu"), "static const int rg_solution_kernel = 0;"));
    assert_null(strstr(tu_get(root, "description")->valuestring, "Kernel "));
    cJSON_Delete(root);

    char out_dir[160], out_file[200];
    snprintf(out_dir, sizeof out_dir, "%s/kernel-out", sc.dir);
    assert_int_equal(mkdir(out_dir, 0755), 0);
    snprintf(out_file, sizeof out_file, "%s/solution.json", out_dir);
    snprintf(args, sizeof args, "export-solution --suite %s/suites/012-cos_sin --kernel 2 --out %s", RG_SOURCE_DIR,
             out_file);
    expect_usage_error(args, "0 (default), 1 (fast)");
    snprintf(args, sizeof args, "export-solution --suite %s/suites/011-rope_forward --kernel 1 --out %s", RG_SOURCE_DIR,
             out_file);
    expect_usage_error(args, "op 011's solution runs kernel 0 (default)");
    snprintf(args, sizeof args, "export-solution --suite %s/suites/014-rope_backward --kernel 14 --out %s", RG_SOURCE_DIR,
             out_file);
    expect_usage_error(args, "op 014's solution runs kernel 0 (default)");
    expect_usage_error("export-solution --kernel x", "--kernel");
    expect_usage_error("export-solution --kernel -1", "--kernel");
    expect_usage_error("export-solution --kernel", "--kernel");
    assert_int_equal(tu_count_dir(out_dir), 0);   /* no file, no temporary */
}

/* Without --suite: the bundled 014, as before the forward ops had solutions. */
static void test_export_stdout_name_author(void **state)
{
    int code = run("export-solution --name my_solution --author 'A. Person'");
    assert_int_equal(code, 0);
    cJSON *root = parse_file(sc.out);
    check_solution(root, &ops[N_OPS - 1], "my_solution", "A. Person");
    cJSON_Delete(root);
}

/* The suite folder is found from another working directory too (relative path). */
static void test_export_relative_suite(void **state)
{
    char args[256];
    snprintf(args, sizeof args, "export-solution --suite suites/012-cos_sin --out -");
    int code = tu_run_ropegrad(RG_SOURCE_DIR, args, sc.out, sc.err);
    assert_int_equal(code, 0);
    cJSON *root = parse_file(sc.out);
    check_solution(root, &ops[1], "ropegrad_cuda", "ropegrad");
    cJSON_Delete(root);
}

#ifdef RG_NVCC
/* Writes every source of the solution in json_path into dir (flat names). */
static void write_sources(const char *json_path, const char *dir)
{
    cJSON *root = parse_file(json_path);
    const cJSON *src;
    cJSON_ArrayForEach(src, tu_get(root, "sources"))
    {
        const char *path = tu_get(src, "path")->valuestring, *content = tu_get(src, "content")->valuestring;
        assert_null(strchr(path, '/'));
        FILE *f = fopen(tu_path_in(dir, path), "w");
        assert_non_null(f);
        assert_int_equal(fputs(content, f) >= 0, 1);
        assert_int_equal(fclose(f), 0);
    }
    cJSON_Delete(root);
}

/* nvcc -c dir/kernel.cu against tests/stub_torch; the exit status (the log in dir/nvcc.log). */
static int nvcc_compile(const char *dir)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "'%s' -std=c++17 -O0 -arch=sm_90 -I'%s/tests/cli/stub_torch' -I'%s' -c '%s/kernel.cu' -o '%s/kernel.o' "
             ">'%s/nvcc.log' 2>&1",
             RG_NVCC, RG_SOURCE_DIR, dir, dir, dir, dir);
    return tu_system(cmd);
}
#endif

/* Each op's kernel.cu and the headers shipped beside it compile together
 * (nvcc, a stand-in torch: the binding, the problem structs and the launchers
 * fit); and a binding calling a launcher that does not exist does not, so
 * the check is not vacuous. The real build is python/tests/test_solution_export.py's. */
static void test_export_compiles_with_nvcc(void **state)
{
#ifndef RG_NVCC
    print_message("    skipped: this build has no CUDA (nvcc), so the generated bindings are not compiled here\n");
    skip();
#else
    for (size_t i = 0; i < N_OPS; i++) {
        char dir[200], file[240];
        snprintf(dir, sizeof dir, "%s/nvcc%zu", sc.dir, i);
        assert_int_equal(export_op(i, "nvcc", file, sizeof file), 0);
        write_sources(file, dir);
        int code = nvcc_compile(dir);
        if (code != 0) {
            char *log = tu_slurp(tu_path_in(dir, "nvcc.log"), NULL);
            print_message("    %s: nvcc exited %d:\n%s\n", ops[i].suite, code, log ? log : "(no log)");
            free(log);
        }
        assert_int_equal(code, 0);
    }
    {   /* 012's fast solution (--kernel 1) too */
        char dir[200], file[240], args[600];
        snprintf(dir, sizeof dir, "%s/nvcc-fast", sc.dir);
        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(file, sizeof file, "%s/solution.json", dir);
        snprintf(args, sizeof args, "export-solution --suite %s/suites/012-cos_sin --kernel 1 --out %s",
                 RG_SOURCE_DIR, file);
        assert_int_equal(run(args), 0);
        write_sources(file, dir);
        assert_int_equal(nvcc_compile(dir), 0);
    }
    /* The negative control: 011's binding with its launcher renamed. */
    char dir[160];
    snprintf(dir, sizeof dir, "%s/nvcc0", sc.dir);
    char *cu = tu_slurp(tu_path_in(dir, "kernel.cu"), NULL);
    assert_non_null(cu);
    char *at = strstr(cu, "rg_rope_forward_launch(");
    assert_non_null(at);
    FILE *f = fopen(tu_path_in(dir, "kernel.cu"), "w");
    assert_non_null(f);
    fprintf(f, "%.*srg_no_such_launch(%s", (int)(at - cu), cu, at + strlen("rg_rope_forward_launch("));
    assert_int_equal(fclose(f), 0);
    free(cu);
    assert_int_not_equal(nvcc_compile(dir), 0);
    char *log = tu_slurp(tu_path_in(dir, "nvcc.log"), NULL);
    assert_non_null(log);
    assert_non_null(strstr(log, "rg_no_such_launch"));
    free(log);
#endif
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

    /* --suite: a folder that is no suite, an empty name, a definition no op
     * knows; none leaves a file behind. */
    char out_dir[160], out_file[200], bad[200];
    snprintf(out_dir, sizeof out_dir, "%s/badsuite-out", sc.dir);
    assert_int_equal(mkdir(out_dir, 0755), 0);
    snprintf(out_file, sizeof out_file, "%s/solution.json", out_dir);
    snprintf(args, sizeof args, "export-solution --suite %s --out %s", missing, out_file);
    expect_usage_error(args, "no/such/dir");
    expect_usage_error("export-solution --suite ''", "--suite");
    expect_usage_error("export-solution --suite", "--suite");
    snprintf(bad, sizeof bad, "%s/suite-999", sc.dir);
    assert_int_equal(mkdir(bad, 0755), 0);
    FILE *f = fopen(tu_path_in(bad, "definition.json"), "w");
    assert_non_null(f);
    fputs("{\"name\": \"999_no_such_op\", \"axes\": {}, \"inputs\": {}, \"outputs\": {}}\n", f);
    fclose(f);
    f = fopen(tu_path_in(bad, "workload.jsonl"), "w");
    assert_non_null(f);
    fclose(f);
    snprintf(args, sizeof args, "export-solution --suite %s --out %s", bad, out_file);
    expect_usage_error(args, "999_no_such_op");
    assert_int_equal(tu_count_dir(out_dir), 0);   /* no file, no temporary */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_to_file),
        cmocka_unit_test(test_export_stdout_name_author),
        cmocka_unit_test(test_export_kernel),
        cmocka_unit_test(test_export_relative_suite),
        cmocka_unit_test(test_export_compiles_with_nvcc),
        cmocka_unit_test(test_export_bad_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
