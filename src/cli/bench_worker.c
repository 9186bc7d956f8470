/* SPDX-License-Identifier: Apache-2.0 */
/* bench_worker.c -- `bench|check` with an implementation that is not
 * ropegrad's own kernel: the parent starts the supervised worker and owns
 * the result, the worker runs the implementation and sends its result
 * (src/harness/worker.h, docs/protocol.md "Supervised worker"). */
#define _GNU_SOURCE   /* readlink */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_impl.h"
#include "record.h"
#include "rg_term.h"
#include "worker.h"

/* Set by a caller that runs the implementation in a worker of its own
 * making (the Python driver: ropegrad_cli_supervise, embed.h). */
static char *const *g_worker_argv;
static const char *g_worker_impl_path;

void rg_cli_worker_set_command(char *const *argv, const char *impl_path)
{
    g_worker_argv = argv;
    g_worker_impl_path = impl_path;
}

int rg_cli_worker_mode(const rg_cli_impl *x) { return x->channel_fd != -1; }

int rg_cli_worker_supervises(const rg_cli_impl *x)
{
    return !rg_cli_worker_mode(x) && (x->path || g_worker_argv);
}

int rg_cli_worker_attach(const char *cmd, rg_cli_impl *x)
{
    char err[RG_ERRLEN];
    if (x->watch_fd < 0) {
        fprintf(stderr, "ropegrad %s: --worker-channel needs --worker-watch\n", cmd);
        return 2;
    }
    rg_worker_watch *w = rg_worker_watch_attach(x->watch_fd, err, sizeof err);
    if (!w) {
        fprintf(stderr, "ropegrad %s: %s\n", cmd, err);
        return 2;
    }
    rg_impl_set_watch(w);
    return 0;
}

/* The one message, then the channel closed. 0, or 2 with one line on stderr. */
static int send_frame(const char *cmd, rg_cli_impl *x, unsigned char *buf, size_t len, const char *why)
{
    char err[RG_ERRLEN];
    int rc = buf ? rg_worker_write_all(x->channel_fd, buf, len, err, sizeof err) : 1;
    free(buf);
    close(x->channel_fd);
    x->channel_fd = -2;   /* sent: still a worker, nothing more to send */
    if (rc) fprintf(stderr, "ropegrad %s: %s\n", cmd, buf ? err : why);
    return rc ? 2 : 0;
}

int rg_cli_worker_send_result(const char *cmd, rg_cli_impl *x, const rg_run_result *r)
{
    char err[RG_ERRLEN] = "";
    size_t len = 0;
    unsigned char *buf = rg_worker_frame_result(r, x->open ? &x->named : NULL, &len, err, sizeof err);
    return send_frame(cmd, x, buf, len, err);
}

int rg_cli_worker_send_refusal(const char *cmd, rg_cli_impl *x, const char *line)
{
    char err[RG_ERRLEN] = "";
    size_t len = 0;
    unsigned char *buf = rg_worker_frame_refusal(line, &len, err, sizeof err);
    return send_frame(cmd, x, buf, len, err);
}

/* ---- the parent ---------------------------------------------------------------------------- */

/* The worker's argv: the caller's (embed.h), else this executable with the
 * command and its options; then the backend as resolved here, so that both
 * sides measure on the same one (the last --backend counts). */
static char **worker_argv(int argc, char **argv, const char *backend)
{
    static char exe[PATH_MAX];
    size_t n = 0;
    if (g_worker_argv) {
        while (g_worker_argv[n]) n++;
    } else {
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k <= 0) return NULL;
        exe[k] = '\0';
        n = (size_t)argc + 1;
    }
    char **v = calloc(n + 3, sizeof *v);
    if (!v) return NULL;
    if (g_worker_argv) {
        memcpy(v, g_worker_argv, n * sizeof *v);
    } else {
        v[0] = exe;
        memcpy(v + 1, argv, (size_t)argc * sizeof *v);
    }
    v[n] = "--backend";
    v[n + 1] = (char *)backend;
    return v;
}

/* What the record names before the worker says anything: the files (hashed
 * here, not by the worker) and the backend. 0, or 2 with one line. */
