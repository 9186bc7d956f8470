/* SPDX-License-Identifier: Apache-2.0 */
/*
 * record.c -- `ropegrad verify`, `ropegrad runs ...`, `ropegrad report`,
 * `ropegrad migrate`.
 *
 * Thin: parse the arguments, call src/record/, print. Manifests are read only
 * through the typed reader (manifest.h). Exit codes as everywhere: 0 ok, 1 a
 * check failed (a digest mismatch, a replication that did not agree), 2 bad
 * usage or input (one line on stderr).
 */
#define _GNU_SOURCE   /* getopt_long */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cliopt.h"
#include "commands.h"
#include "rank.h"
#include "record.h"
#include "traces.h"
#include "import_traces.h"
#include "rg_term.h"
#include "rg_util.h"
#include "site.h"
#include "strict_json.h"

/* Everything this file prints goes through rg_term_printf: text that came from a
 * record (a device or kernel name, a note, an imported manifest's strings) has its
 * control characters and escape sequences made visible before it reaches a
 * terminal. Only the manifest itself (export) is written as its stored bytes. */
#define tprintf(...) rg_term_printf(stdout, __VA_ARGS__)

/* ---- helpers ------------------------------------------------------------------ */


/* "12.345" microseconds from nanoseconds, "-" when unknown. */
static const char *us(char *buf, size_t n, double ns)
{
    if (isfinite(ns)) snprintf(buf, n, "%.3f", ns / 1e3);
    else snprintf(buf, n, "-");
    return buf;
}

static const char *fmt4(char *buf, size_t n, double v)
{
    if (isfinite(v)) snprintf(buf, n, "%.4f", v);
    else snprintf(buf, n, "-");
    return buf;
}

int rg_cli_parse_run_id(const char *cmd, const char *s, int64_t *id)
{
    char *end;
    errno = 0;
    long long v = s ? strtoll(s[0] == '#' ? s + 1 : s, &end, 10) : 0;
    if (!s || errno || *end || v <= 0) {
        rg_term_printf(stderr, "ropegrad %s: '%s' is not a run id (a positive number)\n", cmd, s ? s : "");
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

/* "cuda 12 (12-vec-2d)" for a ropegrad run, "sol-execbench #6579" for an imported one. */
static const char *impl_label(char *buf, size_t n, const rg_run_row *r)
{
    if (r->backend[0]) snprintf(buf, n, "%.15s %d %.40s", r->backend, r->kernel, r->kernel_name);
    else snprintf(buf, n, "%.30s #%.40s", r->source, r->external_id);
    return buf;
}

/* "SOL 0.9295 · 12.86x reference · 16/16 faster", parts left out when unknown. */
static void headline(char *buf, size_t n, double sol, double speedup, double fast, double total)
{
    size_t k = 0;
    buf[0] = 0;
    if (isfinite(sol)) k += (size_t)snprintf(buf + k, n - k, "SOL %.4f", sol);
    else k += (size_t)snprintf(buf + k, n - k, "SOL -");
    if (k < n && isfinite(speedup)) k += (size_t)snprintf(buf + k, n - k, " · %.2f× reference", speedup);
    if (k < n && isfinite(total)) snprintf(buf + k, n - k, " · %.0f/%.0f faster", fast, total);
}

/* Prints s left-aligned in width columns: characters, not bytes (the
 * headline holds "·" and "×"). */
static void print_cols(const char *s, int width)
{
    int cols = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) cols += (*p & 0xC0) != 0x80;
    rg_term_fputs(s, stdout);
    for (; cols < width; cols++) putchar(' ');
}

/* ---- verify --------------------------------------------------------------------- */

int rg_cmd_verify(int argc, char **argv)
{
    enum { OPT_RUN_DIGEST = 1000, OPT_TRUSTED };
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'},
                                             {"run-digest", required_argument, NULL, OPT_RUN_DIGEST},
                                             {"trusted-keys", required_argument, NULL, OPT_TRUSTED},
                                             {NULL, 0, NULL, 0}};
    const char *expect = NULL, *trusted = NULL;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            tprintf("usage: ropegrad verify FILE [--run-digest sha256:...] [--trusted-keys DIR|FILE]\n\n"
                   "Recomputes every digest of a manifest whose object the file carries (sha256 of the RFC 8785\n"
                   "form of the object without metadata), lists a digest whose object is absent as not\n"
                   "recomputable, checks the comparison key and the figures that follow from others, and\n"
                   "any signatures over the run digest (--trusted-keys: which public keys are trusted).\n"
                   "--run-digest: also require this run digest (e.g. from the record's page).\n"
                   "exit status: 0 all match, 1 a mismatch (named), 2 unreadable or not a manifest\n");
            return 0;
        case OPT_RUN_DIGEST: expect = optarg; break;
        case OPT_TRUSTED: trusted = optarg; break;
        case ':': rg_term_printf(stderr, "ropegrad verify: %s needs a value\n", argv[optind - 1]); return 2;
        default: rg_term_printf(stderr, "ropegrad verify: unknown option '%s' (try --help)\n", argv[optind - 1]); return 2;
        }
    }
    if (optind != argc - 1) {
        rg_term_printf(stderr, "ropegrad verify: expected one manifest file (usage: ropegrad verify FILE)\n");
        return 2;
    }
    if (expect && !rg_digest_valid(expect)) {
        rg_term_printf(stderr, "ropegrad verify: --run-digest '%.80s' is not sha256: + 64 hex digits\n", expect);
        return 2;
    }
    const char *path = argv[optind];
    char err[RG_ERRLEN];
    if (trusted && rg_trusted_keys_check(trusted, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad verify: %s\n", err);
        return 2;
    }
    cJSON *doc = rg_json_read_file(path, err, sizeof err);
    if (!doc) {
        rg_term_printf(stderr, "verify: %s\n", err);
        return 2;
    }
    if (rg_manifest_is_legacy(doc)) {
        int rc = rg_legacy_verify(doc, err, sizeof err);
        if (rc) rg_term_printf(stderr, "verify: %s: %s\n", path, err);
        else tprintf("verify: %s: an old ManifestBundle whose own digests match; convert it with `ropegrad migrate %s`\n",
                    path, path);
        cJSON_Delete(doc);
        return rc;
    }
    rg_manifest m;
    if (rg_manifest_read(doc, &m, err, sizeof err)) {
        rg_term_printf(stderr, "verify: %s: %s\n", path, err);
        cJSON_Delete(doc);
        return 2;
    }
    rg_verify_report rep;
    int rc = rg_manifest_verify_typed(&m, &rep, err, sizeof err);
    if (rc == 2) {
        rg_term_printf(stderr, "verify: %s: %s\n", path, err);
    } else {
        tprintf("verify: %s\n", path);
        for (int k = 0; k < RG_N_ROLES; k++) {
            const char *what = rep.state[k] == RG_DIGEST_MATCH          ? "matches"
                               : rep.state[k] == RG_DIGEST_NOT_RECOMPUTABLE ? "not recomputable from this file"
                                                                        : "MISMATCH";
            if (k == RG_ROLE_RUN)
                tprintf("  %-15s %-33s %s\n", rg_role_name(k), "matches (its references checked)", rep.computed[k]);
            else
                tprintf("  %-15s %-33s %s\n", rg_role_name(k), what,
                       rep.state[k] == RG_DIGEST_MATCH ? rep.computed[k] : rep.recorded[k]);
        }
        if (rc) rg_term_printf(stderr, "verify: %s: %s\n", path, err);
    }
    if (!rc && expect && strcmp(expect, m.obj[RG_ROLE_RUN].digest)) {
        rg_term_printf(stderr, "verify: %s: the run digest is %s, not the expected %s\n", path, m.obj[RG_ROLE_RUN].digest,
                expect);
        rc = 1;
    }
    if (!rc) {
        char sig[RG_ERRLEN];
        int src = rg_signatures_check(&m, trusted, sig, sizeof sig);
        tprintf("  %-15s %s\n", "signatures", sig);
        if (src) rc = src;
    }
    if (!rc) tprintf("verify: ok\n");
    rg_manifest_free(&m);
    cJSON_Delete(doc);
    return rc;
}

