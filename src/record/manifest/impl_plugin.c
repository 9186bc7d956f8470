/* SPDX-License-Identifier: Apache-2.0 */
/* impl_plugin.c -- what the record says about a plugin run (`--impl`):
 * the SHA-256 of the library's bytes and of every --impl-source file, taken
 * when the plugin is loaded, and the manifest's implementation spec built
 * from them. The implementation digest (the JCS digest of that spec) thus
 * covers every byte measured or declared as its source. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "rg_util.h"

#define RG_IMPL_FILE_MAX ((size_t)1 << 30)

static int hash_file(const char *path, char hex[65], char *err, size_t errlen)
{
    size_t n;
    char *bytes = rg_read_file_bounded(path, RG_IMPL_FILE_MAX, &n, err, errlen);
    if (!bytes) return 1;
    int rc = rg_sha256_hex(bytes, n, hex);
    free(bytes);
    if (rc) snprintf(err, errlen, "%.200s: cannot hash it", path);
    return rc ? 1 : 0;
}

int rg_impl_hash_files(rg_run_impl *impl, char *err, size_t errlen)
{
    if (!impl || impl->n_sources > RG_IMPL_MAX_SOURCES) {
        snprintf(err, errlen, "rg_impl_hash_files: no plugin, or more than %d sources", RG_IMPL_MAX_SOURCES);
        return 1;
    }
    char why[RG_ERRLEN];
    if (hash_file(impl->path, impl->file_sha256, why, sizeof why)) {
        snprintf(err, errlen, "--impl: %s", why);
        return 1;
    }
    for (size_t i = 0; i < impl->n_sources; i++)
        if (hash_file(impl->sources[i], impl->source_sha256[i], why, sizeof why)) {
            snprintf(err, errlen, "--impl-source: %s", why);
            return 1;
        }
    return 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static cJSON *file_entry(const char *path, const char *hex)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", base_name(path));
    cJSON_AddStringToObject(o, "sha256", hex);
    return o;
}

/* "sha256:" over the listing "file <name> <sha256>\n" of the library, then
 * every source in the order given (impl_digest.cmake's listing, unsorted:
 * the order is the user's). */
static int files_digest(const rg_run_impl *impl, char out[RG_DIGEST_LEN])
{
    rg_buf b = {0};
    rg_buf_printf(&b, "file %s %s\n", base_name(impl->path), impl->file_sha256);
    for (size_t i = 0; i < impl->n_sources; i++)
        rg_buf_printf(&b, "file %s %s\n", base_name(impl->sources[i]), impl->source_sha256[i]);
    char err[64], hex[65];
    char *text = rg_buf_finish(&b, err, sizeof err);
    if (!text) return 1;
    int rc = rg_sha256_hex(text, strlen(text), hex);
    free(text);
    if (rc) return 1;
    snprintf(out, RG_DIGEST_LEN, "sha256:%s", hex);
    return 0;
}

cJSON *rg_impl_spec(const rg_run_result *r)
{
    const rg_run_impl *impl = r ? r->impl : NULL;
    char digest[RG_DIGEST_LEN];
    if (!impl || !impl->file_sha256[0] || files_digest(impl, digest)) return NULL;
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "name", impl->name);
    cJSON_AddStringToObject(s, "version", impl->version);
    cJSON_AddStringToObject(s, "backend", r->backend);
    cJSON_AddNumberToObject(s, "kernel", 0);
    cJSON_AddStringToObject(s, "kernelName", impl->label);
    cJSON_AddStringToObject(s, "sources", digest);
    cJSON *p = cJSON_AddObjectToObject(s, "plugin");
    cJSON_AddNumberToObject(p, "abiVersion", ROPEGRAD_IMPL_ABI_VERSION);
    cJSON_AddItemToObject(p, "library", file_entry(impl->path, impl->file_sha256));
    cJSON *src = cJSON_AddArrayToObject(p, "sources");
    for (size_t i = 0; i < impl->n_sources; i++)
        cJSON_AddItemToArray(src, file_entry(impl->sources[i], impl->source_sha256[i]));
    /* In-process (the Python driver): no library was loaded; "library" is
     * the file it came from, and what the caller said of it is recorded. */
    if (impl->embedded) {
        cJSON_AddStringToObject(p, "loadedBy", "in-process");
        cJSON *meta = impl->meta_json ? cJSON_Parse(impl->meta_json) : NULL;
        if (meta) cJSON_AddItemToObject(s, "embedded", meta);
    }
    cJSON *h = cJSON_AddObjectToObject(s, "harness");
    cJSON_AddStringToObject(h, "name", "ropegrad");
    cJSON_AddStringToObject(h, "version", RG_ROPEGRAD_VERSION);
    cJSON_AddStringToObject(h, "sources", rg_implementation_digest());
    cJSON_AddStringToObject(h, "buildFlags", r->env.build_flags);
    return s;
}
