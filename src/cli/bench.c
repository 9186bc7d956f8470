/* SPDX-License-Identifier: Apache-2.0 */
/* bench.c -- `ropegrad bench` and `ropegrad check`: parse, run the protocol, print.
 *
 * Exit codes: 0 every workload passed; 1 a workload failed its check;
 * 2 bad usage or bad input (one line on stderr naming the option, file or
 * field). Nothing is run before every option has been checked, and --json
 * is checked for a writable directory first, so a long run never ends in an
 * unwritable-output error it could have reported at once. */
#define _GNU_SOURCE   /* getopt_long, readlink */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cliopt.h"
#include "commands.h"
#include "harness.h"
#include "record.h"
#include "bench_impl.h"
#include "rg_term.h"

#define RG_DEFAULT_SUITE "suites/014-rope_backward"
#define RG_MAX_SEED 9007199254740992ull   /* 2^53: seeds are stored as JSON numbers */

enum {
    OPT_ROUNDS = 900, OPT_GROUND_TRUTH, OPT_RESTAGE, OPT_SPAN, OPT_SYNC, OPT_SETTLE,
    OPT_SUITE = 1000, OPT_BACKEND, OPT_KERNEL, OPT_WORKLOADS, OPT_ITERATIONS, OPT_WARMUP, OPT_SEED,
    OPT_THREADS, OPT_INPUTS, OPT_JSON, OPT_RECORD, OPT_DB, OPT_MANIFEST, OPT_BASELINE, OPT_SIGN, OPT_HELP,
    OPT_LIST, OPT_PROGRESS, OPT_QUIET, OPT_FORMAT,
    OPT_IMPL, OPT_IMPL_SOURCE, OPT_TIMEOUT,  /* bench_impl.c */
    OPT_WORKER_CHANNEL, OPT_WORKER_WATCH     /* bench_worker.c: the supervised worker's fds (not in --help) */
};

static void usage(FILE *f, const char *cmd, int timed)
{
    fprintf(f, "usage: ropegrad %s [options]\n\n", cmd);
    fprintf(f, "%s", timed ? "Checks every workload over --rounds rounds of fresh inputs against its ground truth,\n"
                             "then times it under the SOL-ExecBench protocol (cold L2 before every iteration; on\n"
                             "cuda also --restage, --span, --sync and --settle, each as the official evaluator by\n"
                             "default).\n\n"
                           : "Checks every workload over --rounds rounds of fresh inputs against its ground truth\n"
                             "(no timing).\n\n");
    fprintf(f, "  --suite DIR           suite folder (default: the bundled %s)\n", RG_DEFAULT_SUITE);
    fprintf(f, "  --backend B           auto (CUDA when a GPU is usable, else CPU), cpu or cuda (default auto)\n");
    fprintf(f, "  --kernel N            CUDA kernel version: 0 = default (012 ships two: 1 = fast)\n");
    fprintf(f, "  --workloads LIST      workload indices and ranges, e.g. 0-3,14 (default: all)\n");
    fprintf(f, "  --list                list the suite's workloads (index, shape, uuid) and exit\n");
    if (timed) {
        fprintf(f, "  --iterations N        timed iterations per workload (default 50)\n");
        fprintf(f, "  --warmup N            warmup iterations per workload (default 10)\n");
        fprintf(f, "  --restage on|off      cuda: copy the inputs to an address 256 B further before every iteration,\n"
                   "                        outside the timed span (default on, as the official evaluator; off: the\n"
                   "                        same buffers every iteration)\n");
        fprintf(f, "  --span all|kernels    cuda: a sample spans every GPU activity the call issued, kernels, memcpy\n"
                   "                        and memset on any stream (default all, as the official evaluator), or its\n"
                   "                        kernels only\n");
        fprintf(f, "  --sync iteration|end  cuda: the host synchronizes after every timed iteration (default iteration,\n"
                   "                        as the official evaluator), or once after all of them\n");
        fprintf(f, "  --settle on|off       cuda: on waits for the cold-L2 flush to finish before every call, so each\n"
                   "                        starts on an idle GPU, as the official evaluator's calls reach it (default);\n"
                   "                        off issues the call right behind the flush (cpu: no meaning, ignored)\n");
    }
    fprintf(f, "  --seed N              input generator seed (default 200)\n");
    fprintf(f, "  --rounds N            correctness rounds of fresh seeded inputs per workload, 1..1000 (default 10;\n"
               "                        each with the reward-hack checks, on both backends)\n");
    fprintf(f, "  --ground-truth G      float64 (default: ropegrad's accuracy yardstick) or float32-reference (the\n"
               "                        definition's reference in float32, as the official evaluator; 014, 012)\n");
    fprintf(f, "  --threads N           CPU backend threads, 0 = all cores (default 0)\n");
    fprintf(f, "  --inputs KIND         normal (the dataset's random inputs) or positions (real training inputs, scale 1)\n");
    fprintf(f, "  --json FILE           write the result as JSON (atomically; - for stdout, the table then goes to stderr)\n");
    fprintf(f, "  --format F            the results table: table (default), md, csv or json\n");
    fprintf(f, "  --progress            a line per workload on stderr, also when it is not a terminal\n");
    fprintf(f, "  --quiet               no progress or notes on stderr (warnings and errors only)\n");
    fprintf(f, "  --record              store the run in the local registry\n");
    fprintf(f, "  --db FILE             registry file (with --record; default $ROPEGRAD_DB, else\n"
               "                        $XDG_DATA_HOME/ropegrad/runs.db, else ~/.local/share/ropegrad/runs.db)\n");
    fprintf(f, "  --manifest FILE       write the run's manifest\n");
    fprintf(f, "  --baseline FILE       compare against a baseline manifest\n");
    fprintf(f, "  --sign KEY            sign the run digest with an Ed25519 key (ropegrad keygen)\n");
    fprintf(f, "  --impl PATH.so        measure a plugin (include/ropegrad_impl.h) instead of ropegrad's kernel\n");
    fprintf(f, "  --impl-source FILE    a source file of the plugin, hashed into its implementation digest (repeatable)\n");
    fprintf(f, "  --timeout S           with --impl: a call that runs longer than S seconds fails the run (default %d)\n",
            RG_IMPL_TIMEOUT_DEFAULT);
    fprintf(f, "  --help                this text\n\n");
    fprintf(f, "exit status: 0 all workloads pass, 1 a workload failed, 2 bad usage or input\n");
}

