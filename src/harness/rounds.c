/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rounds.c -- correctness over N rounds of fresh seeded inputs on the CPU
 * path, and the reward-hack checks that need no GPU (run_internal.h).
 *
 * Round r's inputs are the op's generator with seed + r * 0x9E3779B97F4A7C15
 * (mod 2^64; round 0 is the run's seed, the inputs the protocol always used),
 * written into the SAME buffers every round, so an implementation that keys
 * anything on the input pointers sees new values behind old addresses. The
 * output is poisoned (all bytes 0xff: NaN) before every call. After each call:
 *
 *   - the output still all poison: the call wrote nothing          REWARD_HACK
 *   - an input's bytes changed: the call wrote into its input (where a
 *     tensor API would return a view of an input, a C plugin can only keep
 *     its output in the input's memory)                               REWARD_HACK
 *   - the output bit-identical to the previous round's while the inputs
 *     differ: results served from a cache (e.g. keyed by input pointer) REWARD_HACK
 *   - the protocol's check against the ground truth                 as before
 *
 * After the timed iterations one more call on the round-0 inputs, output
 * poisoned, must pass the check again: an implementation that stops
 * computing after its first calls (a lazy or skipped call) is caught. The
 * first failure ends the workload; the check kept is the failing round's, or
 * the worst of all rounds (largest errors, smallest matched ratio).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_internal.h"

#define RG_ROUND_SEED_STEP 0x9E3779B97F4A7C15ULL

uint64_t rg_round_seed(uint64_t seed, int round) { return seed + (uint64_t)round * RG_ROUND_SEED_STEP; }

/* A 64-bit digest of n bytes (word-wise multiply-xorshift; not cryptographic). */
static uint64_t hash_bytes(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, sizeof w);
        h = (h ^ w) * 0x100000001B3ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ b[i]) * 0x100000001B3ULL;
    return h ^ (h >> 32);
}

static uint64_t input_hash(const rg_tensors *in, int k)
{
    return hash_bytes(in->in[k], in->in_bytes[k], 0xcbf29ce484222325ULL + (uint64_t)k);
}

static int all_poison(const void *out, size_t n)
{
    const unsigned char *b = out;
    for (size_t i = 0; i < n; i++)
        if (b[i] != 0xff) return 0;
    return n > 0;
}

static void hack(rg_workload_result *wr, const char *why)
{
    wr->check.pass = 0;
    wr->reward_hack = 1;
    snprintf(wr->check.reason, sizeof wr->check.reason, "REWARD_HACK: %.110s", why);
}

/* The worst of two rounds' checks into acc. */
static void merge(rg_check *acc, const rg_check *c)
{
    acc->max_abs_err = fmax(acc->max_abs_err, c->max_abs_err);
    acc->max_rel_err = fmax(acc->max_rel_err, c->max_rel_err);
    acc->matched_ratio = fmin(acc->matched_ratio, c->matched_ratio);
    acc->n_nonfinite = acc->n_nonfinite > c->n_nonfinite ? acc->n_nonfinite : c->n_nonfinite;
    acc->n_abs_only = acc->n_abs_only > c->n_abs_only ? acc->n_abs_only : c->n_abs_only;
}

/* Round r's inputs written into in's buffers (addresses kept). 0, or 1 with a message. */
static int restage(const rg_op *op, const rg_workload *w, const rg_run_options *o, int r, rg_tensors *in, char *err,
                   size_t errlen)
{
    rg_tensors t;
    if (op->make(w, in->dtype, (int)o->inputs, rg_round_seed(o->seed, r), &t, err, errlen)) return 1;
    int same = t.n_in == in->n_in;
    for (int k = 0; same && k < t.n_in; k++) same = t.in_bytes[k] == in->in_bytes[k];
    if (same)
        for (int k = 0; k < t.n_in; k++) memcpy(in->in[k], t.in[k], t.in_bytes[k]);
    in->attention_scaling = t.attention_scaling;
    rg_tensors_free(&t);
    if (!same) snprintf(err, errlen, "workload %d: round %d's inputs have other sizes", w->index, r);
    return !same;
}

/* What one_round remembers between rounds. */
typedef struct round_state {
    uint64_t in_hash[RG_OP_MAX_TENSORS], prev_in_hash, prev_out_hash;
    int have_prev;
} round_state;

/* One call with a poisoned output, the guards around it and the check into
 * c: 0 checked, 1 out of memory, 2 the workload failed (wr->check says why:
 * the op returned an error, or a guard tripped). */
