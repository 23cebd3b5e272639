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

  // The slope's broadcast view for X's shape.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& slope = ctx.tensor_input(1);
    if (slope.dtype != x.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": slope has type " + std::string(DataTypeName(slope.dtype)) +
                                 ", expected " + std::string(DataTypeName(x.dtype)) + " like X (" + ctx.InputString(1) +
                                 ")");
    }
    ctx.EmplaceState(SlopeView(x.shape, slope.shape, ctx.Describe()));
    ctx.SetOutput(0, x.dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& slope = ctx.required_input(1);
    const Shape& view = ctx.state<Shape>();
    const Tensor s = slope.shape() == view ? slope : slope.Reshaped(view);
    Tensor& y = ctx.Output(0);
    Dispatch(PReluTypes{}, x.dtype(), ctx, [&](auto tag) {
      using T = decltype(tag);
      BinaryMap<T, T, T>(ctx.threads(), x, s, y, [](T a, T b) -> T {
        using A = Acc<T>;
        A v = static_cast<A>(a);
        return v < A(0) ? static_cast<T>(v * static_cast<A>(b)) : a;
      });
    });
  }

 private:
  // The shape to view the slope as so that numpy broadcasting to X's shape applies it correctly.
  Shape SlopeView(const Shape& x, const Shape& slope, const std::string& what) const {
    const int64_t x_rank = static_cast<int64_t>(x.size());
    const int64_t slope_size = ShapeElementCount(slope);
    const bool per_channel = slope.size() == 1 && x_rank >= 2 && slope_size == x[1] && slope_size > 1;
    auto channel_view = [&] {
      Shape s(static_cast<size_t>(x_rank - 1), 1);
      s[0] = slope_size;
      return s;
    };
    if (legacy_ && per_channel) return channel_view();
    bool ok = true;
    try {
      ok = BroadcastShapes({x, slope}, what) == x;
    } catch (const InvalidArgumentError&) {
      ok = false;
    }
    if (ok) return slope;
    if (per_channel) return channel_view();
    throw InvalidArgumentError(what + ": slope of shape " + ShapeToString(slope) +
                               " cannot be broadcast to X of shape " + ShapeToString(x));
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
