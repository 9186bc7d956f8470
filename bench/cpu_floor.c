/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_floor.c -- the CPU memory floor of an op, beside the op's CPU path, in
 * one process. Not part of ropegrad (bench/cpu_floor.sh runs it).
 *
 *   cpu_floor --suite DIR [--threads N] [--iterations N] [--warmup N]
 *             [--workloads LIST] [--seed N] [--output FILE|-]
 *
 * For every selected workload of the suite (loaded by the harness's suite
 * reader), on the inputs the op table's generator makes (the same seed as
 * `ropegrad bench`):
 *
 *   floor     kernels that move exactly the op's bytes (checked against the op
 *             table's bytes()) and compute nothing: every input byte the op
 *             must read is loaded and folded into one word per thread (kept
 *             live through a volatile sink), every output byte is written.
 *               011: position_ids (8 B/row) + inv_freq (256 B) read,
 *                    cos_sin (512 B/row) written
 *               012: freqs (256 B/row) read, cos and sin (2 x 256 B/row) written
 *               014: grad_cos, grad_sin (D x elt B/row), emb's first half
 *                    (256 B of every 512 B row), inv_freq (256 B/batch)
 *                    read, 4 B/row written
 *             in three patterns, each on the run's threads (OpenMP, one
 *             contiguous run of rows per thread) and on one thread:
 *               store     row by row: the row's reads, then plain stores
 *               nt-store  row by row: the row's reads, then non-temporal
 *                         (streaming) stores, movntdq / movnti (SSE2)
 *               memset    each input swept on its own, then memset() of the
 *                         thread's part of each output
 *             "best floor" is the fastest of them (see FL_MAX_VARIANTS).
 *   ropegrad  the op's CPU path, through rg_run_suite: the public API
 *             (ropegrad_<op>_cpu), checked against the float64 reference,
 *             then timed; and once more called back to back with no cache
 *             flush ("no flush": not the protocol, what the flush costs it).
 *
 * Everything is timed the harness's way, by the harness's code
 * (rg_cpu_timer_run: the 2x-LLC cache flush before every call, wall clock,
 * warmup + iterations, median), with the same thread count. The result is a
 * Markdown file (written atomically) with the machine, the load average before
 * and after, and one table row per workload plus geomeans.
 *
 * Exit status: 0 done, 1 a workload failed its check or a run error, 2 bad
 * usage or input (one line on stderr).
 */
#define _GNU_SOURCE   /* getopt_long */

#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "harness.h"
#include "options.h"
#include "rg_util.h"

/* ---- the floor kernels ------------------------------------------------------------------ */

#define FL_MAX_READ 3
#define FL_MAX_WRITE 2

typedef struct fl_read {
    const unsigned char *p;
    size_t row_bytes, stride;      /* row r is [p + r*stride, + row_bytes) */
} fl_read;

typedef struct fl_write {
    unsigned char *p;
    size_t row_bytes;              /* rows back to back */
} fl_write;

typedef struct fl_plan {
    int64_t rows;
    int n_read, n_write;
    fl_read read[FL_MAX_READ];
    fl_write write[FL_MAX_WRITE];
    const unsigned char *once;     /* read once, by the first thread (inv_freq) */
    size_t once_bytes;
    double bytes;                  /* everything read and written */
} fl_plan;

enum { P_STORE, P_NT, P_MEMSET, N_PATTERNS };
static const char *const pattern_name[N_PATTERNS] = {"store", "nt-store", "memset"};

static volatile uint64_t fl_sink;

/* The bytes, folded (8-byte words: every row size here is a multiple of 8). */
static uint64_t fold(const unsigned char *p, size_t n)
{
    uint64_t a = 0, b = 0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        uint64_t x, y;
        memcpy(&x, p + i, 8);
        memcpy(&y, p + i + 8, 8);
        a ^= x;
        b ^= y;
    }
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        a ^= x;
    }
    return a ^ b;
}

static void store_plain(unsigned char *p, size_t n, uint64_t v)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) memcpy(p + i, &v, 8);
    for (; i < n; i++) p[i] = (unsigned char)v;
}

