/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve.c -- `ropegrad serve`: the registry as a website (src/index/serve.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cliopt.h"
#include "commands.h"
#include "rg_term.h"
#include "record.h"
#include "serve.h"

/* A positive integer option, 2 (bad input) when it is not one. */
static int uint_opt(const char *name, const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v == 0 || v > max || s[0] == '-') {
        rg_term_printf(stderr, "ropegrad serve: %s expects a whole number in 1..%lu, got '%.60s'\n", name, max, s);
        return 2;
    }
    *out = v;
    return 0;
}

/* A server holds a file per connection: the soft limit goes up to the hard
 * one (the connection limit follows it, serve.c). */
static void raise_file_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

enum { OPT_DB = 1000, OPT_LISTEN, OPT_TOKEN, OPT_THREADS, OPT_MAXBODY, OPT_TIMEOUT, OPT_CACHE, OPT_PERCLIENT,
       OPT_DEADLINE, OPT_HEADER_DEADLINE, OPT_BASE_URL };
static const struct option longopts[] = {{"db", required_argument, NULL, OPT_DB},
                                         {"listen", required_argument, NULL, OPT_LISTEN},
                                         {"write-token-file", required_argument, NULL, OPT_TOKEN},
                                         {"threads", required_argument, NULL, OPT_THREADS},
                                         {"max-body", required_argument, NULL, OPT_MAXBODY},
                                         {"timeout", required_argument, NULL, OPT_TIMEOUT},
                                         {"cache-bytes", required_argument, NULL, OPT_CACHE},
                                         {"max-per-client", required_argument, NULL, OPT_PERCLIENT},
                                         {"body-deadline", required_argument, NULL, OPT_DEADLINE},
                                         {"header-deadline", required_argument, NULL, OPT_HEADER_DEADLINE},
                                         {"base-url", required_argument, NULL, OPT_BASE_URL},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

static void serve_usage(void)
{
    printf("usage: ropegrad serve [--db FILE] [--listen ADDR:PORT] [--write-token-file FILE]\n"
           "                      [--threads N] [--max-body BYTES] [--timeout SECONDS]\n"
           "                      [--cache-bytes BYTES] [--max-per-client N] [--body-deadline SECONDS]\n"
           "                      [--header-deadline SECONDS] [--base-url URL]\n\n"
           "Serves the registry as a website: / (problems), /problems/DEF, /runs/ID, /runs/ID.json,\n"
           "/compare/A/B and /api/... (see the README). Listens on 127.0.0.1:8080 by default\n"
           "(port 0: any free port, printed); ADDR: an IPv4 address, an IPv6 one in brackets\n"
           "([::1]:8080), or a name that resolves to loopback only (localhost:8080). Read-only\n"
           "unless --write-token-file names a file holding the write token (16+ printable\n"
           "characters): then POST /api/runs (as `ropegrad runs push`) and the pages' note and\n"
           "issue forms take writes. --base-url: the public URL the pages' citation permalinks\n"
           "start with (e.g. https://index.example.org; default http://ADDR:PORT). A run's URL\n"
           "names it by the first 8 hex digits of its run digest (/runs/1a2b3c4d) or its local\n"
           "id (/runs/3); the API is described at /api/openapi.json.\n"
           "Defaults: a worker thread per online CPU (2 to 64), request bodies up to %d bytes (413\n"
           "above), 10 s idle timeout,\n"
           "a page cache of %u bytes (keyed by path), %d connections per client address, %d s\n"
           "for a request body to arrive, %d s for a request's headers (while most connections\n"
           "wait for headers, the longest waits are closed first). Writes to a registry that is\n"
           "read-only, busy, deleted or replaced since the start are answered 503; a full disk\n"
           "or the file size limit (ulimit -f), 507.\n",
           RG_SERVE_MAX_BODY, RG_SERVE_CACHE_BYTES, RG_SERVE_MAX_PER_CLIENT, RG_SERVE_BODY_DEADLINE,
           RG_SERVE_HEADER_DEADLINE);
}

/* The options into *o and *db: -1 to go on, else the exit code (0 after --help). */
static int parse_options(int argc, char **argv, rg_serve_options *o, const char **db)
{
    unsigned long v;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_DB:
            if (rg_cli_db_option("serve", optarg, db)) return 2;
            break;
        case OPT_LISTEN: o->listen = optarg; break;
        case OPT_TOKEN: o->write_token_file = optarg; break;
        case OPT_THREADS:
            if (uint_opt("--threads", optarg, 256, &v)) return 2;
            o->threads = (unsigned)v;
            break;
        case OPT_MAXBODY:
            if (uint_opt("--max-body", optarg, 1UL << 30, &v)) return 2;
            o->max_body = v;
            break;
        case OPT_TIMEOUT:
            if (uint_opt("--timeout", optarg, 3600, &v)) return 2;
            o->timeout_s = (unsigned)v;
            break;
        case OPT_CACHE:
            if (uint_opt("--cache-bytes", optarg, 1UL << 34, &v)) return 2;
            o->cache_bytes = v;
            break;
        case OPT_PERCLIENT:
            if (uint_opt("--max-per-client", optarg, 65535, &v)) return 2;
            o->max_per_client = (unsigned)v;
            break;
        case OPT_DEADLINE:
            if (uint_opt("--body-deadline", optarg, 3600, &v)) return 2;
            o->body_deadline_s = (unsigned)v;
            break;
        case OPT_BASE_URL: {
            char err[300];
            if (rg_serve_check_base_url(optarg, err, sizeof err)) {
                rg_term_printf(stderr, "ropegrad serve: %s\n", err);
                return 2;
            }
            o->base_url = optarg;
            break;
        }
        case OPT_HEADER_DEADLINE:
            if (uint_opt("--header-deadline", optarg, 3600, &v)) return 2;
            o->header_deadline_s = (unsigned)v;
            break;
        case 'h':
            serve_usage();
            return 0;
        case ':': rg_term_printf(stderr, "ropegrad serve: %s needs a value\n", argv[optind - 1]); return 2;
        default: rg_term_printf(stderr, "ropegrad serve: unknown option '%s' (try --help)\n", argv[optind - 1]); return 2;
        }
    }
    if (optind != argc) {
        rg_term_printf(stderr, "ropegrad serve: unexpected argument '%s' (try --help)\n", argv[optind]);
        return 2;
    }
    return -1;
}

/* Serves until SIGINT, SIGTERM or SIGHUP. Returns the exit code. */
static int serve_until_signal(rg_serve_options *o)
{
    char err[1024];
    rg_server *s;
    if (rg_serve_create(o, &s, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad serve: %s\n", err);
        return 2;
    }
    /* The worker threads inherit this mask: only sigwait below sees the signals. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    raise_file_limit();
    if (rg_serve_start(s, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad serve: %s\n", err);
        rg_serve_destroy(s);
        return 2;
    }
    rg_term_printf(stdout, "ropegrad serve: http://%s:%d/ (%s, registry %s)\n", rg_serve_host(s), rg_serve_port(s),
                   o->write_token_file ? "writes need the token" : "read-only", o->db_path);
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    rg_serve_destroy(s);
    rg_term_printf(stdout, "ropegrad serve: stopped (signal %d)\n", sig);
    return 0;
}

int rg_cmd_serve(int argc, char **argv)
{
    rg_serve_options o = {0};
    const char *db = NULL;
    int rc = parse_options(argc, argv, &o, &db);
    if (rc >= 0) return rc;
    o.db_path = rg_registry_path(db);
    return serve_until_signal(&o);
}
