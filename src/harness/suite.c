/* SPDX-License-Identifier: Apache-2.0 */
/* suite.c -- loads a suite in SOL-ExecBench's own formats.
 *
 *   DIR/definition.json     the problem: name, axes (head_dim const), input/output dtypes
 *   DIR/workload.jsonl      one JSON object per line: uuid, axes, scalar inputs, tolerance
 *   DIR/<gpu>-figures.json  optional: the protocol and per-workload SOL / baseline times
 *
 * Everything read from disk is untrusted: every field is checked for presence
 * and type, and every failure is one line naming the file (with the line
 * number for workload.jsonl) and the field. Memory is bounded: a line may not
 * exceed RG_MAX_LINE bytes, a suite may not exceed RG_MAX_WORKLOADS
 * workloads, a JSON document may not exceed RG_JSON_MAX_SUITE_DOC bytes. */
#define _XOPEN_SOURCE 700   /* POSIX.1-2008 + realpath() */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "strict_json.h"

#define RG_MAX_LINE (1 << 20)          /* 1 MiB per workload.jsonl line */
#define RG_MAX_WORKLOADS 100000
#define RG_MAX_EXACT_INT 9007199254740992.0 /* 2^53: larger doubles are not exact integers */

/* ---- small helpers ---------------------------------------------------------- */

/* Reads a whole (bounded) file into a NUL-terminated buffer: FIFOs, devices
 * and directories refused, at most RG_JSON_MAX_SUITE_DOC bytes. */
static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    return rg_read_file_bounded(path, RG_JSON_MAX_SUITE_DOC, len, err, errlen);
}

/* "file" or "file:line" for messages. */
static void where(char *dst, size_t n, const char *path, int line)
{
    /* Paths are bounded by rg_suite.dir, so this never truncates in practice;
     * if it did, the message would only be shorter. */
    int k = line > 0 ? snprintf(dst, n, "%s:%d", path, line) : snprintf(dst, n, "%s", path);
    if (k < 0) dst[0] = '\0';
}

/* Looks up a dotted path ("tolerance.max_atol") in an object. */
static const cJSON *get_path(const cJSON *obj, const char *dotted)
{
    char key[128];
    const char *p = dotted;
    const cJSON *cur = obj;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (len >= sizeof key) return NULL;
        memcpy(key, p, len);
        key[len] = '\0';
        if (!cJSON_IsObject(cur)) return NULL;
        cur = cJSON_GetObjectItemCaseSensitive(cur, key);
        p = dot ? dot + 1 : p + len;
    }
    return cur;
}

/* Field getters: 0 on success, else a message "<where>: field 'x' ...". */
static int get_string(const cJSON *obj, const char *field, const char *loc, char *dst, size_t dstlen,
                      char *err, size_t errlen)
{
    const cJSON *it = get_path(obj, field);
    if (!it) {
        snprintf(err, errlen, "%s: field '%s' is missing", loc, field);
        return 1;
    }
    if (!cJSON_IsString(it) || !it->valuestring) {
        snprintf(err, errlen, "%s: field '%s' must be a string", loc, field);
        return 1;
    }
    size_t len = strlen(it->valuestring);
    if (len == 0 || len >= dstlen) {
        snprintf(err, errlen, "%s: field '%s' must be a string of 1 to %zu characters", loc, field,
                 dstlen - 1);
        return 1;
    }
    memcpy(dst, it->valuestring, len + 1);
    return 0;
}

/* An integer field >= min (0 or 1), exactly representable in a double. */
static int get_int_min(const cJSON *obj, const char *field, const char *loc, int64_t min, int64_t *dst,
                       char *err, size_t errlen)
{
    const cJSON *it = get_path(obj, field);
    if (!it) {
        snprintf(err, errlen, "%s: field '%s' is missing", loc, field);
        return 1;
    }
    double v = cJSON_IsNumber(it) ? it->valuedouble : NAN;
    if (!(v >= (double)min && v <= RG_MAX_EXACT_INT) || v != floor(v)) {
        snprintf(err, errlen, "%s: field '%s' must be a %s integer", loc, field,
                 min > 0 ? "positive" : "non-negative");
        return 1;
    }
    *dst = (int64_t)v;
    return 0;
}