static int is_suite(const char *dir)
{
    char p[PATH_MAX + 256];
    snprintf(p, sizeof p, "%s/definition.json", dir);
    return access(p, R_OK) == 0;
}

/* The bundled suite: an install's share/ropegrad/suites beside bin/, the
 * source tree's suites/ when the executable is the one this build tree made
 * (build/ropegrad, also when the build tree is elsewhere), else under the
 * current folder. */
static void default_suite(char *dst, size_t n)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            static const char *const rel[] = {"/../share/ropegrad/" RG_DEFAULT_SUITE, "/../" RG_DEFAULT_SUITE,
                                              "/" RG_DEFAULT_SUITE};
            for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
                char cand[PATH_MAX + 64];
                snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
                if (is_suite(cand)) {
                    snprintf(dst, n, "%s", cand);
                    return;
                }
            }
#if defined(RG_CLI_BUILD_DIR) && defined(RG_CLI_SOURCE_DIR)
            char built[PATH_MAX];
            if (realpath(RG_CLI_BUILD_DIR, built) && !strcmp(built, exe) &&
                is_suite(RG_CLI_SOURCE_DIR "/" RG_DEFAULT_SUITE)) {
                snprintf(dst, n, "%s", RG_CLI_SOURCE_DIR "/" RG_DEFAULT_SUITE);
                return;
            }
#endif
        }
    }
    snprintf(dst, n, "%s", RG_DEFAULT_SUITE);
}

void rg_cli_default_suite(char *dst, size_t n) { default_suite(dst, n); }

/* --baseline, checked before the suite runs: one that is not a readable
 * baseline manifest is one line and exit 2 now, not after the run (an empty
 * --db is refused while parsing: rg_cli_db_option). (`check --record` is
 * recorded as a run with nothing timed: correctness only.) 0, or 2. */
