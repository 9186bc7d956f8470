/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.h -- what the index's pages show, as plain view structs.
 *
 * model.c is the ONE place that reads registry rows and manifests for the
 * pages (src/index/render.c never sees JSON or SQL): point it at another
 * record format and every page, the server, `site` and `report` follow.
 *
 * Absent figures are NAN (numbers), -1 (counts) or "" (text); the renderer
 * leaves them out instead of printing "n/a" or "0 / 0".
 */
#ifndef RG_INDEX_MODEL_H
#define RG_INDEX_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "manifest.h"
#include "rank.h"
#include "record.h"

/* A label and its text, for the page's key/value sections. */
typedef struct rg_page_kv {
    char key[48];
    char *value;                    /* malloc'd */
} rg_page_kv;

typedef struct rg_kvlist {
    rg_page_kv *items;
    size_t n, cap;
    int oom;
} rg_kvlist;

/* One workload's measurements (ns, bytes, GB/s); NAN when absent. */
typedef struct rg_wl_view {
    int index, pass;                /* pass: 1, 0, or -1 unknown */
    double bytes, median, mean, min, max, stddev, gbps, t_sol, t_b, score, speedup;
    char shape[48];                 /* "32×256" (B×S), "· 32/8 heads" when it has head axes (rg_model_shape_label) */
} rg_wl_view;

typedef struct rg_run_view {
    int64_t id, replicates_of;
    char definition[256], title[512], status[16], evidence[16], device[256], backend[16];
    char name[200];                 /* the implementation's display name (names.h rg_impl_display_name) */
    /* What the run's source says of it (runs import-catalog; "" / 0 when
     * nothing): when it published the run, its rank in the source's own
     * comparison group, of how many, and the source's name. */
    char published_at[40], source_name[128];
    int source_rank, source_group_size;
    char observed_at[40], created_at[32];
    char run_digest[RG_DIGEST_LEN], comparison_key[RG_DIGEST_LEN];
    /* the primary measurement */
    double primary_ns;
    char primary_stat[96];
    char not_timed[320];   /* a run with nothing timed: "failed: REASON" or "correctness only" (untimed.c); "" else */
    /* rank in the comparison group (0: not ranked), its size, #1's id */
    int rank, group_size;
    int64_t first_id;
    /* rank.h: interval_ranked 1 when the rank is rg_registry_rank_group's
     * (tied: another run shares it); 0 when the group is larger than
     * RG_INTERVAL_RANK_MAX and the rank is by the primary figure alone */
    int interval_ranked, tied;
    rg_interval iv;                 /* the primary statistic's 95% interval */
    int suspect, confirmed;
    char suspect_why[200], revision[48];
    /* the trust class (rank.h rg_manifest_rank_class) and its one-line reason:
     * only "measured" and "reported" runs are ranked (apart), never the others */
    rg_rank_class rank_class;
    char rank_reason[RG_RANK_REASON_LEN];
    char harness[96];               /* its protocol's harness "name version" */
    int superseded;                 /* older than its group's newest harness version: not ranked (rank.h) */
    rg_sol_check sol_check;         /* the index's own T_SOL check (sol_check.h) */
    char key_origin[64];            /* how the comparison key was found: "derived by rule", ... */
    /* SOL score, mean speedup over the reference, cases faster of total:
     * rg_model_ref_figures' (the one definition) when the run is in a
     * registry group of up to RG_INTERVAL_RANK_MAX runs, else the record's
     * own; where one is NAN, why in x_ref_why, sol_why, fast_why */
    double sol, x_ref, fast_count, fast_total;
    char x_ref_why[256], sol_why[256], fast_why[256], x_ref_source[96];
    int passed, total;              /* correctness; -1 unknown */
    char correctness[512];
    char source[256];               /* where the record comes from */
    int cpu;                        /* measured on a CPU: no speed-of-light figures */
    int replicable;                 /* ropegrad's own protocol is recorded: `runs replicate` can rerun it */
    char comparison_label[32];      /* "source-native comparison" (imported from its source) or "ropegrad comparison" */
    rg_kvlist identity, workload, protocol, environment, artifacts;
    rg_wl_view *wl;
    size_t n_wl;
    double peak_gbps;               /* the bandwidth chart's roof, NAN when none */
    char peak_label[160];
    rg_note *notes;                 /* notes, reproductions and flags */
    size_t n_notes;
    rg_replication *reps;
    size_t n_reps;
    rg_run_signature *sigs;         /* every signature, by key id, with when it was received */
    size_t n_sigs;
    rg_run_conflict *conflicts;     /* metadata in which a later copy differed */
    size_t n_conflicts;
    char *manifest;                 /* the canonical bytes, as stored */
    size_t manifest_len;
    char *manifest_pretty;          /* the same, indented for the page (NULL when not read) */
} rg_run_view;

