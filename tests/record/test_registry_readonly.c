/* SPDX-License-Identifier: Apache-2.0 */
/* test_registry_readonly.c -- issue 12's hostile registries, through the CLI:
 *  - a registry that can be read but not written (no write bit on the file,
 *    none on its folder, a read-only mount) is opened read-only: list, show,
 *    rank, compare and report work; writes are refused with one line; nothing
 *    is created beside it and its bytes do not change;
 *  - a corrupt registry (a damaged page: SQLite's quick_check fails) is
 *    refused as corrupt by every command, before anything runs, and never
 *    written to.
 * The tests run as root in CI: permission bits are the registry's own policy
 * (src/record/registry/registry_open.c must_read_only), so chmod is a real test even for
 * root. The read-only mount needs `unshare -m` (mount namespaces); without it
 * that test is skipped and says why. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "test_record_fixture.h"
#include "test_util.h"

static char dir[400], outdir[420];
static char out_text[1 << 16], err_text[1 << 16];

/* Runs in outdir (where stdout/stderr are captured): dir holds the registry
 * and the manifests only, so that anything appearing beside it shows. */
#define rg(...) tu_run_captured(outdir, out_text, sizeof out_text, err_text, sizeof err_text, __VA_ARGS__)

#define EXPECT_ONE_LINE_ERROR(rc, needle) TU_EXPECT_ONE_LINE_ERROR(rc, err_text, needle)
#define EXPECT_OK(rc) TU_EXPECT_OK(rc, err_text)

static const char *path_in(const char *name) { return tu_path_in(dir, name); }

static void write_manifest(const char *name, int stamp, double scale)
{
    assert_int_equal(fx_write_manifest(path_in(name), "", 0, scale, stamp), 0);
}

/* The WAL folded into the main file, as a registry at rest is. */
static void checkpoint(const char *db)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
}

static char db[700], m3[700];

static int setup(void **state)
{
    fx_path(dir, sizeof dir, "readonly");
    snprintf(outdir, sizeof outdir, "%s.out", dir);
    if (tu_fresh_dir(dir) || tu_fresh_dir(outdir)) return -1;
    write_manifest("m1.json", 1, 1.0);
    write_manifest("m2.json", 2, 1.5);
    write_manifest("m3.json", 3, 2.0);
    snprintf(db, sizeof db, "%s/runs.db", dir);
    snprintf(m3, sizeof m3, "%s/m3.json", dir);
    if (rg("runs import '%s/m1.json' --db '%s'", dir, db) || rg("runs import '%s/m2.json' --db '%s'", dir, db))
        return -1;
    checkpoint(db);
    /* Only the registry and the manifests: no -wal/-shm left. */
    return tu_count_dir(dir) == 4 ? 0 : -1;
}

static int teardown(void **state) { return tu_rm_rf(dir) | tu_rm_rf(outdir); }

#define assert_unchanged tu_assert_unchanged

/* Every reading command works; every write is refused with one line. */
static void reads_work_writes_refused(void)
{
    EXPECT_OK(rg("runs list --db '%s'", db));
    assert_non_null(strstr(out_text, "imported"));
    EXPECT_OK(rg("runs show 2 --db '%s'", db));
    assert_non_null(strstr(out_text, "Run #2"));
    EXPECT_OK(rg("runs rank --db '%s'", db));
    EXPECT_OK(rg("runs compare 2 1 --db '%s'", db));
    EXPECT_OK(rg("runs cite 1 --db '%s'", db));
    EXPECT_OK(rg("report 2 --html r.html --db '%s'", db));
    EXPECT_ONE_LINE_ERROR(rg("runs note 1 hello --db '%s'", db), "runs.db");
    EXPECT_ONE_LINE_ERROR(rg("runs import '%s' --db '%s'", m3, db), "runs.db");
    /* bench --record says so before running anything. */
    EXPECT_ONE_LINE_ERROR(rg("bench --backend cpu --workloads 0 --iterations 1 --warmup 0 --record --db '%s'", db),
                          "read-only");
    assert_null(strstr(out_text, "passed"));
}

static void test_read_only_file(void **state)
{
    size_t n = 0;
    char *before = tu_slurp(db, &n);
    assert_int_equal(chmod(db, 0444), 0);
    reads_work_writes_refused();
    assert_unchanged(db, before, n);
    free(before);
}

/* The folder has no write bit: SQLite could not even create the WAL reader's
 * shared-memory file there, and nothing may appear in it. */