static int check_record_options(const char *cmd, const rg_record_options *ro)
{
    char err[RG_ERRLEN];
    rg_baseline b;
    if (ro->baseline_path && rg_baseline_load(ro->baseline_path, &b, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad %s: --baseline: %s\n", cmd, err);
        return 2;
    }
    if (ro->baseline_path) rg_baseline_free(&b);
    return 0;
}

/* What the command line asks for, gathered while parsing. */
typedef struct bench_args {
    const char *cmd;   /* "bench" or "check" */
    int timed;
    rg_run_options o;
    const char *suite_dir, *json, *format;
    int list;
    rg_cli_impl plugin;
    rg_record_options ro;
    int *indices;
    size_t n_indices;
} bench_args;

static const struct option longopts_all[] = {
    {"suite", required_argument, NULL, OPT_SUITE},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"kernel", required_argument, NULL, OPT_KERNEL},
    {"workloads", required_argument, NULL, OPT_WORKLOADS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"inputs", required_argument, NULL, OPT_INPUTS},
    {"json", required_argument, NULL, OPT_JSON},
    {"record", no_argument, NULL, OPT_RECORD},
    {"db", required_argument, NULL, OPT_DB},
    {"manifest", required_argument, NULL, OPT_MANIFEST},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"sign", required_argument, NULL, OPT_SIGN},
    {"help", no_argument, NULL, OPT_HELP},
    {"list", no_argument, NULL, OPT_LIST},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"impl", required_argument, NULL, OPT_IMPL},
    {"impl-source", required_argument, NULL, OPT_IMPL_SOURCE},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"worker-channel", required_argument, NULL, OPT_WORKER_CHANNEL},
    {"worker-watch", required_argument, NULL, OPT_WORKER_WATCH},
    {"rounds", required_argument, NULL, OPT_ROUNDS},
    {"ground-truth", required_argument, NULL, OPT_GROUND_TRUTH},
    {"iterations", required_argument, NULL, OPT_ITERATIONS},   /* bench only: these last (N_TIMING_OPTS) */
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"restage", required_argument, NULL, OPT_RESTAGE},
    {"span", required_argument, NULL, OPT_SPAN},
    {"sync", required_argument, NULL, OPT_SYNC},
    {"settle", required_argument, NULL, OPT_SETTLE},
    {NULL, 0, NULL, 0},
};
enum { N_OPTS = sizeof longopts_all / sizeof longopts_all[0], N_TIMING_OPTS = 6 };

/* --kernel, --iterations, --warmup, --seed, --rounds, --threads: an integer in range.
 * 0, or 2 with one line on stderr. */
static int set_number(bench_args *a, int c, const char *arg)
{
    const char *cmd = a->cmd;
    long long v;
    switch (c) {
    case OPT_KERNEL:
        if (rg_cli_parse_ll(arg, 0, 1000, &v)) {
            fprintf(stderr, "ropegrad %s: --kernel: '%s' is not a kernel number (0..1000)\n", cmd, arg);
            return 2;
        }
        a->o.kernel = (int)v;
        break;
    case OPT_ITERATIONS:
        if (rg_cli_parse_ll(arg, 1, 1000000, &v)) {
            fprintf(stderr, "ropegrad %s: --iterations: '%s' is not an integer in 1..1000000\n", cmd, arg);
            return 2;
        }
        a->o.iterations = (int)v;
        break;
    case OPT_WARMUP:
        if (rg_cli_parse_ll(arg, 0, 1000000, &v)) {
            fprintf(stderr, "ropegrad %s: --warmup: '%s' is not an integer in 0..1000000\n", cmd, arg);
            return 2;
        }
        a->o.warmup = (int)v;
        break;
    case OPT_SEED:
        if (rg_cli_parse_ll(arg, 0, (long long)RG_MAX_SEED, &v)) {
            fprintf(stderr, "ropegrad %s: --seed: '%s' is not an integer in 0..2^53\n", cmd, arg);
            return 2;
        }
        a->o.seed = (uint64_t)v;
        break;
    case OPT_ROUNDS:
        if (rg_cli_parse_ll(arg, 1, 1000, &v)) {
            fprintf(stderr, "ropegrad %s: --rounds: '%s' is not an integer in 1..1000\n", cmd, arg);
            return 2;
        }
        a->o.rounds = (int)v;
        break;
    default:   /* OPT_THREADS */
        if (rg_cli_parse_ll(arg, 0, 4096, &v)) {
            fprintf(stderr, "ropegrad %s: --threads: '%s' is not an integer in 0..4096\n", cmd, arg);
            return 2;
        }
        a->o.threads = (int)v;
        break;
    }
    return 0;
}

