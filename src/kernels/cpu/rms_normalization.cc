// RMSNormalization (opset 23), ai.ferry::RMSNormalization (what fuse_layer_norm makes of T5/LLaMA's decomposed
// RMSNorm below opset 23) and ONNX Runtime's SimplifiedLayerNormalization (default domain and com.microsoft; its
// optional inv_std_var output, 1 / sqrt(mean(X^2) + epsilon) in float, is the row routine's) on the cpu backend,
// float32: Y = X / sqrt(mean(X^2 over dims [axis, rank)) + epsilon) · scale, row by row (layer_norm_row.h: each row
// of X is read once from memory, the scaling re-reads it from cache), rows in parallel. Accepted: stash_type 1
// (float statistics, as ref computes them for float32) and a scale of the normalized shape (leading 1s allowed),
// i.e. one contiguous row of n values; other scales, which only broadcast to it or to X's full shape, are refused
// where the shapes are static (ref runs them) and, when only the run reveals them, expanded here as ref does
// (Prepare checks the shapes and picks the form, Compute expands the data). Y takes over X's buffer when that is X's
// last use. AVX-512F, AVX2+FMA and scalar variants, best first.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/layer_norm_row.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/normalization_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// True when `scale` (right-aligned to X's `rank` dims) is 1 on every dim before `axis` and equals X's dims from
// `axis` on: its elements are one row of the normalized shape, in order.
bool IsOneRow(const Shape& scale, const Shape& x, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t off = rank - static_cast<int64_t>(scale.size());
  if (off < 0) return false;
  for (int64_t p = 0; p < rank; ++p) {
    const int64_t s = p < off ? 1 : scale[static_cast<size_t>(p - off)];
    if (p < axis ? s != 1 : s != x[static_cast<size_t>(p)]) return false;
  }
  return true;
}

// How scale meets X's rows: its own data as one row (the accepted form), or expanded as ref does (shapes the shape
// predicate could not see) to one row when it broadcasts to the normalized shape, to X's shape otherwise.
enum class ScaleForm { kOneRow, kPerRow, kFull };

// The prepared state of one signature: X as `rows` rows of `n` values, the normalized shape and scale's form.
struct RmsNormPlan {
  int64_t rows = 0, n = 0;
  Shape norm_shape;
  ScaleForm form = ScaleForm::kOneRow;
  std::string what;
};

class RmsNormalization : public OpKernel {
 public:
  RmsNormalization(const ir::Node& node, RmsNormRowFn row)
      : row_(row), axis_(node.GetInt("axis", -1)), epsilon_(node.GetFloat("epsilon", 1e-5f)) {
    ref::StashType(node.GetInt("stash_type", 1), node.Describe());  // validates the attribute
  }

  // The inputs' checks (scale must broadcast to X's shape), the rows and scale's form; Y of X's shape, written in
  // place over X when the executor allows it.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& scale = ctx.tensor_input(1);
    const std::string what = ctx.Describe();
    if (x.dtype != DataType::kFloat || scale.dtype != DataType::kFloat) {
      throw InvalidArgumentError(what + ": inputs 'X' and 'scale' must be float32, got " + ctx.InputString(0) +
                                 " and " + ctx.InputString(1));
    }
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    if (rank == 0) throw InvalidArgumentError(what + ": input 'X' must have rank >= 1, got " + ctx.InputString(0));
    RmsNormPlan plan;
    plan.what = what;
    const int64_t axis = ref::NormalizeAxis(axis_, rank, what);
    plan.rows = 1;
    plan.n = 1;
    for (int64_t d = 0; d < axis; ++d) plan.rows *= x.shape[static_cast<size_t>(d)];
    for (int64_t d = axis; d < rank; ++d) plan.n *= x.shape[static_cast<size_t>(d)];
    plan.norm_shape.assign(x.shape.begin() + axis, x.shape.end());
    if (IsOneRow(scale.shape, x.shape, axis)) {
      plan.form = ScaleForm::kOneRow;
    } else if (ref::BroadcastsTo(scale.shape, plan.norm_shape)) {
      plan.form = ScaleForm::kPerRow;
    } else if (ref::BroadcastsTo(scale.shape, x.shape)) {
      plan.form = ScaleForm::kFull;
    } else {
      throw InvalidArgumentError(what + ": input 'scale' of shape " + ShapeToString(scale.shape) +
                                 " does not broadcast to " + ShapeToString(x.shape) + " (" + ctx.InputString(1) +
                                 ")");
    }
    ctx.SetOutput(0, DataType::kFloat, x.shape);
    ctx.output(0).in_place_of = 0;
    if (ctx.output_count() > 1) {  // SimplifiedLayerNormalization's inv_std_var
      Shape stat_shape(x.shape.begin(), x.shape.begin() + axis);
      stat_shape.resize(static_cast<size_t>(rank), 1);
      ctx.SetOutput(1, DataType::kFloat, stat_shape);
    }
    ctx.EmplaceState(std::move(plan));
  }

  void Compute(KernelContext& ctx) const override {
    const RmsNormPlan& p = ctx.state<RmsNormPlan>();
    const Tensor& x = ctx.required_input(0);
    const Tensor& scale = ctx.required_input(1);
    const int64_t rows = p.rows, n = p.n;
    // scale as rows of n values: its own data, else expanded as ref does.
    std::vector<float> expanded;
    const float* w = nullptr;
    int64_t w_stride = 0;  // between rows
    if (p.form == ScaleForm::kOneRow) {
      w = scale.data<float>();
    } else {
      const bool per_row = p.form == ScaleForm::kPerRow;
      expanded = ref::ReadFloatsExpanded<float>(scale, per_row ? p.norm_shape : x.shape(), p.what, "scale");
      w = expanded.data();
      w_stride = per_row ? 0 : n;
    }
    Tensor* reused = ctx.ReuseInput(0, 0, DataType::kFloat, x.shape());
    Tensor& y = reused ? *reused : ctx.OutputUninitialized(0);
    float* inv = ctx.output_requested(1) ? ctx.OutputUninitialized(1).data<float>() : nullptr;
    if (x.size() == 0) return;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    ParallelFor(ctx.threads(), rows, std::max<int64_t>(1, 8192 / n), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const float v = row_(xp + r * n, nullptr, nullptr, nullptr, yp + r * n, w + r * w_stride, n, epsilon_);
        if (inv) inv[r] = v;
      }
    });
  }

 private:
  RmsNormRowFn row_;
  int64_t axis_;
  float epsilon_;
};

