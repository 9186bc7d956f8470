/* SPDX-License-Identifier: Apache-2.0 */
/* impl.c -- loading a plugin (include/ropegrad_impl.h) and standing it in
 * for the op's entry points; the CPU watchdog. See impl.h. */
#define _DEFAULT_SOURCE   /* realpath */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "impl.h"
#include "worker.h"

/* The one open plugin (impl.h: one per process). */
static rg_impl *g_open;

/* ---- the CPU watchdog ------------------------------------------------------------ */

/* When the call in progress started (0: none) and the workload: this
 * process's own page, or the supervising parent's (rg_impl_set_watch). */
static rg_worker_watch g_own_watch;
static rg_worker_watch *g_watch = &g_own_watch;
static atomic_int g_watch_stop;
static pthread_t g_watch_thread;
static int g_watch_running;

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The one line, written with write(2): the main thread may hold stdio's locks. */
static void watchdog_fire(const rg_impl *impl)
{
    char line[512];
    int n = snprintf(line, sizeof line,
                     "ropegrad: --impl %s: its cpu entry did not return within %g s (--timeout): stopped, "
                     "nothing recorded\n", impl->label, impl->timeout_s);
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        (void)w;
    }
    _exit(1);
}

static void *watchdog_main(void *arg)
{
    const rg_impl *impl = arg;
    const long long limit = (long long)(impl->timeout_s * 1e9);
    const struct timespec tick = {0, 20 * 1000 * 1000};
    while (!atomic_load(&g_watch_stop)) {
        long long started = atomic_load(&g_watch->started_ns);
        if (started && mono_ns() - started > limit) watchdog_fire(impl);
        nanosleep(&tick, NULL);
    }
    return NULL;
}

static int watchdog_start(rg_impl *impl, char *err, size_t errlen)
{
    atomic_store(&g_watch->started_ns, 0);
    atomic_store(&g_watch_stop, 0);
    int rc = pthread_create(&g_watch_thread, NULL, watchdog_main, impl);
    if (rc) {
        snprintf(err, errlen, "--timeout: cannot start the watchdog thread: %s", strerror(rc));
        return 1;
    }
    g_watch_running = 1;
    return 0;
}

static void watchdog_stop(void)
{
    if (!g_watch_running) return;
    atomic_store(&g_watch_stop, 1);
    pthread_join(g_watch_thread, NULL);
    g_watch_running = 0;
}

/* ---- the trampolines: the op table's cpu / cuda, calling the plugin ------------------ */

