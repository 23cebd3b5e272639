// Compress: keeps the slices along `axis` (of the flattened input when axis is absent) whose `condition` entry
// is true (compress.h: the checks and the kept indices, shared with the cpu kernel).
#include <string>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/compress.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Compress : public OpKernel {
 public:
  explicit Compress(const ir::Node& node) : has_axis_(node.has_attr("axis")), axis_(node.GetInt("axis", 0)) {}

  void Prepare(PrepareContext& ctx) const override { ctx.EmplaceState(PrepareCompress(ctx, has_axis_, axis_)); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const CompressPlan& p = ctx.state<CompressPlan>();
    const int64_t dim = p.dim, outer = p.outer, inner = p.inner;
    Shape shape;
    const std::vector<int64_t> keep = CompressKept(ctx, p, shape);
    Tensor& y = ctx.Output(0, x.dtype(), shape);
    const int64_t k = static_cast<int64_t>(keep.size());
    DispatchElements(x.dtype(), "Compress", [&](auto acc) {  // checked by Prepare
      using A = decltype(acc);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < k; ++j) {
          A::Copy(y.raw_data(), (o * k + j) * inner, x.raw_data(), (o * dim + keep[static_cast<size_t>(j)]) * inner,
                  inner);
        }
      }
    });
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

}  // namespace

void RegisterCompressKernels(KernelRegistry& r) {
  r.Add({.op = "Compress", .since = 9, .types = {{"T", dtypes::All()}, {"T1", {DataType::kBool}}},
         .create = MakeKernel<Compress>});
}

}  // namespace ferry::ref
