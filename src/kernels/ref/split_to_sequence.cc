// SplitToSequence: splits `input` along `axis` into a sequence. `split` may be omitted (chunks of 1; the axis is
// dropped when keepdims=0), a scalar (equal chunks of that size, the last one smaller) or a 1-D list of sizes
// summing to the axis length. Prepare checks X and split's dtype and rank; split's values are checked by Compute.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/control_flow_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// X as [outer, dim, inner] around the split axis.
struct Plan {
  int64_t axis = 0, dim = 0, outer = 1, inner = 1;
};

class SplitToSequence : public OpKernel {
 public:
  explicit SplitToSequence(const ir::Node& node)
      : axis_(node.GetInt("axis", 0)), keepdims_(node.GetInt("keepdims", 1) != 0) {}

  // X's rank, the axis, and split's dtype and rank; the output is a sequence (dynamic), cut by split's values.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const auto rank = static_cast<int64_t>(x.shape.size());
    if (rank < 1) throw InvalidArgumentError(ctx.Describe() + ": input must have rank >= 1, got a scalar");
    Plan p;
    p.axis = NormalizeAxis(axis_, rank, ctx.Describe());
    p.dim = x.shape[static_cast<size_t>(p.axis)];
    for (int64_t i = 0; i < p.axis; ++i) p.outer *= x.shape[static_cast<size_t>(i)];
    for (int64_t i = p.axis + 1; i < rank; ++i) p.inner *= x.shape[static_cast<size_t>(i)];
    if (ctx.has_input(1)) {
      const InputSpec& split = ctx.tensor_input(1);
      if (split.dtype != DataType::kInt32 && split.dtype != DataType::kInt64) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'split': expected an int32 or int64 tensor, got " +
                                   ctx.InputString(1));
      }
      if (split.shape.size() > 1) {
        throw InvalidArgumentError(ctx.Describe() + ": 'split' must be a scalar or 1-D, got shape " +
                                   ShapeToString(split.shape) + " (" + ctx.InputString(1) + ")");
      }
    }
    ctx.EmplaceState(p);
    ctx.SetOutputDynamic(0);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan& p = ctx.state<Plan>();
    const int64_t axis = p.axis, dim = p.dim, outer = p.outer, inner = p.inner;

    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (const Tensor* split = ctx.input(1)) {  // its values are the run's data
      std::vector<int64_t> v(static_cast<size_t>(split->size()));  // int32 or int64 (Prepare checked)
      for (size_t i = 0; i < v.size(); ++i) {
        v[i] = split->dtype() == DataType::kInt64 ? split->data<int64_t>()[i] : split->data<int32_t>()[i];
      }
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
      }
    } else {
      sizes.assign(static_cast<size_t>(dim), 1);
      squeeze = !keepdims_;
    }

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
