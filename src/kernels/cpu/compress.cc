// Compress on the cpu backend: ref's checks and kept indices (ref/compress.h), the copy threaded over the kept
// (outer, index) slices when large (strided_copy.h's CopyThreads) and done by storage word (CopyRun: memcpy for
// long slices, a word loop for short ones). The copy kernels' types (ByteSizedTypes); strings and sub-byte packed
// types run on ref.
#include <algorithm>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/compress.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class Compress : public OpKernel {
 public:
  explicit Compress(const ir::Node& node) : has_axis_(node.has_attr("axis")), axis_(node.GetInt("axis", 0)) {}

  void Prepare(PrepareContext& ctx) const override {
    ctx.EmplaceState(ref::PrepareCompress(ctx, has_axis_, axis_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const ref::CompressPlan& p = ctx.state<ref::CompressPlan>();
    Shape shape;
    const std::vector<int64_t> keep = ref::CompressKept(ctx, p, shape);
    Tensor& y = ctx.OutputUninitialized(0, x.dtype(), shape);
    const int64_t k = static_cast<int64_t>(keep.size()), dim = p.dim, inner = p.inner;
    if (k == 0 || inner == 0 || p.outer == 0) return;
    const int64_t* kept = keep.data();
    const int bytes = ElementBytes(x.dtype());
    const int threads = CopyThreads(ctx.threads(), p.outer * k * inner * bytes);
    DispatchWord(bytes, [&](auto word) {
      using W = decltype(word);
      const W* src = static_cast<const W*>(x.raw_data());
      W* dst = static_cast<W*>(y.raw_data());
      const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / (inner * bytes));
      ParallelFor(threads, p.outer * k, grain, [&](int64_t b, int64_t e) {
        for (int64_t it = b; it < e; ++it) {
          CopyRun(dst + it * inner, src + ((it / k) * dim + kept[it % k]) * inner, inner);
        }
      });
    });
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

}  // namespace

void RegisterCompressKernels(KernelRegistry& r) {
  r.Add({.op = "Compress", .since = 9, .types = {{"T", ByteSizedTypes()}, {"T1", {DataType::kBool}}},
         .create = MakeKernel<Compress>});
}

}  // namespace ferry::cpu
