// com.microsoft::UnfoldTensor (torch.Tensor.unfold): the windows of `size` elements along `dim` (default -1),
// `step` (default 1) apart. X [d0, .., dn] gives Y with dims[dim] = (dims[dim] - size) / step + 1 and a last dim
// of `size`: Y[.., w, .., k] = X[.., w * step + k, ..]. size (required) >= 1 and <= dims[dim]; step >= 1. Any
// element type (pure data movement).
#include <cstring>
#include <string>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

struct Plan {
  int64_t outer = 1, n = 0, inner = 1, windows = 0;
};

class UnfoldTensor : public OpKernel {
 public:
  explicit UnfoldTensor(const ir::Node& node)
      : dim_(node.GetInt("dim", -1)), size_(node.GetInt("size", 0)), step_(node.GetInt("step", 1)) {
    node.RequireAttr("size");
    if (size_ < 1 || step_ < 1) {
      throw InvalidModelError(node.Describe() + ": attributes size = " + std::to_string(size_) +
                              ", step = " + std::to_string(step_) + ", expected both >= 1");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const auto rank = static_cast<int64_t>(x.shape.size());
    const std::string what = ctx.Describe();
    const int64_t d = NormalizeAxis(dim_, rank, what + ": attribute dim");
    Plan p;
    p.n = x.shape[static_cast<size_t>(d)];
    if (p.n < size_) {
      throw InvalidArgumentError(what + ": dimension " + std::to_string(d) + " of " + ctx.InputString(0) +
                                 " is shorter than the window size " + std::to_string(size_));
    }
    for (int64_t i = 0; i < rank; ++i) {
      if (i < d) p.outer *= x.shape[static_cast<size_t>(i)];
      if (i > d) p.inner *= x.shape[static_cast<size_t>(i)];
    }
    p.windows = (p.n - size_) / step_ + 1;
    Shape y = x.shape;
    y[static_cast<size_t>(d)] = p.windows;
    y.push_back(size_);
    ctx.SetOutput(0, x.dtype, y);
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    const Plan& p = ctx.state<Plan>();
    if (y.size() == 0) return;
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t o = 0; o < p.outer; ++o) {
        for (int64_t w = 0; w < p.windows; ++w) {
          for (int64_t i = 0; i < p.inner; ++i) {
            const T* src = in + (o * p.n + w * step_) * p.inner + i;
            for (int64_t k = 0; k < size_; ++k) *out++ = src[k * p.inner];
          }
        }
      }
    };
    if (x.dtype() == DataType::kString) return run(std::string{});
    // Fixed-size elements move as bytes of their width.
    switch (DataTypeBits(x.dtype())) {
      case 8: return run(uint8_t{});
      case 16: return run(uint16_t{});
      case 32: return run(uint32_t{});
      case 64: return run(uint64_t{});
      case 128: return RunBytes(x, y, p, 16);
      default: RunBytes(x, y, p, DataTypeBits(x.dtype()) / 8);
    }
  }

 private:
  void RunBytes(const Tensor& x, Tensor& y, const Plan& p, int64_t bytes) const {
    const auto* in = static_cast<const char*>(x.raw_data());
    auto* out = static_cast<char*>(y.raw_data());
    for (int64_t o = 0; o < p.outer; ++o) {
      for (int64_t w = 0; w < p.windows; ++w) {
        for (int64_t i = 0; i < p.inner; ++i) {
          for (int64_t k = 0; k < size_; ++k) {
            std::memcpy(out, in + ((o * p.n + w * step_ + k) * p.inner + i) * bytes, static_cast<size_t>(bytes));
            out += bytes;
          }
        }
      }
    }
  }

  int64_t dim_, size_, step_;
};

}  // namespace

void RegisterUnfoldTensorKernels(KernelRegistry& r) {
  // ONNX Runtime's schema: every tensor type of IR 4 (and bfloat16); its CPU kernel moves float, double, int32 and
  // int64. Sub-byte types (int4, float4) are not in the schema.
  r.Add({.op = "UnfoldTensor",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T",
                    {DataType::kUint8, DataType::kUint16, DataType::kUint32, DataType::kUint64, DataType::kInt8,
                     DataType::kInt16, DataType::kInt32, DataType::kInt64, DataType::kFloat16, DataType::kFloat,
                     DataType::kDouble, DataType::kString, DataType::kBool, DataType::kComplex64, DataType::kComplex128,
                     DataType::kBFloat16}}},
         .create = MakeKernel<UnfoldTensor>});
}

}  // namespace ferry::ref
