/* SPDX-License-Identifier: Apache-2.0 */
// A stand-in for <ATen/cuda/CUDAContext.h> (see torch/extension.h here).
#pragma once

#include <cuda_runtime.h>

namespace at {
namespace cuda {
struct CUDAStream {
    operator cudaStream_t() const { return nullptr; }
};
inline CUDAStream getCurrentCUDAStream() { return {}; }
}  // namespace cuda
}  // namespace at
