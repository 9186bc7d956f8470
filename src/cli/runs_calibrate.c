/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runs_calibrate.c -- `ropegrad runs calibrate [--runs N] [--json] [--db FILE]
 * [-- BENCH-OPTIONS]`: N back-to-back runs of one benchmark (`ropegrad bench
 * BENCH-OPTIONS`, each in its own process, recorded into a scratch registry
 * that is removed afterwards), and from them the machine's run-to-run noise
 * (gate.h), stored per machine in the registry for `runs check`.
 *
 * Runs recorded on a busy machine (gate.h) are left out; fewer than
 * RG_NOISE_MIN_CALIBRATION quiet runs store nothing and exit 3.
 * Exit: 0 stored, 2 bad usage, input or a benchmark that failed, 3 too busy.
 */
#define _GNU_SOURCE   /* getopt_long */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cliopt.h"
#include "commands.h"
#include "gate.h"
#include "rank.h"
#include "record.h"
#include "runs_format.h"

#define CAL "ropegrad runs calibrate"
#define CAL_MAX_RUNS 100
#define CAL_DEFAULT_RUNS 10

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " CAL " [--runs N] [--json] [--db FILE] [-- BENCH-OPTIONS...]\n\n"
            "Runs `ropegrad bench BENCH-OPTIONS` N times back to back (default %d; %d to %d), each in its own\n"
            "process and recorded into a scratch registry that is removed afterwards, and stores the machine's\n"
            "run-to-run noise in the registry: sigma, the standard deviation of the log of the runs' primary\n"
            "figures, and of each workload's median (pooled), with their degrees of freedom. `runs check`\n"
            "uses it when the machine's history has too few same-code pairs. Default BENCH-OPTIONS:\n"
            "--backend cpu --workloads 0-3 --iterations 30 --warmup 5. Runs recorded on a busy machine\n"
            "are left out.\n"
            "exit status: 0 stored, 2 bad usage or input or a benchmark failed, 3 fewer than %d quiet runs\n"
            "(nothing stored)\n",
            CAL_DEFAULT_RUNS, RG_NOISE_MIN_CALIBRATION, CAL_MAX_RUNS, RG_NOISE_MIN_CALIBRATION);
}

/* Runs `self bench ARGS --record --db DB --quiet`, stdout discarded, stderr into errf. 0, or the exit code. */
static int run_bench(const char *self, char **bench, int nb, const char *db, const char *errf, char *why, size_t wl)
{
    char **argv = calloc((size_t)nb + 7, sizeof *argv);
    if (!argv) {
        snprintf(why, wl, "out of memory");
        return 2;
    }
    int k = 0;
    argv[k++] = (char *)self;
    argv[k++] = "bench";
    for (int i = 0; i < nb; i++) argv[k++] = bench[i];
    argv[k++] = "--record", argv[k++] = "--db", argv[k++] = (char *)db, argv[k++] = "--quiet";
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        free(argv);
        snprintf(why, wl, "cannot start a benchmark: %s", strerror(errno));
        return 2;
    }
    if (pid == 0) {
        int out = open("/dev/null", O_WRONLY), err = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
        execv(self, argv);
        _exit(127);
    }
    free(argv);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            snprintf(why, wl, "lost the benchmark process: %s", strerror(errno));
            return 2;
        }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    /* The benchmark's last line on stderr says why. */
    char line[400] = "", buf[400];
    FILE *f = fopen(errf, "r");
    while (f && fgets(buf, sizeof buf, f))
        if (buf[0] != '\n') snprintf(line, sizeof line, "%s", buf);
    if (f) fclose(f);
    line[strcspn(line, "\n")] = 0;
    if (WIFEXITED(st))
        snprintf(why, wl, "bench exited %d%s%s", WEXITSTATUS(st), line[0] ? ": " : "", line);
    else snprintf(why, wl, "bench was killed by signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return 2;
}

typedef struct cal_runs {
    rg_manifest *m;
    int *busy;
    char (*busy_why)[64];
    size_t n, quiet;
} cal_runs;

static void cal_free(cal_runs *c)
{
    for (size_t i = 0; i < c->n; i++) rg_manifest_free(&c->m[i]);
    free(c->m), free(c->busy), free(c->busy_why);
}

