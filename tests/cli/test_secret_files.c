/* SPDX-License-Identifier: Apache-2.0 */
/* test_secret_files.c -- issue 24 point 11, through the built binary: a FIFO
 * given as a manifest, a token file, a write-token file, a key or trusted
 * keys is refused at once with one line (each command runs under
 * `timeout`, so a command that blocks on the FIFO fails the test instead of
 * hanging it: exit 124), and a private key or token file that group or
 * others can read (0644) is refused as ssh refuses one. */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include "test_record_fixture.h"
#include "test_util.h"

static char dir[400];
static char out_text[1 << 16], err_text[1 << 14];

#define EXPECT_ONE_LINE_ERROR(rc, needle) TU_EXPECT_ONE_LINE_ERROR(rc, err_text, needle)

/* `ropegrad ARGS` in dir, killed after 10 s (exit 124: it blocked). */
static int rg_bounded(const char *args)
{
    return tu_run_prefixed(dir, "timeout 10", out_text, sizeof out_text, err_text, sizeof err_text, args);
}

static int setup(void **state)
{
    (void)state;
    fx_path(dir, sizeof dir, "secret-files");
    if (tu_fresh_dir(dir)) return -1;
    if (mkfifo(tu_path_in(dir, "fifo"), 0600)) return -1;
    if (fx_write_manifest(tu_path_in(dir, "m.json"), "NVIDIA H200", 1, 1.0, 1)) return -1;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cd '%s' && printf 'token-0123456789abcdef\\n' > token && chmod 600 token", dir);
    if (tu_system(cmd)) return -1;
    return 0;
}
static int teardown(void **state)
{
    (void)state;
    return tu_rm_rf(dir);
}

static void test_fifo_refused_at_once(void **state)
{
    (void)state;
    static const char *cmds[] = {
        "runs push http://127.0.0.1:9/ fifo",
        "runs push http://127.0.0.1:9/ m.json --token-file fifo",
        "serve --db runs.db --listen 127.0.0.1:0 --write-token-file fifo",
        "verify fifo",
        "runs import fifo --db runs.db",
        "migrate fifo",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        int rc = rg_bounded(cmds[i]);
        if (rc == 124) fail_msg("%s: blocked on the FIFO", cmds[i]);
        EXPECT_ONE_LINE_ERROR(rc, "not a regular file");
    }
}

static void test_fifo_key_refused(void **state)
{
    (void)state;
    TU_EXPECT_OK(rg_bounded("runs import m.json --db runs.db"), err_text);
    int rc = rg_bounded("runs sign 1 --key fifo --db runs.db");
    if (rc == 124) fail_msg("runs sign: blocked on the FIFO");
    EXPECT_ONE_LINE_ERROR(rc, "not a regular file");
}

static void test_open_secrets_refused(void **state)
{
    (void)state;
    TU_EXPECT_OK(rg_bounded("runs import m.json --db runs.db"), err_text);
    TU_EXPECT_OK(rg_bounded("keygen me.key"), err_text);
    assert_int_equal(chmod(tu_path_in(dir, "me.key"), 0644), 0);
    EXPECT_ONE_LINE_ERROR(rg_bounded("runs sign 1 --key me.key --db runs.db"), "permissions 0644 are too open");
    assert_non_null(strstr(err_text, "chmod 600"));
    /* 0600: the same key signs. */
    assert_int_equal(chmod(tu_path_in(dir, "me.key"), 0600), 0);
    TU_EXPECT_OK(rg_bounded("runs sign 1 --key me.key --db runs.db"), err_text);

    assert_int_equal(chmod(tu_path_in(dir, "token"), 0640), 0);
    EXPECT_ONE_LINE_ERROR(rg_bounded("runs push http://127.0.0.1:9/ m.json --token-file token"),
                          "permissions 0640 are too open");
    EXPECT_ONE_LINE_ERROR(rg_bounded("serve --db runs.db --listen 127.0.0.1:0 --write-token-file token"),
                          "permissions 0640 are too open");
    /* A public key may be read by anyone: 0644 trusted keys are fine. */
    TU_EXPECT_OK(rg_bounded("runs export 1 --db runs.db --out signed.json"), err_text);
    TU_EXPECT_OK(rg_bounded("verify signed.json --trusted-keys me.key.pub"), err_text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fifo_refused_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_key_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_secrets_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
