// GatherND (batch_dims): each length-k index tuple in the last dimension of `indices` selects the contiguous slice
// data[batch, tuple] (data.shape[b + k:]), copied to its row of Y (shape indices.shape[:-1] + data.shape[b + k:]).
// Any byte-sized type, moved as storage words by element size; int32 or int64 indices. The tuples are resolved to
// slice offsets first and every index is checked before anything is written: negative ones count from the end, one
// outside [-dim, dim) is an InvalidArgumentError naming the node (as in ref). Rows are then copied (memcpy when
// long, element-wise when slices are single elements), split over threads when large. Prepare checks the shapes
// and keeps the geometry.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/gather_nd.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// ref's geometry (ref/gather_nd.h) and the element size.
struct GatherNDPlan : ref::GatherNDGeometry {
  int elem = 0;
};

// Each row's element offset into data; an index outside [-dim, dim) throws naming `what()`.
template <typename I, typename What>
std::vector<int64_t> RowOffsets(const GatherNDPlan& p, const I* ix, const What& what) {
  std::vector<int64_t> offsets(static_cast<size_t>(p.batches * p.tuples));
  for (int64_t bi = 0; bi < p.batches; ++bi) {
    for (int64_t t = 0; t < p.tuples; ++t) {
      const int64_t row = bi * p.tuples + t;
      int64_t off = bi * p.batch_stride;
      for (int64_t j = 0; j < p.k; ++j) {
        const auto u = static_cast<size_t>(p.b + j);
        const int64_t v = static_cast<int64_t>(ix[row * p.k + j]), dim = p.dims[u];
        int64_t i = v < 0 ? v + dim : v;
        if (i < 0 || i >= dim) i = ref::NormalizeIndex(v, dim, what());  // throws
        off += i * p.strides[u];
      }
      offsets[static_cast<size_t>(row)] = off;
    }
  }
  return offsets;
}

class GatherND : public OpKernel {
 public:
  explicit GatherND(const ir::Node& node) : batch_dims_(node.GetInt("batch_dims", 0)) {
    if (batch_dims_ < 0) throw InvalidModelError(node.Describe() + ": batch_dims must be >= 0");
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& data = ctx.tensor_input(0);
    GatherNDPlan p{ref::ResolveGatherND(ctx, batch_dims_)};
    p.elem = ElementBytes(data.dtype);
    Shape out_shape = p.out_shape;
    ctx.EmplaceState(std::move(p));
    ctx.SetOutput(0, data.dtype, std::move(out_shape));
  }

  void Compute(KernelContext& ctx) const override {
    const GatherNDPlan& p = ctx.state<GatherNDPlan>();
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    auto what = [&] { return ctx.Describe() + ": input 'indices'"; };
    const std::vector<int64_t> offsets = indices.dtype() == DataType::kInt64
                                             ? RowOffsets(p, indices.data<int64_t>(), what)
                                             : RowOffsets(p, indices.data<int32_t>(), what);
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const auto rows = static_cast<int64_t>(offsets.size());
    const int64_t slice = p.slice;
    DispatchWord(p.elem, [&](auto tag) {
      using W = decltype(tag);
      const W* src = static_cast<const W*>(data.raw_data());
      W* dst = static_cast<W*>(y.raw_data());
      const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / static_cast<int64_t>(sizeof(W)) / slice);
      const int threads = CopyThreads(ctx.threads(), y.size() * static_cast<int64_t>(sizeof(W)));
      ParallelFor(threads, rows, grain, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          if (slice == 1) {
            dst[row] = src[offsets[static_cast<size_t>(row)]];
          } else {
            CopyRun(dst + row * slice, src + offsets[static_cast<size_t>(row)], slice);
          }
        }
      });
    });
  }

 private:
  int64_t batch_dims_;
};

}  // namespace

void RegisterGatherNDKernels(KernelRegistry& r) {
  r.Add({.op = "GatherND",
         .since = 11,
         .types = {{"T", ByteSizedTypes()}},
         .create = MakeKernel<GatherND>,
         .name = "cpu.any_gather_nd__memcpy.11"});
}

}  // namespace ferry::cpu
