// GRU (gates z, r, h; default f=Sigmoid, g=Tanh):
//   zt = f(Xt*Wz^T + Ht-1*Rz^T + Wbz + Rbz),  rt = f(Xt*Wr^T + Ht-1*Rr^T + Wbr + Rbr)
//   ht = g(Xt*Wh^T + (rt (.) Ht-1)*Rh^T + Rbh + Wbh)        linear_before_reset = 0
//   ht = g(Xt*Wh^T + rt (.) (Ht-1*Rh^T + Rbh) + Wbh)        linear_before_reset != 0
//   Ht = (1 - zt) (.) ht + zt (.) Ht-1
#include "kernels/kernel_def.h"
#include "kernels/ref/rnn_common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Gru : public OpKernel {
 public:
  explicit Gru(const ir::Node& node)
      : attrs_(rnn::ParseAttributes(node, {"Sigmoid", "Tanh"})),
        linear_before_reset_(node.GetInt("linear_before_reset", 0) != 0) {}

  void Prepare(PrepareContext& ctx) const override { rnn::Prepare(ctx, attrs_, 3, false); }

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
    const rnn::Inputs<A> in = rnn::ReadInputs<T>(ctx, attrs_, 3, false);
    const int64_t seq = in.seq, batch = in.batch, H = in.hidden, ndir = in.num_dir;
    std::vector<A> y(static_cast<size_t>(seq * ndir * batch * H), A(0));
    std::vector<A> h = in.h0;  // [dir, batch, H]
    for (int64_t d = 0; d < ndir; ++d) {
      const A* wb = in.b.data() + d * 6 * H;  // Wb[zrh] then Rb[zrh]
      const A* rb = wb + 3 * H;
      // Fold Rb into the projection for z and r always, and for h unless linear_before_reset.
      std::vector<A> rb_fold(rb, rb + 3 * H);
      if (linear_before_reset_) std::fill(rb_fold.begin() + 2 * H, rb_fold.end(), A(0));
      const std::vector<A> xw = rnn::ProjectInput(in, d, 3, wb, rb_fold.data(), ctx.threads());
      const A* r = in.r.data() + d * 3 * H * H;
      const A* rh = r + 2 * H * H;
      const rnn::Activation& f = attrs_.act(d, 0);
      const rnn::Activation& g = attrs_.act(d, 1);
      ParallelFor(ctx.threads(), batch, 1, [&](int64_t b0, int64_t b1) {
        std::vector<A> zr(static_cast<size_t>(2 * H)), ht(static_cast<size_t>(H)), tmp(static_cast<size_t>(H));
        for (int64_t b = b0; b < b1; ++b) {
          A* hb = h.data() + (d * batch + b) * H;
          const int64_t len = in.lens[static_cast<size_t>(b)];
          for (int64_t s = 0; s < len; ++s) {
            const int64_t t = rnn::TimeIndex(attrs_, d, len, s);
            const A* x = xw.data() + (t * batch + b) * 3 * H;
            std::copy_n(x, 2 * H, zr.data());
            rnn::AddMatVec(r, hb, zr.data(), 2 * H, H);
            rnn::Clip(zr.data(), 2 * H, attrs_.clip);
            f.Apply(zr.data(), 2 * H);
            const A* z = zr.data();
            const A* rt = zr.data() + H;
            if (linear_before_reset_) {
              std::copy_n(rb + 2 * H, H, tmp.data());
              rnn::AddMatVec(rh, hb, tmp.data(), H, H);
              for (int64_t i = 0; i < H; ++i) ht[i] = x[2 * H + i] + rt[i] * tmp[i];
            } else {
              for (int64_t i = 0; i < H; ++i) tmp[i] = rt[i] * hb[i];
              std::copy_n(x + 2 * H, H, ht.data());
              rnn::AddMatVec(rh, tmp.data(), ht.data(), H, H);
            }
            rnn::Clip(ht.data(), H, attrs_.clip);
            g.Apply(ht.data(), H);
            for (int64_t i = 0; i < H; ++i) hb[i] = (A(1) - z[i]) * ht[i] + z[i] * hb[i];
            std::copy_n(hb, H, y.data() + ((t * ndir + d) * batch + b) * H);
          }
        }
      });
    }
    rnn::WriteOutputs<T>(ctx, attrs_, in, y, h, nullptr, dtype);
  }

  rnn::Attributes attrs_;
  bool linear_before_reset_;
};

}  // namespace

void RegisterGruKernels(KernelRegistry& r) {
  // Versions 1, 3, 7, 14 (layout), 22 (bfloat16); one implementation serves them all.
  r.Add({.op = "GRU",
         .since = 1,
         .types = {{"T", dtypes::Floats()}, {"T1", {DataType::kInt32}}},
         .create = MakeKernel<Gru>});
}

}  // namespace ferry::ref
