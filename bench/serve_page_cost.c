/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve_page_cost.c -- the CPU time of uncached run pages, through the
 * server's router but without HTTP, for the index's load benchmark
 * (bench/serve_load.sh). Not part of ropegrad.
 *
 *   serve_page_cost DB N         renders /runs/ID for N distinct ids of DB
 *   serve_page_cost DB N PATH    renders PATH (e.g. /problems/DEF) N times
 *
 * Prints one line: pages, CPU microseconds per page (this thread's CPU
 * time: what a page costs, whatever else the machine is doing) and wall
 * microseconds per page. The server here caches nothing (a cache of one
 * byte), so every answer is rendered.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve.h"

static double seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* The largest run id of g (ids are 1..max in a registry that serve_fill made). */
static long max_run_id(rg_server *s)
{
    rg_request q = {.method = "GET", .path = "/api/problems"};
    rg_response r;
    rg_serve_route(s, &q, &r);
    long n = 0;
    const char *p = r.status == 200 && r.body ? strstr(r.body, "\"runs\":") : NULL;
    if (p) n = strtol(p + 7, NULL, 10);
    free(r.body);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: serve_page_cost DB N [PATH]\n");
        return 2;
    }
    long want = strtol(argv[2], NULL, 10);
    char err[1024];
    rg_serve_options o = {.db_path = argv[1], .listen = "127.0.0.1:0", .cache_bytes = 1};
    rg_server *s;
    if (want <= 0 || rg_serve_create(&o, &s, err, sizeof err)) {
        fprintf(stderr, "serve_page_cost: %s\n", want <= 0 ? "N must be positive" : err);
        return 2;
    }
    long runs = max_run_id(s);
    if (runs <= 0) {
        fprintf(stderr, "serve_page_cost: no runs in %s\n", argv[1]);
        rg_serve_destroy(s);
        return 2;
    }
    if (argc == 3 && want > runs) want = runs;
    long stride = 7919 % runs ? 7919 : 1;   /* a prime: distinct ids, spread over the registry */
    double c0 = seconds(CLOCK_THREAD_CPUTIME_ID), w0 = seconds(CLOCK_MONOTONIC);
    long bad = 0;
    for (long i = 0; i < want; i++) {
        char path[300];
        if (argc == 4) snprintf(path, sizeof path, "%.280s", argv[3]);
        else snprintf(path, sizeof path, "/runs/%ld", 1 + (i * stride) % runs);
        rg_request q = {.method = "GET", .path = path};
        rg_response r;
        rg_serve_route(s, &q, &r);
        bad += r.status != 200;
        free(r.body);
    }
    double cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - c0, wall = seconds(CLOCK_MONOTONIC) - w0;
    rg_serve_destroy(s);
    printf("pages %ld, cpu %.0f us/page, wall %.0f us/page, not 200: %ld\n", want, cpu / want * 1e6,
           wall / want * 1e6, bad);
    return bad ? 1 : 0;
}
