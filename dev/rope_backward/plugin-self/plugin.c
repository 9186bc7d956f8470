/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugin.c -- ropegrad's own 014 kernel as a plugin (include/ropegrad_impl.h):
 * the entries call libropegrad's public ropegrad_rope_backward_cuda (the default
 * kernel, exactly what `ropegrad bench` measures) and ropegrad_rope_backward_cpu.
 * It exists to show that measuring through the plugin path changes no
 * figure: scripts/peers.sh measures it and `ropegrad bench` in the same call
 * and prints the two geomeans' ratio (issue 25: within 2%).
 *
 *   ropegrad bench --impl build/dev/plugin-self/libropegrad_self014.so
 */
#include "ropegrad_impl.h"

#define SELF_VERSION_STR2(x) #x
#define SELF_VERSION_STR(x) SELF_VERSION_STR2(x)

static int self_cuda(const void *problem, void *cuda_stream)
{
    return ropegrad_rope_backward_cuda((const ropegrad_rope_backward_problem *)problem, cuda_stream);
}

static int self_cpu(const void *problem, int num_threads)
{
    return ropegrad_rope_backward_cpu((const ropegrad_rope_backward_problem *)problem, num_threads);
}

static const ropegrad_impl descriptor = {
    .abi_version = ROPEGRAD_IMPL_ABI_VERSION,
    .name = "ropegrad-as-plugin",
    .version = SELF_VERSION_STR(ROPEGRAD_VERSION_MAJOR) "." SELF_VERSION_STR(ROPEGRAD_VERSION_MINOR) "."
        SELF_VERSION_STR(ROPEGRAD_VERSION_PATCH),
    .op = "014_rotary_embedding_with_attention_scaling_backward",
    .cuda = self_cuda,
    .cpu = self_cpu,
};

const ropegrad_impl *ropegrad_impl_descriptor(void)
{
    return &descriptor;
}
