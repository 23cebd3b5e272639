// RoiAlign (opsets 10, 16, 22) on float32: modes avg / max, coordinate_transformation_mode half_pixel /
// output_half_pixel, sampling_ratio 0 (adaptive) or fixed. Ref's node code (ref/roi_align.h) parses the
// attributes, checks the inputs and the batch indices and plans each roi's bilinear samples, so the semantics
// live once; this kernel only pools them faster.
//
// The images the rois use are first copied channels-last ([H * W][C], strided_copy.h), so a sample's corner
// holds every channel side by side; then, threaded over the rois, each bin pools 8 channels per pair of AVX2
// registers, with no gathers. The pooling does ref's double operations in ref's order (avg: the sum of each
// sample's 4 weighted corners, divided by the count; max: the max over samples of the max of those, with
// std::max's NaN rule), so the result has ref's bits. AVX2+FMA only: a scalar twin measured no faster than ref's
// kernel, which placement takes on hosts without AVX2.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "kernels/cpu/strided_copy.h"
#include "kernels/kernel_def.h"
#include "kernels/ref/common.h"
#include "kernels/ref/roi_align.h"
#include "kernels/registry.h"

namespace ferry::cpu {
namespace {

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {

// Eight double lanes, as two registers: one load of 8 floats per corner, two multiplies.
struct Lanes8 {
  struct Reg {
    __m256d lo, hi;
  };
  static constexpr int64_t kWidth = 8;
  static Reg Widen(const float* p) {
    const __m256 v = _mm256_loadu_ps(p);
    return {_mm256_cvtps_pd(_mm256_castps256_ps128(v)), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))};
  }
  static Reg Set1(double v) { return {_mm256_set1_pd(v), _mm256_set1_pd(v)}; }
  static Reg Mul(Reg a, Reg b) { return {_mm256_mul_pd(a.lo, b.lo), _mm256_mul_pd(a.hi, b.hi)}; }
  static Reg Add(Reg a, Reg b) { return {_mm256_add_pd(a.lo, b.lo), _mm256_add_pd(a.hi, b.hi)}; }
  static Reg Div(Reg a, Reg b) { return {_mm256_div_pd(a.lo, b.lo), _mm256_div_pd(a.hi, b.hi)}; }
  static __m256d Max(__m256d a, __m256d b) { return _mm256_blendv_pd(a, b, _mm256_cmp_pd(a, b, _CMP_LT_OQ)); }
  static Reg Max(Reg a, Reg b) { return {Max(a.lo, b.lo), Max(a.hi, b.hi)}; }
  static void Narrow(Reg v, float* out, int64_t stride) {
    alignas(32) float t[8];
    _mm256_store_ps(t, _mm256_set_m128(_mm256_cvtpd_ps(v.hi), _mm256_cvtpd_ps(v.lo)));
    for (int64_t j = 0; j < 8; ++j) out[j * stride] = t[j];
  }
};

// The pooling of one roi, PoolRoi<L>: L::kWidth channels at a time with a lane struct L (Reg; Widen: kWidth floats
// as doubles; Set1, Mul, Add, Div; Max = std::max's rule, a < b ? b : a; Narrow: round to float and store lane j
// at out[j * stride]), and the channels left over one at a time with Lanes1. Every lane does ref's double
// operations in ref's order.

// One double lane.
struct Lanes1 {
  using Reg = double;
  static constexpr int64_t kWidth = 1;
  static Reg Widen(const float* p) { return static_cast<double>(*p); }
  static Reg Set1(double v) { return v; }
  static Reg Mul(Reg a, Reg b) { return a * b; }
  static Reg Add(Reg a, Reg b) { return a + b; }
  static Reg Div(Reg a, Reg b) { return a / b; }
  static Reg Max(Reg a, Reg b) { return a < b ? b : a; }
  static void Narrow(Reg v, float* out, int64_t) { *out = static_cast<float>(v); }
};

// Bin `s` (per_bin samples) of channels [c, c + L::kWidth): xt is the roi's image as [H * W][channels], out
// the first channel's output of this bin (channels `stride` apart).
template <typename L>
inline void PoolBin(const float* xt, int64_t channels, int64_t c, const ref::RoiAlignSample* s, int64_t per_bin,
                    bool max, double count, float* out, int64_t stride) {
  using R = typename L::Reg;
  R acc = L::Set1(0);
  for (int64_t k = 0; k < per_bin; ++k, ++s) {
    R v[4];
    for (int q = 0; q < 4; ++q) v[q] = L::Mul(L::Set1(s->w[q]), L::Widen(xt + s->pos[q] * channels + c));
    if (max) {
      const R m = L::Max(L::Max(v[0], v[1]), L::Max(v[2], v[3]));
      acc = k == 0 ? m : L::Max(acc, m);
    } else {
      acc = L::Add(acc, L::Add(L::Add(L::Add(v[0], v[1]), v[2]), v[3]));
    }
  }
  if (!max) acc = L::Div(acc, L::Set1(count));
  L::Narrow(acc, out, stride);
}

// Every bin of every channel of one roi into out[c * bins + bin].
template <typename L>
inline void PoolRoi(const float* xt, int64_t channels, const ref::RoiAlignSamples& plan, int64_t bins, bool max,
                    float* out) {
  for (int64_t b = 0; b < bins; ++b) {
    const ref::RoiAlignSample* s = plan.samples.data() + b * plan.per_bin;
    int64_t c = 0;
    for (; c + L::kWidth <= channels; c += L::kWidth) {
      PoolBin<L>(xt, channels, c, s, plan.per_bin, max, plan.count, out + c * bins + b, bins);
    }
    for (; c < channels; ++c) {
      PoolBin<Lanes1>(xt, channels, c, s, plan.per_bin, max, plan.count, out + c * bins + b, bins);
    }
  }
}

void Pool(const float* xt, int64_t channels, const ref::RoiAlignSamples& plan, int64_t bins, bool max, float* out) {
  PoolRoi<Lanes8>(xt, channels, plan, bins, max, out);
}

}  // namespace avx2
#pragma GCC pop_options

