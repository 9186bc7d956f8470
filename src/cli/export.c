/* SPDX-License-Identifier: Apache-2.0 */
/* export.c -- `ropegrad export-solution`: a SOL-ExecBench solution (JSON) that
 * runs the very kernel libropegrad builds, for the op of a suite folder
 * (--suite, as `ropegrad bench` takes it; default the bundled 014).
 *
 * The op table (src/harness/op.h, rg_op_export) says what an op ships:
 *   its kernel header   e.g. ropegrad_kernels.cuh = the exact bytes of
 *                       src/op/rope_backward/kernels.cuh (014), ropegrad_rope_forward_kernels.cuh
 *                       = src/op/rope_forward/kernels.cuh (011; 012 alike): the device
 *                       code and the launchers (rg_cuda_launch,
 *                       rg_rope_forward_launch, rg_cos_sin_launch)
 *   rope_math.cuh, ropegrad.h   the exact bytes of the files it includes
 *   kernel.cu           a small torch binding generated here from the row:
 *                       run() with the definition's inputs, the row's body
 *                       (checks the inputs, fills the problem struct, calls
 *                       the launcher on the current stream, returns the
 *                       outputs), the pybind11 module.
 * The headers are compiled into this program by cmake/embed.cmake from the
 * files the library is built from, re-embedded whenever they change, so the
 * submission cannot drift from the kernel we measure (tests/cli/test_export.c
 * compares them byte for byte).
 *
 * Schema: NVIDIA/SOL-ExecBench's Solution (name, definition, author,
 * description, spec{languages, target_hardware, entry_point, dependencies,
 * destination_passing_style, binding, compile_options}, sources[{path,
 * content}]). We declare destination_passing_style false: run() allocates and
 * returns the outputs (a tuple in the definition's order when there are
 * several). compile_options are given explicitly because the harness's
 * default CUDA flags include --use_fast_math, and fast sin/cos on unreduced
 * arguments would break accuracy for real positions.
 *
 * Exit codes: 0 written, 2 bad usage, a suite that does not load or has no
 * solution, or the file could not be written (one line on stderr; never a
 * partial file: temp file + rename). */
#define _GNU_SOURCE   /* getopt_long */

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cliopt.h"
#include "commands.h"
#include "embedded.h"
#include "harness.h"
#include "record.h"
#include "rg_term.h"
#include "rg_util.h"
#include "ropegrad.h"

#define RG_DEFAULT_NAME "ropegrad_cuda"
#define RG_DEFAULT_AUTHOR "ropegrad"

enum { OPT_OUT = 1000, OPT_SUITE, OPT_NAME, OPT_AUTHOR, OPT_KERNEL, OPT_HELP };

static void usage(FILE *f)
{
    fprintf(f, "usage: ropegrad export-solution [--suite DIR] [--out FILE] [--name NAME] [--author A]\n\n"
               "Writes a SOL-ExecBench solution (JSON) for the suite's op whose CUDA source is\n"
               "the kernel source libropegrad is built from, embedded at build time.\n\n"
               "  --suite DIR    suite folder (default: the bundled suites/014-rope_backward);\n"
               "                 ops with a solution:");
    for (const rg_op *const *o = rg_ops; *o; o++)
        if ((*o)->solution) fprintf(f, " %s", (*o)->id);
    fprintf(f, "\n"
               "  --out FILE     write here (atomically; default, or -: standard output)\n"
               "  --name NAME    solution name (default %s)\n"
               "  --author A     author (default %s)\n"
               "  --kernel N     the CUDA kernel version run() launches (default 0; `ropegrad bench --kernel`):\n"
               "                 012 ships 0 (default: every value the nearest bf16) and 1 (fast: within\n"
               "                 0.5 + 2^-12 of a bf16 ulp); the other ops' solutions run 0. The default\n"
               "                 name is then %s_NAME (NAME the kernel's)\n"
               "  --help         this text\n",
               RG_DEFAULT_NAME, RG_DEFAULT_AUTHOR, RG_DEFAULT_NAME);
}

static cJSON *string_array(const char *const *items, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateString(items[i]));
    return a;
}

/* The embedded file at path (relative to the source tree), or NULL. */
static const rg_embedded_file *embedded(const char *path)
{
    for (const rg_embedded_file *e = rg_embedded_files; e->path; e++)
        if (!strcmp(e->path, path)) return e;
    return NULL;
}

