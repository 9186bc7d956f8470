/* SPDX-License-Identifier: Apache-2.0 */
/* worker.c -- starting and watching the supervised worker (worker.h): its
 * watched page, its process group, its channel, its end. */
#define _GNU_SOURCE   /* pipe2, prctl */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "worker.h"

#define POLL_MS 20
#define MAX_ARGS 4096
/* After its channel closed, the worker has max(--timeout, this) to exit: a
 * process that lost its GPU (a hung kernel) takes a while to be torn down. */
#define EXIT_GRACE_S 30.0

long long rg_worker_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- the watched page ------------------------------------------------------------------ */

static rg_worker_watch *map_page(int fd, char *err, size_t errlen)
{
    void *p = mmap(NULL, sizeof(rg_worker_watch), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "the worker's watch page: cannot map it: %s", strerror(errno));
        return NULL;
    }
    return p;
}

/* A file with no name (memfd; elsewhere an unlinked temporary file), close-on-exec. */
static int anonymous_file(void)
{
#ifdef MFD_CLOEXEC
    int f = memfd_create("ropegrad-watch", MFD_CLOEXEC);
    if (f >= 0) return f;
#endif
    char path[] = "/tmp/ropegrad-watch-XXXXXX";
    int t = mkstemp(path);
    if (t < 0) return -1;
    unlink(path);
    fcntl(t, F_SETFD, FD_CLOEXEC);
    return t;
}

rg_worker_watch *rg_worker_watch_create(int *fd, char *err, size_t errlen)
{
    if (!fd) {
        snprintf(err, errlen, "rg_worker_watch_create: missing argument");
        return NULL;
    }
    int f = anonymous_file();
    if (f < 0 || ftruncate(f, sizeof(rg_worker_watch)) != 0) {
        snprintf(err, errlen, "the worker's watch page: cannot make it: %s", strerror(errno));
        if (f >= 0) close(f);
        return NULL;
    }
    rg_worker_watch *w = map_page(f, err, errlen);
    if (!w) {
        close(f);
        return NULL;
    }
    atomic_store(&w->workload, -1);
    *fd = f;
    return w;
}

rg_worker_watch *rg_worker_watch_attach(int fd, char *err, size_t errlen)
{
    if (fd < 0) {
        snprintf(err, errlen, "--worker-watch: not an fd");
        return NULL;
    }
    return map_page(fd, err, errlen);
}

void rg_worker_watch_unmap(rg_worker_watch *w)
{
    if (w) munmap(w, sizeof *w);
}

/* ---- starting it ---------------------------------------------------------------------- */

/* The worker's argv: spec's, then --worker-channel C --worker-watch W. */
static char **worker_argv(const rg_worker_spec *spec, int chan, int watch, char *nums, size_t numlen)
{
    size_t n = 0;
    while (spec->argv[n] && n < MAX_ARGS) n++;
    char **argv = calloc(n + 5, sizeof *argv);
    if (!argv) return NULL;
    memcpy(argv, spec->argv, n * sizeof *argv);
    snprintf(nums, numlen, "%d", chan);
    snprintf(nums + numlen / 2, numlen / 2, "%d", watch);
    argv[n] = "--worker-channel";
    argv[n + 1] = nums;
    argv[n + 2] = "--worker-watch";
    argv[n + 3] = nums + numlen / 2;
    return argv;
}

/* In the child: its own process group, stdout onto stderr (nothing it
 * prints can pass for the parent's results), killed with the parent. */
static void child_exec(char **argv, int chan, int watch)
{
    setpgid(0, 0);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    dup2(STDERR_FILENO, STDOUT_FILENO);
    fcntl(chan, F_SETFD, 0);
    fcntl(watch, F_SETFD, 0);
    execvp(argv[0], argv);
    char line[300];
    int k = snprintf(line, sizeof line, "ropegrad: cannot start the worker %s: %s\n", argv[0], strerror(errno));
    if (k > 0 && write(STDERR_FILENO, line, (size_t)k < sizeof line ? (size_t)k : sizeof line - 1) < 0) k = 0;
    _exit(127);
}

/* ---- watching it ------------------------------------------------------------------------ */

