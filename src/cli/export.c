/* export.c -- placeholder until implemented. */
#include <stdio.h>
#include "commands.h"
int rg_cmd_export_solution(int argc, char **argv) { fprintf(stderr, "ropegrad: %s: not implemented yet\n", argv[0]); return 2; }
