/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_dev.c -- where the forward ops' CPU path spends its time: the figures
 * behind dev/rope_forward/NOTES.md, "The CPU path's sin/cos".
 *
 *   1. sin/cos per value in a 011-like row loop (64 frequencies, positions
 *      0 .. rows-1, the rounding test, the bf16 pack, the row's two stores),
 *      warm, one thread: SLEEF's 3.5-ulp and 1-ulp vector sincos against the
 *      kernels' core (cpu_core_avx512.h); ns a value;
 *   2. omp_get_num_procs() and a one-row 011 call right after a cache flush
 *      (what the protocol does before every call), one thread;
 *   3. the 011 op (ropegrad_rope_forward_cpu, 2 threads) on a few of the
 *      suite's shapes, warm and after the flush.
 * Medians of --reps runs (default 15). The flush writes --flush-mib MiB
 * (default 640: twice this dev VM's LLC) and reads one byte per line.
 *
 *   build/dev/common/cpu_dev > results/dev/cpu-dev-2026-12-01.txt */
#define _POSIX_C_SOURCE 200809L   /* clock_gettime under -std=c11 */
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_kernels.h"
#include "ropegrad.h"

/* Part 1, in cpu_dev_avx512.c (built with -mavx512f -mfma, called only on a
 * CPU that has them): 0 when it ran, 1 when it was not built. */
int cpu_dev_per_value(int reps, double (*now_us)(void), double (*median)(double *, int));

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static char *g_junk;
static size_t g_junk_bytes;
static volatile unsigned g_sink;

static void flush(int it)
{
    memset(g_junk, it & 0xff, g_junk_bytes);
    unsigned a = 0;
    for (size_t i = 0; i < g_junk_bytes; i += 64) a += (unsigned char)g_junk[i];
    g_sink += a;
}


static int64_t *positions(int64_t rows, int64_t S)
{
    int64_t *p = malloc((size_t)rows * sizeof *p);
    if (!p) {
        fprintf(stderr, "cpu_dev: out of memory\n");
        exit(2);
    }
    for (int64_t r = 0; r < rows; r++) p[r] = r % S;
    return p;
}

int main(int argc, char **argv)
{
    int reps = 15;
    long flush_mib = 640;
    static const struct option opts[] = {{"reps", required_argument, NULL, 'r'},
                                         {"flush-mib", required_argument, NULL, 'f'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int o;
    while ((o = getopt_long(argc, argv, "r:f:h", opts, NULL)) != -1) {
        char *end = NULL;
        long v = optarg ? strtol(optarg, &end, 10) : 0;
        if (o == 'r' && *end == '\0' && v >= 1 && v <= 64) reps = (int)v;
        else if (o == 'f' && *end == '\0' && v >= 1 && v <= 4096) flush_mib = v;
        else {
            fprintf(stderr, "usage: cpu_dev [--reps 1..64] [--flush-mib 1..4096]\n");
            return o == 'h' ? 0 : 2;
        }
    }
    g_junk_bytes = (size_t)flush_mib << 20;
    g_junk = malloc(g_junk_bytes);
    if (!g_junk) {
        fprintf(stderr, "cpu_dev: out of memory for the %ld MiB flush\n", flush_mib);
        return 2;
    }
    memset(g_junk, 1, g_junk_bytes);
    printf("cpu_dev: CPU path %s, %d processors, %d runs each (median), flush %ld MiB\n", ropegrad_cpu_isa(),
           omp_get_num_procs(), reps, flush_mib);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("fma"))
        printf("1. skipped: this CPU has no AVX-512\n");
    else if (cpu_dev_per_value(reps, now_us, median))
        printf("1. skipped: built without AVX-512\n");
#else
    printf("1. skipped: not x86-64\n");
#endif

    double t[64];
    int n = 0;
    for (int k = 0; k < reps + 2; k++) {
        flush(k);
        const double t0 = now_us();
        n += omp_get_num_procs();
        if (k >= 2) t[k - 2] = now_us() - t0;
    }
    printf("2. after the flush, 1 thread: omp_get_num_procs() %.1f us", median(t, reps));
    float inv[64];
    for (int j = 0; j < 64; j++) inv[j] = powf(500000.0f, -(float)j / 64.0f);
    int64_t *p1 = positions(1, 1);
    uint16_t out1[512];
    ropegrad_rope_forward_problem one = {1, 1, 128, p1, inv, 1.0f, out1};
    for (int k = 0; k < reps + 2; k++) {
        flush(k);
        const double t0 = now_us();
        if (ropegrad_rope_forward_cpu(&one, 1)) return 1;
        if (k >= 2) t[k - 2] = now_us() - t0;
    }
    printf("; a one-row 011 call %.1f us\n", median(t, reps));

    static const int shapes[][2] = {{1, 256}, {16, 256}, {16, 919}, {64, 541}};
    printf("3. the 011 op, 2 threads (ropegrad_rope_forward_cpu), median us\n");
    printf("   B x S        warm    after the flush\n");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int64_t B = shapes[s][0], S = shapes[s][1], rows = B * S;
        int64_t *pos = positions(rows, S);
        uint16_t *out = aligned_alloc(64, (size_t)rows * 512);
        if (!out) return 2;
        ropegrad_rope_forward_problem pr = {B, S, 128, pos, inv, 1.0f, out};
        double warm[64], cold[64];
        for (int k = 0; k < reps + 2; k++) {
            double t0 = now_us();
            if (ropegrad_rope_forward_cpu(&pr, 2)) return 1;
            if (k >= 2) warm[k - 2] = now_us() - t0;
            flush(k);
            t0 = now_us();
            if (ropegrad_rope_forward_cpu(&pr, 2)) return 1;
            if (k >= 2) cold[k - 2] = now_us() - t0;
        }
        printf("   %3lld x %-5lld %8.1f %10.1f\n", (long long)B, (long long)S, median(warm, reps), median(cold, reps));
        free(out);
        free(pos);
    }
    free(p1);
    free(g_junk);
    return n < 0;
}