typedef struct watching {
    const rg_worker_spec *spec;
    rg_worker_watch *page;
    pid_t pid;
    int fd;                       /* the channel's read end, -1 at its end */
    unsigned char *buf;
    size_t n, cap;
    int status, exited;           /* waitpid's */
    long long eof_ns;             /* when the channel ended (0: not yet) */
} watching;

/* The channel's bytes, up to one frame of the largest size. 0, or 1 past it. */
static int take_bytes(watching *w)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 65536;
        if (cap > RG_WORKER_HEADER + RG_WORKER_MAX_JSON + 1) cap = RG_WORKER_HEADER + RG_WORKER_MAX_JSON + 1;
        if (cap == w->cap) return 1;
        unsigned char *b = realloc(w->buf, cap);
        if (!b) return 1;
        w->buf = b;
        w->cap = cap;
    }
    ssize_t r = read(w->fd, w->buf + w->n, w->cap - w->n);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    if (r <= 0) {
        close(w->fd);
        w->fd = -1;
        w->eof_ns = rg_worker_now_ns();
        return 0;
    }
    w->n += (size_t)r;
    return 0;
}

/* Past the timeout: a call (or the loading) still running, or the worker
 * still alive that long after its channel ended. */
static int overdue(const watching *w, int *loading)
{
    const long long limit = (long long)(w->spec->timeout_s * 1e9), now = rg_worker_now_ns();
    long long started = atomic_load(&w->page->started_ns);
    *loading = atomic_load(&w->page->phase) != RG_WORKER_RUNNING;
    if (started && now - started > limit) return 1;
    *loading = 0;
    const double grace = w->spec->timeout_s > EXIT_GRACE_S ? w->spec->timeout_s : EXIT_GRACE_S;
    return w->eof_ns && now - w->eof_ns > (long long)(grace * 1e9) ? 2 : 0;
}

static void kill_group(watching *w)
{
    kill(-w->pid, SIGKILL);
    kill(w->pid, SIGKILL);
    while (waitpid(w->pid, &w->status, 0) < 0 && errno == EINTR) {
    }
    w->exited = 1;
}