/* A finite number in [lo, hi]; optional fields leave *dst alone when absent
 * (or null). */
static int get_number(const cJSON *obj, const char *field, const char *loc, int optional, double lo,
                      double hi, double *dst, char *err, size_t errlen)
{
    const cJSON *it = get_path(obj, field);
    if (!it || (optional && cJSON_IsNull(it))) {
        if (optional) return 0;
        snprintf(err, errlen, "%s: field '%s' is missing", loc, field);
        return 1;
    }
    double v = cJSON_IsNumber(it) ? it->valuedouble : NAN;
    if (!isfinite(v) || v < lo || v > hi) {
        if (lo == 0 && hi == 1)
            snprintf(err, errlen, "%s: field '%s' must be a number in [0, 1]", loc, field);
        else if (lo == 0)
            snprintf(err, errlen, "%s: field '%s' must be a finite number >= 0", loc, field);
        else
            snprintf(err, errlen, "%s: field '%s' must be a finite number", loc, field);
        return 1;
    }
    *dst = v;
    return 0;
}

/* Parses one JSON document strictly (strict_json.h: repeated names, U+0000,
 * invalid UTF-8, control bytes, trailing text) and insists on an object. */
static cJSON *parse_json(const char *text, size_t len, const char *loc, char *err, size_t errlen)
{
    cJSON *root = rg_json_parse_strict(text, len, loc, err, errlen);
    if (!root) return NULL;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        snprintf(err, errlen, "%s: expected a JSON object", loc);
        return NULL;
    }
    return root;
}

static int parse_dtype(const char *s, ropegrad_dtype *dt)
{
    if (!strcmp(s, "bfloat16")) *dt = ROPEGRAD_BF16;
    else if (!strcmp(s, "float16")) *dt = ROPEGRAD_F16;
    else if (!strcmp(s, "float32")) *dt = ROPEGRAD_F32;
    else return 1;
    return 0;
}

/* ---- definition.json ------------------------------------------------------------ */

