// The skip normalizations (kernels/ref/skip_layer_normalization.h: ai.ferry SkipLayerNormalization, ONNX Runtime's
// com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization) on the cpu backend, float32: S = X +
// Skip (+ bias) and Y = LayerNormalization(S, gamma, beta) (RMS normalization by gamma for the simplified op) row by
// row in one pass over memory (layer_norm_row.h: each row's X, Skip and bias are read once, S is kept in the sum
// output, or in Y, for the statistics and the normalization, which re-read it from cache). The mean and
// inv_std_var outputs are the row routine's statistics (mean 0 for the RMS form, as ONNX Runtime writes it). Any
// `axis` (ai.ferry's op; ONNX Runtime's normalize the last dim); Skip of X's shape or of X's trailing dims (a row of
// Skip is reused when its size is a multiple of the row length, else gathered per row); gamma, beta and bias of the
// row length. Y (or the sum, when requested) takes over X's or Skip's buffer when that is their last use (the
// residual stream updated in place). Prepare checks the inputs (ref's checks); Compute only runs the rows.
// AVX-512F, AVX2+FMA and scalar variants, best first.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/layer_norm_row.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/skip_layer_normalization.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class SkipLayerNormalization : public OpKernel {
 public:
  SkipLayerNormalization(const ir::Node& node, NormRows rows)
      : rows_(rows),
        form_(ref::SkipNormFormOf(node)),
        axis_(node.GetInt("axis", -1)),
        epsilon_(node.GetFloat("epsilon", form_.default_epsilon)) {}

  // The inputs' checks (ref's, so both backends accept the same inputs), the rows; the requested outputs. The output
  // S is written to first (the sum, else Y) may take over X's buffer.
  void Prepare(PrepareContext& ctx) const override {
    ref::PrepareSkipLayerNorm(ctx, form_, axis_);
    ctx.output(WantSum(ctx) ? form_.sum : 0).in_place_of = 0;
  }

  void Compute(KernelContext& ctx) const override {
    const ref::SkipLayerNormShape& s = ctx.state<ref::SkipLayerNormShape>();
    const Tensor& x = ctx.required_input(0);
    const Tensor& skip = ctx.required_input(1);
    const Tensor& gamma = ctx.required_input(2);
    const Tensor* beta = form_.beta >= 0 ? ctx.input(form_.beta) : nullptr;
    const Tensor* bias = form_.bias >= 0 ? ctx.input(form_.bias) : nullptr;
    const bool want_sum = WantSum(ctx);
    // The output S is written to first (the sum, else Y) may take over X's or Skip's buffer: each element is read
    // before its slot is written.
    const int first = want_sum ? form_.sum : 0;
    Tensor* reused = ctx.ReuseInput(0, first, DataType::kFloat, x.shape());
    if (!reused && skip.size() == x.size()) reused = ctx.ReuseInput(1, first, DataType::kFloat, x.shape());
    Tensor* sum = want_sum ? (reused ? reused : &ctx.OutputUninitialized(form_.sum)) : nullptr;
    Tensor& y = !want_sum && reused ? *reused : ctx.OutputUninitialized(0);
    const auto stat = [&](int i) {
      return i >= 0 && ctx.output_requested(i) ? ctx.OutputUninitialized(i).data<float>() : nullptr;
    };
    float* mean_out = stat(form_.mean);
    float* inv_out = stat(form_.inv);
    if (x.size() == 0) return;
    const float* xp = x.data<float>();
    const float* kp = skip.data<float>();
    const float* w = gamma.data<float>();
    const float* b = beta ? beta->data<float>() : nullptr;
    const float* c = bias ? bias->data<float>() : nullptr;
    float* yp = y.data<float>();
    float* sp = sum ? sum->data<float>() : nullptr;
    const int64_t n = s.n;
    const bool whole_rows = s.skip_size % n == 0;  // each row of X meets a contiguous row of Skip
    ParallelFor(ctx.threads(), s.rows, std::max<int64_t>(1, 8192 / n), [&](int64_t begin, int64_t end) {
      std::vector<float> gathered(whole_rows ? 0 : static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        const int64_t off = r * n;
        const float* kr = kp + off % s.skip_size;
        if (!whole_rows) {
          for (int64_t i = 0; i < n; ++i) gathered[static_cast<size_t>(i)] = kp[(off + i) % s.skip_size];
          kr = gathered.data();
        }
        RowStats st;
        if (form_.simplified) {
          st.inv = rows_.rms_norm(xp + off, kr, c, sp ? sp + off : nullptr, yp + off, w, n, epsilon_);
        } else {
          st = rows_.layer_norm(xp + off, kr, c, sp ? sp + off : nullptr, yp + off, w, b, n, epsilon_);
        }
        if (mean_out) mean_out[r] = st.mean;
        if (inv_out) inv_out[r] = st.inv;
      }
    });
  }

 private:
  template <typename Ctx>
  bool WantSum(const Ctx& ctx) const {
    return form_.sum >= 0 && ctx.output_requested(form_.sum);
  }

  NormRows rows_;
  ref::SkipNormForm form_;
  int64_t axis_;
  float epsilon_;
};

}  // namespace

void RegisterSkipLayerNormalizationKernels(KernelRegistry& r) {
  const struct {
    const char* impl;
    IsaSet isa;
    NormRows rows;
  } variants[] = {{"avx512", {Isa::kAvx512f}, {&LayerNormRowAvx512, &RmsNormRowAvx512}},
                  {"avx2", {Isa::kAvx2, Isa::kFma}, {&LayerNormRowAvx2, &RmsNormRowAvx2}},
                  {"scalar", {}, {&LayerNormRowScalar, &RmsNormRowScalar}}};
  for (const auto& v : variants) {
    const NormRows rows = v.rows;
    const KernelFactory create = [rows](const ir::Node& node, const KernelOptions&) {
      return std::make_unique<SkipLayerNormalization>(node, rows);
    };
    r.Add({.op = "SkipLayerNormalization",
           .domain = "ai.ferry",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = create,
           .isa = v.isa,
           .name = std::string("cpu.f32_ferry_skiplayernormalization__") + v.impl + ".1"});
    // ONNX Runtime's two (its transformer optimizer's fusions): the same kernel, in their input/output layout.
    r.Add({.op = "SkipLayerNormalization",
           .domain = "com.microsoft",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}, {"U", {DataType::kFloat}}},
           .create = create,
           .isa = v.isa,
           .name = std::string("cpu.f32_ms_skiplayernormalization__") + v.impl + ".1"});
    r.Add({.op = "SkipSimplifiedLayerNormalization",
           .domain = "com.microsoft",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}, {"U", {DataType::kFloat}}},
           .create = create,
           .isa = v.isa,
           .name = std::string("cpu.f32_ms_skipsimplifiedlayernormalization__") + v.impl + ".1"});
  }
}

}  // namespace ferry::cpu
