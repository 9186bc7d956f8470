/*
 * record.c -- `ropegrad verify`, `ropegrad runs ...`, `ropegrad report`.
 *
 * Thin: parse the arguments, call src/record/, print. Exit codes as
 * everywhere: 0 ok, 1 a check failed (a digest mismatch, a replication that
 * did not agree), 2 bad usage or input (one line on stderr).
 */
#define _GNU_SOURCE   /* getopt_long */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "record.h"
#include "site.h"
#include "rg_util.h"

/* ---- helpers ------------------------------------------------------------------ */

/* "12.345" microseconds from nanoseconds, "-" when unknown. */
static const char *us(char *buf, size_t n, double ns)
{
    if (isfinite(ns)) snprintf(buf, n, "%.3f", ns / 1e3);
    else snprintf(buf, n, "-");
    return buf;
}

static const char *fmt3(char *buf, size_t n, double v)
{
    if (isfinite(v)) snprintf(buf, n, "%.3f", v);
    else snprintf(buf, n, "-");
    return buf;
}

static int parse_id(const char *cmd, const char *s, int64_t *id)
{
    char *end;
    errno = 0;
    long long v = s ? strtoll(s[0] == '#' ? s + 1 : s, &end, 10) : 0;
    if (!s || errno || *end || v <= 0) {
        fprintf(stderr, "ropegrad %s: '%s' is not a run id (a positive number)\n", cmd, s ? s : "");
        return 2;
    }
    *id = v;
    return 0;
}

static const char *short_digest(const char *d)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "%.19s", d && *d ? d : "-");   /* "sha256:" + 12 hex */
    return buf;
}

/* ---- verify --------------------------------------------------------------------- */

int rg_cmd_verify(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            printf("usage: ropegrad verify FILE\n\nRecomputes every digest of a manifest (each item's spec digest and "
                   "the run's cross-references)\nand the figures that follow from others.\n"
                   "exit status: 0 all match, 1 a mismatch (named), 2 unreadable or not a manifest\n");
            return 0;
        }
        fprintf(stderr, "ropegrad verify: unknown option '%s' (try --help)\n", argv[optind - 1]);
        return 2;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "ropegrad verify: expected one manifest file (usage: ropegrad verify FILE)\n");
        return 2;
    }
    const char *path = argv[optind];
    char err[RG_ERRLEN];
    cJSON *m = rg_json_read_file(path, err, sizeof err);
    if (!m) {
        fprintf(stderr, "verify: %s\n", err);
        return 2;
    }
    int rc = rg_manifest_verify(m, err, sizeof err);
    if (rc) {
        fprintf(stderr, "verify: %s: %s\n", path, err);
    } else {
        const cJSON *run = rg_manifest_spec(m, "BenchmarkRun");
        const cJSON *md = rg_json_get(rg_manifest_item(m, "BenchmarkRun"), "metadata");
        printf("verify: %s: ok (BenchmarkRun %s, protocol, environment, workload and comparison key match)\n", path,
               short_digest(rg_json_str_or_empty(md, "digest")));
        (void)run;
    }
    cJSON_Delete(m);
    return rc;
}

/* ---- runs ------------------------------------------------------------------------ */

static void runs_usage(FILE *f)
{
    fprintf(f, "usage: ropegrad runs COMMAND [ARGS] [--db FILE]\n\n"
               "  list                   a line per run\n"
               "  show ID                the whole record\n"
               "  rank                   runs grouped by comparison key, ranked by geomean of medians\n"
               "  compare ID [ID2]       per workload side by side (one id: against #1 of its group)\n"
               "  note ID TEXT           attach a note (never changes the evidence level)\n"
               "  replicate ID           run the recorded protocol again here and compare\n"
               "  export ID [--out FILE] the manifest (stdout, or FILE written atomically)\n"
               "  import FILE            verify a manifest made elsewhere, then store it as 'imported'\n"
               "  push URL FILE          send a manifest to an index (ropegrad serve); see runs push --help\n"
               "  cite ID                a citation line\n\n"
               "  --db FILE              registry (default $ROPEGRAD_DB, else ./ropegrad-runs.db)\n"
               "  --verbose              (replicate) progress on stderr\n\n"
               "exit status: 0 ok, 1 a check failed (digest mismatch, replication disagreed), 2 bad usage or input\n");
}