/* --restage, --span, --sync, --settle: the CUDA timing switches. 0, or 2 with one line on stderr. */
static int set_switch(bench_args *a, int c, const char *arg)
{
    static const struct {
        int opt;
        const char *name, *expected;
    } sw[] = {{OPT_RESTAGE, "restage", "on or off"},
              {OPT_SPAN, "span", "all or kernels"},
              {OPT_SYNC, "sync", "iteration or end"},
              {OPT_SETTLE, "settle", "off or on"}};
    int bad = c == OPT_RESTAGE ? rg_restage_parse(arg, &a->o.restage)
              : c == OPT_SPAN  ? rg_span_parse(arg, &a->o.span)
              : c == OPT_SYNC  ? rg_sync_parse(arg, &a->o.sync)
                               : rg_settle_parse(arg, &a->o.settle);
    if (!bad) return 0;
    size_t k = 0;
    while (sw[k].opt != c && k + 1 < sizeof sw / sizeof sw[0]) k++;
    fprintf(stderr, "ropegrad %s: --%s: unknown '%s' (expected %s)\n", a->cmd, sw[k].name, arg, sw[k].expected);
    return 2;
}

/* --backend, --inputs, --ground-truth, --format: one of a few words. 0, or 2 with one line on stderr. */
static int set_choice(bench_args *a, int c, const char *arg)
{
    const char *cmd = a->cmd;
    if (c == OPT_BACKEND) {
        if (strcmp(arg, "auto") && strcmp(arg, "cpu") && strcmp(arg, "cuda")) {
            fprintf(stderr, "ropegrad %s: --backend: unknown backend '%s' (expected auto, cpu or cuda)\n", cmd, arg);
            return 2;
        }
        a->o.backend = arg;
    } else if (c == OPT_INPUTS) {
        if (!strcmp(arg, "normal"))
            a->o.inputs = RG_INPUTS_NORMAL;
        else if (!strcmp(arg, "positions"))
            a->o.inputs = RG_INPUTS_POSITIONS;
        else {
            fprintf(stderr, "ropegrad %s: --inputs: unknown kind '%s' (expected normal or positions)\n", cmd, arg);
            return 2;
        }
    } else if (c == OPT_GROUND_TRUTH) {
        if (rg_ground_truth_parse(arg, &a->o.ground_truth)) {
            fprintf(stderr, "ropegrad %s: --ground-truth: unknown '%s' (expected float64 or float32-reference)\n", cmd,
                    arg);
            return 2;
        }
    } else {   /* OPT_FORMAT */
        if (strcmp(arg, "table") && strcmp(arg, "md") && strcmp(arg, "csv") && strcmp(arg, "json")) {
            fprintf(stderr, "ropegrad %s: --format: unknown format '%s' (expected table, md, csv or json)\n", cmd, arg);
            return 2;
        }
        a->format = arg;
    }
    return 0;
}

/* One option (getopt_long's c, name as written) into *a: -1 to go on, else
 * the exit code (0 after --help; 2 with one line on stderr). */
