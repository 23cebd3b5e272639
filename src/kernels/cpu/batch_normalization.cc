// BatchNormalization inference (float32, opsets 9-15) on oneDNN's batch_normalization_forward with the given
// statistics (use_global_stats) and separate scale and shift: Y = (X - mean) / sqrt(var + epsilon) · scale + B
// per channel. X [N, C, D1, ...] is viewed as [N, C, D1·D2·..., 1] (the layout oneDNN's plain-layout kernel
// takes for any rank); a rank-1 X is [N] with one channel. Prepare checks the inputs and builds the primitive of
// each input signature (its prepared state), with the scratchpad it records in the workspace. Training
// (training_mode=1, or an opset < 14 node that asks for the running statistics) is refused and falls back to ref.
#include <string>

#include "kernels/cpu/dnnl_scratchpad.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// Everything one input signature needs (the prepared state): X's view and the primitive (none for an empty X).
struct BatchNormPlan {
  Shape view;  // X as oneDNN sees it: [N, C, spatial, 1]
  dnnl::memory::desc data, param;
  dnnl::batch_normalization_forward prim;
  dnnl::memory::desc scratch;
  bool empty = false;
  std::string what;  // the node, for oneDNN's errors
};

class BatchNormalization : public OpKernel {
 public:
  explicit BatchNormalization(const ir::Node& node) : epsilon_(node.GetFloat("epsilon", 1e-5f)) {}

  // Checks the inputs, declares Y (X's shape), builds the primitive for X's view (for ctx.threads(), the split it
  // will run with) and records its scratchpad.
  void Prepare(PrepareContext& ctx) const override {
    const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
    for (int i = 0; i < 5; ++i) {
      const InputSpec& in = ctx.tensor_input(i);
      if (in.dtype != DataType::kFloat) {
        throw InvalidArgumentError(ctx.Describe() + ": input '" + names[i] + "' must be float32, got " +
                                   ctx.InputString(i));
      }
    }
    const Shape& x = ctx.input(0).shape;
    if (x.empty()) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'X' must have rank >= 1, got " + ctx.InputString(0));
    }
    BatchNormPlan& p = ctx.EmplaceState(BatchNormPlan{});
    p.view = View(x);
    const int64_t channels = p.view[1];
    for (int i = 1; i < 5; ++i) {
      const int64_t size = ShapeElementCount(ctx.input(i).shape);
      if (size != channels) {
        throw InvalidArgumentError(ctx.Describe() + ": input '" + names[i] + "' has " + std::to_string(size) +
                                   " elements, expected C = " + std::to_string(channels) + " (" + ctx.InputString(i) +
                                   ", " + ctx.InputString(0) + ")");
      }
    }
    ctx.SetOutput(0, DataType::kFloat, x);
    p.what = ctx.Describe();
    p.empty = ShapeElementCount(x) == 0;
    if (p.empty) return;
    p.data = PlainDesc(p.view, DataType::kFloat);
    p.param = PlainDesc({channels}, DataType::kFloat);
    const ScopedOmpThreads scope(ctx.threads());
    const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                       dnnl::normalization_flags::use_shift;
    try {
      dnnl::batch_normalization_forward::desc d(dnnl::prop_kind::forward_inference, p.data, epsilon_, flags);
      const dnnl::batch_normalization_forward::primitive_desc pd(d, WithUserScratchpad(), Engine());
      p.prim = dnnl::batch_normalization_forward(pd);
      p.scratch = pd.scratchpad_desc();
    } catch (const dnnl::error& e) {
      throw InternalError(p.what + ": oneDNN batch normalization: " + e.what());
    }
    NeedScratchpad(p.scratch, ctx.workspace());
  }

  void Compute(KernelContext& ctx) const override {
    const BatchNormPlan& p = ctx.state<BatchNormPlan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    if (p.empty) return;
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, Wrap(x, p.data)},
                                               {DNNL_ARG_DST, Wrap(y, p.data)},
                                               {DNNL_ARG_SCALE, Wrap(ctx.required_input(1), p.param)},
                                               {DNNL_ARG_SHIFT, Wrap(ctx.required_input(2), p.param)},
                                               {DNNL_ARG_MEAN, Wrap(ctx.required_input(3), p.param)},
                                               {DNNL_ARG_VARIANCE, Wrap(ctx.required_input(4), p.param)}};
    AddScratchpad(args, p.scratch);
    Execute(p.prim, args, ctx.threads(), p.what);
  }

 private:
  // X as oneDNN sees it: [N, C, spatial, 1].
  static Shape View(const Shape& x) {
    const int64_t channels = x.size() > 1 ? x[1] : 1;
    const int64_t spatial = x.size() > 2 ? ShapeElementCount(std::span(x).subspan(2)) : 1;
    return {x[0], channels, spatial, 1};
  }

  float epsilon_;
};

std::string InferenceOnly(const ir::Node& node) {
  if (node.opset() >= 14 && node.GetInt("training_mode", 0) != 0) {
    return "BatchNormalization: training_mode=1 is not implemented on cpu";
  }
  for (size_t i = 1; i < node.num_outputs(); ++i) {
    if (node.output(i) != nullptr) {
      return "BatchNormalization: output " + std::to_string(i) +
             " (running or saved statistics, training) is not implemented on cpu";
    }
  }
  return "";
}

// Static shapes: every parameter holds one value per channel (ref also accepts the legacy per-position form).
std::string ParamsPerChannel(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  if (!x || !x->type().shape || x->type().shape->empty()) return "";
  const auto& xs = *x->type().shape;
  const ir::Dim c = xs.size() > 1 ? xs[1] : ir::Dim{1, ""};
  if (!c.is_static()) return "";
  for (size_t i = 1; i < 5; ++i) {
    const ir::Value* p = node.input(i);
    if (!p || !p->type().shape) continue;
    int64_t n = 1;
    for (const ir::Dim& d : *p->type().shape) {
      if (!d.is_static()) return "";
      n *= d.value;
    }
    if (n != c.value) {
      return "BatchNormalization: input '" + p->name() + "' has " + std::to_string(n) +
             " elements, not one per channel (" + std::to_string(c.value) + "); not implemented on cpu";
    }
  }
  return "";
}

}  // namespace

void RegisterBatchNormalizationKernels(KernelRegistry& r) {
  // 9: no more `spatial`; 14 adds training_mode and the type U; 15 splits it into T1, T2. Inference is the same.
  r.Add({.op = "BatchNormalization",
         .since = 9,
         .types = {{"T", {DataType::kFloat}},
                   {"T1", {DataType::kFloat}},
                   {"T2", {DataType::kFloat}},
                   {"U", {DataType::kFloat}}},
         .create = MakeKernel<BatchNormalization>,
         .predicate = InferenceOnly,
         .shape_predicate = ParamsPerChannel,
         .name = "cpu.f32_batchnormalization__onednn.9",
         .constraints = "inference only (training_mode=0, only Y requested); per-channel parameters"});
}

}  // namespace ferry::cpu
