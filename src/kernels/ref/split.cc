// Split: cuts the input along `axis` into one piece per output. Piece sizes come from the `split` input
// (opset 1 and 13+) or attribute (opsets 1-12); otherwise equal parts, or from opset 18 `num_outputs` pieces of
// ceil(dim / n) with a smaller last piece. Prepare checks X and cuts it when the sizes are known before the run; a
// `split` read at run time is checked by Compute.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/data_movement_shapes.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

// The cut: the axis, each output's size along it, and X as [outer, dim, inner] around it.
struct Plan {
  int64_t axis = 0, outer = 1, inner = 1;
  std::vector<int64_t> sizes;
};

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

  // The pieces when their sizes are attributes, equal parts or a constant `split`; else the outputs are dynamic
  // and Compute cuts by the run's `split` (X's rank and the axis are checked here either way).
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const bool split_input = (opset_ == 1 || opset_ >= 13) && ctx.has_input(1);
    if (split_input) {
      const InputSpec& t = ctx.tensor_input(1);
      if (t.dtype != DataType::kBool) {  // ReadIntegers reads numeric and bool tensors
        Dispatch(NumericTypes{}, t.dtype, ctx.Describe() + ": input 'split'", [](auto) {});
      }
      if (!ctx.constant(1)) {
        Axis(x.shape, ctx.Describe());
        for (int k = 0; k < ctx.output_count(); ++k) ctx.SetOutputDynamic(k);
        return;
      }
    }
    const Plan& p = ctx.EmplaceState(
        Resolve(x.dtype, x.shape, ctx.output_count(), split_input ? ctx.constant(1) : nullptr, ctx.Describe()));
    for (int k = 0; k < ctx.output_count(); ++k) {
      Shape shape = x.shape;
      shape[static_cast<size_t>(p.axis)] = p.sizes[static_cast<size_t>(k)];
      ctx.SetOutput(k, x.dtype, std::move(shape));
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Plan* prepared = ctx.state_if_any<Plan>();
    Plan resolved;
    if (!prepared) {  // cut by the run's `split`: its errors are the data's (they name the node)
      resolved = Resolve(x.dtype(), x.shape(), ctx.output_count(), ctx.input(1), ctx.Describe());
    }
    const Plan& p = prepared ? *prepared : resolved;
    const int64_t n = ctx.output_count(), dim = x.dim(p.axis), inner = p.inner;
    int64_t offset = 0;
    for (int64_t k = 0; k < n; ++k) {
      Tensor* out;
      if (prepared) {
        out = &ctx.Output(static_cast<int>(k));
      } else {
        Shape shape = x.shape();
        shape[static_cast<size_t>(p.axis)] = p.sizes[static_cast<size_t>(k)];
        out = &ctx.Output(static_cast<int>(k), x.dtype(), shape);
      }
      Tensor& y = *out;
      const int64_t block = p.sizes[static_cast<size_t>(k)] * inner;
      const int64_t box[2] = {p.outer, block};
      const int64_t ds[2] = {block, 1};
      const int64_t ss[2] = {dim * inner, 1};
      CopyStrided(x.dtype(), y.raw_data(), 0, ds, x.raw_data(), offset * inner, ss, box, ctx.threads());
      offset += p.sizes[static_cast<size_t>(k)];
    }
  }

 private:
  int64_t axis_;
  int64_t opset_;
  int64_t num_outputs_;
  std::vector<int64_t> split_attr_;
  bool has_split_attr_ = false;

  // The split axis of X; throws InvalidArgumentError naming `what` for a scalar X or an axis out of range.
  int64_t Axis(const Shape& x_shape, const std::string& what) const {
    const auto rank = static_cast<int64_t>(x_shape.size());
    if (rank == 0) throw InvalidArgumentError(what + ": cannot split a scalar");
    return NormalizeAxis(axis_, rank, what);
  }

  // The pieces of X (x_dtype[x_shape]) into n outputs: from `split_in` (the `split` input's data, null when
  // omitted), the attribute, or equal parts; throws InvalidArgumentError naming `what` when they do not cut X's axis.
  Plan Resolve(DataType x_dtype, const Shape& x_shape, int64_t n, const Tensor* split_in,
               const std::string& what) const {
    Plan p;
    p.axis = Axis(x_shape, what);
    std::vector<int64_t>& sizes = p.sizes;
    if (split_in) {
      sizes = ReadIntegers(*split_in, what + ": input 'split'");
    } else if (has_split_attr_) {
      sizes = split_attr_;
    }
    sizes = ResolveSplitSizes(std::move(sizes), n, num_outputs_, opset_, x_dtype, x_shape, p.axis, what);
    for (size_t d = 0; d < x_shape.size(); ++d) {
      if (static_cast<int64_t>(d) < p.axis) p.outer *= x_shape[d];
      if (static_cast<int64_t>(d) > p.axis) p.inner *= x_shape[d];
    }
    return p;
  }
};

}  // namespace

std::vector<int64_t> ResolveSplitSizes(std::vector<int64_t> sizes, int64_t n, int64_t num_outputs, int64_t opset,
                                       DataType x_dtype, const Shape& x_shape, int64_t axis, const std::string& what) {
  const int64_t dim = x_shape[static_cast<size_t>(axis)];
  const auto x_desc = [&] { return std::string(DataTypeName(x_dtype)) + ShapeToString(x_shape); };
  if (!sizes.empty()) {  // an empty split input or attribute counts as absent
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) throw InvalidArgumentError(what + ": split " + ShapeToString(sizes) + " is negative");
      if (__builtin_add_overflow(sum, s, &sum)) {
        throw InvalidArgumentError(what + ": split " + ShapeToString(sizes) + " overflows int64");
      }
    }
    if (static_cast<int64_t>(sizes.size()) != n || sum != dim) {
      throw InvalidArgumentError(what + ": split " + ShapeToString(sizes) + " does not cut dimension " +
                                 std::to_string(dim) + " of " + x_desc() + " into " + std::to_string(n) + " outputs");
    }
    return sizes;
  }
  if (n < 1) throw InvalidArgumentError(what + ": has no outputs");
  if (num_outputs > 0 && num_outputs != n) {
    throw InvalidArgumentError(what + ": num_outputs=" + std::to_string(num_outputs) + " but the node has " +
                               std::to_string(n) + " outputs");
  }
  if (opset < 18 && dim % n != 0) {
    throw InvalidArgumentError(what + ": dimension " + std::to_string(dim) + " of " + x_desc() +
                               " cannot be split into " + std::to_string(n) + " equal parts");
  }
  const int64_t chunk = (dim + n - 1) / n;
  int64_t left = dim;
  for (int64_t k = 0; k < n; ++k) {
    sizes.push_back(std::min(chunk, left));
    left -= sizes.back();
  }
  return sizes;
}

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
