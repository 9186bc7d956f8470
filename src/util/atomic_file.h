/* SPDX-License-Identifier: Apache-2.0 */
/* atomic_file.h -- the one way a file is written (atomic_file.c): never a
 * partial file, whatever stops the writer. */
#ifndef ROPEGRAD_ATOMIC_FILE_H
#define ROPEGRAD_ATOMIC_FILE_H

#include <stddef.h>

/* Writes data[n] to a temporary file beside path (the same filesystem),
 * syncs it and renames it into place. The file is readable as the umask
 * allows (0666 less the umask), not mkstemp's 0600. Returns 0, or 1 with a
 * one-line message naming path. */
int rg_write_file_atomic(const char *path, const char *data, size_t n, char *err, size_t errlen);

#endif