static void test_read_only_folder(void **state)
{
    size_t n = 0;
    char *before = tu_slurp(db, &n);
    assert_int_equal(chmod(dir, 0555), 0);
    reads_work_writes_refused();
    assert_int_equal(chmod(dir, 0755), 0);
    assert_int_equal(tu_count_dir(dir), 4);   /* no runs.db-wal, no runs.db-shm */
    assert_unchanged(db, before, n);
    free(before);
}

/* A read-only bind mount of the folder, in a private mount namespace. */
static void test_read_only_mount(void **state)
{
    char script[8192], log[700];
    snprintf(log, sizeof log, "%s/mount.log", outdir);
    snprintf(script, sizeof script,
             "unshare -m sh -c \"mount --bind '%s' '%s' && mount -o remount,bind,ro '%s' || exit 99; "
             "cd '%s' && '%s' runs list --db runs.db > '%s/list.out' 2>&1 && "
             "'%s' runs show 1 --db runs.db > /dev/null 2>&1 && "
             "'%s' runs rank --db runs.db > /dev/null 2>&1 && "
             "'%s' report 1 --html '%s/m.html' --db runs.db > /dev/null 2>&1 || exit 1; "
             "'%s' runs note 1 hi --db runs.db > /dev/null 2> '%s/note.err'; echo \\$? > '%s/note.rc'\" > '%s' 2>&1",
             dir, dir, dir, dir, TU_BIN, outdir, TU_BIN, TU_BIN, TU_BIN, outdir, TU_BIN, outdir, outdir, log);
    int rc = tu_system(script);
    if (rc == 99 || rc == 127 || rc == -1) {
        char *why = tu_slurp(log, NULL);
        printf("SKIP test_read_only_mount: cannot make a read-only mount here (unshare -m / mount: %s)\n",
               why && *why ? strtok(why, "\n") : "not permitted");
        free(why);
        skip();
    }
    char p[700];
    snprintf(p, sizeof p, "%s/list.out", outdir);
    char *list = tu_slurp(p, NULL);
    if (rc != 0) fail_msg("a read command failed on the read-only mount (exit %d): %s", rc, list ? list : "");
    assert_non_null(strstr(list, "imported"));
    free(list);
    snprintf(p, sizeof p, "%s/note.rc", outdir);
    char *nrc = tu_slurp(p, NULL);
    assert_non_null(nrc);
    assert_int_equal(atoi(nrc), 2);
    free(nrc);
    snprintf(p, sizeof p, "%s/note.err", outdir);
    char *nerr = tu_slurp(p, NULL);
    assert_int_equal(tu_count_lines(nerr), 1);
    free(nerr);
}

/* A page of the runs table overwritten: the file still opens as SQLite and
 * its schema page reads fine, but quick_check fails. */
static void test_corrupt(void **state)
{
    size_t n = 0;
    char *bytes = tu_slurp(db, &n);
    assert_non_null(bytes);
    /* Page 2 (4 KiB pages) is a table's b-tree page: garbage in its header and cells. */
    assert_true(n >= 3 * 4096);
    for (size_t i = 4096; i < 4096 + 512; i++) bytes[i] = (char)(0xA5 ^ (i * 7));
    FILE *f = fopen(db, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    assert_int_equal(fclose(f), 0);

    static const char *const cmds[] = {
        "runs list", "runs show 1", "runs rank", "runs compare 1 2", "runs cite 1", "runs note 1 hello",
        "runs replicate 1", "runs export 1", "report 1 --html c.html",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        print_message("    ropegrad %s\n", cmds[i]);
        EXPECT_ONE_LINE_ERROR(rg("%s --db '%s'", cmds[i], db), "corrupt");
    }
    EXPECT_ONE_LINE_ERROR(rg("runs import '%s' --db '%s'", m3, db), "corrupt");
    /* bench --record refuses before running anything, and writes nothing. */
    char bdir[700];
    snprintf(bdir, sizeof bdir, "%s/bench", outdir);
    assert_int_equal(mkdir(bdir, 0755), 0);
    EXPECT_ONE_LINE_ERROR(rg("bench --backend cpu --workloads 0 --iterations 1 --warmup 0 --record --db '%s' "
                             "--json '%s/b.json' --manifest '%s/b.manifest.json'",
                             db, bdir, bdir),
                          "corrupt");
    assert_null(strstr(out_text, "passed"));   /* no table: nothing was run */
    assert_int_equal(tu_count_dir(bdir), 0);
    assert_unchanged(db, bytes, n);
    assert_int_equal(tu_count_dir(dir), 4);   /* runs.db and 3 manifests: no -wal/-shm */
    free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_read_only_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only_mount, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