typedef struct runs_ctx {
    const char *db;
    const char *out;
    int verbose;
    rg_registry *g;
    char err[RG_ERRLEN];
} runs_ctx;

static int open_db(runs_ctx *x, int create)
{
    if (rg_registry_open(rg_registry_path(x->db), create, &x->g, x->err, sizeof x->err)) {
        fprintf(stderr, "ropegrad runs: %s\n", x->err);
        return 2;
    }
    return 0;
}

static int cmd_list(runs_ctx *x)
{
    rg_run_row *rows;
    size_t n;
    if (rg_registry_list(x->g, &rows, &n, x->err, sizeof x->err)) {
        fprintf(stderr, "ropegrad runs list: %s\n", x->err);
        return 2;
    }
    if (n == 0) {
        printf("no runs in %s\n", rg_registry_path(x->db));
        free(rows);
        return 0;
    }
    printf("%5s  %-20s  %-32s  %-7s  %-18s  %12s  %12s  %6s  %-7s  %s\n", "id", "observed", "device", "backend",
           "kernel", "geomean us", "mean us", "SOL", "status", "evidence");
    for (size_t i = 0; i < n; i++) {
        rg_run_row *r = &rows[i];
        char a[32], b[32], s[32], k[96];
        snprintf(k, sizeof k, "%d %.60s", r->kernel, r->kernel_name);
        printf("%5lld  %-20s  %-32.32s  %-7s  %-18.18s  %12s  %12s  %6s  %-7s  %s", (long long)r->id, r->observed_at,
               r->device, r->backend, k, us(a, sizeof a, r->geomean_ns), us(b, sizeof b, r->mean_ns),
               fmt3(s, sizeof s, r->sol_score), r->status, r->evidence);
        if (r->replicates_of) printf(" (replicates #%lld)", (long long)r->replicates_of);
        printf("\n");
    }
    free(rows);
    return 0;
}

