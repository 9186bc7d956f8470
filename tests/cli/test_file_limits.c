/* SPDX-License-Identifier: Apache-2.0 */
/* test_file_limits.c -- the CLI under a file size limit (`ulimit -f`, set
 * with setrlimit(RLIMIT_FSIZE) in the child only): `runs import` into a new
 * registry and into one that must grow, and `runs export --out` of a file
 * larger than the limit each say so in one line and exit 2 -- never killed
 * by SIGXFSZ, never a partial file left. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_record_fixture.h"
#include "test_util.h"

static char dir[400];
static char err_text[1 << 14];

static int setup(void **state)
{
    fx_path(dir, sizeof dir, "fsize");
    return tu_fresh_dir(dir);
}

static int teardown(void **state) { return tu_rm_rf(dir); }

/* `ropegrad ARGV...` in dir with a file size limit of limit bytes; stderr
 * into err_text. Returns the wait status. */
static int run_limited(rlim_t limit, const char *const *argv)
{
    char errf[600];
    snprintf(errf, sizeof errf, "%s/stderr.txt", dir);
    pid_t pid = fork();
    if (pid == 0) {
        int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600), o = open("/dev/null", O_WRONLY);
        if (e < 0 || o < 0 || dup2(e, 2) < 0 || dup2(o, 1) < 0 || chdir(dir)) _exit(126);
        if (setrlimit(RLIMIT_FSIZE, &(struct rlimit){limit, limit})) _exit(126);
        execv(TU_BIN, (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    tu_read_into(errf, err_text, sizeof err_text);
    return st;
}

static void assert_one_line_exit_2(int st, const char *what)
{
    if (!WIFEXITED(st)) fail_msg("%s: killed by signal %d", what, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    if (WEXITSTATUS(st) != 2 || tu_count_lines(err_text) != 1)
        fail_msg("%s: exit %d, stderr '%s'", what, WEXITSTATUS(st), err_text);
    assert_non_null(strstr(err_text, "the disk is full or the file size limit was reached") ? err_text
                    : strstr(err_text, "File too large"));
}

static void test_import_and_export(void **state)
{
    char path[600];
    snprintf(path, sizeof path, "%s/m1.json", dir);
    assert_int_equal(fx_write_manifest(path, "NVIDIA H200", 1, 1.0, 1), 0);
    snprintf(path, sizeof path, "%s/m2.json", dir);
    assert_int_equal(fx_write_manifest(path, "NVIDIA H200", 2, 0.9, 2), 0);
    /* A new registry cannot even be made within 8 KiB. */
    const char *import_new[] = {TU_BIN, "runs", "import", "m1.json", "--db", "new.db", NULL};
    assert_one_line_exit_2(run_limited(8 * 1024, import_new), "runs import into a new registry");
    /* An existing registry that must grow past the limit. */
    const char *import_ok[] = {TU_BIN, "runs", "import", "m1.json", "--db", "g.db", NULL};
    int st = run_limited(RLIM_INFINITY, import_ok);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    struct stat sb;
    char db[600];
    snprintf(db, sizeof db, "%s/g.db", dir);
    assert_int_equal(stat(db, &sb), 0);
    const char *import_grow[] = {TU_BIN, "runs", "import", "m2.json", "--db", "g.db", NULL};
    /* A limit below what the import writes (its write-ahead log's pages, then the pages it adds). */
    assert_one_line_exit_2(run_limited(16 * 1024, import_grow), "runs import into a registry that must grow");
    /* Nothing half-stored: the registry still holds run 1 only. */
    const char *list[] = {TU_BIN, "runs", "list", "--db", "g.db", NULL};
    st = run_limited(RLIM_INFINITY, list);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* An export larger than the limit: one line, no file (not even a partial one). */
    const char *export[] = {TU_BIN, "runs", "export", "1", "--db", "g.db", "--out", "x.json", NULL};
    assert_one_line_exit_2(run_limited(1024, export), "runs export --out past the limit");
    snprintf(path, sizeof path, "%s/x.json", dir);
    assert_int_equal(stat(path, &sb), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_import_and_export, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