static void store_nt(unsigned char *p, size_t n, uint64_t v)
{
#if defined(__SSE2__)
    size_t i = 0;
    if ((uintptr_t)p % 16 == 0) {
        const __m128i x = _mm_set1_epi64x((long long)v);
        for (; i + 16 <= n; i += 16) _mm_stream_si128((__m128i *)(void *)(p + i), x);
    }
    if ((uintptr_t)(p + i) % 4 == 0)
        for (; i + 4 <= n; i += 4) _mm_stream_si32((int *)(void *)(p + i), (int)(uint32_t)v);
    for (; i < n; i++) p[i] = (unsigned char)v;
#else
    store_plain(p, n, v);
#endif
}

static void thread_rows(const fl_plan *pl, int pattern, int64_t r0, int64_t r1, uint64_t acc)
{
    if (pattern == P_MEMSET) {
        for (int k = 0; k < pl->n_read; k++)
            for (int64_t r = r0; r < r1; r++) acc ^= fold(pl->read[k].p + (size_t)r * pl->read[k].stride, pl->read[k].row_bytes);
        for (int k = 0; k < pl->n_write; k++)
            memset(pl->write[k].p + (size_t)r0 * pl->write[k].row_bytes, (int)(acc & 0x7f),
                   (size_t)(r1 - r0) * pl->write[k].row_bytes);
    } else {
        for (int64_t r = r0; r < r1; r++) {
            uint64_t x = acc;
            for (int k = 0; k < pl->n_read; k++)
                x ^= fold(pl->read[k].p + (size_t)r * pl->read[k].stride, pl->read[k].row_bytes);
            for (int k = 0; k < pl->n_write; k++) {
                unsigned char *o = pl->write[k].p + (size_t)r * pl->write[k].row_bytes;
                if (pattern == P_NT)
                    store_nt(o, pl->write[k].row_bytes, x);
                else
                    store_plain(o, pl->write[k].row_bytes, x);
            }
            acc += x;
        }
#if defined(__SSE2__)
        if (pattern == P_NT) _mm_sfence();
#endif
    }
    fl_sink ^= acc;
}

typedef struct fl_call {
    const fl_plan *plan;
    int pattern, threads;
} fl_call;

static int fl_run(void *ctx)
{
    const fl_call *c = ctx;
    const fl_plan *pl = c->plan;
    const int64_t nt = c->threads < pl->rows ? c->threads : pl->rows;
    if (nt <= 1) {
        thread_rows(pl, c->pattern, 0, pl->rows, pl->once ? fold(pl->once, pl->once_bytes) : 0);
        return 0;
    }
#pragma omp parallel num_threads((int)nt)
    {
        const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
        const uint64_t acc = t == 0 && pl->once ? fold(pl->once, pl->once_bytes) : 0;
        thread_rows(pl, c->pattern, pl->rows * t / n, pl->rows * (t + 1) / n, acc);
    }
    return 0;
}

/* The bytes each op must move, as the op table's rows lay out their tensors
 * (src/harness/op_*.c); checked against the row's bytes(). */
static int make_plan(const rg_op *op, const rg_workload *w, ropegrad_dtype dt, const rg_tensors *in, void *out,
                     fl_plan *pl, char *err, size_t errlen)
{
    memset(pl, 0, sizeof *pl);
    const int64_t rows = in->batch_size * in->seq_len, D = in->head_dim;
    pl->rows = rows;
    if (!strcmp(op->id, "011") && in->n_in == 2) {
        pl->n_read = 1;
        pl->read[0] = (fl_read){in->in[0], 8, 8};
        pl->once = in->in[1];
        pl->once_bytes = in->in_bytes[1];
        pl->n_write = 1;
        pl->write[0] = (fl_write){out, (size_t)D * 2 * 2};
    } else if (!strcmp(op->id, "012") && in->n_in == 1) {
        pl->n_read = 1;
        pl->read[0] = (fl_read){in->in[0], (size_t)D / 2 * 4, (size_t)D / 2 * 4};
        pl->n_write = 2;
        pl->write[0] = (fl_write){out, (size_t)D * 2};
        pl->write[1] = (fl_write){(unsigned char *)out + (size_t)(rows * D) * 2, (size_t)D * 2};
    } else if (!strcmp(op->id, "014") && in->n_in == 4) {
        const size_t esz = ropegrad_dtype_size(in->dtype);
        pl->n_read = 3;
        pl->read[0] = (fl_read){in->in[0], (size_t)D * esz, (size_t)D * esz};
        pl->read[1] = (fl_read){in->in[1], (size_t)D * esz, (size_t)D * esz};
        pl->read[2] = (fl_read){in->in[2], (size_t)D / 2 * 4, (size_t)D * 4};   /* emb's first half */
        pl->once = in->in[3];
        pl->once_bytes = in->in_bytes[3];
        pl->n_write = 1;
        pl->write[0] = (fl_write){out, 4};
    } else {
        snprintf(err, errlen, "op %s: no floor plan for its tensors", op->id);
        return 1;
    }
    double b = (double)pl->once_bytes;
    for (int k = 0; k < pl->n_read; k++) b += (double)rows * (double)pl->read[k].row_bytes;
    for (int k = 0; k < pl->n_write; k++) b += (double)rows * (double)pl->write[k].row_bytes;
    pl->bytes = b;
    const double want = op->bytes(w, dt);
    if (fabs(b - want) > 0.5) {
        snprintf(err, errlen, "op %s workload %d: the floor moves %.0f bytes, the op table says %.0f", op->id,
                 w->index, b, want);
        return 1;
    }
    return 0;
}

