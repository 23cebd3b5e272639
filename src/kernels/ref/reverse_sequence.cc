// ReverseSequence: for each batch entry b, reverses the first sequence_lens[b] steps along time_axis and copies
// the rest (reverse_sequence.h: the checks and bounds, shared with the cpu kernel).
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/copy_util.h"
#include "kernels/ref/reverse_sequence.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class ReverseSequence : public OpKernel {
 public:
  explicit ReverseSequence(const ir::Node& node) : axes_(node) {}

  void Prepare(PrepareContext& ctx) const override { ctx.EmplaceState(PrepareReverseSequence(ctx, axes_)); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const ReverseSequencePlan& p = ctx.state<ReverseSequencePlan>();
    const std::vector<int64_t> lens = ReverseSequenceLengths(ctx, p);
    Tensor& y = ctx.Output(0);
    DispatchElements(x.dtype(), "ReverseSequence", [&](auto acc) {
      using A = decltype(acc);
      for (int64_t b = 0; b < p.batch; ++b) {
        const int64_t len = lens[static_cast<size_t>(b)];
        for (int64_t t = 0; t < p.time; ++t) {
          A::Copy(y.raw_data(), b * p.bstride + t * p.tstride, x.raw_data(),
                  b * p.bstride + ReverseSequenceSource(t, len) * p.tstride, p.inner);
        }
      }
    });
  }

 private:
  ReverseSequenceAxes axes_;
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