static int cmd_show(runs_ctx *x, int64_t id)
{
    rg_run_row r;
    cJSON *m;
    int rc = rg_registry_get(x->g, id, &r, &m, x->err, sizeof x->err);
    if (rc) {
        fprintf(stderr, "ropegrad runs show: %s\n", x->err);
        return 2;
    }
    const cJSON *run = rg_manifest_spec(m, "BenchmarkRun"), *proto = rg_manifest_spec(m, "BenchmarkProtocol"),
                *env = rg_manifest_spec(m, "ExecutionEnvironment");
    const cJSON *impl = rg_json_get(run, "implementation"), *sn = rg_json_get(run, "sourceNative");
    const cJSON *src = rg_json_get(sn, "source"), *per = rg_json_get(sn, "perWorkload");
    const cJSON *tw = rg_json_get(rg_json_get(run, "timing"), "workloads");
    const cJSON *cw = rg_json_get(rg_json_get(run, "correctness"), "workloads");
    const cJSON *suite = rg_json_get(run, "suite"), *work = rg_json_get(run, "workload");
    const cJSON *wl = rg_json_get(work, "workloads");
    char a[32], b[32], c[32], d[32], e[32], f[32];

    printf("Run #%lld  %s\n", (long long)r.id, r.definition);
    printf("%s kernel %d (%s) on %s  |  %s  |  evidence: %s  |  observed %s\n\n", r.backend, r.kernel, r.kernel_name,
           r.device, r.status, r.evidence, r.observed_at);
    printf("  Primary measurement  %s us   geomean of per-workload medians (mean of medians %s us)\n",
           us(a, sizeof a, r.geomean_ns), us(b, sizeof b, r.mean_ns));
    printf("  SOL score            %s      T_SOL: %s\n", fmt3(a, sizeof a, r.sol_score),
           rg_json_str_or_empty(src, "tSolDetail"));
    double sp = rg_json_num(sn, "avg_speedup");
    if (isfinite(sp))
        printf("  Speedup              %.2fx     mean T_b/T_k; baseline: %s\n", sp, rg_json_str_or_empty(src, "baseline"));
    else printf("  Speedup              -          no baseline (bench --baseline FILE)\n");
    printf("  Cases faster         %.0f / %.0f   correct and faster than the baseline\n",
           rg_json_num(sn, "fast_1_count"), rg_json_num(sn, "fast_1_total"));
    int rank, size;
    int64_t first;
    if (!rg_registry_rank_of(x->g, id, &rank, &size, &first, x->err, sizeof x->err)) {
        if (rank) printf("  Rank                 %d of %d in its comparison group%s", rank, size, rank == 1 ? "\n" : "");
        else printf("  Rank                 not ranked (failed correctness); %d ranked runs in its group\n", size);
        if (rank > 1) printf("  (#1 is run #%lld: `ropegrad runs compare %lld`)\n", (long long)first, (long long)id);
    }

    printf("\nIdentity\n");
    printf("  implementation  %s %s, backend %s, kernel %d (%s)\n", rg_json_str_or_empty(impl, "name"),
           rg_json_str_or_empty(impl, "version"), rg_json_str_or_empty(impl, "backend"), (int)rg_json_num(impl, "kernel"),
           rg_json_str_or_empty(impl, "kernelName"));
    printf("  device          %s\n", rg_json_str_or_empty(impl, "device"));
    printf("  suite           %s (%s)\n", rg_json_str_or_empty(suite, "name"), rg_json_str_or_empty(suite, "dir"));

    printf("\nCorrectness  %d / %d workloads passed\n", r.passed, r.total);
    printf("\nWorkload  %d workloads of %s\n", cJSON_GetArraySize(wl), rg_json_str_or_empty(work, "definition"));
    printf("  %4s %5s %6s %4s  %12s %12s %12s %10s  %10s %10s %6s  %s\n", "#", "B", "S", "D", "median us", "min us",
           "max us", "GB/s", "T_SOL us", "T_b us", "SOL", "correct (max abs err)");
    int n = cJSON_GetArraySize(tw);
    for (int i = 0; i < n; i++) {
        const cJSON *t = cJSON_GetArrayItem(tw, i), *p = cJSON_GetArrayItem(per, i), *k = cJSON_GetArrayItem(cw, i);
        const cJSON *ax = rg_json_get(cJSON_GetArrayItem(wl, i), "axes");
        printf("  %4.0f %5.0f %6.0f %4.0f  %12s %12s %12s %10.1f  %10s %10s %6s  %s (%.3g)\n", rg_json_num(t, "index"),
               rg_json_num(ax, "batch_size"), rg_json_num(ax, "seq_len"), rg_json_num(ax, "head_dim"),
               us(a, sizeof a, rg_json_num(t, "median")), us(b, sizeof b, rg_json_num(t, "min")),
               us(c, sizeof c, rg_json_num(t, "max")), rg_json_num(t, "gbps"),
               us(d, sizeof d, rg_json_num(p, "t_sol_ns")), us(e, sizeof e, rg_json_num(p, "t_b_ns")),
               fmt3(f, sizeof f, rg_json_num(p, "sol_score")),
               cJSON_IsTrue(rg_json_get(k, "pass")) ? "yes" : "NO", rg_json_num(k, "max_abs_err"));
    }
    printf("\nProtocol\n");
    const cJSON *harness = rg_json_get(proto, "harness");
    printf("  harness     %s %s\n", rg_json_str_or_empty(harness, "name"), rg_json_str_or_empty(harness, "version"));
    printf("  timer       %s; warmup %.0f, iterations %.0f, seed %s, inputs %s\n", rg_json_str_or_empty(proto, "timer"),
           rg_json_num(proto, "warmup"), rg_json_num(proto, "iterations"),
           cJSON_IsNumber(rg_json_get(proto, "seed")) ? (snprintf(a, sizeof a, "%.0f", rg_json_num(proto, "seed")), a)
                                                      : rg_json_str_or_empty(proto, "seed"),
           rg_json_str_or_empty(proto, "inputs"));
    printf("  cold L2     %s\n", rg_json_str_or_empty(proto, "coldL2"));
    printf("  correctness %s\n", rg_json_str_or_empty(rg_json_get(proto, "correctness"), "element"));
    printf("  family      %s\n", rg_json_str_or_empty(rg_json_get(proto, "comparability"), "family"));
    printf("\nEnvironment\n");
    printf("  host        %s, %s\n", rg_json_str_or_empty(env, "hostname"), rg_json_str_or_empty(env, "os"));
    const cJSON *cpu = rg_json_get(env, "cpu"), *rgp = rg_json_get(env, "ropegrad");
    printf("  CPU         %s (%.0f threads, %s)\n", rg_json_str_or_empty(cpu, "model"), rg_json_num(cpu, "threads"),
           rg_json_str_or_empty(cpu, "isa"));
    const cJSON *gpu = rg_json_get(env, "gpu");
    if (cJSON_IsObject(gpu)) {
        const cJSON *ck = rg_json_get(gpu, "clocksMHz");
        printf("  GPU         %s (%s, %.0f SMs), driver %s, CUDA runtime %s\n", rg_json_str_or_empty(gpu, "product"),
               rg_json_str_or_empty(gpu, "architecture"), rg_json_num(gpu, "smCount"),
               rg_json_str_or_empty(gpu, "driver"), rg_json_str_or_empty(gpu, "cudaRuntime"));
        printf("  clocks MHz  SM %.0f -> %.0f, memory %.0f -> %.0f\n", rg_json_num(ck, "smStart"),
               rg_json_num(ck, "smEnd"), rg_json_num(ck, "memStart"), rg_json_num(ck, "memEnd"));
    }
    printf("  ropegrad    %s, %s\n", rg_json_str_or_empty(rgp, "version"), rg_json_str_or_empty(rgp, "buildFlags"));
    printf("\nDigests\n");
    printf("  run             %s\n", r.run_digest);
    printf("  protocol        %s\n", rg_json_str_or_empty(run, "protocolDigest"));
    printf("  workload        %s\n", rg_json_str_or_empty(run, "workloadDigest"));
    printf("  environment     %s\n", rg_json_str_or_empty(run, "environmentDigest"));
    printf("  implementation  %s\n", rg_json_str_or_empty(run, "implementationDigest"));
    printf("  comparison key  %s\n", rg_json_str_or_empty(run, "comparisonKey"));

    rg_replication *reps;
    size_t nrep;
    if (!rg_registry_replications(x->g, id, &reps, &nrep, x->err, sizeof x->err)) {
        printf("\nReplications%s\n", nrep ? "" : "  none");
        for (size_t i = 0; i < nrep; i++) {
            if (reps[i].original_id == id)
                printf("  run #%lld replicated it on %s: %s (%d of %d workloads within spread)\n",
                       (long long)reps[i].replica_id, reps[i].created_at, reps[i].agreed ? "agreed" : "did not agree",
                       reps[i].within, reps[i].total);
            else
                printf("  this run replicates run #%lld: %s (%d of %d workloads within spread)\n",
                       (long long)reps[i].original_id, reps[i].agreed ? "agreed" : "did not agree", reps[i].within,
                       reps[i].total);
        }
        free(reps);
    }
    rg_note *notes;
    size_t nn;
    if (!rg_registry_notes(x->g, id, &notes, &nn, x->err, sizeof x->err)) {
        printf("\nNotes%s\n", nn ? "" : "  none");
        for (size_t i = 0; i < nn; i++) printf("  %s  %s\n", notes[i].created_at, notes[i].text);
        rg_notes_free(notes, nn);
    }
    cJSON_Delete(m);
    return 0;
}

