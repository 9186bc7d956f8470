/* SPDX-License-Identifier: Apache-2.0 */
/* bench_impl.c -- the --impl options of `ropegrad bench|check` (bench_impl.h). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench_impl.h"
#include "cliopt.h"
#include "record.h"
#include "rg_term.h"

static const rg_impl_embedded *g_embedded;

const rg_impl_embedded *rg_cli_impl_embedded(void) { return g_embedded; }

void rg_cli_impl_set_embedded(const rg_impl_embedded *e) { g_embedded = e; }

int rg_cli_impl_option(const char *cmd, const char *opt, const char *arg, rg_cli_impl *x)
{
    long long v;
    if (!strcmp(opt, "impl")) {
        x->path = arg;
    } else if (!strcmp(opt, "impl-source")) {
        if (x->n_sources == RG_IMPL_MAX_SOURCES) {
            fprintf(stderr, "ropegrad %s: --impl-source: at most %d files\n", cmd, RG_IMPL_MAX_SOURCES);
            return 2;
        }
        x->sources[x->n_sources++] = arg;
    } else if (!strcmp(opt, "timeout")) {
        if (rg_cli_parse_ll(arg, 1, 86400, &v)) {
            rg_term_printf(stderr, "ropegrad %s: --timeout: '%s' is not a number of seconds in 1..86400\n", cmd, arg);
            return 2;
        }
        x->timeout_s = v;
    } else if (!strcmp(opt, "worker-channel") || !strcmp(opt, "worker-watch")) {
        if (rg_cli_parse_ll(arg, 0, 65535, &v)) {
            fprintf(stderr, "ropegrad %s: --%s: '%s' is not an fd\n", cmd, opt, arg);
            return 2;
        }
        *(opt[7] == 'c' ? &x->channel_fd : &x->watch_fd) = (int)v;
    }
    return 0;
}

int rg_cli_impl_check(const char *cmd, const rg_cli_impl *x, const rg_run_options *o)
{
    const char *orphan = x->n_sources ? "--impl-source" : x->timeout_s >= 0 ? "--timeout" : NULL;
    const int supervised = rg_cli_worker_supervises(x) && !x->path;   /* a caller's worker (embed.h) */
    if (x->path && x->embedded) {
        fprintf(stderr, "ropegrad %s: --impl: an implementation is already given by the caller\n", cmd);
        return 2;
    }
    if (!x->path && !x->embedded && !supervised && orphan) {
        fprintf(stderr, "ropegrad %s: %s only applies with --impl\n", cmd, orphan);
        return 2;
    }
    if ((x->path || x->embedded || supervised) && o->kernel != 0) {
        fprintf(stderr, "ropegrad %s: --kernel selects one of ropegrad's kernels; a plugin (--impl) has one\n", cmd);
        return 2;
    }
    return 0;
}

int rg_cli_impl_load(rg_cli_impl *x, rg_suite *s, rg_run_options *o, char *err, size_t errlen)
{
    if (!x->path && !x->embedded) return 0;
    if (!strcmp(o->backend, "auto")) o->backend = ropegrad_cuda_available() ? "cuda" : "cpu";
    const double timeout = (double)(x->timeout_s >= 0 ? x->timeout_s : RG_IMPL_TIMEOUT_DEFAULT);
    if (x->embedded ? rg_impl_open_embedded(x->embedded, s->op, o->backend, timeout, &x->impl, err, errlen)
                    : rg_impl_open(x->path, s->op, o->backend, timeout, &x->impl, err, errlen))
        return 2;
    x->open = 1;
    if (!strcmp(o->backend, "cuda")) o->timeout_s = timeout;
    rg_run_impl *n = &x->named;
    memset(n, 0, sizeof *n);
    snprintf(n->path, sizeof n->path, "%s", x->impl.path);
    snprintf(n->name, sizeof n->name, "%s", x->impl.name);
    snprintf(n->version, sizeof n->version, "%s", x->impl.version);
    snprintf(n->label, sizeof n->label, "%s", x->impl.label);
    snprintf(n->backend, sizeof n->backend, "%s", x->impl.backend);
    memcpy(n->sources, x->sources, sizeof x->sources);
    n->n_sources = x->n_sources;
    n->embedded = x->impl.embedded != NULL;
    n->meta_json = x->impl.embedded ? x->impl.embedded->meta_json : NULL;
    if (rg_impl_hash_files(n, err, errlen)) return 2;
    s->op = &x->impl.op;
    return 0;
}

void rg_cli_impl_result(rg_cli_impl *x, rg_run_result *r)
{
    if (!x->open) return;
    r->impl = &x->named;
    snprintf(r->kernel_name, sizeof r->kernel_name, "%s", x->impl.label);
}

void rg_cli_exit_if_gpu_lost(const char *cmd, const rg_run_result *r, int code)
{
    if (!r->stopped[0]) return;
    rg_term_printf(stderr, "ropegrad %s: stopped at %s; the GPU is unusable, so the process ends here\n", cmd,
                   r->stopped);
    fflush(NULL);
    _exit(code);
}

void rg_cli_impl_close(rg_cli_impl *x)
{
    if (x->open && !rg_cli_worker_supervises(x)) rg_impl_close(&x->impl);
    x->open = 0;
    rg_cli_worker_close(x);
}