/* One ranked line of a problem page. */
typedef struct rg_rank_entry {
    int64_t id;
    int rank;                       /* 0: not ranked (failed correctness) */
    double primary_ns, sol, x_ref, fast_count, fast_total;
    char evidence[16], observed_at[40], status[16], kernel[96];
    char name[200];                 /* the implementation's display name (names.h rg_impl_display_name) */
    char published_at[40];          /* the source's publication date, "" when none */
    int source_rank, source_group_size;   /* the source's own rank, of how many; 0 when none */
    char retracted_at[40];          /* its source retracted it then; "" when not */
    int tied, suspect;              /* interval ranks (rank.h) */
    /* the trust class (rank.h) and its one-line reason; rank is measured
     * runs' interval rank or reported runs' figure rank (each from 1), 0
     * for every other class. Groups above RG_INTERVAL_RANK_MAX: "measured"
     * with a reason saying the manifests were not read */
    rg_rank_class rank_class;
    char rank_reason[RG_RANK_REASON_LEN];
    char harness[96];               /* its protocol's harness "name version" */
    int superseded;                 /* an older harness version than the group's current: listed after, unranked */
    char verification[16];          /* rg_sol_state_name, "" when not read (groups above RG_INTERVAL_RANK_MAX) */
    rg_interval iv;
    double x_ref_run;               /* the same figure as x_ref (model_figures.c: one definition), NAN none */
    /* sol, x_ref and fast_count/fast_total are rg_model_ref_figures' (groups
     * up to RG_INTERVAL_RANK_MAX runs; above: the record's own); where one is
     * NAN, why it is empty ("" when filled or not computed) */
    char x_ref_why[256], sol_why[256], fast_why[256];
    /* The field (model_field.c): the trust class as the page shows it
     * (rank_class's name), why a run is superseded (superseded above), its
     * implementation's row, and where the figures come from. */
    char trust[16];                 /* the trust class: measured | reported | suspect | partial | busy | damaged | failed */
    char trust_reason[256];         /* one line: why that class */
    char superseded_why[240];       /* why, "" when not superseded */
    int impl_best, impl_runs;       /* 1: the best run of its implementation in the group (a row of the
                                     * field); the implementation's runs in the group */
    int field_rank, field_tied;     /* rank among the field's rows of its kind (measured, reported); 0 none */
    int replications, signatures;   /* replications that agreed with it; signatures it carries */
    char sol_basis[120], x_ref_basis[160];              /* where a figure comes from */
    char date[40];                  /* observed, else published (the records page) */
} rg_rank_entry;

/* One implementation's per-workload medians, for a problem page's chart of
 * its group (model_field.c). */
#define RG_FIELD_MAX_SERIES 12
typedef struct rg_field_series {
    int64_t id;
    char kernel[96];                /* as its rg_rank_entry */
    int *index, *pass;              /* workload index, pass (1, 0, -1 unknown); malloc'd, n */
    double *median;                 /* ns, NAN absent */
    double *bytes;                  /* bytes any kernel must move, NAN absent */
    char (*shape)[48];              /* rg_model_shape_label */
    size_t n;
    char name[200];                 /* as its rg_rank_entry */
    int reference;                  /* the group's reference run */
} rg_field_series;