static int load_definition(const char *path, rg_suite *s, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = read_file(path, &len, err, errlen);
    if (!text) return 1;
    cJSON *root = parse_json(text, len, path, err, errlen);
    free(text);
    if (!root) return 1;

    int rc = 1;
    char dtype[32];
    if (get_string(root, "name", path, s->name, sizeof s->name, err, errlen)) goto out;
    s->op = rg_op_find(s->name);
    if (!s->op) {
        char ids[64] = "", shown[65];
        for (const rg_op *const *o = rg_ops; *o; o++)
            snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%s", ids[0] ? ", " : "", (*o)->id);
        /* The name is untrusted: printable ASCII only in the one-line message. */
        size_t k = 0;
        for (; s->name[k] && k < sizeof shown - 1; k++)
            shown[k] = (s->name[k] >= 0x20 && s->name[k] < 0x7f) ? s->name[k] : '?';
        shown[k] = '\0';
        snprintf(err, errlen, "%s: field 'name': no op of ropegrad is defined by '%s' (ops: %s)", path, shown, ids);
        goto out;
    }

    const cJSON *hd = get_path(root, "axes.head_dim");
    if (!cJSON_IsObject(hd)) {
        snprintf(err, errlen, "%s: field 'axes.head_dim' is missing or not an object", path);
        goto out;
    }
    char type[32];
    if (get_string(root, "axes.head_dim.type", path, type, sizeof type, err, errlen)) goto out;
    if (strcmp(type, "const")) {
        snprintf(err, errlen, "%s: field 'axes.head_dim.type' must be \"const\"", path);
        goto out;
    }
    if (get_int_min(root, "axes.head_dim.value", path, 1, &s->head_dim, err, errlen)) goto out;
    if (s->head_dim < 2 || s->head_dim > ROPEGRAD_MAX_HEAD_DIM || (s->head_dim & 1)) {
        snprintf(err, errlen, "%s: field 'axes.head_dim.value' must be even and in 2..%d", path,
                 ROPEGRAD_MAX_HEAD_DIM);
        goto out;
    }

    /* Every input and output the op names, with the dtype it requires. */
    s->grad_dtype = ROPEGRAD_BF16;
    int have_grad = 0;
    for (int pass = 0; pass < 2; pass++) {
        const rg_op_tensor *list = pass ? s->op->outputs : s->op->inputs;
        for (const rg_op_tensor *t = list; t->name; t++) {
            char field[160];
            snprintf(field, sizeof field, "%s.%s", pass ? "outputs" : "inputs", t->name);
            if (!t->dtype) {   /* a scalar */
                if (!cJSON_IsObject(get_path(root, field))) {
                    snprintf(err, errlen, "%s: field '%s' is missing or not an object", path, field);
                    goto out;
                }
                continue;
            }
            snprintf(field, sizeof field, "%s.%s.dtype", pass ? "outputs" : "inputs", t->name);
            if (get_string(root, field, path, dtype, sizeof dtype, err, errlen)) goto out;
            if (!strcmp(t->dtype, "grad")) {
                /* 014's gradients share one dtype (bf16 in the dataset; f16/f32 accepted). */
                ropegrad_dtype g;
                if (parse_dtype(dtype, &g)) {
                    snprintf(err, errlen, "%s: field '%s' must be bfloat16, float16 or float32", path, field);
                    goto out;
                }
                if (have_grad && g != s->grad_dtype) {
                    snprintf(err, errlen, "%s: field '%s' must equal the other gradient's dtype", path, field);
                    goto out;
                }
                s->grad_dtype = g;
                have_grad = 1;
            } else if (strcmp(dtype, t->dtype)) {
                snprintf(err, errlen, "%s: field '%s' must be \"%s\"", path, field, t->dtype);
                goto out;
            }
        }
    }
    rc = 0;
out:
    cJSON_Delete(root);
    return rc;
}

/* ---- workload.jsonl ---------------------------------------------------------------- */

/* Reads one line (without the newline) into *buf; 1 on a line, 0 at EOF,
 * -1 on a line longer than RG_MAX_LINE, -2 on out of memory / read error.
 * The buffer grows as needed but never beyond RG_MAX_LINE + 1 bytes. */
static int read_line(FILE *f, char **buf, size_t *cap, size_t *len)
{
    size_t n = 0;
    int c, any = 0;
    while ((c = getc(f)) != EOF) {
        any = 1;
        if (c == '\n') break;
        if (n >= RG_MAX_LINE) {
            /* Too long: stop reading here, the caller reports it. */
            return -1;
        }
        if (n + 1 >= *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            if (nc > RG_MAX_LINE + 1) nc = RG_MAX_LINE + 1;
            char *nb = realloc(*buf, nc);
            if (!nb) return -2;
            *buf = nb;
            *cap = nc;
        }
        (*buf)[n++] = (char)c;
    }
    if (ferror(f)) return -2;
    if (!any) return 0;
    if (!*buf) {
        *buf = malloc(1);
        if (!*buf) return -2;
        *cap = 1;
    }
    if (n > 0 && (*buf)[n - 1] == '\r') n--;   /* tolerate CRLF files */
    (*buf)[n] = '\0';
    *len = n;
    return 1;
}

static int blank(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s)) return 0;
    return 1;
}

/* The op's named axes (rg_op.axes): axes.<name>, each an integer >= 1. */
static int parse_op_axes(const cJSON *root, const char *loc, const rg_op *op, rg_workload *w, char *err,
                         size_t errlen)
{
    char field[96];
    for (int i = 0; op->axes && op->axes[i] && i < RG_OP_MAX_AXES; i++) {
        snprintf(field, sizeof field, "axes.%s", op->axes[i]);
        if (get_int_min(root, field, loc, 1, &w->axes[i], err, errlen)) return 1;
    }
    return 0;
}

