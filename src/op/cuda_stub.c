/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_stub.c -- the shared CUDA entry point of a build without CUDA (each
 * op's own entry points: its folder's cuda_stub.c). */
#include "ropegrad.h"

int ropegrad_cuda_available(void) { return 0; }
