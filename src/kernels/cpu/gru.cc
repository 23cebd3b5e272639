// GRU on the cpu backend (float32, opsets 7 and 14 and on; versions before 7 are left to ref). The equations are ref's
// (src/kernels/ref/gru.cc, gates z, r, h). Per direction: X*W^T + Wb + Rb for every timestep in one dnnl_sgemm (Rbh
// folded in only when linear_before_reset = 0), then per step products with R^T (rc::StepGemm, R transposed and packed
// in Prepare when it is a constant): with linear_before_reset = 0 first H*[Rz Rr]^T, then (r (.) H)*Rh^T; otherwise
// H*R^T at once. Sigmoid/Tanh are vectorized (recurrent_common.h), every other activation ref accepts runs in ref's
// scalar form; directions, layouts, sequence_lens (Y zero past a row's length, Y_h from its last valid step),
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

class Gru : public OpKernel {
 public:
  Gru(const ir::Node& node, rc::Simd simd)
      : attrs_(rc::rnn::ParseAttributes(node, {"Sigmoid", "Tanh"})),
        linear_before_reset_(node.GetInt("linear_before_reset", 0) != 0),
        simd_(simd) {}

  void Prepare(PrepareContext& ctx) const override {
    rc::rnn::Prepare(ctx, attrs_, 3, false);
    rc::PackConstants(ctx, 3, attrs_, Segments(), simd_);
  }

  void Compute(KernelContext& ctx) const override {
    const rc::Sizes s = rc::SizesOf(ctx.required_input(0), ctx.required_input(2), attrs_, 3);
    const int64_t H = s.hidden, G = s.G(), batch = s.batch;
    const rc::PackedWeights* prepared = ctx.state_if_any<rc::PackedWeights>();
    rc::PackedWeights local;
    if (!prepared) local = rc::PackFromInputs(ctx, s, Segments(), simd_);
    const rc::PackedWeights& pw = prepared ? *prepared : local;
    const std::vector<int64_t> lens = rc::ReadLens(ctx, s);
    std::vector<float> h = rc::ReadState(ctx, 5, s);
    float* y = ctx.output_requested(0) ? ctx.Output(0).data<float>() : nullptr;
    const int64_t max_len = lens.empty() ? 0 : *std::max_element(lens.begin(), lens.end());
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(G, 1));

    ScopedOmpThreads omp(ctx.threads());
    std::vector<float> xw, gates(static_cast<size_t>(batch * G), 0.0f);
    std::vector<float> aux(static_cast<size_t>(batch * (linear_before_reset_ ? G : H)), 0.0f);  // H*R^T or r (.) H
    for (int64_t d = 0; d < s.dir; ++d) {
      const float* rb = pw.Rb(d, G);
      std::vector<float> rb_fold(rb, rb + G);  // Rbh stays inside r (.) (...) when linear_before_reset
      if (linear_before_reset_) std::fill(rb_fold.begin() + 2 * H, rb_fold.end(), 0.0f);
      rc::ProjectInput(ctx, s, d, pw.Wb(d, G), rb_fold.data(), xw);
      const float* rt = pw.Rt(d, H, G);
      float* hd = h.data() + d * batch * H;
      const rc::rnn::Activation& f = attrs_.act(d, 0);
      const rc::rnn::Activation& g = attrs_.act(d, 1);
      const float clip = attrs_.clip;
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
        auto rows = [&](auto&& fn) {
          ParallelFor(ctx.threads(), batch, grain, [&](int64_t b0, int64_t b1) {
            for (int64_t b = b0; b < b1; ++b) {
              if (step < lens[static_cast<size_t>(b)]) fn(b);
            }
          });
        };
        if (linear_before_reset_) {
          rc::StepGemm(ctx, step, batch, G, H, hd, H, rt, G, pw.Segment(d, 0), 0.0f, aux.data(), G);
          rows([&](int64_t b) {
            float* z = gates.data() + b * G;
            float* ht = z + 2 * H;
            const float* hr = aux.data() + b * G;
            for (int64_t k = 0; k < 2 * H; ++k) z[k] += hr[k];
            rc::Clip(z, 2 * H, clip);
            rc::Activate(simd_, f, z, 2 * H);
            const float* r = z + H;
            for (int64_t k = 0; k < H; ++k) ht[k] += r[k] * (hr[2 * H + k] + rb[2 * H + k]);
          });
        } else {
          rc::StepGemm(ctx, step, batch, 2 * H, H, hd, H, rt, G, pw.Segment(d, 0), 1.0f, gates.data(), G);
          for (int64_t b = 0; b < batch; ++b) {
            if (step >= lens[static_cast<size_t>(b)]) std::fill_n(aux.data() + b * H, H, 0.0f);
          }
          rows([&](int64_t b) {
            float* z = gates.data() + b * G;
            rc::Clip(z, 2 * H, clip);
            rc::Activate(simd_, f, z, 2 * H);
            const float* r = z + H;
            const float* hb = hd + b * H;
            float* rh = aux.data() + b * H;
            for (int64_t k = 0; k < H; ++k) rh[k] = r[k] * hb[k];
          });
          rc::StepGemm(ctx, step, batch, H, H, aux.data(), H, rt + 2 * H, G, pw.Segment(d, 1), 1.0f,
                       gates.data() + 2 * H, G);
        }
        rows([&](int64_t b) {
          const float* z = gates.data() + b * G;
          float* ht = gates.data() + b * G + 2 * H;
          float* hb = hd + b * H;
          rc::Clip(ht, H, clip);
          rc::Activate(simd_, g, ht, H);
          for (int64_t k = 0; k < H; ++k) hb[k] = (1.0f - z[k]) * ht[k] + z[k] * hb[k];
          if (y) {
            const int64_t len = lens[static_cast<size_t>(b)];
            std::copy_n(hb, H, y + s.YOffset(rc::TimeIndex(attrs_, d, len, step), d, b));
          }
        });
      }
    }
    rc::WriteState(ctx, 1, s, h);
  }

 private:
  // R^T's column segments packed for rc::StepGemm: [z r h] at once, or [z r] and [h] apart.
  std::vector<int64_t> Segments() const {
    return linear_before_reset_ ? std::vector<int64_t>{3} : std::vector<int64_t>{2, 3};
  }

  rc::rnn::Attributes attrs_;
  bool linear_before_reset_;
  rc::Simd simd_;
};

}  // namespace

void RegisterGruKernels(KernelRegistry& r) {
  rc::AddVariants(r, "GRU", "gru", [](const ir::Node& node, rc::Simd simd) -> std::unique_ptr<OpKernel> {
    return std::make_unique<Gru>(node, simd);
  });
}

}  // namespace ferry::cpu
