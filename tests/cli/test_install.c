/* SPDX-License-Identifier: Apache-2.0 */
/* test_install.c -- `cmake --install` into a temporary prefix, as a packager
 * or a user would: the layout (library with its SONAME, ropegrad.h, the CLI,
 * the suites, pkg-config and CMake packages), a clean shared library (only
 * ropegrad_* exported, no RUNPATH), a small C program built against the
 * installed package through pkg-config and through find_package(ropegrad)
 * and run, and the installed CLI run from / finding the installed suites. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

static char prefix[64], libdir[256], work[256];
static char cmd[8192];

#define SH(...) (snprintf(cmd, sizeof cmd, __VA_ARGS__), print_message("    $ %s\n", cmd), tu_system(cmd))

static int file_exists(const char *dir, const char *rel)
{
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    return stat(p, &st) == 0;
}

/* Output of `tool 'file'`, as text (the caller frees it). */
static char *capture(const char *tool, const char *file)
{
    char path[320], c[2048];
    snprintf(path, sizeof path, "%s/capture.txt", work);
    snprintf(c, sizeof c, "%s '%s'", tool, file);
    snprintf(cmd, sizeof cmd, "%s > '%s' 2>&1", c, path);
    int rc = tu_system(cmd);
    char *t = tu_slurp(path, NULL);
    if (rc != 0) fail_msg("'%s' exited %d: %s", c, rc, t ? t : "");
    return t;
}

/* The consumer: the op on a tiny problem on the CPU, against the float64
 * reference, through nothing but the installed header and library. */
static const char consumer_c[] =
    "#include <math.h>\n#include <stdio.h>\n#include <ropegrad.h>\n#include <ropegrad_dtype.h>\n"
    "int main(void) {\n"
    "  enum { B = 2, S = 3, D = 8 };\n"
    "  static float gc[B*S*D], gs[B*S*D], emb[B*S*D], inv[D/2], out[B*S]; double ref[B*S];\n"
    "  for (int i = 0; i < B*S*D; i++) { gc[i] = (float)((i % 7) - 3) / 4; gs[i] = (float)((i % 5) - 2) / 3;"
    " emb[i] = (float)i / 10; }\n"
    "  for (int i = 0; i < D/2; i++) inv[i] = 1.0f / (float)(1 + i);\n"
    "  ropegrad_rope_backward_problem p = {.batch_size = B, .seq_len = S, .head_dim = D, .grad_dtype = ROPEGRAD_F32,\n"
    "    .grad_cos = gc, .grad_sin = gs, .emb = emb, .inv_freq = inv, .attention_scaling = 0.5f,"
    " .grad_position_ids = out};\n"
    "  int rc = ropegrad_rope_backward_cpu(&p, 1);\n"
    "  if (rc) { fprintf(stderr, \"cpu: %s\\n\", ropegrad_strerror(rc)); return 1; }\n"
    "  if ((rc = ropegrad_rope_backward_reference(&p, ref))) { fprintf(stderr, \"ref: %s\\n\", ropegrad_strerror(rc));"
    " return 1; }\n"
    "  for (int i = 0; i < B*S; i++) if (fabs(out[i] - ref[i]) > 1e-4 * (1 + fabs(ref[i]))) return 3;\n"
    "  if (ropegrad_bf16_to_float(0x3fc0) != 1.5f || ropegrad_f16_to_float(0xbe00) != -1.5f) return 4;\n"
    "  printf(\"consumer ok: ropegrad %s\\n\", ropegrad_version());\n"
    "  return 0;\n}\n";

static const char consumer_cmake[] =
    "cmake_minimum_required(VERSION 3.25)\nproject(consumer LANGUAGES C)\n"
    "find_package(ropegrad 0.2 REQUIRED)\nadd_executable(consumer consumer.c)\n"
    "target_link_libraries(consumer PRIVATE ropegrad::ropegrad m)\n";

