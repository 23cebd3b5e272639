// LSTM (gates i, o, f, c; peepholes P[iof]; default f=Sigmoid, g=Tanh, h=Tanh):
//   it = f(Xt*Wi^T + Ht-1*Ri^T + Pi (.) Ct-1 + Wbi + Rbi)
//   ft = f(Xt*Wf^T + Ht-1*Rf^T + Pf (.) Ct-1 + Wbf + Rbf)      (1 - it when input_forget)
//   ct = g(Xt*Wc^T + Ht-1*Rc^T + Wbc + Rbc)
//   Ct = ft (.) Ct-1 + it (.) ct
//   ot = f(Xt*Wo^T + Ht-1*Ro^T + Po (.) Ct + Wbo + Rbo)
//   Ht = ot (.) h(Ct)
#include "kernels/kernel_def.h"
#include "kernels/ref/rnn_common.h"
#include "kernels/registry.h"

namespace ferry::ref {
namespace {

class Lstm : public OpKernel {
 public:
  explicit Lstm(const ir::Node& node)
      : attrs_(rnn::ParseAttributes(node, {"Sigmoid", "Tanh", "Tanh"})),
        input_forget_(node.GetInt("input_forget", 0) != 0) {}

  void Prepare(PrepareContext& ctx) const override { rnn::Prepare(ctx, attrs_, 4, true); }

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
    const rnn::Inputs<A> in = rnn::ReadInputs<T>(ctx, attrs_, 4, true);
    const int64_t seq = in.seq, batch = in.batch, H = in.hidden, ndir = in.num_dir;
    std::vector<A> y(static_cast<size_t>(seq * ndir * batch * H), A(0));
    std::vector<A> h = in.h0;  // [dir, batch, H]
    std::vector<A> c = in.c0;  // [dir, batch, H]
    for (int64_t d = 0; d < ndir; ++d) {
      const A* wb = in.b.data() + d * 8 * H;
      const std::vector<A> xw = rnn::ProjectInput(in, d, 4, wb, wb + 4 * H, ctx.threads());
      const A* r = in.r.data() + d * 4 * H * H;
      const A* pi = in.p.data() + d * 3 * H;
      const A* po = pi + H;
      const A* pf = pi + 2 * H;
      const rnn::Activation& f = attrs_.act(d, 0);
      const rnn::Activation& g = attrs_.act(d, 1);
      const rnn::Activation& hact = attrs_.act(d, 2);
      ParallelFor(ctx.threads(), batch, 1, [&](int64_t b0, int64_t b1) {
        std::vector<A> gates(static_cast<size_t>(4 * H)), hc(static_cast<size_t>(H));
        for (int64_t b = b0; b < b1; ++b) {
          A* hb = h.data() + (d * batch + b) * H;
          A* cb = c.data() + (d * batch + b) * H;
          const int64_t len = in.lens[static_cast<size_t>(b)];
          for (int64_t s = 0; s < len; ++s) {
            const int64_t t = rnn::TimeIndex(attrs_, d, len, s);
            std::copy_n(xw.data() + (t * batch + b) * 4 * H, 4 * H, gates.data());
            rnn::AddMatVec(r, hb, gates.data(), 4 * H, H);
            A* gi = gates.data();
            A* go = gi + H;
            A* gf = gi + 2 * H;
            A* gc = gi + 3 * H;
            for (int64_t k = 0; k < H; ++k) {
              gi[k] += pi[k] * cb[k];
              gf[k] += pf[k] * cb[k];
            }
            rnn::Clip(gi, H, attrs_.clip);
            f.Apply(gi, H);
            if (input_forget_) {
              for (int64_t k = 0; k < H; ++k) gf[k] = A(1) - gi[k];
            } else {
              rnn::Clip(gf, H, attrs_.clip);
              f.Apply(gf, H);
            }
            rnn::Clip(gc, H, attrs_.clip);
            g.Apply(gc, H);
            for (int64_t k = 0; k < H; ++k) cb[k] = gf[k] * cb[k] + gi[k] * gc[k];
            for (int64_t k = 0; k < H; ++k) go[k] += po[k] * cb[k];
            rnn::Clip(go, H, attrs_.clip);
            f.Apply(go, H);
            std::copy_n(cb, H, hc.data());
            hact.Apply(hc.data(), H);
            for (int64_t k = 0; k < H; ++k) hb[k] = go[k] * hc[k];
            std::copy_n(hb, H, y.data() + ((t * ndir + d) * batch + b) * H);
          }
        }
      });
    }
    rnn::WriteOutputs<T>(ctx, attrs_, in, y, h, &c, dtype);
  }

  rnn::Attributes attrs_;
  bool input_forget_;
};

}  // namespace

void RegisterLstmKernels(KernelRegistry& r) {
  // Versions 1, 7, 14 (layout), 22 (bfloat16); one implementation serves them all.
  r.Add({.op = "LSTM",
         .since = 1,
         .types = {{"T", dtypes::Floats()}, {"T1", {DataType::kInt32}}},
         .create = MakeKernel<Lstm>});
}

}  // namespace ferry::ref