/* ---- one workload --------------------------------------------------------------------------- */

/* Each pattern on the run's threads and, when that is more than one, on one
 * thread: waking a second thread costs a scheduling round on a busy machine
 * (milliseconds when another process holds the core), which the op's CPU path
 * itself avoids on small problems by running them on the calling thread. The
 * floor is the fastest way found to move the bytes with at most N threads. */
#define FL_MAX_VARIANTS (2 * N_PATTERNS)

typedef struct fl_row {
    int index;
    int64_t B, S;
    double mb;
    double floor_us[FL_MAX_VARIANTS];
    double best_us, ropegrad_us, warm_us;
} fl_row;

static double median_us(const double *samples, int n)
{
    rg_time_stats st;
    rg_time_stats_compute(samples, n, &st);
    return st.median / 1e3;
}

static int n_variants(int threads) { return threads > 1 ? 2 * N_PATTERNS : N_PATTERNS; }

static int time_floors(const rg_suite *s, const rg_workload *w, const rg_run_options *o, int threads,
                       rg_cpu_timer *timer, double *samples, fl_row *row, char *err, size_t errlen)
{
    rg_tensors in;
    if (s->op->make(w, s->grad_dtype, (int)o->inputs, o->seed, &in, err, errlen)) return 1;
    void *out = rg_alloc64(in.out_bytes);
    fl_plan pl;
    int rc = 0;
    if (!out) {
        snprintf(err, errlen, "workload %d: out of memory", w->index);
        rc = 1;
    } else {
        memset(out, 0, in.out_bytes);   /* fault the pages in, outside the timing (as the harness does) */
        rc = make_plan(s->op, w, s->grad_dtype, &in, out, &pl, err, errlen);
    }
    for (int v = 0; !rc && v < n_variants(threads); v++) {
        fl_call c = {&pl, v % N_PATTERNS, v < N_PATTERNS ? threads : 1};
        if (rg_cpu_timer_run(timer, o->warmup, o->iterations, fl_run, &c, samples)) {
            snprintf(err, errlen, "workload %d: the %s floor did not run", w->index, pattern_name[v % N_PATTERNS]);
            rc = 1;
        } else {
            row->floor_us[v] = median_us(samples, o->iterations);
            if (v == 0 || row->floor_us[v] < row->best_us) row->best_us = row->floor_us[v];
        }
    }
    if (!rc) row->mb = pl.bytes / 1e6;
    free(out);
    rg_tensors_free(&in);
    return rc;
}

/* The op's CPU path on the same workload, the way `ropegrad bench --backend cpu` runs it. */
static int time_op(const rg_suite *s, int index, const rg_run_options *o, fl_row *row, rg_run_result *first,
                   char *err, size_t errlen)
{
    rg_run_result r;
    if (rg_run_suite(s, &index, 1, o, &r, err, errlen)) return 1;
    const rg_workload_result *wr = &r.workloads[0];
    int rc = 0;
    if (!wr->check.pass || !wr->timed) {
        snprintf(err, errlen, "workload %d: the op's CPU path failed its check: %s", index, wr->check.reason);
        rc = 1;
    } else {
        row->ropegrad_us = wr->time_ns.median / 1e3;
    }
    if (!first->workloads && !rc) {
        *first = r;   /* keeps the header (device, path, cold cache) */
        return 0;
    }
    rg_run_result_free(&r);
    return rc;
}