/* The scratch registry's runs: one benchmark (same comparison key and
 * implementation) on one machine, each marked busy or not. 0 or 2 with err. */
static int read_runs(const char *db, cal_runs *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    rg_registry *g;
    if (rg_registry_open(db, 0, &g, err, errlen)) return 2;
    rg_run_row *rows;
    size_t n;
    int rc = rg_registry_list(g, &rows, &n, err, errlen);
    if (!rc) {
        c->m = calloc(n ? n : 1, sizeof *c->m);
        c->busy = calloc(n ? n : 1, sizeof *c->busy);
        c->busy_why = calloc(n ? n : 1, sizeof *c->busy_why);
        if (!c->m || !c->busy || !c->busy_why) snprintf(err, errlen, "out of memory"), rc = 2;
    }
    for (size_t i = 0; !rc && i < n; i++) {
        if (rg_registry_get(g, rows[i].id, NULL, &c->m[i], err, errlen)) {
            rc = 2;
            break;
        }
        c->n++;
        if (strcmp(rows[i].status, "passed") || !(c->m[i].primary_ns > 0)) {
            snprintf(err, errlen, "run %zu of the calibration did not pass (%s)", i + 1, rows[i].status);
            rc = 2;
        } else if (strcmp(rows[i].comparison_key, rows[0].comparison_key) ||
                   strcmp(rows[i].implementation_digest, rows[0].implementation_digest)) {
            snprintf(err, errlen, "the calibration's runs measured different benchmarks");
            rc = 2;
        }
        c->busy[i] = rg_manifest_busy(&c->m[i], c->busy_why[i], sizeof c->busy_why[i]);
        c->quiet += !c->busy[i];
    }
    if (!rc && !n) snprintf(err, errlen, "the benchmark recorded no run"), rc = 2;
    if (n) free(rows);
    rg_registry_close(g);
    return rc;
}

/* sigma of the quiet runs' log primary figures and of each workload's log medians (pooled). */
static void estimate(const cal_runs *c, rg_gate_noise *o)
{
    double sum = 0, ss = 0;
    for (size_t i = 0; i < c->n; i++)
        if (!c->busy[i]) sum += log(c->m[i].primary_ns);
    double mean = sum / (double)c->quiet;
    for (size_t i = 0; i < c->n; i++)
        if (!c->busy[i]) ss += (log(c->m[i].primary_ns) - mean) * (log(c->m[i].primary_ns) - mean);
    o->df = (int)c->quiet - 1;
    o->sigma = sqrt(ss / o->df);
    double wss = 0;
    int wdf = 0;
    const rg_manifest *first = &c->m[0];
    for (size_t w = 0; w < first->n_workloads; w++) {
        double s = 0, q = 0;
        int k = 0;
        for (size_t i = 0; i < c->n; i++) {
            const rg_mf_workload *x = c->busy[i] ? NULL : rg_manifest_find_workload(&c->m[i], &first->workloads[w], w);
            if (!x || !(x->median > 0)) continue;
            s += log(x->median), q += log(x->median) * log(x->median), k++;
        }
        if (k < 2) continue;
        wss += q - s * s / k;
        wdf += k - 1;
    }
    o->df_w = wdf ? wdf : o->df;
    o->sigma_w = wdf ? sqrt(fmax(wss, 0) / wdf) : o->sigma;
    o->n = (int)c->quiet;
    snprintf(o->detail, sizeof o->detail, "%.80s, %zu workloads, %d iterations, %.40s %.20s", first->definition,
             first->n_workloads, first->iterations, first->impl_name, first->impl_version);
}