/* Every source the op ships is embedded, as text (no NUL byte inside: the
 * content goes into JSON as a C string). 0, or 1 with err set. */
static int check_sources(const rg_op *op, char *err, size_t errlen)
{
    for (const rg_op_source *s = op->solution->sources; s->as; s++) {
        const rg_embedded_file *e = embedded(s->from);
        if (!e) {
            snprintf(err, errlen, "%s was not embedded at build time (src/cli/CMakeLists.txt)", s->from);
            return 1;
        }
        if (strlen((const char *)e->bytes) != e->len) {
            snprintf(err, errlen, "the embedded %s contains a NUL byte", s->from);
            return 1;
        }
    }
    return 0;
}

static int count_tensors(const rg_op_tensor *t)
{
    int n = 0;
    while (t[n].name) n++;
    return n;
}

/* kernel.cu for op (a malloc'd string), or NULL with err set. */
static char *binding_text(const rg_op *op, int kernel, char *err, size_t errlen)
{
    const rg_op_export *x = op->solution;
    const int n_out = count_tensors(op->outputs);
    rg_buf b = {0};
    rg_buf_printf(&b,
                  "// kernel.cu -- SOL-ExecBench entry point (kernel.cu::run) for\n"
                  "// %s.\n"
                  "// Generated by `ropegrad export-solution`: a torch binding around ropegrad's\n"
                  "// CUDA kernels (%s is %s, byte for byte).\n"
                  "//\n"
                  "// run() returns the outputs it allocates (destination_passing_style: false),\n"
                  "// a tuple in the definition's order when there are several:\n",
                  op->definition, x->sources[0].as, x->sources[0].from);
    for (const rg_op_tensor *t = op->outputs; t->name; t++) rg_buf_printf(&b, "//   %s %s\n", t->name, t->dtype);
    rg_buf_printf(&b, "#include <torch/extension.h>\n"
                      "#include <ATen/cuda/CUDAContext.h>\n"
                      "#include <c10/cuda/CUDAGuard.h>\n"
                      "\n"
                      "#include <cmath>\n"
                      "#include <cstring>\n"
                      "#include <tuple>\n"
                      "\n"
                      "#include \"%s\"\n"
                      "\n",
                  x->sources[0].as);
    if (x->kernel_arg)
        rg_buf_printf(&b, "// The kernel version run() launches (`ropegrad export-solution --kernel`): %s.\n"
                          "static const int rg_solution_kernel = %d;\n"
                          "\n",
                      op->kernel_name(kernel), kernel);
    if (n_out == 1) {
        rg_buf_puts(&b, "torch::Tensor");
    } else {
        rg_buf_puts(&b, "std::tuple<");
        for (int i = 0; i < n_out; i++) rg_buf_puts(&b, i ? ", torch::Tensor" : "torch::Tensor");
        rg_buf_puts(&b, ">");
    }
    rg_buf_puts(&b, " run(");
    for (const rg_op_tensor *t = op->inputs; t->name; t++)
        rg_buf_printf(&b, "%s%s %s", t == op->inputs ? "" : ", ", t->dtype ? "torch::Tensor" : "double", t->name);
    rg_buf_puts(&b, ")\n{\n");
    for (const char *const *l = x->body; *l; l++) rg_buf_puts(&b, *l);
    rg_buf_printf(&b, "}\n"
                      "\n"
                      "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)\n"
                      "{\n"
                      "    m.def(\"run\", &run, \"%s\",\n"
                      "          ",
                  x->about);
    for (const rg_op_tensor *t = op->inputs; t->name; t++)
        rg_buf_printf(&b, "%spybind11::arg(\"%s\")", t == op->inputs ? "" : ", ", t->name);
    rg_buf_puts(&b, ");\n}\n");
    return rg_buf_finish(&b, err, errlen);
}

static void add_source(cJSON *sources, const char *path, const char *content)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "path", path);
    cJSON_AddStringToObject(s, "content", content);
    cJSON_AddItemToArray(sources, s);
}