static int set_option(bench_args *a, int c, const char *name)
{
    const char *cmd = a->cmd;
    char err[RG_ERRLEN];
    switch (c) {
    case OPT_SUITE: a->suite_dir = optarg; break;
    case OPT_BACKEND:
    case OPT_INPUTS:
    case OPT_GROUND_TRUTH:
    case OPT_FORMAT:
        if (set_choice(a, c, optarg)) return 2;
        break;
    case OPT_RESTAGE:
    case OPT_SPAN:
    case OPT_SYNC:
    case OPT_SETTLE:
        if (set_switch(a, c, optarg)) return 2;
        break;
    case OPT_KERNEL:
    case OPT_ITERATIONS:
    case OPT_WARMUP:
    case OPT_SEED:
    case OPT_ROUNDS:
    case OPT_THREADS:
        if (set_number(a, c, optarg)) return 2;
        break;
    case OPT_WORKLOADS:
        free(a->indices);
        a->indices = NULL;
        if (rg_cli_parse_ranges("--workloads", optarg, &a->indices, &a->n_indices, err, sizeof err)) {
            fprintf(stderr, "ropegrad %s: %s\n", cmd, err);
            return 2;
        }
        break;
    case OPT_JSON: a->json = optarg; break;
    case OPT_LIST: a->list = 1; break;
    case OPT_PROGRESS: a->o.verbose = 1; break;
    case OPT_QUIET: a->o.verbose = -1; break;
    case OPT_RECORD: a->ro.record = 1; break;
    case OPT_DB:
        if (rg_cli_db_option(cmd, optarg, &a->ro.db_path)) return 2;
        break;
    case OPT_MANIFEST: a->ro.manifest_path = optarg; break;
    case OPT_BASELINE: a->ro.baseline_path = optarg; break;
    case OPT_SIGN: a->ro.sign_key = optarg; break;
    case OPT_IMPL:
    case OPT_IMPL_SOURCE:
    case OPT_TIMEOUT:
    case OPT_WORKER_CHANNEL:
    case OPT_WORKER_WATCH:
        if (rg_cli_impl_option(cmd, c == OPT_IMPL ? "impl" : c == OPT_IMPL_SOURCE ? "impl-source"
                                    : c == OPT_TIMEOUT ? "timeout" : c == OPT_WORKER_CHANNEL ? "worker-channel"
                                                                                           : "worker-watch",
                               optarg, &a->plugin))
            return 2;
        break;
    case OPT_HELP:
        usage(stdout, cmd, a->timed);
        return 0;
    case ':':
        fprintf(stderr, "ropegrad %s: option '%s' needs a value\n", cmd, name);
        return 2;
    default:
        fprintf(stderr, "ropegrad %s: unknown option '%s' (try ropegrad %s --help)\n", cmd, name, cmd);
        return 2;
    }
    return -1;
}

/* The options into *a: -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, bench_args *a)
{
    /* check has no timing options: cut the table before them. */
    struct option longopts[N_OPTS];
    memcpy(longopts, longopts_all, sizeof longopts);
    if (!a->timed) memset(&longopts[N_OPTS - 1 - N_TIMING_OPTS], 0, sizeof longopts[0]);
    int c, rc;
    opterr = 0;   /* our own one-line messages */
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        const char *name = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
        if ((rc = set_option(a, c, name)) >= 0) return rc;
    }
    if (optind < argc) {
        fprintf(stderr, "ropegrad %s: unexpected argument '%s' (try ropegrad %s --help)\n", a->cmd, argv[optind],
                a->cmd);
        return 2;
    }
    return -1;
}

/* The options that depend on each other, the output paths and the signing
 * key, all before the suite runs. 0, or 2 with one line on stderr. */
static int check_args(const bench_args *a)
{
    const char *cmd = a->cmd, *json = a->json;
    const rg_record_options *ro = &a->ro;
    char err[RG_ERRLEN];
    if (rg_cli_impl_check(cmd, &a->plugin, &a->o)) return 2;
    if (ro->db_path && !ro->record) {
        fprintf(stderr, "ropegrad %s: --db only applies with --record\n", cmd);
        return 2;
    }
    if (json && rg_cli_is_stdout(json) && !strcmp(a->format, "json")) {
        fprintf(stderr, "ropegrad %s: --json - and --format json both write JSON to stdout: give one\n", cmd);
        return 2;
    }
    if (json && !rg_cli_is_stdout(json) && rg_cli_check_output_path("--json", json, err, sizeof err)) {
        fprintf(stderr, "ropegrad %s: %s\n", cmd, err);
        return 2;
    }
    if (ro->manifest_path && rg_cli_check_output_path("--manifest", ro->manifest_path, err, sizeof err)) {
        fprintf(stderr, "ropegrad %s: %s\n", cmd, err);
        return 2;
    }
    /* A key that cannot sign is refused before the suite runs. */
    if (ro->sign_key && !ro->record && !ro->manifest_path) {
        fprintf(stderr, "ropegrad %s: --sign only applies with --record or --manifest\n", cmd);
        return 2;
    }
    if (ro->sign_key && rg_signing_key_check(ro->sign_key, err, sizeof err)) {
        fprintf(stderr, "ropegrad %s: --sign: %s\n", cmd, err);
        return 2;
    }
    if (check_record_options(cmd, ro)) return 2;
    if (rg_record_precheck(ro, err, sizeof err)) {
        fprintf(stderr, "ropegrad %s: --record: %s\n", cmd, err);
        return 2;
    }
    return 0;
}

