// LayerNormalization (opset 17, ONNX Runtime's default-domain version 1 and ai.ferry's, float32) on oneDNN's
// layer_normalization_forward: X is viewed as [prod(dims[:axis]), prod(dims[axis:])] rows normalised over their last
// dim, Y = (X - mean) / sqrt(var + epsilon) · Scale + B. Scale and B usually have the normalised shape (or broadcast
// to it: expanded to one row) and go to oneDNN as its scale and shift; ones that only broadcast to X's full shape
// are applied after oneDNN normalised. The Mean and InvStdDev outputs (stash_type float) come from oneDNN's
// statistics: the mean as is, InvStdDev = 1 / sqrt(variance + epsilon) as in ref. Prepare checks the inputs and
// builds the primitive for each signature (its scratchpad goes to the workspace); Compute only runs it.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/dnnl_scratchpad.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/normalization_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// The prepared state of one signature: X as `rows` rows of `n` values, where Scale and B go (oneDNN's scale and
// shift when they broadcast to the normalized shape, else applied at X's full shape after oneDNN normalised), the
// primitive and the node, for oneDNN's errors.
struct LayerNormPlan {
  int64_t rows = 0, n = 0;
  Shape norm_shape;
  bool per_row = false, stats = false;
  dnnl::layer_normalization_forward prim;
  dnnl::memory::desc scratch;
  std::string what;
};

class LayerNormalization : public OpKernel {
 public:
  explicit LayerNormalization(const ir::Node& node)
      : axis_(node.GetInt("axis", -1)), epsilon_(node.GetFloat("epsilon", 1e-5f)) {}

  // The inputs' checks, the outputs (Mean and InvStdDev of X's leading dims, when requested), and for a non-empty
  // X the primitive (built under the thread count it will run with), its scratchpad in the workspace.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& scale = ctx.tensor_input(1);
    const bool has_bias = ctx.has_input(2);
    const InputSpec* bias = has_bias ? &ctx.tensor_input(2) : nullptr;
    const std::string what = ctx.Describe();
    for (int i = 0; i < 3; ++i) {
      if (i < 2 || has_bias) {
        if (ctx.input(i).dtype != DataType::kFloat) {
          throw InvalidArgumentError(what + ": inputs X, Scale and B must be float32, got " + ctx.InputString(i));
        }
      }
    }
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    if (rank == 0) throw InvalidArgumentError(what + ": X must have rank >= 1, got " + ctx.InputString(0));
    LayerNormPlan plan;
    plan.what = what;
    const int64_t axis = ref::NormalizeAxis(axis_, rank, what);
    plan.rows = 1;
    plan.n = 1;
    for (int64_t d = 0; d < axis; ++d) plan.rows *= x.shape[static_cast<size_t>(d)];
    for (int64_t d = axis; d < rank; ++d) plan.n *= x.shape[static_cast<size_t>(d)];
    plan.norm_shape.assign(x.shape.begin() + axis, x.shape.end());
    plan.per_row = ref::BroadcastsTo(scale.shape, plan.norm_shape) &&
                   (!bias || ref::BroadcastsTo(bias->shape, plan.norm_shape));
    if (!plan.per_row) {  // Scale and B apply at X's full shape
      for (int i = 1; i < 3; ++i) {
        if ((i == 1 || bias) && !ref::BroadcastsTo(ctx.input(i).shape, x.shape)) {
          throw InvalidArgumentError(what + ": input '" + (i == 1 ? "Scale" : "B") + "' of shape " +
                                     ShapeToString(ctx.input(i).shape) + " does not broadcast to " +
                                     ShapeToString(x.shape) + " (" + ctx.InputString(i) + ")");
        }
      }
    }
    Shape stat_shape(x.shape.begin(), x.shape.begin() + axis);
    stat_shape.resize(static_cast<size_t>(rank), 1);
    ctx.SetOutput(0, DataType::kFloat, x.shape);
    for (int i = 1; i < 3 && i < ctx.output_count(); ++i) {
      if (ctx.output_requested(i)) {
        ctx.SetOutput(i, DataType::kFloat, stat_shape);
        plan.stats = true;
      } else {
        ctx.SetOutputDynamic(i);  // omitted: Compute does not write it
      }
    }
    if (ShapeElementCount(x.shape) > 0) {
      const ScopedOmpThreads scope(ctx.threads());
      auto flags = dnnl::normalization_flags::none;
      if (plan.per_row) flags |= dnnl::normalization_flags::use_scale;
      if (plan.per_row && bias) flags |= dnnl::normalization_flags::use_shift;
      try {
        // Training mode is what makes oneDNN return the statistics.
        dnnl::layer_normalization_forward::desc d(
            plan.stats ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference,
            PlainDesc({plan.rows, plan.n}, DataType::kFloat), epsilon_, flags);
        const dnnl::layer_normalization_forward::primitive_desc pd(d, WithUserScratchpad(), Engine());
        plan.prim = dnnl::layer_normalization_forward(pd);
        plan.scratch = pd.scratchpad_desc();
      } catch (const dnnl::error& e) {
        throw InternalError(what + ": oneDNN layer normalization: " + e.what());
      }
      NeedScratchpad(plan.scratch, ctx.workspace());
    }
    ctx.EmplaceState(std::move(plan));
  }

  void Compute(KernelContext& ctx) const override {
    const LayerNormPlan& p = ctx.state<LayerNormPlan>();
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const int64_t rows = p.rows, n = p.n;
    Tensor& y = ctx.OutputUninitialized(0);
    Tensor* mean_out = ctx.output_requested(1) ? &ctx.Output(1) : nullptr;
    Tensor* inv_out = ctx.output_requested(2) ? &ctx.Output(2) : nullptr;
    if (x.size() == 0) return;

    // Scale and B as one row of n values for oneDNN (the tensors themselves when they have n elements).
    std::vector<float> w, b;
    Tensor w_row, b_row;
    if (p.per_row) {
      w_row = Row(scale, p.norm_shape, n, p.what, "Scale", w);
      if (bias) b_row = Row(*bias, p.norm_shape, n, p.what, "B", b);
    } else {
      w = ref::ReadFloatsExpanded<float>(scale, x.shape(), p.what, "Scale");
      if (bias) b = ref::ReadFloatsExpanded<float>(*bias, x.shape(), p.what, "B");
    }
    const bool use_scale = p.per_row, use_shift = p.per_row && bias;
    const dnnl::memory::desc data = PlainDesc({rows, n}, DataType::kFloat);
    const dnnl::memory::desc row = PlainDesc({n}, DataType::kFloat);
    const dnnl::memory::desc stat = PlainDesc({rows}, DataType::kFloat);
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, Wrap(x, data)}, {DNNL_ARG_DST, Wrap(y, data)}};
    if (use_scale) args.emplace(DNNL_ARG_SCALE, Wrap(w_row, row));
    if (use_shift) args.emplace(DNNL_ARG_SHIFT, Wrap(b_row, row));
    Tensor mean, var;
    if (p.stats) {
      mean = mean_out ? *mean_out : Tensor(DataType::kFloat, {rows});
      var = Tensor(DataType::kFloat, {rows});
      args.emplace(DNNL_ARG_MEAN, Wrap(mean, stat));
      args.emplace(DNNL_ARG_VARIANCE, Wrap(var, stat));
    }
    AddScratchpad(args, p.scratch);
    Execute(p.prim, args, ctx.threads(), p.what);
    if (inv_out) {
      const float* v = var.data<float>();
      float* inv = inv_out->data<float>();
      for (int64_t r = 0; r < rows; ++r) inv[r] = 1.0f / std::sqrt(v[r] + epsilon_);
    }
    if (!p.per_row) {  // Scale and B of X's full shape, after oneDNN normalised
      float* yp = y.data<float>();
      const int64_t total = x.size();
      ParallelFor(ctx.threads(), total, 1 << 14, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          yp[i] = b.empty() ? yp[i] * w[static_cast<size_t>(i)]
                            : yp[i] * w[static_cast<size_t>(i)] + b[static_cast<size_t>(i)];
        }
      });
    }
  }

 private:
  // `t` (broadcasting to `norm_shape`) as a tensor of n contiguous values: `t` itself when it has n elements,
  // else a view of `buffer`, which it fills.
  static Tensor Row(const Tensor& t, const Shape& norm_shape, int64_t n, const std::string& what,
                    const std::string& name, std::vector<float>& buffer) {
    if (t.size() == n) return t;
    buffer = ref::ReadFloatsExpanded<float>(t, norm_shape, what, name);
    return Tensor::Wrap(DataType::kFloat, {n}, nullptr, buffer.data());
  }

  int64_t axis_;
  float epsilon_;
};

