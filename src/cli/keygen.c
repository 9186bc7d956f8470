/* SPDX-License-Identifier: Apache-2.0 */
/* keygen.c -- `ropegrad keygen KEYFILE`: a new Ed25519 key pair for signing runs. */
#include <getopt.h>
#include <stdio.h>

#include "cliopt.h"
#include "commands.h"
#include "record.h"
#include "runs_format.h"

int rg_cmd_keygen(int argc, char **argv)
{
    int h = rg_cli_help_only(argc, argv, "keygen",
                      "usage: ropegrad keygen KEYFILE\n\nWrites a new Ed25519 key pair: KEYFILE (private, PEM, mode "
                      "0600, never overwritten)\nand KEYFILE.pub (public, PEM: give it to whoever should trust your "
                      "runs).\n");
    if (h >= 0) return h;
    if (optind != argc - 1) {
        rg_term_printf(stderr, "ropegrad keygen: expected one key file (usage: ropegrad keygen KEYFILE)\n");
        return 2;
    }
    char err[RG_ERRLEN], key_id[RG_DIGEST_LEN];
    if (rg_keygen(argv[optind], key_id, err, sizeof err)) {
        rg_term_printf(stderr, "ropegrad keygen: %s\n", err);
        return 2;
    }
    tprintf("wrote %s (private) and %s.pub (public), key id %s\n", argv[optind], argv[optind], key_id);
    return 0;
}
