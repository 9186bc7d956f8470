/* SPDX-License-Identifier: Apache-2.0 */
/* test_signals.c -- SIGINT or SIGTERM during `ropegrad bench` (issue 12):
 *  - during the commit (the run done, the registry being written): the
 *    signal waits until the run is stored and every output is in place, then
 *    ends the process; no temporary file is left;
 *  - during the run: the process ends, and nothing is written at all (no
 *    JSON, no manifest, no registry, no temporary file).
 * The commit is caught in the act by holding the registry's write lock from
 * here: bench has printed its table and waits for the lock when the signal
 * is sent. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "test_util.h"

static tu_scratch sc;

static int setup(void **state) { return tu_scratch_open(&sc, "rg_signals"); }
static int teardown(void **state) { return tu_rm_rf(sc.dir); }

static const char *at(const char *name)
{
    static char p[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", sc.dir, name);
    return p[k];
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ropegrad bench ... in the scratch folder, stdout/stderr into out.txt/err.txt. */
static pid_t start_bench(const char *iterations, const char *db)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(sc.dir) != 0) _exit(120);
        int o = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open("err.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(121);
        execl(TU_BIN, TU_BIN, "bench", "--backend", "cpu", "--threads", "1", "--workloads", "0", "--iterations",
              iterations, "--warmup", "0", "--record", "--db", db, "--json", "r.json", "--manifest", "m.json",
              (char *)NULL);
        _exit(122);
    }
    return pid;
}

/* Waits (up to 60 s) until the file contains needle. */
static int wait_for_text(const char *path, const char *needle)
{
    for (int i = 0; i < 6000; i++) {
        char *t = tu_slurp(path, NULL);
        int found = t && strstr(t, needle);
        free(t);
        if (found) return 1;
        sleep_ms(10);
    }
    return 0;
}

static int count_tmp_files(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '\\.tmp' > '%s/tmpcount' || true", sc.dir, sc.dir);
    tu_system(cmd);
    char *t = tu_slurp(at("tmpcount"), NULL);
    int n = t ? atoi(t) : -1;
    free(t);
    return n;
}

static int runs_in(const char *db)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    int n = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, "SELECT count(*) FROM runs", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return n;
}

static void test_signal_during_commit(void **state)
{
    int signals[] = {SIGINT, SIGTERM};
    for (int k = 0; k < 2; k++) {
        /* A registry with one run, then its write lock held here. */
        pid_t pid = start_bench("1", "t.db");
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        assert_int_equal(runs_in(at("t.db")), 1);
        unlink(at("r.json"));
        unlink(at("m.json"));
        unlink(at("out.txt"));   /* the table waited for below is the next run's */

        sqlite3 *h;
        assert_int_equal(sqlite3_open(at("t.db"), &h), SQLITE_OK);
        assert_int_equal(sqlite3_exec(h, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
        pid = start_bench("1", "t.db");
        assert_true(wait_for_text(at("out.txt"), "passed 1/1"));   /* the run is done: committing */
        sleep_ms(300);
        assert_int_equal(kill(pid, signals[k]), 0);
        sleep_ms(300);
        /* Still there: the signal waits for the commit, which waits for the lock. */
        if (waitpid(pid, &st, WNOHANG) == pid) {
            char *e = tu_slurp(at("err.txt"), NULL), *o = tu_slurp(at("out.txt"), NULL);
            fail_msg("bench ended early (status %d): %s %s", st, o ? o : "", e ? e : "");
        }
        assert_int_equal(waitpid(pid, &st, WNOHANG), 0);
        assert_int_equal(sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(h);
        assert_int_equal(waitpid(pid, &st, 0), pid);
        /* Then the signal ended it, with everything in place. */
        assert_true(WIFSIGNALED(st));
        assert_int_equal(WTERMSIG(st), signals[k]);
        assert_int_equal(runs_in(at("t.db")), 2);
        assert_int_equal(access(at("r.json"), F_OK), 0);
        assert_int_equal(access(at("m.json"), F_OK), 0);
        assert_int_equal(count_tmp_files(), 0);
        unlink(at("t.db"));
        unlink(at("t.db-wal"));
        unlink(at("t.db-shm"));
    }
}

static void test_signal_during_run(void **state)
{
    int signals[] = {SIGINT, SIGTERM};
    for (int k = 0; k < 2; k++) {
        pid_t pid = start_bench("1000000", "new.db");   /* far longer than the wait below */
        sleep_ms(700);
        assert_int_equal(kill(pid, signals[k]), 0);
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFSIGNALED(st));
        assert_int_equal(WTERMSIG(st), signals[k]);
        assert_int_equal(access(at("r.json"), F_OK), -1);
        assert_int_equal(access(at("m.json"), F_OK), -1);
        assert_int_equal(access(at("new.db"), F_OK), -1);
        assert_int_equal(count_tmp_files(), 0);
        char *out = tu_slurp(at("out.txt"), NULL);
        assert_null(strstr(out ? out : "", "recorded"));
        free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_signal_during_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_signal_during_run, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