static void write_text(const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", work, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int group_setup(void **state)
{
#ifdef RG_INSTALL_TEST_SKIP
    printf("SKIP: %s\n", RG_INSTALL_TEST_SKIP);
    exit(77);
#endif
    /* The tools a packager has; a machine without them (the GPU machine runs
     * a build made elsewhere) skips, saying which is missing. */
    static const char *const tools[] = {RG_CMAKE_COMMAND, RG_C_COMPILER, RG_CMAKE_MAKE_PROGRAM, "pkg-config",
                                        "readelf", "nm"};
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        snprintf(cmd, sizeof cmd, "command -v '%s' > /dev/null 2>&1", tools[i]);
        if (tu_system(cmd) != 0) {
            printf("SKIP: %s is not on this machine (the install test builds against the installed package)\n",
                   tools[i]);
            exit(77);
        }
    }
    if (tu_mkdtemp(prefix, sizeof prefix, "rg_install")) return -1;
    snprintf(libdir, sizeof libdir, "%s/%s", prefix, RG_INSTALL_LIBDIR);
    snprintf(work, sizeof work, "%s/work", prefix);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && '%s' --install '%s' --prefix '%s/inst' > '%s/install.log' 2>&1",
             work, RG_CMAKE_COMMAND, RG_BINARY_DIR, prefix, work);
    int rc = tu_system(cmd);
    /* From here on the prefix is the installed tree. */
    char inst[96];
    snprintf(inst, sizeof inst, "%s/inst", prefix);
    snprintf(libdir, sizeof libdir, "%s/%s", inst, RG_INSTALL_LIBDIR);
    if (rc) {
        char p[320];
        snprintf(p, sizeof p, "%s/install.log", work);
        char *log = tu_slurp(p, NULL);
        fprintf(stderr, "cmake --install failed (%d): %s\n", rc, log ? log : "");
        free(log);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state) { return tu_rm_rf(prefix); }

static void test_layout(void **state)
{
    char inst[96];
    snprintf(inst, sizeof inst, "%s/inst", prefix);
    assert_true(file_exists(inst, "include/ropegrad.h"));
    assert_true(file_exists(inst, "include/ropegrad_impl.h"));
    assert_true(file_exists(inst, "include/ropegrad_dtype.h"));
    assert_true(file_exists(inst, "bin/ropegrad"));
    assert_true(file_exists(inst, "share/ropegrad/suites/014-rope_backward/definition.json"));
    assert_true(file_exists(inst, "share/ropegrad/suites/014-rope_backward/workload.jsonl"));
    assert_true(file_exists(libdir, "libropegrad.so"));
    assert_true(file_exists(libdir, "libropegrad.so.0.2"));
    assert_true(file_exists(libdir, "pkgconfig/ropegrad.pc"));
    assert_true(file_exists(libdir, "cmake/ropegrad/ropegradConfig.cmake"));
    assert_true(file_exists(libdir, "cmake/ropegrad/ropegradConfigVersion.cmake"));
    assert_true(file_exists(libdir, "cmake/ropegrad/ropegradTargets.cmake"));
}

/* Versioned SONAME, no RPATH/RUNPATH at all (neither into the build tree nor
 * the CUDA toolkit), and only the public API in the dynamic symbol table. */
static void test_clean_library(void **state)
{
    char lib[400];
    snprintf(lib, sizeof lib, "%s/libropegrad.so.0.2", libdir);
    char *d = capture("readelf -d", lib);
    assert_non_null(d);
    assert_non_null(strstr(d, "Library soname: [libropegrad.so.0.2]"));
    assert_null(strstr(d, "RPATH"));
    assert_null(strstr(d, "RUNPATH"));
    free(d);
    char *syms = capture("nm -D --defined-only", lib);
    assert_non_null(syms);
    int n_public = 0;
    for (char *line = strtok(syms, "\n"); line; line = strtok(NULL, "\n")) {
        const char *name = strrchr(line, ' ');
        name = name ? name + 1 : line;
        if (!strncmp(name, "ropegrad_", 9)) n_public++;
        else if (strcmp(name, "ROPEGRAD_0")) fail_msg("libropegrad exports a non-public symbol: %s", name);
    }
    free(syms);
    assert_true(n_public >= 10);   /* ropegrad_rope_backward_validate, _cpu, _strerror, ... */
    /* The installed CLI finds the library beside it, not in the build tree. */
    char cli[128];
    snprintf(cli, sizeof cli, "%s/inst/bin/ropegrad", prefix);
    d = capture("readelf -d", cli);
    assert_non_null(d);
    assert_null(strstr(d, RG_BINARY_DIR));
    assert_null(strstr(d, "/usr/local/cuda"));
    free(d);
}

