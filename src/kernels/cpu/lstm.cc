// LSTM on the cpu backend (float32, opsets 7 and 14 and on; versions before 7 are left to ref). The equations are ref's
// (src/kernels/ref/lstm.cc, gates i, o, f, c; peepholes P[iof]). Per direction: X*W^T + Wb + Rb for every timestep in
// one dnnl_sgemm, then per step one [batch, hidden] x R^T product (R transposed and packed in Prepare when it is a
// constant; rc::StepGemm) and the gate math row by row, Sigmoid/Tanh vectorized (recurrent_common.h). Every activation
// list ref accepts is supported (the others in ref's scalar form); directions, layouts, sequence_lens (Y zero past a
// row's length, Y_h/Y_c from its last valid step), initial_h/initial_c, clip, input_forget, optional outputs.
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

class Lstm : public OpKernel {
 public:
  Lstm(const ir::Node& node, rc::Simd simd)
      : attrs_(rc::rnn::ParseAttributes(node, {"Sigmoid", "Tanh", "Tanh"})),
        input_forget_(node.GetInt("input_forget", 0) != 0),
        simd_(simd) {}

  void Prepare(PrepareContext& ctx) const override {
    rc::rnn::Prepare(ctx, attrs_, 4, true);
    rc::PackConstants(ctx, 4, attrs_, {4}, simd_);
  }

  void Compute(KernelContext& ctx) const override {
    const rc::Sizes s = rc::SizesOf(ctx.required_input(0), ctx.required_input(2), attrs_, 4);
    const int64_t H = s.hidden, G = s.G(), batch = s.batch;
    const rc::PackedWeights* prepared = ctx.state_if_any<rc::PackedWeights>();
    rc::PackedWeights local;
    if (!prepared) local = rc::PackFromInputs(ctx, s, {4}, simd_);
    const rc::PackedWeights& pw = prepared ? *prepared : local;
    const std::vector<int64_t> lens = rc::ReadLens(ctx, s);
    std::vector<float> h = rc::ReadState(ctx, 5, s);
    std::vector<float> c = rc::ReadState(ctx, 6, s);
    const Tensor* p = ctx.input(7);
    float* y = ctx.output_requested(0) ? ctx.Output(0).data<float>() : nullptr;
    const int64_t max_len = lens.empty() ? 0 : *std::max_element(lens.begin(), lens.end());

    ScopedOmpThreads omp(ctx.threads());
    std::vector<float> xw, gates(static_cast<size_t>(batch * G), 0.0f), hc(static_cast<size_t>(batch * H));
    for (int64_t d = 0; d < s.dir; ++d) {
      rc::ProjectInput(ctx, s, d, pw.Wb(d, G), pw.Rb(d, G), xw);
      const float* rt = pw.Rt(d, H, G);
      const float* pi = p ? p->data<float>() + d * 3 * H : nullptr;
      float* hd = h.data() + d * batch * H;
      float* cd = c.data() + d * batch * H;
      for (int64_t step = 0; step < max_len; ++step) {
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t len = lens[static_cast<size_t>(b)];
          if (step >= len) {
            std::fill_n(gates.data() + b * G, G, 0.0f);  // a finished row: its gates go unused
            continue;
          }
          const int64_t t = rc::TimeIndex(attrs_, d, len, step);
          std::copy_n(xw.data() + s.Row(t, b) * G, G, gates.data() + b * G);
        }
        rc::StepGemm(ctx, step, batch, G, H, hd, H, rt, G, pw.Segment(d, 0), 1.0f, gates.data(), G);
        ParallelFor(ctx.threads(), batch, std::max<int64_t>(1, 16384 / std::max<int64_t>(G, 1)),
                    [&](int64_t b0, int64_t b1) {
                      for (int64_t b = b0; b < b1; ++b) {
                        const int64_t len = lens[static_cast<size_t>(b)];
                        if (step >= len) continue;
                        Cell(d, gates.data() + b * G, pi, cd + b * H, hd + b * H, hc.data() + b * H, H);
                        if (y) {
                          const int64_t t = rc::TimeIndex(attrs_, d, len, step);
                          std::copy_n(hd + b * H, H, y + s.YOffset(t, d, b));
                        }
                      }
                    });
      }
    }
    rc::WriteState(ctx, 1, s, h);
    rc::WriteState(ctx, 2, s, c);
  }

 private:
  // One row's step: gates [i, o, f, c] pre-activations (projection and recurrence summed) -> new c and h.
  void Cell(int64_t d, float* gi, const float* pi, float* c, float* h, float* hc, int64_t H) const {
    float* go = gi + H;
    float* gf = gi + 2 * H;
    float* gc = gi + 3 * H;
    const rc::rnn::Activation& f = attrs_.act(d, 0);
    const rc::rnn::Activation& g = attrs_.act(d, 1);
    const rc::rnn::Activation& hact = attrs_.act(d, 2);
    const float clip = attrs_.clip;
    if (pi) {
      const float* pf = pi + 2 * H;
      for (int64_t k = 0; k < H; ++k) {
        gi[k] += pi[k] * c[k];
        gf[k] += pf[k] * c[k];
      }
    }
    rc::Clip(gi, H, clip);
    rc::Activate(simd_, f, gi, H);
    if (input_forget_) {
      for (int64_t k = 0; k < H; ++k) gf[k] = 1.0f - gi[k];
    } else {
      rc::Clip(gf, H, clip);
      rc::Activate(simd_, f, gf, H);
    }
    rc::Clip(gc, H, clip);
    rc::Activate(simd_, g, gc, H);
    for (int64_t k = 0; k < H; ++k) c[k] = gf[k] * c[k] + gi[k] * gc[k];
    if (pi) {
      const float* po = pi + H;
      for (int64_t k = 0; k < H; ++k) go[k] += po[k] * c[k];
    }
    rc::Clip(go, H, clip);
    rc::Activate(simd_, f, go, H);
    std::copy_n(c, H, hc);
    rc::Activate(simd_, hact, hc, H);
    for (int64_t k = 0; k < H; ++k) h[k] = go[k] * hc[k];
  }

  rc::rnn::Attributes attrs_;
  bool input_forget_;
  rc::Simd simd_;
};

}  // namespace

void RegisterLstmKernels(KernelRegistry& r) {
  rc::AddVariants(r, "LSTM", "lstm", [](const ir::Node& node, rc::Simd simd) -> std::unique_ptr<OpKernel> {
    return std::make_unique<Lstm>(node, simd);
  });
}

}  // namespace ferry::cpu
