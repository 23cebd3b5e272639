// LRN (opsets 1, 13) on the cpu backend, float32: local response normalization across the channels of an
// [N, C, D1, ...] tensor, y = x / (bias + alpha / size * square_sum) ^ beta, where square_sum at channel c sums x^2
// over channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] clipped to [0, C), as ref. The spatial
// positions are cut into tiles; for each (n, tile) and each channel the window's squares are summed lane by lane in
// ref's order (channel by channel) and the tile is scaled, beta 0.75, 0.5 and 1 through square roots, any other by
// std::pow (normalization_rows.h). (n, tile) pieces run in parallel; Prepare checks X and keeps the geometry.
// AVX-512F, AVX2+FMA and scalar variants, best first.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/normalization_rows.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

// Elements a thread takes at least.
constexpr int64_t kGrain = 16384;
// Spatial positions of one tile: its window sums (1 KiB) and the window's rows stay in L1.
constexpr int64_t kTile = 256;

// The prepared geometry: `batch` images of `channels` planes of `spatial` values.
struct LrnPlan {
  int64_t batch = 0, channels = 0, spatial = 1;
};

class LRN : public OpKernel {
 public:
  LRN(const ir::Node& node, const NormRows& rows)
      : rows_(rows),
        size_(node.RequireAttr("size").i),
        alpha_(node.GetFloat("alpha", 1e-4f)),
        beta_(node.GetFloat("beta", 0.75f)),
        bias_(node.GetFloat("bias", 1.0f)) {
    if (size_ <= 0) {
      throw InvalidModelError(node.Describe() + ": attribute 'size' must be positive, got " + std::to_string(size_));
    }
  }

  // A float32 X of rank >= 2 (ref's check); Y of X's shape.
  void Prepare(PrepareContext& ctx) const override {
    const InputSpec& x = ctx.tensor_input(0);
    if (x.dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'X' must be float32, got " + ctx.InputString(0));
    }
    if (x.shape.size() < 2) {
      throw InvalidArgumentError(ctx.Describe() + ": input 'X' must have rank >= 2, got " + ctx.InputString(0));
    }
    LrnPlan p;
    p.batch = x.shape[0];
    p.channels = x.shape[1];
    for (size_t d = 2; d < x.shape.size(); ++d) p.spatial *= x.shape[d];
    ctx.SetOutput(0, DataType::kFloat, x.shape);
    ctx.EmplaceState(p);
  }

  void Compute(KernelContext& ctx) const override {
    const LrnPlan& p = ctx.state<LrnPlan>();
    const Tensor& x = ctx.required_input(0);
    Tensor& y = ctx.OutputUninitialized(0);
    if (x.size() == 0) return;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const int64_t channels = p.channels, spatial = p.spatial;
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    const int64_t tiles = (spatial + kTile - 1) / kTile, width = std::min(spatial, kTile);
    const float scale = alpha_ / static_cast<float>(size_);
    const NormRows& rows = rows_;
    ParallelFor(ctx.threads(), p.batch * tiles, std::max<int64_t>(1, kGrain / (channels * width)),
                [&](int64_t begin, int64_t end) {
                  std::vector<float> sq(static_cast<size_t>(width));
                  for (int64_t w = begin; w < end; ++w) {
                    const int64_t n = w / tiles, i0 = (w % tiles) * kTile, len = std::min(kTile, spatial - i0);
                    const float* xn = xp + n * channels * spatial + i0;
                    float* yn = yp + n * channels * spatial + i0;
                    for (int64_t c = 0; c < channels; ++c) {
                      std::fill(sq.begin(), sq.end(), 0.0f);
                      const int64_t lo = std::max<int64_t>(0, c - before);
                      const int64_t hi = std::min<int64_t>(channels - 1, c + after);
                      for (int64_t k = lo; k <= hi; ++k) rows.acc_squares(sq.data(), xn + k * spatial, len);
                      rows.lrn_scale(xn + c * spatial, yn + c * spatial, sq.data(), bias_, scale, beta_, len);
                    }
                  }
                });
  }

 private:
  const NormRows& rows_;
  int64_t size_;
  float alpha_, beta_, bias_;
};

}  // namespace

void RegisterLRNKernels(KernelRegistry& r) {
  for (const NormRowsVariant& v : NormRowsVariants()) {
    const NormRows* rows = v.rows;
    r.Add({.op = "LRN",
           .since = 1,
           .types = {{"T", {DataType::kFloat}}},
           .create = [rows](const ir::Node& node, const KernelOptions&) -> std::unique_ptr<OpKernel> {
             return std::make_unique<LRN>(node, *rows);
           },
           .isa = v.isa,
           .name = std::string("cpu.f32_lrn__") + v.impl + ".1"});
  }
}

}  // namespace ferry::cpu
