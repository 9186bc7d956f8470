/* SPDX-License-Identifier: Apache-2.0 */
/* test_cpu_share.c -- the CPU share other processes used over a span
 * (src/harness/cpu_share.h): /proc/stat text parsed, the share's arithmetic
 * on known ticks, bad input refused with a message, a live span on this
 * machine measured, and a reaped child's CPU time counted as ours (the
 * supervised worker that runs a plugin is not "another process"). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cpu_share.h"

/* A 2-CPU /proc/stat as Linux 5.x writes it (10 fields a line). */
static const char stat_text[] = "cpu  925096 199224 329152 769300 17037 11 10854 1451 0 0\n"
                                "cpu0 427104 95472 140429 459369 622 5 1281 728 0 0\n"
                                "cpu1 497992 103752 188722 309931 16414 6 9573 722 0 0\n"
                                "intr 123 4 5\nctxt 987\n";

static void test_parse(void **state)
{
    rg_cpu_ticks t;
    char err[128];
    assert_int_equal(rg_cpu_ticks_parse(stat_text, &t, err, sizeof err), 0);
    /* user + nice + system + irq + softirq + steal; idle and iowait left out */
    assert_true(t.busy == 925096ULL + 199224 + 329152 + 11 + 10854 + 1451);
    assert_true(t.steal == 1451ULL);
    /* The aggregate line need not come first; "cpu0" is not it. */
    assert_int_equal(rg_cpu_ticks_parse("intr 1\ncpu0 1 2 3 4 5 6 7 8\ncpu  1 2 3 4 5 6 7 8\n", &t, err, sizeof err), 0);
    assert_true(t.busy == 1ULL + 2 + 3 + 6 + 7 + 8 && t.steal == 8ULL);
}

static void test_parse_refuses(void **state)
{
    rg_cpu_ticks t;
    char err[128];
    assert_int_equal(rg_cpu_ticks_parse("cpu0 1 2 3 4 5 6 7 8\nintr 1\n", &t, err, sizeof err), 1);
    assert_non_null(strstr(err, "no aggregate \"cpu\" line"));
    /* Kernels before 2.6.11 had no steal field: not measured rather than wrong. */
    assert_int_equal(rg_cpu_ticks_parse("cpu  1 2 3 4 5 6 7\n", &t, err, sizeof err), 1);
    assert_non_null(strstr(err, "fewer than 8 fields"));
    assert_int_equal(rg_cpu_ticks_parse("cpu  a b c d e f g h\n", &t, err, sizeof err), 1);
    assert_int_equal(rg_cpu_ticks_parse("", &t, err, sizeof err), 1);
    assert_int_equal(rg_cpu_ticks_parse(NULL, &t, err, sizeof err), 1);
    assert_int_equal(rg_cpu_ticks_parse(stat_text, NULL, err, sizeof err), 1);
}

static void test_share(void **state)
{
    char err[128];
    rg_cpu_share s;
    /* 2 s; the machine busy 300 ticks (3 CPU s at 100 Hz), 20 of them steal;
     * this process 1 CPU s: others used (3 - 1) / 2 = 1.00 CPUs, steal 0.10. */
    const rg_cpu_mark a = {{1000, 50}, 10.0, 100.0}, b = {{1300, 70}, 11.0, 102.0};
    assert_int_equal(rg_cpu_share_between(&a, &b, 100, &s, err, sizeof err), 0);
    assert_int_equal(s.known, 1);
    assert_true(fabs(s.other_cpus - 1.0) < 1e-12);
    assert_true(fabs(s.steal_cpus - 0.1) < 1e-12);
    assert_true(fabs(s.span_s - 2.0) < 1e-12);
    /* Tick rounding: this process's precise time above the machine's ticks -> 0, not negative. */
    const rg_cpu_mark c = {{1000, 50}, 10.0, 100.0}, d = {{1010, 50}, 10.2, 100.1};
    assert_int_equal(rg_cpu_share_between(&c, &d, 100, &s, err, sizeof err), 0);
    assert_true(s.other_cpus == 0 && s.steal_cpus == 0);
}

static void test_share_refuses(void **state)
{
    char err[128];
    rg_cpu_share s;
    const rg_cpu_mark a = {{1000, 50}, 10.0, 100.0}, b = {{1300, 70}, 11.0, 102.0};
    assert_int_equal(rg_cpu_share_between(&b, &a, 100, &s, err, sizeof err), 1);   /* reversed */
    assert_int_equal(s.known, 0);
    assert_non_null(strstr(err, "out of order"));
    assert_int_equal(rg_cpu_share_between(&a, &b, 0, &s, err, sizeof err), 1);
    assert_int_equal(rg_cpu_share_between(&a, &a, 100, &s, err, sizeof err), 1);   /* no span */
    const rg_cpu_mark fewer = {{900, 70}, 11.0, 102.0};
    assert_int_equal(rg_cpu_share_between(&a, &fewer, 100, &s, err, sizeof err), 1);
    assert_int_equal(rg_cpu_share_between(NULL, &b, 100, &s, err, sizeof err), 1);
    assert_int_equal(rg_cpu_share_between(&a, &b, 100, NULL, err, sizeof err), 1);
}

/* This process busy for 0.2 CPU s (on a busy machine it may take longer):
 * the share is measured, finite and not negative. */
static void test_live(void **state)
{
    rg_cpu_mark start;
    rg_cpu_share s;
    char err[128];
    assert_int_equal(rg_cpu_mark_now(&start, err, sizeof err), 0);
    volatile double x = 0;
    rg_cpu_mark now;
    do {
        for (int i = 0; i < 100000; i++) x += 1e-9 * i;
        assert_int_equal(rg_cpu_mark_now(&now, err, sizeof err), 0);
    } while (now.self_s - start.self_s < 0.2 && now.wall_s - start.wall_s < 30);
    assert_true(now.self_s - start.self_s >= 0.2);
    assert_true(x > 0);   /* the loop's work was done (and x is read: clang's -Wunused-but-set-variable) */
    assert_int_equal(rg_cpu_share_since(&start, &s, err, sizeof err), 0);
    assert_int_equal(s.known, 1);
    assert_true(s.span_s > 0 && isfinite(s.other_cpus) && s.other_cpus >= 0 && s.steal_cpus >= 0);
    assert_int_equal(rg_cpu_share_since(NULL, &s, err, sizeof err), 1);
    assert_int_equal(s.known, 0);
}

/* A child that burns 0.2 s of CPU and is waited for: its time is in the mark's self_s. */
static void test_reaped_child_is_ours(void **state)
{
    (void)state;
    rg_cpu_mark start, end;
    char err[128];
    assert_int_equal(rg_cpu_mark_now(&start, err, sizeof err), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        rg_cpu_mark a, b;
        volatile double x = 0;
        if (rg_cpu_mark_now(&a, NULL, 0)) _exit(1);
        do {
            for (int i = 0; i < 100000; i++) x += 1e-9 * i;
            if (rg_cpu_mark_now(&b, NULL, 0)) _exit(1);
        } while (b.self_s - a.self_s < 0.2 && b.wall_s - a.wall_s < 30);
        _exit(x > 0 ? 0 : 1);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(rg_cpu_mark_now(&end, err, sizeof err), 0);
    assert_true(end.self_s - start.self_s >= 0.19);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),       cmocka_unit_test(test_parse_refuses), cmocka_unit_test(test_share),
        cmocka_unit_test(test_share_refuses), cmocka_unit_test(test_live),
        cmocka_unit_test(test_reaped_child_is_ours),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
