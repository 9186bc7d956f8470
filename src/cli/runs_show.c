/* SPDX-License-Identifier: Apache-2.0 */
/* runs_show.c -- `ropegrad runs show ID` (the whole record) and `ropegrad runs cite ID`. */
#define _POSIX_C_SOURCE 200809L   /* gmtime_r */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rank.h"
#include "runs.h"
#include "runs_format.h"

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

/* The title lines and the figures: primary measurement, headline, SOL,
 * speedup, cases faster. */
static void show_summary(const rg_run_row *r, const rg_manifest *m, const char *untimed)
{
    char a[32], h[160];
    int imported = !strcmp(r->evidence, RG_EVIDENCE_IMPORTED);
    tprintf("Run #%lld  %s\n", (long long)r->id, m->benchmark);
    tprintf("%s on %s %s  |  %s  |  evidence: %s%s  |  observed %s\n\n", rg_cli_impl_label(h, sizeof h, r), m->product,
           m->architecture, m->status, r->evidence, imported ? " (measured elsewhere; digests verified)" : "",
           m->observed_at);
    if (untimed[0]) tprintf("  Primary measurement  not timed: %s\n", untimed);
    else tprintf("  Primary measurement  %s %s\n", rg_cli_time(a, sizeof a, m->primary_ns), m->primary_statistic);
    for (size_t i = 0; i < m->n_latency; i++)
        if (strcmp(m->latency_ns[i].name, m->primary_statistic))
            tprintf("                       %s %s\n", rg_cli_time(a, sizeof a, m->latency_ns[i].value), m->latency_ns[i].name);
    rg_cli_headline(h, sizeof h, m->sol_score, m->avg_speedup, m->fast_1_count, m->fast_1_total);
    tprintf("  Headline             %s\n", h);
    tprintf("  SOL score            %s      %s\n", rg_cli_fmt4(a, sizeof a, m->sol_score),
           m->t_sol_detail[0] ? m->t_sol_detail : m->have_detail ? "" : "as published by the source");
    if (isfinite(m->avg_speedup))
        tprintf("  Speedup              %.2fx     mean T_b/T_k over the workloads; baseline: %s\n", m->avg_speedup,
               m->baseline_mode[0] ? m->baseline_mode : m->source);
    else tprintf("  Speedup              -          no baseline (bench --baseline FILE)\n");
    if (isfinite(m->fast_1_total))
        tprintf("  Cases faster         %.0f / %.0f   correct and faster than the reference\n", m->fast_1_count,
               m->fast_1_total);
}

/* Its interval, rank, suspect flag, T_SOL check and revision (nothing when
 * the registry cannot rank it). */
