// RNN: Ht = f(Xt*(Wi^T) + Ht-1*(Ri^T) + Wbi + Rbi), forward/reverse/bidirectional, with sequence_lens,
// initial_h and layout 0/1. Outputs Y, Y_h.
#include "kernels/kernel_def.h"
#include "kernels/ref/rnn_common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Rnn : public OpKernel {
 public:
  explicit Rnn(const ir::Node& node) : attrs_(rnn::ParseAttributes(node, {"Tanh"})) {}

  void Prepare(PrepareContext& ctx) const override { rnn::Prepare(ctx, attrs_, 1, false); }

  void Compute(KernelContext& ctx) const override {
    const DataType dtype = ctx.required_input(0).dtype();
    Dispatch(FloatTypes{}, dtype, ctx, [&](auto tag) {
      using T = decltype(tag);
      Run<T>(ctx, dtype);
    });
  }

 private:
  template <typename T>
  void Run(KernelContext& ctx, DataType dtype) const {
    using A = Acc<T>;
    const rnn::Inputs<A> in = rnn::ReadInputs<T>(ctx, attrs_, 1, false);
    const int64_t seq = in.seq, batch = in.batch, H = in.hidden, ndir = in.num_dir;
    std::vector<A> y(static_cast<size_t>(seq * ndir * batch * H), A(0));
    std::vector<A> h = in.h0;  // [dir, batch, H]
    for (int64_t d = 0; d < ndir; ++d) {
      const A* wb = in.b.data() + d * 2 * H;
      const std::vector<A> xw = rnn::ProjectInput(in, d, 1, wb, wb + H, ctx.threads());
      const A* r = in.r.data() + d * H * H;
      const rnn::Activation& f = attrs_.act(d, 0);
      ParallelFor(ctx.threads(), batch, 1, [&](int64_t b0, int64_t b1) {
        std::vector<A> g(static_cast<size_t>(H));
        for (int64_t b = b0; b < b1; ++b) {
          A* hb = h.data() + (d * batch + b) * H;
          const int64_t len = in.lens[static_cast<size_t>(b)];
          for (int64_t s = 0; s < len; ++s) {
            const int64_t t = rnn::TimeIndex(attrs_, d, len, s);
            std::copy_n(xw.data() + (t * batch + b) * H, H, g.data());
            rnn::AddMatVec(r, hb, g.data(), H, H);
            rnn::Clip(g.data(), H, attrs_.clip);
            f.Apply(g.data(), H);
            std::copy_n(g.data(), H, hb);
            std::copy_n(g.data(), H, y.data() + ((t * ndir + d) * batch + b) * H);
          }
        }
      });
    }
    rnn::WriteOutputs<T>(ctx, attrs_, in, y, h, nullptr, dtype);
  }

  rnn::Attributes attrs_;
};

}  // namespace

void RegisterRnnKernels(KernelRegistry& r) {
  // Versions 1, 7, 14 (layout), 22 (bfloat16). Version 1's output_sequence attribute has no effect here: Y is
  // produced whenever it is requested.
  r.Add({.op = "RNN",
         .since = 1,
         .types = {{"T", dtypes::Floats()}, {"T1", {DataType::kInt32}}},
         .create = MakeKernel<Rnn>});
}

}  // namespace ferry::ref