using PoolFn = void (*)(const float* xt, int64_t channels, const ref::RoiAlignSamples& plan, int64_t bins, bool max,
                        float* out);

class RoiAlign : public OpKernel {
 public:
  RoiAlign(const ir::Node& node, PoolFn pool) : attrs_(ref::ParseRoiAlignAttributes(node)), pool_(pool) {}

  void Prepare(PrepareContext& ctx) const override {
    if (ctx.tensor_input(0).dtype != DataType::kFloat) {
      throw InvalidArgumentError(ctx.Describe() + ": X must be float32, got " + ctx.InputString(0));
    }
    ctx.SetOutput(0, DataType::kFloat, ref::CheckRoiAlignInputs(ctx, attrs_));
  }

  void Compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.required_input(0);
    const Tensor& rois = ctx.required_input(1);
    const int64_t num_rois = rois.dim(0);
    const std::vector<int64_t> batch = ref::RoiAlignBatchIndices(ctx, num_rois, x.dim(0));
    Tensor& y = ctx.OutputUninitialized(0);
    if (y.size() == 0) return;
    const int64_t channels = x.dim(1), height = x.dim(2), width = x.dim(3), plane = height * width;
    const int64_t bins = attrs_.output_height * attrs_.output_width;

    // The used images channels-last, each at slot[n] of the copy.
    std::vector<int64_t> slot(static_cast<size_t>(x.dim(0)), -1), images;
    for (int64_t b : batch) {
      if (slot[static_cast<size_t>(b)] < 0) {
        slot[static_cast<size_t>(b)] = static_cast<int64_t>(images.size());
        images.push_back(b);
      }
    }
    std::vector<float> xt(static_cast<size_t>(static_cast<int64_t>(images.size()) * channels * plane));
    const float* xd = x.data<float>();
    const int64_t dst_strides[] = {1, channels}, src_strides[] = {plane, 1}, shape[] = {channels, plane};
    for (size_t i = 0; i < images.size(); ++i) {
      StridedCopy(4, xt.data() + static_cast<int64_t>(i) * channels * plane, dst_strides,
                  xd + images[i] * channels * plane, src_strides, shape, ctx.threads());
    }

    const float* rd = rois.data<float>();
    float* yd = y.data<float>();
    ParallelFor(ctx.threads(), num_rois, 1, [&](int64_t begin, int64_t end) {
      ref::RoiAlignSamples plan;
      for (int64_t r = begin; r < end; ++r) {
        const double roi[4] = {rd[r * 4], rd[r * 4 + 1], rd[r * 4 + 2], rd[r * 4 + 3]};
        ref::PlanRoiAlignSamples(attrs_, roi, height, width, plan);
        const float* image = xt.data() + slot[static_cast<size_t>(batch[static_cast<size_t>(r)])] * channels * plane;
        pool_(image, channels, plan, bins, attrs_.max, yd + r * channels * bins);
      }
    });
  }

 private:
  ref::RoiAlignAttributes attrs_;
  PoolFn pool_;
};

}  // namespace

void RegisterRoiAlignKernels(KernelRegistry& r) {
  const std::vector<DataType> f32 = {DataType::kFloat};
  const std::vector<DataType> t2 = {DataType::kInt64};
  const struct {
    const char* impl;
    IsaSet isa;
    PoolFn pool;
  } variants[] = {
      {"avx2", {Isa::kAvx2, Isa::kFma}, &avx2::Pool},
  };
  for (const auto& [since, until] : {std::pair{10, 15}, std::pair{16, 21}, std::pair{22, kOpsetOpen}}) {
    for (const auto& v : variants) {
      const PoolFn pool = v.pool;
      r.Add({.op = "RoiAlign",
             .since = since,
             .until = until,
             .types = {{"T1", f32}, {"T2", t2}},
             .create = [pool](const ir::Node& node, const KernelOptions&) {
               return std::make_unique<RoiAlign>(node, pool);
             },
             .isa = v.isa,
             .name = "cpu.f32_roialign__" + std::string(v.impl) + "." + std::to_string(since)});
    }
  }
}

}  // namespace ferry::cpu