/* An embedded implementation's failed call: its own line, kept for error_text. */
static int remember_failure(int rc)
{
    const rg_impl_embedded *e = g_open ? g_open->embedded : NULL;
    if (!rc || !e) return rc;
    const char *line = e->error_text ? e->error_text() : NULL;
    snprintf(g_open->error_line, sizeof g_open->error_line, "%s", line ? line : "");
    for (char *c = g_open->error_line; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
    return rc;
}

static int plugin_cpu(const rg_tensors *t, void *out, int threads)
{
    if (!g_open) return ROPEGRAD_ERR_NULL_PROBLEM;
    atomic_store(&g_watch->started_ns, mono_ns());
    int rc = g_open->op.impl_cpu(g_open->desc->cpu, t, out, threads);
    atomic_store(&g_watch->started_ns, 0);
    return remember_failure(rc);
}

/* The host side of a CUDA call is watched as a CPU call is (a kernel that
 * hangs on the GPU is the CUDA backend's own timeout, run_cuda.c). */
static int plugin_cuda(const rg_tensors *t, void *out, int kernel, void *stream)
{
    if (!g_open) return ROPEGRAD_ERR_NULL_PROBLEM;
    if (kernel != 0) return ROPEGRAD_ERR_BAD_KERNEL;
    atomic_store(&g_watch->started_ns, mono_ns());
    int rc = g_open->op.impl_cuda(g_open->desc->cuda, t, out, stream);
    atomic_store(&g_watch->started_ns, 0);
    return remember_failure(rc);
}

/* rg_op.make: the workload whose inputs are made is the one being run. */
static int plugin_make(const struct rg_workload *w, ropegrad_dtype dt, int kind, uint64_t seed, rg_tensors *t,
                       char *err, size_t errlen)
{
    if (!g_open || !w) return ROPEGRAD_ERR_NULL_PROBLEM;
    atomic_store(&g_watch->workload, w->index);
    return g_open->base->make(w, dt, kind, seed, t, err, errlen);
}

/* rg_op.finish of an embedded implementation (stream NULL: the CPU backend). */
static int plugin_finish(const rg_tensors *t, void *out, void *stream)
{
    const rg_impl_embedded *e = g_open ? g_open->embedded : NULL;
    if (!e) return ROPEGRAD_ERR_NULL_PROBLEM;
    if (stream) return e->finish_cuda ? remember_failure(g_open->op.impl_cuda(e->finish_cuda, t, out, stream)) : 0;
    return e->finish_cpu ? remember_failure(g_open->op.impl_cpu(e->finish_cpu, t, out, 0)) : 0;
}

/* rg_op.stage of an embedded implementation that stages its timed calls (stream NULL: the CPU backend). */
static int plugin_stage(const rg_tensors *t, void *out, void *stream)
{
    const rg_impl_embedded *e = g_open ? g_open->embedded : NULL;
    if (!e) return ROPEGRAD_ERR_NULL_PROBLEM;
    if (stream) return e->stage_cuda ? remember_failure(g_open->op.impl_cuda(e->stage_cuda, t, out, stream)) : 0;
    return e->stage_cpu ? remember_failure(g_open->op.impl_cpu(e->stage_cpu, t, out, 0)) : 0;
}

static const char *plugin_error_text(int rc)
{
    (void)rc;
    return g_open && g_open->error_line[0] ? g_open->error_line : NULL;
}

static const char *plugin_kernel_name(int k)
{
    return k == 0 && g_open ? g_open->label : NULL;
}

/* ---- checking the descriptor ------------------------------------------------------------- */

/* A descriptor string: 1..ROPEGRAD_IMPL_MAX_NAME printable ASCII bytes, no
 * space at either end (read at most one byte past the limit). */
static int copy_label(const char *what, const char *s, char *dst, size_t dstlen, char *err, size_t errlen)
{
    if (!s) {
        snprintf(err, errlen, "the descriptor's %s is NULL", what);
        return 1;
    }
    size_t n = 0;
    while (n <= ROPEGRAD_IMPL_MAX_NAME && s[n]) {
        if (s[n] < 0x20 || s[n] > 0x7e) {
            snprintf(err, errlen, "the descriptor's %s has a byte that is not printable ASCII (0x%02x at %zu)", what,
                     (unsigned)(unsigned char)s[n], n);
            return 1;
        }
        n++;
    }
    if (n == 0 || n > ROPEGRAD_IMPL_MAX_NAME || s[0] == ' ' || s[n - 1] == ' ') {
        snprintf(err, errlen, "the descriptor's %s must be 1..%d printable ASCII bytes without spaces at its ends",
                 what, ROPEGRAD_IMPL_MAX_NAME);
        return 1;
    }
    snprintf(dst, dstlen, "%.*s", (int)n, s);
    return 0;
}

/* The descriptor's op: compared without reading past the suite's name. */
static int same_op(const char *plugin_op, const char *definition)
{
    size_t n = strlen(definition);
    return plugin_op && !strncmp(plugin_op, definition, n) && plugin_op[n] == '\0';
}

/* The descriptor's op for a message: its printable ASCII prefix, "(NULL)" for none. */
static void shown_op(const char *op, char *dst, size_t n)
{
    size_t k = 0;
    if (!op) {
        snprintf(dst, n, "(NULL)");
        return;
    }
    while (k + 1 < n && op[k] >= 0x20 && op[k] <= 0x7e) {
        dst[k] = op[k];
        k++;
    }
    dst[k] = '\0';
}

static int check_descriptor(rg_impl *impl, const rg_op *op, char *err, size_t errlen)
{
    const ropegrad_impl *d = impl->desc;
    if (d->abi_version != ROPEGRAD_IMPL_ABI_VERSION) {
        snprintf(err, errlen, "ABI version %u, this ropegrad reads version %d (rebuild it against this "
                 "include/ropegrad_impl.h)", (unsigned)d->abi_version, ROPEGRAD_IMPL_ABI_VERSION);
        return 1;
    }
    if (copy_label("name", d->name, impl->name, sizeof impl->name, err, errlen) ||
        copy_label("version", d->version, impl->version, sizeof impl->version, err, errlen))
        return 1;
    if (!same_op(d->op, op->definition)) {
        char shown[80];
        shown_op(d->op, shown, sizeof shown);
        snprintf(err, errlen, "it implements op '%s', the suite is '%s'", shown, op->definition);
        return 1;
    }
    const int cuda = !strcmp(impl->backend, "cuda");
    if (cuda ? !d->cuda : !d->cpu) {
        snprintf(err, errlen, "it has no %s entry (the descriptor's %s is NULL)%s", impl->backend, impl->backend,
                 cuda ? "" : ": measure it with --backend cuda");
        return 1;
    }
    return 0;
}

/* ---- loading ------------------------------------------------------------------------------ */

/* dlopen() wants a path with a slash (else it searches the library path) and
 * would block on a FIFO: a regular file, by its absolute path. */
static int resolve_path(const char *path, char *abs, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "cannot open: %s", strerror(errno));
        return 1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "not a regular file");
        return 1;
    }
    if (!realpath(path, abs)) {
        snprintf(err, errlen, "cannot resolve the path: %s", strerror(errno));
        return 1;
    }
    return 0;
}