/* The whole solution as a JSON text (malloc'd), or NULL with err set. */
static char *build_solution(const rg_op *op, int kernel, const char *name, const char *author, char *err,
                            size_t errlen)
{
    static const char *const languages[] = {"cuda_cpp"};
    static const char *const hardware[] = {"B200", "LOCAL"};
    static const char *const cflags[] = {"-O3"};
    static const char *const cuda_cflags[] = {"-O3"};  /* no --use_fast_math: see the top of this file */
    const rg_op_export *x = op->solution;
    char *kernel_cu = binding_text(op, kernel, err, errlen);
    if (!kernel_cu) return NULL;

    rg_buf d = {0};
    rg_buf_printf(&d,
                  "ropegrad %s: CUDA kernels from libropegrad (%s, embedded verbatim), sin/cos after an accurate "
                  "argument reduction (the special-function unit sees only reduced arguments), no fast-math flags.",
                  ropegrad_version(), x->sources[0].from);
    if (kernel) rg_buf_printf(&d, " Kernel %d (%s).", kernel, op->kernel_name(kernel));
    rg_buf_puts(&d, " Returns");
    for (const rg_op_tensor *t = op->outputs; t->name; t++)
        rg_buf_printf(&d, "%s%s", t == op->outputs ? " " : ", ", t->name);
    rg_buf_puts(&d, " (destination_passing_style false).");
    char *desc = rg_buf_finish(&d, err, errlen);
    if (!desc) {
        free(kernel_cu);
        return NULL;
    }

    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", name);
    cJSON_AddStringToObject(root, "definition", op->definition);
    cJSON_AddStringToObject(root, "author", author);
    cJSON_AddStringToObject(root, "description", desc);
    free(desc);

    cJSON *spec = cJSON_AddObjectToObject(root, "spec");
    cJSON_AddItemToObject(spec, "languages", string_array(languages, 1));
    cJSON_AddItemToObject(spec, "target_hardware", string_array(hardware, 2));
    cJSON_AddStringToObject(spec, "entry_point", "kernel.cu::run");
    cJSON_AddItemToObject(spec, "dependencies", cJSON_CreateArray());
    cJSON_AddBoolToObject(spec, "destination_passing_style", 0);
    cJSON_AddStringToObject(spec, "binding", "torch");
    cJSON *co = cJSON_AddObjectToObject(spec, "compile_options");
    cJSON_AddItemToObject(co, "cflags", string_array(cflags, 1));
    cJSON_AddItemToObject(co, "cuda_cflags", string_array(cuda_cflags, 1));
    cJSON_AddItemToObject(co, "ld_flags", cJSON_CreateArray());

    cJSON *sources = cJSON_AddArrayToObject(root, "sources");
    add_source(sources, "kernel.cu", kernel_cu);
    free(kernel_cu);
    /* The embedded arrays carry a trailing NUL (embed.cmake) and hold none
     * inside (check_sources), so they are C strings of exactly len bytes. */
    for (const rg_op_source *s = x->sources; s->as; s++)
        add_source(sources, s->as, (const char *)embedded(s->from)->bytes);

    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) snprintf(err, errlen, "out of memory");
    return text;
}

/* --name and --author: not empty, and, as they go into a JSON file that
 * other tools read and print, UTF-8 text without control characters (one
 * line naming the byte). 0, or 2 with one line on stderr. */
static int check_names(const char *name, const char *author)
{
    if (!*name || !*author) {
        fprintf(stderr, "ropegrad export-solution: --%s must not be empty\n", *name ? "author" : "name");
        return 2;
    }
    const char *const texts[2] = {name, author}, *const opts[2] = {"--name", "--author"};
    for (int i = 0; i < 2; i++) {
        size_t at;
        const char *why;
        if (rg_text_check(texts[i], &at, &why)) {
            fprintf(stderr, "ropegrad export-solution: %s: byte %zu (0x%02x) is %s: give UTF-8 text without control "
                    "characters\n", opts[i], at, (unsigned)(unsigned char)texts[i][at], why);
            return 2;
        }
    }
    return 0;
}

/* The solution's text (cJSON_Print's, NUL-terminated) to --out (atomically)
 * or standard output, with a final newline. Returns 0, or 2 with one line on stderr. */