static int report(const cal_runs *c, const rg_gate_noise *o, int stored, int json)
{
    double band = rg_noise_band(o->sigma, o->df), band_w = rg_noise_band(o->sigma_w, o->df_w);
    if (json) {
        cJSON *doc = cJSON_CreateObject(), *runs = cJSON_CreateArray();
        int oom = !doc || !runs || !cJSON_AddItemToObject(doc, "runs", runs);
        if (!oom) {
            oom |= !cJSON_AddStringToObject(doc, "machine", rg_term(o->machine));
            oom |= !cJSON_AddBoolToObject(doc, "stored", stored);
            oom |= !cJSON_AddNumberToObject(doc, "quiet_runs", (double)c->quiet);
            oom |= !cJSON_AddStringToObject(doc, "detail", rg_term(o->detail));
            if (stored) {
                oom |= !cJSON_AddNumberToObject(doc, "sigma", o->sigma);
                oom |= !cJSON_AddNumberToObject(doc, "df", o->df);
                oom |= !cJSON_AddNumberToObject(doc, "sigma_workload", o->sigma_w);
                oom |= !cJSON_AddNumberToObject(doc, "df_workload", o->df_w);
                oom |= !cJSON_AddNumberToObject(doc, "band", band);
                oom |= !cJSON_AddNumberToObject(doc, "band_workload", band_w);
            }
        } else if (!doc || !cJSON_GetObjectItem(doc, "runs")) {
            cJSON_Delete(runs);
        }
        for (size_t i = 0; !oom && i < c->n; i++) {
            cJSON *r = cJSON_CreateObject();
            if (!r || !cJSON_AddItemToArray(runs, r)) {
                cJSON_Delete(r);
                oom = 1;
                break;
            }
            oom |= !cJSON_AddNumberToObject(r, "primary_ns", c->m[i].primary_ns);
            oom |= !cJSON_AddBoolToObject(r, "busy", c->busy[i]);
            oom |= !(c->busy[i] ? cJSON_AddStringToObject(r, "busy_reason", c->busy_why[i])
                                : cJSON_AddNullToObject(r, "busy_reason"));
        }
        char *text = oom ? NULL : cJSON_Print(doc);
        cJSON_Delete(doc);
        if (!text) {
            rg_term_printf(stderr, CAL ": out of memory\n");
            return 2;
        }
        printf("%s\n", text);
        free(text);
        return stored ? 0 : 3;
    }
    char a[32];
    tprintf("calibration of %s: %zu runs of %s\n", o->machine, c->n, o->detail);
    for (size_t i = 0; i < c->n; i++)
        tprintf("  run %2zu  %s %s%s%s\n", i + 1, rg_cli_time(a, sizeof a, c->m[i].primary_ns),
                c->m[i].primary_statistic, c->busy[i] ? "  busy: " : "", c->busy[i] ? c->busy_why[i] : "");
    if (!stored) {
        tprintf("%zu of %zu runs were recorded on a busy machine: fewer than %d quiet runs, nothing stored (try "
                "again when the machine is quiet)\n", c->n - c->quiet, c->n, RG_NOISE_MIN_CALIBRATION);
        return 3;
    }
    tprintf("sigma %.2f%% (primary figure, %d df), %.2f%% (a workload, %d df): `runs check` calls a change SLOW "
            "only beyond %.1f%% (primary) and %.1f%% (a workload's samples)\nstored for machine %s\n",
            100 * o->sigma, o->df, 100 * o->sigma_w, o->df_w, 100 * (band - 1), 100 * (band_w - 1), o->machine);
    return 0;
}

static void remove_scratch(const char *dir)
{
    static const char *const files[] = {"cal.db", "cal.db-wal", "cal.db-shm", "cal.db-journal", "bench.err"};
    char p[4200];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* The N runs into the scratch folder dir, then read back into *c: 0, or 2 (said on stderr). */
static int measure(const char *dir, int nruns, char **bench, int nb, cal_runs *c)
{
    char self[4096], db[4200], errf[4200], why[600];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        rg_term_printf(stderr, CAL ": cannot find the ropegrad executable: %s\n", strerror(errno));
        return 2;
    }
    self[len] = 0;
    snprintf(db, sizeof db, "%s/cal.db", dir);
    snprintf(errf, sizeof errf, "%s/bench.err", dir);
    for (int i = 0; i < nruns; i++)
        if (run_bench(self, bench, nb, db, errf, why, sizeof why)) {
            rg_term_printf(stderr, CAL ": run %d of %d: %s\n", i + 1, nruns, why);
            return 2;
        }
    char err[RG_ERRLEN];
    if (read_runs(db, c, err, sizeof err)) {
        rg_term_printf(stderr, CAL ": %s\n", err);
        cal_free(c);
        return 2;
    }
    return 0;
}