static int parse_workload(const char *line, size_t len, const char *loc, const rg_suite *s, rg_workload *w,
                          char *err, size_t errlen)
{
    cJSON *root = parse_json(line, len, loc, err, errlen);
    if (!root) return 1;
    int rc = 1;
    double v;
    if (get_string(root, "uuid", loc, w->uuid, sizeof w->uuid, err, errlen)) goto out;
    if (get_int_min(root, "axes.batch_size", loc, 1, &w->batch_size, err, errlen)) goto out;
    if (get_int_min(root, "axes.seq_len", loc, 1, &w->seq_len, err, errlen)) goto out;
    if (parse_op_axes(root, loc, s->op, w, err, errlen)) goto out;
    const int64_t head_dim = s->head_dim;
    w->head_dim = head_dim;
    /* B*S*head_dim*4 bytes (emb, the largest tensor) must fit in int64. */
    if (w->batch_size > INT64_MAX / w->seq_len ||
        w->batch_size * w->seq_len > INT64_MAX / (head_dim * 4)) {
        snprintf(err, errlen, "%s: field 'axes.seq_len': batch_size*seq_len*head_dim overflows", loc);
        goto out;
    }
    /* An op whose generator sets the scale (011's get_inputs) reads none here. */
    v = 1.0;
    if (get_number(root, "inputs.attention_scaling.value", loc, s->op->custom_scale, -HUGE_VAL, HUGE_VAL, &v, err,
                   errlen))
        goto out;
    if (!isfinite((float)v)) {
        snprintf(err, errlen, "%s: field 'inputs.attention_scaling.value' does not fit a float32", loc);
        goto out;
    }
    w->attention_scaling = (float)v;
    if (get_number(root, "tolerance.max_atol", loc, 0, 0, HUGE_VAL, &w->max_atol, err, errlen)) goto out;
    if (get_number(root, "tolerance.max_rtol", loc, 0, 0, HUGE_VAL, &w->max_rtol, err, errlen)) goto out;
    w->required_matched_ratio = 0.99;
    if (get_number(root, "tolerance.required_matched_ratio", loc, 1, 0, 1, &w->required_matched_ratio, err,
                   errlen))
        goto out;
    w->max_error_cap = NAN;
    if (get_number(root, "tolerance.max_error_cap", loc, 1, 0, HUGE_VAL, &w->max_error_cap, err, errlen))
        goto out;
    w->sol_ms = NAN;
    w->baseline_ms = NAN;
    rc = 0;
out:
    cJSON_Delete(root);
    return rc;
}

static int load_workloads(const char *path, rg_suite *s, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return 1;
    }
    char *line = NULL;
    size_t cap = 0, len = 0, n = 0, alloc = 0;
    rg_workload *ws = NULL;
    int lineno = 0, rc = 1, r;
    char loc[4200];
    while ((r = read_line(f, &line, &cap, &len)) != 0) {
        lineno++;
        where(loc, sizeof loc, path, lineno);
        if (r == -1) {
            snprintf(err, errlen, "%s: line is longer than %d bytes", loc, RG_MAX_LINE);
            goto out;
        }
        if (r == -2) {
            snprintf(err, errlen, "%s: read error or out of memory", loc);
            goto out;
        }
        if (blank(line)) continue;   /* e.g. a trailing empty line */
        if (n >= RG_MAX_WORKLOADS) {
            snprintf(err, errlen, "%s: more than %d workloads", loc, RG_MAX_WORKLOADS);
            goto out;
        }
        if (n == alloc) {
            size_t na = alloc ? alloc * 2 : 32;
            rg_workload *nw = realloc(ws, na * sizeof *nw);
            if (!nw) {
                snprintf(err, errlen, "%s: out of memory", loc);
                goto out;
            }
            ws = nw;
            alloc = na;
        }
        memset(&ws[n], 0, sizeof ws[n]);
        ws[n].index = (int)n;
        if (parse_workload(line, len, loc, s, &ws[n], err, errlen)) goto out;
        n++;
    }
    if (n == 0) {
        snprintf(err, errlen, "%s: no workloads (the file is empty)", path);
        goto out;
    }
    s->workloads = ws;
    s->n_workloads = n;
    ws = NULL;
    rc = 0;