/* --list: the suite's workloads, one a line. */
static void list_workloads(const rg_suite *s)
{
    printf("%-8s %5s %6s %4s  %s\n", "workload", "B", "S", "D", "uuid");
    for (size_t i = 0; i < s->n_workloads; i++) {
        const rg_workload *w = &s->workloads[i];
        printf("%-8d %5lld %6lld %4lld  %s\n", w->index, (long long)w->batch_size, (long long)w->seq_len,
               (long long)w->head_dim, w->uuid);
    }
}

/* The commit: the registry first, then the files (each written atomically),
 * with SIGINT/SIGTERM held so that an interrupt either comes before anything
 * is written or after all of it (cliopt.h). Returns the exit code, 2 when a
 * write failed, else code. */
static int commit_results(const bench_args *a, rg_run_result *r, const rg_suite *s, FILE *table, int code)
{
    const char *cmd = a->cmd, *json = a->json;
    char err[RG_ERRLEN];
    rg_cli_signals_hold();
    if (a->ro.record || a->ro.manifest_path || a->ro.baseline_path) {
        int64_t run_id = 0;
        if (rg_record_bench(r, s, &a->ro, &run_id, err, sizeof err)) {
            fprintf(stderr, "ropegrad %s: record: %s\n", cmd, err);
            code = 2;
        } else if (run_id > 0) {
            /* A note for people: beside a machine-readable stdout it goes to stderr. */
            fprintf(strcmp(a->format, "table") ? stderr : table, "recorded as run %lld\n", (long long)run_id);
        }
    }
    if (code != 2 && json && rg_cli_is_stdout(json)) {
        if (rg_run_print_format(r, "json", stdout, err, sizeof err)) {
            fprintf(stderr, "ropegrad %s: --json -: %s\n", cmd, err);
            code = 2;
        }
    } else if (code != 2 && json && rg_run_write_json(r, json, err, sizeof err)) {
        fprintf(stderr, "ropegrad %s: --json: %s\n", cmd, err);
        code = 2;
    }
    fflush(stdout);
    rg_cli_signals_release();
    return code;
}

/* The worker's run (worker.h): the implementation loaded and run here, the
 * result or the refusal sent to the parent, nothing printed or written.
 * Returns 0 once sent, 2 when it could not be. */
static int run_as_worker(bench_args *a, rg_suite *s)
{
    const char *cmd = a->cmd;
    char err[RG_ERRLEN];
    if (rg_cli_worker_attach(cmd, &a->plugin)) return 2;
    if (rg_cli_impl_load(&a->plugin, s, &a->o, err, sizeof err))
        return rg_cli_worker_send_refusal(cmd, &a->plugin, err);
    rg_run_result r;
    if (rg_run_suite(s, a->indices, a->n_indices, &a->o, &r, err, sizeof err))
        return rg_cli_worker_send_refusal(cmd, &a->plugin, err);
    rg_cli_impl_result(&a->plugin, &r);
    int code = rg_cli_worker_send_result(cmd, &a->plugin, &r);
    if (r.stopped[0]) {   /* the GPU is lost: no CUDA teardown, which would wait for a hung kernel */
        fflush(NULL);
        _exit(code);
    }
    rg_run_result_free(&r);
    return code;
}

/* The run: in this process (ropegrad's own kernels), or in a supervised
 * worker (any other implementation). 0 with *r; 1 the worker failed (its
 * line printed, *r a failed run); 2 with one line on stderr. */