typedef struct rg_group_view {
    char comparison_key[RG_DIGEST_LEN], device[256], primary_stat[96];
    int64_t runs;                   /* runs in the group (entries may show fewer) */
    int n_workloads;                /* of its runs (one comparison key: one workload set); -1 unknown */
    int interval_ranked;            /* 1: ranks by rg_registry_rank_group; 0: by the primary figure alone */
    char harness[96];               /* the current protocol's harness "name version" ("" unknown) */
    size_t n_superseded;            /* entries of older harness versions (listed last, superseded) */
    rg_rank_entry *e;
    size_t n;
    /* The field (model_field.c): the group's reference run -- the passed run
     * whose implementation is "reference (torch eager)", the fastest when
     * there are several -- 0 / NAN when none; the first RG_FIELD_MAX_SERIES
     * entries' per-workload medians. */
    int64_t ref_id;
    double ref_ns;
    rg_field_series *series;
    size_t n_series;
    /* What makes its runs comparable, in words: "NVIDIA B200 · SOL-ExecBench
     * evaluation stack v1.0 · mean · 16 workloads"; superseded 1 when every
     * run of it is of an older protocol (or a newer version of its harness
     * has a group on the same GPU with the same statistic). */
    char words[520];
    int superseded;
    int cpu;                        /* its runs were measured on a CPU */
    size_t n_impls;                 /* rows of the field: entries with impl_best */
    double peak_gbps;               /* the GPU's datasheet bandwidth (rg_model_peak_gbps), NAN none */
    char peak_label[160];
    double floor_ns;                /* the shortest median any drawn run took on any workload, NAN none */
} rg_group_view;

/* At most this many lines on a group's chart: the top five implementations and the reference. */
#define RG_FIELD_CHART_LINES 6

/* Who and what a run is ("Recursive · submission 6579", "ropegrad 0.1.0 · CUDA
 * kernel 0", "torch.compile 2.11.0 · reference", a plugin's own name): the
 * one accessor every page uses for an implementation's name. */
void rg_model_display_name(const rg_manifest *m, const rg_run_row *r, char *out, size_t n);
/* A workload's shape: "32×256" (batch × sequence), then " · 32/8 heads"
 * when it has head axes; "" when it has no such axes. */
void rg_model_shape_label(const rg_mf_workload *w, char *out, size_t n);
/* A GPU's datasheet bandwidth in GB/s (NAN when not known), label "NVIDIA H200 datasheet peak". */
double rg_model_peak_gbps(const char *device, char *label, size_t n);

/* The name a reference run's implementation starts with (python/ropegrad/impl_load.py). */
#define RG_REFERENCE_RUN_NAME "reference (torch eager)"

/* Fills each group's field (ref_id, ref_ns, x_ref_run, series) from the
 * registry. 0, or 2 on error (err says so). */
struct rg_problem_view;
int rg_model_field(rg_registry *g, struct rg_problem_view *v, char *err, size_t errlen);
void rg_model_field_free(rg_group_view *gv);
/* A group's #1 as its page shows it: the measured #1, else the reported #1; NULL when none. */
const rg_rank_entry *rg_group_first(const rg_group_view *g);

typedef struct rg_problem_view {
    char definition[256];
    rg_group_view *groups;
    size_t n_groups;
} rg_problem_view;

/* A comparison group's #1 for the front page's headline figures. */
typedef struct rg_index_best {
    double primary_ns;              /* NAN when the group has no #1 */
    char primary_stat[96];
    int n_workloads;                /* of #1; tells two groups of one device apart; -1 unknown */
    rg_rank_class rank_class;       /* #1's trust class: measured, or reported in a group without measured runs */
    char harness[96];               /* #1's harness "name version" (what makes the group comparable), "" unknown */
} rg_index_best;

/* Runs listed under "Latest runs" on the front page. */
#define RG_LATEST_RUNS 10

/* A current comparison group's #1 as the problem page shows it (the field's
 * measured #1, else its reported #1), for the front page's headline figures. */
typedef struct rg_index_leader {
    char definition[256], words[520], name[200], primary_stat[96], comparison_key[RG_DIGEST_LEN];
    int64_t id;
    double primary_ns;
    int measured;                   /* 1: measured here; 0: as reported */
} rg_index_leader;