static int name_files(const char *cmd, rg_cli_impl *x, const rg_run_options *o)
{
    char err[RG_ERRLEN];
    rg_run_impl *n = &x->named;
    memset(n, 0, sizeof *n);
    snprintf(n->path, sizeof n->path, "%s", x->path ? x->path : g_worker_impl_path ? g_worker_impl_path : "");
    snprintf(n->backend, sizeof n->backend, "%s", o->backend);
    memcpy(n->sources, x->sources, sizeof x->sources);
    n->n_sources = x->n_sources;
    n->embedded = !x->path;
    if (rg_impl_hash_files(n, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad %s: %s\n", cmd, err);
        return 2;
    }
    return 0;
}

/* The names the worker gave (a result: its checked descriptor; a failure:
 * what its page held, or the file's name). */
static void name_impl(rg_cli_impl *x, const char *name, const char *version, const char *meta)
{
    rg_run_impl *n = &x->named;
    const char *base = strrchr(n->path, '/') ? strrchr(n->path, '/') + 1 : n->path;
    snprintf(n->name, sizeof n->name, "%.*s", (int)sizeof n->name - 1, name[0] ? name : base[0] ? base : "unknown");
    snprintf(n->version, sizeof n->version, "%s", version[0] ? version : "unknown");
    snprintf(n->label, sizeof n->label, "%s %s", n->name, n->version);
    n->meta_json = meta;
    x->open = 1;
}

/* The worker failed: its one line, then a failed run. 1, or 2 when even that could not be made. */
static int worker_failed(const char *cmd, rg_cli_impl *x, const rg_worker_outcome *w, const rg_suite *s,
                         const int *indices, size_t n, const rg_run_options *o, rg_run_result *r)
{
    char at[48] = "", named[80] = "", err[RG_ERRLEN];
    if (w->workload >= 0) snprintf(at, sizeof at, " at workload %d", w->workload);
    if (w->name[0]) snprintf(named, sizeof named, " (%s %s)", w->name, w->version);
    name_impl(x, w->name, w->version, NULL);
    rg_term_printf(stderr, "ropegrad %s: %s%s%s: %s\n", cmd, x->named.path, named, at, w->what);
    if (rg_worker_failed_result(s, indices, n, o, o->backend, w->what, r, err, sizeof err)) {
        fprintf(stderr, "ropegrad %s: %s\n", cmd, err);
        return 2;
    }
    return 1;
}

/* Starts the worker for the run. *r: the result (0), a failed run (1); 2 with one line on stderr. */
static int supervise(const char *cmd, rg_cli_impl *x, const rg_suite *s, const int *indices, size_t n,
                     const rg_run_options *o, char **argv, rg_run_result *r)
{
    char err[RG_ERRLEN];
    const double timeout = (double)(x->timeout_s >= 0 ? x->timeout_s : RG_IMPL_TIMEOUT_DEFAULT);
    rg_worker_spec spec = {argv, timeout};
    rg_worker_outcome *w = &x->outcome;
    if (rg_worker_run(&spec, w, err, sizeof err)) {
        fprintf(stderr, "ropegrad %s: %s\n", cmd, err);
        return 2;
    }
    if (w->end == RG_WORKER_FAILED) return worker_failed(cmd, x, w, s, indices, n, o, r);
    if (w->end == RG_WORKER_REFUSED) {
        rg_term_printf(stderr, "ropegrad %s: %s\n", cmd, w->msg.refusal);
        return 2;
    }
    if (rg_worker_adopt_result(s, indices, n, &w->msg.result, err, sizeof err)) {
        snprintf(w->what, sizeof w->what, "%s", err);
        w->end = RG_WORKER_FAILED;
        return worker_failed(cmd, x, w, s, indices, n, o, r);
    }
    *r = w->msg.result;   /* moved: the outcome keeps the meta text the name points at */
    memset(&w->msg.result, 0, sizeof w->msg.result);
    name_impl(x, w->msg.name, w->msg.version, w->msg.meta_json);
    return 0;
}

int rg_cli_worker_run(const char *cmd, rg_cli_impl *x, const rg_suite *s, const int *indices, size_t n,
                      rg_run_options *o, int argc, char **argv, rg_run_result *r)
{
    if (!cmd || !x || !s || !o || !argv || !r) {
        fprintf(stderr, "ropegrad: rg_cli_worker_run: missing argument\n");
        return 2;
    }
    memset(r, 0, sizeof *r);
    if (!strcmp(o->backend, "auto")) o->backend = ropegrad_cuda_available() ? "cuda" : "cpu";
    if (name_files(cmd, x, o)) return 2;
    char **wargv = worker_argv(argc, argv, o->backend);
    if (!wargv) {
        fprintf(stderr, "ropegrad %s: cannot make the worker's command (this executable not found, or out of "
                "memory)\n", cmd);
        return 2;
    }
    int rc = supervise(cmd, x, s, indices, n, o, wargv, r);
    free(wargv);
    if (rc != 2) {
        r->impl = &x->named;
        snprintf(r->kernel_name, sizeof r->kernel_name, "%s", x->named.label);
    }
    return rc;
}

void rg_cli_worker_close(rg_cli_impl *x)
{
    rg_worker_msg_free(&x->outcome.msg);
}
