// com.microsoft::NhwcMaxPool (int8 / uint8): ONNX MaxPool (kernel_shape required, strides, pads, auto_pad,
// dilations, ceil_mode) on channels-last data: X [N, spatial..., C] -> Y [N, out..., C], Y[n, o, c] = the largest
// X[n, i, c] over the window's taps inside the input (the lowest value of the type when none is).
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/conv_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class NhwcMaxPool : public OpKernel {
 public:
  explicit NhwcMaxPool(const ir::Node& node)
      : attrs_(WindowAttrs::FromNode(node)), ceil_mode_(node.GetInt("ceil_mode", 0) != 0) {
    node.RequireAttr("kernel_shape");
    if (attrs_.kernel_shape.empty()) throw InvalidModelError(node.Describe() + ": attribute kernel_shape is empty");
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const size_t rank = attrs_.kernel_shape.size();
    if (x.shape.size() != rank + 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'x' must be [N, spatial..., C] with " +
                                 std::to_string(rank) + " spatial dims (one per kernel_shape value), got " +
                                 ctx.InputString(0));
    }
    const std::span<const int64_t> spatial(x.shape.data() + 1, rank);
    WindowGeometry g = ResolveWindow(attrs_, spatial, attrs_.kernel_shape, ceil_mode_, ctx.Describe());
    Shape y{x.shape[0]};
    y.insert(y.end(), g.out.begin(), g.out.end());
    y.push_back(x.shape.back());
    ctx.SetOutput(0, x.dtype, y);
    ctx.EmplaceState(std::move(g));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    const WindowGeometry& g = ctx.state<WindowGeometry>();
    Dispatch(TypeList<int8_t, uint8_t>{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      const int64_t channels = x.dim(x.rank() - 1), in_size = g.in_size(), out_size = g.out_size();
      const int64_t taps = g.kernel_size();
      const size_t rank = g.rank();
      std::vector<int64_t> o(rank), t(rank);
      for (int64_t n = 0; n < x.dim(0); ++n) {
        const T* xn = x.data<T>() + n * in_size * channels;
        T* yn = y.data<T>() + n * out_size * channels;
        for (int64_t oi = 0; oi < out_size; ++oi) {
          for (int64_t r = oi, d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
            o[static_cast<size_t>(d)] = r % g.out[static_cast<size_t>(d)];
            r /= g.out[static_cast<size_t>(d)];
          }
          T* yo = yn + oi * channels;
          std::fill(yo, yo + channels, std::numeric_limits<T>::lowest());
          for (int64_t ti = 0; ti < taps; ++ti) {
            int64_t offset = 0;
            bool inside = true;
            for (int64_t r = ti, d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
              const auto u = static_cast<size_t>(d);
              const int64_t pos = o[u] * g.strides[u] - g.pad_begin[u] + (r % g.kernel[u]) * g.dilations[u];
              r /= g.kernel[u];
              inside = inside && pos >= 0 && pos < g.in[u];
              t[u] = pos;
            }
            if (!inside) continue;
            for (size_t u = 0; u < rank; ++u) offset = offset * g.in[u] + t[u];
            const T* xi = xn + offset * channels;
            for (int64_t c = 0; c < channels; ++c) yo[c] = std::max(yo[c], xi[c]);
          }
        }
      }
    });
  }

 private:
  WindowAttrs attrs_;
  bool ceil_mode_;
};

}  // namespace

void RegisterNhwcMaxPoolKernels(KernelRegistry& r) {
  r.Add({.op = "NhwcMaxPool",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", {DataType::kInt8, DataType::kUint8}}},
         .create = MakeKernel<NhwcMaxPool>});
}

}  // namespace ferry::ref