static void show_rank(runs_ctx *x, int64_t id, const char *untimed)
{
    rg_ranked me;
    int ranked;
    if (rg_registry_rank_run(x->g, id, &me, &ranked, x->err, sizeof x->err)) return;
    char rk[16], iv[96];
    tprintf("  Interval             %s (95%%, the primary statistic)\n",
            rg_cli_interval(iv, sizeof iv, me.iv.est, me.iv.lo, me.iv.hi, me.iv.known));
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

static void show_identity(const rg_run_row *r, const rg_manifest *m)
{
    tprintf("\nIdentity\n");
    if (m->impl_name[0])
        tprintf("  implementation  %s %s, backend %s, kernel %d (%s)\n", m->impl_name, m->impl_version, m->backend,
               m->kernel, m->kernel_name);
    else tprintf("  implementation  not in this record (named by its digest only)\n");
    tprintf("  source          %s\n", m->source);
    if (m->external_id[0]) tprintf("  external id     %s\n", m->external_id);
    tprintf("  benchmark       %s\n", m->benchmark);
    tprintf("  device          %s (%s), vendor %s\n", m->product, m->architecture, m->vendor);
    tprintf("  comparison key  %s%s\n", r->comparison_key,
           m->comparison_key_recorded ? "" : " (by the rule: the record carries none)");
}

/* Correctness, then a line per workload. */
static void show_workloads(const rg_manifest *m)
{
    char a[32], b[32], c[32], d[32], e[32], f[32];
    if (m->total >= 0) tprintf("\nCorrectness  %d / %d workloads passed\n", m->passed, m->total);
    else tprintf("\nCorrectness  %s, as marked by the source\n", m->status);
    if (!m->n_workloads) return;
    tprintf("\nWorkload  %zu workloads of %s\n", m->n_workloads, m->benchmark);
    tprintf("  %4s %-24s  %12s %12s %12s %10s  %12s %12s %6s  %s\n", "#", "axes", "median", "min", "max",
           "GB/s", "T_SOL", "T_b", "SOL", "correct (max abs err)");
    for (size_t i = 0; i < m->n_workloads; i++) {
        const rg_mf_workload *w = &m->workloads[i];
        char ax[64] = "";
        size_t k = 0;
        for (size_t j = 0; j < w->n_axes && k < sizeof ax; j++)
            k += (size_t)snprintf(ax + k, sizeof ax - k, "%s%.0f", j ? "x" : "", w->axes[j].value);
        char gb[32] = "-";
        if (isfinite(w->gbps)) snprintf(gb, sizeof gb, "%.1f", w->gbps);
        rg_cli_time(a, sizeof a, w->median), rg_cli_time(b, sizeof b, w->min), rg_cli_time(c, sizeof c, w->max);
        rg_cli_time(d, sizeof d, w->t_sol_ns), rg_cli_time(e, sizeof e, w->t_b_ns);
        tprintf("  %4d %-24s  %*s %*s %*s %10s  %*s %*s %6s  %s (%.3g)\n", w->index, ax, rg_cli_w(a, 12), a,
               rg_cli_w(b, 12), b, rg_cli_w(c, 12), c, gb, rg_cli_w(d, 12), d, rg_cli_w(e, 12), e,
               rg_cli_fmt4(f, sizeof f, w->sol_score), w->pass ? "yes" : "NO", w->max_abs_err);
    }
}

static void show_protocol_environment(const rg_manifest *m)
{
    tprintf("\nProtocol\n");
    tprintf("  harness     %s %s\n", m->harness_name, m->harness_version);
    tprintf("  timer       %s, primary statistic %s\n", m->timer, m->measurement_statistic);
    if (m->warmup >= 0)
        tprintf("  measured    warmup %d, iterations %d, seed %s, inputs %s\n", m->warmup, m->iterations, m->seed, m->inputs);
    if (m->cold_l2[0]) tprintf("  cold L2     %s\n", m->cold_l2);
    if (!strcmp(m->harness_name, "ropegrad") && !strcmp(m->backend, "cuda") && m->iterations > 0) {   /* protocol.c */
        tprintf("  restage     %s\n", rg_restage_text(m->restage));
        tprintf("  span        %s\n", rg_span_text(m->span));
        tprintf("  sync        %s\n", rg_sync_text(m->sync));
        tprintf("  settle      %s\n", rg_settle_text(m->settle));
        tprintf("  kernel set  %s\n", m->same_kernels[0] ? m->same_kernels : "not recorded (a run made before the check)");
    }
    if (m->rounds >= 0)
        tprintf("  rounds      %d of fresh inputs against the %s ground truth\n", m->rounds,
                m->ground_truth[0] ? m->ground_truth : "float64");
    tprintf("  correctness %s%s%s\n", m->correctness_reference, m->correctness_comparator[0] ? "; comparator " : "",
           m->correctness_comparator);
    tprintf("  family      %s\n", m->family);
    tprintf("\nEnvironment\n");
    tprintf("  GPU/device  %s (%s), vendor %s\n", m->product, m->architecture, m->vendor);
    for (size_t i = 0; i < m->n_libraries; i++) tprintf("  library     %s %s\n", m->libraries[i].key, m->libraries[i].value);
    if (m->hostname[0]) tprintf("  host        %s, %s\n", m->hostname, m->os);
    if (m->cpu_model[0]) tprintf("  CPU         %s (%d threads, %s)\n", m->cpu_model, m->cpu_threads, m->cpu_isa);
    if (isfinite(m->sm_clock_start))
        tprintf("  clocks MHz  SM %.0f -> %.0f, memory %.0f -> %.0f\n", m->sm_clock_start, m->sm_clock_end,
               m->mem_clock_start, m->mem_clock_end);
    if (m->build_flags[0]) tprintf("  build       %s\n", m->build_flags);
}

/* Every digest, then the signatures and conflicts of its copies. */
static void show_digests(runs_ctx *x, int64_t id, const rg_run_row *r, const rg_manifest *m)
{
    tprintf("\nDigests\n");
    tprintf("  run             %s\n", r->run_digest);
    tprintf("  protocol        %s\n", m->protocol_digest);
    tprintf("  workload        %s%s\n", m->workload_digest, m->obj[RG_ROLE_WORKLOAD].present ? "" : " (object not in the record)");
    tprintf("  environment     %s\n", m->environment_digest);
    tprintf("  implementation  %s%s\n", m->implementation_digest,
           m->obj[RG_ROLE_IMPLEMENTATION].present ? "" : " (object not in the record)");
    if (m->sources_digest[0]) tprintf("  kernel sources  %s\n", m->sources_digest);
    show_copies(x, id);
}

/* Replications of it (or the run it replicates), then its notes. */
static void show_replications_notes(runs_ctx *x, int64_t id)
{
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
}

int rg_runs_show(runs_ctx *x, int64_t id)
{
    rg_run_row r;
    rg_manifest m;
    if (rg_registry_get(x->g, id, &r, &m, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs show: %s\n", x->err);
        return 2;
    }
    char untimed[320] = "";
    rg_untimed_label(m.status, m.primary_ns, rg_manifest_first_failure(&m), untimed, sizeof untimed);
    show_summary(&r, &m, untimed);
    show_rank(x, id, untimed);
    show_identity(&r, &m);
    show_workloads(&m);
    show_protocol_environment(&m);
    show_digests(x, id, &r, &m);
    show_replications_notes(x, id);
    rg_manifest_free(&m);
    return 0;
}

int rg_runs_cite_row(runs_ctx *x, int64_t id, rg_run_row *r, char *today, size_t n)
{
    if (rg_registry_get(x->g, id, r, NULL, x->err, sizeof x->err)) {
        rg_term_printf(stderr, "ropegrad runs cite: %s\n", x->err);
        return 2;
    }
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(today, n, "%Y-%m-%d", &tm);
    return 0;
}

int rg_runs_cite(runs_ctx *x, int64_t id)
{
    rg_run_row r;
    char today[16], k[96];
    if (rg_runs_cite_row(x, id, &r, today, sizeof today)) return 2;
    tprintf("ropegrad run #%lld, %s, %s on %s, %s, %s, observed %s, accessed %s.\n", (long long)r.id, r.definition,
           rg_cli_impl_label(k, sizeof k, &r), r.device, r.evidence, r.run_digest, r.observed_at, today);
    return 0;
}