/* Runs the shell command cmd (in work/) that builds and runs the consumer
 * with its output in work/<tag>.out and its build log in work/<tag>.log. */
static void build_and_run_consumer(const char *what, const char *tag, int rc)
{
    char p[320];
    snprintf(p, sizeof p, "%s/%s.out", work, tag);
    char *out = tu_slurp(p, NULL);
    if (rc) {
        snprintf(p, sizeof p, "%s/%s.log", work, tag);
        char *log = tu_slurp(p, NULL);
        fail_msg("%s consumer: exit %d: %s %s", what, rc, log ? log : "", out ? out : "");
    }
    assert_non_null(out);
    assert_non_null(strstr(out, "consumer ok: ropegrad 0."));
    free(out);
}

static void test_pkgconfig_consumer(void **state)
{
    write_text("consumer.c", consumer_c);
    int rc = SH("cd '%s' && '%s' consumer.c -o consumer_pc $(PKG_CONFIG_PATH='%s/pkgconfig' pkg-config --cflags "
                "--libs ropegrad) -lm > pc.log 2>&1 && LD_LIBRARY_PATH='%s' ./consumer_pc > pc.out 2>&1",
                work, RG_C_COMPILER, libdir, libdir);
    build_and_run_consumer("pkg-config", "pc", rc);
}

static void test_cmake_consumer(void **state)
{
    write_text("consumer.c", consumer_c);
    write_text("CMakeLists.txt", consumer_cmake);
    /* The generator (and make program) of this build: the machine has it. */
    int rc = SH("cd '%s' && CC='%s' '%s' -S . -B b -G '%s' -DCMAKE_MAKE_PROGRAM='%s' -DCMAKE_PREFIX_PATH='%s/inst' "
                "> cm.log 2>&1 && '%s' --build b >> cm.log 2>&1 && ./b/consumer > cm.out 2>&1",
                work, RG_C_COMPILER, RG_CMAKE_COMMAND, RG_CMAKE_GENERATOR, RG_CMAKE_MAKE_PROGRAM, prefix,
                RG_CMAKE_COMMAND);
    build_and_run_consumer("find_package", "cm", rc);
}

/* From /, with no environment pointing anywhere: the installed suites. With
 * them moved away the same command cannot find a suite (so it was theirs). */
static void test_installed_cli_from_root(void **state)
{
    int rc = SH("cd / && env -u ROPEGRAD_LIB -u LD_LIBRARY_PATH '%s/inst/bin/ropegrad' check --backend cpu "
                "--workloads 0 > '%s/cli.out' 2>&1", prefix, work);
    char p[320];
    snprintf(p, sizeof p, "%s/cli.out", work);
    char *out = tu_slurp(p, NULL);
    print_message("%s", out ? out : "");
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "passed 1/1"));
    free(out);
    assert_int_equal(SH("mv '%s/inst/share/ropegrad/suites' '%s/inst/share/ropegrad/moved'", prefix, prefix), 0);
    rc = SH("cd / && '%s/inst/bin/ropegrad' check --backend cpu --workloads 0 > '%s/cli.out' 2>&1", prefix, work);
    assert_int_equal(SH("mv '%s/inst/share/ropegrad/moved' '%s/inst/share/ropegrad/suites'", prefix, prefix), 0);
    assert_int_equal(rc, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_clean_library),
        cmocka_unit_test(test_pkgconfig_consumer),
        cmocka_unit_test(test_cmake_consumer),
        cmocka_unit_test(test_installed_cli_from_root),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