out:
    free(line);
    free(ws);
    fclose(f);
    return rc;
}

/* ---- <gpu>-figures.json --------------------------------------------------------------- */

static int load_figures(const char *path, const char *gpu, rg_suite *s, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = read_file(path, &len, err, errlen);
    if (!text) return 1;
    cJSON *root = parse_json(text, len, path, err, errlen);
    free(text);
    if (!root) return 1;
    int rc = 1;
    int64_t v;
    char field[96];

    if (!cJSON_IsObject(get_path(root, "protocol"))) {
        snprintf(err, errlen, "%s: field 'protocol' is missing or not an object", path);
        goto out;
    }
    if (get_int_min(root, "protocol.warmup_runs", path, 0, &v, err, errlen)) goto out;
    if (v > 1000000) {
        snprintf(err, errlen, "%s: field 'protocol.warmup_runs' is implausibly large", path);
        goto out;
    }
    s->figures_warmup = (int)v;
    if (get_int_min(root, "protocol.iterations", path, 1, &v, err, errlen)) goto out;
    if (v > 1000000) {
        snprintf(err, errlen, "%s: field 'protocol.iterations' is implausibly large", path);
        goto out;
    }
    s->figures_iterations = (int)v;
    if (get_int_min(root, "protocol.seed", path, 0, &v, err, errlen)) goto out;
    s->figures_seed = (uint64_t)v;

    const cJSON *pw = get_path(root, "per_workload");
    if (!cJSON_IsArray(pw)) {
        snprintf(err, errlen, "%s: field 'per_workload' is missing or not an array", path);
        goto out;
    }
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, pw) {
        int64_t idx, b, sl;
        double sol, base;
        char loc[4300];
        snprintf(field, sizeof field, "per_workload[%d].index", k);
        snprintf(loc, sizeof loc, "%s: per_workload[%d]", path, k);
        if (get_int_min(e, "index", loc, 0, &idx, err, errlen) ||
            get_int_min(e, "batch_size", loc, 1, &b, err, errlen) ||
            get_int_min(e, "seq_len", loc, 1, &sl, err, errlen) ||
            get_number(e, "sol_ms", loc, 0, 0, HUGE_VAL, &sol, err, errlen) ||
            get_number(e, "baseline_ms", loc, 0, 0, HUGE_VAL, &base, err, errlen))
            goto out;
        if ((size_t)idx >= s->n_workloads) {
            snprintf(err, errlen, "%s: field '%s' = %lld but the suite has %zu workloads", path, field,
                     (long long)idx, s->n_workloads);
            goto out;
        }
        rg_workload *w = &s->workloads[idx];
        if (w->batch_size != b || w->seq_len != sl) {
            snprintf(err, errlen,
                     "%s: field 'per_workload[%d]' (batch_size %lld, seq_len %lld) does not match "
                     "workload %lld (batch_size %lld, seq_len %lld)",
                     path, k, (long long)b, (long long)sl, (long long)idx, (long long)w->batch_size,
                     (long long)w->seq_len);
            goto out;
        }
        w->sol_ms = sol;
        w->baseline_ms = base;
        k++;
    }
    snprintf(s->figures_gpu, sizeof s->figures_gpu, "%s", gpu);
    if (snprintf(s->figures_file, sizeof s->figures_file, "%s", path) >= (int)sizeof s->figures_file) {
        snprintf(err, errlen, "%s: path too long", path);
        goto out;
    }
    s->have_figures = 1;
    rc = 0;
out:
    cJSON_Delete(root);
    return rc;
}

/* Finds DIR/<gpu>-figures.json; when there are several, the first by name
 * (so which one is used never depends on directory order). */
static int find_figures(const char *dir, char *name, size_t namelen, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: cannot open directory: %s", dir, strerror(errno));
        return -1;
    }
    const char *suffix = "-figures.json";
    size_t sl = strlen(suffix);
    char best[256] = "";
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l <= sl || l >= sizeof best || strcmp(de->d_name + l - sl, suffix)) continue;
        if (!best[0] || strcmp(de->d_name, best) < 0) snprintf(best, sizeof best, "%s", de->d_name);
    }
    closedir(d);
    if (!best[0]) return 0;
    snprintf(name, namelen, "%s", best);
    return 1;
}

