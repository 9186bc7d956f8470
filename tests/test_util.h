/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_util.h -- what the end-to-end tests share: running the built binary
 * (RG_BINARY_DIR/ropegrad) with its output captured, reading files back, and
 * the scratch directories they run in.
 *
 * Header-only (static inline): tests/test_*.c are each their own executable
 * (see tests/CMakeLists.txt), and a .h is not picked up as one. Includes
 * cmocka itself, with the headers cmocka needs first, so it can come first.
 */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#define TU_BIN RG_BINARY_DIR "/ropegrad"

/* The whole file, NUL-terminated so text can be used as a string; *len (when
 * not NULL) gets its byte count, 0 when the file cannot be read. Reads until
 * EOF rather than trusting a size up front: the file may be a pipe or still
 * growing. NULL when it cannot be opened (or out of memory). */
static inline char *tu_slurp(const char *path, size_t *len)
{
    if (len) *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *p = realloc(buf, cap *= 2);
            if (!p) free(buf);
            buf = p;
        }
    }
    fclose(f);
    if (!buf) return NULL;
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

static inline int tu_count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* Entries of dir other than dot files; -1 when it cannot be opened. */
static inline int tu_count_dir(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    if (!d) return -1;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

/* Exit status of a shell command, -1 when it did not exit normally (killed
 * by a signal, or no shell could be started). */
static inline int tu_system(const char *cmd)
{
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Runs `ropegrad ARGS` in cwd (NULL: the test's own working directory) with
 * stdout into out_path and stderr into err_path; returns the exit status and
 * fails the test when the binary did not exit normally (a crash is never an
 * acceptable answer, whatever the arguments). */
static inline int tu_run_ropegrad(const char *cwd, const char *args, const char *out_path, const char *err_path)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s%s%s'%s' %s >'%s' 2>'%s'", cwd ? "cd '" : "", cwd ? cwd : "", cwd ? "' && " : "",
             TU_BIN, args, out_path, err_path);
    int code = tu_system(cmd);
    if (code < 0) fail_msg("ropegrad %s: did not exit normally", args);
    return code;
}

/* Reads a captured stream back into text (truncated to fit, NUL-terminated). */
static inline void tu_read_into(const char *path, char *text, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, cap - 1, f) : 0;
    text[n] = 0;
    if (f) fclose(f);
}

/* Runs `ropegrad ARGS` (printf-style) in dir, stdout and stderr going through
 * dir/out.txt and dir/err.txt into out and err; returns the exit status, -1
 * when it did not exit normally. */
#if defined(__GNUC__)
__attribute__((format(printf, 6, 7)))
#endif
static inline int tu_run_captured(const char *dir, char *out, size_t outlen, char *err, size_t errlen, const char *fmt,
                                  ...)
{
    char args[2048], o[600], e[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(o, sizeof o, "%s/out.txt", dir);
    snprintf(e, sizeof e, "%s/err.txt", dir);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s > '%s' 2> '%s'", dir, TU_BIN, args, o, e);
    int code = tu_system(cmd);
    tu_read_into(o, out, outlen);
    tu_read_into(e, err, errlen);
    return code;
}

/* `PREFIX 'ropegrad' ARGS` in dir (PREFIX: e.g. "timeout 10" or "env X=1"),
 * captured like tu_run_captured; the exit status, -1 when it did not exit
 * normally. */
static inline int tu_run_prefixed(const char *dir, const char *prefix, char *out, size_t outlen, char *err,
                                  size_t errlen, const char *args)
{
    char cmd[4096], o[600], e[600];
    snprintf(o, sizeof o, "%s/out.txt", dir);
    snprintf(e, sizeof e, "%s/err.txt", dir);
    snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' %s > '%s' 2> '%s'", dir, prefix, TU_BIN, args, o, e);
    int code = tu_system(cmd);
    tu_read_into(o, out, outlen);
    tu_read_into(e, err, errlen);
    return code;
}

/* ---- scratch directories ---------------------------------------------------------- */

/* A new private directory /tmp/PREFIX_XXXXXX into dir; 0 on success. */
static inline int tu_mkdtemp(char *dir, size_t n, const char *prefix)
{
    snprintf(dir, n, "/tmp/%s_XXXXXX", prefix);
    return mkdtemp(dir) ? 0 : -1;
}

/* A private scratch directory and the files a captured run writes to. */
typedef struct tu_scratch {
    char dir[64], out[128], err[128];
} tu_scratch;

static inline int tu_scratch_open(tu_scratch *sc, const char *prefix)
{
    if (tu_mkdtemp(sc->dir, sizeof sc->dir, prefix)) return -1;
    snprintf(sc->out, sizeof sc->out, "%s/stdout", sc->dir);
    snprintf(sc->err, sizeof sc->err, "%s/stderr", sc->dir);
    return 0;
}

/* dir, empty: whatever a previous run left there is removed first. */
static inline int tu_fresh_dir(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    return tu_system(cmd) == 0 ? 0 : -1;
}

/* Removes dir and everything below it. Write permission is given back first:
 * a test may have made a file or directory read-only on purpose. */
static inline int tu_rm_rf(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", dir, dir);
    return tu_system(cmd) == 0 ? 0 : -1;
}

/* Removes an SQLite file and its -wal and -shm files (those missing are fine). */
static inline int tu_unlink_db(const char *db)
{
    char p[1100];
    unlink(db);
    snprintf(p, sizeof p, "%s-wal", db);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", db);
    unlink(p);
    return 0;
}

/* dir/name in one of four rotating buffers (so a few can be used in one call). */
static inline const char *tu_path_in(const char *dir, const char *name)
{
    static char p[4][700];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

/* ---- expectations on a captured run --------------------------------------------------- */

/* Exit 2 and exactly one line on stderr (the captured text err) that contains needle. */
#define TU_EXPECT_ONE_LINE_ERROR(rc, err, needle)                                                           \
    do {                                                                                                    \
        int rc_ = (rc);                                                                                     \
        if (rc_ != 2 || tu_count_lines(err) != 1 || !strstr(err, needle))                                \
            fail_msg("exit %d, stderr (%d lines) '%s', expected exit 2 and one line with '%s'", rc_,         \
                     tu_count_lines(err), err, needle);                                                    \
    } while (0)

/* Exit 0, or the failure shows the captured stderr. */
#define TU_EXPECT_OK(rc, err)                                                                               \
    do {                                                                                                    \
        int rc_ = (rc);                                                                                     \
        if (rc_ != 0) fail_msg("exit %d: %s", rc_, err);                                                   \
    } while (0)

/* The file at path holds exactly the n bytes of before. */
static inline void tu_assert_unchanged(const char *path, const char *before, size_t n_before)
{
    size_t n = 0;
    char *now = tu_slurp(path, &n);
    assert_non_null(now);
    if (n != n_before || memcmp(now, before, n)) fail_msg("%s was modified (%zu -> %zu bytes)", path, n_before, n);
    free(now);
}

/* ---- JSON ------------------------------------------------------------------------- */

/* Member k of o, which the test requires to be there. */
static inline const cJSON *tu_get(const cJSON *o, const char *k)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!it) print_message("missing JSON key '%s'\n", k);
    assert_non_null(it);
    return it;
}

#endif