static int cmp_rank(const void *pa, const void *pb)
{
    const rg_run_row *a = pa, *b = pb;
    int c = strcmp(a->comparison_key, b->comparison_key);
    if (c) return c;
    int fa = strcmp(a->status, "passed") != 0, fb = strcmp(b->status, "passed") != 0;
    if (fa != fb) return fa - fb;            /* passed runs first */
    if (a->geomean_ns != b->geomean_ns) return a->geomean_ns < b->geomean_ns ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int cmd_rank(runs_ctx *x)
{
    rg_run_row *rows;
    size_t n;
    if (rg_registry_list(x->g, &rows, &n, x->err, sizeof x->err)) {
        fprintf(stderr, "ropegrad runs rank: %s\n", x->err);
        return 2;
    }
    if (n == 0) {
        printf("no runs in %s\n", rg_registry_path(x->db));
        free(rows);
        return 0;
    }
    qsort(rows, n, sizeof *rows, cmp_rank);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && !strcmp(rows[j].comparison_key, rows[i].comparison_key)) j++;
        printf("group %s  %s  on %s  (%d workloads)\n", short_digest(rows[i].comparison_key), rows[i].definition,
               rows[i].device, rows[i].n_workloads);
        printf("  %4s  %5s  %12s  %8s  %6s  %-7s  %-18s  %-10s  %s\n", "rank", "id", "geomean us", "vs #1", "SOL",
               "backend", "kernel", "evidence", "implementation");
        double best = rows[i].geomean_ns;
        int rank = 0;
        for (size_t k = i; k < j; k++) {
            rg_run_row *r = &rows[k];
            char a[32], s[32], rk[16], kn[96], ratio[32];
            int passed = !strcmp(r->status, "passed");
            if (passed) snprintf(rk, sizeof rk, "%d", ++rank);
            else snprintf(rk, sizeof rk, "-");
            snprintf(kn, sizeof kn, "%d %.60s", r->kernel, r->kernel_name);
            if (passed) snprintf(ratio, sizeof ratio, "%.3fx", r->geomean_ns / best);
            else snprintf(ratio, sizeof ratio, "failed");
            printf("  %4s  %5lld  %12s  %8s  %6s  %-7s  %-18.18s  %-10s  %s\n", rk, (long long)r->id,
                   us(a, sizeof a, r->geomean_ns), ratio, fmt3(s, sizeof s, r->sol_score), r->backend, kn, r->evidence,
                   short_digest(r->implementation_digest));
        }
        printf("\n");
        i = j;
    }
    free(rows);
    return 0;
}