static int write_solution(char *text, const char *out)
{
    char err[1024];
    int code = 0;
    if (out && !rg_cli_is_stdout(out)) {
        size_t n = strlen(text);
        text[n] = '\n';   /* cJSON_Print leaves no final newline; reuse its NUL slot */
        if (rg_cli_write_output(out, text, n + 1, err, sizeof err)) {
            rg_term_printf(stderr, "ropegrad export-solution: %s\n", err);
            code = 2;
        }
    } else if (printf("%s\n", text) < 0 || fflush(stdout) != 0) {
        fprintf(stderr, "ropegrad export-solution: cannot write to standard output\n");
        code = 2;
    }
    return code;
}

int rg_cmd_export_solution(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"suite", required_argument, NULL, OPT_SUITE},
        {"out", required_argument, NULL, OPT_OUT},
        {"name", required_argument, NULL, OPT_NAME},
        {"author", required_argument, NULL, OPT_AUTHOR},
        {"kernel", required_argument, NULL, OPT_KERNEL},
        {"help", no_argument, NULL, OPT_HELP},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *suite_dir = NULL, *name = NULL, *author = RG_DEFAULT_AUTHOR;
    long long kernel = 0;
    int c;

    opterr = 0;   /* our own one-line messages */
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        const char *opt = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
        switch (c) {
        case OPT_SUITE: suite_dir = optarg; break;
        case OPT_OUT: out = optarg; break;
        case OPT_NAME: name = optarg; break;
        case OPT_AUTHOR: author = optarg; break;
        case OPT_KERNEL:
            if (rg_cli_parse_ll(optarg, 0, 1000, &kernel)) {
                rg_term_printf(stderr, "ropegrad export-solution: --kernel: '%s' is not a kernel number (0..1000)\n",
                               optarg);
                return 2;
            }
            break;
        case OPT_HELP: usage(stdout); return 0;
        case ':':
            rg_term_printf(stderr, "ropegrad export-solution: %s needs a value\n", opt);
            return 2;
        default:
            rg_term_printf(stderr, "ropegrad export-solution: unknown option '%s' (try --help)\n", opt);
            return 2;
        }
    }
    if (optind < argc) {
        rg_term_printf(stderr, "ropegrad export-solution: unexpected argument '%s' (try --help)\n", argv[optind]);
        return 2;
    }
    if (out && !*out) {
        fprintf(stderr, "ropegrad export-solution: --out: empty file name\n");
        return 2;
    }
    if (suite_dir && !*suite_dir) {
        fprintf(stderr, "ropegrad export-solution: --suite: empty folder name\n");
        return 2;
    }
    if (check_names(name ? name : RG_DEFAULT_NAME, author)) return 2;

    /* The op: the one the suite's definition names, as `ropegrad bench --suite` finds it. */
    char suite_buf[PATH_MAX + 64], err[1024];
    if (!suite_dir) {
        rg_cli_default_suite(suite_buf, sizeof suite_buf);
        suite_dir = suite_buf;
    }
    rg_suite s;
    if (rg_suite_load(suite_dir, &s, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad export-solution: %s\n", err);
        return 2;
    }
    const rg_op *op = s.op;
    rg_suite_free(&s);
    if (!op->solution) {
        rg_term_printf(stderr, "ropegrad export-solution: %s: op %s (%s) has no solution export\n", suite_dir, op->id,
                       op->definition);
        return 2;
    }
    if (check_sources(op, err, sizeof err)) {
        fprintf(stderr, "ropegrad export-solution: %s\n", err);
        return 2;
    }

    /* --kernel: one the op ships and its solution can launch. */
    const char *kname = op->kernel_name((int)kernel);
    if (kernel && (!op->solution->kernel_arg || !kname)) {
        char list[256] = "0 (default)";
        if (op->solution->kernel_arg) rg_op_kernels_text(op, list, sizeof list);
        rg_term_printf(stderr, "ropegrad export-solution: --kernel %lld: op %s's solution runs kernel %s\n", kernel,
                       op->id, list);
        return 2;
    }
    char name_buf[128];
    if (!name) {
        if (kernel) snprintf(name_buf, sizeof name_buf, "%s_%s", RG_DEFAULT_NAME, kname);
        else snprintf(name_buf, sizeof name_buf, "%s", RG_DEFAULT_NAME);
        name = name_buf;
    }
    char *text = build_solution(op, (int)kernel, name, author, err, sizeof err);
    if (!text) {
        fprintf(stderr, "ropegrad export-solution: %s\n", err);
        return 2;
    }
    int code = write_solution(text, out);
    free(text);
    return code;
}
