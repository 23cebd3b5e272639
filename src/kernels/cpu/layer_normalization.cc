// LayerNormalization (opset 17, float32) on oneDNN's layer_normalization_forward: X is viewed as
// [prod(dims[:axis]), prod(dims[axis:])] rows normalised over their last dim, Y = (X - mean) / sqrt(var + epsilon)
// · Scale + B. Scale and B usually have the normalised shape (or broadcast to it: expanded to one row) and go to
// oneDNN as its scale and shift; ones that only broadcast to X's full shape are applied after oneDNN normalised.
// The Mean and InvStdDev outputs (stash_type float) come from oneDNN's statistics: the mean as is, InvStdDev =
// 1 / sqrt(variance + epsilon) as in ref.
#include <cmath>
#include <string>
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

struct LayerNormPrimitive {
  dnnl::layer_normalization_forward prim;
  dnnl::memory::desc scratch;
};

class LayerNormalization : public OpKernel {
 public:
  explicit LayerNormalization(const ir::Node& node)
      : axis_(node.GetInt("axis", -1)), epsilon_(node.GetFloat("epsilon", 1e-5f)) {}

  // The scratchpad of the primitive Compute runs at the node's static shapes (built now, as the first run would).
  void AddWorkspace(const ir::Node& node, int threads, Workspace& ws) const override {
    const auto x = StaticShape(node, 0), scale = StaticShape(node, 1);
    const auto bias = node.input(2) ? StaticShape(node, 2) : std::optional<Shape>(Shape{});
    if (!x || !scale || !bias || x->empty() || ShapeElementCount(*x) == 0) return;
    const std::string what = node.Describe();
    try {
      const int64_t rank = static_cast<int64_t>(x->size());
      const int64_t axis = ref::NormalizeAxis(axis_, rank, what);
      int64_t rows = 1, n = 1;
      for (int64_t d = 0; d < axis; ++d) rows *= (*x)[static_cast<size_t>(d)];
      for (int64_t d = axis; d < rank; ++d) n *= (*x)[static_cast<size_t>(d)];
      const Shape norm_shape(x->begin() + axis, x->end());
      const bool has_bias = node.input(2) != nullptr;
      const bool per_row =
          ref::BroadcastsTo(*scale, norm_shape) && (!has_bias || ref::BroadcastsTo(*bias, norm_shape));
      const bool stats = (node.num_outputs() > 1 && node.output(1)) || (node.num_outputs() > 2 && node.output(2));
      NeedScratchpad(Primitive(rows, n, per_row, per_row && has_bias, stats, threads, what)->scratch, ws);
    } catch (const InvalidArgumentError&) {  // a shape error, left for Compute to report
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const Tensor* bias = ctx.input(2);
    const std::string what = ctx.Describe();
    if (x.dtype() != DataType::kFloat || scale.dtype() != DataType::kFloat ||
        (bias && bias->dtype() != DataType::kFloat)) {
      throw InvalidArgumentError(what + ": inputs X, Scale and B must be float32");
    }
    const int64_t rank = x.rank();
    if (rank == 0) throw InvalidArgumentError(what + ": input 'X' must have rank >= 1");
    const int64_t axis = ref::NormalizeAxis(axis_, rank, what);
    int64_t rows = 1, n = 1;
    for (int64_t d = 0; d < axis; ++d) rows *= x.dim(d);
    for (int64_t d = axis; d < rank; ++d) n *= x.dim(d);
    Shape stat_shape(x.shape().begin(), x.shape().begin() + axis);
    stat_shape.resize(static_cast<size_t>(rank), 1);

    Tensor& y = ctx.OutputUninitialized(0, DataType::kFloat, x.shape());
    Tensor* mean_out = ctx.output_requested(1) ? &ctx.Output(1, DataType::kFloat, stat_shape) : nullptr;
    Tensor* inv_out = ctx.output_requested(2) ? &ctx.Output(2, DataType::kFloat, stat_shape) : nullptr;
    if (x.size() == 0) return;

    const Shape norm_shape(x.shape().begin() + axis, x.shape().end());
    const bool per_row =
        ref::BroadcastsTo(scale.shape(), norm_shape) && (!bias || ref::BroadcastsTo(bias->shape(), norm_shape));
    const bool stats = mean_out || inv_out;
    // Scale and B as one row of n values for oneDNN (the tensors themselves when they have n elements).
    std::vector<float> w, b;
    Tensor w_row, b_row;
    if (per_row) {
      w_row = Row(scale, norm_shape, n, what, "Scale", w);
      if (bias) b_row = Row(*bias, norm_shape, n, what, "B", b);
    } else {
      w = ref::ReadFloatsExpanded<float>(scale, x.shape(), what, "Scale");
      if (bias) b = ref::ReadFloatsExpanded<float>(*bias, x.shape(), what, "B");
    }
    const bool use_scale = per_row, use_shift = per_row && bias;
    auto prim = Primitive(rows, n, use_scale, use_shift, stats, ctx.threads(), what);
    const dnnl::memory::desc data = PlainDesc({rows, n}, DataType::kFloat);
    const dnnl::memory::desc row = PlainDesc({n}, DataType::kFloat);
    const dnnl::memory::desc stat = PlainDesc({rows}, DataType::kFloat);
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, Wrap(x, data)}, {DNNL_ARG_DST, Wrap(y, data)}};
    if (use_scale) args.emplace(DNNL_ARG_SCALE, Wrap(w_row, row));
    if (use_shift) args.emplace(DNNL_ARG_SHIFT, Wrap(b_row, row));
    Tensor mean, var;
    if (stats) {
      mean = mean_out ? *mean_out : Tensor(DataType::kFloat, {rows});
      var = Tensor(DataType::kFloat, {rows});
      args.emplace(DNNL_ARG_MEAN, Wrap(mean, stat));
      args.emplace(DNNL_ARG_VARIANCE, Wrap(var, stat));
    }
    AddScratchpad(args, prim->scratch);
    Execute(prim->prim, args, ctx.threads(), what);
    if (inv_out) {
      const float* v = var.data<float>();
      float* inv = inv_out->data<float>();
      for (int64_t r = 0; r < rows; ++r) inv[r] = 1.0f / std::sqrt(v[r] + epsilon_);
    }
    if (!per_row) {  // Scale and B of X's full shape, after oneDNN normalised
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
  // The primitive for `rows` rows of `n` values, built on first use for `threads` (the split it will run with).
  std::shared_ptr<const LayerNormPrimitive> Primitive(int64_t rows, int64_t n, bool use_scale, bool use_shift,
                                                      bool stats, int threads, const std::string& what) const {
    const std::vector<int64_t> key{rows, n, use_scale, use_shift, stats};
    return cache_.Get(key, [&] {
      const ScopedOmpThreads scope(threads);
      auto flags = dnnl::normalization_flags::none;
      if (use_scale) flags |= dnnl::normalization_flags::use_scale;
      if (use_shift) flags |= dnnl::normalization_flags::use_shift;
      try {
        // Training mode is what makes oneDNN return the statistics.
        dnnl::layer_normalization_forward::desc d(
            stats ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference,
            PlainDesc({rows, n}, DataType::kFloat), epsilon_, flags);
        const dnnl::layer_normalization_forward::primitive_desc pd(d, WithUserScratchpad(), Engine());
        return std::make_shared<LayerNormPrimitive>(
            LayerNormPrimitive{dnnl::layer_normalization_forward(pd), pd.scratchpad_desc()});
      } catch (const dnnl::error& e) {
        throw InternalError(what + ": oneDNN layer normalization: " + e.what());
      }
    });
  }

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
  ShapeCache<LayerNormPrimitive> cache_;
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
         .constraints = "Mean/InvStdDev outputs only with stash_type=1 (float)"});
  // ai.ferry::LayerNormalization (what fuse_layer_norm makes of the decomposed formula below opset 17): the same op.
  r.Add({.op = "LayerNormalization",
         .domain = "ai.ferry",
         .since = 1,
         .types = {{"T", {DataType::kFloat}}, {"U", {DataType::kFloat}}},
         .create = MakeKernel<LayerNormalization>,
         .predicate = StatsAsFloat,
         .name = "cpu.f32_ferry_layernormalization__onednn.1",
         .constraints = "Mean/InvStdDev outputs only with stash_type=1 (float)"});
}

}  // namespace ferry::cpu