static int one_round(const rg_op *op, const rg_workload *w, const rg_tensors *in, void *out, const double *ref,
                     int threads, int r, round_state *st, rg_workload_result *wr, rg_check *c)
{
    char why[128];
    uint64_t all_in = 0;
    for (int k = 0; k < in->n_in; k++) all_in ^= st->in_hash[k] = input_hash(in, k);
    memset(out, 0xff, in->out_bytes);   /* all NaN: a kernel that skips an element fails */
    int rc = op->cpu(in, out, threads);
    if (!rc && op->finish) rc = op->finish(in, out, NULL);   /* outside any timing */
    if (rc) {
        wr->check.pass = 0;
        snprintf(wr->check.reason, sizeof wr->check.reason, "op %s cpu: %s%s", op->id, rg_op_error_text(op, rc),
                 r ? " (in a later correctness round)" : "");
        return 2;
    }
    if (all_poison(out, in->out_bytes)) {
        snprintf(why, sizeof why, "round %d: the call wrote no output (a skipped or lazy call)", r);
        hack(wr, why);
        return 2;
    }
    for (int k = 0; k < in->n_in; k++)
        if (input_hash(in, k) != st->in_hash[k]) {
            snprintf(why, sizeof why, "round %d: the call wrote into its input %.30s", r, op->inputs[k].name);
            hack(wr, why);
            return 2;
        }
    uint64_t out_hash = hash_bytes(out, in->out_bytes, 0);
    if (st->have_prev && out_hash == st->prev_out_hash && all_in != st->prev_in_hash) {
        snprintf(why, sizeof why, "round %d: output bit-identical to round %d's, inputs differ (a cache)", r, r - 1);
        hack(wr, why);
        return 2;
    }
    st->prev_out_hash = out_hash;
    st->prev_in_hash = all_in;
    st->have_prev = 1;
    return rg_check_op_output(op, out, in->n_out, ref, w, c) ? 1 : 0;
}

/* Round 0's output against float64 when the ground truth is not float64. */
static int yardstick(const rg_op *op, const rg_workload *w, const rg_tensors *in, const void *out,
                     rg_workload_result *wr)
{
    double *ref = malloc((size_t)in->n_out * sizeof *ref);
    if (!ref) return 1;
    int rc = op->reference_fn(in, ref) ? 0 : rg_check_op_output(op, out, in->n_out, ref, w, &wr->yardstick);
    wr->have_yardstick = rc == 0;
    free(ref);
    return rc;
}

int rg_cpu_correctness(const rg_op *op, const rg_workload *w, const rg_run_options *o, rg_tensors *in, void *out,
                       const double *ref0, rg_workload_result *wr, char *err, size_t errlen)
{
    round_state st;
    memset(&st, 0, sizeof st);
    memset(&wr->check, 0, sizeof wr->check);
    wr->rounds_run = 0;
    const int rounds = o->rounds > 0 ? o->rounds : 1;
    double *ref = rounds > 1 ? malloc((size_t)in->n_out * sizeof *ref) : NULL;
    int rc = rounds > 1 && !ref;
    for (int r = 0; r < rounds && !rc; r++) {
        if (r > 0 && restage(op, w, o, r, in, err, errlen)) return free(ref), 1;
        int rrc = r > 0 ? rg_ground_truth_reference(op, in, o->ground_truth, ref) : 0;
        if (rrc) {
            snprintf(err, errlen, "workload %d: round %d reference: %s", w->index, r, ropegrad_strerror(rrc));
            return free(ref), 1;
        }
        rg_check c;
        memset(&c, 0, sizeof c);
        int g = one_round(op, w, in, out, r ? ref : ref0, o->threads, r, &st, wr, &c);
        if (g) {
            rc = g == 1;
            break;
        }
        wr->rounds_run = r + 1;
        if (r == 0) wr->check = c;
        else merge(&wr->check, &c);
        if (r == 0 && o->ground_truth != RG_TRUTH_FLOAT64 && yardstick(op, w, in, out, wr)) rc = 1;
        if (!c.pass) {
            wr->check.pass = 0;
            snprintf(wr->check.reason, sizeof wr->check.reason, "%s%.100s", r ? "in a later round: " : "", c.reason);
            break;
        }
        wr->check.pass = r == rounds - 1;
    }
    free(ref);
    if (rc) {
        snprintf(err, errlen, "workload %d: out of memory in the correctness rounds", w->index);
        return 1;
    }
    /* The timed iterations and the call after them see round 0's inputs again. */
    return wr->check.pass && rounds > 1 ? restage(op, w, o, 0, in, err, errlen) : 0;
}

int rg_cpu_after_timing(const rg_op *op, const rg_workload *w, const rg_tensors *in, void *out, const double *ref,
                        int threads, rg_workload_result *wr)
{
    memset(out, 0xff, in->out_bytes);
    rg_check c;
    memset(&c, 0, sizeof c);
    int rc = op->cpu(in, out, threads);
    if (!rc && op->finish) rc = op->finish(in, out, NULL);
    if (!rc && rg_check_op_output(op, out, in->n_out, ref, w, &c)) return 1;
    if (!rc && c.pass) return 0;
    free(wr->samples_ns);   /* a workload that failed carries no timing */
    wr->samples_ns = NULL;
    wr->n_samples = 0;
    wr->timed = 0;
    wr->time_ns.mean = wr->time_ns.median = wr->time_ns.min = wr->time_ns.max = wr->time_ns.stddev = NAN;
    wr->gbps = NAN;
    hack(wr, rc ? "the call after the timed iterations returned an error: it does not run every call"
                : "the call after the timed iterations fails the check: it does not compute every call");
    return 0;
}