/* The op's CPU path again on the same inputs, with no cache flush between calls
 * (rg_cpu_timer_run_warm; not the protocol: what the flush costs the op). The
 * same calls and threads as time_op, the median. */
static int time_warm(const rg_suite *s, const rg_workload *w, const rg_run_options *o, double *samples, fl_row *row,
                     char *err, size_t errlen)
{
    rg_tensors in;
    if (s->op->make(w, s->grad_dtype, (int)o->inputs, o->seed, &in, err, errlen)) return 1;
    rg_cpu_call c = {s->op, &in, rg_alloc64(in.out_bytes), o->threads};
    int rc = 0;
    if (!c.out) {
        snprintf(err, errlen, "workload %d: out of memory", w->index);
        rc = 1;
    } else if ((rc = rg_cpu_timer_run_warm(o->warmup, o->iterations, rg_cpu_call_run, &c, samples)) != 0) {
        snprintf(err, errlen, "workload %d: the op's CPU path: %s", w->index, ropegrad_strerror(rc));
        rc = 1;
    } else {
        row->warm_us = median_us(samples, o->iterations);
    }
    free(c.out);
    rg_tensors_free(&in);
    return rc;
}

/* ---- the report --------------------------------------------------------------------------------- */

static double geomean(const fl_row *rows, size_t n, size_t off)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += log(*(const double *)((const char *)&rows[i] + off));
    return exp(s / (double)n);
}

static char *report(const rg_suite *s, const rg_run_result *r, const fl_row *rows, size_t n, int argc, char **argv,
                    const char *started, double load0, double load1, int cpus, int threads, char *err, size_t errlen)
{
    rg_buf b = {0};
    rg_buf_printf(&b, "# CPU memory floor: %s\n\n", s->name);
    rg_buf_puts(&b, "Command:");
    for (int i = 0; i < argc; i++) rg_buf_printf(&b, " %s", argv[i]);
    rg_buf_printf(&b, "\n\nStarted %s on %s; ropegrad's CPU path %s (%s); %d threads for every kernel; "
                      "cold cache: %s; %d warmup + %d timed calls per kernel, median (the harness's CPU timer, "
                      "rg_cpu_timer_run); inputs %s, seed %llu.\n\n",
                  started, r->device, r->kernel_name, r->env.ropegrad_version, threads, r->cold_l2, r->warmup,
                  r->iterations, r->inputs, (unsigned long long)r->seed);
    if (load0 >= 0 && load1 >= 0)
        rg_buf_printf(&b, "Load average (1 min) before: %.2f (as this process started: %s), after: %.2f (this run's "
                          "own threads included), on %d CPUs.\n\n",
                      load0, load0 >= 0.5 * cpus ? "busy, half the CPUs or more, so these times are noisy"
                                                 : "quiet, under half the CPUs", load1, cpus);
    else
        rg_buf_puts(&b, "Load average: unknown.\n\n");
    rg_buf_puts(&b, "Floor kernels move exactly the op's bytes (the op table's bytes()) and compute nothing: "
                    "store = row by row, plain stores; nt-store = row by row, non-temporal stores; memset = each "
                    "input swept in turn, then memset of the output; each on the run's threads and (\"1t\") on one "
                    "thread. Best floor = the fastest. \"no flush\" = the op's CPU path called back to back on "
                    "the same inputs without the cache flush (not the protocol: the difference to the next-but-one "
                    "column is what the cold cache costs it). Times in us.\n\n");
    const int nv = n_variants(threads);
    rg_buf_puts(&b, "| # | B | S | MB moved |");
    for (int v = 0; v < nv; v++) rg_buf_printf(&b, " %s%s |", pattern_name[v % N_PATTERNS], v < N_PATTERNS ? "" : " 1t");
    rg_buf_puts(&b, " ropegrad cpu, no flush | best floor | ropegrad cpu | ratio |\n|---|---|---|---|");
    for (int v = 0; v < nv; v++) rg_buf_puts(&b, "---|");
    rg_buf_puts(&b, "---|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        const fl_row *x = &rows[i];
        rg_buf_printf(&b, "| %d | %lld | %lld | %.3f |", x->index, (long long)x->B, (long long)x->S, x->mb);
        for (int v = 0; v < nv; v++) rg_buf_printf(&b, " %.2f |", x->floor_us[v]);
        rg_buf_printf(&b, " %.2f | %.2f | %.2f | %.3f |\n", x->warm_us, x->best_us, x->ropegrad_us,
                      x->ropegrad_us / x->best_us);
    }
    rg_buf_printf(&b, "| geomean | | | %.3f |", geomean(rows, n, offsetof(fl_row, mb)));
    for (int v = 0; v < nv; v++)
        rg_buf_printf(&b, " %.2f |", geomean(rows, n, offsetof(fl_row, floor_us) + (size_t)v * sizeof(double)));
    rg_buf_printf(&b, " %.2f |", geomean(rows, n, offsetof(fl_row, warm_us)));
    const double gb = geomean(rows, n, offsetof(fl_row, best_us)), gr = geomean(rows, n, offsetof(fl_row, ropegrad_us));
    rg_buf_printf(&b, " %.2f | %.2f | %.3f |\n", gb, gr, gr / gb);
    return rg_buf_finish(&b, err, errlen);
}

