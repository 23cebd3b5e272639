// Unsqueeze: inserts size-1 dimensions at the given output axes; the output shares the input's buffer.
// Axes come from the attribute before opset 13 and from input 1 from opset 13. Prepare declares the output a view of
// the input with its shape when the axes are known before the run (attribute or constant); axes read at run time are
// resolved (and their errors raised) by Compute. com.microsoft::ExpandDims-1 (ONNX Runtime's contrib op) is this
// kernel too: Unsqueeze of one axis given as a scalar int32 input 'axis', in [-r - 1, r] for an input of rank r.
#include <optional>
#include <utility>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/ms_types.h"
#include "kernels/ref/view_kernels.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// X's shape with size-1 dims inserted at the output axes; throws InvalidArgumentError naming `what` and the input
// `input` for an axis out of range or listed twice.
Shape Unsqueezed(const Shape& x, const std::vector<int64_t>& axes, const std::string& what,
                 const char* input = "axes") {
  const int64_t out_rank = static_cast<int64_t>(x.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : axes) {
    const auto n = static_cast<size_t>(NormalizeAxis(a, out_rank, what + ": input '" + input + "'"));
    if (inserted[n]) throw InvalidArgumentError(what + ": axis " + std::to_string(a) + " is listed more than once");
    inserted[n] = true;
  }
  Shape out(static_cast<size_t>(out_rank), 1);
  size_t k = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!inserted[i]) out[i] = x[k++];
  }
  return out;
}

// Y's shape for one signature, when the axes are known before the run.
struct UnsqueezePlan {
  Shape out_shape;
};

class Unsqueeze : public OpKernel {
 public:
  explicit Unsqueeze(const ir::Node& node)
      : expand_dims_(node.op_type() == "ExpandDims"), axes_from_input_(expand_dims_ || node.opset() >= 13) {
    if (!axes_from_input_) axes_ = node.GetInts("axes");
  }

  // Y is a view of X: its shape when the axes are the attribute or a constant, else Y is data-dependent.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    std::vector<int64_t> axes = axes_;
    if (expand_dims_) {
      const InputSpec& a = ctx.tensor_input(1);
      if (a.dtype != DataType::kInt32 || !a.shape.empty()) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'axis' must be a scalar int32, got " + ctx.InputString(1));
      }
      if (!ctx.constant(1)) return ctx.SetOutputDynamic(0);
      axes = {ctx.constant(1)->data<int32_t>()[0]};
    } else if (axes_from_input_) {
      std::optional<std::vector<int64_t>> known = PrepareAxesInput(ctx);
      if (!known) return ctx.SetOutputDynamic(0);
      axes = std::move(*known);
    }
    UnsqueezePlan& p = ctx.EmplaceState(UnsqueezePlan{Unsqueezed(x.shape, axes, ctx.Describe(), AxesName())});
    ctx.SetOutput(0, x.dtype, p.out_shape);
    ctx.output(0).view_of = 0;
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (const UnsqueezePlan* p = ctx.state_if_any<UnsqueezePlan>()) {
      ctx.SetOutput(0, Value(x.Reshaped(p->out_shape)));
      return;
    }
    // Axes read from the run's data: their errors are the data's (they name the node).
    const std::vector<int64_t> axes = ReadInt64s(ctx.required_input(1),
                                                 ctx.Describe() + ": input '" + AxesName() + "'");
    ctx.SetOutput(0, Value(x.Reshaped(Unsqueezed(x.shape(), axes, ctx.Describe(), AxesName()))));
  }

 private:
  const char* AxesName() const { return expand_dims_ ? "axis" : "axes"; }

  bool expand_dims_;
  bool axes_from_input_;
  std::vector<int64_t> axes_;
};

}  // namespace

std::unique_ptr<OpKernel> CreateUnsqueezeKernel(const ir::Node& node, const KernelOptions& options) {
  return MakeKernel<Unsqueeze>(node, options);
}

void RegisterUnsqueezeKernels(KernelRegistry& r) {
  r.Add({.op = "Unsqueeze", .since = 1, .until = 12, .types = {{"T", dtypes::All()}},
         .create = CreateUnsqueezeKernel});
  r.Add({.op = "Unsqueeze",
         .since = 13,
         .types = {{"T", dtypes::All()}},
         .create = CreateUnsqueezeKernel,
         .host_inputs = {1}});
  // com.microsoft::ExpandDims-1: its schema's types (ONNX Runtime's all_tensor_types, no bfloat16).
  r.Add({.op = "ExpandDims",
         .domain = "com.microsoft",
         .since = 1,
         .types = {{"T", MsAllTensorTypes()}},
         .create = CreateUnsqueezeKernel,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