/* ---- runs ------------------------------------------------------------------------ */

static void runs_usage(FILE *f)
{
    fprintf(f, "usage: ropegrad runs COMMAND [ARGS] [--db FILE]\n\n"
               "  list [--json]          a line per run (--json: one JSON array, for scripts)\n"
               "  show ID                the whole record\n"
               "  rank [--evidence E]    runs grouped by comparison key, ranked by their primary statistic's\n"
               "                         95%% interval (overlapping intervals tie: =2; suspect runs after the others)\n"
               "                         (E: measured, replicated or imported: only runs of that evidence)\n"
               "  compare ID [ID2]       per workload side by side (one id: against #1 of its group)\n"
               "  note ID TEXT           attach a note (never changes the evidence level)\n"
               "  replicate ID [--suite DIR]  run the recorded protocol again here and compare\n"
               "  export ID [--out FILE] the manifest (stdout or --out -, or FILE written atomically)\n"
               "  import FILE            verify a manifest made elsewhere (an old one is converted), then\n"
               "                         store it as 'imported' (--trusted-keys: require a trusted signature)\n"
               "  import traces.jsonl [--suite DIR | --definition FILE]\n"
               "                         the official SOL-ExecBench evaluator's trace file (sol-execbench -o)\n"
               "                         as one imported run (default suite: the bundled one of its definition)\n"
               "  sign ID --key KEY      add an Ed25519 signature over the run digest to a stored run\n"
               "  push URL FILE          send a manifest to an index (ropegrad serve); see runs push --help\n"
               "  cite ID                a citation line\n"
               "  history ID | --group KEY   the primary statistic and each workload over revisions, with intervals\n"
               "  check ID [--against REF] [--threshold PCT] [--alpha A]\n"
               "                         per workload FAST/SLOW/SAME/UNCLEAR against the previous revision\n"
               "                         (exit 1 on any SLOW; `runs check --help` gives the method)\n"
               "  regressions [--json]   every line's latest revision checked against its previous one\n\n"
               "  --db FILE              registry (default $ROPEGRAD_DB, else $XDG_DATA_HOME/ropegrad/runs.db,\n"
               "                         else ~/.local/share/ropegrad/runs.db)\n"
               "  --verbose              (replicate) progress on stderr\n\n"
               "exit status: 0 ok, 1 a check failed (digest mismatch, replication disagreed), 2 bad usage or input\n");
}

typedef struct runs_ctx {
    const char *db;
    const char *out;
    const char *evidence;
    const char *suite;
    const char *key;
    const char *trusted;
    const char *definition;   /* import of a traces file: --definition FILE */
    int verbose;
    int json;   /* list --json */
    rg_registry *g;
    char err[RG_ERRLEN];
} runs_ctx;