/* ---- main ------------------------------------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f, "usage: cpu_floor --suite DIR [options]\n\n"
               "Times kernels that only move an op's bytes (its CPU memory floor) beside the op's CPU path,\n"
               "under the harness's CPU protocol, and writes a Markdown table.\n\n"
               "  --suite DIR        suite folder (suites/011-rope_forward, -012 or -014)\n"
               "  --threads N        threads for every kernel (default 0 = all cores)\n"
               "  --iterations N     timed calls per kernel (default 50)\n"
               "  --warmup N         warmup calls per kernel (default 10)\n"
               "  --workloads LIST   workload indices and ranges, e.g. 0-3,14 (default: all)\n"
               "  --seed N           input seed (default 200, as ropegrad bench)\n"
               "  --output FILE      the Markdown report (default '-': standard output)\n"
               "  --help             this text\n\n"
               "exit status: 0 done, 1 a workload failed or a run error, 2 bad usage or input\n");
}

enum { OPT_SUITE = 1000, OPT_THREADS, OPT_ITERATIONS, OPT_WARMUP, OPT_WORKLOADS, OPT_SEED, OPT_OUTPUT, OPT_HELP };

int main(int argc, char **argv)
{
    static const struct option longopts[] = {   /* in the order of the OPT_ enum (messages name them by it) */
        {"suite", required_argument, NULL, OPT_SUITE},
        {"threads", required_argument, NULL, OPT_THREADS},
        {"iterations", required_argument, NULL, OPT_ITERATIONS},
        {"warmup", required_argument, NULL, OPT_WARMUP},
        {"workloads", required_argument, NULL, OPT_WORKLOADS},
        {"seed", required_argument, NULL, OPT_SEED},
        {"output", required_argument, NULL, OPT_OUTPUT},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    rg_run_options o;
    rg_run_options_default(&o);
    o.backend = "cpu";
    o.verbose = 0;
    const char *suite_dir = NULL, *output = "-";
    int *indices = NULL;
    size_t n_indices = 0;
    char err[RG_ERRLEN];
    long long v;
    int c, code = 2;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        const char *name = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
        switch (c) {
        case OPT_SUITE: suite_dir = optarg; break;
        case OPT_OUTPUT: output = optarg; break;
        case OPT_THREADS:
        case OPT_ITERATIONS:
        case OPT_WARMUP:
        case OPT_SEED: {
            const long long lo = c == OPT_ITERATIONS ? 1 : 0;
            const long long hi = c == OPT_THREADS ? 4096 : c == OPT_SEED ? 9007199254740992ll : 1000000;
            if (rg_cli_parse_ll(optarg, lo, hi, &v)) {
                fprintf(stderr, "cpu_floor: --%s: '%s' is not an integer in %lld..%lld\n",
                        longopts[c - OPT_SUITE].name, optarg, lo, hi);
                goto out;
            }
            if (c == OPT_THREADS) o.threads = (int)v;
            else if (c == OPT_ITERATIONS) o.iterations = (int)v;
            else if (c == OPT_WARMUP) o.warmup = (int)v;
            else o.seed = (uint64_t)v;
            break;
        }
        case OPT_WORKLOADS:
            free(indices);
            indices = NULL;
            if (rg_cli_parse_ranges("--workloads", optarg, &indices, &n_indices, err, sizeof err)) {
                fprintf(stderr, "cpu_floor: %s\n", err);
                goto out;
            }
            break;
        case OPT_HELP:
            usage(stdout);
            code = 0;
            goto out;
        case ':': fprintf(stderr, "cpu_floor: option '%s' needs a value\n", name); goto out;
        default: fprintf(stderr, "cpu_floor: unknown option '%s' (try cpu_floor --help)\n", name); goto out;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cpu_floor: unexpected argument '%s' (try cpu_floor --help)\n", argv[optind]);
        goto out;
    }
    if (!suite_dir) {
        fprintf(stderr, "cpu_floor: --suite DIR is required (try cpu_floor --help)\n");
        goto out;
    }
    if (!rg_cli_is_stdout(output) && rg_cli_check_output_path("--output", output, err, sizeof err)) {
        fprintf(stderr, "cpu_floor: %s\n", err);
        goto out;
    }
    rg_suite s;
    if (rg_suite_load(suite_dir, &s, err, sizeof err)) {
        fprintf(stderr, "cpu_floor: %s\n", err);
        goto out;
    }
    for (size_t i = 0; i < n_indices; i++)
        if (indices[i] < 0 || (size_t)indices[i] >= s.n_workloads) {
            fprintf(stderr, "cpu_floor: --workloads: no workload %d (the suite has 0..%zu)\n", indices[i],
                    s.n_workloads - 1);
            rg_suite_free(&s);
            goto out;
        }
    const size_t n = n_indices ? n_indices : s.n_workloads;
    const int threads = o.threads > 0 ? o.threads : omp_get_num_procs();
    o.threads = threads;
    fl_row *rows = calloc(n, sizeof *rows);
    double *samples = malloc((size_t)o.iterations * sizeof *samples);
    rg_cpu_timer timer = {NULL, 0, ""};
    rg_run_result first;
    memset(&first, 0, sizeof first);
    code = 1;
    if (!rows || !samples) {
        snprintf(err, sizeof err, "out of memory");
        goto done;
    }
    double load0 = -1, load1 = -1;
    int cpus = 0, busy = 0;
    rg_cli_load(&load0, &cpus, &busy);
    char started[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(started, sizeof started, "%Y-%m-%d %H:%M UTC", &tm);
    if (rg_cpu_timer_open(&timer, err, sizeof err)) goto done;
    for (size_t k = 0; k < n; k++) {
        const int idx = n_indices ? indices[k] : (int)k;
        const rg_workload *w = &s.workloads[idx];
        fl_row *row = &rows[k];
        row->index = w->index;
        row->B = w->batch_size;
        row->S = w->seq_len;
        if (time_floors(&s, w, &o, threads, &timer, samples, row, err, sizeof err)) goto done;
        if (time_op(&s, idx, &o, row, &first, err, sizeof err)) goto done;
        if (time_warm(&s, w, &o, samples, row, err, sizeof err)) goto done;
        fprintf(stderr, "cpu_floor: %s workload %d: best floor %.2f us, ropegrad %.2f us (%.2f us with no flush)\n",
                s.op->id, w->index, row->best_us, row->ropegrad_us, row->warm_us);
    }
    rg_cli_load(&load1, &cpus, &busy);
    char *text = report(&s, &first, rows, n, argc, argv, started, load0, load1, cpus, threads, err, sizeof err);
    if (!text) goto done;
    code = rg_cli_write_output(output, text, strlen(text), err, sizeof err) ? 2 : 0;
    free(text);
done:
    if (code) fprintf(stderr, "cpu_floor: %s\n", err);
    rg_cpu_timer_close(&timer);
    if (first.workloads) rg_run_result_free(&first);
    free(samples);
    free(rows);
    rg_suite_free(&s);
out:
    free(indices);
    return code;
}
