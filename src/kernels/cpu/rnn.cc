// RNN on the cpu backend (float32, opsets 7 and 14 and on; version 1 with output_sequence is left to ref): Ht =
// f(Xt*Wi^T + Ht-1*Ri^T + Wbi + Rbi) as ref computes it (src/kernels/ref/rnn.cc). Per direction: X*W^T + Wb + Rb for
// every timestep in one dnnl_sgemm, then per step one [batch, hidden] x R^T product (rc::StepGemm, R transposed and
// packed in Prepare when it is a constant) and the activation, Tanh/Sigmoid vectorized (recurrent_common.h), the others
// in ref's scalar form. Directions, layouts, sequence_lens (Y zero past a row's length, Y_h from its last valid step),
// initial_h, clip and optional outputs as in ref.
#include <algorithm>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/dnnl_util.h"  // ScopedOmpThreads
#include "kernels/cpu/recurrent_common.h"
#include "kernels/kernel_def.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

namespace rc = recurrent;

class Rnn : public OpKernel {
 public:
  Rnn(const ir::Node& node, rc::Simd simd) : attrs_(rc::rnn::ParseAttributes(node, {"Tanh"})), simd_(simd) {}

  void Prepare(PrepareContext& ctx) const override {
    rc::rnn::Prepare(ctx, attrs_, 1, false);
    rc::PackConstants(ctx, 1, attrs_, {1}, simd_);
  }

  void Compute(KernelContext& ctx) const override {
    const rc::Sizes s = rc::SizesOf(ctx.required_input(0), ctx.required_input(2), attrs_, 1);
    const int64_t H = s.hidden, batch = s.batch;
    const rc::PackedWeights* prepared = ctx.state_if_any<rc::PackedWeights>();
    rc::PackedWeights local;
    if (!prepared) local = rc::PackFromInputs(ctx, s, {1}, simd_);
    const rc::PackedWeights& pw = prepared ? *prepared : local;
    const std::vector<int64_t> lens = rc::ReadLens(ctx, s);
    std::vector<float> h = rc::ReadState(ctx, 5, s);
    float* y = ctx.output_requested(0) ? ctx.Output(0).data<float>() : nullptr;
    const int64_t max_len = lens.empty() ? 0 : *std::max_element(lens.begin(), lens.end());

    ScopedOmpThreads omp(ctx.threads());
    std::vector<float> xw, gates(static_cast<size_t>(batch * H), 0.0f);
    for (int64_t d = 0; d < s.dir; ++d) {
      rc::ProjectInput(ctx, s, d, pw.Wb(d, H), pw.Rb(d, H), xw);
      const float* rt = pw.Rt(d, H, H);
      float* hd = h.data() + d * batch * H;
      const rc::rnn::Activation& f = attrs_.act(d, 0);
      for (int64_t step = 0; step < max_len; ++step) {
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t len = lens[static_cast<size_t>(b)];
          if (step >= len) {
            std::fill_n(gates.data() + b * H, H, 0.0f);  // a finished row: its gates go unused
            continue;
          }
          const int64_t t = rc::TimeIndex(attrs_, d, len, step);
          std::copy_n(xw.data() + s.Row(t, b) * H, H, gates.data() + b * H);
        }
        rc::StepGemm(ctx, step, batch, H, H, hd, H, rt, H, pw.Segment(d, 0), 1.0f, gates.data(), H);
        ParallelFor(ctx.threads(), batch, std::max<int64_t>(1, 16384 / std::max<int64_t>(H, 1)),
                    [&](int64_t b0, int64_t b1) {
                      for (int64_t b = b0; b < b1; ++b) {
                        const int64_t len = lens[static_cast<size_t>(b)];
                        if (step >= len) continue;
                        float* gb = gates.data() + b * H;
                        rc::Clip(gb, H, attrs_.clip);
                        rc::Activate(simd_, f, gb, H);
                        std::copy_n(gb, H, hd + b * H);
                        if (y) std::copy_n(gb, H, y + s.YOffset(rc::TimeIndex(attrs_, d, len, step), d, b));
                      }
                    });
      }
    }
    rc::WriteState(ctx, 1, s, h);
  }

 private:
  rc::rnn::Attributes attrs_;
  rc::Simd simd_;
};

}  // namespace

void RegisterRnnKernels(KernelRegistry& r) {
  rc::AddVariants(r, "RNN", "rnn", [](const ir::Node& node, rc::Simd simd) -> std::unique_ptr<OpKernel> {
    return std::make_unique<Rnn>(node, simd);
  });
}

}  // namespace ferry::cpu
