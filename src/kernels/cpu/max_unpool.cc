// MaxUnpool (opsets 9 and 11, float32) on cpu: Y is zero except at the flat indices I (as MaxPool returns them) of
// the shape MaxUnpool infers, [N, C, (in - 1) * stride + kernel - pad_begin - pad_end, ...]
// (semantics::MaxUnpoolOutputDim), where it takes X. With the output_shape input, that inferred block sits at the
// origin of Y and what lies beyond Y is dropped (ref's, and the ONNX reference's, semantics). ref scatters on one
// thread; here one pass over I checks every index (out of range: InvalidArgumentError naming the node) and whether
// each plane of X only addresses its own plane of the inferred shape, as MaxPool's indices do; then the planes
// scatter in parallel, each in order, so repeated indices keep ref's last write. When some index leaves its plane,
// the scatter runs in order on one thread, as ref's does. Prepare checks the inputs and resolves the inferred
// shape, and Y's when output_shape is absent or constant; otherwise Y is dynamic and Compute reads output_shape.
#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"
#include "semantics/window.h"

namespace ferry::cpu {
namespace {

// The shape the indices address, and Y's when it is known at Prepare.
struct UnpoolState {
  Shape inferred;
  std::optional<Shape> y_shape;
};

// output_shape's values as Y's shape: X's rank, no negative extent; InvalidArgumentError naming `what` otherwise.
Shape OutputShapeOf(const Tensor& t, size_t rank, const std::string& what) {
  const Shape s = ref::ReadInt64s(t, what + " input output_shape");
  const bool negative = std::any_of(s.begin(), s.end(), [](int64_t d) { return d < 0; });
  if (s.size() != rank || negative) {
    throw InvalidArgumentError(what + ": output_shape " + ShapeToString(s) + " must hold " + std::to_string(rank) +
                               " non-negative extents (X's rank)");
  }
  return s;
}

// Where inferred-shape offset `v` lands in Y (shape `y`): v itself when the shapes agree, else the same coordinates
// in Y, or -1 when one of them lies beyond Y's extent.
int64_t TargetOf(int64_t v, const Shape& inferred, const Shape& y) {
  if (inferred == y) return v;
  int64_t target = 0, mul = 1;
  for (size_t d = inferred.size(); d-- > 0;) {
    const int64_t c = v % inferred[d];
    v /= inferred[d];
    if (c >= y[d]) return -1;
    target += c * mul;
    mul *= y[d];
  }
  return target;
}

class MaxUnpool : public OpKernel {
 public:
  explicit MaxUnpool(const ir::Node& node) : attrs_(semantics::WindowAttrs::FromNode(node)) {
    if (attrs_.kernel_shape.empty()) {
      throw InvalidModelError(node.Describe() + ": required attribute kernel_shape is missing");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const std::string what = ctx.Describe();
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& ind = ctx.tensor_input(1);
    if (x.dtype != DataType::kFloat || x.shape.size() < 3) {
      throw InvalidArgumentError(what + ": X must be float32 of rank >= 3 (N, C, spatial...), got " +
                                 ctx.InputString(0));
    }
    if (ind.dtype != DataType::kInt64 || ind.shape != x.shape) {
      throw InvalidArgumentError(what + ": I must be int64 of X's shape " + ShapeToString(x.shape) + ", got " +
                                 ctx.InputString(1));
    }
    const size_t rank = x.shape.size() - 2;
    const std::vector<int64_t> kernel = semantics::SpatialAttr(attrs_.kernel_shape, rank, 1, "kernel_shape", what);
    const std::vector<int64_t> strides = semantics::SpatialAttr(attrs_.strides, rank, 1, "strides", what);
    std::vector<int64_t> pads = attrs_.pads;
    if (pads.empty()) pads.assign(2 * rank, 0);
    if (pads.size() != 2 * rank) {
      throw InvalidArgumentError(what + ": attribute pads has " + std::to_string(pads.size()) + " values, expected " +
                                 std::to_string(2 * rank) + " (begin and end per spatial dim)");
    }
    UnpoolState st;
    st.inferred = {x.shape[0], x.shape[1]};
    for (size_t d = 0; d < rank; ++d) {
      const std::optional<int64_t> e =
          semantics::MaxUnpoolOutputDim(x.shape[d + 2], kernel[d], strides[d], pads[d], pads[d + rank]);
      if (!e || *e < 0) {
        throw InvalidArgumentError(what + ": spatial dim " + std::to_string(d) + " of " + ctx.InputString(0) +
                                   " gives a negative output extent for this kernel, stride and pads");
      }
      st.inferred.push_back(*e);
    }
    if (!ctx.has_input(2)) {
      st.y_shape = st.inferred;
    } else {
      const InputSpec& s = ctx.tensor_input(2);
      if (s.dtype != DataType::kInt64 && s.dtype != DataType::kInt32) {
        throw InvalidArgumentError(what + ": output_shape must be int32 or int64, got " + ctx.InputString(2));
      }
      if (const Tensor* known = ctx.constant(2)) st.y_shape = OutputShapeOf(*known, x.shape.size(), what);
    }
    const UnpoolState& state = ctx.EmplaceState(std::move(st));
    if (state.y_shape) {
      ctx.SetOutput(0, DataType::kFloat, *state.y_shape);
    } else {
      ctx.SetOutputDynamic(0);
    }
  }

  void Compute(KernelContext& ctx) const override {
    const UnpoolState& st = ctx.state<UnpoolState>();
    const Tensor& x = ctx.required_input(0);
    const Tensor& ind = ctx.required_input(1);
    const Shape y_shape = st.y_shape ? *st.y_shape : OutputShapeOf(ctx.required_input(2), x.shape().size(),
                                                                   ctx.Describe());
    Tensor& y = st.y_shape ? ctx.Output(0) : ctx.Output(0, DataType::kFloat, y_shape);
    const int64_t planes = x.dim(0) * x.dim(1);
    if (planes == 0 || x.size() == 0) return;
    const int64_t in_plane = x.size() / planes;
    const int64_t out_plane = ShapeElementCount(st.inferred) / planes;
    const int64_t limit = out_plane * planes;
    const float* xp = x.data<float>();
    const int64_t* ip = ind.data<int64_t>();
    float* yp = y.data<float>();
    const int threads = x.size() < (1 << 15) ? 1 : ctx.threads();
    const int64_t min_planes = std::max<int64_t>(1, 4096 / std::max<int64_t>(in_plane, 1));

    // Check every index; the first plane (in order) with one out of range names it.
    std::atomic<int64_t> bad_plane{planes};
    std::atomic<bool> crosses{false};
    ParallelFor(threads, planes, min_planes, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const int64_t* i = ip + p * in_plane;
        const int64_t lo = p * out_plane, hi = lo + out_plane;
        for (int64_t k = 0; k < in_plane; ++k) {
          if (i[k] < 0 || i[k] >= limit) {
            int64_t cur = bad_plane.load();
            while (p < cur && !bad_plane.compare_exchange_weak(cur, p)) {
            }
            break;
          }
          if (i[k] < lo || i[k] >= hi) crosses.store(true, std::memory_order_relaxed);
        }
      }
    });
    if (bad_plane.load() < planes) {
      const int64_t* i = ip + bad_plane.load() * in_plane;
      const int64_t v = *std::find_if(i, i + in_plane, [&](int64_t e) { return e < 0 || e >= limit; });
      throw InvalidArgumentError(ctx.Describe() + ": index " + std::to_string(v) + " in I is out of range for shape " +
                                 ShapeToString(st.inferred));
    }
    auto scatter = [&](int64_t begin, int64_t end) {
      for (int64_t k = begin * in_plane; k < end * in_plane; ++k) {
        const int64_t t = TargetOf(ip[k], st.inferred, y_shape);
        if (t >= 0) yp[t] = xp[k];
      }
    };
    if (crosses.load()) {
      scatter(0, planes);
    } else {
      ParallelFor(threads, planes, min_planes, scatter);
    }
  }

 private:
  semantics::WindowAttrs attrs_;
};

}  // namespace

void RegisterMaxUnpoolKernels(KernelRegistry& r) {
  r.Add({.op = "MaxUnpool",
         .since = 9,
         .types = {{"T1", {DataType::kFloat}}, {"T2", {DataType::kInt64}}},
         .create = MakeKernel<MaxUnpool>,
         .host_inputs = {2},
         .name = "cpu.f32_maxunpool__scalar.9"});
}

}  // namespace ferry::cpu