static int open_db(runs_ctx *x, int create)
{
    if (rg_registry_open(rg_registry_path(x->db), create, &x->g, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs: %s\n", x->err);
        return 2;
    }
    return 0;
}

static int cmd_list(runs_ctx *x)
{
    rg_run_row *rows;
    size_t n;
    if (rg_registry_list(x->g, &rows, &n, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs list: %s\n", x->err);
        return 2;
    }
    if (n == 0) {
        tprintf("no runs in %s\n", rg_registry_path(x->db));
        free(rows);
        return 0;
    }
    tprintf("%5s  %-24s  %-24s  %-26s  %14s  ", "id", "observed", "device", "implementation", "primary us");
    print_cols("SOL · x reference · faster", 46);
    tprintf("  %-7s  %s\n", "status", "evidence");
    for (size_t i = 0; i < n; i++) {
        rg_manifest m;
        char why[200] = "", untimed[320] = "";
        int suspect = 0;
        rg_sol_check sol = {.state = RG_SOL_VERIFIED};
        rg_run_row *r = &rows[i];
        if (!rg_registry_get(x->g, r->id, NULL, &m, x->err, sizeof x->err)) {
            suspect = rg_manifest_suspect(&m, why, sizeof why);
            rg_manifest_sol_check(&m, &sol, NULL, x->err, sizeof x->err);
            rg_untimed_label(r->status, r->primary_ns, rg_manifest_first_failure(&m), untimed, sizeof untimed);
            rg_manifest_free(&m);
        }
        char a[32], k[96], h[128], p[64];
        if (isnan(r->primary_ns)) snprintf(p, sizeof p, "not timed");
        else snprintf(p, sizeof p, "%s %.10s", us(a, sizeof a, r->primary_ns), r->primary_statistic);
        headline(h, sizeof h, r->sol_score, r->avg_speedup, r->fast_count, r->fast_total);
        tprintf("%5lld  %-24.24s  %-24.24s  %-26.26s  %14s  ", (long long)r->id, r->observed_at, r->device,
               impl_label(k, sizeof k, r), p);
        print_cols(h, 46);
        tprintf("  %-7s  %s", r->status, r->evidence);
        if (r->replicates_of) tprintf(" (replicates #%lld)", (long long)r->replicates_of);
        if (untimed[0]) tprintf("  %s", untimed);
        if (suspect) tprintf("  SUSPECT: %s", why);
        if (sol.state == RG_SOL_UNVERIFIABLE) tprintf("  UNVERIFIABLE: %s", sol.basis);
        tprintf("\n");
    }
    free(rows);
    return 0;
}

/* `runs list --json`: the same rows as one JSON array on stdout, for scripts
 * (times in nanoseconds; null when unknown). Strings pass through rg_term
 * first: cJSON escapes C0 controls but not C1 or invalid UTF-8. */
static int cmd_list_json(runs_ctx *x)
{
    rg_run_row *rows;
    size_t n;
    if (rg_registry_list(x->g, &rows, &n, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs list: %s\n", x->err);
        return 2;
    }
    cJSON *arr = cJSON_CreateArray();
    int oom = !arr;
    for (size_t i = 0; i < n && !oom; i++) {
        const rg_run_row *r = &rows[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            oom = 1;
            break;
        }
        const struct { const char *k, *v; } strs[] = {
            {"observed_at", r->observed_at}, {"created_at", r->created_at}, {"definition", r->definition},
            {"device", r->device}, {"architecture", r->architecture}, {"backend", r->backend},
            {"kernel_name", r->kernel_name}, {"status", r->status}, {"evidence", r->evidence},
            {"source", r->source}, {"external_id", r->external_id}, {"family", r->family},
            {"primary_statistic", r->primary_statistic}, {"comparison_key", r->comparison_key},
            {"implementation_digest", r->implementation_digest}, {"run_digest", r->run_digest},
        };
        const struct { const char *k; double v; } nums[] = {
            {"id", (double)r->id}, {"kernel", r->kernel >= 0 ? r->kernel : NAN},
            {"passed", r->passed >= 0 ? r->passed : NAN}, {"total", r->total >= 0 ? r->total : NAN},
            {"workloads", r->n_workloads}, {"primary_ns", r->primary_ns}, {"geomean_ns", r->geomean_ns},
            {"mean_ns", r->mean_ns}, {"sol_score", r->sol_score}, {"avg_speedup", r->avg_speedup},
            {"fast_count", r->fast_count}, {"fast_total", r->fast_total},
        };
        for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
            oom |= !(isfinite(nums[k].v) ? cJSON_AddNumberToObject(o, nums[k].k, nums[k].v)
                                         : cJSON_AddNullToObject(o, nums[k].k));
        for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++)
            oom |= !cJSON_AddStringToObject(o, strs[k].k, rg_term(strs[k].v));
        oom |= !(r->replicates_of ? cJSON_AddNumberToObject(o, "replicates_of", (double)r->replicates_of)
                                  : cJSON_AddNullToObject(o, "replicates_of"));
        rg_manifest m;   /* the suspect flag (rank.h) and the T_SOL check (sol_check.h): derived from the record */
        char why[200] = "", untimed[320] = "";
        int suspect = 0;
        rg_sol_check sol = {.state = RG_SOL_UNVERIFIABLE, .basis = "the record cannot be read"};
        if (!rg_registry_get(x->g, r->id, NULL, &m, x->err, sizeof x->err)) {
            suspect = rg_manifest_suspect(&m, why, sizeof why);
            rg_manifest_sol_check(&m, &sol, NULL, x->err, sizeof x->err);
            rg_untimed_label(r->status, r->primary_ns, rg_manifest_first_failure(&m), untimed, sizeof untimed);
            rg_manifest_free(&m);
        }
        /* A run with nothing timed says so ("failed: REASON", "correctness only"); null when timed. */
        oom |= !(untimed[0] ? cJSON_AddStringToObject(o, "not_timed", rg_term(untimed))
                            : cJSON_AddNullToObject(o, "not_timed"));
        oom |= !cJSON_AddStringToObject(o, "verification", rg_sol_state_name(sol.state));
        oom |= !cJSON_AddStringToObject(o, "verification_basis", rg_term(sol.basis));
        oom |= !cJSON_AddBoolToObject(o, "suspect", suspect);
        oom |= !(suspect ? cJSON_AddStringToObject(o, "suspect_reason", why) : cJSON_AddNullToObject(o, "suspect_reason"));
    }
    free(rows);
    char *text = oom ? NULL : cJSON_Print(arr);
    cJSON_Delete(arr);
    if (!text) {
        rg_term_printf(stderr, "ropegrad runs list: out of memory\n");
        return 2;
    }
    int rc = fputs(text, stdout) < 0 || putchar('\n') == EOF || fflush(stdout) ? 2 : 0;
    if (rc) rg_term_printf(stderr, "ropegrad runs list: cannot write to standard output\n");
    free(text);
    return rc;
}

/* Every signature the run carries (key id, when received) and the metadata
 * in which copies of it differed. */
static void show_copies(runs_ctx *x, int64_t id)
{
    rg_run_signature *sigs = NULL;
    rg_run_conflict *cf = NULL;
    size_t ns = 0, nc = 0;
    if (rg_registry_signatures(x->g, id, &sigs, &ns, x->err, sizeof x->err) ||
        rg_registry_conflicts(x->g, id, &cf, &nc, x->err, sizeof x->err)) {
        tprintf("  signatures      (cannot read: %s)\n", x->err);
        free(sigs);
        return;
    }
    for (size_t i = 0; i < ns; i++)
        tprintf("  signature       ed25519 %s (received %s)\n", sigs[i].key_id, sigs[i].received_at);
    for (size_t i = 0; i < nc; i++)
        tprintf("  conflict        %s: stored %s; a copy received %s says %s\n", cf[i].member, cf[i].stored,
                cf[i].received_at, cf[i].offered);
    free(sigs);
    rg_run_conflicts_free(cf, nc);
}

static int cmd_show(runs_ctx *x, int64_t id)
{
    rg_run_row r;
    rg_manifest m;
    int rc = rg_registry_get(x->g, id, &r, &m, x->err, sizeof x->err);
    if (rc) {
        rg_term_printf(stderr, "ropegrad runs show: %s\n", x->err);
        return 2;
    }
    char a[32], b[32], c[32], d[32], e[32], f[32], h[160];
    int imported = !strcmp(r.evidence, RG_EVIDENCE_IMPORTED);
    tprintf("Run #%lld  %s\n", (long long)r.id, m.benchmark);
    tprintf("%s on %s %s  |  %s  |  evidence: %s%s  |  observed %s\n\n", impl_label(h, sizeof h, &r), m.product,
           m.architecture, m.status, r.evidence, imported ? " (measured elsewhere; digests verified)" : "",
           m.observed_at);
    char untimed[320] = "";
    rg_untimed_label(m.status, m.primary_ns, rg_manifest_first_failure(&m), untimed, sizeof untimed);
    if (untimed[0]) tprintf("  Primary measurement  not timed: %s\n", untimed);
    else tprintf("  Primary measurement  %.6g ns %s (%.2f µs)\n", m.primary_ns, m.primary_statistic, m.primary_ns / 1e3);
    for (size_t i = 0; i < m.n_latency; i++)
        if (strcmp(m.latency_ns[i].name, m.primary_statistic))
            tprintf("                       %.6g ns %s\n", m.latency_ns[i].value, m.latency_ns[i].name);
    headline(h, sizeof h, m.sol_score, m.avg_speedup, m.fast_1_count, m.fast_1_total);
    tprintf("  Headline             %s\n", h);
    tprintf("  SOL score            %s      %s\n", fmt4(a, sizeof a, m.sol_score),
           m.t_sol_detail[0] ? m.t_sol_detail : m.have_detail ? "" : "as published by the source");
    if (isfinite(m.avg_speedup))
        tprintf("  Speedup              %.2fx     mean T_b/T_k over the workloads; baseline: %s\n", m.avg_speedup,
               m.baseline_mode[0] ? m.baseline_mode : m.source);
    else tprintf("  Speedup              -          no baseline (bench --baseline FILE)\n");
    if (isfinite(m.fast_1_total))
        tprintf("  Cases faster         %.0f / %.0f   correct and faster than the reference\n", m.fast_1_count,
               m.fast_1_total);
    rg_ranked me;
    int ranked;
    if (!rg_registry_rank_run(x->g, id, &me, &ranked, x->err, sizeof x->err)) {
        char rk[16], iv[96];
        tprintf("  Interval             %s us (95%%, the primary statistic)\n", rg_interval_label(&me.iv, iv, sizeof iv));
        if (me.rank)
            tprintf("  Rank                 %s of %d in its comparison group%s\n", rg_rank_label(&me, rk, sizeof rk),
                   ranked, me.tied ? " (tied: the intervals overlap)" : "");
        else tprintf("  Rank                 not ranked (%s); %d ranked runs in its group\n",
                     untimed[0] ? untimed : "not passed", ranked);
        tprintf("                       method: %s\n", RG_RANK_METHOD);
        if (me.suspect)
            tprintf("  SUSPECT              %s%s\n", me.suspect_why,
                   me.confirmed ? " (confirmed by a replication here)" : "; ranks after the others until replicated");
        tprintf("  T_SOL check          %s: %s%s\n", rg_sol_state_name(me.sol.state), me.sol.basis,
               me.sol.state == RG_SOL_UNVERIFIABLE ? "; ranks after the verified runs" : "");
        tprintf("  Revision             %s\n", me.revision);
    }
    tprintf("\nIdentity\n");
    if (m.impl_name[0])
        tprintf("  implementation  %s %s, backend %s, kernel %d (%s)\n", m.impl_name, m.impl_version, m.backend,
               m.kernel, m.kernel_name);
    else tprintf("  implementation  not in this record (named by its digest only)\n");
    tprintf("  source          %s\n", m.source);
    if (m.external_id[0]) tprintf("  external id     %s\n", m.external_id);
    tprintf("  benchmark       %s\n", m.benchmark);
    tprintf("  device          %s (%s), vendor %s\n", m.product, m.architecture, m.vendor);
    tprintf("  comparison key  %s%s\n", r.comparison_key,
           m.comparison_key_recorded ? "" : " (by the rule: the record carries none)");

    if (m.total >= 0) tprintf("\nCorrectness  %d / %d workloads passed\n", m.passed, m.total);
    else tprintf("\nCorrectness  %s, as marked by the source\n", m.status);
    if (m.n_workloads) {
        tprintf("\nWorkload  %zu workloads of %s\n", m.n_workloads, m.benchmark);
        tprintf("  %4s %-24s  %12s %12s %12s %10s  %10s %10s %6s  %s\n", "#", "axes", "median us", "min us", "max us",
               "GB/s", "T_SOL us", "T_b us", "SOL", "correct (max abs err)");
        for (size_t i = 0; i < m.n_workloads; i++) {
            const rg_mf_workload *w = &m.workloads[i];
            char ax[64] = "";
            size_t k = 0;
            for (size_t j = 0; j < w->n_axes && k < sizeof ax; j++)
                k += (size_t)snprintf(ax + k, sizeof ax - k, "%s%.0f", j ? "x" : "", w->axes[j].value);
            char gb[32] = "-";
            if (isfinite(w->gbps)) snprintf(gb, sizeof gb, "%.1f", w->gbps);
            tprintf("  %4d %-24s  %12s %12s %12s %10s  %10s %10s %6s  %s (%.3g)\n", w->index, ax,
                   us(a, sizeof a, w->median), us(b, sizeof b, w->min), us(c, sizeof c, w->max), gb,
                   us(d, sizeof d, w->t_sol_ns), us(e, sizeof e, w->t_b_ns), fmt4(f, sizeof f, w->sol_score),
                   w->pass ? "yes" : "NO", w->max_abs_err);
        }
    }
    tprintf("\nProtocol\n");
    tprintf("  harness     %s %s\n", m.harness_name, m.harness_version);
    tprintf("  timer       %s, primary statistic %s\n", m.timer, m.measurement_statistic);
    if (m.warmup >= 0)
        tprintf("  measured    warmup %d, iterations %d, seed %s, inputs %s\n", m.warmup, m.iterations, m.seed, m.inputs);
    if (m.cold_l2[0]) tprintf("  cold L2     %s\n", m.cold_l2);
    tprintf("  correctness %s%s%s\n", m.correctness_reference, m.correctness_comparator[0] ? "; comparator " : "",
           m.correctness_comparator);
    tprintf("  family      %s\n", m.family);
    tprintf("\nEnvironment\n");
    tprintf("  GPU/device  %s (%s), vendor %s\n", m.product, m.architecture, m.vendor);
    for (size_t i = 0; i < m.n_libraries; i++) tprintf("  library     %s %s\n", m.libraries[i].key, m.libraries[i].value);
    if (m.hostname[0]) tprintf("  host        %s, %s\n", m.hostname, m.os);
    if (m.cpu_model[0]) tprintf("  CPU         %s (%d threads, %s)\n", m.cpu_model, m.cpu_threads, m.cpu_isa);
    if (isfinite(m.sm_clock_start))
        tprintf("  clocks MHz  SM %.0f -> %.0f, memory %.0f -> %.0f\n", m.sm_clock_start, m.sm_clock_end,
               m.mem_clock_start, m.mem_clock_end);
    if (m.build_flags[0]) tprintf("  build       %s\n", m.build_flags);
    tprintf("\nDigests\n");
    tprintf("  run             %s\n", r.run_digest);
    tprintf("  protocol        %s\n", m.protocol_digest);
    tprintf("  workload        %s%s\n", m.workload_digest, m.obj[RG_ROLE_WORKLOAD].present ? "" : " (object not in the record)");
    tprintf("  environment     %s\n", m.environment_digest);
    tprintf("  implementation  %s%s\n", m.implementation_digest,
           m.obj[RG_ROLE_IMPLEMENTATION].present ? "" : " (object not in the record)");
    if (m.sources_digest[0]) tprintf("  kernel sources  %s\n", m.sources_digest);
    show_copies(x, id);

    rg_replication *reps;
    size_t nrep;
    if (!rg_registry_replications(x->g, id, &reps, &nrep, x->err, sizeof x->err)) {
        tprintf("\nReplications%s\n", nrep ? "" : "  none");
        for (size_t i = 0; i < nrep; i++) {
            if (reps[i].original_id == id)
                tprintf("  run #%lld replicated it on %s: %s (%d of %d workloads agreed by their samples)\n",
                       (long long)reps[i].replica_id, reps[i].created_at, reps[i].agreed ? "agreed" : "did not agree",
                       reps[i].within, reps[i].total);
            else
                tprintf("  this run replicates run #%lld: %s (%d of %d workloads agreed by their samples)\n",
                       (long long)reps[i].original_id, reps[i].agreed ? "agreed" : "did not agree", reps[i].within,
                       reps[i].total);
        }
        free(reps);
    }
    rg_note *notes;
    size_t nn;
    if (!rg_registry_notes(x->g, id, &notes, &nn, x->err, sizeof x->err)) {
        tprintf("\nNotes%s\n", nn ? "" : "  none");
        for (size_t i = 0; i < nn; i++) tprintf("  %s  %s\n", notes[i].created_at, notes[i].text);
        rg_notes_free(notes, nn);
    }
    rg_manifest_free(&m);
    return 0;
}

static int cmp_key(const void *pa, const void *pb)
{
    const rg_run_row *a = pa, *b = pb;
    int c = strcmp(a->comparison_key, b->comparison_key);
    if (c) return c;
    return a->id < b->id ? -1 : a->id > b->id;
}


static int cmd_rank(runs_ctx *x)
{
    rg_run_row *rows;
    size_t n;
    if (rg_registry_list(x->g, &rows, &n, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs rank: %s\n", x->err);
        return 2;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!x->evidence || !strcmp(rows[i].evidence, x->evidence)) rows[m++] = rows[i];
    if (m == 0) {
        tprintf("no %s%sruns in %s\n", x->evidence ? x->evidence : "", x->evidence ? " " : "", rg_registry_path(x->db));
        free(rows);
        return 0;
    }
    qsort(rows, m, sizeof *rows, cmp_key);
    tprintf("rank: %s; unverifiable runs (no T_SOL the index can compute) rank after the verified ones, suspect\n"
           "runs (faster than the index's T_SOL, or an all-zero/NaN output) after them until a replication confirms\n"
           "them; failed runs and runs that timed nothing (check: correctness only) are not ranked; #1 is the best\n"
           "passed, verified, non-suspect run\n\n", RG_RANK_METHOD);
    int rc = 0;
    for (size_t i = 0; i < m && !rc;) {
        size_t j = i;
        while (j < m && !strcmp(rows[j].comparison_key, rows[i].comparison_key)) j++;
        rg_ranked *e;
        size_t ne;
        if (rg_registry_rank_group(x->g, rows[i].comparison_key, x->evidence, &e, &ne, x->err, sizeof x->err)) {
            fprintf(stderr, "ropegrad runs rank: %s\n", x->err);
            rc = 2;
            break;
        }
        tprintf("group %s  %s  on %s  (%s, %s)\n", short_digest(rows[i].comparison_key), rows[i].definition,
               rows[i].device, rows[i].family, rows[i].primary_statistic);
        tprintf("  %4s  %5s  %-30s  %8s  ", "rank", "id", "primary us [95% interval]", "vs #1");
        print_cols("SOL · x reference · faster", 44);
        tprintf("  %-28s  %-10s  %-22s  %s\n", "implementation", "evidence", "revision", "flags");
        double best = NAN;   /* #1's figure (rank.h: the first entry that may be #1) */
        for (size_t k = 0; k < ne && isnan(best); k++)
            if (rg_ranked_may_be_first(&e[k])) best = e[k].iv.est;
        for (size_t k = 0; k < ne; k++) {
            const rg_ranked *r = &e[k];
            char a[64], rk[16], kn[96], ratio[32], h[128];
            rg_rank_label(r, rk, sizeof rk);
            if (r->rank && isfinite(best)) snprintf(ratio, sizeof ratio, "%.3fx", r->iv.est / best);
            else snprintf(ratio, sizeof ratio, r->rank ? "-" : strcmp(r->row.status, "passed") ? "failed" : "unranked");
            char untimed[64];
            if (!rg_untimed_label(r->row.status, r->row.primary_ns, NULL, untimed, sizeof untimed))
                snprintf(a, sizeof a, "%s", untimed);
            else rg_interval_label(&r->iv, a, sizeof a);
            headline(h, sizeof h, r->row.sol_score, r->row.avg_speedup, r->row.fast_count, r->row.fast_total);
            tprintf("  %4s  %5lld  %-30s  %8s  ", rk, (long long)r->row.id, a, ratio);
            print_cols(h, 44);
            tprintf("  %-28.28s  %-10s  %-22s  %s%s%s%s\n", impl_label(kn, sizeof kn, &r->row), r->row.evidence,
                   r->revision, r->suspect ? (r->confirmed ? "SUSPECT (replicated): " : "SUSPECT: ") : "",
                   r->suspect ? r->suspect_why : "", r->sol.state == RG_SOL_UNVERIFIABLE ? "UNVERIFIABLE: " : "",
                   r->sol.state == RG_SOL_UNVERIFIABLE ? r->sol.basis : "");
        }
        tprintf("\n");
        free(e);
        i = j;
    }
    free(rows);
    return rc;
}

static int cmd_compare(runs_ctx *x, int64_t ida, int64_t idb)
{
    if (!idb) {
        int rank, size;
        int64_t first;
        if (rg_registry_rank_of(x->g, ida, &rank, &size, &first, x->err, sizeof x->err)) {
            rg_term_printf(stderr, "ropegrad runs compare: %s\n", x->err);
            return 2;
        }
        if (!first) {
            tprintf("run #%lld: its comparison group has no #1 (no passed, verified, non-suspect run) to compare "
                   "with\n", (long long)ida);
            return 0;
        }
        if (first == ida) {
            tprintf("run #%lld is #1 of its comparison group (%d ranked run%s)\n", (long long)ida, size,
                   size == 1 ? "" : "s");
            return 0;
        }
        idb = ida;
        ida = first;   /* #1 on the left, the run in question on the right */
    }
    rg_run_row ra, rb;
    rg_manifest ma, mb;
    if (rg_registry_get(x->g, ida, &ra, &ma, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs compare: %s\n", x->err);
        return 2;
    }
    if (rg_registry_get(x->g, idb, &rb, &mb, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs compare: %s\n", x->err);
        rg_manifest_free(&ma);
        return 2;
    }
    char la[96], lb[96], s1[32], s2[32];
    tprintf("A = run #%lld: %s on %s, %s, %s\n", (long long)ra.id, impl_label(la, sizeof la, &ra), ra.device, ra.status,
           ra.evidence);
    tprintf("B = run #%lld: %s on %s, %s, %s\n", (long long)rb.id, impl_label(lb, sizeof lb, &rb), rb.device, rb.status,
           rb.evidence);
    if (strcmp(ra.comparison_key, rb.comparison_key))
        tprintf("note: different comparison keys (workloads, device or protocol differ): ratios are not a ranking\n");
    char why[200];
    if (rg_manifest_suspect(&ma, why, sizeof why)) tprintf("note: A is SUSPECT: %s\n", why);
    if (rg_manifest_suspect(&mb, why, sizeof why)) tprintf("note: B is SUSPECT: %s\n", why);
    rg_sol_check sa, sb;
    if (!rg_manifest_sol_check(&ma, &sa, NULL, why, sizeof why) && sa.state == RG_SOL_UNVERIFIABLE)
        tprintf("note: A is UNVERIFIABLE: %s\n", sa.basis);
    if (!rg_manifest_sol_check(&mb, &sb, NULL, why, sizeof why) && sb.state == RG_SOL_UNVERIFIABLE)
        tprintf("note: B is UNVERIFIABLE: %s\n", sb.basis);
    tprintf("\n  primary: A %s us %s, B %s us %s\n", us(s1, sizeof s1, ra.primary_ns), ra.primary_statistic,
           us(s2, sizeof s2, rb.primary_ns), rb.primary_statistic);
    if (!ma.n_workloads || !mb.n_workloads) {
        tprintf("  no per-workload figures in %s\n", !ma.n_workloads ? "A" : "B");
        rg_manifest_free(&ma);
        rg_manifest_free(&mb);
        return 0;
    }
    tprintf("\n  %4s  %12s  %12s  %-28s  %9s  %-8s  %s\n", "#", "A median us", "B median us",
           "B / A [95% interval]", "p", "verdict", "");
    int shared = 0;
    double lsa = 0, lsb = 0;
    for (size_t i = 0; i < ma.n_workloads; i++) {
        const rg_mf_workload *a = &ma.workloads[i], *b = rg_manifest_find_workload(&mb, a, i);
        if (!b) {
            tprintf("  %4d  %12s  %12s  %8s\n", a->index, us(s1, sizeof s1, a->median), "-", "-");
            continue;
        }
        if (!isfinite(a->median) || !isfinite(b->median)) {   /* failed, or a `check` run: nothing to compare */
            tprintf("  %4d  %12s  %12s  not timed in %s\n", a->index, us(s1, sizeof s1, a->median),
                    us(s2, sizeof s2, b->median), isfinite(a->median) ? "B" : isfinite(b->median) ? "A" : "A or B");
            continue;
        }
        rg_shift sh;
        char ratio[64], p[16], v[16];
        if (a->n_samples && b->n_samples && a->n_samples < 1000000 && b->n_samples < 1000000 &&
            !rg_shift_estimate(a->samples, (int)a->n_samples, b->samples, (int)b->n_samples, RG_STATS_CONF, &sh)) {
            snprintf(ratio, sizeof ratio, "%.3fx [%.3f, %.3f]", sh.ratio, sh.lo, sh.hi);
            snprintf(p, sizeof p, "%.3g", sh.p);
            snprintf(v, sizeof v, "%s", rg_verdict_name(rg_shift_verdict(&sh, RG_STATS_ALPHA, RG_STATS_THRESHOLD)));
        } else {
            snprintf(ratio, sizeof ratio, "%.3fx [no samples]", b->median / a->median);
            snprintf(p, sizeof p, "-");
            snprintf(v, sizeof v, "UNCLEAR");
        }
        tprintf("  %4d  %12s  %12s  %-28s  %9s  %-8s  %s\n", a->index, us(s1, sizeof s1, a->median),
               us(s2, sizeof s2, b->median), ratio, p, v,
               b->median < a->median ? "B faster" : b->median > a->median ? "A faster" : "");
        shared++;
        lsa += log(a->median);
        lsb += log(b->median);
    }
    if (shared) {
        double ga = exp(lsa / shared), gb = exp(lsb / shared);
        tprintf("  %4s  %12s  %12s  %7.3fx  geomean over %d shared workload%s\n", "all", us(s1, sizeof s1, ga),
               us(s2, sizeof s2, gb), gb / ga, shared, shared == 1 ? "" : "s");
    } else {
        tprintf("  no workloads in common\n");
    }
    tprintf("\n  B / A: Hodges-Lehmann ratio of the samples, %.0f%% distribution-free interval, Mann-Whitney U p;\n"
           "  verdict (SLOW = B slower) at alpha %g and a %.0f%% minimum effect, as `runs check`\n",
           100 * RG_STATS_CONF, RG_STATS_ALPHA, 100 * RG_STATS_THRESHOLD);
    rg_manifest_free(&ma);
    rg_manifest_free(&mb);
    return 0;
}

static int cmd_export(runs_ctx *x, int64_t id)
{
    char *stored;
    if (rg_registry_get_text(x->g, id, &stored, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs export: %s\n", x->err);
        return 2;
    }
    /* The stored manifest, indented for reading (digests do not depend on layout). */
    cJSON *doc = rg_json_parse_strict(stored, strlen(stored), "stored manifest", x->err, sizeof x->err);
    free(stored);
    char *text = doc ? rg_json_print(doc, 1, x->err, sizeof x->err) : NULL;
    cJSON_Delete(doc);
    if (!text) {
        rg_term_printf(stderr, "ropegrad runs export: %s\n", x->err);
        return 2;
    }
    int rc = 0;
    size_t n = strlen(text);
    if (x->out && !rg_cli_is_stdout(x->out)) {
        if (rg_cli_write_output(x->out, text, n, x->err, sizeof x->err)) {
            rg_term_printf(stderr, "ropegrad runs export: %s\n", x->err);
            rc = 2;
        } else {
            rg_term_printf(stderr, "exported run #%lld to %s\n", (long long)id, x->out);
        }
    } else if (fwrite(text, 1, n, stdout) != n || fflush(stdout)) {
        rg_term_printf(stderr, "ropegrad runs export: cannot write to standard output\n");
        rc = 2;
    }
    free(text);
    return rc;
}

/* The same steps as the index's POST /api/runs (rg_manifest_parse_verified):
 * read strictly, convert an old bundle, verify every digest and signature,
 * then store the bytes as they came. */
static int cmd_import(runs_ctx *x, const char *path)
{
    size_t n;
    char *bytes = rg_read_file_bounded(path, RG_JSON_MAX_MANIFEST, &n, x->err, sizeof x->err);
    if (!bytes) {
        rg_term_printf(stderr, "ropegrad runs import: %s\n", x->err);
        return 2;
    }
    cJSON *m;
    int converted;
    if (rg_traces_sniff(bytes, n)) {   /* the official evaluator's traces.jsonl */
        rg_import_traces_opts o = {path, x->db, x->suite, x->definition, x->trusted};
        int trc = rg_cli_import_traces(&o, bytes, n);
        free(bytes);
        return trc;
    }
    if (x->suite || x->definition) {
        rg_term_printf(stderr, "ropegrad runs import: %s: --suite and --definition apply to a traces file "
                               "(sol-execbench -o traces.jsonl), not to a manifest\n", path);
        free(bytes);
        return 2;
    }
    int rc = rg_manifest_parse_verified(bytes, n, x->trusted, &m, &converted, x->err, sizeof x->err);
    if (rc) {
        rg_term_printf(stderr, "ropegrad runs import: %s: %s\n", path, x->err);
        free(bytes);
        return rc == 1 ? 1 : 2;
    }
    char sigs[RG_ERRLEN];
    snprintf(sigs, sizeof sigs, "%s", x->err);
    int64_t id;
    int existed;
    rc = open_db(x, 1);
    if (!rc)
        rc = rg_registry_store_bytes(x->g, m, converted ? NULL : bytes, n, RG_EVIDENCE_IMPORTED, &id, &existed,
                                     x->err, sizeof x->err);   /* an old bundle is stored as converted */
    cJSON_Delete(m);
    free(bytes);
    if (rc) {
        if (x->g) rg_term_printf(stderr, "ropegrad runs import: %s\n", x->err);
        return 2;
    }
    if (existed)
        tprintf("%s: already in the registry as run #%lld%s%s\n", path, (long long)id,
                existed & RG_STORED_SIGNED ? "; its new signatures were added" : "",
                existed & RG_STORED_CONFLICT ? "; its differing metadata is kept as a conflict (runs show)" : "");
    else tprintf("%s: verified%s and imported as run #%lld (evidence: imported; signatures: %s)\n", path,
                converted ? " (an old ManifestBundle, converted)" : "", (long long)id, sigs);
    return 0;
}

static int cmd_cite(runs_ctx *x, int64_t id)
{
    rg_run_row r;
    if (rg_registry_get(x->g, id, &r, NULL, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs cite: %s\n", x->err);
        return 2;
    }
    char today[16], k[96];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(today, sizeof today, "%Y-%m-%d", &tm);
    tprintf("ropegrad run #%lld, %s, %s on %s, %s, %s, observed %s, accessed %s.\n", (long long)r.id, r.definition,
           impl_label(k, sizeof k, &r), r.device, r.evidence, r.run_digest, r.observed_at, today);
    return 0;
}

static int cmd_sign(runs_ctx *x, int64_t id)
{
    char *stored;
    if (rg_registry_get_text(x->g, id, &stored, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs sign: %s\n", x->err);
        return 2;
    }
    cJSON *doc = rg_json_parse_strict(stored, strlen(stored), "stored manifest", x->err, sizeof x->err);
    free(stored);
    char key_id[RG_DIGEST_LEN];
    int rc = !doc || rg_manifest_sign(doc, x->key, key_id, x->err, sizeof x->err) ||
             rg_registry_replace_manifest(x->g, id, doc, x->err, sizeof x->err);
    cJSON_Delete(doc);
    if (rc) {
        rg_term_printf(stderr, "ropegrad runs sign: %s\n", x->err);
        return 2;
    }
    tprintf("run #%lld signed (ed25519, key %s); its digests are unchanged\n", (long long)id, key_id);
    return 0;
}

int rg_cmd_runs(int argc, char **argv)
{
    enum { OPT_DB = 1000, OPT_OUT, OPT_VERBOSE, OPT_EVIDENCE, OPT_SUITE, OPT_KEY, OPT_TRUSTED, OPT_JSON, OPT_DEFINITION };
    static const struct option longopts[] = {{"db", required_argument, NULL, OPT_DB},
                                             {"out", required_argument, NULL, OPT_OUT},
                                             {"verbose", no_argument, NULL, OPT_VERBOSE},
                                             {"evidence", required_argument, NULL, OPT_EVIDENCE},
                                             {"suite", required_argument, NULL, OPT_SUITE},
                                             {"key", required_argument, NULL, OPT_KEY},
                                             {"trusted-keys", required_argument, NULL, OPT_TRUSTED},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"definition", required_argument, NULL, OPT_DEFINITION},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    /* history, check and regressions have their own options (history.c): the first
     * word that is neither an option nor an option's value names the command. */
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-') {
            for (size_t k = 0; k < sizeof longopts / sizeof longopts[0] - 1; k++)
                if (longopts[k].has_arg == required_argument && !strncmp(argv[i], "--", 2) &&
                    !strcmp(argv[i] + 2, longopts[k].name))
                    i++;
            continue;
        }
        if (!strcmp(argv[i], "history") || !strcmp(argv[i], "check") || !strcmp(argv[i], "regressions")) {
            char *sub = argv[i];
            memmove(argv + 2, argv + 1, (size_t)(i - 1) * sizeof *argv);   /* the options before it follow it */
            argv[1] = sub;
            return rg_cmd_runs_history_check(argc - 1, argv + 1);
        }
        break;
    }
    runs_ctx x = {0};
    if (argc > 1 && !strcmp(argv[1], "push")) return rg_cmd_runs_push(argc - 1, argv + 1);   /* push.c */
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_DB: x.db = optarg; break;
        case OPT_OUT: x.out = optarg; break;
        case OPT_VERBOSE: x.verbose = 1; break;
        case OPT_EVIDENCE: x.evidence = optarg; break;
        case OPT_SUITE: x.suite = optarg; break;
        case OPT_KEY: x.key = optarg; break;
        case OPT_TRUSTED: x.trusted = optarg; break;
        case OPT_JSON: x.json = 1; break;
        case OPT_DEFINITION: x.definition = optarg; break;
        case 'h': runs_usage(stdout); return 0;
        case ':': rg_term_printf(stderr, "ropegrad runs: %s needs a value\n", argv[optind - 1]); return 2;
        default: rg_term_printf(stderr, "ropegrad runs: unknown option '%s' (try --help)\n", argv[optind - 1]); return 2;
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
                      {"export", 1, 1, "ID"},       {"import", 1, 1, "FILE"}, {"cite", 1, 1, "ID"},
                      {"sign", 1, 1, "ID --key KEY"}};
    int which = -1;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(sub, subs[i].name)) which = (int)i;
    if (which < 0) {
        rg_term_printf(stderr, "ropegrad runs: unknown command '%s' (try ropegrad runs --help)\n", sub);
        return 2;
    }
    if (npos - 1 < subs[which].min || npos - 1 > subs[which].max) {
        rg_term_printf(stderr, "ropegrad runs %s: expected %s (usage: ropegrad runs %s %s)\n", sub,
                subs[which].args[0] ? subs[which].args : "no arguments", sub, subs[which].args);
        return 2;
    }
    const struct {
        const char *value, *option, *only;
    } scoped[] = {{x.out, "--out", "export"},   {x.evidence, "--evidence", "rank"},
                  {x.suite, "--suite", strcmp(sub, "import") ? "replicate" : "import"},
                  {x.definition, "--definition", "import"},
                  {x.key, "--key", "sign"},     {x.trusted, "--trusted-keys", "import"},
                  {x.json ? "" : NULL, "--json", "list"}};
    for (size_t i = 0; i < sizeof scoped / sizeof scoped[0]; i++)
        if (scoped[i].value && strcmp(sub, scoped[i].only)) {
            rg_term_printf(stderr, "ropegrad runs %s: %s only applies to %s\n", sub, scoped[i].option, scoped[i].only);
            return 2;
        }
    if (x.evidence && strcmp(x.evidence, RG_EVIDENCE_MEASURED) && strcmp(x.evidence, RG_EVIDENCE_REPLICATED) &&
        strcmp(x.evidence, RG_EVIDENCE_IMPORTED)) {
        rg_term_printf(stderr, "ropegrad runs rank: --evidence '%.40s': expected measured, replicated or imported\n",
                x.evidence);
        return 2;
    }
    if (!strcmp(sub, "sign") && !x.key) {
        rg_term_printf(stderr, "ropegrad runs sign: --key KEY is required (a private key from `ropegrad keygen`)\n");
        return 2;
    }
    if (!strcmp(sub, "import")) {
        int rc = cmd_import(&x, pos[1]);
        rg_registry_close(x.g);
        return rc;
    }
    int64_t id = 0, id2 = 0;
    if (subs[which].min >= 1 && rg_cli_parse_run_id(sub, pos[1], &id)) return 2;
    if (!strcmp(sub, "compare") && npos == 3 && rg_cli_parse_run_id(sub, pos[2], &id2)) return 2;
    if (open_db(&x, 0)) return 2;
    int rc;
    if (!strcmp(sub, "list")) rc = x.json ? cmd_list_json(&x) : cmd_list(&x);
    else if (!strcmp(sub, "show")) rc = cmd_show(&x, id);
    else if (!strcmp(sub, "rank")) rc = cmd_rank(&x);
    else if (!strcmp(sub, "compare")) rc = cmd_compare(&x, id, id2);
    else if (!strcmp(sub, "export")) rc = cmd_export(&x, id);
    else if (!strcmp(sub, "cite")) rc = cmd_cite(&x, id);
    else if (!strcmp(sub, "sign")) rc = cmd_sign(&x, id);
    else if (!strcmp(sub, "note")) {
        rc = rg_registry_add_note(x.g, id, pos[2], x.err, sizeof x.err) ? 2 : 0;
        if (rc) rg_term_printf(stderr, "ropegrad runs note: %s\n", x.err);
        else tprintf("note added to run #%lld (evidence unchanged)\n", (long long)id);
    } else {   /* replicate */
        int64_t rid;
        int agreed;
        char suite[4096];
        if (x.suite) snprintf(suite, sizeof suite, "%s", x.suite);
        else rg_cli_default_suite(suite, sizeof suite);
        rc = rg_record_replicate(x.g, id, suite, x.verbose, stdout, &rid, &agreed, x.err, sizeof x.err);
        if (rc) rg_term_printf(stderr, "ropegrad runs replicate: %s\n", x.err);
        else rc = agreed ? 0 : 1;
    }
    rg_registry_close(x.g);
    return rc;
}

/* ---- report -------------------------------------------------------------------------- */

int rg_cmd_report(int argc, char **argv)
{
    enum { OPT_DB = 1000, OPT_HTML, OPT_BASE };
    static const struct option longopts[] = {{"db", required_argument, NULL, OPT_DB},
                                             {"html", required_argument, NULL, OPT_HTML},
                                             {"base-url", required_argument, NULL, OPT_BASE},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *db = NULL, *html = NULL, *base_url = NULL;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_DB: db = optarg; break;
        case OPT_HTML: html = optarg; break;
        case OPT_BASE: base_url = optarg; break;
        case 'h':
            tprintf("usage: ropegrad report ID --html FILE [--base-url URL] [--db FILE]\n\n"
                   "One self-contained HTML page (inline SVG and CSS, no network, no script) for a recorded run.\n"
                   "It links to no other page, unless --base-url names a served index (http://host:port):\n"
                   "then its links go to that index's pages.\n");
            return 0;
        case ':': rg_term_printf(stderr, "ropegrad report: %s needs a value\n", argv[optind - 1]); return 2;
        default: rg_term_printf(stderr, "ropegrad report: unknown option '%s' (try --help)\n", argv[optind - 1]); return 2;
        }
    }
    if (optind != argc - 1 || !html) {
        rg_term_printf(stderr, "ropegrad report: expected one run id and --html FILE (usage: ropegrad report ID --html FILE)\n");
        return 2;
    }
    int64_t id;
    if (rg_cli_parse_run_id("report", argv[optind], &id)) return 2;
    char err[RG_ERRLEN];
    rg_registry *g;
    if (rg_registry_open(rg_registry_path(db), 0, &g, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad report: %s\n", err);
        return 2;
    }
    /* The index's run page (src/index/: one renderer for report, site and serve). */
    char *page = rg_report_page(g, id, base_url, err, sizeof err);
    int rc = 2;
    if (!page || rg_cli_write_output(html, page, strlen(page), err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad report: %s\n", err);
    } else {
        if (!rg_cli_is_stdout(html)) tprintf("report of run #%lld written to %s\n", (long long)id, html);
        rc = 0;
    }
    free(page);
    rg_registry_close(g);
    return rc;
}

/* A command whose only option is --help: -1 to go on, else the exit code
 * (0 after printing help, 2 for an unknown option). */
static int help_only(int argc, char **argv, const char *cmd, const char *help)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(help, stdout);
            return 0;
        }
        rg_term_printf(stderr, "ropegrad %s: unknown option '%s' (try --help)\n", cmd, argv[optind - 1]);
        return 2;
    }
    return -1;
}

/* ---- migrate --------------------------------------------------------------------------- */

int rg_cmd_migrate(int argc, char **argv)
{
    int h = help_only(argc, argv, "migrate",
                      "usage: ropegrad migrate FILE...\n\nConverts old ropegrad manifests (kind ManifestBundle) to the "
                      "KernelIndex envelope in place,\nafter checking their own digests; a file already current is left "
                      "as it is.\nexit status: 0 all converted or current, 1 an old file whose digests do not match, "
                      "2 unreadable\n");
    if (h >= 0) return h;
    if (optind >= argc) {
        rg_term_printf(stderr, "ropegrad migrate: expected one or more manifest files (usage: ropegrad migrate FILE...)\n");
        return 2;
    }
    int worst = 0;
    for (int i = optind; i < argc; i++) {
        char err[RG_ERRLEN];
        const char *path = argv[i];
        cJSON *doc = rg_json_read_file(path, err, sizeof err);
        if (!doc) {
            rg_term_printf(stderr, "ropegrad migrate: %s\n", err);
            worst = 2;
            continue;
        }
        if (!rg_manifest_is_legacy(doc)) {
            int rc = rg_manifest_verify(doc, err, sizeof err);
            if (rc) rg_term_printf(stderr, "ropegrad migrate: %s: not an old manifest, and it does not verify: %s\n", path, err);
            else tprintf("%s: already current\n", path);
            if (rc > worst) worst = rc;
            cJSON_Delete(doc);
            continue;
        }
        int rc = rg_legacy_verify(doc, err, sizeof err);
        cJSON *nd = rc ? NULL : rg_manifest_convert_legacy(doc, err, sizeof err);
        cJSON_Delete(doc);
        char *text = nd ? rg_json_print(nd, 1, err, sizeof err) : NULL;
        if (text && !rg_manifest_verify(nd, err, sizeof err) &&
            !rg_write_file_atomic(path, text, strlen(text), err, sizeof err)) {
            tprintf("%s: converted to the KernelIndex envelope\n", path);
        } else {
            rg_term_printf(stderr, "ropegrad migrate: %s: %s\n", path, err);
            if (!rc) rc = 2;
            if (rc > worst || worst == 0) worst = rc;
        }
        free(text);
        cJSON_Delete(nd);
    }
    return worst;
}

/* ---- keygen ------------------------------------------------------------------------------ */

int rg_cmd_keygen(int argc, char **argv)
{
    int h = help_only(argc, argv, "keygen",
                      "usage: ropegrad keygen KEYFILE\n\nWrites a new Ed25519 key pair: KEYFILE (private, PEM, mode "
                      "0600, never overwritten)\nand KEYFILE.pub (public, PEM: give it to whoever should trust your "
                      "runs).\n");
    if (h >= 0) return h;
    if (optind != argc - 1) {
        rg_term_printf(stderr, "ropegrad keygen: expected one key file (usage: ropegrad keygen KEYFILE)\n");
        return 2;
    }
    char err[RG_ERRLEN], key_id[RG_DIGEST_LEN];
    if (rg_keygen(argv[optind], key_id, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad keygen: %s\n", err);
        return 2;
    }
    tprintf("wrote %s (private) and %s.pub (public), key id %s\n", argv[optind], argv[optind], key_id);
    return 0;
}
