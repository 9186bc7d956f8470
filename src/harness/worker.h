/* SPDX-License-Identifier: Apache-2.0 */
/*
 * worker.h -- the supervised worker: an implementation that is not
 * ropegrad's own kernel (a plugin, a Python solution) runs in a child
 * process that the harness starts and watches (docs/protocol.md,
 * "Supervised worker").
 *
 * The parent owns the run's result. It starts the worker with two fds:
 *   --worker-channel FD  a pipe's write end: the worker sends ONE framed
 *                        message (below) and nothing else;
 *   --worker-watch FD    a shared page (rg_worker_watch): when the current
 *                        call (or the loading) started, the workload, the
 *                        implementation's label. The parent arms it before
 *                        the worker starts, so loading is timed too.
 * It accepts the message only after the worker exited normally with status
 * 0; an early exit, a signal, a call past the timeout (the whole process
 * group is killed), a malformed or missing message is a failure in one line.
 *
 * A frame: the 4 bytes "RGW1", the JSON text's length as 4 bytes big-endian,
 * the JSON text (strict: src/util/strict_json.h), then end of stream. The
 * JSON is an object {"worker": 1, ...} holding either "refusal" (one line:
 * the implementation was refused before it ran, exit 2) or "impl" and
 * "result" (the run, every field of rg_run_result that the worker measured).
 */
#ifndef ROPEGRAD_HARNESS_WORKER_H
#define ROPEGRAD_HARNESS_WORKER_H

#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

#include "result.h"

#define RG_WORKER_MAGIC "RGW1"
#define RG_WORKER_HEADER 8
#define RG_WORKER_MAX_JSON ((size_t)256 << 20)   /* as a manifest (samples included) */

/* ---- the watched page ------------------------------------------------------------------ */

enum { RG_WORKER_LOADING = 1, RG_WORKER_RUNNING = 2 };

typedef struct rg_worker_watch {
    atomic_llong started_ns;    /* CLOCK_MONOTONIC ns of the call (or loading) in progress; 0 none. The
                                   first member: the Python worker restarts it once torch is imported
                                   (python/ropegrad/cli.py) */
    atomic_int phase;           /* RG_WORKER_LOADING until the implementation is checked, then RUNNING */
    atomic_int workload;        /* the workload being run, -1 before the first */
    char name[ROPEGRAD_IMPL_MAX_NAME + 1];      /* the descriptor's, once checked ("" before) */
    char version[ROPEGRAD_IMPL_MAX_NAME + 1];
} rg_worker_watch;

/* The parent's page: a shared anonymous file mapped here, its fd for the
 * worker. NULL with a message. */
rg_worker_watch *rg_worker_watch_create(int *fd, char *err, size_t errlen);
/* The worker's view of the page behind fd. NULL with a message. */
rg_worker_watch *rg_worker_watch_attach(int fd, char *err, size_t errlen);
void rg_worker_watch_unmap(rg_worker_watch *w);
long long rg_worker_now_ns(void);

/* ---- the message --------------------------------------------------------------------- */

typedef struct rg_worker_msg {
    int refused;                            /* 1: refusal holds the line, nothing ran */
    char refusal[RG_ERRLEN];
    char name[ROPEGRAD_IMPL_MAX_NAME + 1];  /* the descriptor's name and version, checked by the worker */
    char version[ROPEGRAD_IMPL_MAX_NAME + 1];
    char *meta_json;                        /* an embedded implementation's JSON object text, or NULL; owned */
    rg_run_result result;                   /* owned (rg_worker_msg_free) */
} rg_worker_msg;

/* The framed message for a run (impl NULL: ropegrad's kernel, no "impl").
 * A malloc'd buffer of *len bytes, or NULL with a message. */
unsigned char *rg_worker_frame_result(const rg_run_result *r, const rg_run_impl *impl, size_t *len, char *err,
                                      size_t errlen);
/* The framed refusal (line: one line). */
unsigned char *rg_worker_frame_refusal(const char *line, size_t *len, char *err, size_t errlen);
/* Writes the whole buffer to fd (EINTR retried). 0, or 1 with a message. */
int rg_worker_write_all(int fd, const unsigned char *buf, size_t len, char *err, size_t errlen);

/* Reads everything a worker sent (buf[0..n)): exactly one frame, strict
 * JSON, every member present with its type and nothing else. 0 with *m
 * filled (free it with rg_worker_msg_free), or 1 with one line and *m
 * empty. */
int rg_worker_msg_parse(const unsigned char *buf, size_t n, rg_worker_msg *m, char *err, size_t errlen);
void rg_worker_msg_free(rg_worker_msg *m);

/* ---- the supervisor --------------------------------------------------------------------- */

typedef struct rg_worker_spec {
    char *const *argv;          /* the worker's command; the two --worker-* options are appended */
    double timeout_s;           /* one call, or the loading, longer than this kills it (> 0) */
} rg_worker_spec;

typedef enum { RG_WORKER_RESULT = 0, RG_WORKER_REFUSED = 1, RG_WORKER_FAILED = 2 } rg_worker_end;

typedef struct rg_worker_outcome {
    rg_worker_end end;
    rg_worker_msg msg;          /* RESULT, REFUSED: what it sent */
    char what[RG_ERRLEN];       /* FAILED: what happened, e.g. "killed by signal SIGSEGV (Segmentation fault)" */
    int workload;               /* FAILED: the workload it was at, -1 when unknown */
    char name[ROPEGRAD_IMPL_MAX_NAME + 1];    /* FAILED: the descriptor's name and version when it got that */
    char version[ROPEGRAD_IMPL_MAX_NAME + 1]; /* far (printable ASCII), else "" */
} rg_worker_outcome;

/* Starts the worker (its own process group, stdout onto stderr, killed
 * when this process dies), watches it, and collects its message. Returns
 * 0 with *out filled (free out->msg), or 1 with a message when the worker
 * could not be started at all. */
int rg_worker_run(const rg_worker_spec *spec, rg_worker_outcome *out, char *err, size_t errlen);

/* ---- the parent's run ----------------------------------------------------------------- */

/* The received result checked against the workloads asked for (indices[n]
 * of s, n 0: all, in order: index and uuid), then described from the suite
 * itself (names, axes, sizes, bytes, figures) and its passed count
 * recounted. 0, or 1 with a message. */
int rg_worker_adopt_result(const rg_suite *s, const int *indices, size_t n, rg_run_result *r, char *err,
                           size_t errlen);

/* A failed run: every workload asked for fails with "WORKER_FAILED: why",
 * nothing timed, the host's environment. 0, or 1 with a message. */
int rg_worker_failed_result(const rg_suite *s, const int *indices, size_t n, const rg_run_options *o,
                            const char *backend, const char *why, rg_run_result *r, char *err, size_t errlen);

#endif
