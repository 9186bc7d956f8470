/* SPDX-License-Identifier: Apache-2.0 */
/* test_db_option.c -- --db as every command takes it: an empty path is one
 * line and exit 2 (it once meant the default registry, silently), and
 * `bench --record --db PATH` refuses a registry that cannot be created at
 * PATH before the benchmark runs (it once ran the whole benchmark first),
 * creating nothing. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ropegrad.h"
#include "test_util.h"

static tu_scratch sc;
static char out[1 << 14], err[1 << 14], prefix[256], fallback[128];

/* `ropegrad ARGS` in the scratch folder, $ROPEGRAD_DB (the default registry) pointing there, within 20 s. */
static int run(const char *args)
{
    int code = tu_run_prefixed(sc.dir, prefix, out, sizeof out, err, sizeof err, args);
    print_message("    ropegrad %s\n    -> %d: %s", args, code, err);
    return code;
}

/* Exit 2, one line on stderr holding needle, nothing on stdout, no default registry. */
static void expect_refused(const char *args, const char *needle)
{
    assert_int_equal(run(args), 2);
    assert_int_equal(tu_count_lines(err), 1);
    assert_non_null(strstr(err, needle));
    assert_string_equal(out, "");
    assert_int_equal(access(fallback, F_OK), -1);
}

static int setup(void **state)
{
    if (tu_scratch_open(&sc, "rg_db_option")) return -1;
    snprintf(fallback, sizeof fallback, "%s/default.db", sc.dir);
    snprintf(prefix, sizeof prefix, "timeout 20 env ROPEGRAD_DB='%s'", fallback);
    return 0;
}

static int teardown(void **state) { return tu_rm_rf(sc.dir); }

/* --db '' and --db= wherever --db is taken. */
static void test_empty_db(void **state)
{
    static const char *const cmds[] = {
        "runs list", "runs rank", "runs show 1", "runs note 1 x", "runs import none.json", "runs export 1 --out e.json",
        "runs history 1", "runs check 1", "runs regressions", "report 1 --html r.html", "site --out s",
        "serve --listen 127.0.0.1:0", "bench --backend cpu --workloads 0 --iterations 1 --record",
        "check --backend cpu --workloads 0 --record",
    };
    char args[512];
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        snprintf(args, sizeof args, "%s --db ''", cmds[i]);
        expect_refused(args, "--db: empty path");
        snprintf(args, sizeof args, "%s --db=", cmds[i]);
        expect_refused(args, "--db: empty path");
    }
}

/* A registry that cannot be created: refused before the run (a long one
 * here: it would outlast the timeout), and nothing is left behind. */
static void test_record_db_checked_first(void **state)
{
    static const char *const dbs[] = {"/proc/nope/x.db", "file.txt/x.db", "file.txt/deeper/x.db"};
    char args[512];
    char file[160];
    snprintf(file, sizeof file, "%s/file.txt", sc.dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    for (size_t i = 0; i < sizeof dbs / sizeof dbs[0]; i++) {
        snprintf(args, sizeof args, "bench --backend cpu --workloads 0 --iterations 1000000 --record --db '%s'", dbs[i]);
        expect_refused(args, "cannot create a registry");
    }
    /* A registry that can be created still is, folders and all. */
    assert_int_equal(run("check --backend cpu --workloads 0 --record --db new/sub/r.db"), 0);
    char db[160];
    snprintf(db, sizeof db, "%s/new/sub/r.db", sc.dir);
    assert_int_equal(access(db, F_OK), 0);
    assert_int_equal(access(fallback, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_db),
        cmocka_unit_test(test_record_db_checked_first),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