std::string StatsAsFloat(const ir::Node& node) {
  const bool stats = (node.num_outputs() > 1 && node.output(1)) || (node.num_outputs() > 2 && node.output(2));
  if (stats && node.GetInt("stash_type", 1) != 1) {
    return "LayerNormalization: Mean/InvStdDev outputs with stash_type " +
           std::to_string(node.GetInt("stash_type", 1)) + " (not float) are not implemented on cpu";
  }
  return "";
}

}  // namespace

void RegisterLayerNormalizationKernels(KernelRegistry& r) {
  r.Add({.op = "LayerNormalization",
         .since = 17,
         .types = {{"T", {DataType::kFloat}}, {"U", {DataType::kFloat}}},
         .create = MakeKernel<LayerNormalization>,
         .predicate = StatsAsFloat,
         .name = "cpu.f32_layernormalization__onednn.17",
         .constraints = "Mean/InvStdDev outputs only with stash_type=1 (float)",
         .library = "oneDNN"});
  // ai.ferry::LayerNormalization (what fuse_layer_norm makes of the decomposed formula below opset 17): the same op.
  r.Add({.op = "LayerNormalization",
         .domain = "ai.ferry",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}, {"U", {DataType::kFloat}}},
         .create = MakeKernel<LayerNormalization>,
         .predicate = StatsAsFloat,
         .name = "cpu.f32_ferry_layernormalization__onednn.1",
         .constraints = "Mean/InvStdDev outputs only with stash_type=1 (float)",
         .library = "oneDNN"});
  // ONNX Runtime's LayerNormalization-1 (default domain, below ONNX's version 17): the same op when X, Scale and B are
  // all float32.
  r.Add({.op = "LayerNormalization",
         .since = 1,
         .until = 16,
         .types = {{"T", {DataType::kFloat}}, {"U", {DataType::kFloat}}, {"V", {DataType::kFloat}}},
         .create = MakeKernel<LayerNormalization>,
         .predicate = StatsAsFloat,
         .name = "cpu.f32_layernormalization__onednn.1",
         .constraints = "Mean/InvStdDev outputs only with stash_type=1 (float)",
         .library = "oneDNN"});
}

}  // namespace ferry::cpu
