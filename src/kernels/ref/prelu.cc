// PRelu: y = x < 0 ? slope * x : x, slope broadcast to X (unidirectional numpy broadcasting from opset 7; before
// that, and as a fallback, a 1-D slope of size C applies per channel along axis 1).
#include "kernels/kernel_def.h"
#include "kernels/ref/elementwise.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

using PReluTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

class PRelu : public OpKernel {
 public:
  explicit PRelu(const ir::Node& node) : legacy_(node.opset() < 7) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& slope = ctx.required_input(1);
    if (slope.dtype() != x.dtype()) {
      throw InvalidArgumentError(ctx.Describe() + ": slope has type " + std::string(DataTypeName(slope.dtype())) +
                                 ", expected " + std::string(DataTypeName(x.dtype())) + " like X");
    }
    Tensor s = SlopeView(x, slope, ctx.Describe());
    Tensor& y = ctx.Output(0, x.dtype(), x.shape());
    Dispatch(PReluTypes{}, x.dtype(), ctx.Describe(), [&](auto tag) {
      using T = decltype(tag);
      BinaryMap<T, T, T>(ctx.threads(), x, s, y, [](T a, T b) -> T {
        using A = Acc<T>;
        A v = static_cast<A>(a);
        return v < A(0) ? static_cast<T>(v * static_cast<A>(b)) : a;
      });
    });
  }

 private:
  // The slope reshaped so that numpy broadcasting to X's shape applies it correctly.
  Tensor SlopeView(const Tensor& x, const Tensor& slope, const std::string& what) const {
    const bool per_channel = slope.rank() == 1 && x.rank() >= 2 && slope.size() == x.dim(1) && slope.size() > 1;
    auto channel_view = [&] {
      Shape s(static_cast<size_t>(x.rank() - 1), 1);
      s[0] = slope.size();
      return slope.Reshaped(std::move(s));
    };
    if (legacy_ && per_channel) return channel_view();
    bool ok = true;
    try {
      ok = BroadcastShapes({x.shape(), slope.shape()}, what) == x.shape();
    } catch (const InvalidArgumentError&) {
      ok = false;
    }
    if (ok) return slope;
    if (per_channel) return channel_view();
    throw InvalidArgumentError(what + ": slope of shape " + ShapeToString(slope.shape()) +
                               " cannot be broadcast to X of shape " + ShapeToString(x.shape()));
  }

  bool legacy_;
};

}  // namespace

void RegisterPReluKernels(KernelRegistry& r) {
  // Versions 1 (consumed_inputs, ignored), 6, 7 (numpy broadcasting), 9 (integer types), 16 (bfloat16).
  r.Add({.op = "PRelu",
         .since = 1,
         .types = {{"T", dtypes::Concat(dtypes::Floats(), {DataType::kInt32, DataType::kInt64, DataType::kUint32,
                                                           DataType::kUint64})}},
         .create = MakeKernel<PRelu>});
}

}  // namespace ferry::ref
