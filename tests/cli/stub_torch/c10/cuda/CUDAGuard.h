/* SPDX-License-Identifier: Apache-2.0 */
// A stand-in for <c10/cuda/CUDAGuard.h> (see torch/extension.h here).
#pragma once

namespace c10 {
namespace cuda {
struct CUDAGuard {
    explicit CUDAGuard(c10::Device) {}
};
}  // namespace cuda
}  // namespace c10
