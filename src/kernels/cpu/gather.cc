// Gather: out[o, j..., i] = data[o, indices[j...], i] along `axis`; any data type with a byte-sized element,
// int32 or int64 indices. Negative indices count from the end; every index is checked before anything is
// written, and one outside [-dim, dim) is an InvalidArgumentError (as in ref). Each (o, j) copies one row of
// the inner dimensions (memcpy when long); an element-wise gather when the inner size is 1.
#include <algorithm>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

template <typename I>
void NormalizeIndices(const I* in, int64_t n, int64_t dim, int64_t* out, const std::string& what) {
  for (int64_t j = 0; j < n; ++j) {
    const int64_t v = static_cast<int64_t>(in[j]);
    const int64_t i = v < 0 ? v + dim : v;
    if (i < 0 || i >= dim) ref::NormalizeIndex(v, dim, what);  // throws the ref kernel's message
    out[j] = i;
  }
}

class Gather : public OpKernel {
 public:
  explicit Gather(const ir::Node& node) : axis_(node.GetInt("axis", 0)) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.required_input(0);
    const Tensor& indices = ctx.required_input(1);
    const std::string what = ctx.Describe() + ": input 'indices'";
    ref::CheckIndexType(indices, what);
    const int64_t rank = data.rank();
    if (rank == 0) throw InvalidArgumentError(ctx.Describe() + ": input 'data' must have rank >= 1");
    const int64_t axis = ref::NormalizeAxis(axis_, rank, ctx.Describe());
    const int64_t dim = data.dim(axis);
    const int64_t n = indices.size();
    std::vector<int64_t> idx(static_cast<size_t>(n));
    if (indices.dtype() == DataType::kInt64) {
      NormalizeIndices(indices.data<int64_t>(), n, dim, idx.data(), what);
    } else {
      NormalizeIndices(indices.data<int32_t>(), n, dim, idx.data(), what);
    }

    Shape out_shape(data.shape().begin(), data.shape().begin() + axis);
    out_shape.insert(out_shape.end(), indices.shape().begin(), indices.shape().end());
    out_shape.insert(out_shape.end(), data.shape().begin() + axis + 1, data.shape().end());
    Tensor& y = ctx.Output(0, data.dtype(), out_shape);
    if (y.size() == 0) return;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= data.dim(d);
      if (d > axis) inner *= data.dim(d);
    }
    const int elem = ElementBytes(data.dtype());
    const int threads = CopyThreads(ctx.threads(), y.size() * elem);
    const int64_t* ix = idx.data();
    DispatchWord(elem, [&](auto tag) {
      using W = decltype(tag);
      const W* src = static_cast<const W*>(data.raw_data());
      W* dst = static_cast<W*>(y.raw_data());
      const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / static_cast<int64_t>(sizeof(W)) / inner);
      ParallelFor(threads, outer * n, grain, [&](int64_t begin, int64_t end) {
        int64_t o = begin / n, j = begin % n;
        const W* base = src + o * dim * inner;
        for (int64_t k = begin; k < end; ++k) {
          if (inner == 1) {
            dst[k] = base[ix[j]];
          } else {
            CopyRun(dst + k * inner, base + ix[j] * inner, inner);
          }
          if (++j == n) {
            j = 0;
            base += dim * inner;
          }
        }
      });
    });
  }

 private:
  int64_t axis_;
};

}  // namespace

void RegisterGatherKernels(KernelRegistry& r) {
  r.Add({.op = "Gather",
         .since = 1,
         .types = {{"T", ByteSizedTypes()}, {"Tind", {DataType::kInt32, DataType::kInt64}}},
         .create = MakeKernel<Gather>,
         .name = "cpu.any_gather__memcpy.1"});
}

}  // namespace ferry::cpu