int rg_cmd_runs_calibrate(int argc, char **argv)
{
    enum { OPT_DB = 1000, OPT_RUNS, OPT_JSON };
    static const struct option longopts[] = {{"db", required_argument, NULL, OPT_DB},
                                             {"runs", required_argument, NULL, OPT_RUNS},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *db = NULL;
    int json = 0;
    long long nruns = CAL_DEFAULT_RUNS;
    optind = 0;
    opterr = 0;
    int c;
    /* "+": stop at the first word that is not an option ("--" ends them too). */
    while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_DB:
            if (rg_cli_db_option("runs calibrate", optarg, &db)) return 2;
            break;
        case OPT_RUNS:
            if (rg_cli_parse_ll(optarg, RG_NOISE_MIN_CALIBRATION, CAL_MAX_RUNS, &nruns)) {
                rg_term_printf(stderr, CAL ": --runs '%.40s': expected a whole number in [%d, %d]\n", optarg,
                               RG_NOISE_MIN_CALIBRATION, CAL_MAX_RUNS);
                return 2;
            }
            break;
        case OPT_JSON: json = 1; break;
        case 'h': usage(stdout); return 0;
        case ':': rg_term_printf(stderr, CAL ": %s needs a value\n", argv[optind - 1]); return 2;
        default: rg_term_printf(stderr, CAL ": unknown option '%s' (try --help)\n", argv[optind - 1]); return 2;
        }
    }
    if (optind < argc && strcmp(argv[optind - 1], "--")) {
        rg_term_printf(stderr, CAL ": unexpected '%.60s': the benchmark's options follow -- (try --help)\n",
                       argv[optind]);
        return 2;
    }
    static char *defaults[] = {"--backend", "cpu", "--workloads", "0-3", "--iterations", "30", "--warmup", "5"};
    char **bench = optind < argc ? argv + optind : defaults;
    int nb = optind < argc ? argc - optind : (int)(sizeof defaults / sizeof defaults[0]);
    for (int i = 0; i < nb; i++)
        if (!strcmp(bench[i], "--record") || !strncmp(bench[i], "--db", 4) || !strcmp(bench[i], "--help")) {
            rg_term_printf(stderr, CAL ": the benchmark's options may not hold %s (calibrate records into a "
                                   "scratch registry itself)\n", bench[i]);
            return 2;
        }
    /* The registry first, before any work: a bad --db is said at once. */
    char err[RG_ERRLEN];
    rg_registry *g;
    if (rg_registry_open(rg_registry_path(db), 1, &g, err, sizeof err)) {
        rg_term_printf(stderr, CAL ": %s\n", err);
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/rg-calibrate.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        rg_term_printf(stderr, CAL ": cannot make a scratch folder in %s: %s\n", tmp && tmp[0] == '/' ? tmp : "/tmp",
                       strerror(errno));
        rg_registry_close(g);
        return 2;
    }
    cal_runs runs;
    int rc = measure(dir, (int)nruns, bench, nb, &runs);
    remove_scratch(dir);
    if (rc) {
        rg_registry_close(g);
        return rc;
    }
    rg_gate_noise o;
    memset(&o, 0, sizeof o);
    rg_machine_key(&runs.m[0], o.machine, sizeof o.machine);
    snprintf(o.source, sizeof o.source, "calibration");
    int stored = runs.quiet >= RG_NOISE_MIN_CALIBRATION;
    if (stored) {
        estimate(&runs, &o);
        if (rg_registry_noise_put(g, &o, err, sizeof err)) {
            rg_term_printf(stderr, CAL ": %s\n", err);
            rc = 2;
        }
    } else {
        const rg_manifest *first = &runs.m[0];
        snprintf(o.detail, sizeof o.detail, "%.80s, %zu workloads, %d iterations", first->definition,
                 first->n_workloads, first->iterations);
    }
    if (!rc) rc = report(&runs, &o, stored, json);
    cal_free(&runs);
    rg_registry_close(g);
    return rc;
}