std::string FloatStash(const ir::Node& node) {
  const int64_t stash = node.GetInt("stash_type", 1);
  if (stash == 1) return "";
  return node.op_type() + ": stash_type " + std::to_string(stash) + " (not float) is not implemented on cpu";
}

std::string DimsToString(const std::vector<ir::Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    s += (i ? "," : "") + (dims[i].is_static() ? std::to_string(dims[i].value)
                                                : (dims[i].symbol.empty() ? "?" : dims[i].symbol));
  }
  return s + "]";
}

// Static shapes: scale must be one row of the normalized shape (IsOneRow); "" when a dim it needs is unknown.
std::string ScaleIsOneRow(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  const ir::Value* scale = node.num_inputs() > 1 ? node.input(1) : nullptr;
  if (!x || !scale || !x->type().shape || !scale->type().shape) return "";
  const auto& xs = *x->type().shape;
  const auto& ss = *scale->type().shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  int64_t axis = node.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (rank == 0 || axis < 0 || axis >= rank) return "";  // the kernel (like ref) reports it when prepared
  const int64_t off = rank - static_cast<int64_t>(ss.size());
  if (off < 0) return "";  // never broadcasts: the kernel (like ref) reports it when prepared
  bool one_row = true;
  for (int64_t p = 0; one_row && p < rank; ++p) {
    const ir::Dim s = p < off ? ir::Dim::Static(1) : ss[static_cast<size_t>(p - off)];
    const ir::Dim& d = xs[static_cast<size_t>(p)];
    if (!s.is_static() || (p >= axis && !d.is_static())) return "";
    one_row = p < axis ? s.value == 1 : s.value == d.value;
  }
  if (one_row) return "";
  return node.op_type() + ": scale of shape " + DimsToString(ss) + " is not one row of the normalized shape " +
         DimsToString(std::vector<ir::Dim>(xs.begin() + axis, xs.end())) +
         " (broadcast scales are not implemented on cpu)";
}

}  // namespace

void RegisterRmsNormalizationKernels(KernelRegistry& r) {
  const struct {
    const char* impl;
    IsaSet isa;
    RmsNormRowFn row;
  } variants[] = {{"avx512", {Isa::kAvx512f}, &RmsNormRowAvx512},
                  {"avx2", {Isa::kAvx2, Isa::kFma}, &RmsNormRowAvx2},
                  {"scalar", {}, &RmsNormRowScalar}};
  const char* constraints = "stash_type=1 (float) only; scale of the normalized shape (leading 1s allowed)";
  for (const auto& v : variants) {
    const RmsNormRowFn row = v.row;
    const KernelFactory create = [row](const ir::Node& node, const KernelOptions&) {
      return std::make_unique<RmsNormalization>(node, row);
    };
    r.Add({.op = "RMSNormalization",
           .since = 23,
           .types = {{"T", {DataType::kFloat}}, {"V", {DataType::kFloat}}},
           .create = create,
           .predicate = FloatStash,
           .shape_predicate = ScaleIsOneRow,
           .isa = v.isa,
           .name = std::string("cpu.f32_rms_normalization__") + v.impl + ".23",
           .constraints = constraints});
    // ai.ferry::RMSNormalization (fuse_layer_norm's op below opset 23): the same op.
    r.Add({.op = "RMSNormalization",
           .domain = "ai.ferry",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}, {"V", {DataType::kFloat}}},
           .create = create,
           .predicate = FloatStash,
           .shape_predicate = ScaleIsOneRow,
           .isa = v.isa,
           .name = std::string("cpu.f32_ferry_rms_normalization__") + v.impl + ".1",
           .constraints = constraints});
    // ONNX Runtime's SimplifiedLayerNormalization (default domain below any ONNX version, and com.microsoft).
    for (const char* domain : {"", "com.microsoft"}) {
      r.Add({.op = "SimplifiedLayerNormalization",
             .domain = domain,
             .since = 1,
             .types = {{"T", {DataType::kFloat}}, {"U", {DataType::kFloat}}, {"V", {DataType::kFloat}}},
             .create = create,
             .predicate = FloatStash,
             .shape_predicate = ScaleIsOneRow,
             .isa = v.isa,
             .name = std::string("cpu.f32_") + (*domain ? "ms_" : "") + "simplified_layer_normalization__" + v.impl +
                     ".1",
             .constraints = constraints});
    }
  }
}

}  // namespace ferry::cpu
