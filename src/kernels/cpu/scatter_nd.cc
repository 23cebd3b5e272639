// ScatterND: a copy of `data` where each length-k index tuple in the last dimension of `indices` selects a slice
// data[tuple] (data.shape[k:], contiguous) that is overwritten, or combined per `reduction` (opset 16: add, mul;
// 18: max, min), with the matching slice of `updates`. Y takes over data's buffer when the executor allows it (else
// one parallel memcpy); the tuples are resolved to slice offsets and every index is checked before anything is
// written (one outside [-dim, dim) is an InvalidArgumentError naming the node, as in ref). Without a reduction each
// slice is one contiguous copy of storage words by element size (any byte-sized type); the reductions combine
// element by element through ref's update rule (scatter_reduction.h), so they equal ref exactly. Tuples apply in
// order (a repeated tuple: the last write wins, reductions accumulate), so they are not split over threads.
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

// The index tuples' length k, how many there are, the elements each selects, data's dims and strides.
struct ScatterNDPlan {
  int64_t k = 0, tuples = 1, slice = 1;
  int elem = 0;
  std::vector<int64_t> dims, strides;
};

// Each tuple's element offset into data; an index outside [-dim, dim) throws naming `what()`.
template <typename I, typename What>
std::vector<int64_t> TupleOffsets(const ScatterNDPlan& p, const I* ix, const What& what) {
  std::vector<int64_t> offsets(static_cast<size_t>(p.tuples), 0);
  for (int64_t t = 0; t < p.tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < p.k; ++j) {
      const int64_t v = static_cast<int64_t>(ix[t * p.k + j]), dim = p.dims[static_cast<size_t>(j)];
      int64_t i = v < 0 ? v + dim : v;
      if (i < 0 || i >= dim) i = ref::NormalizeIndex(v, dim, what());  // throws
      off += i * p.strides[static_cast<size_t>(j)];
    }
    offsets[static_cast<size_t>(t)] = off;
  }
  return offsets;
}

class ScatterND : public OpKernel {
 public:
  explicit ScatterND(const ir::Node& node) : reduction_(ref::ParseScatterReduction(node)) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& data = ctx.tensor_input(0);
    const InputSpec& indices = ctx.tensor_input(1);
    const InputSpec& updates = ctx.tensor_input(2);
    if (indices.dtype != DataType::kInt32 && indices.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'indices': expected an int32 or int64 tensor, got " +
                                 ctx.InputString(1));
    }
    const auto r = static_cast<int64_t>(data.shape.size()), q = static_cast<int64_t>(indices.shape.size());
    if (r < 1 || q < 1 || indices.shape[static_cast<size_t>(q - 1)] > r) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'indices' " + ctx.InputString(1) + " does not index data " +
                                 ctx.InputString(0));
    }
    ScatterNDPlan p;
    p.k = indices.shape[static_cast<size_t>(q - 1)];
    Shape want(indices.shape.begin(), indices.shape.end() - 1);
    want.insert(want.end(), data.shape.begin() + p.k, data.shape.end());
    if (updates.shape != want || updates.dtype != data.dtype) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'updates' " + ctx.InputString(2) + " must be " +
                                 std::string(DataTypeName(data.dtype)) + ShapeToString(want));
    }
    // The dtype suits the reduction (ref's rule and message).
    ref::DispatchScatterUpdate(data.dtype, reduction_, ctx.Describe(), [](auto) {});
    for (int64_t d = 0; d < q - 1; ++d) p.tuples *= indices.shape[static_cast<size_t>(d)];
    for (int64_t d = p.k; d < r; ++d) p.slice *= data.shape[static_cast<size_t>(d)];
    p.elem = ElementBytes(data.dtype);
    p.dims = data.shape;
    p.strides = RowMajorStrides(data.shape);
    ctx.EmplaceState(std::move(p));
    ctx.SetOutput(0, data.dtype, data.shape);
    ctx.output(0).in_place_of = 0;  // Y may take over data's buffer (Compute's ReuseInput)
  }

  void Compute(KernelContext& ctx) const override {
    const ScatterNDPlan& p = ctx.state<ScatterNDPlan>();
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const Tensor& updates = ctx.required_input(2);
    auto what = [&] { return ctx.Describe() + ": input 'indices'"; };
    const std::vector<int64_t> offsets = indices.dtype() == DataType::kInt64
                                             ? TupleOffsets(p, indices.data<int64_t>(), what)
                                             : TupleOffsets(p, indices.data<int32_t>(), what);
    Tensor* reused = ctx.ReuseInput(0, 0, data.dtype(), data.shape());
    Tensor& y = reused ? *reused : ctx.OutputUninitialized(0);
    if (!reused && y.size() > 0) {
      ParallelMemcpy(y.raw_data(), data.raw_data(), static_cast<int64_t>(data.nbytes()), ctx.threads());
    }
    if (p.tuples == 0 || p.slice == 0) return;
    if (reduction_ == ref::ScatterReduction::kNone) {
      DispatchWord(p.elem, [&](auto tag) {
        using W = decltype(tag);
        W* dst = static_cast<W*>(y.raw_data());
        const W* src = static_cast<const W*>(updates.raw_data());
        const int threads = CopyThreads(ctx.threads(), p.slice * static_cast<int64_t>(sizeof(W)));
        for (int64_t t = 0; t < p.tuples; ++t) {
          W* to = dst + offsets[static_cast<size_t>(t)];
          const W* from = src + t * p.slice;
          if (threads > 1) {
            ParallelMemcpy(to, from, p.slice * static_cast<int64_t>(sizeof(W)), threads);
          } else {
            CopyRun(to, from, p.slice);
          }
        }
      });
      return;
    }
    // Prepare checked that the dtype suits the reduction: the description is never used.
    ref::DispatchScatterUpdate(data.dtype(), reduction_, std::string(), [&](auto update) {
      void* out = y.raw_data();
      const void* upd = updates.raw_data();
      for (int64_t t = 0; t < p.tuples; ++t) {
        const int64_t off = offsets[static_cast<size_t>(t)];
        for (int64_t e = 0; e < p.slice; ++e) update(out, off + e, upd, t * p.slice + e);
      }
    });
  }

 private:
  ref::ScatterReduction reduction_;
};

}  // namespace

void RegisterScatterNDKernels(KernelRegistry& r) {
  r.Add({.op = "ScatterND",
         .since = 11,
         .types = {{"T", ByteSizedTypes()}},
         .create = MakeKernel<ScatterND>,
         .name = "cpu.any_scatter_nd__memcpy.11"});
}

}  // namespace ferry::cpu
