// MaxPool (with the optional Indices output, storage_order 0/1) and AveragePool (float32, 1-3 spatial dims) over
// plain N*C planes on our own loops (pool_plain.cc, PlainPool), with the window geometry (auto_pad, pads, strides,
// dilations, ceil_mode) resolved by the same code as ref (semantics::ResolveWindow). They replace oneDNN's pooling
// primitive here: oneDNN 2.6 runs plain layouts on its scalar simple_nchw implementation (no JIT on AVX2), 4-39x
// ONNX Runtime's node time on the per-op benchmark, and needed corrections afterwards (its max starts from the
// lowest float, its averages divide differently). The loops take ref's taps in ref's order, so every output is
// ref's bit for bit. Two variants: AVX2 (8 outputs of a row per vector) and scalar. The blocked layouts (ai.ferry
// BlockedPool) keep oneDNN's JIT pooling (blocked_pool.cc). Prepare checks X and resolves the window for each input
// shape; Compute only runs the loops.
// GlobalAveragePool and GlobalMaxPool are plain plane reductions (sums in double in ref's order, max propagating
// NaN like ref), vectorised by the compiler over independent lanes.
#include <cmath>
#include <algorithm>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/pool_common.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"
#include "semantics/window.h"

namespace ferry::cpu {
namespace {

constexpr size_t kMaxSpatial = 3;  // the plain loops: 1-D, 2-D and 3-D

// The prepared state of one input shape: the resolved window and the planes (N * C).
struct PoolPlan {
  semantics::WindowGeometry g;
  int64_t planes = 0;
};

class Pool : public OpKernel {
 public:
  Pool(const ir::Node& node, PoolKind kind, PlainPoolIsa isa)
      : kind_(kind),
        isa_(isa),
        attrs_(semantics::WindowAttrs::FromNode(node)),
        ceil_mode_(node.GetInt("ceil_mode", 0) != 0),
        count_include_pad_(node.GetInt("count_include_pad", 0) != 0),
        storage_order_(node.GetInt("storage_order", 0)) {
    if (attrs_.kernel_shape.empty()) {
      throw InvalidModelError(node.Describe() + ": required attribute kernel_shape is missing");
    }
    if (kind == PoolKind::kMax && storage_order_ != 0 && storage_order_ != 1) {
      throw InvalidModelError(node.Describe() + ": storage_order must be 0 or 1, got " +
                              std::to_string(storage_order_));
    }
  }

  // X's checks, the window resolved, Y's shape (and Indices', when requested).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const std::string what = ctx.Describe();
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(what + ": X must be float32, got " + ctx.InputString(0));
    }
    if (x.shape.size() < 3) {
      throw InvalidArgumentError(what + ": X must have rank >= 3 (N, C, spatial...), got " + ctx.InputString(0));
    }
    if (x.shape.size() > kMaxSpatial + 2) {
      throw InvalidArgumentError(what + ": the cpu kernel pools at most 3 spatial dims, got " + ctx.InputString(0));
    }
    PoolPlan plan;
    const std::span<const int64_t> in_spatial(x.shape.data() + 2, x.shape.size() - 2);
    plan.g = semantics::ResolveWindow(attrs_, in_spatial, attrs_.kernel_shape, ceil_mode_,
                                      what + ": " + ctx.InputString(0));
    plan.planes = x.shape[0] * x.shape[1];
    Shape y_shape{x.shape[0], x.shape[1]};
    y_shape.insert(y_shape.end(), plan.g.out.begin(), plan.g.out.end());
    ctx.EmplaceState(std::move(plan));
    ctx.SetOutput(0, DataType::kFloat, y_shape);
    if (kind_ == PoolKind::kMax && ctx.output_requested(1)) ctx.SetOutput(1, DataType::kInt64, y_shape);
  }

  void Compute(KernelContext& ctx) const override {
    const PoolPlan& plan = ctx.state<PoolPlan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    const bool want_indices = kind_ == PoolKind::kMax && ctx.output_requested(1);
    int64_t* indices = want_indices ? ctx.OutputUninitialized(1).data<int64_t>() : nullptr;
    if (y.size() == 0) return;
    const PlainPoolOptions o{.kind = kind_, .count_include_pad = count_include_pad_,
                             .column_major = storage_order_ == 1};
    PlainPool(plan.g, o, isa_, x.data<float>(), plan.planes, y.data<float>(), indices, ctx.threads());
  }

 private:
  PoolKind kind_;
  PlainPoolIsa isa_;
  semantics::WindowAttrs attrs_;
  bool ceil_mode_, count_include_pad_;
  int64_t storage_order_;
};

