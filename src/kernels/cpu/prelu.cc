// PRelu (opsets 7, 9, 16) on the cpu backend for float32, int32 and int64: y = x < 0 ? slope * x : x with ref's
// semantics, the slope broadcast unidirectionally to X (numpy rules), or, when it does not broadcast, a 1-D slope
// of size C applied per channel along axis 1 (ref's fallback). Integers multiply wrapping. Opset 6 and below (the
// legacy per-channel rule first) are left to ref. Prepare checks the types, resolves the slope's view and the
// broadcast once per signature (binary_elementwise_map.h): a per-channel slope [C,1,1] into [N,C,H,W] runs as
// N*C rows of H*W against one value each, loops the compiler vectorizes (AVX-512F, AVX2+FMA and
// baseline variants, registered best first).
#include <memory>
#include <string>
#include <type_traits>

#include "kernels/cpu/binary_elementwise_map.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

struct PReluOp {
  template <class T>
  static T Apply(T x, T slope) {
    // The product is computed unconditionally so the loop has no branch to keep (and vectorizes).
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      const T m = static_cast<T>(static_cast<U>(x) * static_cast<U>(slope));
      return x < 0 ? m : x;
    } else {
      const T m = x * slope;
      return x < 0 ? m : x;
    }
  }
};

// The shape to view the slope as so that numpy broadcasting to X's shape applies it as ref does: the slope itself
// when it broadcasts to X, else [C,1,...] for a 1-D slope of X's channel count C > 1; InvalidArgumentError naming
// the node otherwise.
Shape SlopeView(const PrepareContext& ctx, const Shape& x, const Shape& slope) {
  bool broadcasts = slope.size() <= x.size();
  for (size_t i = 0; broadcasts && i < slope.size(); ++i) {
    const int64_t d = slope[slope.size() - 1 - i];
    broadcasts = d == 1 || d == x[x.size() - 1 - i];
  }
  if (broadcasts) return slope;
  const int64_t c = ShapeElementCount(slope);
  if (slope.size() == 1 && x.size() >= 2 && c == x[1] && c > 1) {
    Shape view(x.size() - 1, 1);
    view[0] = c;
    return view;
  }
  throw InvalidArgumentError(ctx.Describe() + ": slope " + ctx.InputString(1) + " cannot be broadcast to X " +
                             ctx.InputString(0));
}

template <class T>
class PReluKernel final : public OpKernel {
 public:
  PReluKernel(DataType dtype, MapIsa isa) : dtype_(dtype), rows_(MapRows<T, T, T, PReluOp>(isa)) {}

  // X and slope of the kernel's type, the slope broadcastable to X (InvalidArgumentError naming the node otherwise).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& slope = ctx.tensor_input(1);
    if (x.dtype != dtype_ || slope.dtype != dtype_) {
      throw InvalidArgumentError(ctx.Describe() + ": " + ctx.InputString(0) + " and slope " + ctx.InputString(1) +
                                 ": expected " + std::string(DataTypeName(dtype_)) + " for both");
    }
    BinaryMapPlan p(x.shape, SlopeView(ctx, x.shape, slope.shape), x.shape);
    ctx.SetOutput(0, dtype_, x.shape);
    ctx.EmplaceState(std::move(p));
  }

  void Compute(KernelContext& ctx) const override {
    const BinaryMapPlan& p = ctx.state<BinaryMapPlan>();
    const Tensor& x = ctx.required_input(0);
    const Tensor& slope = ctx.required_input(1);
    Tensor& out = ctx.OutputUninitialized(0);
    RunBinaryMap(ctx.threads(), p, x.data<T>(), slope.data<T>(), out.data<T>(), rows_);
  }

 private:
  DataType dtype_;
  BinaryMapRows<T, T, T> rows_;
};

}  // namespace

void RegisterPReluKernels(KernelRegistry& r) {
  // Versions 7 (numpy broadcasting), 9 (integer types), 16 (bfloat16: left to ref).
  for (MapIsa isa : kMapIsas) {
    auto def = [&](const std::string& tag, DataType dtype, KernelFactory create) {
      r.Add({.op = "PRelu",
             .since = 7,
             .types = {{"T", {dtype}}},
             .create = std::move(create),
             .isa = MapIsaSet(isa),
             .name = "cpu." + tag + "_prelu__" + MapIsaName(isa) + ".7"});
    };
    def("f32", DataType::kFloat, [isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
      return std::make_unique<PReluKernel<float>>(DataType::kFloat, isa);
    });
    def("i32", DataType::kInt32, [isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
      return std::make_unique<PReluKernel<int32_t>>(DataType::kInt32, isa);
    });
    def("i64", DataType::kInt64, [isa](const ir::Node&, const KernelOptions&) -> std::unique_ptr<OpKernel> {
      return std::make_unique<PReluKernel<int64_t>>(DataType::kInt64, isa);
    });
  }
}

}  // namespace ferry::cpu