static int measure(bench_args *a, rg_suite *s, int argc, char **argv, rg_run_result *r)
{
    char err[RG_ERRLEN];
    if (rg_cli_worker_supervises(&a->plugin))
        return rg_cli_worker_run(a->cmd, &a->plugin, s, a->indices, a->n_indices, &a->o, argc, argv, r);
    if (rg_cli_impl_load(&a->plugin, s, &a->o, err, sizeof err) ||
        rg_run_suite(s, a->indices, a->n_indices, &a->o, r, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad %s: %s\n", a->cmd, err);
        return 2;
    }
    rg_cli_impl_result(&a->plugin, r);
    return 0;
}

/* Runs the loaded suite, prints the table, commits the results. Returns the
 * exit code: 0 all passed, 1 a workload failed (or the worker did), 2 an error. */
static int run_suite(bench_args *a, rg_suite *s, int argc, char **argv)
{
    const char *cmd = a->cmd;
    char err[RG_ERRLEN];
    if (rg_cli_worker_mode(&a->plugin)) return run_as_worker(a, s);
    /* How busy the machine is before the run: recorded with a CPU run. */
    double load1;
    int cpus, busy;
    int load_known = rg_cli_load(&load1, &cpus, &busy) == 0;
    rg_run_result r;
    rg_cpu_mark run_start;   /* the CPU share other processes take over the run (cpu_share.h) */
    int share_known = rg_cpu_mark_now(&run_start, NULL, 0) == 0;
    const int measured = measure(a, s, argc, argv, &r);
    if (measured == 2) return 2;
    if (load_known && !strcmp(r.backend, "cpu")) {
        r.env.load_known = 1;
        r.env.load_avg_1m = load1;
        r.env.load_cpus = cpus;
        if (share_known) rg_cpu_share_since(&run_start, &r.env.cpu_share, NULL, 0);
        if (busy && a->timed && !measured)
            fprintf(stderr, "ropegrad %s: warning: the machine was busy (load average %.2f on %d CPUs): CPU timings "
                    "are noisy\n", cmd, load1, cpus);
    }
    /* The table on stdout, or on stderr when stdout carries the JSON; a failed worker's only line is said. */
    FILE *table = a->json && rg_cli_is_stdout(a->json) ? stderr : stdout;
    if (!measured && rg_run_print_format(&r, a->format, table, err, sizeof err))
        fprintf(stderr, "ropegrad %s: %s\n", cmd, err);
    fflush(table);
    int code = commit_results(a, &r, s, table, r.passed == r.total && !measured ? 0 : 1);
    rg_cli_exit_if_gpu_lost(cmd, &r, code);
    rg_run_result_free(&r);
    return code;
}

/* Parse, check, load the suite, then list it or run it. */
static int bench_or_check(int argc, char **argv, bench_args *a)
{
    int rc;
    if ((rc = parse_args(argc, argv, a)) >= 0) return rc;
    if (rg_cli_worker_mode(&a->plugin)) {   /* the parent prints and writes everything */
        memset(&a->ro, 0, sizeof a->ro);
        a->json = NULL;
    }
    if (check_args(a)) return 2;
    char suite_buf[PATH_MAX + 64], err[RG_ERRLEN];
    if (!a->suite_dir) {
        default_suite(suite_buf, sizeof suite_buf);
        a->suite_dir = suite_buf;
    }
    rg_suite s;
    if (rg_suite_load(a->suite_dir, &s, err, sizeof err)) {
        fprintf(stderr, "ropegrad %s: %s\n", a->cmd, err);
        return 2;
    }
    if (a->list) {
        list_workloads(&s);
        rc = 0;
    } else {
        rc = run_suite(a, &s, argc, argv);
    }
    rg_suite_free(&s);
    return rc;
}

static int run_command(int argc, char **argv, int timed)
{
    bench_args a = {.cmd = timed ? "bench" : "check", .timed = timed, .format = "table",
                    .plugin = {.path = NULL, .n_sources = 0, .timeout_s = -1, .open = 0,
                               .embedded = rg_cli_impl_embedded(), .channel_fd = -1, .watch_fd = -1},
                    .ro = {0, NULL, NULL, NULL, NULL}};
    rg_run_options_default(&a.o);
    a.o.timed = timed;
    a.o.verbose = isatty(STDERR_FILENO);
    int code = bench_or_check(argc, argv, &a);
    rg_cli_impl_close(&a.plugin);
    free(a.indices);
    return code;
}

int rg_cmd_bench(int argc, char **argv)
{
    return run_command(argc, argv, 1);
}

int rg_cmd_check(int argc, char **argv)
{
    return run_command(argc, argv, 0);
}
