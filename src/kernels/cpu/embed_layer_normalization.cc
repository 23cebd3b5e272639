// ONNX Runtime's com.microsoft EmbedLayerNormalization (kernels/ref/embed_layer_normalization.cc has the
// definition) on the cpu backend, float32: each token's word, position and segment embedding rows are summed and
// layer-normalized by the row routine of layer_norm_row.h in one pass over memory (the three rows are read once, the
// sum is kept in embedding_sum, or in the output row, for the statistics and the normalization, which re-read it
// from cache); tokens in parallel. Prepare checks the inputs (ref's checks); Compute checks every index first (ref's
// check, before any row is read), writes mask_index and runs the rows. AVX-512F, AVX2+FMA and scalar variants,
// best first.
#include <algorithm>
#include <memory>
#include <string>

#include "core/parallel.h"
#include "kernels/cpu/layer_norm_row.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/embed_layer_normalization.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

class EmbedLayerNormalization : public OpKernel {
 public:
  EmbedLayerNormalization(const ir::Node& node, LayerNormRowFn row)
      : row_(row), epsilon_(node.GetFloat("epsilon", 1e-12f)) {}

  void Prepare(PrepareContext& ctx) const override { ref::PrepareEmbedLayerNorm(ctx); }

  void Compute(KernelContext& ctx) const override {
    const ref::EmbedLayerNormShape& s = ctx.state<ref::EmbedLayerNormShape>();
    ref::CheckEmbedIndices(ctx, s);
    ref::WriteMaskIndex(ctx, s);
    Tensor& y = ctx.OutputUninitialized(0);
    float* sp = ctx.output_requested(2) ? ctx.OutputUninitialized(2).data<float>() : nullptr;
    if (y.size() == 0) return;
    const int32_t* ids = ctx.required_input(0).data<int32_t>();
    const int32_t* seg_ids = s.segment_ids ? ctx.required_input(1).data<int32_t>() : nullptr;
    const int32_t* pos_ids = s.position_rows ? ctx.required_input(8).data<int32_t>() : nullptr;
    const float* word = ctx.required_input(2).data<float>();
    const float* pos = ctx.required_input(3).data<float>();
    const float* seg = s.segments ? ctx.required_input(4).data<float>() : nullptr;
    const float* gamma = ctx.required_input(5).data<float>();
    const float* beta = ctx.required_input(6).data<float>();
    float* yp = y.data<float>();
    const int64_t h = s.hidden;
    ParallelFor(ctx.threads(), s.batch * s.seq, std::max<int64_t>(1, 8192 / h), [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t b = t / s.seq, q = t % s.seq;
        const float* wr = word + ids[t] * h;
        const float* pr = pos + (pos_ids ? pos_ids[(s.position_rows == 1 ? 0 : b) * s.seq + q] : q) * h;
        const float* gr = seg ? seg + (seg_ids ? seg_ids[t] : 0) * h : nullptr;
        row_(wr, pr, gr, sp ? sp + t * h : nullptr, yp + t * h, gamma, beta, h, epsilon_);
      }
    });
  }

 private:
  LayerNormRowFn row_;
  float epsilon_;
};

}  // namespace

void RegisterEmbedLayerNormalizationKernels(KernelRegistry& r) {
  const struct {
    const char* impl;
    IsaSet isa;
    LayerNormRowFn row;
  } variants[] = {{"avx512", {Isa::kAvx512f}, &LayerNormRowAvx512},
                  {"avx2", {Isa::kAvx2, Isa::kFma}, &LayerNormRowAvx2},
                  {"scalar", {}, &LayerNormRowScalar}};
  for (const auto& v : variants) {
    const LayerNormRowFn row = v.row;
    r.Add({.op = "EmbedLayerNormalization",
           .domain = "com.microsoft",
           .since = 1,
           .types = {{"T1", {DataType::kInt32}}, {"T", {DataType::kFloat}}},
           .create = [row](const ir::Node& node,
                           const KernelOptions&) { return std::make_unique<EmbedLayerNormalization>(node, row); },
           .isa = v.isa,
           .name = std::string("cpu.f32_ms_embedlayernormalization__") + v.impl + ".1"});
  }
}

}  // namespace ferry::cpu