std::string PoolReason(const ir::Node& node) {
  const std::vector<int64_t> kernel = node.GetInts("kernel_shape");
  if (kernel.size() > kMaxSpatial) {
    return node.op_type() + ": " + std::to_string(kernel.size()) +
           " spatial dims are not implemented on cpu (at most 3)";
  }
  int64_t taps = 1;
  for (int64_t k : kernel) {
    if (k > 0) taps = std::min(taps * std::min(k, kPlainPoolMaxTaps), kPlainPoolMaxTaps);
  }
  if (taps >= kPlainPoolMaxTaps) {
    return node.op_type() + ": windows of 2^30 taps or more are not implemented on cpu";
  }
  return "";
}

// The sum of one plane of `n` floats in ref's order (four partial sums in double), so even sums that cancel
// large terms (±1e30) agree with ref.
double SumPlane(const float* v, int64_t n) {
  double s[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int j = 0; j < 4; ++j) s[j] += static_cast<double>(v[i + j]);
  }
  for (; i < n; ++i) s[0] += static_cast<double>(v[i]);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// NaN-propagating maximum (ref returns the first NaN); -inf for an empty plane.
float MaxPlane(const float* v, int64_t n) {
  constexpr int kLanes = 16;
  float m[kLanes];
  int32_t nan[kLanes];
  for (int j = 0; j < kLanes; ++j) {
    m[j] = -std::numeric_limits<float>::infinity();
    nan[j] = 0;
  }
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const float e = v[i + j];
      m[j] = e > m[j] ? e : m[j];
      nan[j] |= e != e;
    }
  }
  for (; i < n; ++i) {
    m[0] = v[i] > m[0] ? v[i] : m[0];
    nan[0] |= v[i] != v[i];
  }
  float best = m[0];
  int32_t any_nan = nan[0];
  for (int j = 1; j < kLanes; ++j) {
    best = m[j] > best ? m[j] : best;
    any_nan |= nan[j];
  }
  if (any_nan) {
    for (int64_t k = 0; k < n; ++k) {
      if (std::isnan(v[k])) return v[k];
    }
  }
  return best;
}

template <bool kMax>
class GlobalPool : public OpKernel {
 public:
  explicit GlobalPool(const ir::Node&) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": X must be float32, got " + ctx.InputString(0));
    }
    if (x.shape.size() < 2) {
      throw InvalidArgumentError(ctx.Describe() + ": X must have rank >= 2 (N, C, spatial...), got " +
                                 ctx.InputString(0));
    }
    Shape y_shape(x.shape.size(), 1);
    y_shape[0] = x.shape[0];
    y_shape[1] = x.shape[1];
    ctx.SetOutput(0, DataType::kFloat, std::move(y_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    const int64_t planes = y.size();
    if (planes == 0) return;
    const int64_t size = x.size() / planes;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const int64_t min_planes = std::max<int64_t>(1, 16384 / std::max<int64_t>(size, 1));
    ParallelFor(ctx.threads(), planes, min_planes, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        if constexpr (kMax) {
          yp[p] = MaxPlane(xp + p * size, size);
        } else {
          yp[p] = static_cast<float>(SumPlane(xp + p * size, size) / static_cast<double>(size));
        }
      }
    });
  }
};

}  // namespace

void RegisterPoolingKernels(KernelRegistry& r) {
  const std::vector<TypeConstraintDef> f32 = {{"T", {DataType::kFloat}}};
  // Later versions add attributes (storage_order, ceil_mode, dilations, count_include_pad) whose defaults keep
  // the earlier meaning, and types; float32 has one semantics across them.
  // Best first: the AVX2 loops, then the scalar ones (identical results).
  const auto def = [&](const std::string& impl, IsaSet isa, PlainPoolIsa loops) {
    r.Add({.op = "MaxPool",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}, {"I", {DataType::kInt64}}},
           .create = [loops](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<Pool>(node, PoolKind::kMax, loops);
           },
           .predicate = PoolReason,
           .isa = isa,
           .name = "cpu.f32_maxpool__" + impl + ".1",
           .constraints = "1-3 spatial dims",
           .library = "oneDNN"});
    r.Add({.op = "AveragePool",
           .since = 1,
           .types = f32,
           .create = [loops](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<Pool>(node, PoolKind::kAverage, loops);
           },
           .predicate = PoolReason,
           .isa = isa,
           .name = "cpu.f32_averagepool__" + impl + ".1",
           .constraints = "1-3 spatial dims",
           .library = "oneDNN"});
  };
  def("avx2", {Isa::kAvx2, Isa::kFma}, PlainPoolIsa::kAvx2);
  def("scalar", {}, PlainPoolIsa::kScalar);
  r.Add({.op = "GlobalAveragePool",
         .since = 1,
         .types = f32,
         .create = MakeKernel<GlobalPool<false>>,
         .name = "cpu.f32_globalaveragepool__scalar.1"});
  r.Add({.op = "GlobalMaxPool",
         .since = 1,
         .types = f32,
         .create = MakeKernel<GlobalPool<true>>,
         .name = "cpu.f32_globalmaxpool__scalar.1"});
}

}  // namespace ferry::cpu
