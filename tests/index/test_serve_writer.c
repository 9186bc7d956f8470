/* SPDX-License-Identifier: Apache-2.0 */
/* test_serve_writer.c -- the server's writer thread: jobs in order, each after
 * its before-hook, all queued ones run by stop, none taken after it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "serve_writer.h"

typedef struct trace {
    int order[64];
    int n;
    int before_seen[64];
} trace;

typedef struct item {
    trace *t;
    int k;
} item;

static void before(void *p)
{
    item *it = p;
    it->t->before_seen[it->k] = 1;
}

static void run(void *p)
{
    item *it = p;
    /* its before-hook ran first (the writer cannot start a job before it) */
    it->t->order[it->t->n++] = it->t->before_seen[it->k] ? it->k : -1;
}

static void test_order_and_stop(void **state)
{
    (void)state;
    char err[256];
    rg_writer *w;
    assert_int_equal(rg_writer_start(&w, err, sizeof err), 0);
    trace t = {.n = 0};
    item items[50];
    for (int k = 0; k < 50; k++) {
        items[k] = (item){&t, k};
        assert_int_equal(rg_writer_submit(w, run, before, &items[k]), 0);
    }
    rg_writer_stop(w);   /* runs all fifty */
    assert_int_equal(t.n, 50);
    for (int k = 0; k < 50; k++) assert_int_equal(t.order[k], k);
    item late = {&t, 50};
    assert_int_equal(rg_writer_submit(w, run, before, &late), -1);   /* stopped: refused, nothing called */
    assert_int_equal(t.before_seen[50], 0);
    assert_int_equal(t.n, 50);
    rg_writer_free(w);
    assert_int_equal(rg_writer_submit(NULL, run, NULL, &late), -1);
    rg_writer_stop(NULL);
    rg_writer_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_order_and_stop)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