/* dlerror()'s text on one line. */
static void dl_reason(char *dst, size_t n)
{
    const char *e = dlerror();
    snprintf(dst, n, "%s", e ? e : "unknown error");
    for (char *c = dst; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
}

static int load_descriptor(rg_impl *impl, const char *abs, char *err, size_t errlen)
{
    char why[256];
    impl->dl = dlopen(abs, RTLD_NOW | RTLD_LOCAL);
    if (!impl->dl) {
        dl_reason(why, sizeof why);
        snprintf(err, errlen, "not a loadable shared library (%s)", why);
        return 1;
    }
    dlerror();
    void *sym = dlsym(impl->dl, ROPEGRAD_IMPL_DESCRIPTOR_SYMBOL);
    if (!sym) {
        snprintf(err, errlen, "it exports no %s() (include/ropegrad_impl.h)", ROPEGRAD_IMPL_DESCRIPTOR_SYMBOL);
        return 1;
    }
    const ropegrad_impl *(*descriptor)(void);
    memcpy(&descriptor, &sym, sizeof descriptor);   /* POSIX: a function's address from dlsym */
    impl->desc = descriptor();
    if (!impl->desc) {
        snprintf(err, errlen, "%s() returned NULL", ROPEGRAD_IMPL_DESCRIPTOR_SYMBOL);
        return 1;
    }
    return 0;
}

static int check_arguments(const char *path, const rg_op *op, const char *backend, double timeout_s, rg_impl *out,
                           char *err, size_t errlen)
{
    if (!path || !*path || !op || !backend || !out) {
        snprintf(err, errlen, "rg_impl_open: missing argument");
        return 1;
    }
    if (strcmp(backend, "cpu") && strcmp(backend, "cuda")) {
        snprintf(err, errlen, "rg_impl_open: backend must be cpu or cuda, got '%s'", backend);
        return 1;
    }
    if (!(timeout_s == 0 || (timeout_s >= 0.001 && timeout_s <= 86400))) {
        snprintf(err, errlen, "rg_impl_open: timeout must be 0 or 0.001..86400 s");
        return 1;
    }
    if (g_open) {
        snprintf(err, errlen, "rg_impl_open: a plugin is already open (%s)", g_open->label);
        return 1;
    }
    if (!op->impl_cpu || !op->impl_cuda) {
        snprintf(err, errlen, "op %s takes no plugins yet", op->id);
        return 1;
    }
    return 0;
}

static void start_open(const char *path, const char *backend, double timeout_s, rg_impl *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", path);
    snprintf(out->backend, sizeof out->backend, "%s", backend);
    out->timeout_s = timeout_s;
}

/* The checked implementation stands in for the op's entries. */
static int finish_open(const rg_op *op, rg_impl *out, char *err, size_t errlen)
{
    snprintf(out->label, sizeof out->label, "%s %s", out->name, out->version);
    out->op = *op;
    out->base = op;
    out->op.make = op->make ? plugin_make : NULL;
    out->op.cpu = plugin_cpu;
    out->op.cuda = plugin_cuda;
    out->op.kernel_name = plugin_kernel_name;
    out->op.solution = NULL;
    out->op.finish = out->embedded ? plugin_finish : NULL;
    out->op.error_text = out->embedded ? plugin_error_text : NULL;
    out->op.stage = out->embedded && (out->embedded->stage_cuda || out->embedded->stage_cpu) ? plugin_stage : NULL;
    const int supervised = g_watch != &g_own_watch;   /* the parent times the calls */
    if (!supervised && !strcmp(out->backend, "cpu") && out->timeout_s > 0 && watchdog_start(out, err, errlen))
        return 1;
    g_open = out;
    snprintf(g_watch->name, sizeof g_watch->name, "%s", out->name);
    snprintf(g_watch->version, sizeof g_watch->version, "%s", out->version);
    atomic_store(&g_watch->phase, RG_WORKER_RUNNING);
    atomic_store(&g_watch->started_ns, 0);   /* loaded and checked: the loading's clock stops */
    return 0;
}

void rg_impl_set_watch(rg_worker_watch *w)
{
    g_watch = w ? w : &g_own_watch;
}

int rg_impl_open(const char *path, const rg_op *op, const char *backend, double timeout_s, rg_impl *out, char *err,
                 size_t errlen)
{
    if (check_arguments(path, op, backend, timeout_s, out, err, errlen)) return 1;
    start_open(path, backend, timeout_s, out);
    char abs[PATH_MAX], why[RG_IMPL_ERRLEN];
    if (resolve_path(path, abs, why, sizeof why) || load_descriptor(out, abs, why, sizeof why) ||
        check_descriptor(out, op, why, sizeof why)) {
        snprintf(err, errlen, "--impl %s: %s", path, why);
        if (out->dl) dlclose(out->dl);
        out->dl = NULL;
        return 1;
    }
    return finish_open(op, out, err, errlen);
}

/* An embedded implementation's metadata: NULL or a JSON object. */
static int check_meta(const char *meta, char *err, size_t errlen)
{
    if (!meta) return 0;
    cJSON *j = cJSON_Parse(meta);
    int ok = j && cJSON_IsObject(j);
    cJSON_Delete(j);
    if (!ok) snprintf(err, errlen, "its metadata is not a JSON object");
    return ok ? 0 : 1;
}

int rg_impl_open_embedded(const rg_impl_embedded *e, const rg_op *op, const char *backend, double timeout_s,
                          rg_impl *out, char *err, size_t errlen)
{
    if (!e) {
        snprintf(err, errlen, "rg_impl_open_embedded: missing argument");
        return 1;
    }
    if (check_arguments(e->path, op, backend, timeout_s, out, err, errlen)) return 1;
    start_open(e->path, backend, timeout_s, out);
    out->embedded = e;
    out->desc = e->desc;
    char abs[PATH_MAX], why[RG_IMPL_ERRLEN];
    if (!e->desc) snprintf(why, sizeof why, "no descriptor");
    if (!e->desc || resolve_path(e->path, abs, why, sizeof why) || check_descriptor(out, op, why, sizeof why) ||
        check_meta(e->meta_json, why, sizeof why)) {
        snprintf(err, errlen, "--impl %s: %s", e->path, why);
        return 1;
    }
    return finish_open(op, out, err, errlen);
}

void rg_impl_close(rg_impl *impl)
{
    if (!impl || g_open != impl) return;
    watchdog_stop();
    g_open = NULL;
}
