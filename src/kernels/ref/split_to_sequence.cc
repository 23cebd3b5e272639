// SplitToSequence: splits `input` along `axis` into a sequence. `split` may be omitted (chunks of 1; the axis is
// dropped when keepdims=0), a scalar (equal chunks of that size, the last one smaller) or a 1-D list of sizes
// summing to the axis length.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/control_flow_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class SplitToSequence : public OpKernel {
 public:
  explicit SplitToSequence(const ir::Node& node)
      : axis_(node.GetInt("axis", 0)), keepdims_(node.GetInt("keepdims", 1) != 0) {}

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    if (x.rank() < 1) throw InvalidArgumentError(ctx.Describe() + ": input must have rank >= 1, got a scalar");
    const int64_t axis = NormalizeAxis(axis_, x.rank(), ctx.Describe());
    const int64_t dim = x.dim(axis);

    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (const Tensor* split = ctx.input(1)) {
      const std::vector<int64_t> v = ReadInt64s(*split, ctx.Describe() + ": input 'split'");
      if (split->rank() == 0) {
        const int64_t chunk = v[0];
        if (chunk <= 0) {
          throw InvalidArgumentError(ctx.Describe() + ": scalar 'split' must be positive, got " +
                                     std::to_string(chunk));
        }
        for (int64_t start = 0; start < dim; start += chunk) sizes.push_back(std::min(chunk, dim - start));
      } else if (split->rank() == 1) {
        int64_t total = 0;
        for (int64_t s : v) {
          if (s < 0)
            throw InvalidArgumentError(ctx.Describe() + ": 'split' values must be >= 0, got " + std::to_string(s));
          total += s;
        }
        if (total != dim) {
          throw InvalidArgumentError(ctx.Describe() + ": 'split' values sum to " + std::to_string(total) +
                                     ", the input has " + std::to_string(dim) + " along axis " + std::to_string(axis));
        }
        sizes = v;
      } else {
        throw InvalidArgumentError(ctx.Describe() + ": 'split' must be a scalar or 1-D, got shape " +
                                   ShapeToString(split->shape()));
      }
    } else {
      sizes.assign(static_cast<size_t>(dim), 1);
      squeeze = !keepdims_;
    }

    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= x.dim(i);
    for (int64_t i = axis + 1; i < x.rank(); ++i) inner *= x.dim(i);
    TensorSequence out;
    out.elem_type = x.dtype();
    out.tensors.reserve(sizes.size());
    int64_t start = 0;
    for (int64_t len : sizes) {
      Shape shape = x.shape();
      shape[static_cast<size_t>(axis)] = len;
      Tensor part(x.dtype(), shape);
      for (int64_t o = 0; o < outer; ++o)
        CopyElements(x, (o * dim + start) * inner, part, o * len * inner, len * inner);
      if (squeeze) {
        shape.erase(shape.begin() + axis);
        part = part.Reshaped(shape);
      }
      out.tensors.push_back(std::move(part));
      start += len;
    }
    ctx.SetOutput(0, Value(std::move(out)));
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

}  // namespace

void RegisterSplitToSequenceKernels(KernelRegistry& r) {
  r.Add({.op = "SplitToSequence",
         .since = 11,
         .types = {{"T", dtypes::All()}, {"I", {DataType::kInt32, DataType::kInt64}}, {"S", dtypes::All()}},
         .create = MakeKernel<SplitToSequence>});
}

}  // namespace ferry::ref