static int cmd_compare(runs_ctx *x, int64_t ida, int64_t idb)
{
    if (!idb) {
        int rank, size;
        int64_t first;
        if (rg_registry_rank_of(x->g, ida, &rank, &size, &first, x->err, sizeof x->err)) {
            fprintf(stderr, "ropegrad runs compare: %s\n", x->err);
            return 2;
        }
        if (!first) {
            printf("run #%lld: its comparison group has no passed run to compare with\n", (long long)ida);
            return 0;
        }
        if (first == ida) {
            printf("run #%lld is #1 of its comparison group (%d ranked run%s)\n", (long long)ida, size,
                   size == 1 ? "" : "s");
            return 0;
        }
        idb = ida;
        ida = first;   /* #1 on the left, the run in question on the right */
    }
    rg_run_row ra, rb;
    cJSON *ma, *mb;
    if (rg_registry_get(x->g, ida, &ra, &ma, x->err, sizeof x->err)) {
        fprintf(stderr, "ropegrad runs compare: %s\n", x->err);
        return 2;
    }
    if (rg_registry_get(x->g, idb, &rb, &mb, x->err, sizeof x->err)) {
        fprintf(stderr, "ropegrad runs compare: %s\n", x->err);
        cJSON_Delete(ma);
        return 2;
    }
    printf("A = run #%lld: %s kernel %d (%s) on %s, %s\n", (long long)ra.id, ra.backend, ra.kernel, ra.kernel_name,
           ra.device, ra.status);
    printf("B = run #%lld: %s kernel %d (%s) on %s, %s\n", (long long)rb.id, rb.backend, rb.kernel, rb.kernel_name,
           rb.device, rb.status);
    if (strcmp(ra.comparison_key, rb.comparison_key))
        printf("note: different comparison keys (workloads, device or protocol differ): ratios are not a ranking\n");
    printf("\n  %4s  %12s  %12s  %8s  %s\n", "#", "A median us", "B median us", "B / A", "");
    const cJSON *twa = rg_json_get(rg_json_get(rg_manifest_spec(ma, "BenchmarkRun"), "timing"), "workloads");
    const cJSON *twb = rg_json_get(rg_json_get(rg_manifest_spec(mb, "BenchmarkRun"), "timing"), "workloads");
    int shared = 0;
    double lsa = 0, lsb = 0;
    for (const cJSON *a = cJSON_IsArray(twa) ? twa->child : NULL; a; a = a->next) {
        const cJSON *b = NULL;
        for (const cJSON *t = cJSON_IsArray(twb) ? twb->child : NULL; t; t = t->next)
            if (rg_json_num(t, "index") == rg_json_num(a, "index") &&
                !strcmp(rg_json_str_or_empty(t, "uuid"), rg_json_str_or_empty(a, "uuid")))
                b = t;
        char s1[32], s2[32];
        if (!b) {
            printf("  %4.0f  %12s  %12s  %8s\n", rg_json_num(a, "index"), us(s1, sizeof s1, rg_json_num(a, "median")),
                   "-", "-");
            continue;
        }
        double ta = rg_json_num(a, "median"), tb = rg_json_num(b, "median");
        printf("  %4.0f  %12s  %12s  %7.3fx  %s\n", rg_json_num(a, "index"), us(s1, sizeof s1, ta), us(s2, sizeof s2, tb),
               tb / ta, tb < ta ? "B faster" : tb > ta ? "A faster" : "");
        shared++;
        lsa += log(ta);
        lsb += log(tb);
    }
    if (shared) {
        double ga = exp(lsa / shared), gb = exp(lsb / shared);
        char s1[32], s2[32];
        printf("  %4s  %12s  %12s  %7.3fx  geomean over %d shared workload%s\n", "all", us(s1, sizeof s1, ga),
               us(s2, sizeof s2, gb), gb / ga, shared, shared == 1 ? "" : "s");
    } else {
        printf("  no workloads in common\n");
    }
    cJSON_Delete(ma);
    cJSON_Delete(mb);
    return 0;
}

