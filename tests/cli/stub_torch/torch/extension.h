/* SPDX-License-Identifier: Apache-2.0 */
// A stand-in for <torch/extension.h>: just the names the bindings that
// `ropegrad export-solution` generates use, with the same shapes (a tensor's
// methods, TORCH_CHECK, pybind11's module). tests/cli/test_export.c compiles each
// generated kernel.cu against it with nvcc, so the binding, the problem
// structs of ropegrad.h and the launchers of the shipped kernel headers are
// checked to fit together on a machine without torch or a GPU. Nothing here
// runs; python/tests/test_solution_export.py builds against real torch.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <tuple>

namespace c10 {
struct BFloat16 {
    uint16_t x;
};
enum class ScalarType { Float, Half, BFloat16, Long };
struct Device {
    bool operator==(const Device &) const { return true; }
};
struct IntArrayRef {
    bool operator==(const IntArrayRef &) const { return true; }
};
struct TensorOptions {
    TensorOptions dtype(ScalarType) const { return *this; }
};
}  // namespace c10

namespace at {
using c10::BFloat16;
constexpr c10::ScalarType kFloat = c10::ScalarType::Float;
constexpr c10::ScalarType kHalf = c10::ScalarType::Half;
constexpr c10::ScalarType kBFloat16 = c10::ScalarType::BFloat16;
constexpr c10::ScalarType kLong = c10::ScalarType::Long;

class Tensor {
  public:
    bool is_cuda() const { return true; }
    c10::Device device() const { return {}; }
    int64_t dim() const { return 0; }
    c10::IntArrayRef sizes() const { return {}; }
    int64_t size(int64_t) const { return 0; }
    int64_t stride(int64_t) const { return 0; }
    c10::ScalarType scalar_type() const { return kFloat; }
    c10::TensorOptions options() const { return {}; }
    Tensor contiguous() const { return *this; }
    void *data_ptr() const { return nullptr; }
    template <class T> T *data_ptr() const { return nullptr; }
};
}  // namespace at

namespace torch {
using at::Tensor;
inline Tensor empty(std::initializer_list<int64_t>, c10::TensorOptions) { return {}; }
}  // namespace torch

template <class... A> inline void rg_stub_torch_check(bool, const A &...) {}
#define TORCH_CHECK(cond, ...) rg_stub_torch_check(static_cast<bool>(cond), __VA_ARGS__)

namespace pybind11 {
struct arg {
    explicit arg(const char *) {}
};
struct module_ {
    template <class F, class... A> void def(const char *, F, const char *, const A &...) {}
};
}  // namespace pybind11

#define TORCH_EXTENSION_NAME rg_stub_extension
#define PYBIND11_MODULE(name, m) void rg_stub_module_##name(pybind11::module_ &m)
