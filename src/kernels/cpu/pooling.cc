// MaxPool and AveragePool (float32, 1-3 spatial dims) on oneDNN's pooling primitive (pool_common.h, shared with
// ai.ferry BlockedPool), with the window geometry (auto_pad, pads, strides, dilations, ceil_mode) resolved by the
// same code as ref (semantics::ResolveWindow): oneDNN gets the output extent from it and as much end padding as that
// needs. oneDNN differs from ONNX in a few places, each corrected after the primitive runs:
// - max pooling starts from the lowest float, ONNX from -inf: an output equal to the lowest float (a window of
//   only -inf, NaN or padding, or one whose maximum really is the lowest float) is recomputed exactly, skipping
//   NaN like ref;
// - its include-padding average divides by the kernel size, ONNX (count_include_pad=1) by the taps inside the
//   padded input: they differ where ceil_mode lets the last window overhang the end padding;
// - its exclude-padding average refuses pads as long as the window (and dilations beyond the input), which
//   ONNX allows: then the include-padding average runs and divides by the kernel size;
// so average outputs whose divisor differs from ref's are rescaled, and a window with no tap inside the input
// is NaN without count_include_pad (ref's 0 / 0). Prepare checks X, resolves the window and builds the primitive for
// each input shape (its scratchpad goes to the workspace); Compute only runs it.
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
#include "kernels/cpu/dnnl_scratchpad.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/pool_common.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"
#include "semantics/window.h"

namespace ferry::cpu {
namespace {

constexpr size_t kMaxSpatial = 3;  // oneDNN pooling: 1-D, 2-D and 3-D

// The prepared state of one input shape: the primitive, Y's shape and the node, for oneDNN's errors.
struct PoolPlan {
  PoolPrimitive p;
  Shape y_shape;
  std::string what;
};

class Pool : public OpKernel {
 public:
  Pool(const ir::Node& node, PoolKind kind)
      : kind_(kind),
        attrs_(semantics::WindowAttrs::FromNode(node)),
        ceil_mode_(node.GetInt("ceil_mode", 0) != 0),
        count_include_pad_(node.GetInt("count_include_pad", 0) != 0) {
    if (attrs_.kernel_shape.empty()) {
      throw InvalidModelError(node.Describe() + ": required attribute kernel_shape is missing");
    }
  }

  // X's checks, the window resolved and the primitive built (under the thread count it will run with), Y's shape,
  // and the primitive's scratchpad in the workspace.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const std::string what = ctx.Describe();
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(what + ": X must be float32, got " + ctx.InputString(0));
    }
    if (x.shape.size() < 3) {
      throw InvalidArgumentError(what + ": X must have rank >= 3 (N, C, spatial...), got " + ctx.InputString(0));
    }
    PoolPlan& plan = ctx.EmplaceState(Build(x.shape, ctx.threads(), what + ": " + ctx.InputString(0)));
    plan.what = what;
    ctx.SetOutput(0, DataType::kFloat, plan.y_shape);
    if (plan.p.has_prim) NeedScratchpad(plan.p.scratch, ctx.workspace());
  }

  void Compute(KernelContext& ctx) const override {
    const PoolPlan& plan = ctx.state<PoolPlan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    RunPoolPrimitive(plan.p, kind_, count_include_pad_, x.data<float>(), y.data<float>(), x.dim(0) * x.dim(1), 1,
                     ctx.threads(), plan.what);
  }

 private:
  // The plan for X of shape `xs`, its primitive built for `threads` (the split it will run with). Throws
  // InvalidArgumentError naming `what` for a window that does not fit X.
  PoolPlan Build(const Shape& xs, int threads, const std::string& what) const {
    const ScopedOmpThreads scope(threads);
    PoolPlan e;
    const std::span<const int64_t> in_spatial(xs.data() + 2, xs.size() - 2);
    e.p.g = semantics::ResolveWindow(attrs_, in_spatial, attrs_.kernel_shape, ceil_mode_, what);
    e.y_shape = {xs[0], xs[1]};
    e.y_shape.insert(e.y_shape.end(), e.p.g.out.begin(), e.p.g.out.end());
    e.p.x_md = PlainDesc(xs, DataType::kFloat);
    e.p.y_md = PlainDesc(e.y_shape, DataType::kFloat);
    const bool empty = ShapeElementCount(e.y_shape) == 0 || ShapeElementCount(xs) == 0;
    BuildPoolPrimitive(kind_, count_include_pad_, empty, &e.p, what);
    return e;
  }

  PoolKind kind_;
  semantics::WindowAttrs attrs_;
  bool ceil_mode_, count_include_pad_;
};

std::string SpatialRankReason(const ir::Node& node) {
  const size_t rank = node.GetInts("kernel_shape").size();
  if (rank > kMaxSpatial) {
    return node.op_type() + ": " + std::to_string(rank) + " spatial dims are not implemented on cpu (at most 3)";
  }
  return "";
}

std::string MaxPoolReason(const ir::Node& node) {
  if (node.num_outputs() > 1 && node.output(1) != nullptr) {
    return "MaxPool: the Indices output is not implemented on cpu";
  }
  return SpatialRankReason(node);
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

std::unique_ptr<OpKernel> MakeMaxPool(const ir::Node& node, const KernelOptions&) {
  return std::make_unique<Pool>(node, PoolKind::kMax);
}
std::unique_ptr<OpKernel> MakeAveragePool(const ir::Node& node, const KernelOptions&) {
  return std::make_unique<Pool>(node, PoolKind::kAverage);
}

}  // namespace

void RegisterPoolingKernels(KernelRegistry& r) {
  const std::vector<TypeConstraintDef> f32 = {{"T", {DataType::kFloat}}};
  // Later versions add attributes (storage_order, ceil_mode, dilations, count_include_pad) whose defaults keep
  // the earlier meaning, and types; float32 has one semantics across them.
  r.Add({.op = "MaxPool",
         .since = 1,
         .types = f32,
         .create = MakeMaxPool,
         .predicate = MaxPoolReason,
         .name = "cpu.f32_maxpool__onednn.1",
         .constraints = "no Indices output; 1-3 spatial dims"});
  r.Add({.op = "AveragePool",
         .since = 1,
         .types = f32,
         .create = MakeAveragePool,
         .predicate = SpatialRankReason,
         .name = "cpu.f32_averagepool__onednn.1",
         .constraints = "1-3 spatial dims"});
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
