// Squeeze: removes size-1 dimensions (the listed axes, or all of them); the output shares the input's buffer.
// Axes come from the attribute before opset 13 and from the optional input 1 from opset 13. Prepare declares the
// output a view of the input with its shape when the axes are known before the run (attribute, absent or constant);
// axes read at run time are resolved (and their errors raised) by Compute.
#include <optional>
#include <utility>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// X's shape without the listed axes (all its size-1 dims when none are listed); throws InvalidArgumentError naming
// `what` for an axis out of range, listed twice or whose size is not 1.
Shape Squeezed(const Shape& x, const std::vector<int64_t>& axes, const std::string& what) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<bool> drop(static_cast<size_t>(rank), false);
  if (axes.empty()) {
    for (size_t i = 0; i < x.size(); ++i) drop[i] = x[i] == 1;
  }
  for (int64_t a : axes) {
    const auto n = static_cast<size_t>(NormalizeAxis(a, rank, what + ": input 'axes'"));
    if (x[n] != 1) {
      throw InvalidArgumentError(what + ": cannot squeeze axis " + std::to_string(a) + " of shape " +
                                 ShapeToString(x) + ": its size is not 1");
    }
    if (drop[n]) throw InvalidArgumentError(what + ": axis " + std::to_string(a) + " is listed more than once");
    drop[n] = true;
  }
  Shape out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!drop[i]) out.push_back(x[i]);
  }
  return out;
}

// Y's shape for one signature, when the axes are known before the run.
struct SqueezePlan {
  Shape out_shape;
};

class Squeeze : public OpKernel {
 public:
  explicit Squeeze(const ir::Node& node) : axes_from_input_(node.opset() >= 13) {
    if (!axes_from_input_ && node.has_attr("axes")) axes_ = node.GetInts("axes");
  }

  // Y is a view of X: its shape when the axes are the attribute, absent or a constant, else Y is data-dependent.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    std::vector<int64_t> axes = axes_;
    if (axes_from_input_ && ctx.has_input(1)) {
      std::optional<std::vector<int64_t>> known = PrepareAxesInput(ctx);
      if (!known) return ctx.SetOutputDynamic(0);
      axes = std::move(*known);
    }
    SqueezePlan& p = ctx.EmplaceState(SqueezePlan{Squeezed(x.shape, axes, ctx.Describe())});
    ctx.SetOutput(0, x.dtype, p.out_shape);
    ctx.output(0).view_of = 0;
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (const SqueezePlan* p = ctx.state_if_any<SqueezePlan>()) {
      ctx.SetOutput(0, Value(x.Reshaped(p->out_shape)));
      return;
    }
    // Axes read from the run's data: their errors are the data's (they name the node).
    const std::vector<int64_t> axes = ReadInt64s(ctx.required_input(1), ctx.Describe() + ": input 'axes'");
    ctx.SetOutput(0, Value(x.Reshaped(Squeezed(x.shape(), axes, ctx.Describe()))));
  }

 private:
  bool axes_from_input_;
  std::vector<int64_t> axes_;
};

}  // namespace

std::optional<std::vector<int64_t>> PrepareAxesInput(const PrepareContext& ctx) {
  const InputSpec& a = ctx.tensor_input(1);
  if (a.shape.size() > 1) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'axes' must be 1-D, got " + ctx.InputString(1));
  }
  if (a.dtype != DataType::kInt32 && a.dtype != DataType::kInt64) {
    throw InvalidArgumentError(ctx.Describe() + ": input 'axes': expected an int32 or int64 tensor, got " +
                               ctx.InputString(1));
  }
  const Tensor* t = ctx.constant(1);
  if (!t) return std::nullopt;
  return ReadInt64s(*t, ctx.Describe() + ": input 'axes'");
}

std::unique_ptr<OpKernel> CreateSqueezeKernel(const ir::Node& node, const KernelOptions& options) {
  return MakeKernel<Squeeze>(node, options);
}

void RegisterSqueezeKernels(KernelRegistry& r) {
  r.Add({.op = "Squeeze", .since = 1, .until = 12, .types = {{"T", dtypes::All()}}, .create = CreateSqueezeKernel});
  r.Add({.op = "Squeeze",
         .since = 13,
         .types = {{"T", dtypes::All()}},
         .create = CreateSqueezeKernel,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
