// ReverseSequence on the cpu backend: ref's checks, bounds and lengths (ref/reverse_sequence.h), the copy threaded
// over (batch entry, time step) pairs when large (strided_copy.h's CopyThreads) and done by storage word (CopyRun:
// memcpy for long steps, a word loop for short ones). batch_axis and time_axis in either order; the copy kernels'
// types (ByteSizedTypes); strings and sub-byte packed types run on ref.
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/reverse_sequence.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class ReverseSequence : public OpKernel {
 public:
  explicit ReverseSequence(const ir::Node& node) : axes_(node) {}

  void Prepare(PrepareContext& ctx) const override { ctx.EmplaceState(ref::PrepareReverseSequence(ctx, axes_)); }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const ref::ReverseSequencePlan& p = ctx.state<ref::ReverseSequencePlan>();
    const std::vector<int64_t> lens = ref::ReverseSequenceLengths(ctx, p);
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const int64_t time = p.time, inner = p.inner;
    const int bytes = ElementBytes(x.dtype());
    const bool time_major = p.tstride > p.bstride;  // time_axis 0: Y is [time, batch, inner]
    DispatchWord(bytes, [&](auto word) {
      using W = decltype(word);
      const W* src = static_cast<const W*>(x.raw_data());
      W* dst = static_cast<W*>(y.raw_data());
      const int64_t grain = std::max<int64_t>(1, kCopyGrainBytes / (inner * bytes));
      ParallelFor(CopyThreads(ctx.threads(), y.size() * bytes), p.batch * time, grain, [&](int64_t b, int64_t e) {
        for (int64_t it = b; it < e; ++it) {  // in Y's memory order: step `it` is Y's elements [it * inner, +inner)
          const int64_t bi = time_major ? it % p.batch : it / time, t = time_major ? it / p.batch : it % time;
          const int64_t from = ref::ReverseSequenceSource(t, lens[static_cast<size_t>(bi)]);
          CopyRun(dst + bi * p.bstride + t * p.tstride, src + bi * p.bstride + from * p.tstride, inner);
        }
      });
    });
  }

 private:
  ref::ReverseSequenceAxes axes_;
};

}  // namespace

void RegisterReverseSequenceKernels(KernelRegistry& r) {
  r.Add({.op = "ReverseSequence",
         .since = 10,
         .types = {{"T", ByteSizedTypes()}},
         .create = MakeKernel<ReverseSequence>,
         .host_inputs = {1}});
}

}  // namespace ferry::cpu
