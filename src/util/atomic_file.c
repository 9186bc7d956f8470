/* SPDX-License-Identifier: Apache-2.0 */
/* atomic_file.c -- temporary file + fsync + rename (atomic_file.h). */
#define _POSIX_C_SOURCE 200809L
#include "atomic_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rg_write_file_atomic(const char *path, const char *data, size_t n, char *err, size_t errlen)
{
    if (!path || !*path || (!data && n)) {
        snprintf(err, errlen, "no output file given");
        return 1;
    }
    size_t len = strlen(path) + 32;
    char *tmp = malloc(len);
    if (!tmp) {
        snprintf(err, errlen, "%s: out of memory", path);
        return 1;
    }
    snprintf(tmp, len, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);   /* in the target's directory, so rename() stays on one filesystem */
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        free(tmp);
        return 1;
    }
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, data + off, n - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            break;
        }
        off += (size_t)w;
    }
    int ok = off == n && fsync(fd) == 0;
    int saved = errno;
    /* mkstemp makes the file 0600; what is written here is meant to be read. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    if (close(fd) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(saved));
        unlink(tmp);
        free(tmp);
        return 1;
    }
    free(tmp);
    return 0;
}
