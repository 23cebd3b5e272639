// GatherElements: out[i] = data[i with coordinate `axis` replaced by indices[i]]; out has the indices' shape. Any
// byte-sized type (moved as storage words by element size), int32 or int64 indices. Negative indices count from the
// end; every index is checked before anything is written, and one outside [-dim, dim) is an InvalidArgumentError
// naming the node (as in ref). The output is walked one row of the indices' last dimension at a time: the row's
// data offset (the other coordinates) is computed once, then each element adds its index times the axis stride
// (a unit-stride gather along the last axis). Rows are split over threads when large. Prepare checks the dtypes
// and shapes and keeps the geometry.
#include <algorithm>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// The geometry of one signature: the axis, data's size and stride along it, data's strides and the indices' shape.
struct GatherElementsPlan {
  int64_t axis = 0, dim = 0, axis_stride = 0;
  int elem = 0;
  std::vector<int64_t> data_strides;
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

class GatherElements : public OpKernel {
 public:
  explicit GatherElements(const ir::Node& node) : axis_(node.GetInt("axis", 0)) {}

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& data = ctx.tensor_input(0);
    const InputSpec& indices = ctx.tensor_input(1);
    if (indices.dtype != DataType::kInt32 && indices.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'indices': expected an int32 or int64 tensor, got " +
                                 ctx.InputString(1));
    }
    const int64_t rank = static_cast<int64_t>(data.shape.size());
    if (rank == 0 || static_cast<int64_t>(indices.shape.size()) != rank) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'indices' " + ctx.InputString(1) +
                                 " must have the rank of input 'data' " + ctx.InputString(0) + " (>= 1)");
    }
    GatherElementsPlan p;
    p.axis = ref::NormalizeAxis(axis_, rank, ctx.Describe());
    for (int64_t d = 0; d < rank; ++d) {
      const auto u = static_cast<size_t>(d);
      if (d != p.axis && indices.shape[u] > data.shape[u]) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'indices' " + ctx.InputString(1) +
                                   " is larger than input 'data' " + ctx.InputString(0) + " in dimension " +
                                   std::to_string(d));
      }
    }
    p.dim = data.shape[static_cast<size_t>(p.axis)];
    p.data_strides = RowMajorStrides(data.shape);
    p.axis_stride = p.data_strides[static_cast<size_t>(p.axis)];
    p.elem = ElementBytes(data.dtype);
    p.ishape = indices.shape;
    ctx.EmplaceState(std::move(p));
    ctx.SetOutput(0, data.dtype, indices.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const GatherElementsPlan& p = ctx.state<GatherElementsPlan>();
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const int64_t n = indices.size();
    auto what = [&] { return ctx.Describe() + ": input 'indices'"; };
    if (indices.dtype() == DataType::kInt64) {
      CheckIndices(indices.data<int64_t>(), n, p.dim, what);
    } else {
      CheckIndices(indices.data<int32_t>(), n, p.dim, what);
    }
    Tensor& y = ctx.OutputUninitialized(0);
    if (n == 0) return;
    DispatchWord(p.elem, [&](auto tag) {
      using W = decltype(tag);
      if (indices.dtype() == DataType::kInt64) {
        Run<W>(p, static_cast<const W*>(data.raw_data()), indices.data<int64_t>(), static_cast<W*>(y.raw_data()),
               ctx.threads());
      } else {
        Run<W>(p, static_cast<const W*>(data.raw_data()), indices.data<int32_t>(), static_cast<W*>(y.raw_data()),
               ctx.threads());
      }
    });
  }

 private:
  int64_t axis_;

  template <typename W, typename I>
  static void Run(const GatherElementsPlan& p, const W* src, const I* ix, W* dst, int threads) {
    const auto rank = static_cast<int64_t>(p.ishape.size());
    const int64_t cols = p.ishape.back();
    const int64_t rows = ShapeElementCount(p.ishape) / cols;
    const int64_t dim = p.dim, as = p.axis_stride;
    const bool last = p.axis == rank - 1;
    const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / static_cast<int64_t>(sizeof(W)) / cols);
    ParallelFor(CopyThreads(threads, rows * cols * static_cast<int64_t>(sizeof(W))), rows, grain,
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    int64_t base = 0;  // data offset of the row, without the axis coordinate
                    for (int64_t d = rank - 2, q = r; d >= 0; --d) {
                      const int64_t c = q % p.ishape[static_cast<size_t>(d)];
                      q /= p.ishape[static_cast<size_t>(d)];
                      if (d != p.axis) base += c * p.data_strides[static_cast<size_t>(d)];
                    }
                    const I* row_ix = ix + r * cols;
                    W* out = dst + r * cols;
                    if (last) {
                      const W* row = src + base;
                      for (int64_t c = 0; c < cols; ++c) {
                        const int64_t j = static_cast<int64_t>(row_ix[c]);
                        out[c] = row[j < 0 ? j + dim : j];
                      }
                    } else {
                      for (int64_t c = 0; c < cols; ++c) {
                        const int64_t j = static_cast<int64_t>(row_ix[c]);
                        out[c] = src[base + c + (j < 0 ? j + dim : j) * as];
                      }
                    }
                  }
                });
  }
};

}  // namespace

void RegisterGatherElementsKernels(KernelRegistry& r) {
  r.Add({.op = "GatherElements",
         .since = 11,
         .types = {{"T", ByteSizedTypes()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<GatherElements>,
         .name = "cpu.any_gather_elements__rows.11"});
}

}  // namespace ferry::cpu