static int cmd_export(runs_ctx *x, int64_t id)
{
    rg_run_row r;
    cJSON *m;
    if (rg_registry_get(x->g, id, &r, &m, x->err, sizeof x->err)) {
        fprintf(stderr, "ropegrad runs export: %s\n", x->err);
        return 2;
    }
    char *text = rg_json_print(m, 1, x->err, sizeof x->err);
    cJSON_Delete(m);
    if (!text) {
        fprintf(stderr, "ropegrad runs export: %s\n", x->err);
        return 2;
    }
    int rc = 0;
    if (x->out) {
        size_t n = strlen(text);
        if (rg_write_file_atomic(x->out, text, n, x->err, sizeof x->err)) {
            fprintf(stderr, "ropegrad runs export: %s\n", x->err);
            rc = 2;
        } else {
            fprintf(stderr, "exported run #%lld to %s\n", (long long)id, x->out);
        }
    } else {
        fputs(text, stdout);
    }
    free(text);
    return rc;
}

/* The same two steps as the index's POST /api/runs: parse and verify the
 * bytes, then store them as they came. */
static int cmd_import(runs_ctx *x, const char *path)
{
    FILE *f = fopen(path, "rb");
    char *bytes = NULL;
    size_t n = 0, cap = 0;
    if (f) {
        for (;;) {
            if (n + 65536 > cap) {
                char *p = realloc(bytes, cap = cap ? cap * 2 : 131072);
                if (!p) break;
                bytes = p;
            }
            size_t k = fread(bytes + n, 1, cap - n, f);
            n += k;
            if (k == 0) break;
        }
    }
    if (!f || !bytes || (f && ferror(f))) {
        fprintf(stderr, "ropegrad runs import: %s: cannot read it%s%s\n", path, f ? "" : ": ", f ? "" : strerror(errno));
        if (f) fclose(f);
        free(bytes);
        return 2;
    }
    fclose(f);
    cJSON *m;
    int rc = rg_manifest_parse_verified(bytes, n, &m, x->err, sizeof x->err);
    if (rc) {
        fprintf(stderr, "ropegrad runs import: %s: %s\n", path, x->err);
        free(bytes);
        return rc == 1 ? 1 : 2;
    }
    int64_t id;
    int existed;
    rc = open_db(x, 1) ? 2 : rg_registry_store_bytes(x->g, m, bytes, n, RG_EVIDENCE_IMPORTED, &id, &existed, x->err,
                                                      sizeof x->err);
    cJSON_Delete(m);
    free(bytes);
    if (rc) {
        if (x->g) fprintf(stderr, "ropegrad runs import: %s\n", x->err);
        return 2;
    }
    if (existed) printf("%s: already in the registry as run #%lld\n", path, (long long)id);
    else printf("%s: verified and imported as run #%lld\n", path, (long long)id);
    return 0;
}