static const char *signal_abbrev(int sig)
{
    static const struct {
        int sig;
        const char *name;
    } names[] = {{SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
                 {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"},
                 {SIGPIPE, "SIGPIPE"}, {SIGXFSZ, "SIGXFSZ"}, {SIGXCPU, "SIGXCPU"}, {SIGTRAP, "SIGTRAP"},
                 {SIGSYS, "SIGSYS"},   {SIGHUP, "SIGHUP"},   {SIGALRM, "SIGALRM"}, {SIGQUIT, "SIGQUIT"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig) return names[i].name;
    return "a signal";
}

static void failed(rg_worker_outcome *out, const char *what)
{
    out->end = RG_WORKER_FAILED;
    snprintf(out->what, sizeof out->what, "%s", what);
}

/* How it ended, into out. */
static void judge(watching *w, int timed_out, int loading, rg_worker_outcome *out)
{
    const double t = w->spec->timeout_s;
    char why[RG_ERRLEN];
    if (timed_out == 1)
        snprintf(why, sizeof why, "%s within %g s (--timeout): the worker was killed",
                 loading ? "it did not finish loading" : "a call into it did not return", t);
    else if (timed_out == 2)
        snprintf(why, sizeof why, "it did not exit within %g s after its channel closed: the worker was killed",
                 t > EXIT_GRACE_S ? t : EXIT_GRACE_S);
    else if (WIFSIGNALED(w->status))
        snprintf(why, sizeof why, "the worker was killed by signal %s (%s)", signal_abbrev(WTERMSIG(w->status)),
                 strsignal(WTERMSIG(w->status)));
    else if (!WIFEXITED(w->status) || WEXITSTATUS(w->status) != 0 || !w->n)
        snprintf(why, sizeof why, "the worker exited with status %d before it sent a result",
                 WIFEXITED(w->status) ? WEXITSTATUS(w->status) : -1);
    else if (rg_worker_msg_parse(w->buf, w->n, &out->msg, why, sizeof why) == 0) {
        out->end = out->msg.refused ? RG_WORKER_REFUSED : RG_WORKER_RESULT;
        return;
    }
    failed(out, why);
}

/* After the worker ended: what it wrote before, without waiting for anyone still holding the channel. */
static int drain(watching *w)
{
    fcntl(w->fd, F_SETFL, O_NONBLOCK);
    while (w->fd >= 0) {
        size_t before = w->n;
        if (take_bytes(w)) return 1;
        if (w->fd >= 0 && w->n == before) break;   /* nothing more now */
    }
    return 0;
}

/* Until the worker is gone: its channel read, its calls timed. */
static void supervise(watching *w, rg_worker_outcome *out)
{
    int timed_out = 0, loading = 0;
    while (!w->exited) {
        struct pollfd p = {w->fd, POLLIN, 0};
        int r = w->fd >= 0 ? poll(&p, 1, POLL_MS) : 0;
        if (w->fd < 0) nanosleep(&(struct timespec){0, POLL_MS * 1000000L}, NULL);
        if (r > 0 && take_bytes(w)) {
            kill_group(w);
            failed(out, "the worker sent more than one message's worth of bytes");
            return;
        }
        if (waitpid(w->pid, &w->status, WNOHANG) == w->pid) {
            w->exited = 1;
            kill(-w->pid, SIGKILL);   /* anything it left behind in its group */
            if (w->fd >= 0 && drain(w)) {
                failed(out, "the worker sent more than one message's worth of bytes");
                return;
            }
        } else if ((timed_out = overdue(w, &loading)) != 0) {
            kill_group(w);
        }
    }
    judge(w, timed_out, loading, out);
}

/* The channel (read end here, write end for the worker) and the fork. 0, or 1 with a message. */
static int start(watching *w, int watch_fd, char *err, size_t errlen)
{
    int ch[2];
    if (pipe2(ch, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "the worker's channel: %s", strerror(errno));
        return 1;
    }
    char nums[64];
    char **argv = worker_argv(w->spec, ch[1], watch_fd, nums, sizeof nums);
    if (!argv) {
        close(ch[0]);
        close(ch[1]);
        snprintf(err, errlen, "the worker's command: out of memory");
        return 1;
    }
    fflush(NULL);
    atomic_store(&w->page->phase, RG_WORKER_LOADING);
    atomic_store(&w->page->started_ns, rg_worker_now_ns());   /* armed before anything is loaded */
    w->pid = fork();
    if (w->pid == 0) child_exec(argv, ch[1], watch_fd);
    free(argv);
    close(ch[1]);
    if (w->pid < 0) {
        close(ch[0]);
        snprintf(err, errlen, "cannot start the worker: %s", strerror(errno));
        return 1;
    }
    setpgid(w->pid, w->pid);
    w->fd = ch[0];
    return 0;
}

/* The worker's text (it may have written anything there): printable ASCII only. */
static void printable(char *dst, const char *src, size_t n)
{
    size_t i = 0;
    for (; i + 1 < n && src[i]; i++) dst[i] = src[i] >= 0x20 && src[i] <= 0x7e ? src[i] : '?';
    dst[i] = '\0';
}

int rg_worker_run(const rg_worker_spec *spec, rg_worker_outcome *out, char *err, size_t errlen)
{
    if (!spec || !spec->argv || !spec->argv[0] || !(spec->timeout_s > 0) || !out) {
        snprintf(err, errlen, "rg_worker_run: missing argument or timeout");
        return 1;
    }
    memset(out, 0, sizeof *out);
    out->workload = -1;
    int watch_fd = -1;
    watching w = {spec, rg_worker_watch_create(&watch_fd, err, errlen), -1, -1, NULL, 0, 0, 0, 0, 0};
    if (!w.page) return 1;
    int rc = start(&w, watch_fd, err, errlen);
    close(watch_fd);
    if (!rc) {
        supervise(&w, out);
        out->workload = atomic_load(&w.page->workload);
        printable(out->name, w.page->name, sizeof out->name);
        printable(out->version, w.page->version, sizeof out->version);
    }
    if (w.fd >= 0) close(w.fd);
    free(w.buf);
    rg_worker_watch_unmap(w.page);
    return rc;
}
