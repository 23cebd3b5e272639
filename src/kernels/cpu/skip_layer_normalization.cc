// ai.ferry SkipLayerNormalization (schemas_ferry.cc) on the cpu backend, float32: S = X + Skip and Y =
// LayerNormalization(S, gamma, beta) row by row in one pass over memory (layer_norm_row.h: each row's X and Skip
// are read once, S is kept in Sum, or in Y, for the statistics and the normalization, which re-read it from cache).
// Any `axis`; Skip of X's shape or of X's trailing dims (a row of Skip is reused when its size is a multiple of the
// row length, else gathered per row); gamma and beta of the row length. Y (or Sum, when requested) takes over X's
// or Skip's buffer when that is their last use (the residual stream updated in place). Prepare checks the inputs
// (ref's checks); Compute only runs the rows. AVX-512F, AVX2+FMA and scalar variants, best first.
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
  SkipLayerNormalization(const ir::Node& node, LayerNormRowFn row)
      : row_(row), axis_(node.GetInt("axis", -1)), epsilon_(node.GetFloat("epsilon", 1e-5f)) {}

  // The inputs' checks (ref's, so both backends accept the same inputs), the rows; Y, and Sum when requested, of
  // X's shape. The output S is written to first (Sum, else Y) may take over X's buffer.
  void Prepare(PrepareContext& ctx) const override {
    ref::PrepareSkipLayerNorm(ctx, axis_);
    ctx.output(ctx.output_requested(1) ? 1 : 0).in_place_of = 0;
  }

  void Compute(KernelContext& ctx) const override {
    const ref::SkipLayerNormShape& s = ctx.state<ref::SkipLayerNormShape>();
    const Tensor& x = ctx.required_input(0);
    const Tensor& skip = ctx.required_input(1);
    const Tensor& gamma = ctx.required_input(2);
    const Tensor* beta = ctx.input(3);
    const bool want_sum = ctx.output_requested(1);
    // The output S is written to first (Sum, else Y) may take over X's or Skip's buffer: each element is read
    // before its slot is written.
    const int first = want_sum ? 1 : 0;
    Tensor* reused = ctx.ReuseInput(0, first, DataType::kFloat, x.shape());
    if (!reused && skip.size() == x.size()) reused = ctx.ReuseInput(1, first, DataType::kFloat, x.shape());
    Tensor* sum = want_sum ? (reused ? reused : &ctx.OutputUninitialized(1)) : nullptr;
    Tensor& y = !want_sum && reused ? *reused : ctx.OutputUninitialized(0);
    if (x.size() == 0) return;
    const float* xp = x.data<float>();
    const float* kp = skip.data<float>();
    const float* w = gamma.data<float>();
    const float* b = beta ? beta->data<float>() : nullptr;
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
        row_(xp + off, kr, sp ? sp + off : nullptr, yp + off, w, b, n, epsilon_);
      }
    });
  }

 private:
  LayerNormRowFn row_;
  int64_t axis_;
  float epsilon_;
};

}  // namespace

void RegisterSkipLayerNormalizationKernels(KernelRegistry& r) {
  const struct {
    const char* impl;
    IsaSet isa;
    LayerNormRowFn row;
  } variants[] = {{"avx512", {Isa::kAvx512f}, &LayerNormRowAvx512},
                  {"avx2", {Isa::kAvx2, Isa::kFma}, &LayerNormRowAvx2},
                  {"scalar", {}, &LayerNormRowScalar}};
  for (const auto& v : variants) {
    const LayerNormRowFn row = v.row;
    r.Add({.op = "SkipLayerNormalization",
           .domain = "ai.ferry",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [row](const ir::Node& node, const KernelOptions&) {
             return std::make_unique<SkipLayerNormalization>(node, row);
           },
           .isa = v.isa,
           .name = std::string("cpu.f32_ferry_skiplayernormalization__") + v.impl + ".1"});
  }
}

}  // namespace ferry::cpu