static int cmd_cite(runs_ctx *x, int64_t id)
{
    rg_run_row r;
    if (rg_registry_get(x->g, id, &r, NULL, x->err, sizeof x->err)) {
        fprintf(stderr, "ropegrad runs cite: %s\n", x->err);
        return 2;
    }
    char today[16];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(today, sizeof today, "%Y-%m-%d", &tm);
    printf("ropegrad run #%lld, %s, %s kernel %d on %s, %s, observed %s, accessed %s.\n", (long long)r.id,
           r.definition, r.backend, r.kernel, r.device, r.run_digest, r.observed_at, today);
    return 0;
}

int rg_cmd_runs(int argc, char **argv)
{
    enum { OPT_DB = 1000, OPT_OUT, OPT_VERBOSE };
    static const struct option longopts[] = {{"db", required_argument, NULL, OPT_DB},
                                             {"out", required_argument, NULL, OPT_OUT},
                                             {"verbose", no_argument, NULL, OPT_VERBOSE},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    if (argc > 1 && !strcmp(argv[1], "push")) return rg_cmd_runs_push(argc - 1, argv + 1);   /* push.c */
    runs_ctx x = {0};
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_DB: x.db = optarg; break;
        case OPT_OUT: x.out = optarg; break;
        case OPT_VERBOSE: x.verbose = 1; break;
        case 'h': runs_usage(stdout); return 0;
        case ':': fprintf(stderr, "ropegrad runs: %s needs a value\n", argv[optind - 1]); return 2;
        default: fprintf(stderr, "ropegrad runs: unknown option '%s' (try --help)\n", argv[optind - 1]); return 2;
        }
    }
    int npos = argc - optind;
    char **pos = argv + optind;
    if (npos < 1) {
        runs_usage(stderr);
        return 2;
    }
    const char *sub = pos[0];
    struct {
        const char *name;
        int min, max;   /* positional arguments after the subcommand */
        const char *args;
    } const subs[] = {{"list", 0, 0, ""},          {"show", 1, 1, "ID"},     {"rank", 0, 0, ""},
                      {"compare", 1, 2, "ID [ID2]"}, {"note", 2, 2, "ID TEXT"}, {"replicate", 1, 1, "ID"},
                      {"export", 1, 1, "ID"},       {"import", 1, 1, "FILE"}, {"cite", 1, 1, "ID"}};
    int which = -1;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(sub, subs[i].name)) which = (int)i;
    if (which < 0) {
        fprintf(stderr, "ropegrad runs: unknown command '%s' (try ropegrad runs --help)\n", sub);
        return 2;
    }
    if (npos - 1 < subs[which].min || npos - 1 > subs[which].max) {
        fprintf(stderr, "ropegrad runs %s: expected %s (usage: ropegrad runs %s %s)\n", sub,
                subs[which].args[0] ? subs[which].args : "no arguments", sub, subs[which].args);
        return 2;
    }
    if (x.out && strcmp(sub, "export")) {
        fprintf(stderr, "ropegrad runs %s: --out only applies to export\n", sub);
        return 2;
    }
    if (!strcmp(sub, "import")) {
        int rc = cmd_import(&x, pos[1]);
        rg_registry_close(x.g);
        return rc;
    }
    int64_t id = 0, id2 = 0;
    if (subs[which].min >= 1 && parse_id(sub, pos[1], &id)) return 2;
    if (!strcmp(sub, "compare") && npos == 3 && parse_id(sub, pos[2], &id2)) return 2;
    if (open_db(&x, 0)) return 2;
    int rc;
    if (!strcmp(sub, "list")) rc = cmd_list(&x);
    else if (!strcmp(sub, "show")) rc = cmd_show(&x, id);
    else if (!strcmp(sub, "rank")) rc = cmd_rank(&x);
    else if (!strcmp(sub, "compare")) rc = cmd_compare(&x, id, id2);
    else if (!strcmp(sub, "export")) rc = cmd_export(&x, id);
    else if (!strcmp(sub, "cite")) rc = cmd_cite(&x, id);
    else if (!strcmp(sub, "note")) {
        rc = rg_registry_add_note(x.g, id, pos[2], x.err, sizeof x.err) ? 2 : 0;
        if (rc) fprintf(stderr, "ropegrad runs note: %s\n", x.err);
        else printf("note added to run #%lld (evidence unchanged)\n", (long long)id);
    } else {   /* replicate */
        int64_t rid;
        int agreed;
        rc = rg_record_replicate(x.g, id, x.verbose, stdout, &rid, &agreed, x.err, sizeof x.err);
        if (rc) fprintf(stderr, "ropegrad runs replicate: %s\n", x.err);
        else rc = agreed ? 0 : 1;
    }
    rg_registry_close(x.g);
    return rc;
}

