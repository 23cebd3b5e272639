// Split: cuts the input along `axis` into one piece per output. Piece sizes come from the `split` input
// (opset 1 and 13+) or attribute (opsets 1-12); otherwise equal parts, or from opset 18 `num_outputs` pieces of
// ceil(dim / n) with a smaller last piece.
#include <algorithm>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Split : public OpKernel {
 public:
  explicit Split(const ir::Node& node)
      : axis_(node.GetInt("axis", 0)), opset_(node.opset()), num_outputs_(node.GetInt("num_outputs", 0)) {
    if (opset_ < 13 && node.has_attr("split")) {
      split_attr_ = node.GetInts("split");
      has_split_attr_ = true;
    }
    if (node.has_attr("num_outputs") && num_outputs_ < 1) {
      throw InvalidModelError(node.Describe() + ": attribute 'num_outputs' must be positive");
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const int64_t rank = x.rank();
    if (rank == 0) throw InvalidArgumentError(ctx.Describe() + ": cannot split a scalar");
    const int64_t axis = NormalizeAxis(axis_, rank, ctx.Describe());
    const int64_t dim = x.dim(axis);
    const int64_t n = ctx.output_count();
    std::vector<int64_t> sizes;
    const Tensor* split_in = (opset_ == 1 || opset_ >= 13) ? ctx.input(1) : nullptr;
    if (split_in) {
      sizes = ReadIntegers(*split_in, ctx.Describe() + ": input 'split'");
    } else if (has_split_attr_) {
      sizes = split_attr_;
    }
    if (!sizes.empty()) {  // an empty split input or attribute counts as absent
      int64_t sum = 0;
      for (int64_t s : sizes) {
        if (s < 0) throw InvalidArgumentError(ctx.Describe() + ": split " + ShapeToString(sizes) + " is negative");
        sum += s;
      }
      if (static_cast<int64_t>(sizes.size()) != n || sum != dim) {
        throw InvalidArgumentError(ctx.Describe() + ": split " + ShapeToString(sizes) + " does not cut dimension " +
                                   std::to_string(dim) + " of " + DescribeTensor(x) + " into " + std::to_string(n) +
                                   " outputs");
      }
    } else {
      if (n < 1) throw InvalidArgumentError(ctx.Describe() + ": has no outputs");
      if (num_outputs_ > 0 && num_outputs_ != n) {
        throw InvalidArgumentError(ctx.Describe() + ": num_outputs=" + std::to_string(num_outputs_) + " but the node has " +
                                   std::to_string(n) + " outputs");
      }
      if (opset_ < 18 && dim % n != 0) {
        throw InvalidArgumentError(ctx.Describe() + ": dimension " + std::to_string(dim) + " of " + DescribeTensor(x) +
                                   " cannot be split into " + std::to_string(n) + " equal parts");
      }
      const int64_t chunk = (dim + n - 1) / n;
      int64_t left = dim;
      for (int64_t k = 0; k < n; ++k) {
        sizes.push_back(std::min(chunk, left));
        left -= sizes.back();
      }
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= x.dim(d);
      if (d > axis) inner *= x.dim(d);
    }
    int64_t offset = 0;
    for (int64_t k = 0; k < n; ++k) {
      Shape shape = x.shape();
      shape[static_cast<size_t>(axis)] = sizes[static_cast<size_t>(k)];
      Tensor& y = ctx.Output(static_cast<int>(k), x.dtype(), shape);
      const int64_t block = sizes[static_cast<size_t>(k)] * inner;
      const int64_t box[2] = {outer, block};
      const int64_t ds[2] = {block, 1};
      const int64_t ss[2] = {dim * inner, 1};
      CopyStrided(x.dtype(), y.raw_data(), 0, ds, x.raw_data(), offset * inner, ss, box, ctx.threads());
      offset += sizes[static_cast<size_t>(k)];
    }
  }

 private:
  int64_t axis_;
  int64_t opset_;
  int64_t num_outputs_;
  std::vector<int64_t> split_attr_;
  bool has_split_attr_ = false;
};

}  // namespace

void RegisterSplitKernels(KernelRegistry& r) {
  r.Add({.op = "Split",
         .since = 1,
         .until = 1,
         .types = {{"T", dtypes::All()}},
         .create = MakeKernel<Split>,
         .host_inputs = {1}});
  r.Add({.op = "Split", .since = 2, .until = 12, .types = {{"T", dtypes::All()}}, .create = MakeKernel<Split>});
  r.Add({.op = "Split",
         .since = 13,
         .types = {{"T", dtypes::All()}},
         .create = MakeKernel<Split>,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
