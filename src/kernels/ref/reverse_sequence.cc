// ReverseSequence: for each batch entry b, reverses the first sequence_lens[b] steps along time_axis and copies
// the rest. batch_axis and time_axis are 0 and 1 in either order; the input has rank >= 2.
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class ReverseSequence : public OpKernel {
 public:
  explicit ReverseSequence(const ir::Node& node)
      : batch_axis_(node.GetInt("batch_axis", 1)), time_axis_(node.GetInt("time_axis", 0)) {
    if (!((batch_axis_ == 0 && time_axis_ == 1) || (batch_axis_ == 1 && time_axis_ == 0))) {
      throw InvalidModelError(node.Describe() + ": batch_axis and time_axis must be 0 and 1 (in either order)");
    }
  }

  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    const InputSpec& lens = ctx.tensor_input(1);
    auto str = [](const InputSpec& t) { return std::string(DataTypeName(t.dtype)) + ShapeToString(t.shape); };
    if (x.shape.size() < 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input must have rank >= 2, got " + str(x));
    }
    if (lens.dtype != DataType::kInt32 && lens.dtype != DataType::kInt64) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'sequence_lens': expected an int32 or int64 tensor, got " +
                                 std::string(DataTypeName(lens.dtype)));
    }
    Plan p;
    p.batch = x.shape[static_cast<size_t>(batch_axis_)];
    p.time = x.shape[static_cast<size_t>(time_axis_)];
    if (ShapeElementCount(lens.shape) != p.batch) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'sequence_lens' " + str(lens) +
                                 " must have one entry per batch entry of input " + str(x));
    }
    const int64_t size = ShapeElementCount(x.shape);
    p.inner = size == 0 ? 0 : size / (p.batch * p.time);
    p.bstride = (batch_axis_ == 0 ? p.time : 1) * p.inner;
    p.tstride = (time_axis_ == 0 ? p.batch : 1) * p.inner;
    ctx.EmplaceState(p);
    ctx.SetOutput(0, x.dtype, x.shape);
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& lens_t = ctx.required_input(1);
    const Plan& p = ctx.state<Plan>();
    const int64_t batch = p.batch, time = p.time, inner = p.inner;
    std::vector<int64_t> lens(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t l = IndexAt(lens_t, b);  // int32 or int64: Prepare checked
      if (l < 0 || l > time) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'sequence_lens' has length " + std::to_string(l) +
                                   " outside [0, " + std::to_string(time) + "]");
      }
      lens[static_cast<size_t>(b)] = l;
    }
    Tensor& y = ctx.Output(0);
    DispatchElements(x.dtype(), "ReverseSequence", [&](auto acc) {
      using A = decltype(acc);
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t len = lens[static_cast<size_t>(b)];
        for (int64_t t = 0; t < time; ++t) {
          const int64_t src_t = t < len ? len - 1 - t : t;
          A::Copy(y.raw_data(), b * p.bstride + t * p.tstride, x.raw_data(), b * p.bstride + src_t * p.tstride, inner);
        }
      }
    });
  }

 private:
  struct Plan {
    int64_t batch = 0, time = 0;
    int64_t inner = 0;                 // elements per (batch, time) step
    int64_t bstride = 0, tstride = 0;  // element strides of the batch and time axes
  };
  int64_t batch_axis_, time_axis_;
};

}  // namespace

void RegisterReverseSequenceKernels(KernelRegistry& r) {
  r.Add({.op = "ReverseSequence",
         .since = 10,
         .types = {{"T", dtypes::All()}},
         .create = MakeKernel<ReverseSequence>,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