typedef struct rg_index_view {
    rg_problem_row *rows;           /* one per (definition, comparison group) */
    rg_index_best *best;            /* one per row */
    size_t n;
    /* every current group's #1 from the problems' fields (rg_model_index_leaders); listed 0 above
     * RG_INTERVAL_RANK_MAX runs (then the headline figures are best[]) */
    rg_index_leader *leaders;
    size_t n_leaders;
    int leaders_listed;
    /* the newest runs, newest first; listed 0 when the registry holds more
     * than RG_INTERVAL_RANK_MAX runs (not read here) */
    rg_run_row latest[RG_LATEST_RUNS];
    rg_rank_class latest_class[RG_LATEST_RUNS];          /* each one's trust class (rank.h) */
    char latest_reason[RG_LATEST_RUNS][RG_RANK_REASON_LEN];
    size_t n_latest;
    int latest_listed;
    /* the regressions of the latest revision of each line (rank.h); checked 0
     * when the registry holds more than RG_INTERVAL_RANK_MAX runs */
    rg_regression *alerts;
    size_t n_alerts;
    int alerts_checked;
} rg_index_view;

/* Per workload of a compare page: b's median over a's, with the interval
 * from the two runs' min..max. */
typedef struct rg_compare_row {
    int index;
    double a, b, ratio, lo, hi;     /* NAN when a side lacks the workload */
    /* shift 1: ratio, lo, hi are the Hodges-Lehmann ratio of the samples and
     * its 95% interval, p the U test's, verdict as `runs check` (rank.h);
     * 0: the record has no samples, ratio of medians, interval from min/max */
    int shift;
    double p;
    char verdict[12];
    int primary;                    /* 1: the runs' primary figures (a record without workloads), index unused */
} rg_compare_row;

typedef struct rg_compare_view {
    rg_run_view a, b;
    rg_compare_row *rows;
    size_t n;
    int comparable;                 /* same comparison key */
    /* the summary row, as `runs compare` prints it: geomeans of the medians
     * over the shared workloads (NAN when none), and the verdicts counted */
    int n_shared, n_slow, n_fast;
    double geo_a, geo_b;
    /* Why the two runs' figures do not compare ("" when they do): set when
     * the GPUs or the primary statistics differ. The primary figures are then
     * not divided (the primary row's ratio is NAN). */
    int same_gpu, same_statistic;
    char unlike[700];
} rg_compare_view;

/* Records over time (model_records.c): per comparison group of a problem
 * (one GPU, harness and statistic), every rankable run by date (observed,
 * else published) and the runs that set a new best figure. */
typedef struct rg_record_point {
    int64_t id;
    char name[200], date[40], trust[16];
    double primary_ns;
    int record;                     /* 1: faster than every earlier run of the group */
    double gain;                    /* the previous record's figure over this one's (record only), NAN first */
} rg_record_point;

typedef struct rg_records_group {
    char words[520], device[256], primary_stat[96], comparison_key[RG_DIGEST_LEN];
    int superseded;
    rg_record_point *p;             /* by date, then id */
    size_t n, n_records;
} rg_records_group;

typedef struct rg_records_view {
    char definition[256];
    rg_records_group *groups;
    size_t n_groups;
} rg_records_view;
/* 0, 1 no runs of the problem (err says so), 2 error. */
int rg_model_records(rg_registry *g, const char *definition, rg_records_view *v, char *err, size_t errlen);
void rg_model_records_free(rg_records_view *v);
/* SOL score, x reference and cases faster, one definition on every page
 * (model_figures.c): x reference is the mean over the workloads of the
 * reference's time over the run's (SOL-ExecBench's avg_speedup), the
 * reference timed on the run's GPU (the group's reference run, else the
 * record's own reference times when they are of its GPU); NAN with the
 * reason in *_why where the index cannot compute one. */
typedef struct rg_ref_figures {
    double x_ref, sol, fast_count, fast_total;
    char x_ref_why[256], sol_why[256], fast_why[256];
    char source[96];                /* where the reference times come from, "" when none */
} rg_ref_figures;
/* m: the run; ref (NULL: none) the group's reference run, ref_id its id. */
void rg_model_ref_figures(const rg_manifest *m, const rg_manifest *ref, int64_t ref_id, rg_ref_figures *out);