/* ---- report -------------------------------------------------------------------------- */

int rg_cmd_report(int argc, char **argv)
{
    enum { OPT_DB = 1000, OPT_HTML };
    static const struct option longopts[] = {{"db", required_argument, NULL, OPT_DB},
                                             {"html", required_argument, NULL, OPT_HTML},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *db = NULL, *html = NULL;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_DB: db = optarg; break;
        case OPT_HTML: html = optarg; break;
        case 'h':
            printf("usage: ropegrad report ID --html FILE [--db FILE]\n\n"
                   "One self-contained HTML page (inline SVG and CSS, no network, no script) for a recorded run.\n");
            return 0;
        case ':': fprintf(stderr, "ropegrad report: %s needs a value\n", argv[optind - 1]); return 2;
        default: fprintf(stderr, "ropegrad report: unknown option '%s' (try --help)\n", argv[optind - 1]); return 2;
        }
    }
    if (optind != argc - 1 || !html) {
        fprintf(stderr, "ropegrad report: expected one run id and --html FILE (usage: ropegrad report ID --html FILE)\n");
        return 2;
    }
    int64_t id;
    if (parse_id("report", argv[optind], &id)) return 2;
    char err[RG_ERRLEN];
    rg_registry *g;
    if (rg_registry_open(rg_registry_path(db), 0, &g, err, sizeof err)) {
        fprintf(stderr, "ropegrad report: %s\n", err);
        return 2;
    }
    int rc = rg_report_write(g, id, html, err, sizeof err);
    if (rc) fprintf(stderr, "ropegrad report: %s\n", err);
    else printf("report of run #%lld written to %s\n", (long long)id, html);
    rg_registry_close(g);
    return rc ? 2 : 0;
}