/* A suite's files must be regular files inside its folder. A downloaded
 * suite whose definition.json is a symlink out of it (to ~/.ssh/id_rsa, say)
 * or to a FIFO or device (which would block or never end) is refused.
 * dir_real is realpath() of the folder; the file is resolved the same way. */
static int check_inside(const char *dir_real, const char *path, char *err, size_t errlen)
{
    char *real = realpath(path, NULL);
    if (!real) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return 1;
    }
    size_t n = strlen(dir_real);
    int inside = strncmp(real, dir_real, n) == 0 && (real[n] == '/' || (n == 1 && dir_real[0] == '/'));
    struct stat st;
    int regular = stat(real, &st) == 0 && S_ISREG(st.st_mode);
    free(real);
    if (!inside) {
        snprintf(err, errlen, "%s: refused: it resolves to a file outside the suite folder", path);
        return 1;
    }
    if (!regular) {
        snprintf(err, errlen, "%s: refused: not a regular file", path);
        return 1;
    }
    return 0;
}

/* ---- public ------------------------------------------------------------------------------ */

int rg_suite_load(const char *dir, rg_suite *out, char *err, size_t errlen)
{
    char path[4200];
    if (!out) {
        snprintf(err, errlen, "rg_suite_load: out is NULL");
        return 1;
    }
    memset(out, 0, sizeof *out);
    if (!dir || !*dir) {
        snprintf(err, errlen, "suite directory is empty");
        return 1;
    }
    if (strlen(dir) >= sizeof out->dir - 32) {
        snprintf(err, errlen, "suite directory path is too long");
        return 1;
    }
    snprintf(out->dir, sizeof out->dir, "%s", dir);
    char *dir_real = realpath(dir, NULL);
    if (!dir_real) {
        /* Name the first file it needs, as when the folder exists but that file does not. */
        snprintf(err, errlen, "%s/definition.json: cannot open: %s", dir, strerror(errno));
        return 1;
    }

    snprintf(path, sizeof path, "%s/definition.json", dir);
    if (check_inside(dir_real, path, err, errlen) || load_definition(path, out, err, errlen)) goto fail;
    snprintf(path, sizeof path, "%s/workload.jsonl", dir);
    if (check_inside(dir_real, path, err, errlen) || load_workloads(path, out, err, errlen)) goto fail;
    /* What the record reads without the op table: the axes' names, each workload's bytes. */
    out->axis_names = out->op->axes;
    for (size_t i = 0; i < out->n_workloads; i++)
        out->workloads[i].bytes = out->op->bytes(&out->workloads[i], out->grad_dtype);

    char name[256];
    int found = find_figures(dir, name, sizeof name, err, errlen);
    if (found < 0) goto fail;
    if (found) {
        char gpu[64];
        size_t gl = strlen(name) - strlen("-figures.json");
        if (gl >= sizeof gpu) gl = sizeof gpu - 1;
        for (size_t i = 0; i < gl; i++) gpu[i] = (char)toupper((unsigned char)name[i]);
        gpu[gl] = '\0';
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (check_inside(dir_real, path, err, errlen) || load_figures(path, gpu, out, err, errlen)) goto fail;
    }
    free(dir_real);
    return 0;
fail:
    free(dir_real);
    rg_suite_free(out);
    return 1;
}

double rg_workload_bytes(const rg_workload *w, ropegrad_dtype dt)
{
    if (!w) return 0;
    double elt = (double)ropegrad_dtype_size(dt);
    double B = (double)w->batch_size, S = (double)w->seq_len, D = (double)w->head_dim;
    /* grad_cos + grad_sin read whole, emb's first half, the output; inv_freq once per batch. */
    return B * S * (2 * D * elt + D / 2 * 4 + 4) + B * (D / 2) * 4;
}
