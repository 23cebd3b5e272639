// Split (opsets 2-12: `split` attribute; 13+: `split` input; 18+: `num_outputs`): cuts X along `axis` into one
// piece per output. X is viewed as [outer, dim, inner]; output k is the box [outer, size_k * inner] of X at column
// offset_k * inner, one strided copy of contiguous runs (memcpy when long) by element size. Without sizes the
// pieces are equal (opset 18: ceil(dim / n) with a smaller last one). Prepare checks X and cuts it when the sizes
// are known before the run; a `split` read at run time is checked by Compute, with ref's messages.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/data_movement_shapes.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// The cut: the axis, each output's size along it, and X as [outer, dim, inner] around it.
struct SplitPlan {
  int64_t axis = 0, outer = 1, dim = 0, inner = 1;
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

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const bool split_input = opset_ >= 13 && ctx.has_input(1);
    if (split_input) {
      const InputSpec& t = ctx.tensor_input(1);
      if (t.dtype != DataType::kBool) {  // ReadIntegers reads numeric and bool tensors
        ref::Dispatch(ref::NumericTypes{}, t.dtype, ctx.Describe() + ": input 'split'", [](auto) {});
      }
      if (!ctx.constant(1)) {
        Axis(x.shape, ctx.Describe());
        for (int k = 0; k < ctx.output_count(); ++k) ctx.SetOutputDynamic(k);
        return;
      }
    }
    const SplitPlan& p = ctx.EmplaceState(
        Resolve(x.dtype, x.shape, ctx.output_count(), split_input ? ctx.constant(1) : nullptr, ctx.Describe()));
    for (int k = 0; k < ctx.output_count(); ++k) {
      Shape shape = x.shape;
      shape[static_cast<size_t>(p.axis)] = p.sizes[static_cast<size_t>(k)];
      ctx.SetOutput(k, x.dtype, std::move(shape));
    }
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const SplitPlan* prepared = ctx.state_if_any<SplitPlan>();
    SplitPlan resolved;
    if (!prepared) {  // cut by the run's `split`: its errors are the data's (they name the node)
      resolved = Resolve(x.dtype(), x.shape(), ctx.output_count(), ctx.input(1), ctx.Describe());
    }
    const SplitPlan& p = prepared ? *prepared : resolved;
    const int elem = ElementBytes(x.dtype());
    const int threads = CopyThreads(ctx.threads(), x.size() * elem);
    const auto* src = static_cast<const uint8_t*>(x.raw_data());
    int64_t offset = 0;
    for (int k = 0; k < ctx.output_count(); ++k) {
      const int64_t size = p.sizes[static_cast<size_t>(k)];
      Tensor* y;
      if (prepared) {
        y = &ctx.OutputUninitialized(k);
      } else {
        Shape shape = x.shape();
        shape[static_cast<size_t>(p.axis)] = size;
        y = &ctx.OutputUninitialized(k, x.dtype(), std::move(shape));
      }
      const int64_t block = size * p.inner;
      if (y->size() > 0) {
        if (p.outer == 1) {
          ParallelMemcpy(y->raw_data(), src + offset * p.inner * elem, block * elem, threads);
        } else {
          const int64_t box[2] = {p.outer, block};
          const int64_t ds[2] = {block, 1};
          const int64_t ss[2] = {p.dim * p.inner, 1};
          StridedCopy(elem, y->raw_data(), ds, src + offset * p.inner * elem, ss, box, threads);
        }
      }
      offset += size;
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
    return ref::NormalizeAxis(axis_, rank, what);
  }

  // The pieces of X (x_dtype[x_shape]) into n outputs: from `split_in` (the `split` input's data, null when
  // omitted), the attribute, or equal parts; throws InvalidArgumentError naming `what` when they do not cut X's axis.
  SplitPlan Resolve(DataType x_dtype, const Shape& x_shape, int64_t n, const Tensor* split_in,
                    const std::string& what) const {
    SplitPlan p;
    p.axis = Axis(x_shape, what);
    p.dim = x_shape[static_cast<size_t>(p.axis)];
    std::vector<int64_t>& sizes = p.sizes;
    if (split_in) {
      sizes = ref::ReadIntegers(*split_in, what + ": input 'split'");
    } else if (has_split_attr_) {
      sizes = split_attr_;
    }
    sizes = ref::ResolveSplitSizes(std::move(sizes), n, num_outputs_, opset_, x_dtype, x_shape, p.axis, what);
    for (size_t d = 0; d < x_shape.size(); ++d) {
      if (static_cast<int64_t>(d) < p.axis) p.outer *= x_shape[d];
      if (static_cast<int64_t>(d) > p.axis) p.inner *= x_shape[d];
    }
    return p;
  }
};

}  // namespace

void RegisterSplitKernels(KernelRegistry& r) {
  r.Add({.op = "Split",
         .since = 2,
         .until = 12,
         .types = {{"T", ByteSizedTypes()}},
         .create = MakeKernel<Split>,
         .name = "cpu.any_split__strided_copy.2"});
  r.Add({.op = "Split",
         .since = 13,
         .types = {{"T", ByteSizedTypes()}},
         .create = MakeKernel<Split>,
         .host_inputs = {1},
         .name = "cpu.any_split__strided_copy.13"});
}

}  // namespace ferry::cpu