/* Said once where a CPU run's or group's SOL columns would be empty. */
#define RG_NO_SOL_ON_CPU "no speed-of-light figure on CPU runs"

/* Interval ranks and alerts read every manifest of a group (or registry):
 * above this many runs the pages rank by the primary figure alone and say so. */
#define RG_INTERVAL_RANK_MAX 500
/* The reason of a run of such a group: its class was not read. */
#define RG_CLASS_NOT_READ                                                                                      \
    "not checked: the group holds more than 500 runs, so its manifests are not read; ranked by the primary "   \
    "figure alone"

/* One implementation line's history, oldest first (rg_registry_line). */
typedef struct rg_history_view {
    rg_ranked *e;
    size_t n;
    char name[200];                 /* the implementation (rg_model_display_name of its newest run) */
} rg_history_view;
int rg_model_history(rg_registry *g, int64_t id, rg_history_view *v, char *err, size_t errlen);
void rg_model_history_free(rg_history_view *v);

/* Rows shown per comparison group on a problem page. */
#define RG_PROBLEM_ROWS 100

/* The search page: runs whose implementation name holds q. */
#define RG_SEARCH_MAX 50          /* hits shown */
#define RG_SEARCH_QUERY_MAX 100   /* bytes of a query; a longer one is refused */
typedef struct rg_search_hit {
    int64_t id;
    char definition[256], device[256], kernel[96], status[16];
    double primary_ns;
    rg_rank_class rank_class;       /* its trust class (rank.h) */
    char rank_reason[RG_RANK_REASON_LEN];
} rg_search_hit;
typedef struct rg_search_view {
    char q[RG_SEARCH_QUERY_MAX + 1];
    rg_search_hit hits[RG_SEARCH_MAX];
    size_t n;
    int more;                       /* more runs matched than are shown */
} rg_search_view;
/* 0, 1 when q is empty or too long (err says so), 2 error. */
int rg_model_search(rg_registry *g, const char *q, rg_search_view *v, char *err, size_t errlen);

/* Fill a view (0), 1 no such run/problem (err says so), 2 error. */
int rg_model_run(rg_registry *g, int64_t id, rg_run_view *v, char *err, size_t errlen);
/* The run view of a manifest (the typed reader's struct, manifest.h) that is
 * not (or not yet) in a registry: row gives its registry figures when known
 * (may be NULL). */
int rg_model_run_from_manifest(const rg_manifest *m, const rg_run_row *row, rg_run_view *v, char *err,
                               size_t errlen);
void rg_model_run_free(rg_run_view *v);
int rg_model_problem(rg_registry *g, const char *definition, rg_problem_view *v, char *err, size_t errlen);
void rg_model_problem_free(rg_problem_view *v);
int rg_model_index(rg_registry *g, rg_index_view *v, char *err, size_t errlen);
/* Fills v->leaders from each problem's field (model_index.c). 0, or 2 on error. */
int rg_model_index_leaders(rg_registry *g, rg_index_view *v, char *err, size_t errlen);
/* The front page's view: rg_model_index, then the leaders where the runs are few enough to list. */
int rg_model_front(rg_registry *g, rg_index_view *v, char *err, size_t errlen);
void rg_model_index_free(rg_index_view *v);
int rg_model_compare(rg_registry *g, int64_t a, int64_t b, rg_compare_view *v, char *err, size_t errlen);
void rg_model_compare_free(rg_compare_view *v);
/* Sets v's same_gpu, same_statistic and unlike from its two runs (model_field.c). */
void rg_model_compare_unlike(rg_compare_view *v);

/* The display name of a registry row's implementation (names.h,
 * rg_impl_display_name, from the row's names): for lists that show rows
 * (the front page, `runs list`). Returns out. */
const char *rg_run_display_name(const rg_run_row *r, char *out, size_t n);

/* kv lists */
void rg_kv_add(rg_kvlist *l, const char *key, const char *value);
void rg_kvlist_free(rg_kvlist *l);


/* Ids of every run, ascending (malloc'd). */
int rg_model_run_ids(rg_registry *g, int64_t **ids, size_t *n, char *err, size_t errlen);

#endif
