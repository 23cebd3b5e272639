// ScatterElements (Scatter's successor; opset 16: reduction add/mul, 18: max/min): a copy of `data` where each
// element of `updates` lands at its own position with coordinate `axis` replaced by the matching element of
// `indices` (overwritten, or combined per `reduction`). Y takes over data's buffer when the executor allows it
// (else one parallel memcpy); every index is checked before anything is written: negative ones count from the
// end, one outside [-dim, dim) is an InvalidArgumentError naming the node (as in ref). Updates are walked one row
// of the indices' last dimension at a time, the row's offset computed once; without a reduction elements move as
// storage words by element size (any byte-sized type), the reductions use ref's update rule (scatter_reduction.h),
// so results equal ref exactly. Updates apply in order (a repeated position: the last wins, reductions
// accumulate), so they are not split over threads.
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/scatter_reduction.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// The resolved axis, data's size and stride along it, data's strides, the indices' shape and the element size.
struct ScatterElementsPlan {
  int64_t axis = 0, dim = 0, axis_stride = 0;
  int elem = 0;
  std::vector<int64_t> strides;
  Shape ishape;
};

// Checks every index against [-dim, dim); the first bad one is an InvalidArgumentError naming `what()`.
template <typename I, typename What>
void CheckIndices(const I* ix, int64_t n, int64_t dim, const What& what) {
  bool bad = false;
  for (int64_t p = 0; p < n; ++p) bad |= (ix[p] < -dim) | (ix[p] >= dim);
  if (!bad) return;
  for (int64_t p = 0; p < n; ++p) ref::NormalizeIndex(static_cast<int64_t>(ix[p]), dim, what());  // throws
}

// Calls update(output offset, update index) for every element of the (checked) indices, in row-major order.
template <typename I, typename Fn>
void ForEachTarget(const ScatterElementsPlan& p, const I* ix, Fn&& update) {
  const auto rank = static_cast<int64_t>(p.ishape.size());
  const int64_t cols = p.ishape.back();
  const int64_t rows = ShapeElementCount(p.ishape) / cols;
  const int64_t dim = p.dim, as = p.axis_stride;
  const bool last = p.axis == rank - 1;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = 0;  // output offset of the row, without the axis coordinate
    for (int64_t d = rank - 2, q = r; d >= 0; --d) {
      const int64_t c = q % p.ishape[static_cast<size_t>(d)];
      q /= p.ishape[static_cast<size_t>(d)];
      if (d != p.axis) base += c * p.strides[static_cast<size_t>(d)];
    }
    const I* row_ix = ix + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t v = static_cast<int64_t>(row_ix[c]);
      const int64_t j = v < 0 ? v + dim : v;
      update(last ? base + j : base + c + j * as, r * cols + c);
    }
  }
}

class ScatterElements : public OpKernel {
 public:
  explicit ScatterElements(const ir::Node& node)
      : axis_(node.GetInt("axis", 0)), reduction_(ref::ParseScatterReduction(node)) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& data = ctx.tensor_input(0);
    const InputSpec& indices = ctx.tensor_input(1);
    const InputSpec& updates = ctx.tensor_input(2);
    const std::string what = ctx.Describe() + ": input 'indices'";
    auto str = [](const InputSpec& t) { return std::string(DataTypeName(t.dtype)) + ShapeToString(t.shape); };
    if (indices.dtype != DataType::kInt32 && indices.dtype != DataType::kInt64) {
      throw InvalidArgumentError(what + ": expected an int32 or int64 tensor, got " + str(indices));
    }
    const int64_t rank = static_cast<int64_t>(data.shape.size());
    if (rank == 0 || static_cast<int64_t>(indices.shape.size()) != rank || indices.shape != updates.shape ||
        updates.dtype != data.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": indices " + str(indices) + " and updates " + str(updates) +
                                 " must have one shape, of the rank of data " + str(data) + " (>= 1)");
    }
    ScatterElementsPlan p;
    p.axis = ref::NormalizeAxis(axis_, rank, ctx.Describe());
    for (int64_t d = 0; d < rank; ++d) {
      const auto u = static_cast<size_t>(d);
      if (d != p.axis && indices.shape[u] > data.shape[u]) {
        throw InvalidArgumentError(what + " " + str(indices) + " is larger than input 'data' " + str(data) +
                                   " in dimension " + std::to_string(d));
      }
    }
    if (ShapeElementCount(indices.shape) > 0) {  // the update's dtype rule (ref's)
      ref::DispatchScatterUpdate(data.dtype, reduction_, ctx.Describe(), [](auto) {});
    }
    p.dim = data.shape[static_cast<size_t>(p.axis)];
    p.strides = RowMajorStrides(data.shape);
    p.axis_stride = p.strides[static_cast<size_t>(p.axis)];
    p.elem = ElementBytes(data.dtype);
    p.ishape = indices.shape;
    ctx.EmplaceState(std::move(p));
    ctx.SetOutput(0, data.dtype, data.shape);
    ctx.output(0).in_place_of = 0;  // Y may take over data's buffer (Compute's ReuseInput)
  }

  void Compute(KernelContext& ctx) const override {
    const ScatterElementsPlan& p = ctx.state<ScatterElementsPlan>();
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const Tensor& updates = ctx.required_input(2);
    const int64_t n = indices.size();
    const bool i64 = indices.dtype() == DataType::kInt64;
    auto what = [&] { return ctx.Describe() + ": input 'indices'"; };
    if (i64) {
      CheckIndices(indices.data<int64_t>(), n, p.dim, what);
    } else {
      CheckIndices(indices.data<int32_t>(), n, p.dim, what);
    }
    Tensor* reused = ctx.ReuseInput(0, 0, data.dtype(), data.shape());
    Tensor& y = reused ? *reused : ctx.OutputUninitialized(0);
    if (!reused && y.size() > 0) {
      ParallelMemcpy(y.raw_data(), data.raw_data(), static_cast<int64_t>(data.nbytes()), ctx.threads());
    }
    if (n == 0) return;
    auto run = [&](auto&& update) {
      if (i64) {
        ForEachTarget(p, indices.data<int64_t>(), update);
      } else {
        ForEachTarget(p, indices.data<int32_t>(), update);
      }
    };
    if (reduction_ == ref::ScatterReduction::kNone) {
      DispatchWord(p.elem, [&](auto tag) {
        using W = decltype(tag);
        W* dst = static_cast<W*>(y.raw_data());
        const W* src = static_cast<const W*>(updates.raw_data());
        run([&](int64_t oi, int64_t ui) { dst[oi] = src[ui]; });
      });
      return;
    }
    // Prepare checked that the dtype suits the reduction: the description is never used.
    ref::DispatchScatterUpdate(data.dtype(), reduction_, std::string(), [&](auto update) {
      void* out = y.raw_data();
      const void* upd = updates.raw_data();
      run([&](int64_t oi, int64_t ui) { update(out, oi, upd, ui); });
    });
  }

 private:
  int64_t axis_;
  ref::ScatterReduction reduction_;
};

}  // namespace

void RegisterScatterElementsKernels(KernelRegistry& r) {
  r.Add({.op = "Scatter",
         .since = 9,
         .types = {{"T", ByteSizedTypes()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<ScatterElements>,
         .name = "cpu.any_scatter__rows.9"});
  r.Add({.op = "ScatterElements",
         .since = 11,
         .types = {{"T", ByteSizedTypes()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<ScatterElements>,
         .name = "cpu.any_scatter_elements__rows.11"});
}

}  // namespace ferry::cpu
