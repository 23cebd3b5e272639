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

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& lens_t = ctx.required_input(1);
    if (x.rank() < 2) throw InvalidArgumentError(ctx.Describe() + ": input must have rank >= 2, got " + DescribeTensor(x));
    const int64_t batch = x.dim(batch_axis_), time = x.dim(time_axis_);
    const std::vector<int64_t> lens = ReadInt64s(lens_t, ctx.Describe() + ": input 'sequence_lens'");
    if (static_cast<int64_t>(lens.size()) != batch) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'sequence_lens' " + DescribeTensor(lens_t) +
                                 " must have one entry per batch entry of input " + DescribeTensor(x));
    }
    for (int64_t l : lens) {
      if (l < 0 || l > time) {
        throw InvalidArgumentError(ctx.Describe() + ": input 'sequence_lens' has length " + std::to_string(l) +
                                   " outside [0, " + std::to_string(time) + "]");
      }
    }
    Tensor& y = ctx.Output(0, x.dtype(), x.shape());
    const int64_t inner = x.size() == 0 ? 0 : x.size() / (batch * time);
    const int64_t bstride = (batch_axis_ == 0 ? time : 1) * inner;
    const int64_t tstride = (time_axis_ == 0 ? batch : 1) * inner;
    DispatchElements(x.dtype(), ctx.Describe(), [&](auto acc) {
      using A = decltype(acc);
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t len = lens[static_cast<size_t>(b)];
        for (int64_t t = 0; t < time; ++t) {
          const int64_t src_t = t < len ? len - 1 - t : t;
          A::Copy(y.raw_data(), b * bstride + t * tstride, x.raw_data(), b * bstride + src_t * tstride, inner);
        }
      }
    });
  }

 private:
  int64_t batch_axis_, time_axis_;
};

}  // namespace

void RegisterReverseSequenceKernels(KernelRegistry& r) {
  r.Add({.op = "ReverseSequence", .since = 10, .types = {{"T", dtypes::All()}}, .create = MakeKernel<ReverseSequence>,
         .host_inputs = {1}});
}

}  // namespace ferry::ref
